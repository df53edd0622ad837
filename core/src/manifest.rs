//! Turns scenario text (multi-document YAML or JSON, `List`s, several files) into typed objects
//! with field positions, plus diagnostics for everything that could not be read.

mod decode;

use crate::diagnostic::{Diagnostic, ObjectRef, Severity};
use crate::model::{
    ClusterProfile, EndpointSlice, Endpoints, KubeProxyConfiguration, Node as KubeNode, Positions,
    Service, ServiceCidr,
};
use crate::source::{Pos, Source};
use crate::yaml::{self, Node, Value};

/// One named input text (a file, or `-` for standard input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// Name shown in diagnostics.
    pub name: String,
    /// The text.
    pub text: String,
}

impl Input {
    /// An input with a name and text.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        Input { name: name.into(), text: text.into() }
    }
}

/// An object with the positions of its fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Located<T> {
    /// The decoded object.
    pub value: T,
    /// `apiVersion` as written.
    pub api_version: String,
    /// Where its fields are.
    pub positions: Positions,
}

/// One recognised object of a scenario, in stream order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[allow(clippy::large_enum_variant, reason = "objects are built and moved once, in stream order")]
pub enum Object {
    /// `v1 Service`.
    Service(Located<Service>),
    /// `discovery.k8s.io/v1 EndpointSlice`.
    EndpointSlice(Located<EndpointSlice>),
    /// `v1 Endpoints`.
    Endpoints(Located<Endpoints>),
    /// `v1 Node`.
    Node(Located<KubeNode>),
    /// `networking.k8s.io/v1 ServiceCIDR`.
    ServiceCidr(Located<ServiceCidr>),
    /// `kubeproxy.config.k8s.io/v1alpha1 KubeProxyConfiguration`.
    KubeProxyConfiguration(Located<KubeProxyConfiguration>),
    /// `svclab.dev/v1alpha1 ClusterProfile`.
    ClusterProfile(Located<ClusterProfile>),
    /// `svclab.dev/v1alpha1 ServicePolicy` (its settings stay in the positioned tree).
    ServicePolicy(Located<crate::policy::ServicePolicy>),
    /// A plain `iptables-save` dump pasted as a scenario document.
    IptablesSave {
        /// The dump text.
        text: String,
        /// Where it starts.
        source: Source,
    },
}

/// Everything read from the inputs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scenario {
    /// Recognised objects in stream order.
    pub objects: Vec<Object>,
    /// Syntax errors, decode errors, unknown kinds and fields.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses every input in order.
pub fn parse(inputs: &[Input]) -> Scenario {
    let mut scenario = Scenario::default();
    for input in inputs {
        parse_input(input, &mut scenario);
    }
    scenario
}

fn looks_like_iptables_save(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("# ") && *l != "#")
        .is_some_and(|l| {
            l.starts_with("*filter")
                || l.starts_with("*nat")
                || l.starts_with("*mangle")
                || l.starts_with("*raw")
        })
}

fn parse_input(input: &Input, scenario: &mut Scenario) {
    if looks_like_iptables_save(&input.text) {
        scenario.objects.push(Object::IptablesSave {
            text: input.text.clone(),
            source: Source { file: input.name.clone(), document: 0, line: 1, column: 1 },
        });
        return;
    }
    for doc in yaml::parse_stream(&input.text) {
        let source = |pos: Pos| Source {
            file: input.name.clone(),
            document: doc.index,
            line: pos.line,
            column: pos.column,
        };
        match doc.root {
            Err(err) => scenario.diagnostics.push(Diagnostic {
                severity: Severity::Error,
                object: None,
                field: String::new(),
                reason: "InvalidSyntax".to_owned(),
                message: format!(
                    "error converting YAML to JSON: yaml: line {}: {}",
                    err.pos.line, err.message
                ),
                source: Some(source(err.pos)),
            }),
            Ok(None) => {}
            Ok(Some(root)) => {
                if looks_like_iptables_save(&doc.text) {
                    scenario.objects.push(Object::IptablesSave {
                        text: doc.text.clone(),
                        source: source(Pos { line: doc.first_line, column: 1 }),
                    });
                    continue;
                }
                read_object(root, &input.name, doc.index, scenario, 0);
            }
        }
    }
}

