//! Validating admission: an `admission.k8s.io/v1` AdmissionReview in, the same review with its
//! `response` out, as a validating webhook answers kube-apiserver (what `svclab serve` and the
//! plugin's `validate-admission` speak), and [`admit`], the same decision for hosts that see a
//! request without a review around it (gateways, Kubewarden).
//!
//! A Service or EndpointSlice is run through the whole pipeline (defaulting, validation,
//! allocation into a cluster holding only the inventory the host sent). Apiserver errors deny it
//! with the `Status` kube-apiserver itself would build (`apimachinery/pkg/api/errors.NewInvalid`:
//! code 422, reason `Invalid`, one cause per field error); the operator's policy, judged only on
//! what the apiserver accepts, denies with 403 `Forbidden` and the violations as causes (the
//! apiserver prefixes the webhook's message itself, so ours has no `services "x" is forbidden:`),
//! warns in `warnings` and audits in `auditAnnotations`. Other kinds and DELETE are allowed
//! untouched.

mod profile;
mod review;
mod status;

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::diagnostic::{Diagnostic, Severity};
use crate::manifest::Input;
use crate::model::well_known::SKIPPED_AUDIT_ANNOTATION;
use crate::pipeline::CheckOptions;
use crate::report::Report;
use profile::profile_input;
use review::{Request, Review, ReviewResponse};
use status::{Status, lines};

/// `apiVersion` of the reviews we answer.
pub const ADMISSION_API_VERSION: &str = "admission.k8s.io/v1";

/// Input names the object and the old object get, so diagnostics say which one they are about.
const OBJECT_INPUT: &str = "object";
const OLD_OBJECT_INPUT: &str = "oldObject";

/// Input names of the profile and the inventory.
const PROFILE_INPUT: &str = "profile";
const INVENTORY_INPUT: &str = "inventory";

/// Why a review could not be answered at all.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdmissionError {
    /// The body is not JSON.
    Json(String),
    /// The body is JSON but not an `admission.k8s.io/v1` AdmissionReview with a request.
    NotAReview(String),
    /// The policy settings are invalid: the `field.Error` lines with settings paths (one, or
    /// the `[a, b]` aggregate). Hosts refuse to start, or answer Kubewarden's
    /// `validate_settings` with `{"valid": false, "message": ...}`.
    Settings(String),
    /// The ClusterProfile is invalid (same shape as `Settings`).
    Profile(String),
}

impl std::fmt::Display for AdmissionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AdmissionError::Json(message) => {
                write!(f, "the AdmissionReview is not JSON: {message}")
            }
            AdmissionError::NotAReview(message) => {
                write!(f, "not an admission.k8s.io/v1 AdmissionReview: {message}")
            }
            AdmissionError::Settings(message) => write!(f, "invalid policy settings: {message}"),
            AdmissionError::Profile(message) => write!(f, "invalid cluster profile: {message}"),
        }
    }
}

impl std::error::Error for AdmissionError {}

/// How a host configures admission (serve, the plugin's validate-admission, Kubewarden,
/// gateways).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdmissionOptions {
    /// ServicePolicy documents or the bare settings (YAML or JSON); `None` runs apiserver
    /// validation only. Bare settings may carry a top-level `profile` key with ClusterProfile
    /// fields (Kubewarden's settings shape), used when [`profile`](Self::profile) is `None`.
    pub policy: Option<Input>,
    /// A ClusterProfile document or its bare fields (`kubernetesVersion`, `featureGates`,
    /// `serviceClusterIPRanges`, `serviceNodePortRange`); `None` models the newest release
    /// with its default ranges.
    pub profile: Option<Input>,
    /// Every scalar arrives as a string (Traefik's middleware options): accept `"true"` for
    /// booleans, `"30443"` for numbers, and `"1.300000"` (Go's `%f` of an unquoted `1.30`) for
    /// `kubernetesVersion`.
    pub stringly_typed: bool,
    /// The other Services of the cluster (JSON objects) for rules that need them (selector
    /// uniqueness); `None` makes those rules report `policy:skipped`.
    pub inventory: Option<Vec<String>>,
}

