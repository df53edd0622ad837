//! The policy settings object and its strict decoder: every key known, every CIDR, range and
//! pattern parsed once, every mistake a `field.Error` with its settings path and position.

use ipnet::IpNet;

use crate::field::{FieldError, GoValue};
use crate::profile::Profile;
use crate::source::Pos;
use crate::yaml::{Entry, Node, Value};

/// What a violation does to the request. Ordered by strength: `Deny` is the strongest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Action {
    /// Allowed, with an audit annotation (an `info` diagnostic).
    Audit,
    /// Allowed, with a warning.
    Warn,
    /// Refused.
    Deny,
}

/// `allow | warn | deny` of `deprecations.*` and `nonCanonicalIPs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Level {
    #[default]
    Allow,
    Warn,
    Deny,
}

impl Level {
    pub(crate) fn action(self) -> Option<Action> {
        match self {
            Level::Allow => None,
            Level::Warn => Some(Action::Warn),
            Level::Deny => Some(Action::Deny),
        }
    }
}

/// A parsed CIDR (a bare IP is a /32 or /128) with the text the operator wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cidr {
    pub(crate) net: IpNet,
    pub(crate) text: String,
}

/// An inclusive port range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ports {
    pub(crate) first: u32,
    pub(crate) last: u32,
}

impl Ports {
    pub(crate) fn contains(self, port: u32) -> bool {
        (self.first..=self.last).contains(&port)
    }
}

impl std::fmt::Display for Ports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.first == self.last {
            write!(f, "{}", self.first)
        } else {
            write!(f, "{}-{}", self.first, self.last)
        }
    }
}

/// A namespace pattern: a name, or a name with a leading or trailing `*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NamespacePattern(pub(crate) String);

