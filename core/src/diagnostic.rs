//! Diagnostics: every error, warning and advisory svclab reports, with its object, field and
//! source position.

use serde::{Deserialize, Serialize};

use crate::source::Source;

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The apiserver (or the scenario reader) would reject the object.
    Error,
    /// The apiserver would accept it but warn, or svclab advises.
    Warning,
    /// Recorded, not refused: a policy `audit` violation, or a policy rule skipped for lack of
    /// an input.
    Info,
}

/// The object a diagnostic is about.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ObjectRef {
    /// `kind`.
    pub kind: String,
    /// `metadata.namespace` (after defaulting).
    #[serde(default)]
    pub namespace: String,
    /// `metadata.name`.
    #[serde(default)]
    pub name: String,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// `error`, `warning` or `info`.
    pub severity: Severity,
    /// The object it is about, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<ObjectRef>,
    /// Field path (`spec.ports[0].port`), empty when about the whole object.
    #[serde(default)]
    pub field: String,
    /// Kubernetes cause type (`FieldValueInvalid`, ...), `Warning`, or an svclab reason.
    pub reason: String,
    /// The full line kubectl prints after `is invalid: ` (or after `Warning: `).
    pub message: String,
    /// Where the field (or the object) was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// `svclab check --explain-release`: the releases in which upstream gives exactly this
    /// diagnostic for the scenario, and the release-table rows behind its text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub releases: Option<ReleaseExplanation>,
}

/// In which Kubernetes releases a diagnostic comes out exactly so, and why.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseExplanation {
    /// Release ranges (`1.24–1.29`, `1.33`) in which the same scenario gives the same text.
    pub releases: Vec<String>,
    /// The rows of svclab's release tables whose texts this diagnostic carries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ReleaseChange>,
}

/// One row of a release table, as the report cites it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseChange {
    /// The table (`Service rules`, `warnings`, ...).
    pub table: String,
    /// The releases of the row (`1.24–1.29`, `1.33+`).
    pub releases: String,
    /// What upstream does in those releases.
    pub change: String,
    /// Upstream file, function and pull request.
    pub upstream: String,
    /// Whether both boundaries were read in the source (false: see `upstream`).
    pub pinned: bool,
}

impl ObjectRef {
    /// The object `kind` `namespace/name`.
    pub(crate) fn new(kind: &str, namespace: &str, name: &str) -> ObjectRef {
        ObjectRef { kind: kind.to_owned(), namespace: namespace.to_owned(), name: name.to_owned() }
    }

    /// An object known only by its kind (a range, a profile, an unreadable document).
    pub(crate) fn kind(kind: &str) -> ObjectRef {
        ObjectRef { kind: kind.to_owned(), ..ObjectRef::default() }
    }
}

impl Diagnostic {
    /// An error about `field` of `object` (an empty field means the whole object).
    pub(crate) fn error(
        object: Option<ObjectRef>,
        field: impl Into<String>,
        reason: &str,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            object,
            field: field.into(),
            reason: reason.to_owned(),
            message: message.into(),
            source: None,
            releases: None,
        }
    }

    /// A warning about `field` of `object`.
    pub(crate) fn warning(
        object: Option<ObjectRef>,
        field: impl Into<String>,
        reason: &str,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(object, field, reason, message)
        }
    }

    /// The same diagnostic, placed where it was written.
    pub(crate) fn at(self, source: Source) -> Diagnostic {
        Diagnostic { source: Some(source), ..self }
    }
}
