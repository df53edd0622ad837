//! Service policy: what this cluster's operator allows, on top of what kube-apiserver accepts.
//!
//! # The settings object
//!
//! One settings object holds every rule; every block is optional and `{}` enforces nothing.
//! Blocks: `action` (`deny` | `warn` | `audit`, default `deny`), `exemptions` (namespaces,
//! usernames, groups, services that skip the whole policy), `types`, `externalIPs`
//! (CVE-2020-8554: `mode` `allow` | `forbid` | `forbidNew` | `allowlist`, `allowedCIDRs`, who may
//! set them), `nodePorts` (`forbid`, `countLoadBalancerNodePorts`, `allowedRanges`, `explicit`
//! `allow` | `forbid` | `staticBandOnly`, `namespaceRanges`, `reservations`), `loadBalancer`,
//! `clusterIP` (`explicit`, `explicitNamespaces`, `namespaceCIDRs`, `reservations`,
//! `headless`), `externalName`, `selector`, `ports`, `endpointSlices` (CVE-2021-25740),
//! `deprecations` and `nonCanonicalIPs` (CVE-2021-29923). [`settings_schema`] prints the JSON
//! Schema of all of it.
//!
//! Decoding is strict: an unknown key, a bad CIDR or port range, a setting that only means
//! something with another one (`allowedCIDRs` without `mode: allowlist`) and a setting the
//! profile cannot honour (`staticBandOnly` on a release or gate setting without the static band)
//! are each a `field.Error`-shaped settings error naming the settings path and its line; a typo
//! never switches a rule off. Absent keys mean "off" (`false`, empty list, `allow`), except
//! `action` (`deny`), `nodePorts.countLoadBalancerNodePorts` (`true`) and
//! `endpointSlices.managedBy` (the EndpointSlice and mirroring controllers).
//!
//! # Where settings come from
//!
//! - A `svclab.dev/v1alpha1 ServicePolicy` document in a scenario (`spec` holds the settings).
//!   It is an object: the same `metadata.name` again replaces it, the `svclab.dev/operation:
//!   delete` annotation removes it, and it applies to every object after it. One with settings
//!   errors is rejected (errors on `spec.<settings path>`) and an earlier valid one of the same
//!   name stays in effect.
//! - [`CheckOptions::policy`](crate::CheckOptions) and [`AdmissionOptions::policy`](crate::AdmissionOptions):
//!   ServicePolicy documents or the bare settings object, YAML or JSON, in effect before every
//!   object. Bare settings on the admission path may carry a top-level `profile` key with
//!   ClusterProfile fields (Kubewarden's settings shape).
//!
//! # Evaluation
//!
//! The policy judges each Service and EndpointSlice the apiserver accepts, on the defaulted and
//! allocated object (so allocated node ports and cluster IPs count), with the old object on
//! update, the requester (`userInfo`) and the other Services in effect (inventory: created
//! earlier, not deleted, not rejected, the object's own stored version excluded). Exemptions come
//! first; then every rule runs and every violation is reported, one per offending value on the
//! most specific field. The strongest action wins (`deny` > `warn` > `audit`); a block's own
//! `action` key overrides the top-level one; `deprecations.*` and `nonCanonicalIPs` carry their
//! own `allow | warn | deny`. A denied object is rejected like an apiserver refusal: not stored,
//! its allocations released, no rules rendered. A rule whose input the host lacks reports an
//! `info` diagnostic `<rule>: skipped: needs <input>`; it never passes silently.
//!
//! IPs and CIDRs are compared as addresses, parsed as kube-apiserver parses them before strict
//! validation: a leading-zero IPv4 octet is decimal, `::ffff:a.b.c.d` is `a.b.c.d`, a bare IP
//! is a /32 or /128.
//!
//! # Results
//!
//! A violation is one line in the `field.Error` shape with the rule at the end:
//! `spec.externalIPs[0]: Forbidden: "203.0.113.9" is outside the allowed ranges 192.0.2.0/24
//! (externalIPs.allowedCIDRs)`. Diagnostics have `severity` `error` (deny), `warning` (warn) or
//! `info` (audit, skipped) and `reason` `policy:<settings path>` or `policy:skipped`. On the
//! admission path ([`admit`](crate::admit)) a deny is `403 Forbidden` with the violations as
//! `status.details.causes`, a warn travels in `warnings`, an audit in
//! `auditAnnotations["<rule>"]`, which kube-apiserver logs as `<webhook name>/<rule>` (the
//! contract's `svclab.dev/<rule>` would be dropped: kube-apiserver allows one `/`).
//!
//! # API (as agreed between the hosts)
//!
//! [`UserInfo`], `CheckOptions { policy, user_info }`, [`check_settings`], [`settings_schema`],
//! `AdmissionOptions`, `AdmissionRequest`, `Verdict`, `admit` and
//! `validate_admission(review, &options)`, all re-exported at the crate root. Additions since the
//! first version: `ServicePolicy` (the scenario object, in the model), `Severity::Info`,
//! `AdmissionError::{Settings, Profile}`, and the audit annotation `skipped` for
//! rules that lacked an input on the admission path.
//!
//! # Choices where the contract is silent
//!
//! Made as an operator coming from Kyverno or Gatekeeper would expect:
//!
//! - An unknown key is `<path>: Unsupported value: "<key>": supported values: ...`, listing the
//!   keys of that block (the typo and its fix on one line).
//! - Orphans: `allowedCIDRs` without `mode: allowlist`, `allowedLoadBalancerIPCIDRs` without
//!   `loadBalancerIP: allowlist`, `internalAnnotations` without `requireInternal`,
//!   `requireInternal` without `internalAnnotations`, `countLoadBalancerNodePorts: false`
//!   without `forbid`, `managedBy` with `manual: allow`, address CIDRs without
//!   `manual: restrictAddresses`.
//! - `staticBandOnly` also fails when a configured range is too small to have a band.
//! - "Explicit" values are those the request asked for by value (not kept from the old object,
//!   not picked by the allocator); an update that keeps its cluster IP is not judged again.
//! - `externalIPs` users rules judge only IPs the request adds; `forbidNew` needs the old
//!   object (skipped without it on an UPDATE); `allowlist` judges every IP on every write.
//! - `namespaceRanges` / `namespaceCIDRs`: a listed namespace keeps to its ranges (allocated
//!   values count, so it must ask for values in them); other namespaces may not *ask* for values
//!   in them; a random pick is never refused (that would fail requests at random).
//!   `reservations` refuse any value, allocated or asked for.
//! - `requireInternal` accepts an annotation with the configured value (any value when the
//!   setting's value is empty). Source ranges come from `spec.loadBalancerSourceRanges`, else
//!   from the `service.beta.kubernetes.io/load-balancer-source-ranges` annotation;
//!   `forbidOpenSourceRanges` does not treat "no ranges" as open (`requireSourceRanges` does).
//! - `statusIngressAllowedCIDRs` reads `status` as the request wrote it (a scenario may play the
//!   load-balancer controller; on the admission path a `status` subresource request is judged by
//!   this rule alone).
//! - `selector` rules do not apply to ExternalName Services.
//! - Exemptions by user or group, without a requester, are `skipped` and the policy applies.
//! - On the admission path only the request's object is judged; its old object and the
//!   inventory are context. Several audit violations of one rule share an annotation, joined
//!   with `"; "`. A 403's `details.kind` is the resource (`services`, `endpointslices`), as
//!   `NewForbidden` fills it.
//! - A policy file holds ServicePolicy documents, or exactly one bare settings object; an empty
//!   file is an error (it would otherwise enforce nothing silently).