/// Maximum nesting of `List` items inside `List`s.
const MAX_LIST_DEPTH: usize = 8;

fn read_object(root: Node, file: &str, document: usize, scenario: &mut Scenario, depth: usize) {
    let source =
        |pos: Pos| Source { file: file.to_owned(), document, line: pos.line, column: pos.column };
    let Value::Map(_) = root.value else {
        scenario.diagnostics.push(Diagnostic {
            severity: Severity::Error,
            object: None,
            field: String::new(),
            reason: "InvalidObject".to_owned(),
            message: format!(
                "error unmarshaling JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                root.json_type()
            ),
            source: Some(source(root.pos)),
        });
        return;
    };
    let api_version = root.get("apiVersion").and_then(Node::as_str).unwrap_or("").to_owned();
    let kind = root.get("kind").and_then(Node::as_str).unwrap_or("").to_owned();
    if api_version.is_empty() || kind.is_empty() {
        let mut missing = Vec::new();
        if api_version.is_empty() {
            missing.push("apiVersion not set");
        }
        if kind.is_empty() {
            missing.push("kind not set");
        }
        scenario.diagnostics.push(Diagnostic {
            severity: Severity::Error,
            object: None,
            field: String::new(),
            reason: "InvalidObject".to_owned(),
            message: format!("error validating data: [{}]", missing.join(", ")),
            source: Some(source(root.pos)),
        });
        return;
    }
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    if kind == "List" || (kind.ends_with("List") && root.get("items").is_some()) {
        if depth >= MAX_LIST_DEPTH {
            return;
        }
        let items = match root.value {
            Value::Map(entries) => {
                entries.into_iter().rev().find(|e| e.key == "items").map(|e| e.value)
            }
            _ => None,
        };
        if let Some(Node { value: Value::Seq(items), .. }) = items {
            for item in items {
                read_object(item, file, document, scenario, depth + 1);
            }
        }
        return;
    }
    let mut ctx = decode::Ctx::default();
    let object_pos = root.pos;
    let root = std::sync::Arc::new(root);
    let positions = Positions {
        object: object_pos,
        document,
        file: file.to_owned(),
        root: Some(std::sync::Arc::clone(&root)),
    };
    let root: &Node = &root;
    let object_ref = |meta: &crate::model::ObjectMeta| ObjectRef {
        kind: kind.clone(),
        namespace: meta.namespace.clone(),
        name: meta.name.clone(),
    };
    let (object, object_ref): (Object, ObjectRef) = match (group, kind.as_str()) {
        ("", "Service") => {
            let value = decode::service(&mut ctx, root);
            let r = object_ref(&value.metadata);
            (Object::Service(Located { value, api_version: api_version.clone(), positions }), r)
        }
        ("discovery.k8s.io", "EndpointSlice") => {
            let value = decode::endpoint_slice(&mut ctx, root);
            let r = object_ref(&value.metadata);
            (
                Object::EndpointSlice(Located {
                    value,
                    api_version: api_version.clone(),
                    positions,
                }),
                r,
            )
        }
        ("", "Endpoints") => {
            let value = decode::endpoints(&mut ctx, root);
            let r = object_ref(&value.metadata);
            (Object::Endpoints(Located { value, api_version: api_version.clone(), positions }), r)
        }
        ("", "Node") => {
            let value = decode::node(&mut ctx, root);
            let r = object_ref(&value.metadata);
            (Object::Node(Located { value, api_version: api_version.clone(), positions }), r)
        }
        ("networking.k8s.io", "ServiceCIDR") => {
            let value = decode::service_cidr(&mut ctx, root);
            let r = object_ref(&value.metadata);
            (Object::ServiceCidr(Located { value, api_version: api_version.clone(), positions }), r)
        }
        ("kubeproxy.config.k8s.io", "KubeProxyConfiguration") => {
            let value = decode::kube_proxy_configuration(&mut ctx, root);
            let r = ObjectRef { kind: kind.clone(), ..ObjectRef::default() };
            (
                Object::KubeProxyConfiguration(Located {
                    value,
                    api_version: api_version.clone(),
                    positions,
                }),
                r,
            )
        }
        ("svclab.dev", "ClusterProfile") => {
            let value = decode::cluster_profile(&mut ctx, root);
            let r = ObjectRef { kind: kind.clone(), ..ObjectRef::default() };
            (
                Object::ClusterProfile(Located {
                    value,
                    api_version: api_version.clone(),
                    positions,
                }),
                r,
            )
        }
        ("svclab.dev", "ServicePolicy") => {
            let metadata = decode::service_policy(&mut ctx, root);
            let r = object_ref(&metadata);
            (
                Object::ServicePolicy(Located {
                    value: crate::policy::ServicePolicy { metadata },
                    api_version: api_version.clone(),
                    positions,
                }),
                r,
            )
        }
        _ => {
            let name = root
                .get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(Node::as_str)
                .unwrap_or("")
                .to_owned();
            let namespace = root
                .get("metadata")
                .and_then(|m| m.get("namespace"))
                .and_then(Node::as_str)
                .unwrap_or("")
                .to_owned();
            scenario.diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                object: Some(ObjectRef { kind: kind.clone(), namespace, name }),
                field: String::new(),
                reason: "UnknownKind".to_owned(),
                message: format!(
                    "svclab does not model {api_version} {kind}; the object is skipped"
                ),
                source: Some(source(root.pos)),
            });
            return;
        }
    };
    for unknown in &ctx.unknown_fields {
        scenario.diagnostics.push(Diagnostic {
            severity: Severity::Warning,
            object: Some(object_ref.clone()),
            field: unknown.path.clone(),
            reason: "UnknownField".to_owned(),
            message: format!("unknown field \"{}\"", unknown.path),
            source: Some(source(unknown.pos)),
        });
    }
    if let Some(first) = ctx.type_errors.first() {
        // Go's decoder reports the first type error; the object is rejected as a whole.
        let handled_as = if object_ref.kind == "Service"
            || object_ref.kind == "Endpoints"
            || object_ref.kind == "Node"
        {
            format!("{kind} in version \"v1\" cannot be handled as a {kind}")
        } else {
            let version = api_version.rsplit('/').next().unwrap_or("");
            format!("{kind} in version \"{version}\" cannot be handled as a {kind}")
        };
        scenario.diagnostics.push(Diagnostic {
            severity: Severity::Error,
            object: Some(object_ref),
            field: first.path.clone(),
            reason: "FieldValueTypeInvalid".to_owned(),
            message: format!("{handled_as}: {}", first.message),
            source: Some(source(first.pos)),
        });
        return;
    }
    scenario.objects.push(object);
}

