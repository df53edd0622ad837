//! Name and label checks of `k8s.io/apimachinery/pkg/util/validation` and object metadata
//! (`ValidateObjectMeta`, `ValidateObjectMetaUpdate`), with their exact messages.

use crate::field::{FieldError, GoValue};
use crate::model::{ObjectMeta, StringMap};
use crate::profile::Profile;
use crate::validation::releases::{Rule, in_force};

/// The wording of `k8s.io/apimachinery/pkg/util/validation` (and, from 1.35, of
/// `pkg/api/validate/content`) in one release; apimachinery v0.N ships with Kubernetes 1.N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Texts {
    minor: u32,
}

impl Texts {
    /// The texts of the profile's release.
    pub(crate) fn of(profile: &Profile) -> Texts {
        Texts { minor: profile.version.minor }
    }

    /// `MaxLenError` of label keys, label values and a key's prefix: `validation.go` counts
    /// "characters" (v0.24 to v0.34); from v0.35 `IsQualifiedName` and `IsValidLabelValue` are
    /// `content.IsLabelKey` / `content.IsLabelValue`, whose `content/errors.go` counts "bytes".
    fn label_max_len(self, n: usize) -> String {
        if in_force(Rule::LabelKeyBytes, self.minor) {
            format!("must be no more than {n} bytes")
        } else {
            max_len(n)
        }
    }
}

/// DNS-1035 label text (`RegexError`: note the two spaces before `or`).
pub(crate) const MSG_DNS1035: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
/// DNS-1123 label text.
pub(crate) const MSG_DNS1123_LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
/// DNS-1123 subdomain text.
pub(crate) const MSG_DNS1123_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
/// Qualified-name name part text.
const MSG_QN_NAME: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
/// Label value text.
pub(crate) const MSG_LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// Total annotation size limit (`TotalAnnotationSizeLimitB`).
const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

fn max_len(n: usize) -> String {
    format!("must be no more than {n} characters")
}

fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn matches_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && is_lower_alnum(b[0])
        && is_lower_alnum(b[b.len() - 1])
        && b.iter().all(|c| is_lower_alnum(*c) || *c == b'-')
}

/// DNS-1123 subdomain regex (labels joined by dots), in one pass over the bytes (it runs for
/// every name): labels are runs of `[-a-z0-9]` that start and end with an alphanumeric, so a dot
/// sits between two alphanumerics.
fn matches_dns1123_subdomain(s: &str) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else { return false };
    if !is_lower_alnum(first) || !is_lower_alnum(last) {
        return false;
    }
    let mut prev = first;
    for &c in &b[1..] {
        let fits = match c {
            b'.' => is_lower_alnum(prev),
            b'-' => prev != b'.',
            _ => is_lower_alnum(c),
        };
        if !fits {
            return false;
        }
        prev = c;
    }
    true
}

/// `IsDNS1123Label`.
pub(crate) fn dns1123_label(t: Texts, s: &str) -> Vec<String> {
    let mut msgs = Vec::new();
    if s.len() > 63 {
        msgs.push(max_len(63));
    }
    if !matches_dns1123_label(s) {
        // A valid subdomain that is not a label can only have failed on its dots: said so from
        // v0.27 (`IsDNS1123Label`); v0.24 to v0.26 give the regex message.
        if in_force(Rule::LabelNoDots, t.minor) && matches_dns1123_subdomain(s) {
            msgs.push("must not contain dots".to_owned());
        } else {
            msgs.push(MSG_DNS1123_LABEL.to_owned());
        }
    }
    msgs
}

/// `IsDNS1123Subdomain`.
pub(crate) fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut msgs = Vec::new();
    if s.len() > 253 {
        msgs.push(max_len(253));
    }
    if !matches_dns1123_subdomain(s) {
        msgs.push(MSG_DNS1123_SUBDOMAIN.to_owned());
    }
    msgs
}

