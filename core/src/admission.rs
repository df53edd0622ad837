//! Validating admission: an `admission.k8s.io/v1` AdmissionReview in, the same review with its
//! `response` out, as a validating webhook answers kube-apiserver (what `svclab serve` and the
//! plugin's `validate-admission` speak).
//!
//! A Service is run through the whole pipeline (defaulting, validation, allocation into an
//! empty cluster); errors deny it with the `Status` kube-apiserver itself would build
//! (`apimachinery/pkg/api/errors.NewInvalid`: code 422, reason `Invalid`, one cause per field
//! error), warnings travel in `response.warnings`. Other kinds and DELETE are allowed untouched.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::diagnostic::Severity;
use crate::manifest::Input;
use crate::pipeline::{CheckOptions, check};

/// `apiVersion` of the reviews we answer.
pub const ADMISSION_API_VERSION: &str = "admission.k8s.io/v1";

/// Input names the object and the old object get, so diagnostics say which one they are about.
const OBJECT_INPUT: &str = "object";
const OLD_OBJECT_INPUT: &str = "oldObject";

/// Why a review could not be answered at all.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdmissionError {
    /// The body is not JSON.
    Json(String),
    /// The body is JSON but not an `admission.k8s.io/v1` AdmissionReview with a request.
    NotAReview(String),
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
        }
    }
}

impl std::error::Error for AdmissionError {}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Review {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    request: Option<Request>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    uid: String,
    #[serde(default)]
    kind: GroupVersionKind,
    #[serde(default)]
    operation: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    object: Value,
    #[serde(default)]
    old_object: Value,
}

#[derive(Default, Deserialize)]
struct GroupVersionKind {
    #[serde(default)]
    group: String,
    #[serde(default)]
    kind: String,
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
}

/// `metav1.Status` as `NewInvalid` fills it.
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

/// Answers one AdmissionReview (JSON in, JSON out, one line with a trailing newline).
///
/// ```
/// let review = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
///   "uid":"1","kind":{"group":"","version":"v1","kind":"Service"},"operation":"CREATE",
///   "namespace":"default","object":{"apiVersion":"v1","kind":"Service",
///   "metadata":{"name":"web"},"spec":{"ports":[{"port":0}]}}}}"#;
/// let answer = svclab_core::validate_admission(review).unwrap();
/// assert!(answer.contains(r#""allowed":false"#));
/// assert!(answer.contains(r#""code":422"#));
/// assert!(svclab_core::validate_admission("nope").is_err());
/// ```
pub fn validate_admission(review_json: &str) -> Result<String, AdmissionError> {
    let review: Review =
        serde_json::from_str(review_json).map_err(|err| AdmissionError::Json(err.to_string()))?;
    if review.kind != "AdmissionReview" || review.api_version != ADMISSION_API_VERSION {
        return Err(AdmissionError::NotAReview(format!(
            "apiVersion {:?}, kind {:?}",
            review.api_version, review.kind
        )));
    }
    let request = review.request.ok_or_else(|| AdmissionError::NotAReview("no request".into()))?;
    let response = respond(request);
    let mut text = serde_json::to_string(&ReviewResponse {
        api_version: ADMISSION_API_VERSION,
        kind: "AdmissionReview",
        response,
    })
    .map_err(|err| AdmissionError::Json(err.to_string()))?;
    text.push('\n');
    Ok(text)
}

fn respond(request: Request) -> Response {
    let allowed = |uid: String| Response { uid, allowed: true, status: None, warnings: Vec::new() };
    let is_service = request.kind.group.is_empty() && request.kind.kind == "Service";
    if !is_service || !matches!(request.operation.as_str(), "CREATE" | "UPDATE") {
        return allowed(request.uid);
    }
    let name = request
        .object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut inputs = Vec::new();
    if request.operation == "UPDATE" && request.old_object.is_object() {
        inputs.push(Input::new(
            OLD_OBJECT_INPUT,
            with_namespace(request.old_object, &request.namespace),
        ));
    }
    inputs.push(Input::new(OBJECT_INPUT, with_namespace(request.object, &request.namespace)));
    let report = check(&inputs, &CheckOptions::default());
    // Only what is said about the object under review (the old object is context).
    let about_object = report
        .diagnostics
        .iter()
        .filter(|d| d.source.as_ref().is_none_or(|source| source.file == OBJECT_INPUT));
    let mut causes = Vec::new();
    let mut warnings = Vec::new();
    for diagnostic in about_object {
        match diagnostic.severity {
            Severity::Warning => warnings.push(diagnostic.message.clone()),
            Severity::Error => causes.push(StatusCause {
                reason: diagnostic.reason.clone(),
                // `field.Error.ErrorBody()`: the message without its `<field>: ` prefix.
                message: diagnostic
                    .message
                    .strip_prefix(&format!("{}: ", diagnostic.field))
                    .unwrap_or(&diagnostic.message)
                    .to_owned(),
                field: diagnostic.field.clone(),
            }),
        }
    }
    if causes.is_empty() {
        return Response { warnings, ..allowed(request.uid) };
    }
    let messages: Vec<&str> = report
        .diagnostics
        .iter()
        .filter(|d| {
            d.severity == Severity::Error
                && d.source.as_ref().is_none_or(|s| s.file == OBJECT_INPUT)
        })
        .map(|d| d.message.as_str())
        .collect();
    let status = Status {
        metadata: Empty {},
        status: "Failure",
        message: format!(
            "Service {} is invalid: {}",
            crate::field::go_quote(&name),
            aggregate(&messages)
        ),
        reason: "Invalid",
        details: StatusDetails { name, group: String::new(), kind: "Service".into(), causes },
        code: 422,
    };
    Response { uid: request.uid, allowed: false, status: Some(status), warnings }
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