/// One request as any host sees it.
///
/// It deserializes from the apiserver's `admission.k8s.io/v1` AdmissionRequest JSON (camelCase,
/// what an AdmissionReview's `request` holds and Kubewarden hands a policy), the one decoder
/// every host shares: `kind` becomes `Service`, `EndpointSlice` or `<kind>.<group>`, and
/// `object`/`oldObject` are kept only when they are objects.
///
/// ```
/// let request: svclab_core::AdmissionRequest = serde_json::from_str(
///     r#"{"uid":"1","kind":{"group":"","version":"v1","kind":"Service"},"operation":"CREATE",
///        "namespace":"shop","object":{"kind":"Service"},"oldObject":null}"#,
/// ).unwrap();
/// assert_eq!((request.kind.as_str(), request.namespace.as_str()), ("Service", "shop"));
/// assert_eq!((request.object.as_deref(), request.old_object), (Some(r#"{"kind":"Service"}"#), None));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(from = "Request")]
pub struct AdmissionRequest {
    /// `Service` or `EndpointSlice`; other kinds are allowed untouched.
    pub kind: String,
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: String,
    /// `""` or `"status"`.
    pub subresource: String,
    /// The request's namespace (filled into objects that have none).
    pub namespace: String,
    /// The object (JSON).
    pub object: Option<String>,
    /// The stored object on update (JSON).
    pub old_object: Option<String>,
    /// The requester.
    pub user_info: Option<crate::policy::UserInfo>,
}

impl AdmissionRequest {
    /// The namespace the object is admitted to: its own, else the request's (the apiserver fills
    /// one from the other), else `default`. A host that sends the inventory lists this
    /// namespace's Services.
    ///
    /// ```
    /// let request = svclab_core::AdmissionRequest {
    ///     object: Some(r#"{"metadata":{"name":"web"}}"#.into()),
    ///     ..svclab_core::AdmissionRequest::default()
    /// };
    /// assert_eq!(request.object_namespace(), "default");
    /// ```
    pub fn object_namespace(&self) -> String {
        let object = self.object.as_deref().and_then(|text| serde_json::from_str(text).ok());
        placed_namespace(&object.unwrap_or_default(), &self.namespace).to_owned()
    }
}

/// The answer: what a webhook puts in `AdmissionReview.response`, what a gateway sends back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Whether the request may proceed.
    pub allowed: bool,
    /// 200 when allowed; 422 (apiserver validation, reason `Invalid`) or 403 (policy deny,
    /// reason `Forbidden`) when refused.
    pub code: u16,
    /// The `metav1.Status` JSON kube-apiserver would return when refused.
    pub status: Option<String>,
    /// That `Status`'s `message`, for hosts that answer with text (Kubewarden's
    /// `ValidationResponse`).
    pub message: Option<String>,
    /// Apiserver warnings and policy `warn` violations (`response.warnings`).
    pub warnings: Vec<String>,
    /// `<rule>` → message for `audit` violations (several of a rule joined with `"; "`), and
    /// `skipped` for rules that lacked an input (kube-apiserver prefixes each key with the
    /// webhook's name).
    pub audit_annotations: BTreeMap<String, String>,
}

/// A verdict with its `Status` still typed (so the review keeps the field order).
struct Decision {
    /// `None` allows the request.
    status: Option<Status>,
    warnings: Vec<String>,
    audit_annotations: BTreeMap<String, String>,
}

impl Decision {
    /// Allows the request untouched (other kinds, DELETE, no object).
    fn untouched() -> Decision {
        Decision { status: None, warnings: Vec::new(), audit_annotations: BTreeMap::new() }
    }

