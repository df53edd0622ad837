//! One Kubewarden `validate` call: the AdmissionRequest through the core's `admit`, its verdict
//! as a Kubewarden `ValidationResponse`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use svclab_core::{AdmissionOptions, AdmissionRequest, UserInfo, Verdict};

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

/// The parts of Kubewarden's `KubernetesAdmissionRequest` (the apiserver's AdmissionRequest,
/// camelCase) the core reads.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
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
    user_info: Option<RequestUserInfo>,
}

#[derive(Default, Deserialize)]
struct GroupVersionKind {
    #[serde(default)]
    group: String,
    #[serde(default)]
    kind: String,
}

#[derive(Deserialize)]
struct RequestUserInfo {
    #[serde(default)]
    username: String,
    #[serde(default)]
    groups: Vec<String>,
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
    let request: Request = serde_json::from_value(request)
        .map_err(|err| format!("the admission request cannot be read: {err}"))?;
    // The names `admit` takes, as `validate_admission` derives them from the review.
    let kind = match (request.kind.group.as_str(), request.kind.kind.as_str()) {
        ("", "Service") => "Service".to_owned(),
        ("discovery.k8s.io", "EndpointSlice") => "EndpointSlice".to_owned(),
        (group, kind) => format!("{kind}.{group}"),
    };
    let json = |value: Value| value.is_object().then(|| value.to_string());
    let inventory = (settings.unique_selector && kind == "Service")
        .then(|| {
            // The object's namespace, else the request's (the apiserver fills one from the
            // other), else `default`, as the core places the object.
            let namespace = [
                request.object.pointer("/metadata/namespace").and_then(Value::as_str),
                Some(request.namespace.as_str()),
            ]
            .into_iter()
            .flatten()
            .find(|namespace| !namespace.is_empty())
            .unwrap_or("default");
            inventory::fetch(namespace)
        })
        .flatten();
    let admission = AdmissionRequest {
        kind,
        operation: request.operation,
        subresource: request.sub_resource,
        namespace: request.namespace,
        object: json(request.object),
        old_object: json(request.old_object),
        user_info: request
            .user_info
            .map(|user| UserInfo { username: user.username, groups: user.groups }),
    };
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