/// A ClusterProfile from a positioned node (a whole document or its bare fields, as the
/// admission hosts and Kubewarden's settings carry them), with decode errors as diagnostics.
pub(crate) fn cluster_profile_from(
    root: Node,
    file: &str,
    document: usize,
    diags: &mut Vec<Diagnostic>,
) -> Option<Located<ClusterProfile>> {
    let mut ctx = decode::Ctx::default();
    let value = decode::cluster_profile(&mut ctx, &root);
    let source =
        |pos: Pos| Source { file: file.to_owned(), document, line: pos.line, column: pos.column };
    let object = ObjectRef { kind: "ClusterProfile".into(), ..ObjectRef::default() };
    for unknown in &ctx.unknown_fields {
        diags.push(Diagnostic {
            severity: Severity::Error,
            object: Some(object.clone()),
            field: unknown.path.clone(),
            reason: "UnknownField".to_owned(),
            message: format!("unknown field \"{}\"", unknown.path),
            source: Some(source(unknown.pos)),
        });
    }
    if let Some(first) = ctx.type_errors.first() {
        diags.push(Diagnostic {
            severity: Severity::Error,
            object: Some(object),
            field: first.path.clone(),
            reason: "FieldValueTypeInvalid".to_owned(),
            message: first.message.clone(),
            source: Some(source(first.pos)),
        });
        return None;
    }
    let positions = Positions {
        object: root.pos,
        document,
        file: file.to_owned(),
        root: Some(std::sync::Arc::new(root)),
    };
    Some(Located { value, api_version: "svclab.dev/v1alpha1".into(), positions })
}

#[cfg(test)]
mod tests;