    /// The verdict on what the pipeline said about the object under review (the rest of the
    /// scenario is context): its warnings, the policy's audit annotations, and the refusal when
    /// any of it is an error.
    fn on(kind: &str, name: &str, report: &Report) -> Decision {
        let about_object: Vec<&Diagnostic> = report
            .diagnostics
            .iter()
            .filter(|d| d.source.as_ref().is_none_or(|source| source.file == OBJECT_INPUT))
            .collect();
        let errors: Vec<&Diagnostic> =
            about_object.iter().copied().filter(|d| d.severity == Severity::Error).collect();
        Decision {
            status: (!errors.is_empty()).then(|| Status::refusal(kind, name, &errors)),
            warnings: warnings(&about_object),
            audit_annotations: audit_annotations(&about_object),
        }
    }

    fn allowed(&self) -> bool {
        self.status.is_none()
    }
}

/// Answers one AdmissionReview (JSON in, JSON out, one line with a trailing newline).
///
/// ```
/// use svclab_core::{AdmissionOptions, Input, validate_admission};
/// let review = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
///   "uid":"1","kind":{"group":"","version":"v1","kind":"Service"},"operation":"CREATE",
///   "namespace":"default","object":{"apiVersion":"v1","kind":"Service",
///   "metadata":{"name":"web"},"spec":{"ports":[{"port":0}]}}}}"#;
/// let answer = validate_admission(review, &AdmissionOptions::default()).unwrap();
/// assert!(answer.contains(r#""allowed":false"#));
/// assert!(answer.contains(r#""code":422"#));
/// assert!(validate_admission("nope", &AdmissionOptions::default()).is_err());
///
/// let policy = AdmissionOptions {
///     policy: Some(Input::new("policy", "types: {allowed: [ClusterIP]}")),
///     ..AdmissionOptions::default()
/// };
/// let review = review.replace(r#""ports":[{"port":0}]"#, r#""type":"NodePort","ports":[{"port":80}]"#);
/// let answer = validate_admission(&review, &policy).unwrap();
/// assert!(answer.contains(r#""code":403"#));
/// ```
pub fn validate_admission(
    review_json: &str,
    options: &AdmissionOptions,
) -> Result<String, AdmissionError> {
    let review: Review =
        serde_json::from_str(review_json).map_err(|err| AdmissionError::Json(err.to_string()))?;
    if review.kind != "AdmissionReview" || review.api_version != ADMISSION_API_VERSION {
        return Err(AdmissionError::NotAReview(format!(
            "apiVersion {:?}, kind {:?}",
            review.api_version, review.kind
        )));
    }
    let mut request =
        review.request.ok_or_else(|| AdmissionError::NotAReview("no request".into()))?;
    let uid = request.uid.take().ok_or_else(|| AdmissionError::NotAReview("no uid".into()))?;
    let decision = decide(&AdmissionRequest::from(request), options)?;
    let response = review::Response {
        uid,
        allowed: decision.allowed(),
        status: decision.status,
        warnings: decision.warnings,
        audit_annotations: decision.audit_annotations,
    };
    let mut text = serde_json::to_string(&ReviewResponse {
        api_version: ADMISSION_API_VERSION,
        kind: "AdmissionReview",
        response,
    })
    .map_err(|err| AdmissionError::Json(err.to_string()))?;
    text.push('\n');
    Ok(text)
}