/// `IsDNS1035Label`.
pub(crate) fn dns1035_label(s: &str) -> Vec<String> {
    let mut msgs = Vec::new();
    if s.len() > 63 {
        msgs.push(max_len(63));
    }
    let b = s.as_bytes();
    let ok = !b.is_empty()
        && b[0].is_ascii_lowercase()
        && is_lower_alnum(b[b.len() - 1])
        && b.iter().all(|c| is_lower_alnum(*c) || *c == b'-');
    if !ok {
        msgs.push(MSG_DNS1035.to_owned());
    }
    msgs
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn matches_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `IsQualifiedName` (label keys, annotation keys, `appProtocol`, `loadBalancerClass`): "a
/// qualified name" with "characters" in `validation.go` v0.24 to v0.34, "a valid label key"
/// with "bytes" in `content.IsLabelKey` from v0.35.
pub(crate) fn qualified_name(t: Texts, value: &str) -> Vec<String> {
    let parts: Vec<&str> = value.split('/').collect();
    let mut msgs = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                msgs.push("prefix part must be non-empty".to_owned());
            } else {
                // `IsDNS1123Subdomain` of the same package, so "bytes" from v0.35.
                if prefix.len() > 253 {
                    msgs.push(format!("prefix part {}", t.label_max_len(253)));
                }
                if !matches_dns1123_subdomain(prefix) {
                    msgs.push(format!("prefix part {MSG_DNS1123_SUBDOMAIN}"));
                }
            }
            *name
        }
        _ => {
            let without = MSG_QN_NAME.trim_start_matches("name part ");
            let what = if in_force(Rule::LabelKeyBytes, t.minor) {
                "a valid label key"
            } else {
                "a qualified name"
            };
            return vec![format!(
                "{what} {without} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        msgs.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        msgs.push(format!("name part {}", t.label_max_len(63)));
    }
    if !matches_qualified_name_part(name) {
        msgs.push(MSG_QN_NAME.to_owned());
    }
    msgs
}

/// `IsValidLabelValue` ("bytes" from v0.35, `content.IsLabelValue`).
pub(crate) fn label_value(t: Texts, value: &str) -> Vec<String> {
    let mut msgs = Vec::new();
    if value.len() > 63 {
        msgs.push(t.label_max_len(63));
    }
    if !value.is_empty() && !matches_qualified_name_part(value) {
        msgs.push(MSG_LABEL_VALUE.to_owned());
    }
    msgs
}

/// `IsValidPortName` (IANA_SVC_NAME): every failing check, in Go's order.
pub(crate) fn port_name(t: Texts, port: &str) -> Vec<String> {
    let mut msgs = Vec::new();
    if port.len() > 15 {
        msgs.push(max_len(15));
    }
    if port.is_empty()
        || !port.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        msgs.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_owned(),
        );
    }
    if !port.bytes().any(|b| b.is_ascii_lowercase()) {
        // The same `[a-z]` check; v0.24 worded it as if digits counted.
        msgs.push(if in_force(Rule::PortNameLetterOnly, t.minor) {
            "must contain at least one letter (a-z)".to_owned()
        } else {
            "must contain at least one letter or number (a-z, 0-9)".to_owned()
        });
    }
    if port.contains("--") {
        msgs.push("must not contain consecutive hyphens".to_owned());
    }
    if port.starts_with('-') || port.ends_with('-') {
        msgs.push("must not begin or end with a hyphen".to_owned());
    }
    msgs
}

/// Appends one `Invalid` error per message.
pub(crate) fn push_invalid(
    errors: &mut Vec<FieldError>,
    path: &str,
    value: &str,
    msgs: Vec<String>,
) {
    for msg in msgs {
        errors.push(FieldError::invalid(path, GoValue::Str(value.to_owned()), msg));
    }
}

/// `ValidateLabels`: key errors carry the key, value errors the value; path has no key suffix.
pub(crate) fn validate_labels(
    errors: &mut Vec<FieldError>,
    t: Texts,
    labels: &StringMap,
    path: &str,
) {
    // Go iterates the map in random order; we use key order so the output is stable.
    for (k, v) in labels {
        push_invalid(errors, path, k, qualified_name(t, k));
        push_invalid(errors, path, v, label_value(t, v));
    }
}