impl NamespacePattern {
    pub(crate) fn matches(&self, namespace: &str) -> bool {
        let p = self.0.as_str();
        if p == "*" {
            return true;
        }
        match (p.strip_prefix('*'), p.strip_suffix('*')) {
            (Some(rest), _) if rest.ends_with('*') => {
                namespace.contains(rest.trim_end_matches('*'))
            }
            (Some(suffix), _) => namespace.ends_with(suffix),
            (None, Some(prefix)) => namespace.starts_with(prefix),
            (None, None) => namespace == p,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ExternalIpMode {
    #[default]
    Allow,
    Forbid,
    ForbidNew,
    Allowlist,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Explicit {
    #[default]
    Allow,
    Forbid,
    StaticBandOnly,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum LoadBalancerIpMode {
    #[default]
    Allow,
    Forbid,
    Allowlist,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Manual {
    #[default]
    Allow,
    Forbid,
    RestrictAddresses,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ServiceName {
    pub(crate) namespace: String,
    pub(crate) name: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Exemptions {
    pub(crate) namespaces: Vec<NamespacePattern>,
    pub(crate) usernames: Vec<String>,
    pub(crate) groups: Vec<String>,
    pub(crate) services: Vec<ServiceName>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Types {
    pub(crate) action: Option<Action>,
    pub(crate) allowed: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ExternalIps {
    pub(crate) action: Option<Action>,
    pub(crate) mode: ExternalIpMode,
    pub(crate) allowed_cidrs: Vec<Cidr>,
    pub(crate) allowed_usernames: Vec<String>,
    pub(crate) allowed_groups: Vec<String>,
    pub(crate) also_check_annotations: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NamespaceRanges<T> {
    pub(crate) namespaces: Vec<NamespacePattern>,
    pub(crate) ranges: Vec<T>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PortReservation {
    pub(crate) port: u32,
    pub(crate) protocol: String,
    pub(crate) owner: ServiceName,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodePorts {
    pub(crate) action: Option<Action>,
    pub(crate) forbid: bool,
    pub(crate) count_load_balancer_node_ports: bool,
    pub(crate) allowed_ranges: Vec<Ports>,
    pub(crate) explicit: Explicit,
    pub(crate) namespace_ranges: Vec<NamespaceRanges<Ports>>,
    pub(crate) reservations: Vec<PortReservation>,
}

impl Default for NodePorts {
    fn default() -> Self {
        NodePorts {
            action: None,
            forbid: false,
            count_load_balancer_node_ports: true,
            allowed_ranges: Vec::new(),
            explicit: Explicit::Allow,
            namespace_ranges: Vec::new(),
            reservations: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AnnotationMatch {
    pub(crate) key: String,
    pub(crate) value: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LoadBalancer {
    pub(crate) action: Option<Action>,
    pub(crate) forbid: bool,
    pub(crate) require_internal: bool,
    pub(crate) internal_annotations: Vec<AnnotationMatch>,
    pub(crate) allowed_classes: Vec<String>,
    pub(crate) require_source_ranges: bool,
    pub(crate) forbid_open_source_ranges: bool,
    pub(crate) allowed_source_range_cidrs: Vec<Cidr>,
    pub(crate) load_balancer_ip: LoadBalancerIpMode,
    pub(crate) allowed_load_balancer_ip_cidrs: Vec<Cidr>,
    pub(crate) status_ingress_allowed_cidrs: Vec<Cidr>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IpReservation {
    pub(crate) ip: std::net::IpAddr,
    pub(crate) text: String,
    pub(crate) owner: ServiceName,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ClusterIp {
    pub(crate) action: Option<Action>,
    pub(crate) explicit: Explicit,
    pub(crate) explicit_namespaces: Vec<NamespacePattern>,
    pub(crate) namespace_cidrs: Vec<NamespaceRanges<Cidr>>,
    pub(crate) reservations: Vec<IpReservation>,
    pub(crate) forbid_headless: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ExternalName {
    pub(crate) action: Option<Action>,
    pub(crate) forbid: bool,
    pub(crate) denied_names: Vec<String>,
    pub(crate) allowed_names: Vec<String>,
    pub(crate) forbid_ip_literals: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Selector {
    pub(crate) action: Option<Action>,
    pub(crate) require: bool,
    pub(crate) unique_in_namespace: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PortRules {
    pub(crate) action: Option<Action>,
    pub(crate) allowed_ports: Vec<Ports>,
    pub(crate) denied_ports: Vec<Ports>,
    pub(crate) allowed_protocols: Vec<String>,
    pub(crate) require_names: bool,
}

/// The two controllers that write EndpointSlices (`endpointslice.kubernetes.io/managed-by`).
pub(crate) const DEFAULT_MANAGED_BY: [&str; 2] =
    ["endpointslice-controller.k8s.io", "endpointslicemirroring-controller.k8s.io"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EndpointSlices {
    pub(crate) action: Option<Action>,
    pub(crate) manual: Manual,
    pub(crate) managed_by: Vec<String>,
    pub(crate) allowed_address_cidrs: Vec<Cidr>,
    pub(crate) denied_address_cidrs: Vec<Cidr>,
}

impl Default for EndpointSlices {
    fn default() -> Self {
        EndpointSlices {
            action: None,
            manual: Manual::Allow,
            managed_by: DEFAULT_MANAGED_BY.iter().map(|s| (*s).to_owned()).collect(),
            allowed_address_cidrs: Vec::new(),
            denied_address_cidrs: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Deprecations {
    pub(crate) external_ips: Level,
    pub(crate) load_balancer_ip: Level,
    pub(crate) topology_aware_hints_annotation: Level,
    pub(crate) tolerate_unready_endpoints_annotation: Level,
}

/// The whole settings object. Every absent key means "off".
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Settings {
    pub(crate) action: Action,
    pub(crate) exemptions: Exemptions,
    pub(crate) types: Types,
    pub(crate) external_ips: ExternalIps,
    pub(crate) node_ports: NodePorts,
    pub(crate) load_balancer: LoadBalancer,
    pub(crate) cluster_ip: ClusterIp,
    pub(crate) external_name: ExternalName,
    pub(crate) selector: Selector,
    pub(crate) ports: PortRules,
    pub(crate) endpoint_slices: EndpointSlices,
    pub(crate) deprecations: Deprecations,
    pub(crate) non_canonical_ips: Level,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            action: Action::Deny,
            exemptions: Exemptions::default(),
            types: Types::default(),
            external_ips: ExternalIps::default(),
            node_ports: NodePorts::default(),
            load_balancer: LoadBalancer::default(),
            cluster_ip: ClusterIp::default(),
            external_name: ExternalName::default(),
            selector: Selector::default(),
            ports: PortRules::default(),
            endpoint_slices: EndpointSlices::default(),
            deprecations: Deprecations::default(),
            non_canonical_ips: Level::Allow,
        }
    }
}

/// The top-level keys of the settings object, in the order the schema lists them.
pub(crate) const TOP_KEYS: &[&str] = &[
    "action",
    "exemptions",
    "types",
    "externalIPs",
    "nodePorts",
    "loadBalancer",
    "clusterIP",
    "externalName",
    "selector",
    "ports",
    "endpointSlices",
    "deprecations",
    "nonCanonicalIPs",
];

/// One settings error: the `field.Error` (path relative to the settings object) and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SettingsError {
    pub(crate) error: FieldError,
    pub(crate) pos: Pos,
}

/// How to read scalars.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Decoding {
    /// Accept `"true"`/`"false"` and numbers as strings (Traefik's middleware options).
    pub(crate) stringly_typed: bool,
    /// Accept a top-level `profile` key (Kubewarden's settings carry the ClusterProfile
    /// fields there); it is read by the caller, not here.
    pub(crate) allow_profile_key: bool,
}

/// Decodes the settings object at `root` and checks it against the profile.
pub(crate) fn decode(
    root: &Node,
    profile: &Profile,
    decoding: Decoding,
) -> (Settings, Vec<SettingsError>) {
    let mut d = Decoder { errors: Vec::new(), decoding };
    let settings = d.settings(root);
    let mut errors = d.errors;
    check_profile(&settings, root, profile, &mut errors);
    (settings, errors)
}

struct Decoder {
    errors: Vec<SettingsError>,
    decoding: Decoding,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

/// A node that is present and not `null`.
fn present<'n>(node: &'n Node, key: &str) -> Option<&'n Node> {
    node.get(key).filter(|n| !matches!(n.value, Value::Null))
}

fn shown(node: &Node) -> GoValue {
    match &node.value {
        Value::Str(s) => GoValue::Str(s.clone()),
        Value::Int(i) => GoValue::Int(*i),
        Value::Bool(b) => GoValue::Bool(*b),
        _ => GoValue::Raw(node.to_json().to_string()),
    }
}

impl Decoder {
    fn error(&mut self, error: FieldError, pos: Pos) {
        self.errors.push(SettingsError { error, pos });
    }

    fn invalid(&mut self, path: &str, node: &Node, detail: &str) {
        self.error(FieldError::invalid(path, shown(node), detail), node.pos);
    }

    /// The entries of a map; unknown keys are errors. `null` reads as absent.
    fn map<'n>(&mut self, node: &'n Node, path: &str, known: &[&str]) -> Option<&'n [Entry]> {
        match &node.value {
            Value::Null => None,
            Value::Map(entries) => {
                for entry in entries {
                    if !known.contains(&entry.key.as_ref()) {
                        // A typo must never switch a rule off: unknown keys are errors.
                        self.error(
                            FieldError::not_supported_sorted(
                                join(path, &entry.key),
                                GoValue::Str(entry.key.to_string()),
                                known,
                            ),
                            entry.key_pos,
                        );
                    }
                }
                Some(entries)
            }
            _ => {
                self.invalid(path, node, "must be an object");
                None
            }
        }
    }

    fn bool(&mut self, node: &Node, key: &str, path: &str, default: bool) -> bool {
        let Some(value) = present(node, key) else { return default };
        let path = join(path, key);
        match &value.value {
            Value::Bool(b) => *b,
            Value::Str(s) if self.decoding.stringly_typed && (s == "true" || s == "false") => {
                s == "true"
            }
            _ => {
                self.invalid(&path, value, "must be a boolean");
                default
            }
        }
    }

    fn string_of(&mut self, value: &Node, path: &str) -> Option<String> {
        match &value.value {
            Value::Str(s) => Some(s.clone()),
            _ => {
                self.invalid(path, value, "must be a string");
                None
            }
        }
    }

    fn string(&mut self, node: &Node, key: &str, path: &str) -> Option<String> {
        let value = present(node, key)?;
        self.string_of(value, &join(path, key))
    }

    /// A list of strings, with each item's path and position.
    fn list<'n>(&mut self, node: &'n Node, key: &str, path: &str) -> Vec<(String, &'n Node)> {
        let Some(value) = present(node, key) else { return Vec::new() };
        let path = join(path, key);
        match &value.value {
            Value::Seq(items) => {
                items.iter().enumerate().map(|(i, item)| (format!("{path}[{i}]"), item)).collect()
            }
            _ => {
                self.invalid(&path, value, "must be a list");
                Vec::new()
            }
        }
    }

    fn strings(&mut self, node: &Node, key: &str, path: &str) -> Vec<String> {
        let items = self.list(node, key, path);
        items.into_iter().filter_map(|(p, item)| self.string_of(item, &p)).collect()
    }

    fn choice<T: Copy>(
        &mut self,
        node: &Node,
        key: &str,
        path: &str,
        choices: &[(&str, T)],
    ) -> Option<T> {
        let value = present(node, key)?;
        let path = join(path, key);
        let text = self.string_of(value, &path)?;
        match choices.iter().find(|(name, _)| *name == text) {
            Some((_, v)) => Some(*v),
            None => {
                let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
                self.error(
                    FieldError::not_supported_sorted(path, GoValue::Str(text), &names),
                    value.pos,
                );
                None
            }
        }
    }

    fn action(&mut self, node: &Node, path: &str) -> Option<Action> {
        self.choice(
            node,
            "action",
            path,
            &[("deny", Action::Deny), ("warn", Action::Warn), ("audit", Action::Audit)],
        )
    }

    fn level(&mut self, node: &Node, key: &str, path: &str) -> Level {
        self.choice(
            node,
            key,
            path,
            &[("allow", Level::Allow), ("warn", Level::Warn), ("deny", Level::Deny)],
        )
        .unwrap_or_default()
    }

    fn cidrs(&mut self, node: &Node, key: &str, path: &str) -> Vec<Cidr> {
        let items = self.list(node, key, path);
        let mut out = Vec::new();
        for (p, item) in items {
            let Some(text) = self.string_of(item, &p) else { continue };
            match parse_cidr_or_ip(&text) {
                Some(net) => out.push(Cidr { net, text }),
                None => self.invalid(
                    &p,
                    item,
                    "must be a valid CIDR value or IP address, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                ),
            }
        }
        out
    }

    fn port(&mut self, item: &Node, path: &str) -> Option<u32> {
        let number = match &item.value {
            Value::Int(i) => Some(*i),
            Value::Str(s) if self.decoding.stringly_typed => s.trim().parse::<i64>().ok(),
            _ => None,
        };
        match number.and_then(|n| u32::try_from(n).ok()).filter(|n| (1..=65535).contains(n)) {
            Some(n) => Some(n),
            None => {
                self.invalid(path, item, "must be a port number between 1 and 65535");
                None
            }
        }
    }

    fn port_ranges(&mut self, node: &Node, key: &str, path: &str) -> Vec<Ports> {
        let items = self.list(node, key, path);
        let mut out = Vec::new();
        for (p, item) in items {
            let parsed = match &item.value {
                Value::Int(i) => u32::try_from(*i)
                    .ok()
                    .filter(|n| (1..=65535).contains(n))
                    .map(|n| Ports { first: n, last: n }),
                Value::Str(s) => parse_port_range(s),
                _ => None,
            };
            match parsed {
                Some(range) => out.push(range),
                None => self.invalid(
                    &p,
                    item,
                    "must be a port (\"30443\") or a range of ports (\"30000-30100\") between 1 and 65535",
                ),
            }
        }
        out
    }

    fn namespaces(&mut self, node: &Node, key: &str, path: &str) -> Vec<NamespacePattern> {
        let items = self.list(node, key, path);
        let mut out = Vec::new();
        for (p, item) in items {
            let Some(text) = self.string_of(item, &p) else { continue };
            let inner = text.trim_start_matches('*').trim_end_matches('*');
            if text.is_empty()
                || inner.contains('*')
                || text.starts_with("**")
                || text.ends_with("**")
            {
                self.invalid(
                    &p,
                    item,
                    "must be a namespace name, optionally with a leading or trailing \"*\"",
                );
                continue;
            }
            out.push(NamespacePattern(text));
        }
        out
    }

    fn service_name(&mut self, item: &Node, path: &str, extra: &[&str]) -> Option<ServiceName> {
        let mut known = vec!["namespace", "name"];
        known.extend_from_slice(extra);
        self.map(item, path, &known)?;
        let namespace = self.string(item, "namespace", path).unwrap_or_default();
        let name = self.string(item, "name", path).unwrap_or_default();
        if namespace.is_empty() || name.is_empty() {
            self.error(FieldError::required(path, "namespace and name are required"), item.pos);
            return None;
        }
        Some(ServiceName { namespace, name })
    }

    fn block<'n>(&mut self, root: &'n Node, key: &str, known: &[&str]) -> Option<&'n Node> {
        let node = present(root, key)?;
        self.map(node, key, known).map(|_| node)
    }

    fn settings(&mut self, root: &Node) -> Settings {
        let mut s = Settings::default();
        let mut known = TOP_KEYS.to_vec();
        if self.decoding.allow_profile_key {
            known.push("profile");
        }
        if self.map(root, "", &known).is_none() {
            return s;
        }
        s.action = self.action(root, "").unwrap_or(Action::Deny);
        if let Some(n) =
            self.block(root, "exemptions", &["namespaces", "usernames", "groups", "services"])
        {
            let p = "exemptions";
            s.exemptions.namespaces = self.namespaces(n, "namespaces", p);
            s.exemptions.usernames = self.strings(n, "usernames", p);
            s.exemptions.groups = self.strings(n, "groups", p);
            for (ip, item) in self.list(n, "services", p) {
                if let Some(name) = self.service_name(item, &ip, &[]) {
                    s.exemptions.services.push(name);
                }
            }
        }
        if let Some(n) = self.block(root, "types", &["action", "allowed"]) {
            s.types.action = self.action(n, "types");
            for (ip, item) in self.list(n, "allowed", "types") {
                let Some(text) = self.string_of(item, &ip) else { continue };
                const TYPES: [&str; 4] = ["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"];
                if TYPES.contains(&text.as_str()) {
                    s.types.allowed.push(text);
                } else {
                    self.error(
                        FieldError::not_supported_sorted(ip, GoValue::Str(text), &TYPES),
                        item.pos,
                    );
                }
            }
        }
        self.external_ips(root, &mut s.external_ips);
        self.node_ports(root, &mut s.node_ports);
        self.load_balancer(root, &mut s.load_balancer);
        self.cluster_ip(root, &mut s.cluster_ip);
        if let Some(n) = self.block(
            root,
            "externalName",
            &["action", "forbid", "deniedNames", "allowedNames", "forbidIPLiterals"],
        ) {
            let p = "externalName";
            let e = &mut s.external_name;
            e.action = self.action(n, p);
            e.forbid = self.bool(n, "forbid", p, false);
            e.denied_names = self.strings(n, "deniedNames", p);
            e.allowed_names = self.strings(n, "allowedNames", p);
            e.forbid_ip_literals = self.bool(n, "forbidIPLiterals", p, false);
        }
        if let Some(n) = self.block(root, "selector", &["action", "require", "uniqueInNamespace"]) {
            s.selector.action = self.action(n, "selector");
            s.selector.require = self.bool(n, "require", "selector", false);
            s.selector.unique_in_namespace = self.bool(n, "uniqueInNamespace", "selector", false);
        }
        if let Some(n) = self.block(
            root,
            "ports",
            &["action", "allowedPorts", "deniedPorts", "allowedProtocols", "requireNames"],
        ) {
            let p = "ports";
            s.ports.action = self.action(n, p);
            s.ports.allowed_ports = self.port_ranges(n, "allowedPorts", p);
            s.ports.denied_ports = self.port_ranges(n, "deniedPorts", p);
            for (ip, item) in self.list(n, "allowedProtocols", p) {
                let Some(text) = self.string_of(item, &ip) else { continue };
                const PROTOCOLS: [&str; 3] = ["TCP", "UDP", "SCTP"];
                if PROTOCOLS.contains(&text.as_str()) {
                    s.ports.allowed_protocols.push(text);
                } else {
                    self.error(
                        FieldError::not_supported_sorted(ip, GoValue::Str(text), &PROTOCOLS),
                        item.pos,
                    );
                }
            }
            s.ports.require_names = self.bool(n, "requireNames", p, false);
        }
        self.endpoint_slices(root, &mut s.endpoint_slices);
        if let Some(n) = self.block(
            root,
            "deprecations",
            &[
                "externalIPs",
                "loadBalancerIP",
                "topologyAwareHintsAnnotation",
                "tolerateUnreadyEndpointsAnnotation",
            ],
        ) {
            let p = "deprecations";
            s.deprecations.external_ips = self.level(n, "externalIPs", p);
            s.deprecations.load_balancer_ip = self.level(n, "loadBalancerIP", p);
            s.deprecations.topology_aware_hints_annotation =
                self.level(n, "topologyAwareHintsAnnotation", p);
            s.deprecations.tolerate_unready_endpoints_annotation =
                self.level(n, "tolerateUnreadyEndpointsAnnotation", p);
        }
        s.non_canonical_ips = self.level(root, "nonCanonicalIPs", "");
        s
    }

    fn external_ips(&mut self, root: &Node, e: &mut ExternalIps) {
        let Some(n) = self.block(
            root,
            "externalIPs",
            &[
                "action",
                "mode",
                "allowedCIDRs",
                "allowedUsernames",
                "allowedGroups",
                "alsoCheckAnnotations",
            ],
        ) else {
            return;
        };
        let p = "externalIPs";
        e.action = self.action(n, p);
        e.mode = self
            .choice(
                n,
                "mode",
                p,
                &[
                    ("allow", ExternalIpMode::Allow),
                    ("forbid", ExternalIpMode::Forbid),
                    ("forbidNew", ExternalIpMode::ForbidNew),
                    ("allowlist", ExternalIpMode::Allowlist),
                ],
            )
            .unwrap_or_default();
        e.allowed_cidrs = self.cidrs(n, "allowedCIDRs", p);
        e.allowed_usernames = self.strings(n, "allowedUsernames", p);
        e.allowed_groups = self.strings(n, "allowedGroups", p);
        e.also_check_annotations = self.strings(n, "alsoCheckAnnotations", p);
        if e.mode != ExternalIpMode::Allowlist {
            self.orphan(n, p, "allowedCIDRs", "mode: allowlist");
        }
    }

    /// A key that only means something with another setting (`allowedCIDRs` without
    /// `mode: allowlist`) is an error: it would read as a rule that is not enforced.
    fn orphan(&mut self, node: &Node, path: &str, key: &str, needs: &str) {
        if let Some(value) = present(node, key) {
            let empty = matches!(&value.value, Value::Seq(items) if items.is_empty())
                || matches!(&value.value, Value::Bool(true)) && key == "countLoadBalancerNodePorts";
            if !empty {
                self.error(
                    FieldError::forbidden(join(path, key), format!("only applies with {needs}")),
                    node.get(key).map_or(node.pos, |v| v.pos),
                );
            }
        }
    }

    fn node_ports(&mut self, root: &Node, np: &mut NodePorts) {
        let Some(n) = self.block(
            root,
            "nodePorts",
            &[
                "action",
                "forbid",
                "countLoadBalancerNodePorts",
                "allowedRanges",
                "explicit",
                "namespaceRanges",
                "reservations",
            ],
        ) else {
            return;
        };
        let p = "nodePorts";
        np.action = self.action(n, p);
        np.forbid = self.bool(n, "forbid", p, false);
        np.count_load_balancer_node_ports = self.bool(n, "countLoadBalancerNodePorts", p, true);
        np.allowed_ranges = self.port_ranges(n, "allowedRanges", p);
        np.explicit = self.explicit(n, p);
        if !np.forbid && present(n, "countLoadBalancerNodePorts").is_some() {
            // It only decides whether `forbid` counts a LoadBalancer's node ports.
            self.orphan(n, p, "countLoadBalancerNodePorts", "forbid: true");
        }
        for (ip, item) in self.list(n, "namespaceRanges", p) {
            if self.map(item, &ip, &["namespaces", "ranges"]).is_none() {
                continue;
            }
            let namespaces = self.namespaces(item, "namespaces", &ip);
            let ranges = self.port_ranges(item, "ranges", &ip);
            if namespaces.is_empty() || ranges.is_empty() {
                self.error(
                    FieldError::required(ip, "namespaces and ranges are required"),
                    item.pos,
                );
                continue;
            }
            np.namespace_ranges.push(NamespaceRanges { namespaces, ranges });
        }
        for (ip, item) in self.list(n, "reservations", p) {
            let Some(owner) = self.service_name(item, &ip, &["port", "protocol"]) else { continue };
            let Some(port_node) = present(item, "port") else {
                self.error(FieldError::required(format!("{ip}.port"), ""), item.pos);
                continue;
            };
            let Some(port) = self.port(port_node, &format!("{ip}.port")) else { continue };
            let protocol = self
                .choice(item, "protocol", &ip, &[("TCP", "TCP"), ("UDP", "UDP"), ("SCTP", "SCTP")])
                .unwrap_or("TCP")
                .to_owned();
            np.reservations.push(PortReservation { port, protocol, owner });
        }
    }

    fn explicit(&mut self, n: &Node, p: &str) -> Explicit {
        self.choice(
            n,
            "explicit",
            p,
            &[
                ("allow", Explicit::Allow),
                ("forbid", Explicit::Forbid),
                ("staticBandOnly", Explicit::StaticBandOnly),
            ],
        )
        .unwrap_or_default()
    }

    fn load_balancer(&mut self, root: &Node, lb: &mut LoadBalancer) {
        let Some(n) = self.block(
            root,
            "loadBalancer",
            &[
                "action",
                "forbid",
                "requireInternal",
                "internalAnnotations",
                "allowedClasses",
                "requireSourceRanges",
                "forbidOpenSourceRanges",
                "allowedSourceRangeCIDRs",
                "loadBalancerIP",
                "allowedLoadBalancerIPCIDRs",
                "statusIngressAllowedCIDRs",
            ],
        ) else {
            return;
        };
        let p = "loadBalancer";
        lb.action = self.action(n, p);
        lb.forbid = self.bool(n, "forbid", p, false);
        lb.require_internal = self.bool(n, "requireInternal", p, false);
        for (ip, item) in self.list(n, "internalAnnotations", p) {
            if self.map(item, &ip, &["key", "value"]).is_none() {
                continue;
            }
            let key = self.string(item, "key", &ip).unwrap_or_default();
            let value = self.string(item, "value", &ip).unwrap_or_default();
            if key.is_empty() {
                self.error(FieldError::required(format!("{ip}.key"), ""), item.pos);
                continue;
            }
            lb.internal_annotations.push(AnnotationMatch { key, value });
        }
        lb.allowed_classes = self.strings(n, "allowedClasses", p);
        lb.require_source_ranges = self.bool(n, "requireSourceRanges", p, false);
        lb.forbid_open_source_ranges = self.bool(n, "forbidOpenSourceRanges", p, false);
        lb.allowed_source_range_cidrs = self.cidrs(n, "allowedSourceRangeCIDRs", p);
        lb.load_balancer_ip = self
            .choice(
                n,
                "loadBalancerIP",
                p,
                &[
                    ("allow", LoadBalancerIpMode::Allow),
                    ("forbid", LoadBalancerIpMode::Forbid),
                    ("allowlist", LoadBalancerIpMode::Allowlist),
                ],
            )
            .unwrap_or_default();
        lb.allowed_load_balancer_ip_cidrs = self.cidrs(n, "allowedLoadBalancerIPCIDRs", p);
        lb.status_ingress_allowed_cidrs = self.cidrs(n, "statusIngressAllowedCIDRs", p);
        if lb.load_balancer_ip != LoadBalancerIpMode::Allowlist {
            self.orphan(n, p, "allowedLoadBalancerIPCIDRs", "loadBalancerIP: allowlist");
        }
        if !lb.require_internal {
            self.orphan(n, p, "internalAnnotations", "requireInternal: true");
        } else if lb.internal_annotations.is_empty() {
            self.error(
                FieldError::required(
                    "loadBalancer.internalAnnotations",
                    "requireInternal needs at least one annotation that marks a load balancer internal",
                ),
                n.pos,
            );
        }
    }

    fn cluster_ip(&mut self, root: &Node, c: &mut ClusterIp) {
        let Some(n) = self.block(
            root,
            "clusterIP",
            &[
                "action",
                "explicit",
                "explicitNamespaces",
                "namespaceCIDRs",
                "reservations",
                "headless",
            ],
        ) else {
            return;
        };
        let p = "clusterIP";
        c.action = self.action(n, p);
        c.explicit = self.explicit(n, p);
        c.explicit_namespaces = self.namespaces(n, "explicitNamespaces", p);
        for (ip, item) in self.list(n, "namespaceCIDRs", p) {
            if self.map(item, &ip, &["namespaces", "cidrs"]).is_none() {
                continue;
            }
            let namespaces = self.namespaces(item, "namespaces", &ip);
            let ranges = self.cidrs(item, "cidrs", &ip);
            if namespaces.is_empty() || ranges.is_empty() {
                self.error(FieldError::required(ip, "namespaces and cidrs are required"), item.pos);
                continue;
            }
            c.namespace_cidrs.push(NamespaceRanges { namespaces, ranges });
        }
        for (ip, item) in self.list(n, "reservations", p) {
            let Some(owner) = self.service_name(item, &ip, &["ip"]) else { continue };
            let Some(text) = self.string(item, "ip", &ip) else {
                self.error(FieldError::required(format!("{ip}.ip"), ""), item.pos);
                continue;
            };
            match crate::net::parse_ip_sloppy(&text) {
                Some(addr) => {
                    c.reservations.push(IpReservation { ip: crate::net::unmap(addr), text, owner })
                }
                None => self.invalid(
                    &format!("{ip}.ip"),
                    item.get("ip").unwrap_or(item),
                    "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                ),
            }
        }
        c.forbid_headless =
            self.choice(n, "headless", p, &[("allow", false), ("forbid", true)]).unwrap_or(false);
    }

    fn endpoint_slices(&mut self, root: &Node, e: &mut EndpointSlices) {
        let Some(n) = self.block(
            root,
            "endpointSlices",
            &["action", "manual", "managedBy", "allowedAddressCIDRs", "deniedAddressCIDRs"],
        ) else {
            return;
        };
        let p = "endpointSlices";
        e.action = self.action(n, p);
        e.manual = self
            .choice(
                n,
                "manual",
                p,
                &[
                    ("allow", Manual::Allow),
                    ("forbid", Manual::Forbid),
                    ("restrictAddresses", Manual::RestrictAddresses),
                ],
            )
            .unwrap_or_default();
        if present(n, "managedBy").is_some() {
            e.managed_by = self.strings(n, "managedBy", p);
        }
        e.allowed_address_cidrs = self.cidrs(n, "allowedAddressCIDRs", p);
        e.denied_address_cidrs = self.cidrs(n, "deniedAddressCIDRs", p);
        if e.manual == Manual::Allow {
            self.orphan(n, p, "managedBy", "manual: forbid or restrictAddresses");
        }
        if e.manual != Manual::RestrictAddresses {
            self.orphan(n, p, "allowedAddressCIDRs", "manual: restrictAddresses");
            self.orphan(n, p, "deniedAddressCIDRs", "manual: restrictAddresses");
        }
    }
}

/// `"30000-30100"` or `"30443"`, 1 to 65535, first <= last.
fn parse_port_range(text: &str) -> Option<Ports> {
    let number = |s: &str| {
        let s = s.trim();
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
            .filter(|n| (1..=65535).contains(n))
    };
    let (first, last) = match text.split_once('-') {
        Some((a, b)) => (number(a)?, number(b)?),
        None => {
            let n = number(text)?;
            (n, n)
        }
    };
    (first <= last).then_some(Ports { first, last })
}

/// A CIDR, or a bare IP as a /32 or /128; IPv4-mapped IPv6 reads as IPv4, leading-zero IPv4
/// octets are decimal (as Go's `net.ParseIP` before 1.17 and Kubernetes' `ParseIPSloppy`).
pub(crate) fn parse_cidr_or_ip(text: &str) -> Option<IpNet> {
    if text.contains('/') {
        let (ip, net) = crate::net::parse_cidr_sloppy(text)?;
        // An IPv4-mapped IPv6 prefix of /96 or longer is an IPv4 prefix.
        if let (std::net::IpAddr::V6(v6), IpNet::V6(n6)) = (ip, net)
            && let Some(v4) = v6.to_ipv4_mapped()
            && n6.prefix_len() >= 96
        {
            return ipnet::Ipv4Net::new(v4, n6.prefix_len() - 96)
                .ok()
                .map(|n| IpNet::V4(n.trunc()));
        }
        Some(net)
    } else {
        let ip = crate::net::unmap(crate::net::parse_ip_sloppy(text)?);
        Some(IpNet::from(ip))
    }
}

/// Settings that cannot apply to the profile are errors, not a silent `allow`.
fn check_profile(
    settings: &Settings,
    root: &Node,
    profile: &Profile,
    errors: &mut Vec<SettingsError>,
) {
    let pos_of = |block: &str, key: &str| {
        root.get(block).and_then(|b| b.get(key)).map_or(root.pos, |n| n.pos)
    };
    if settings.cluster_ip.explicit == Explicit::StaticBandOnly {
        // The band comes from the allocator's own offset rule (KEP-3070), per configured range.
        let without: Vec<String> = profile
            .service_cluster_ip_ranges
            .iter()
            .filter(|net| crate::allocation::ip_offset_for(profile, net) == 0)
            .map(ToString::to_string)
            .collect();
        let reason = if !profile.ip_static_subrange() {
            Some(format!(
                "Kubernetes {} with ServiceIPStaticSubrange off has no static band for cluster IPs",
                profile.version
            ))
        } else if !without.is_empty() {
            Some(format!("the service range {} is too small for a static band", without.join(", ")))
        } else {
            None
        };
        if let Some(reason) = reason {
            errors.push(SettingsError {
                error: FieldError::invalid(
                    "clusterIP.explicit",
                    GoValue::Str("staticBandOnly".into()),
                    reason,
                ),
                pos: pos_of("clusterIP", "explicit"),
            });
        }
    }
    if settings.node_ports.explicit == Explicit::StaticBandOnly {
        let range = profile.service_node_port_range;
        let reason = if profile.version.minor < 27 {
            // KEP-3668 (ServiceNodePortStaticSubrange) arrived in 1.27.
            Some(format!("Kubernetes {} has no static band for node ports", profile.version))
        } else if !profile.node_port_static_subrange() {
            Some(format!(
                "Kubernetes {} with ServiceNodePortStaticSubrange off has no static band for node ports",
                profile.version
            ))
        } else if crate::allocation::port_band_offset(range.size) == 0 {
            Some(format!("the node port range {range} is too small for a static band"))
        } else {
            None
        };
        if let Some(reason) = reason {
            errors.push(SettingsError {
                error: FieldError::invalid(
                    "nodePorts.explicit",
                    GoValue::Str("staticBandOnly".into()),
                    reason,
                ),
                pos: pos_of("nodePorts", "explicit"),
            });
        }
    }
}