mod eval;
mod schema;
mod settings;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use crate::diagnostic::{Diagnostic, ObjectRef, Severity};
use crate::field::{ErrorType, FieldError};
use crate::manifest::Input;
use crate::model::well_known::OPERATION_ANNOTATION;
use crate::model::{EndpointSlice, Located, Origin, Positions, ServiceKey, ServicePolicy};
use crate::world::StoredService;
// The crate root's re-export: the pipeline, which owns it, sits above this layer.
use crate::profile::Profile;
use crate::source::Source;
use crate::yaml::{Node, Value};

pub(crate) use eval::{Env, ServiceSubject};
pub(crate) use settings::Decoding;
use settings::{Action, Settings};

pub use schema::settings_schema;

/// Who sends the request (admission `userInfo`, or `svclab check --user/--group`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// `userInfo.username`.
    pub username: String,
    /// `userInfo.groups`.
    pub groups: Vec<String>,
}

/// What a host knows about a request besides the objects (the admission path fills it; a
/// scenario has everything).
#[derive(Debug, Clone, Default)]
pub(crate) struct Context {
    /// The host did not send the other Services of the cluster.
    pub(crate) no_inventory: bool,
    /// An update whose old object the host did not send.
    pub(crate) old_object_missing: bool,
    /// A `services/status` request.
    pub(crate) status_only: bool,
    /// How scalars of the settings are read.
    pub(crate) decoding: Decoding,
    /// Only objects of this input are judged (the admission path's object; its old object and
    /// inventory are context, already admitted).
    pub(crate) judged_input: Option<&'static str>,
    /// `CheckOptions::policy` already decoded against the scenario's profile (the admission
    /// path validates the settings first and hands over what it decoded, so they are read once
    /// per request, not twice).
    pub(crate) decoded: Option<Policies>,
}