/// `ValidateAnnotations`: keys checked lower-cased, reported as written; total size limit.
fn validate_annotations(
    errors: &mut Vec<FieldError>,
    t: Texts,
    annotations: &StringMap,
    path: &str,
) {
    let mut total = 0usize;
    for (k, v) in annotations {
        push_invalid(errors, path, k, qualified_name(t, &k.to_lowercase()));
        total += k.len() + v.len();
    }
    if total > ANNOTATIONS_MAX_BYTES {
        errors.push(FieldError {
            path: path.to_owned(),
            kind: crate::field::ErrorType::TooLong,
            value: GoValue::Null,
            // `field.TooLong`: "must have at most N bytes" to v0.31, "may not be more than N
            // bytes" from v0.32 (`pkg/util/validation/field/errors.go`).
            detail: if in_force(Rule::TooLongMayNot, t.minor) {
                format!("may not be more than {ANNOTATIONS_MAX_BYTES} bytes")
            } else {
                format!("must have at most {ANNOTATIONS_MAX_BYTES} bytes")
            },
        });
    }
}

/// How an object's `metadata.name` is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameRule {
    /// Services: DNS-1035 label (`NameIsDNS1035Label`).
    Dns1035,
    /// Services with `RelaxedServiceNameValidation`: DNS-1123 label.
    Dns1123Label,
    /// EndpointSlices: DNS-1123 subdomain.
    Dns1123Subdomain,
    /// The generic registry's update check (`ValidatePathSegmentName`): no masking of a
    /// generateName's trailing dash, which only the DNS rules do.
    PathSegment,
}

impl NameRule {
    fn check(self, t: Texts, name: &str, prefix: bool) -> Vec<String> {
        // `maskTrailingDash`: a generateName prefix may end with '-' (DNS rules only).
        let masked;
        let name = if prefix
            && self != NameRule::PathSegment
            && name.len() > 1
            && name.ends_with('-')
            && name.is_char_boundary(name.len() - 2)
        {
            masked = format!("{}a", &name[..name.len() - 2]);
            masked.as_str()
        } else {
            name
        };
        match self {
            NameRule::Dns1035 => dns1035_label(name),
            NameRule::Dns1123Label => dns1123_label(t, name),
            NameRule::Dns1123Subdomain => dns1123_subdomain(name),
            NameRule::PathSegment => path_segment_name(name, prefix),
        }
    }
}

/// Whether a kind lives in a namespace (`strategy.NamespaceScoped()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Services, EndpointSlices: a namespace is required.
    Namespaced,
    /// ServiceCIDRs: a namespace is forbidden.
    Cluster,
}

/// `ValidateObjectMeta`: generateName, name, namespace, generation,
/// labels, annotations, finalizers, in that order (apimachinery `ValidateObjectMetaAccessor`,
/// the same order v0.24.17 to v0.37.2; owner references and managed fields are not modelled).
pub(crate) fn validate_object_meta(
    errors: &mut Vec<FieldError>,
    t: Texts,
    meta: &ObjectMeta,
    rule: NameRule,
    scope: Scope,
) {
    if !meta.generate_name.is_empty() {
        push_invalid(
            errors,
            "metadata.generateName",
            &meta.generate_name,
            rule.check(t, &meta.generate_name, true),
        );
    }
    if meta.name.is_empty() {
        errors.push(FieldError::required("metadata.name", "name or generateName is required"));
    } else {
        push_invalid(errors, "metadata.name", &meta.name, rule.check(t, &meta.name, false));
    }
    match scope {
        Scope::Namespaced if meta.namespace.is_empty() => {
            errors.push(FieldError::required("metadata.namespace", ""));
        }
        Scope::Namespaced => push_invalid(
            errors,
            "metadata.namespace",
            &meta.namespace,
            dns1123_label(t, &meta.namespace),
        ),
        Scope::Cluster if !meta.namespace.is_empty() => {
            errors.push(FieldError::forbidden("metadata.namespace", "not allowed on this type"));
        }
        Scope::Cluster => {}
    }
    if meta.generation < 0 {
        errors.push(FieldError::invalid(
            "metadata.generation",
            GoValue::Int(meta.generation),
            "must be greater than or equal to 0",
        ));
    }
    validate_labels(errors, t, &meta.labels, "metadata.labels");
    validate_annotations(errors, t, &meta.annotations, "metadata.annotations");
    validate_finalizers(errors, t, &meta.finalizers);
}

