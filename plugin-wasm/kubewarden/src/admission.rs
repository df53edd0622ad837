//! One Kubewarden `validate` call: the AdmissionRequest through the core's `admit`, its verdict
//! as a Kubewarden `ValidationResponse`.

use serde::Serialize;
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

/// Judges one admission request. An error (settings the core refuses, an object that is not
/// JSON) answers the waPC call with an error, which policy-server turns into a rejection.
pub(crate) fn evaluate(
    request: &AdmissionRequest,
    settings: &Settings,
) -> Result<ValidationResponse, String> {
    let inventory = (settings.unique_selector && request.kind == "Service")
        .then(|| inventory::fetch(&request.object_namespace()))
        .flatten();
    let options = AdmissionOptions {
        policy: settings.policy.clone(),
        inventory,
        ..AdmissionOptions::default()
    };
    let verdict = svclab_core::admit(request, &options).map_err(|err| err.to_string())?;
    Ok(response(verdict))
}

fn response(verdict: Verdict) -> ValidationResponse {
    ValidationResponse {
        accepted: verdict.allowed,
        message: verdict.message,
        code: (!verdict.allowed).then_some(verdict.code),
        warnings: verdict.warnings,
        audit_annotations: verdict.audit_annotations,
    }
}