impl Context {
    /// Whether the policy judges an object read from `file`.
    pub(crate) fn judges(&self, file: &str) -> bool {
        self.judged_input.is_none_or(|judged| judged == file)
    }
}

/// The policies in effect, in the order they came into effect.
#[derive(Debug, Clone, Default)]
pub(crate) struct Policies {
    entries: Vec<(String, Settings)>,
}

/// The `kind` the diagnostics about settings name.
const KIND: &str = "ServicePolicy";
/// `apiVersion` of ServicePolicy documents.
const API_VERSION: &str = "svclab.dev/v1alpha1";

/// One settings document read from an input.
struct Document {
    root: Node,
    index: usize,
    /// A ServicePolicy object (`spec` holds the settings) rather than bare settings.
    object: bool,
    name: String,
}

/// Reads the documents of a policy input: ServicePolicy documents, or one bare settings
/// object. Errors are diagnostics on the input.
fn read_documents(input: &Input) -> (Vec<Document>, Vec<Diagnostic>) {
    let mut docs = Vec::new();
    let mut diags = Vec::new();
    let source = |document: usize, pos: crate::source::Pos| Source {
        file: input.name.clone(),
        document,
        line: pos.line,
        column: pos.column,
    };
    let object_ref =
        |name: &str| ObjectRef { kind: KIND.into(), namespace: String::new(), name: name.into() };
    for doc in crate::yaml::parse_stream(&input.text) {
        match doc.root {
            Err(err) => diags.push(Diagnostic {
                severity: Severity::Error,
                object: Some(object_ref("")),
                field: String::new(),
                reason: "InvalidSyntax".into(),
                message: format!(
                    "error converting YAML to JSON: yaml: line {}: {}",
                    err.pos.line, err.message
                ),
                releases: None,
                source: Some(source(doc.index, err.pos)),
            }),
            Ok(None) => {}
            Ok(Some(root)) => {
                let kind = root.get("kind").and_then(Node::as_str).unwrap_or("");
                let object = !kind.is_empty();
                let name = root
                    .get("metadata")
                    .and_then(|m| m.get("name"))
                    .and_then(Node::as_str)
                    .unwrap_or("")
                    .to_owned();
                let api_version = root.get("apiVersion").and_then(Node::as_str).unwrap_or("");
                if object && (kind != KIND || api_version != API_VERSION) {
                    diags.push(Diagnostic {
                        severity: Severity::Error,
                        object: Some(object_ref(&name)),
                        field: "kind".into(),
                        reason: "FieldValueNotSupported".into(),
                        message: format!(
                            "kind: Unsupported value: {}: expected a {API_VERSION} {KIND} or the bare settings object",
                            crate::field::go_quote(&format!("{api_version} {kind}"))
                        ),
                        releases: None,
                        source: Some(source(doc.index, root.pos)),
                    });
                    continue;
                }
                docs.push(Document { root, index: doc.index, object, name });
            }
        }
    }
    if docs.iter().filter(|d| !d.object).count() > 0 && docs.len() > 1 {
        diags.push(Diagnostic {
            severity: Severity::Error,
            object: Some(object_ref("")),
            field: String::new(),
            reason: "FieldValueInvalid".into(),
            message: "bare settings must be the only document of a policy file; use ServicePolicy documents to give several".into(),
            releases: None,
            source: Some(source(0, crate::source::Pos { line: 1, column: 1 })),
        });
        docs.clear();
    }
    if docs.is_empty() && diags.is_empty() {
        // No document at all: `{}` (nothing enforced) would hide a wrong path or an empty file.
        diags.push(Diagnostic {
            severity: Severity::Error,
            object: Some(object_ref("")),
            field: String::new(),
            reason: "FieldValueRequired".into(),
            message: "Required value: the policy input holds no settings".into(),
            releases: None,
            source: Some(source(0, crate::source::Pos { line: 1, column: 1 })),
        });
    }
    (docs, diags)
}

