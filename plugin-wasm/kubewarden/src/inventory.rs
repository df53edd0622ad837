//! The other Services of the cluster, for the context-aware rules, through Kubewarden's host
//! capability `kubernetes/list_resources_by_namespace` (waPC binding `kubewarden`; request and
//! answer as `kubewarden/policy-sdk-rust:src/host_capabilities/kubernetes.rs` has them: the
//! request in snake_case, the answer a Kubernetes `ServiceList`).
//!
//! policy-server answers only for resources the policy declares in `contextAwareResources` and
//! the operator allows; when it refuses, or any answer cannot be read, there is no inventory and
//! the core reports the rules that need it as skipped rather than passing them silently.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Serialize)]
struct ListResourcesByNamespaceRequest<'a> {
    api_version: &'static str,
    kind: &'static str,
    namespace: &'a str,
    label_selector: Option<&'a str>,
    field_selector: Option<&'a str>,
}

#[derive(Deserialize)]
struct List {
    #[serde(default)]
    items: Vec<Value>,
}

/// The Services of `namespace` as JSON objects; `None` when the host does not answer. (The
/// core leaves out the stored version of the object under review itself.)
pub(crate) fn fetch(namespace: &str) -> Option<Vec<String>> {
    let request = ListResourcesByNamespaceRequest {
        api_version: "v1",
        kind: "Service",
        namespace,
        label_selector: None,
        field_selector: None,
    };
    let request = serde_json::to_vec(&request).ok()?;
    let answer =
        wapc_guest::host_call("kubewarden", "kubernetes", "list_resources_by_namespace", &request)
            .ok()?;
    let list: List = serde_json::from_slice(&answer).ok()?;
    let services = list
        .items
        .into_iter()
        .map(|mut item| {
            // A List's items may leave out `apiVersion` and `kind` (the list carries them).
            if let Some(fields) = item.as_object_mut() {
                fields.entry("apiVersion").or_insert_with(|| Value::from("v1"));
                fields.entry("kind").or_insert_with(|| Value::from("Service"));
            }
            item.to_string()
        })
        .collect();
    Some(services)
}
