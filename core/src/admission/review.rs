//! The `admission.k8s.io/v1` JSON of a webhook (`k8s.io/api/admission/v1/types.go`): the
//! AdmissionReview around a request, the AdmissionRequest every host's [`AdmissionRequest`] is
//! decoded from (only the fields the core reads), and the review sent back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::AdmissionRequest;
use super::status::Status;

/// The AdmissionReview a webhook receives.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Review {
    #[serde(default)]
    pub(super) api_version: String,
    #[serde(default)]
    pub(super) kind: String,
    pub(super) request: Option<Request>,
}

/// The apiserver's AdmissionRequest, the fields the core reads.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Request {
    /// Required in a review (the response echoes it), not by [`admit`](super::admit).
    #[serde(default)]
    pub(super) uid: Option<String>,
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

/// `authenticationv1.UserInfo`, the fields a policy reads.
#[derive(Default, Deserialize)]
struct ReviewUserInfo {
    #[serde(default)]
    username: String,
    #[serde(default)]
    groups: Vec<String>,
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

/// The review we send back.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ReviewResponse {
    pub(super) api_version: &'static str,
    pub(super) kind: &'static str,
    pub(super) response: Response,
}

/// The AdmissionResponse.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Response {
    pub(super) uid: String,
    pub(super) allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) status: Option<Status>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) warnings: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) audit_annotations: BTreeMap<String, String>,
}
