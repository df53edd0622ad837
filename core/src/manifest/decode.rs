//! Decodes positioned YAML nodes into the typed model, recording Go-decoder type errors and
//! unknown fields instead of stopping. [`object`] is the one entrance: it dispatches on the
//! group and kind and hands back the object with what the decoder noticed.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::Object;
use crate::diagnostic::ObjectRef;
use crate::model::{
    ClientIpConfig, ClusterProfile, Endpoint, EndpointAddress, EndpointHints, EndpointPort,
    EndpointSlice, EndpointSubset, Endpoints, IntOrString, KubeProxyChecked,
    KubeProxyConfiguration, LoadBalancerIngress, Located, Node as KubeNode, ObjectMeta, Positions,
    Service, ServiceCidr, ServicePolicy, ServicePort, ServiceSpec, ServiceStatus,
    SessionAffinityConfig, StringMap,
};
use crate::source::Pos;
use crate::yaml::{Entry, Node, Value, same_bytes};

/// A value of the wrong JSON type, as Go's `encoding/json` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TypeError {
    /// Field path with indices, for positions (`spec.ports[0].port`).
    pub(crate) path: String,
    pub(crate) pos: Pos,
    /// `json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32`.
    pub(crate) message: String,
}

/// A field the API type does not have, in every release or in some.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnknownField {
    pub(crate) path: String,
    pub(crate) pos: Pos,
    /// The releases whose API type has the field (`None`: none has it).
    pub(crate) known_in: Option<Releases>,
}

/// Minor releases `since..=until` (`until: None`: still in the newest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Releases {
    pub(crate) since: u32,
    pub(crate) until: Option<u32>,
}

impl Releases {
    pub(crate) fn holds(self, minor: u32) -> bool {
        minor >= self.since && self.until.is_none_or(|u| minor <= u)
    }
}

/// A field of an API type svclab decodes that only some releases have: in the others the
/// apiserver's strict decoder drops it with an `unknown field` warning. Read in the Go types of
/// `k8s.io/api` (`core/v1`, `discovery/v1`) and `k8s.io/apimachinery` (`pkg/apis/meta/v1`) at
/// v0.24.17 to v0.37.2, the staging modules of the releases the apiserver oracle builds.
struct ReleaseField {
    /// The Go type as decode errors name it (`v1.ServiceSpec`).
    go_type: &'static str,
    /// Its JSON name.
    name: &'static str,
    releases: Releases,
}

const RELEASE_FIELDS: &[ReleaseField] = &[
    // `ZZZ_DeprecatedClusterName string json:"clusterName"` in apimachinery v0.24.17; only a
    // comment from v0.25.16. svclab ignores its value.
    ReleaseField {
        go_type: "v1.ObjectMeta",
        name: "clusterName",
        releases: Releases { since: 24, until: Some(24) },
    },
    // `IPMode *LoadBalancerIPMode json:"ipMode"` from k8s.io/api v0.29.15 (KEP-1860).
    ReleaseField {
        go_type: "v1.LoadBalancerIngress",
        name: "ipMode",
        releases: Releases { since: 29, until: None },
    },
    // `TrafficDistribution *string json:"trafficDistribution"` from v0.30.14 (KEP-4444).
    ReleaseField {
        go_type: "v1.ServiceSpec",
        name: "trafficDistribution",
        releases: Releases { since: 30, until: None },
    },
    // `ForNodes []ForNode json:"forNodes"` from v0.33.13 (KEP-3015).
    ReleaseField {
        go_type: "v1.EndpointHints",
        name: "forNodes",
        releases: Releases { since: 33, until: None },
    },
];

/// The releases that have `name` in `go_type`, when not all of them do.
fn release_field(go_type: &str, name: &[u8]) -> Option<Releases> {
    RELEASE_FIELDS
        .iter()
        .find(|f| f.go_type == go_type && same_bytes(f.name.as_bytes(), name))
        .map(|f| f.releases)
}

#[derive(Default)]
struct Ctx {
    type_errors: Vec<TypeError>,
    unknown_fields: Vec<UnknownField>,
}

/// Depth of the deepest field path svclab decodes (with room to spare).
const MAX_DEPTH: usize = 12;

#[derive(Clone, Copy)]
enum Seg {
    Field(&'static str),
    Index(usize),
}

/// Where a field lives. Kept as a fixed array of segments so decoding allocates nothing; the
/// indexed path (for positions) and Go's view (struct name, JSON path) are built on error only.
#[derive(Clone, Copy)]
struct At {
    segs: [Seg; MAX_DEPTH],
    len: usize,
    strukt: &'static str,
}

impl At {
    fn root(strukt: &'static str) -> Self {
        At { segs: [Seg::Index(0); MAX_DEPTH], len: 0, strukt }
    }

    fn push(&self, seg: Seg) -> At {
        let mut next = *self;
        if next.len < MAX_DEPTH {
            next.segs[next.len] = seg;
            next.len += 1;
        }
        next
    }

    fn field(&self, name: &'static str) -> At {
        self.push(Seg::Field(name))
    }

    fn index(&self, i: usize) -> At {
        self.push(Seg::Index(i))
    }

    fn within(&self, strukt: &'static str) -> At {
        At { strukt, ..*self }
    }