/// Decides one request: apiserver validation, then the operator's policy.
///
/// ```
/// use svclab_core::{AdmissionOptions, AdmissionRequest, Input, admit};
/// let request = AdmissionRequest {
///     kind: "Service".into(),
///     operation: "CREATE".into(),
///     namespace: "default".into(),
///     object: Some(r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},
///         "spec":{"externalIPs":["203.0.113.9"],"ports":[{"port":80}]}}"#.into()),
///     ..AdmissionRequest::default()
/// };
/// let options = AdmissionOptions {
///     policy: Some(Input::new("policy", "externalIPs: {mode: allowlist, allowedCIDRs: [192.0.2.0/24]}")),
///     ..AdmissionOptions::default()
/// };
/// let verdict = admit(&request, &options).unwrap();
/// assert_eq!((verdict.allowed, verdict.code), (false, 403));
/// assert!(verdict.status.unwrap().contains("(externalIPs.allowedCIDRs)"));
/// ```
pub fn admit(
    request: &AdmissionRequest,
    options: &AdmissionOptions,
) -> Result<Verdict, AdmissionError> {
    let decision = decide(request, options)?;
    let status = match &decision.status {
        Some(status) => Some(
            serde_json::to_string(status).map_err(|err| AdmissionError::Json(err.to_string()))?,
        ),
        None => None,
    };
    Ok(Verdict {
        allowed: decision.allowed(),
        code: decision.status.as_ref().map_or(200, |s| s.code),
        status,
        message: decision.status.map(|s| s.message),
        warnings: decision.warnings,
        audit_annotations: decision.audit_annotations,
    })
}

/// Decides one request: the host's configuration first (so a host checks its settings by
/// deciding an empty request), then whether the request is judged at all, then the pipeline
/// over the object in its context, then the verdict on what it said about the object.
fn decide(
    request: &AdmissionRequest,
    options: &AdmissionOptions,
) -> Result<Decision, AdmissionError> {
    let configuration = Configuration::read(options)?;
    let Some(object) = judged_object(request)? else {
        return Ok(Decision::untouched());
    };
    let name = name_of(&object).to_owned();
    let report = evaluate(request, options, configuration, object);
    Ok(Decision::on(&request.kind, &name, &report))
}

/// What the host configured, read and checked before any request.
struct Configuration {
    /// The ClusterProfile document that goes first in the scenario.
    profile: Option<Input>,
    /// The policy settings, decoded against the profile in force.
    policies: Option<crate::policy::Policies>,
}

impl Configuration {
    /// The profile, then the settings against it; either one's errors refuse the configuration.
    fn read(options: &AdmissionOptions) -> Result<Configuration, AdmissionError> {
        let (profile, resolved) = profile_input(options)?.unzip();
        let policies = match &options.policy {
            Some(policy) => Some(
                crate::policy::validate_for_admission(
                    policy,
                    &resolved.unwrap_or_default(),
                    decoding(options),
                )
                .map_err(|diags| AdmissionError::Settings(lines(&diags)))?,
            ),
            None => None,
        };
        Ok(Configuration { profile, policies })
    }
}

/// How the settings are read: as the host's options say, with the `profile` key allowed.
fn decoding(options: &AdmissionOptions) -> crate::policy::Decoding {
    crate::policy::Decoding { stringly_typed: options.stringly_typed, allow_profile_key: true }
}

/// The object admission judges: that of a CREATE or UPDATE of a Service or an EndpointSlice.
/// `None` allows the request untouched.
fn judged_object(request: &AdmissionRequest) -> Result<Option<Value>, AdmissionError> {
    if !matches!(request.kind.as_str(), "Service" | "EndpointSlice")
        || !matches!(request.operation.as_str(), "CREATE" | "UPDATE")
    {
        return Ok(None);
    }
    let Some(object) = request.object.as_deref() else { return Ok(None) };
    serde_json::from_str(object).map(Some).map_err(|err| AdmissionError::Json(err.to_string()))
}

/// The pipeline's report on the object in its context: the profile, the inventory and, on
/// update, the old object come before it; the policy judges the object alone.
fn evaluate(
    request: &AdmissionRequest,
    options: &AdmissionOptions,
    configuration: Configuration,
    object: Value,
) -> Report {
    let update = request.operation == "UPDATE";
    let old_object = request
        .old_object
        .as_deref()
        .filter(|_| update)
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .filter(Value::is_object);
    let context = crate::policy::Context {
        no_inventory: options.inventory.is_none(),
        old_object_missing: update && old_object.is_none(),
        status_only: request.subresource == "status",
        decoding: decoding(options),
        judged_input: Some(OBJECT_INPUT),
        // Decoded against the profile the scenario below puts first: the pipeline's own.
        decoded: configuration.policies,
    };
    let check_options = CheckOptions {
        policy: options.policy.clone(),
        user_info: request.user_info.clone(),
        // Admission reads diagnostics only.
        omit_rules: true,
        ..CheckOptions::default()
    };
    let inputs = scenario(request, options, configuration.profile, old_object, object);
    crate::pipeline::evaluate_with(&inputs, &check_options, &context).1
}

