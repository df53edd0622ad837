//! One Kubewarden `validate` call: the AdmissionRequest through the core's `admit`, its verdict
//! as a Kubewarden `ValidationResponse`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use svclab_core::{AdmissionOptions, AdmissionRequest, Verdict};

use crate::inventory;
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

/// The `metav1.Status` of a refusal, for its message.
#[derive(Deserialize)]
struct Status {
    #[serde(default)]
    message: String,
}

/// Judges one admission request. An error (settings the core refuses, an object that is not
/// JSON) answers the waPC call with an error, which policy-server turns into a rejection.
pub(crate) fn evaluate(request: Value, settings: &Settings) -> Result<ValidationResponse, String> {
    // The object's namespace, else the request's (the apiserver fills one from the other),
    // else `default`, as the core places the object.
    let namespace = [
        request.pointer("/object/metadata/namespace").and_then(Value::as_str),
        request.get("namespace").and_then(Value::as_str),
    ]
    .into_iter()
    .flatten()
    .find(|namespace| !namespace.is_empty())
    .unwrap_or("default")
    .to_owned();
    let admission: AdmissionRequest = serde_json::from_value(request)
        .map_err(|err| format!("the admission request cannot be read: {err}"))?;
    let inventory = (settings.unique_selector && admission.kind == "Service")
        .then(|| inventory::fetch(&namespace))
        .flatten();
    let options = AdmissionOptions {
        policy: settings.policy.clone(),
        inventory,
        ..AdmissionOptions::default()
    };
    let verdict = svclab_core::admit(&admission, &options).map_err(|err| err.to_string())?;
    Ok(response(verdict))
}

fn response(verdict: Verdict) -> ValidationResponse {
    let refused = !verdict.allowed;
    let message = verdict
        .status
        .as_deref()
        .filter(|_| refused)
        .and_then(|status| serde_json::from_str::<Status>(status).ok())
        .map(|status| status.message);
    ValidationResponse {
        accepted: verdict.allowed,
        message,
        code: refused.then_some(verdict.code),
        warnings: verdict.warnings,
        audit_annotations: verdict.audit_annotations,
    }
}