    /// `spec.ports[0].port`.
    fn path(&self) -> String {
        let mut out = String::new();
        for seg in &self.segs[..self.len] {
            match seg {
                Seg::Field(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                Seg::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    /// `spec.ports.port`, the path Go's `UnmarshalTypeError.Field` reports.
    fn json(&self) -> String {
        let names: Vec<&str> = self.segs[..self.len]
            .iter()
            .filter_map(|s| match s {
                Seg::Field(name) => Some(*name),
                Seg::Index(_) => None,
            })
            .collect();
        names.join(".")
    }
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() { name.to_owned() } else { format!("{parent}.{name}") }
}

impl Ctx {
    fn type_error(&mut self, at: &At, node: &Node, go_type: &str) {
        self.type_error_at(at.path(), at, node, go_type);
    }

    fn type_error_at(&mut self, path: String, at: &At, node: &Node, go_type: &str) {
        let found = match &node.value {
            Value::Int(i) => format!("number {i}"),
            Value::Float(f) => format!("number {f}"),
            _ => node.json_type().to_owned(),
        };
        // Go reports a plain "number" when the target is not numeric.
        let found = if matches!(node.value, Value::Int(_) | Value::Float(_))
            && !go_type.starts_with("int")
            && !go_type.starts_with("uint")
        {
            "number".to_owned()
        } else {
            found
        };
        let message = format!(
            "json: cannot unmarshal {found} into Go struct field {}.{} of type {go_type}",
            at.strukt,
            at.json()
        );
        self.type_errors.push(TypeError { path, pos: node.pos, message });
    }

    fn map<'n>(
        &mut self,
        node: Option<&'n Node>,
        at: &At,
        go_type: &str,
        known: &[&str],
    ) -> Option<&'n [Entry]> {
        let node = node?;
        match &node.value {
            Value::Null => None,
            Value::Map(entries) => {
                for e in entries {
                    // Lengths settle most candidates, and `same_bytes` compares them first.
                    let key = e.key.as_bytes();
                    let is_known = known.iter().any(|k| same_bytes(k.as_bytes(), key));
                    let known_in = if is_known {
                        match release_field(go_type, key) {
                            Some(releases) => Some(releases),
                            None => continue,
                        }
                    } else {
                        None
                    };
                    let path = join(&at.path(), &e.key);
                    self.unknown_fields.push(UnknownField { path, pos: e.key_pos, known_in });
                }
                Some(entries)
            }
            _ => {
                self.type_error(at, node, go_type);
                None
            }
        }
    }

    fn seq<'n>(&mut self, node: Option<&'n Node>, at: &At, go_type: &str) -> &'n [Node] {
        let Some(node) = node else { return &[] };
        match &node.value {
            Value::Null => &[],
            Value::Seq(items) => items,
            _ => {
                self.type_error(at, node, go_type);
                &[]
            }
        }
    }

    fn string(&mut self, node: Option<&Node>, at: &At) -> String {
        self.opt_string(node, at).unwrap_or_default()
    }

    fn opt_string(&mut self, node: Option<&Node>, at: &At) -> Option<String> {
        let node = node?;
        match &node.value {
            Value::Null => None,
            Value::Str(s) => Some(s.clone()),
            _ => {
                self.type_error(at, node, "string");
                None
            }
        }
    }

    fn int(&mut self, node: Option<&Node>, at: &At, go_type: &str) -> Option<i64> {
        let node = node?;
        let (min, max) = match go_type {
            "int32" => (i64::from(i32::MIN), i64::from(i32::MAX)),
            "uint64" => (0, i64::MAX),
            _ => (i64::MIN, i64::MAX),
        };
        match &node.value {
            Value::Null => None,
            Value::Int(i) if (min..=max).contains(i) => Some(*i),
            _ => {
                self.type_error(at, node, go_type);
                None
            }
        }
    }

    fn int32(&mut self, node: Option<&Node>, at: &At) -> Option<i32> {
        self.int(node, at, "int32").and_then(|i| i32::try_from(i).ok())
    }

    fn opt_bool(&mut self, node: Option<&Node>, at: &At) -> Option<bool> {
        let node = node?;
        match &node.value {
            Value::Null => None,
            Value::Bool(b) => Some(*b),
            _ => {
                self.type_error(at, node, "bool");
                None
            }
        }
    }

    fn strings(&mut self, node: Option<&Node>, at: &At) -> Vec<String> {
        let items = self.seq(node, at, "[]string");
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at_i = at.index(i);
            match &item.value {
                Value::Str(s) => out.push(s.clone()),
                Value::Null => out.push(String::new()),
                _ => self.type_error(&at_i, item, "string"),
            }
        }
        out
    }

    fn string_map(&mut self, node: Option<&Node>, at: &At) -> Option<StringMap> {
        let node = node?;
        let entries = match &node.value {
            Value::Null => return None,
            Value::Map(entries) => entries,
            _ => {
                self.type_error(at, node, "map[string]string");
                return None;
            }
        };
        let mut out = StringMap::new();
        for e in entries {
            match &e.value.value {
                Value::Str(s) => {
                    out.insert(e.key.to_string(), s.clone());
                }
                Value::Null => {
                    out.insert(e.key.to_string(), String::new());
                }
                _ => {
                    self.type_error_at(format!("{}[{}]", at.path(), e.key), at, &e.value, "string")
                }
            }
        }
        out.shrink_to_fit();
        Some(out)
    }

    fn bool_map(&mut self, node: Option<&Node>, at: &At) -> BTreeMap<String, bool> {
        let mut out = BTreeMap::new();
        let Some(node) = node else { return out };
        let entries = match &node.value {
            Value::Map(entries) => entries,
            Value::Null => return out,
            _ => {
                self.type_error(at, node, "map[string]bool");
                return out;
            }
        };
        for e in entries {
            match &e.value.value {
                Value::Bool(b) => {
                    out.insert(e.key.to_string(), *b);
                }
                _ => self.type_error_at(format!("{}[{}]", at.path(), e.key), at, &e.value, "bool"),
            }
        }
        out
    }
}

fn get<'n>(entries: Option<&'n [Entry]>, key: &str) -> Option<&'n Node> {
    entries?.iter().rev().find(|e| e.key == key).map(|e| &e.value)
}

const META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "labels",
    "annotations",
    "resourceVersion",
    "generation",
    "uid",
    "finalizers",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "ownerReferences",
    "managedFields",
    "selfLink",
    "clusterName",
];

