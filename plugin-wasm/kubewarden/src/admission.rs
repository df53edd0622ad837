//! One Kubewarden `validate` call: the admission request through the core's admission, its
//! verdict as a Kubewarden `ValidationResponse`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

use crate::settings::Settings;

/// `ValidationResponse`, snake_case like the SDK writes it; policy-server copies `message` and
/// `code` into the AdmissionResponse's `status`, `warnings` and `audit_annotations` as they are.
#[derive(Serialize)]
pub(crate) struct ValidationResponse {
    accepted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<u16>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    audit_annotations: BTreeMap<String, String>,
}

/// What `validate_admission` answers, as far as a ValidationResponse carries it.
#[derive(Deserialize)]
struct Review {
    response: Response,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    allowed: bool,
    #[serde(default)]
    status: Option<Status>,
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default)]
    audit_annotations: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct Status {
    message: String,
    code: u16,
}

/// Judges one admission request (Kubewarden's `KubernetesAdmissionRequest`, which is the
/// apiserver's `AdmissionRequest`).
pub(crate) fn evaluate(request: &Value, settings: &Settings) -> Result<ValidationResponse, String> {
    let review = serde_json::json!({
        "apiVersion": svclab_core::ADMISSION_API_VERSION,
        "kind": "AdmissionReview",
        "request": request,
    });
    let answer = svclab_core::validate_admission(&review.to_string()).map_err(|err| err.to_string())?;
    let review: Review = serde_json::from_str(&answer).map_err(|err| err.to_string())?;
    let _ = settings;
    let response = review.response;
    Ok(ValidationResponse {
        accepted: response.allowed,
        message: response.status.as_ref().map(|status| status.message.clone()),
        code: response.status.map(|status| status.code),
        warnings: response.warnings,
        audit_annotations: response.audit_annotations,
    })
}