/// Settings errors as diagnostics on the policy.
fn settings_diagnostics(
    errors: Vec<settings::SettingsError>,
    prefix: &str,
    name: &str,
    file: &str,
    document: usize,
) -> Vec<Diagnostic> {
    errors
        .into_iter()
        .map(|e| {
            let error = FieldError { path: format!("{prefix}{}", e.error.path), ..e.error };
            Diagnostic {
                severity: Severity::Error,
                object: Some(ObjectRef {
                    kind: KIND.into(),
                    namespace: String::new(),
                    name: name.into(),
                }),
                field: error.path.clone(),
                reason: error.kind.reason().to_owned(),
                message: error.message(false),
                releases: None,
                source: Some(Source {
                    file: file.to_owned(),
                    document,
                    line: e.pos.line,
                    column: e.pos.column,
                }),
            }
        })
        .collect()
}

/// The settings node of a ServicePolicy document, with errors for unknown top-level keys.
fn spec_of(root: &Node) -> (Option<&Node>, Vec<settings::SettingsError>) {
    let mut errors = Vec::new();
    if let Value::Map(entries) = &root.value {
        const KNOWN: [&str; 4] = ["apiVersion", "kind", "metadata", "spec"];
        for entry in entries {
            if !KNOWN.contains(&entry.key.as_ref()) {
                errors.push(settings::SettingsError {
                    error: FieldError::not_supported(
                        entry.key.to_string(),
                        crate::field::GoValue::Str(entry.key.to_string()),
                        &KNOWN,
                    ),
                    pos: entry.key_pos,
                });
            }
        }
    }
    (root.get("spec").filter(|n| !matches!(n.value, Value::Null)), errors)
}

/// An empty settings object (`{}`) at a position.
fn empty_map(pos: crate::source::Pos) -> Node {
    Node { value: Value::Map(Vec::new()), pos }
}

/// Decodes one document against a profile: the settings when valid, and the diagnostics.
fn decode_document(
    doc: &Document,
    file: &str,
    profile: &Profile,
    decoding: Decoding,
) -> (Option<Settings>, Vec<Diagnostic>) {
    if doc.object {
        let (spec, top_errors) = spec_of(&doc.root);
        let empty = empty_map(doc.root.pos);
        let (settings, errors) = settings::decode(spec.unwrap_or(&empty), profile, decoding);
        let mut diags = settings_diagnostics(top_errors, "", &doc.name, file, doc.index);
        diags.extend(settings_diagnostics(errors, "spec.", &doc.name, file, doc.index));
        return (diags.is_empty().then_some(settings), diags);
    }
    let (settings, errors) = settings::decode(&doc.root, profile, decoding);
    let diags = settings_diagnostics(errors, "", &doc.name, file, doc.index);
    (diags.is_empty().then_some(settings), diags)
}

/// The ClusterProfile fields under a bare settings object's `profile` key (Kubewarden's
/// settings shape), resolved like a scenario's ClusterProfile.
fn embedded_profile(doc: &Document, file: &str, diags: &mut Vec<Diagnostic>) -> Option<Profile> {
    if doc.object {
        return None;
    }
    let node = doc.root.get("profile")?;
    Some(profile_from_node(node.clone(), file, doc.index, diags))
}