fn metadata(ctx: &mut Ctx, root: &Node, top: &At) -> ObjectMeta {
    let at = top.field("metadata").within("ObjectMeta");
    let m = ctx.map(root.get("metadata"), &top.field("metadata"), "v1.ObjectMeta", META_FIELDS);
    owner_references(ctx, get(m, "ownerReferences"), &at.field("ownerReferences"));
    ObjectMeta {
        name: ctx.string(get(m, "name"), &at.field("name")),
        generate_name: ctx.string(get(m, "generateName"), &at.field("generateName")),
        namespace: ctx.string(get(m, "namespace"), &at.field("namespace")),
        labels: ctx.string_map(get(m, "labels"), &at.field("labels")).unwrap_or_default(),
        annotations: ctx
            .string_map(get(m, "annotations"), &at.field("annotations"))
            .unwrap_or_default(),
        resource_version: ctx.string(get(m, "resourceVersion"), &at.field("resourceVersion")),
        generation: ctx.int(get(m, "generation"), &at.field("generation"), "int64").unwrap_or(0),
        uid: ctx.string(get(m, "uid"), &at.field("uid")),
        finalizers: ctx.strings(get(m, "finalizers"), &at.field("finalizers")),
        cluster_name: ctx.string(get(m, "clusterName"), &at.field("clusterName")),
    }
}

/// `metadata.ownerReferences` (`[]v1.OwnerReference`): read for their fields' names and types
/// only, as the apiserver's decoder checks them.
fn owner_references(ctx: &mut Ctx, node: Option<&Node>, at: &At) {
    for (i, n) in ctx.seq(node, at, "[]v1.OwnerReference").iter().enumerate() {
        let at = at.index(i).within("OwnerReference");
        let m = ctx.map(
            Some(n),
            &at,
            "v1.OwnerReference",
            &["apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"],
        );
        for key in ["apiVersion", "kind", "name", "uid"] {
            ctx.string(get(m, key), &at.field(key));
        }
        for key in ["controller", "blockOwnerDeletion"] {
            ctx.opt_bool(get(m, key), &at.field(key));
        }
    }
}

/// A `targetRef` (`v1.ObjectReference`): read for its fields' names and types only.
fn object_reference(ctx: &mut Ctx, node: Option<&Node>, at: &At) {
    const FIELDS: [&str; 7] =
        ["kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"];
    let m = ctx.map(node, at, "v1.ObjectReference", &FIELDS);
    let at = at.within("ObjectReference");
    for key in FIELDS {
        ctx.string(get(m, key), &at.field(key));
    }
}

/// A decoded object of a kind svclab models, with what the decoder noticed on the way.
pub(crate) struct Decoded {
    /// The typed object, unless a type error rejected it.
    pub(crate) object: Result<Typed, TypeError>,
    /// Who it is, for diagnostics.
    pub(crate) object_ref: ObjectRef,
    /// Fields the API type does not have (warnings; the object is kept).
    pub(crate) unknown_fields: Vec<UnknownField>,
}

/// A typed object as decoding hands it on: complete, but not yet placed in its input;
/// [`Typed::located`] joins it to the positions of its fields.
#[allow(
    clippy::large_enum_variant,
    reason = "a value in passing: `located` moves it into its boxed object straight away"
)]
pub(crate) enum Typed {
    Service(Service),
    EndpointSlice(EndpointSlice),
    Endpoints(Endpoints),
    Node(KubeNode),
    ServiceCidr(ServiceCidr),
    KubeProxyConfiguration(KubeProxyConfiguration),
    ClusterProfile(ClusterProfile),
    ServicePolicy(ServicePolicy),
}

impl Typed {
    /// Whether the object's positions must keep the values of its tree, not only its keys: a
    /// ServicePolicy's rules read their settings from the positioned tree.
    pub(crate) fn reads_values(&self) -> bool {
        matches!(self, Typed::ServicePolicy(_))
    }

    /// The scenario object: this value, `apiVersion` as written, where its fields are.
    pub(crate) fn located(self, api_version: String, positions: Positions) -> Object {
        fn at<T>(value: T, api_version: String, positions: Positions) -> Arc<Located<T>> {
            Arc::new(Located { value, api_version, positions })
        }
        match self {
            Typed::Service(v) => Object::Service(at(v, api_version, positions)),
            Typed::EndpointSlice(v) => Object::EndpointSlice(at(v, api_version, positions)),
            Typed::Endpoints(v) => Object::Endpoints(at(v, api_version, positions)),
            Typed::Node(v) => Object::Node(at(v, api_version, positions)),
            Typed::ServiceCidr(v) => Object::ServiceCidr(at(v, api_version, positions)),
            Typed::KubeProxyConfiguration(v) => {
                Object::KubeProxyConfiguration(at(v, api_version, positions))
            }
            Typed::ClusterProfile(v) => Object::ClusterProfile(at(v, api_version, positions)),
            Typed::ServicePolicy(v) => Object::ServicePolicy(at(v, api_version, positions)),
        }
    }
}

