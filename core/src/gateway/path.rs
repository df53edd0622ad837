//! Which request is which: the Kubernetes API paths a gateway guards, svclab's own API under
//! the prefix, and everything else (passed through).

use super::config::{GatewayConfig, Guard};

/// What a request is, from its method and path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// Not guarded.
    Pass,
    /// A create or update of a guarded object: judge the body.
    Admission {
        kind: &'static str,
        operation: &'static str,
        subresource: &'static str,
        namespace: String,
    },
    /// A PATCH of a guarded object (a partial body).
    Patch { kind: &'static str, name: String },
    /// svclab's API under the prefix.
    Api(ApiCall),
}

/// A call of svclab's API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ApiCall {
    Check,
    Render,
    Trace,
    NotFound,
    MethodNotAllowed,
}

/// Classifies `method path` (the path may carry a query string).
pub(crate) fn classify(config: &GatewayConfig, method: &str, path: &str) -> Target {
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    if !config.prefix.is_empty()
        && let Some(rest) = path.strip_prefix(config.prefix.as_str())
        && (rest.is_empty() || rest.starts_with('/'))
    {
        if method != "POST" {
            return Target::Api(ApiCall::MethodNotAllowed);
        }
        return Target::Api(match rest {
            "/check" => ApiCall::Check,
            "/render" => ApiCall::Render,
            "/trace" => ApiCall::Trace,
            _ => ApiCall::NotFound,
        });
    }
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    // `/api/v1/namespaces/{ns}/services[/{name}[/status]]` and
    // `/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices[/{name}]`: the paths of
    // `apiserver/pkg/endpoints/installer.go` for namespaced resources.
    let (kind, rest) = match segments.as_slice() {
        ["", "api", "v1", "namespaces", namespace, "services", rest @ ..] => {
            (("Service", *namespace), rest)
        }
        [
            "",
            "apis",
            "discovery.k8s.io",
            "v1",
            "namespaces",
            namespace,
            "endpointslices",
            rest @ ..,
        ] => (("EndpointSlice", *namespace), rest),
        _ => return Target::Pass,
    };
    let ((kind, namespace), (name, subresource)) = match rest {
        [] => (kind, ("", "")),
        [name] => (kind, (*name, "")),
        [name, "status"] if kind.0 == "Service" => (kind, (*name, "status")),
        _ => return Target::Pass,
    };
    let guard = match (kind, subresource) {
        ("Service", "") => Guard::Services,
        ("Service", _) => Guard::ServicesStatus,
        _ => Guard::EndpointSlices,
    };
    if !config.guard.contains(&guard) || namespace.is_empty() {
        return Target::Pass;
    }
    let subresource = if subresource.is_empty() { "" } else { "status" };
    match (method, name.is_empty()) {
        ("POST", true) if subresource.is_empty() => Target::Admission {
            kind,
            operation: "CREATE",
            subresource,
            namespace: namespace.to_owned(),
        },
        ("PUT", false) => Target::Admission {
            kind,
            operation: "UPDATE",
            subresource,
            namespace: namespace.to_owned(),
        },
        ("PATCH", false) => Target::Patch {
            kind,
            name: if subresource.is_empty() { name.to_owned() } else { format!("{name}/status") },
        },
        _ => Target::Pass,
    }
}