/// A profile from ClusterProfile fields (a whole document or its bare fields).
pub(crate) fn profile_from_node(
    node: Node,
    file: &str,
    document: usize,
    diags: &mut Vec<Diagnostic>,
) -> Profile {
    let located = crate::manifest::cluster_profile_from(node, file, document, diags);
    Profile::from_scenario(located.as_ref(), diags)
}

/// `svclab policy check FILE`: the settings errors of a policy input (ServicePolicy documents
/// or bare settings, YAML or JSON), each with its settings path as `field` and its line as
/// `source`. Empty when the settings are valid.
///
/// Settings that depend on the profile (`staticBandOnly`) are checked against the bare
/// settings' `profile` key when present, else against the newest release's defaults.
///
/// ```
/// use svclab_core::{check_settings, Input};
/// let errors = check_settings(&Input::new("p.yaml", "externalIPs:\n  mode: allowlist\n  allowedCIDRs: [10.0.0.0/33]\n"));
/// assert_eq!(errors[0].field, "externalIPs.allowedCIDRs[0]");
/// assert_eq!(errors[0].source.as_ref().unwrap().line, 3);
/// assert!(check_settings(&Input::new("p.yaml", "{}")).is_empty());
/// ```
pub fn check_settings(settings: &Input) -> Vec<Diagnostic> {
    let (docs, mut diags) = read_documents(settings);
    for doc in &docs {
        let profile = embedded_profile(doc, &settings.name, &mut diags).unwrap_or_default();
        let decoding = Decoding { allow_profile_key: !doc.object, ..Decoding::default() };
        diags.extend(decode_document(doc, &settings.name, &profile, decoding).1);
    }
    diags
}

/// The ClusterProfile fields under the `profile` key of bare settings (Kubewarden's settings
/// shape), as JSON.
pub(crate) fn embedded_profile_json(input: &Input) -> Option<serde_json::Value> {
    let (docs, _) = read_documents(input);
    docs.iter().find(|d| !d.object).and_then(|d| d.root.get("profile")).map(Node::to_json)
}

/// Validates a policy input for the admission path against the profile in force: the
/// policies, which the pipeline takes as they are ([`Context::decoded`]), or the diagnostics
/// that refuse the configuration.
pub(crate) fn validate_for_admission(
    input: &Input,
    profile: &Profile,
    decoding: Decoding,
) -> Result<Policies, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let policies = Policies::from_input(Some(input), profile, decoding, &mut diags);
    if diags.iter().any(|d| d.severity == Severity::Error) { Err(diags) } else { Ok(policies) }
}

/// The whole findings of one object, turned into diagnostics.
pub(crate) struct Judgement {
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) denied: bool,
}

impl Policies {
    /// The policies of `CheckOptions::policy`, decoded against the scenario's profile.
    pub(crate) fn from_input(
        input: Option<&Input>,
        profile: &Profile,
        decoding: Decoding,
        diags: &mut Vec<Diagnostic>,
    ) -> Policies {
        let mut policies = Policies::default();
        let Some(input) = input else { return policies };
        let (docs, errors) = read_documents(input);
        diags.extend(errors);
        for doc in &docs {
            let decoding = Decoding {
                allow_profile_key: !doc.object && decoding.allow_profile_key,
                ..decoding
            };
            let (settings, errors) = decode_document(doc, &input.name, profile, decoding);
            diags.extend(errors);
            if let Some(settings) = settings {
                policies.put(doc.name.clone(), settings);
            }
        }
        policies
    }