/// The one entrance of decoding: the typed object of `kind` in `api_version`, or `None` when
/// svclab does not model that kind. Go's decoder stops at the first type error and rejects the
/// whole object with it (`Service in version "v1" cannot be handled as a Service: json: ...`).
pub(crate) fn object(root: &Node, api_version: &str, kind: &str) -> Option<Decoded> {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let mut ctx = Ctx::default();
    let meta_ref = |meta: &ObjectMeta| ObjectRef::new(kind, &meta.namespace, &meta.name);
    let (object, object_ref) = match (group, kind) {
        ("", "Service") => {
            let value = service(&mut ctx, root);
            let r = meta_ref(&value.metadata);
            (Typed::Service(value), r)
        }
        ("discovery.k8s.io", "EndpointSlice") => {
            let value = endpoint_slice(&mut ctx, root);
            let r = meta_ref(&value.metadata);
            (Typed::EndpointSlice(value), r)
        }
        ("", "Endpoints") => {
            let value = endpoints(&mut ctx, root);
            let r = meta_ref(&value.metadata);
            (Typed::Endpoints(value), r)
        }
        ("", "Node") => {
            let value = node(&mut ctx, root);
            let r = meta_ref(&value.metadata);
            (Typed::Node(value), r)
        }
        ("networking.k8s.io", "ServiceCIDR") => {
            let value = service_cidr(&mut ctx, root);
            let r = meta_ref(&value.metadata);
            (Typed::ServiceCidr(value), r)
        }
        ("kubeproxy.config.k8s.io", "KubeProxyConfiguration") => (
            Typed::KubeProxyConfiguration(kube_proxy_configuration(&mut ctx, root)),
            ObjectRef::kind(kind),
        ),
        ("svclab.dev", "ClusterProfile") => {
            (Typed::ClusterProfile(cluster_profile(&mut ctx, root)), ObjectRef::kind(kind))
        }
        // Only `metadata` is decoded here: the policy layer decodes `spec` strictly from the
        // positioned tree (unknown keys there are errors, not warnings).
        ("svclab.dev", "ServicePolicy") => {
            let value =
                ServicePolicy { metadata: metadata(&mut ctx, root, &At::root("ServicePolicy")) };
            let r = meta_ref(&value.metadata);
            (Typed::ServicePolicy(value), r)
        }
        _ => return None,
    };
    let Ctx { mut type_errors, unknown_fields } = ctx;
    // Go's decoder keeps the first type error it meets, in document order.
    type_errors.sort_by_key(|e| (e.pos.line, e.pos.column));
    let object = match type_errors.drain(..).next() {
        None => Ok(object),
        Some(first) => {
            // The core group is served as "v1"; other groups by the version they were sent in.
            let version =
                if group.is_empty() { "v1" } else { api_version.rsplit('/').next().unwrap_or("") };
            let message = format!(
                "{kind} in version \"{version}\" cannot be handled as a {kind}: {}",
                first.message
            );
            Err(TypeError { message, ..first })
        }
    };
    Some(Decoded { object, object_ref, unknown_fields })
}

const TOP_FIELDS: &[&str] = &["apiVersion", "kind", "metadata", "spec", "status"];

fn service(ctx: &mut Ctx, root: &Node) -> Service {
    let top = At::root("Service");
    ctx.map(Some(root), &top, "v1.Service", TOP_FIELDS);
    let metadata = metadata(ctx, root, &top);
    let spec_at = top.field("spec").within("ServiceSpec");
    let s = ctx.map(
        root.get("spec"),
        &top.field("spec"),
        "v1.ServiceSpec",
        &[
            "type",
            "ports",
            "selector",
            "clusterIP",
            "clusterIPs",
            "ipFamilies",
            "ipFamilyPolicy",
            "externalIPs",
            "loadBalancerIP",
            "loadBalancerSourceRanges",
            "externalName",
            "externalTrafficPolicy",
            "internalTrafficPolicy",
            "healthCheckNodePort",
            "publishNotReadyAddresses",
            "sessionAffinity",
            "sessionAffinityConfig",
            "allocateLoadBalancerNodePorts",
            "loadBalancerClass",
            "trafficDistribution",
        ],
    );
    let f = |name: &'static str| spec_at.field(name);
    let port_nodes = ctx.seq(get(s, "ports"), &f("ports"), "[]v1.ServicePort");
    let mut ports = Vec::with_capacity(port_nodes.len());
    for (i, p) in port_nodes.iter().enumerate() {
        let at = f("ports").index(i).within("ServicePort");
        let pm = ctx.map(
            Some(p),
            &at,
            "v1.ServicePort",
            &["name", "protocol", "appProtocol", "port", "targetPort", "nodePort"],
        );
        let target_port = match get(pm, "targetPort") {
            None => IntOrString::Int(0),
            Some(n) => match &n.value {
                Value::Null => IntOrString::Int(0),
                Value::Str(s) => IntOrString::String(s.clone()),
                _ => IntOrString::Int(ctx.int32(Some(n), &at.field("targetPort")).unwrap_or(0)),
            },
        };
        ports.push(ServicePort {
            name: ctx.string(get(pm, "name"), &at.field("name")),
            protocol: ctx.string(get(pm, "protocol"), &at.field("protocol")),
            app_protocol: ctx.opt_string(get(pm, "appProtocol"), &at.field("appProtocol")),
            port: ctx.int32(get(pm, "port"), &at.field("port")).unwrap_or(0),
            target_port,
            node_port: ctx.int32(get(pm, "nodePort"), &at.field("nodePort")).unwrap_or(0),
        });
    }
    let session_affinity_config = {
        let at = f("sessionAffinityConfig").within("SessionAffinityConfig");
        let node = get(s, "sessionAffinityConfig");
        let present = node.is_some_and(|n| n.value != Value::Null);
        let sm =
            ctx.map(node, &f("sessionAffinityConfig"), "v1.SessionAffinityConfig", &["clientIP"]);
        present.then(|| {
            let client = get(sm, "clientIP");
            let client_present = client.is_some_and(|n| n.value != Value::Null);
            let cm =
                ctx.map(client, &at.field("clientIP"), "v1.ClientIPConfig", &["timeoutSeconds"]);
            SessionAffinityConfig {
                client_ip: client_present.then(|| ClientIpConfig {
                    timeout_seconds: ctx.int32(
                        get(cm, "timeoutSeconds"),
                        &at.field("clientIP").within("ClientIPConfig").field("timeoutSeconds"),
                    ),
                }),
            }
        })
    };
    let spec = ServiceSpec {
        type_: ctx.string(get(s, "type"), &f("type")),
        ports,
        selector: ctx.string_map(get(s, "selector"), &f("selector")),
        cluster_ip: ctx.string(get(s, "clusterIP"), &f("clusterIP")),
        cluster_ips: ctx.strings(get(s, "clusterIPs"), &f("clusterIPs")),
        ip_families: ctx.strings(get(s, "ipFamilies"), &f("ipFamilies")),
        ip_family_policy: ctx.opt_string(get(s, "ipFamilyPolicy"), &f("ipFamilyPolicy")),
        external_ips: ctx.strings(get(s, "externalIPs"), &f("externalIPs")),
        load_balancer_ip: ctx.string(get(s, "loadBalancerIP"), &f("loadBalancerIP")),
        load_balancer_source_ranges: ctx
            .strings(get(s, "loadBalancerSourceRanges"), &f("loadBalancerSourceRanges")),
        external_name: ctx.string(get(s, "externalName"), &f("externalName")),
        external_traffic_policy: ctx
            .string(get(s, "externalTrafficPolicy"), &f("externalTrafficPolicy")),
        internal_traffic_policy: ctx
            .opt_string(get(s, "internalTrafficPolicy"), &f("internalTrafficPolicy")),
        health_check_node_port: ctx
            .int32(get(s, "healthCheckNodePort"), &f("healthCheckNodePort"))
            .unwrap_or(0),
        publish_not_ready_addresses: ctx
            .opt_bool(get(s, "publishNotReadyAddresses"), &f("publishNotReadyAddresses"))
            .unwrap_or(false),
        session_affinity: ctx.string(get(s, "sessionAffinity"), &f("sessionAffinity")),
        session_affinity_config,
        allocate_load_balancer_node_ports: ctx
            .opt_bool(get(s, "allocateLoadBalancerNodePorts"), &f("allocateLoadBalancerNodePorts")),
        load_balancer_class: ctx.opt_string(get(s, "loadBalancerClass"), &f("loadBalancerClass")),
        traffic_distribution: ctx
            .opt_string(get(s, "trafficDistribution"), &f("trafficDistribution")),
    };
    let status = {
        let at = top.field("status").within("ServiceStatus");
        let st = ctx.map(
            root.get("status"),
            &top.field("status"),
            "v1.ServiceStatus",
            &["loadBalancer", "conditions"],
        );
        conditions(ctx, get(st, "conditions"), &at.field("conditions"));
        let lb_at = at.field("loadBalancer").within("LoadBalancerStatus");
        let lb = ctx.map(
            get(st, "loadBalancer"),
            &at.field("loadBalancer"),
            "v1.LoadBalancerStatus",
            &["ingress"],
        );
        let mut ingress = Vec::new();
        for (i, n) in ctx
            .seq(get(lb, "ingress"), &lb_at.field("ingress"), "[]v1.LoadBalancerIngress")
            .iter()
            .enumerate()
        {
            let at = lb_at.field("ingress").index(i).within("LoadBalancerIngress");
            let im = ctx.map(
                Some(n),
                &at,
                "v1.LoadBalancerIngress",
                &["ip", "hostname", "ipMode", "ports"],
            );
            port_statuses(ctx, get(im, "ports"), &at.field("ports"));
            ingress.push(LoadBalancerIngress {
                ip: ctx.string(get(im, "ip"), &at.field("ip")),
                hostname: ctx.string(get(im, "hostname"), &at.field("hostname")),
                ip_mode: ctx.opt_string(get(im, "ipMode"), &at.field("ipMode")),
            });
        }
        ServiceStatus { load_balancer_ingress: ingress }
    };
    Service { metadata, spec, status }
}