/// apimachinery `ValidateFinalizers` (`pkg/api/validation/objectmeta.go`, unchanged v0.24.17 to
/// v0.37.2): each name a qualified name, at the list's path, and not both `orphan` and
/// `foregroundDeletion`.
fn validate_finalizers(errors: &mut Vec<FieldError>, t: Texts, finalizers: &[String]) {
    for finalizer in finalizers {
        push_invalid(errors, "metadata.finalizers", finalizer, qualified_name(t, finalizer));
    }
    let has = |name: &str| finalizers.iter().any(|f| f == name);
    if has("orphan") && has("foregroundDeletion") {
        errors.push(FieldError::invalid(
            "metadata.finalizers",
            GoValue::strings(finalizers),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
}

/// The core group's extra finalizer check after `ValidateObjectMeta` and `ValidateObjectMetaUpdate`
/// (`pkg/apis/core/validation/validation.go` `validateKubeFinalizerName`, unchanged in
/// k8s.io/kubernetes@v1.24.17 to @v1.37.2): a name without a `/` must be a standard one.
pub(crate) fn kube_finalizer_names(errors: &mut Vec<FieldError>, meta: &ObjectMeta) {
    for (i, finalizer) in meta.finalizers.iter().enumerate() {
        let standard = matches!(finalizer.as_str(), "kubernetes" | "orphan" | "foregroundDeletion");
        if !finalizer.contains('/') && !standard {
            errors.push(FieldError::invalid(
                format!("metadata.finalizers[{i}]"),
                GoValue::Str(finalizer.clone()),
                "name is neither a standard finalizer name nor is it fully qualified",
            ));
        }
    }
}

/// `ValidateObjectMetaUpdate`: resourceVersion, generation, immutable identity, then the new
/// labels and annotations.
pub(crate) fn validate_object_meta_update(
    errors: &mut Vec<FieldError>,
    t: Texts,
    new: &ObjectMeta,
    old: &ObjectMeta,
) {
    if new.resource_version.is_empty() {
        errors.push(FieldError::invalid(
            "metadata.resourceVersion",
            GoValue::Str(String::new()),
            "must be specified for an update",
        ));
    }
    if new.generation < old.generation {
        errors.push(FieldError::invalid(
            "metadata.generation",
            GoValue::Int(new.generation),
            "must not be decremented",
        ));
    }
    let immutable = |errors: &mut Vec<FieldError>, path: &str, new: &str, old: &str| {
        if new != old {
            errors.push(FieldError::invalid(
                path,
                GoValue::Str(new.to_owned()),
                "field is immutable",
            ));
        }
    };
    immutable(errors, "metadata.name", &new.name, &old.name);
    immutable(errors, "metadata.namespace", &new.namespace, &old.namespace);
    immutable(errors, "metadata.uid", &new.uid, &old.uid);
    validate_labels(errors, t, &new.labels, "metadata.labels");
    validate_annotations(errors, t, &new.annotations, "metadata.annotations");
}

/// `path.ValidatePathSegmentName` (apimachinery `pkg/api/validation/path/name.go`): the name
/// function the generic registry uses for every kind; a prefix only has the "contain" checks.
pub(super) fn path_segment_name(name: &str, prefix: bool) -> Vec<String> {
    if !prefix && (name == "." || name == "..") {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|bad| name.contains(**bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

/// The generic registry's `validateCommonFields` on update (apiserver
/// `pkg/registry/rest/update.go`, v0.24.0 to v0.36.0): `ValidateObjectMetaAccessor` of the new
/// object with the path-segment name rule, then `ValidateObjectMetaAccessorUpdate`. Its causes
/// come before the strategy's own `ValidateUpdate`, which checks the metadata again, so a
/// metadata error is listed more than once (the message deduplicates; the causes do not, until
/// 1.37: `releases::Rule::IdenticalCausesOnce`).
pub(crate) fn validate_common_update_fields(
    errors: &mut Vec<FieldError>,
    t: Texts,
    new: &ObjectMeta,
    old: &ObjectMeta,
    scope: Scope,
) {
    validate_object_meta(errors, t, new, NameRule::PathSegment, scope);
    validate_object_meta_update(errors, t, new, old);
}