    fn put(&mut self, name: String, settings: Settings) {
        match self.entries.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = settings,
            None => self.entries.push((name, settings)),
        }
    }

    /// Whether no policy is in effect.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A ServicePolicy document of the scenario: put in effect, replaced, or deleted.
    pub(crate) fn apply(
        &mut self,
        located: &Located<ServicePolicy>,
        profile: &Profile,
        decoding: Decoding,
        diags: &mut Vec<Diagnostic>,
    ) {
        let meta = &located.value.metadata;
        let positions = &located.positions;
        let object =
            ObjectRef { kind: KIND.into(), namespace: String::new(), name: meta.name.clone() };
        if meta.annotations.get(OPERATION_ANNOTATION).is_some_and(|v| v == "delete") {
            let before = self.entries.len();
            self.entries.retain(|(n, _)| *n != meta.name);
            if self.entries.len() == before {
                diags.push(Diagnostic {
                    severity: Severity::Error,
                    object: Some(object),
                    field: String::new(),
                    reason: "NotFound".into(),
                    message: format!("servicepolicies {:?} not found", meta.name),
                    releases: None,
                    source: Some(positions.source_of("")),
                });
            }
            return;
        }
        if meta.name.is_empty() {
            diags.push(Diagnostic {
                severity: Severity::Error,
                object: Some(object),
                field: "metadata.name".into(),
                reason: "FieldValueRequired".into(),
                message: "metadata.name: Required value: name or generateName is required".into(),
                releases: None,
                source: Some(positions.source_of("metadata")),
            });
            return;
        }
        let Origin::Tree(root) = &positions.origin else { return };
        let doc = Document {
            root: Node::clone(root),
            index: positions.document(),
            object: true,
            name: meta.name.clone(),
        };
        let (settings, errors) = decode_document(&doc, positions.file(), profile, decoding);
        diags.extend(errors);
        if let Some(settings) = settings {
            self.put(meta.name.clone(), settings);
        }
    }

    /// Judges a Service the apiserver accepted.
    #[allow(
        clippy::too_many_arguments,
        reason = "one call site in the pipeline, each input distinct"
    )]
    pub(crate) fn judge_service(
        &self,
        subject: &ServiceSubject<'_>,
        env: &Env<'_>,
        positions: &Positions,
        json_values: bool,
    ) -> Judgement {
        let service = subject.service;
        let namespace = match service.metadata.namespace.as_str() {
            "" => "default",
            ns => ns,
        };
        let mut findings = Vec::new();
        for (_, settings) in &self.entries {
            if eval::exempt(
                settings,
                namespace,
                &service.metadata.name,
                env.user_info,
                &mut findings,
            ) {
                continue;
            }
            eval::service(settings, subject, env, &mut findings);
        }
        let object = ObjectRef {
            kind: "Service".into(),
            namespace: service.metadata.namespace.clone(),
            name: service.metadata.name.clone(),
        };
        judgement(findings, &object, positions, json_values)
    }

    /// Judges an EndpointSlice the apiserver accepted.
    pub(crate) fn judge_endpoint_slice(
        &self,
        slice: &EndpointSlice,
        user_info: Option<&UserInfo>,
        positions: &Positions,
        json_values: bool,
    ) -> Judgement {
        let namespace = match slice.metadata.namespace.as_str() {
            "" => "default",
            ns => ns,
        };
        let mut findings = Vec::new();
        for (_, settings) in &self.entries {
            if eval::exempt(settings, namespace, &slice.metadata.name, user_info, &mut findings) {
                continue;
            }
            eval::endpoint_slice(settings, slice, &mut findings);
        }
        let object = ObjectRef {
            kind: "EndpointSlice".into(),
            namespace: slice.metadata.namespace.clone(),
            name: slice.metadata.name.clone(),
        };
        judgement(findings, &object, positions, json_values)
    }
}

fn judgement(
    findings: Vec<eval::Finding>,
    object: &ObjectRef,
    positions: &Positions,
    json_values: bool,
) -> Judgement {
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut denied = false;
    for finding in findings {
        let diagnostic = match finding {
            eval::Finding::Violation { rule, action, error } => {
                denied |= action == Action::Deny;
                Diagnostic {
                    severity: match action {
                        Action::Deny => Severity::Error,
                        Action::Warn => Severity::Warning,
                        Action::Audit => Severity::Info,
                    },
                    object: Some(object.clone()),
                    releases: None,
                    source: Some(positions.source_of(&error.path)),
                    field: error.path.clone(),
                    reason: format!("policy:{rule}"),
                    message: format!("{} ({rule})", error.message(json_values)),
                }
            }
            eval::Finding::Skipped { rule, needs } => Diagnostic {
                severity: Severity::Info,
                object: Some(object.clone()),
                field: String::new(),
                reason: "policy:skipped".into(),
                message: format!("{rule}: skipped: needs {needs}"),
                releases: None,
                source: Some(positions.source_of("")),
            },
        };
        // Two policies with the same rule may find the same thing; say it once.
        if !diagnostics.contains(&diagnostic) {
            diagnostics.push(diagnostic);
        }
    }
    Judgement { diagnostics, denied }
}