/// `status.conditions` (`[]metav1.Condition`): read for their fields' names and types only.
fn conditions(ctx: &mut Ctx, node: Option<&Node>, at: &At) {
    for (i, n) in ctx.seq(node, at, "[]v1.Condition").iter().enumerate() {
        let at = at.index(i).within("Condition");
        let m = ctx.map(
            Some(n),
            &at,
            "v1.Condition",
            &["type", "status", "observedGeneration", "lastTransitionTime", "reason", "message"],
        );
        for key in ["type", "status", "lastTransitionTime", "reason", "message"] {
            ctx.string(get(m, key), &at.field(key));
        }
        ctx.int(get(m, "observedGeneration"), &at.field("observedGeneration"), "int64");
    }
}

/// A load-balancer ingress's `ports` (`[]v1.PortStatus`): read for names and types only.
fn port_statuses(ctx: &mut Ctx, node: Option<&Node>, at: &At) {
    for (i, n) in ctx.seq(node, at, "[]v1.PortStatus").iter().enumerate() {
        let at = at.index(i).within("PortStatus");
        let m = ctx.map(Some(n), &at, "v1.PortStatus", &["port", "protocol", "error"]);
        ctx.int32(get(m, "port"), &at.field("port"));
        ctx.string(get(m, "protocol"), &at.field("protocol"));
        ctx.opt_string(get(m, "error"), &at.field("error"));
    }
}

fn endpoint_ports(ctx: &mut Ctx, node: Option<&Node>, at: &At) -> Vec<EndpointPort> {
    let nodes = ctx.seq(node, at, "[]v1.EndpointPort");
    let mut out = Vec::with_capacity(nodes.len());
    for (i, p) in nodes.iter().enumerate() {
        let at = at.index(i).within("EndpointPort");
        let pm =
            ctx.map(Some(p), &at, "v1.EndpointPort", &["name", "protocol", "port", "appProtocol"]);
        out.push(EndpointPort {
            name: ctx.opt_string(get(pm, "name"), &at.field("name")),
            protocol: ctx.opt_string(get(pm, "protocol"), &at.field("protocol")),
            port: ctx.int32(get(pm, "port"), &at.field("port")),
            app_protocol: ctx.opt_string(get(pm, "appProtocol"), &at.field("appProtocol")),
        });
    }
    out
}

