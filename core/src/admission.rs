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

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::diagnostic::{Diagnostic, Severity};
use crate::manifest::Input;
use crate::model::well_known::SKIPPED_AUDIT_ANNOTATION;
use crate::pipeline::CheckOptions;

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
    /// Apiserver warnings and policy `warn` violations (`response.warnings`).
    pub warnings: Vec<String>,
    /// `svclab.dev/<rule>` → message for `audit` violations (several of a rule joined with
    /// `"; "`), and `svclab.dev/skipped` for rules that lacked an input.
    pub audit_annotations: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Review {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    request: Option<Request>,
}

/// The apiserver's AdmissionRequest, the fields the core reads.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    /// Required in a review (the response echoes it), not by [`admit`].
    #[serde(default)]
    uid: Option<String>,
    #[serde(default)]
    kind: GroupVersionKind,
    #[serde(default)]
    operation: String,
    #[serde(default)]
    sub_resource: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    object: Value,
    #[serde(default)]
    old_object: Value,
    #[serde(default)]
    user_info: Option<ReviewUserInfo>,
}

#[derive(Default, Deserialize)]
struct GroupVersionKind {
    #[serde(default)]
    group: String,
    #[serde(default)]
    kind: String,
}

impl From<Request> for AdmissionRequest {
    fn from(request: Request) -> AdmissionRequest {
        let kind = match (request.kind.group.as_str(), request.kind.kind.as_str()) {
            ("", "Service") => "Service".to_owned(),
            ("discovery.k8s.io", "EndpointSlice") => "EndpointSlice".to_owned(),
            (group, kind) => format!("{kind}.{group}"),
        };
        let json = |v: Value| v.is_object().then(|| v.to_string());
        AdmissionRequest {
            kind,
            operation: request.operation,
            subresource: request.sub_resource,
            namespace: request.namespace,
            object: json(request.object),
            old_object: json(request.old_object),
            user_info: request
                .user_info
                .map(|u| crate::policy::UserInfo { username: u.username, groups: u.groups }),
        }
    }
}

#[derive(Default, Deserialize)]
struct ReviewUserInfo {
    #[serde(default)]
    username: String,
    #[serde(default)]
    groups: Vec<String>,
}

/// The review we send back.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReviewResponse {
    api_version: &'static str,
    kind: &'static str,
    response: Response,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    uid: String,
    allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Status>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    audit_annotations: BTreeMap<String, String>,
}

/// `metav1.Status` as `NewInvalid` / `NewForbidden` fill it.
#[derive(Serialize)]
struct Status {
    metadata: Empty,
    status: &'static str,
    message: String,
    reason: &'static str,
    details: StatusDetails,
    code: u16,
}

#[derive(Serialize)]
struct Empty {}

#[derive(Serialize)]
struct StatusDetails {
    name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    group: String,
    kind: String,
    causes: Vec<StatusCause>,
}

#[derive(Serialize)]
struct StatusCause {
    reason: String,
    message: String,
    field: String,
}

/// A verdict with its `Status` still typed (so the review keeps the field order).
struct Decision {
    allowed: bool,
    status: Option<Status>,
    warnings: Vec<String>,
    audit_annotations: BTreeMap<String, String>,
}

