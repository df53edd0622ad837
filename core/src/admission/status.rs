//! The `metav1.Status` of a refusal, as kube-apiserver builds it
//! (`apimachinery/pkg/api/errors`: `NewInvalid` for apiserver validation, `NewForbidden` for a
//! policy deny), and `utilerrors.NewAggregate`'s message.

use serde::Serialize;

use crate::diagnostic::Diagnostic;

/// `metav1.Status` as `NewInvalid` / `NewForbidden` fill it.
#[derive(Serialize)]
pub(super) struct Status {
    metadata: Empty,
    status: &'static str,
    pub(super) message: String,
    reason: &'static str,
    details: StatusDetails,
    pub(super) code: u16,
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

impl Status {
    /// The refusal of `errors` about the object `name` of `kind` (`Service` or
    /// `EndpointSlice`): 403 when the policy alone refuses, 422 when the apiserver does.
    pub(super) fn refusal(kind: &str, name: &str, errors: &[&Diagnostic]) -> Status {
        let is_policy = |d: &&Diagnostic| d.reason.starts_with("policy:");
        if errors.iter().all(is_policy) {
            Status::forbidden(kind, name, errors)
        } else {
            Status::invalid(kind, name, errors)
        }
    }

    /// A policy deny: `NewForbidden`-shaped, with the violations as causes (each message the
    /// whole line, rule included).
    fn forbidden(kind: &str, name: &str, errors: &[&Diagnostic]) -> Status {
        let causes = errors
            .iter()
            .map(|d| StatusCause {
                reason: crate::policy::cause_reason(d).to_owned(),
                message: d.message.clone(),
                field: d.field.clone(),
            })
            .collect();
        let (group, resource) = group_resource(kind);
        Status {
            metadata: Empty {},
            status: "Failure",
            message: aggregate(&messages(errors)),
            reason: "Forbidden",
            details: StatusDetails {
                name: name.to_owned(),
                group: group.to_owned(),
                kind: resource.to_owned(),
                causes,
            },
            code: 403,
        }
    }

    /// Apiserver validation errors: `NewInvalid`, one cause per field error.
    fn invalid(kind: &str, name: &str, errors: &[&Diagnostic]) -> Status {
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
        let (group, _) = group_resource(kind);
        let qualified = if group.is_empty() { kind.to_owned() } else { format!("{kind}.{group}") };
        Status {
            metadata: Empty {},
            status: "Failure",
            message: format!(
                "{qualified} {} is invalid: {}",
                crate::field::go_quote(name),
                aggregate(&messages(errors))
            ),
            reason: "Invalid",
            details: StatusDetails {
                name: name.to_owned(),
                group: group.to_owned(),
                kind: kind.to_owned(),
                causes,
            },
            code: 422,
        }
    }
}

/// The API group and resource of `kind`.
fn group_resource(kind: &str) -> (&'static str, &'static str) {
    match kind {
        "EndpointSlice" => ("discovery.k8s.io", "endpointslices"),
        _ => ("", "services"),
    }
}

fn messages<'a>(diagnostics: &[&'a Diagnostic]) -> Vec<&'a str> {
    diagnostics.iter().map(|d| d.message.as_str()).collect()
}

/// The field.Error lines of diagnostics, aggregated.
pub(super) fn lines(diagnostics: &[Diagnostic]) -> String {
    let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
    aggregate(&messages)
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