fn endpoint_slice(ctx: &mut Ctx, root: &Node) -> EndpointSlice {
    let top = At::root("EndpointSlice");
    ctx.map(
        Some(root),
        &top,
        "v1.EndpointSlice",
        &["apiVersion", "kind", "metadata", "addressType", "endpoints", "ports"],
    );
    let metadata = metadata(ctx, root, &top);
    let endpoint_nodes = ctx.seq(root.get("endpoints"), &top.field("endpoints"), "[]v1.Endpoint");
    let mut endpoints = Vec::with_capacity(endpoint_nodes.len());
    for (i, n) in endpoint_nodes.iter().enumerate() {
        let at = top.field("endpoints").index(i).within("Endpoint");
        let em = ctx.map(
            Some(n),
            &at,
            "v1.Endpoint",
            &[
                "addresses",
                "conditions",
                "hostname",
                "targetRef",
                "nodeName",
                "zone",
                "hints",
                "deprecatedTopology",
            ],
        );
        object_reference(ctx, get(em, "targetRef"), &at.field("targetRef"));
        let cat = at.field("conditions").within("EndpointConditions");
        let cm = ctx.map(
            get(em, "conditions"),
            &at.field("conditions"),
            "v1.EndpointConditions",
            &["ready", "serving", "terminating"],
        );
        let hints_node = get(em, "hints");
        let hat = at.field("hints").within("EndpointHints");
        let hm =
            ctx.map(hints_node, &at.field("hints"), "v1.EndpointHints", &["forZones", "forNodes"]);
        let hints = hints_node.filter(|n| n.value != Value::Null).map(|_| {
            // `[]v1.ForZone`, `[]v1.ForNode`: the Go type a wrong value is reported against.
            let mut names = |key: &'static str, strukt: &'static str, go_type| -> Vec<String> {
                let mut out = Vec::new();
                let items = ctx.seq(get(hm, key), &hat.field(key), go_type);
                for (k, z) in items.iter().enumerate() {
                    let zat = hat.field(key).index(k).within(strukt);
                    let zm = ctx.map(Some(z), &zat, strukt, &["name"]);
                    out.push(ctx.string(get(zm, "name"), &zat.field("name")));
                }
                out
            };
            EndpointHints {
                for_zones: names("forZones", "ForZone", "[]v1.ForZone"),
                for_nodes: names("forNodes", "ForNode", "[]v1.ForNode"),
            }
        });
        endpoints.push(Endpoint {
            addresses: ctx.strings(get(em, "addresses"), &at.field("addresses")),
            ready: ctx.opt_bool(get(cm, "ready"), &cat.field("ready")),
            serving: ctx.opt_bool(get(cm, "serving"), &cat.field("serving")),
            terminating: ctx.opt_bool(get(cm, "terminating"), &cat.field("terminating")),
            hostname: ctx.opt_string(get(em, "hostname"), &at.field("hostname")),
            node_name: ctx.opt_string(get(em, "nodeName"), &at.field("nodeName")),
            zone: ctx.opt_string(get(em, "zone"), &at.field("zone")),
            hints,
        });
    }
    EndpointSlice {
        metadata,
        address_type: ctx.string(root.get("addressType"), &top.field("addressType")),
        endpoints,
        ports: endpoint_ports(ctx, root.get("ports"), &top.field("ports")),
    }
}

fn endpoints(ctx: &mut Ctx, root: &Node) -> Endpoints {
    let top = At::root("Endpoints");
    ctx.map(Some(root), &top, "v1.Endpoints", &["apiVersion", "kind", "metadata", "subsets"]);
    let metadata = metadata(ctx, root, &top);
    let mut subsets = Vec::new();
    for (i, n) in ctx
        .seq(root.get("subsets"), &top.field("subsets"), "[]v1.EndpointSubset")
        .iter()
        .enumerate()
    {
        let at = top.field("subsets").index(i).within("EndpointSubset");
        let sm = ctx.map(
            Some(n),
            &at,
            "v1.EndpointSubset",
            &["addresses", "notReadyAddresses", "ports"],
        );
        let mut addresses = |key: &'static str| -> Vec<EndpointAddress> {
            let mut out = Vec::new();
            for (k, a) in
                ctx.seq(get(sm, key), &at.field(key), "[]v1.EndpointAddress").iter().enumerate()
            {
                let aat = at.field(key).index(k).within("EndpointAddress");
                let am = ctx.map(
                    Some(a),
                    &aat,
                    "v1.EndpointAddress",
                    &["ip", "hostname", "nodeName", "targetRef"],
                );
                object_reference(ctx, get(am, "targetRef"), &aat.field("targetRef"));
                out.push(EndpointAddress {
                    ip: ctx.string(get(am, "ip"), &aat.field("ip")),
                    hostname: ctx.string(get(am, "hostname"), &aat.field("hostname")),
                    node_name: ctx.opt_string(get(am, "nodeName"), &aat.field("nodeName")),
                });
            }
            out
        };
        let ready = addresses("addresses");
        let not_ready = addresses("notReadyAddresses");
        subsets.push(EndpointSubset {
            addresses: ready,
            not_ready_addresses: not_ready,
            ports: endpoint_ports(ctx, get(sm, "ports"), &at.field("ports")),
        });
    }
    Endpoints { metadata, subsets }
}

fn node(ctx: &mut Ctx, root: &Node) -> KubeNode {
    let top = At::root("Node");
    let metadata = metadata(ctx, root, &top);
    let spec_at = top.field("spec").within("NodeSpec");
    let spec = ctx.map(
        root.get("spec"),
        &top.field("spec"),
        "v1.NodeSpec",
        &["podCIDR", "podCIDRs", "providerID", "taints", "unschedulable"],
    );
    let mut pod_cidrs = ctx.strings(get(spec, "podCIDRs"), &spec_at.field("podCIDRs"));
    if pod_cidrs.is_empty() {
        let single = ctx.string(get(spec, "podCIDR"), &spec_at.field("podCIDR"));
        if !single.is_empty() {
            pod_cidrs.push(single);
        }
    }
    let status_at = top.field("status").within("NodeStatus");
    let status = root.get("status");
    let status_map = match status.map(|n| &n.value) {
        Some(Value::Map(entries)) => Some(entries.as_slice()),
        _ => None,
    };
    let mut addresses = Vec::new();
    for (i, a) in ctx
        .seq(get(status_map, "addresses"), &status_at.field("addresses"), "[]v1.NodeAddress")
        .iter()
        .enumerate()
    {
        let at = status_at.field("addresses").index(i).within("NodeAddress");
        let am = ctx.map(Some(a), &at, "v1.NodeAddress", &["type", "address"]);
        addresses.push((
            ctx.string(get(am, "type"), &at.field("type")),
            ctx.string(get(am, "address"), &at.field("address")),
        ));
    }
    // Nodes carry many fields svclab does not read; unknown-field warnings would only be noise.
    ctx.unknown_fields.retain(|u| !u.path.starts_with("spec.") && !u.path.starts_with("status"));
    KubeNode { metadata, pod_cidrs, addresses }
}