/// The `StatusCause.reason` of a policy violation, read back from its `field.Error` line.
pub(crate) fn cause_reason(diagnostic: &Diagnostic) -> &'static str {
    let body = diagnostic
        .message
        .strip_prefix(&format!("{}: ", diagnostic.field))
        .unwrap_or(&diagnostic.message);
    const TYPES: [ErrorType; 9] = [
        ErrorType::Required,
        ErrorType::Invalid,
        ErrorType::NotSupported,
        ErrorType::Duplicate,
        ErrorType::Forbidden,
        ErrorType::TooLong,
        ErrorType::TooMany,
        ErrorType::NotFound,
        ErrorType::Internal,
    ];
    TYPES
        .iter()
        .find(|t| body.starts_with(t.word()))
        .map_or(ErrorType::Forbidden.reason(), |t| t.reason())
}

/// (namespace, selector) of a Service that selects Pods, the selector as `k=v` pairs joined by
/// NUL (which no label key or value holds), so a key costs two allocations.
type SelectorKey = (String, String);

/// Stored Services by (namespace, selector), so selector uniqueness costs a lookup rather than
/// a scan of the namespace. The pipeline tells it of every Service it stores (from an empty
/// cluster on); entries are never removed but checked against the inventory on lookup, so a
/// deleted or changed Service never collides.
#[derive(Debug, Clone, Default)]
pub(crate) struct SelectorIndex(RefCell<BTreeMap<SelectorKey, BTreeSet<ServiceKey>>>);

fn selector_key(service: &crate::model::Service) -> Option<SelectorKey> {
    if service.spec.type_ == "ExternalName" {
        return None;
    }
    let selector = service.spec.selector.as_ref().filter(|m| !m.is_empty())?;
    let namespace = match service.metadata.namespace.as_str() {
        "" => "default",
        ns => ns,
    };
    let mut flat = String::new();
    for (k, v) in selector {
        flat.push_str(k);
        flat.push('=');
        flat.push_str(v);
        flat.push('\0');
    }
    Some((namespace.to_owned(), flat))
}

fn namespace_of_meta(namespace: &str) -> &str {
    if namespace.is_empty() { "default" } else { namespace }
}

impl SelectorIndex {
    /// A Service was stored under `key`.
    pub(crate) fn stored(&self, key: &ServiceKey, service: &crate::model::Service) {
        if let Some(selector) = selector_key(service) {
            self.0.borrow_mut().entry(selector).or_default().insert(key.clone());
        }
    }

    /// The other stored Services of the namespace with exactly this Service's selector.
    pub(crate) fn same_selector(
        &self,
        inventory: &BTreeMap<ServiceKey, StoredService>,
        service: &crate::model::Service,
    ) -> Vec<ServiceKey> {
        let Some(wanted) = selector_key(service) else { return Vec::new() };
        let index = self.0.borrow();
        let Some(keys) = index.get(&wanted) else { return Vec::new() };
        keys.iter()
            .filter(|key| key.name != service.metadata.name)
            .filter(|key| {
                inventory.get(*key).is_some_and(|other| {
                    let o = &other.service;
                    o.spec.type_ != "ExternalName"
                        && o.spec.selector == service.spec.selector
                        && namespace_of_meta(&o.metadata.namespace) == wanted.0
                })
            })
            .cloned()
            .collect()
    }
}

/// The stored Services a judgement may look at, or `None` when the host has none.
pub(crate) fn inventory<'a>(
    context: &Context,
    services: &'a BTreeMap<ServiceKey, StoredService>,
) -> Option<&'a BTreeMap<ServiceKey, StoredService>> {
    (!context.no_inventory).then_some(services)
}

#[cfg(test)]
mod tests;