impl Decision {
    fn allowed() -> Decision {
        Decision {
            allowed: true,
            status: None,
            warnings: Vec::new(),
            audit_annotations: BTreeMap::new(),
        }
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
    let response = Response {
        uid,
        allowed: decision.allowed,
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
    let code = decision.status.as_ref().map_or(200, |s| s.code);
    let status = match &decision.status {
        Some(status) => Some(
            serde_json::to_string(status).map_err(|err| AdmissionError::Json(err.to_string()))?,
        ),
        None => None,
    };
    Ok(Verdict {
        allowed: decision.allowed,
        code,
        status,
        warnings: decision.warnings,
        audit_annotations: decision.audit_annotations,
    })
}

/// The field.Error lines of diagnostics, aggregated.
fn lines(diagnostics: &[Diagnostic]) -> String {
    let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
    aggregate(&messages)
}

/// The profile the pipeline reads, from the host's ClusterProfile (a document or its bare
/// fields) or the `profile` key of Kubewarden-shaped settings: the resolved profile and the
/// ClusterProfile document to put first in the scenario. Errors refuse the configuration.
fn profile_input(
    options: &AdmissionOptions,
) -> Result<Option<(Input, crate::profile::Profile)>, AdmissionError> {
    let fields = match &options.profile {
        Some(input) => {
            let mut last = None;
            for doc in crate::yaml::parse_stream(&input.text) {
                match doc.root {
                    Ok(Some(root)) => last = Some(root.to_json()),
                    Ok(None) => {}
                    Err(err) => {
                        return Err(AdmissionError::Profile(format!(
                            "error converting YAML to JSON: yaml: line {}: {}",
                            err.pos.line, err.message
                        )));
                    }
                }
            }
            last
        }
        None => options.policy.as_ref().and_then(crate::policy::embedded_profile_json),
    };
    let Some(mut json) = fields else { return Ok(None) };
    let Some(map) = json.as_object_mut() else {
        return Err(AdmissionError::Profile(format!("must be an object, not {json}")));
    };
    map.entry("apiVersion").or_insert_with(|| Value::String("svclab.dev/v1alpha1".into()));
    map.entry("kind").or_insert_with(|| Value::String("ClusterProfile".into()));
    if options.stringly_typed {
        unstring_profile(map);
    }
    let text = json.to_string();
    let Some(node) =
        crate::yaml::parse_stream(&text).into_iter().find_map(|d| d.root.ok().flatten())
    else {
        return Ok(None);
    };
    let mut diags = Vec::new();
    let profile = crate::policy::profile_from_node(node, PROFILE_INPUT, 0, &mut diags);
    if diags.iter().any(|d| d.severity == Severity::Error) {
        return Err(AdmissionError::Profile(lines(&diags)));
    }
    Ok(Some((Input::new(PROFILE_INPUT, text), profile)))
}

/// Traefik's strings back to the types a ClusterProfile has.
fn unstring_profile(map: &mut serde_json::Map<String, Value>) {
    if let Some(Value::Object(gates)) = map.get_mut("featureGates") {
        for value in gates.values_mut() {
            if let Value::String(s) = value
                && (s == "true" || s == "false")
            {
                *value = Value::Bool(s == "true");
            }
        }
    }
    if let Some(Value::String(seed)) = map.get("seed")
        && let Ok(n) = seed.parse::<u64>()
    {
        map.insert("seed".into(), Value::from(n));
    }
    if let Some(Value::String(version)) = map.get_mut("kubernetesVersion") {
        // Go's `%f` of the YAML float 1.30 is "1.300000"; svclab models 1.24 and later, so a
        // single digit left after trimming the zeros is a tens digit (1.3 means 1.30).
        if let Some((major, minor)) = version.split_once('.')
            && minor.len() == 6
            && minor.bytes().all(|b| b.is_ascii_digit())
        {
            let trimmed = minor.trim_end_matches('0');
            let minor = match trimmed.len() {
                0 => "0".to_owned(),
                1 => format!("{trimmed}0"),
                _ => trimmed.to_owned(),
            };
            *version = format!("{major}.{minor}");
        }
    }
}

fn decide(
    request: &AdmissionRequest,
    options: &AdmissionOptions,
) -> Result<Decision, AdmissionError> {
    let (profile_doc, profile) = profile_input(options)?.unzip();
    let decoding =
        crate::policy::Decoding { stringly_typed: options.stringly_typed, allow_profile_key: true };
    let decoded = match &options.policy {
        Some(policy) => Some(
            crate::policy::validate_for_admission(policy, &profile.unwrap_or_default(), decoding)
                .map_err(|diags| AdmissionError::Settings(lines(&diags)))?,
        ),
        None => None,
    };
    let kind = request.kind.as_str();
    if !matches!(kind, "Service" | "EndpointSlice")
        || !matches!(request.operation.as_str(), "CREATE" | "UPDATE")
    {
        return Ok(Decision::allowed());
    }
    let Some(object) = request.object.as_deref() else {
        return Ok(Decision::allowed());
    };
    let object: Value =
        serde_json::from_str(object).map_err(|err| AdmissionError::Json(err.to_string()))?;
    let name =
        object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_owned();
    let namespace_of = |v: &Value| {
        v.pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or(if request.namespace.is_empty() { "default" } else { &request.namespace })
            .to_owned()
    };
    let own = (namespace_of(&object), name.clone());
    let mut inputs = Vec::new();
    inputs.extend(profile_doc);
    for text in options.inventory.iter().flatten() {
        // The object's own stored version is the old object, not inventory.
        let Ok(other) = serde_json::from_str::<Value>(text) else { continue };
        let name = other.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
        if (namespace_of(&other), name.to_owned()) == own {
            continue;
        }
        inputs.push(Input::new(INVENTORY_INPUT, with_namespace(other, &request.namespace)));
    }
    let old_object = request
        .old_object
        .as_deref()
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .filter(Value::is_object);
    let update = request.operation == "UPDATE";
    if update && let Some(old) = &old_object {
        inputs.push(Input::new(OLD_OBJECT_INPUT, with_namespace(old.clone(), &request.namespace)));
    }
    inputs.push(Input::new(OBJECT_INPUT, with_namespace(object, &request.namespace)));
    let context = crate::policy::Context {
        no_inventory: options.inventory.is_none(),
        old_object_missing: update && old_object.is_none(),
        status_only: request.subresource == "status",
        decoding,
        judged_input: Some(OBJECT_INPUT),
        // Decoded against the profile the scenario below puts first: the pipeline's own.
        decoded,
    };
    let check_options = CheckOptions {
        policy: options.policy.clone(),
        user_info: request.user_info.clone(),
        // Admission reads diagnostics only.
        omit_rules: true,
        ..CheckOptions::default()
    };
    let report = crate::pipeline::evaluate_with(&inputs, &check_options, &context).1;
    // Only what is said about the object under review (the rest is context).
    let about_object: Vec<&Diagnostic> = report
        .diagnostics
        .iter()
        .filter(|d| d.source.as_ref().is_none_or(|source| source.file == OBJECT_INPUT))
        .collect();
    let is_policy = |d: &Diagnostic| d.reason.starts_with("policy:");
    let mut decision = Decision::allowed();
    for d in &about_object {
        match d.severity {
            Severity::Warning => decision.warnings.push(d.message.clone()),
            Severity::Info if is_policy(d) => {
                let key = match d.reason.as_str() {
                    "policy:skipped" => SKIPPED_AUDIT_ANNOTATION.to_owned(),
                    rule => format!("svclab.dev/{}", rule.trim_start_matches("policy:")),
                };
                decision
                    .audit_annotations
                    .entry(key)
                    .and_modify(|v| {
                        v.push_str("; ");
                        v.push_str(&d.message);
                    })
                    .or_insert_with(|| d.message.clone());
            }
            Severity::Info | Severity::Error => {}
        }
    }
    let (group, resource) = match kind {
        "EndpointSlice" => ("discovery.k8s.io", "endpointslices"),
        _ => ("", "services"),
    };
    let errors: Vec<&Diagnostic> =
        about_object.iter().copied().filter(|d| d.severity == Severity::Error).collect();
    if errors.is_empty() {
        return Ok(decision);
    }
    let messages: Vec<&str> = errors.iter().map(|d| d.message.as_str()).collect();
    decision.allowed = false;
    if errors.iter().all(|d| is_policy(d)) {
        // A policy deny: `NewForbidden`-shaped, with the violations as causes (each message
        // the whole line, rule included).
        let causes = errors
            .iter()
            .map(|d| StatusCause {
                reason: crate::policy::cause_reason(d).to_owned(),
                message: d.message.clone(),
                field: d.field.clone(),
            })
            .collect();
        decision.status = Some(Status {
            metadata: Empty {},
            status: "Failure",
            message: aggregate(&messages),
            reason: "Forbidden",
            details: StatusDetails {
                name,
                group: group.to_owned(),
                kind: resource.to_owned(),
                causes,
            },
            code: 403,
        });
        return Ok(decision);
    }
    let causes = errors
        .iter()
        .map(|d| StatusCause {
            reason: d.reason.clone(),
            // `field.Error.ErrorBody()`: the message without its `<field>: ` prefix.
            message: d
                .message
                .strip_prefix(&format!("{}: ", d.field))
                .unwrap_or(&d.message)
                .to_owned(),
            field: d.field.clone(),
        })
        .collect();
    let qualified = if group.is_empty() { kind.to_owned() } else { format!("{kind}.{group}") };
    decision.status = Some(Status {
        metadata: Empty {},
        status: "Failure",
        message: format!(
            "{qualified} {} is invalid: {}",
            crate::field::go_quote(&name),
            aggregate(&messages)
        ),
        reason: "Invalid",
        details: StatusDetails { name, group: group.to_owned(), kind: kind.to_owned(), causes },
        code: 422,
    });
    Ok(decision)
}

/// `utilerrors.NewAggregate(errs).Error()`: one message as is, several deduplicated in
/// `[a, b]`.
fn aggregate(messages: &[&str]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for message in messages {
        if !seen.contains(message) {
            seen.push(message);
        }
    }
    match seen.as_slice() {
        [one] => (*one).to_owned(),
        many => format!("[{}]", many.join(", ")),
    }
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