fn service_cidr(ctx: &mut Ctx, root: &Node) -> ServiceCidr {
    let top = At::root("ServiceCIDR");
    ctx.map(Some(root), &top, "v1.ServiceCIDR", TOP_FIELDS);
    let metadata = metadata(ctx, root, &top);
    let spec = ctx.map(root.get("spec"), &top.field("spec"), "v1.ServiceCIDRSpec", &["cidrs"]);
    let cidrs = ctx
        .strings(get(spec, "cidrs"), &top.field("spec").within("ServiceCIDRSpec").field("cidrs"));
    ServiceCidr { metadata, cidrs }
}

fn kube_proxy_configuration(ctx: &mut Ctx, root: &Node) -> KubeProxyConfiguration {
    let top = At::root("KubeProxyConfiguration");
    let f = |name: &'static str| top.field(name);
    let detect = ctx.map(
        root.get("detectLocal"),
        &f("detectLocal"),
        "v1alpha1.DetectLocalConfiguration",
        &["bridgeInterface", "interfaceNamePrefix"],
    );
    let dat = f("detectLocal").within("DetectLocalConfiguration");
    let ipt = ctx.map(
        root.get("iptables"),
        &f("iptables"),
        "v1alpha1.KubeProxyIPTablesConfiguration",
        &["masqueradeAll", "masqueradeBit", "localhostNodePorts", "syncPeriod", "minSyncPeriod"],
    );
    let iat = f("iptables").within("KubeProxyIPTablesConfiguration");
    let nft = ctx.map(
        root.get("nftables"),
        &f("nftables"),
        "v1alpha1.KubeProxyNFTablesConfiguration",
        &["masqueradeAll", "masqueradeBit", "syncPeriod", "minSyncPeriod"],
    );
    let nat = f("nftables").within("KubeProxyNFTablesConfiguration");
    let conntrack = match root.get("conntrack").map(|n| &n.value) {
        Some(Value::Map(entries)) => Some(entries.as_slice()),
        _ => None,
    };
    let cat = f("conntrack").within("KubeProxyConntrackConfiguration");
    let ipvs = match root.get("ipvs").map(|n| &n.value) {
        Some(Value::Map(entries)) => Some(entries.as_slice()),
        _ => None,
    };
    let vat = f("ipvs").within("KubeProxyIPVSConfiguration");
    let client = match root.get("clientConnection").map(|n| &n.value) {
        Some(Value::Map(entries)) => Some(entries.as_slice()),
        _ => None,
    };
    let cca = f("clientConnection").within("ClientConnectionConfiguration");
    let logging = match root.get("logging").map(|n| &n.value) {
        Some(Value::Map(entries)) => Some(entries.as_slice()),
        _ => None,
    };
    let lat = f("logging").within("LoggingConfiguration");
    let checked = KubeProxyChecked {
        healthz_bind_address: ctx.string(root.get("healthzBindAddress"), &f("healthzBindAddress")),
        metrics_bind_address: ctx.string(root.get("metricsBindAddress"), &f("metricsBindAddress")),
        config_sync_period: ctx.string(root.get("configSyncPeriod"), &f("configSyncPeriod")),
        udp_idle_timeout: ctx.string(root.get("udpIdleTimeout"), &f("udpIdleTimeout")),
        port_range: ctx.string(root.get("portRange"), &f("portRange")),
        oom_score_adj: ctx.int32(root.get("oomScoreAdj"), &f("oomScoreAdj")),
        show_hidden_metrics_for_version: ctx
            .string(root.get("showHiddenMetricsForVersion"), &f("showHiddenMetricsForVersion")),
        client_connection_burst: ctx.int32(get(client, "burst"), &cca.field("burst")),
        conntrack_max_per_core: ctx.int32(get(conntrack, "maxPerCore"), &cat.field("maxPerCore")),
        conntrack_min: ctx.int32(get(conntrack, "min"), &cat.field("min")),
        conntrack_tcp_established_timeout: ctx
            .string(get(conntrack, "tcpEstablishedTimeout"), &cat.field("tcpEstablishedTimeout")),
        conntrack_tcp_close_wait_timeout: ctx
            .string(get(conntrack, "tcpCloseWaitTimeout"), &cat.field("tcpCloseWaitTimeout")),
        conntrack_udp_timeout: ctx.string(get(conntrack, "udpTimeout"), &cat.field("udpTimeout")),
        conntrack_udp_stream_timeout: ctx
            .string(get(conntrack, "udpStreamTimeout"), &cat.field("udpStreamTimeout")),
        iptables_sync_period: ctx.string(get(ipt, "syncPeriod"), &iat.field("syncPeriod")),
        iptables_min_sync_period: ctx
            .string(get(ipt, "minSyncPeriod"), &iat.field("minSyncPeriod")),
        nftables_sync_period: ctx.string(get(nft, "syncPeriod"), &nat.field("syncPeriod")),
        nftables_min_sync_period: ctx
            .string(get(nft, "minSyncPeriod"), &nat.field("minSyncPeriod")),
        ipvs_sync_period: ctx.string(get(ipvs, "syncPeriod"), &vat.field("syncPeriod")),
        ipvs_min_sync_period: ctx.string(get(ipvs, "minSyncPeriod"), &vat.field("minSyncPeriod")),
        ipvs_tcp_timeout: ctx.string(get(ipvs, "tcpTimeout"), &vat.field("tcpTimeout")),
        ipvs_tcp_fin_timeout: ctx.string(get(ipvs, "tcpFinTimeout"), &vat.field("tcpFinTimeout")),
        ipvs_udp_timeout: ctx.string(get(ipvs, "udpTimeout"), &vat.field("udpTimeout")),
        ipvs_scheduler: ctx.string(get(ipvs, "scheduler"), &vat.field("scheduler")),
        ipvs_exclude_cidrs: ctx.strings(get(ipvs, "excludeCIDRs"), &vat.field("excludeCIDRs")),
        logging_format: ctx.string(get(logging, "format"), &lat.field("format")),
    };
    KubeProxyConfiguration {
        mode: ctx.string(root.get("mode"), &f("mode")),
        hostname_override: ctx.string(root.get("hostnameOverride"), &f("hostnameOverride")),
        bind_address: ctx.string(root.get("bindAddress"), &f("bindAddress")),
        cluster_cidr: ctx.string(root.get("clusterCIDR"), &f("clusterCIDR")),
        detect_local_mode: ctx.string(root.get("detectLocalMode"), &f("detectLocalMode")),
        bridge_interface: ctx.string(get(detect, "bridgeInterface"), &dat.field("bridgeInterface")),
        interface_name_prefix: ctx
            .string(get(detect, "interfaceNamePrefix"), &dat.field("interfaceNamePrefix")),
        masquerade_all: ctx
            .opt_bool(get(ipt, "masqueradeAll"), &iat.field("masqueradeAll"))
            .unwrap_or(false),
        masquerade_bit: ctx.int32(get(ipt, "masqueradeBit"), &iat.field("masqueradeBit")),
        nftables_masquerade_all: ctx
            .opt_bool(get(nft, "masqueradeAll"), &nat.field("masqueradeAll"))
            .unwrap_or(false),
        nftables_masquerade_bit: ctx.int32(get(nft, "masqueradeBit"), &nat.field("masqueradeBit")),
        localhost_node_ports: ctx
            .opt_bool(get(ipt, "localhostNodePorts"), &iat.field("localhostNodePorts")),
        node_port_addresses: ctx.strings(root.get("nodePortAddresses"), &f("nodePortAddresses")),
        tcp_be_liberal: ctx
            .opt_bool(get(conntrack, "tcpBeLiberal"), &cat.field("tcpBeLiberal"))
            .unwrap_or(false),
        feature_gates: ctx.bool_map(root.get("featureGates"), &f("featureGates")),
        checked,
    }
}