/// The scenario admission evaluates, in creation order: the profile, the inventory, the old
/// object, the object.
fn scenario(
    request: &AdmissionRequest,
    options: &AdmissionOptions,
    profile: Option<Input>,
    old_object: Option<Value>,
    object: Value,
) -> Vec<Input> {
    let namespace = &request.namespace;
    let mut inputs = Vec::new();
    inputs.extend(profile);
    inputs.extend(inventory(options, namespace, &object));
    inputs
        .extend(old_object.map(|old| Input::new(OLD_OBJECT_INPUT, with_namespace(old, namespace))));
    inputs.push(Input::new(OBJECT_INPUT, with_namespace(object, namespace)));
    inputs
}

/// The host's other Services as inputs, without the object's own stored version (that is the
/// old object, not inventory).
fn inventory(options: &AdmissionOptions, namespace: &str, object: &Value) -> Vec<Input> {
    let key = |v: &Value| (placed_namespace(v, namespace).to_owned(), name_of(v).to_owned());
    let own = key(object);
    options
        .inventory
        .iter()
        .flatten()
        .filter_map(|text| serde_json::from_str::<Value>(text).ok())
        .filter(|other| key(other) != own)
        .map(|other| Input::new(INVENTORY_INPUT, with_namespace(other, namespace)))
        .collect()
}

/// Apiserver warnings and policy `warn` violations, in order.
fn warnings(about_object: &[&Diagnostic]) -> Vec<String> {
    about_object
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| d.message.clone())
        .collect()
}

/// `<rule>` for each policy `audit` violation (several of a rule joined with `"; "`) and
/// `skipped` for the rules that lacked an input: keys without a prefix, which kube-apiserver
/// logs under the webhook's name (`services.svclab.dev/<rule>`; a prefixed key is dropped, see
/// [`SKIPPED_AUDIT_ANNOTATION`]).
fn audit_annotations(about_object: &[&Diagnostic]) -> BTreeMap<String, String> {
    let mut annotations = BTreeMap::new();
    for d in about_object {
        if d.severity != Severity::Info || !d.reason.starts_with("policy:") {
            continue;
        }
        let key = match d.reason.as_str() {
            "policy:skipped" => SKIPPED_AUDIT_ANNOTATION.to_owned(),
            rule => rule.trim_start_matches("policy:").to_owned(),
        };
        annotations
            .entry(key)
            .and_modify(|v: &mut String| {
                v.push_str("; ");
                v.push_str(&d.message);
            })
            .or_insert_with(|| d.message.clone());
    }
    annotations
}

/// `metadata.name`, `""` when missing.
fn name_of(object: &Value) -> &str {
    object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default()
}

/// The namespace an object lands in: its own, else the request's, else `default`.
fn placed_namespace<'a>(object: &'a Value, request_namespace: &'a str) -> &'a str {
    object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or(if request_namespace.is_empty() { "default" } else { request_namespace })
}

/// The object as JSON text, with the request's namespace when the object has none (the
/// apiserver fills it from the URL before admission).
fn with_namespace(mut object: Value, namespace: &str) -> String {
    if !namespace.is_empty()
        && let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut)
        && !metadata.contains_key("namespace")
    {
        metadata.insert("namespace".into(), Value::String(namespace.to_owned()));
    }
    object.to_string()
}

#[cfg(test)]
mod tests;
