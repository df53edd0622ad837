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

/// The Services of `namespaces` (`""` stands for `own_namespace`) as JSON objects, without the
/// stored version of the object under review (`own_namespace`/`own_name`); `None` when the host
/// does not answer.
pub(crate) fn fetch(
    namespaces: &[String],
    own_namespace: &str,
    own_name: &str,
) -> Option<Vec<String>> {
    let mut listed: Vec<&str> = Vec::new();
    let mut services = Vec::new();
    for namespace in namespaces {
        let namespace = if namespace.is_empty() { own_namespace } else { namespace.as_str() };
        if listed.contains(&namespace) {
            continue;
        }
        listed.push(namespace);
        let request = ListResourcesByNamespaceRequest {
            api_version: "v1",
            kind: "Service",
            namespace,
            label_selector: None,
            field_selector: None,
        };
        let request = serde_json::to_vec(&request).ok()?;
        let answer = wapc_guest::host_call(
            "kubewarden",
            "kubernetes",
            "list_resources_by_namespace",
            &request,
        )
        .ok()?;
        let list: List = serde_json::from_slice(&answer).ok()?;
        for mut item in list.items {
            let name = item.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
            if namespace == own_namespace && name == own_name {
                continue;
            }
            // A List's items may leave out `apiVersion` and `kind` (the list carries them).
            if let Some(fields) = item.as_object_mut() {
                fields.entry("apiVersion").or_insert_with(|| Value::from("v1"));
                fields.entry("kind").or_insert_with(|| Value::from("Service"));
            }
            services.push(item.to_string());
        }
    }
    Some(services)
}