fn cluster_profile(ctx: &mut Ctx, root: &Node) -> ClusterProfile {
    let top = At::root("ClusterProfile");
    ctx.map(
        Some(root),
        &top,
        "v1alpha1.ClusterProfile",
        &[
            "apiVersion",
            "kind",
            "metadata",
            "kubernetesVersion",
            "featureGates",
            "serviceClusterIPRanges",
            "serviceNodePortRange",
            "seed",
            "dynamicPicks",
            "host",
        ],
    );
    let f = |name: &'static str| top.field(name);
    let host = ctx.map(
        root.get("host"),
        &f("host"),
        "v1alpha1.HostFacts",
        &["iptablesRandomFully", "nfacct", "interfaceAddresses"],
    );
    let hat = f("host").within("HostFacts");
    // `kubernetesVersion: 1.24` is a YAML float; accept it like a string the user meant.
    let kubernetes_version = match root.get("kubernetesVersion").map(|n| &n.value) {
        Some(Value::Float(_) | Value::Int(_)) => {
            let node = root.get("kubernetesVersion");
            node.map(yaml_source_text)
        }
        _ => ctx.opt_string(root.get("kubernetesVersion"), &f("kubernetesVersion")),
    };
    // `serviceClusterIPRanges` may be a list or the flag's comma-separated string.
    let ranges = match root.get("serviceClusterIPRanges").map(|n| &n.value) {
        Some(Value::Str(s)) => {
            s.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
        }
        _ => ctx.strings(root.get("serviceClusterIPRanges"), &f("serviceClusterIPRanges")),
    };
    ClusterProfile {
        kubernetes_version,
        feature_gates: ctx.bool_map(root.get("featureGates"), &f("featureGates")),
        service_cluster_ip_ranges: ranges,
        service_node_port_range: ctx
            .opt_string(root.get("serviceNodePortRange"), &f("serviceNodePortRange")),
        seed: ctx.int(root.get("seed"), &f("seed"), "uint64").and_then(|i| u64::try_from(i).ok()),
        dynamic_picks: ctx.opt_string(root.get("dynamicPicks"), &f("dynamicPicks")),
        iptables_random_fully: ctx
            .opt_bool(get(host, "iptablesRandomFully"), &hat.field("iptablesRandomFully")),
        nfacct: ctx.opt_bool(get(host, "nfacct"), &hat.field("nfacct")),
        interface_addresses: ctx
            .strings(get(host, "interfaceAddresses"), &hat.field("interfaceAddresses")),
    }
}

/// Best-effort text of a numeric scalar (`1.30` stays `1.30`, not `1.3`).
fn yaml_source_text(node: &Node) -> String {
    match node.value {
        Value::Int(i) => i.to_string(),
        Value::Float(f) => {
            // Minor versions are written with two digits at most; 1.3 means 1.30.
            let s = format!("{f}");
            match s.split_once('.') {
                Some((major, minor)) if minor.len() == 1 && minor != "0" => {
                    // Ambiguous: `1.3` could be 1.3 or 1.30. Kubernetes has no 1.3 in range, so 1.30.
                    format!("{major}.{minor}0")
                }
                _ => s,
            }
        }
        _ => String::new(),
    }
}
