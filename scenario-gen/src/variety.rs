//! Scenarios of every shape svclab models, drawn at random from a seed: what `cargo xtask
//! oracle` feeds to upstream's own code and to svclab alike. Each case is a short stream of
//! Kubernetes objects (creates, updates and deletes of Services and EndpointSlices under a
//! ClusterProfile, for kube-apiserver; stored Services and EndpointSlices with Nodes and a
//! KubeProxyConfiguration, for kube-proxy), and the features it exercises are recorded, so a
//! run can say what it covered.
//!
//! The same seed, release and index always give the same case. Values are drawn from small
//! pools on purpose (a few addresses, ports and names), so objects collide, update each other
//! and fill small ranges often; invalid values of every kind the validators check are mixed in
//! at a fixed rate.

use std::collections::BTreeSet;

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng as _, SeedableRng as _};
use serde_json::{Map, Value, json};

/// One generated case.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// `seed-S-N`: enough to generate it again.
    pub id: String,
    /// The objects, in stream order.
    pub objects: Vec<Value>,
    /// The features the case exercises (see [`FEATURES`]).
    pub features: BTreeSet<&'static str>,
}

/// Every feature a case can record, in the order a coverage table lists them.
pub const FEATURES: &[&str] = &[
    "type:ClusterIP",
    "type:NodePort",
    "type:LoadBalancer",
    "type:ExternalName",
    "headless",
    "dual-stack cluster",
    "IPv6-only cluster",
    "small range",
    "requested ClusterIP (static band)",
    "requested ClusterIP (dynamic band)",
    "requested ClusterIP (taken or out of range)",
    "clusterIPs (two families)",
    "ipFamilyPolicy:SingleStack",
    "ipFamilyPolicy:PreferDualStack",
    "ipFamilyPolicy:RequireDualStack",
    "ipFamilies",
    "requested nodePort",
    "healthCheckNodePort",
    "externalTrafficPolicy:Local",
    "internalTrafficPolicy:Local",
    "sessionAffinity:ClientIP",
    "topology annotation",
    "trafficDistribution",
    "named targetPort",
    "mixed protocols",
    "SCTP",
    "appProtocol",
    "loadBalancerSourceRanges",
    "loadBalancerIP",
    "loadBalancerClass",
    "allocateLoadBalancerNodePorts:false",
    "externalIPs",
    "ipMode",
    "publishNotReadyAddresses",
    "ServiceCIDR objects",
    "feature gate",
    "update",
    "type change",
    "delete",
    "invalid value",
    "unknown field",
    "EndpointSlice",
    "EndpointSlice IPv6",
    "EndpointSlice FQDN",
    "terminating endpoint",
    "not-serving endpoint",
    "topology hints",
    "nodeName",
    "EndpointSlice invalid value",
    "proxy: masqueradeAll",
    "proxy: masqueradeBit",
    "proxy: detectLocalMode ClusterCIDR",
    "proxy: detectLocalMode NodeCIDR",
    "proxy: detectLocalMode BridgeInterface",
    "proxy: detectLocalMode InterfaceNamePrefix",
    "proxy: nodePortAddresses",
    "proxy: localhostNodePorts false",
    "proxy: tcpBeLiberal",
    "proxy: hostnameOverride",
    "proxy: random-fully host",
    "proxy: nfacct host",
    "proxy: interfaceAddresses",
    "proxy: LB ingress",
    "proxy: local endpoints",
    "proxy: endpoints on other nodes",
    "proxy: named target port",
    "proxy: no endpoints",
    "proxy: invalid configuration",
];

/// What to render a kube-proxy case as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyRun {
    /// `iptables` or `nftables`.
    pub mode: &'static str,
    /// `IPv4` or `IPv6`.
    pub family: &'static str,
    /// The node kube-proxy runs on.
    pub node: String,
}

/// The kube-apiserver case `index` of `seed` for Kubernetes 1.`minor`: a ClusterProfile (with
/// first-fit picks, as the oracle's allocators pick), sometimes ServiceCIDR objects, then 1 to
/// 12 Service and EndpointSlice documents.
pub fn apiserver_case(seed: u64, minor: u32, index: u64) -> Case {
    let mut g = Gen::new(seed, minor, index);
    let mut objects = vec![g.cluster_profile()];
    if minor >= 33 && g.chance(0.1) {
        g.feature("ServiceCIDR objects");
        objects.push(g.service_cidr());
    }
    let documents = 1 + g.below(12) as usize;
    let mut written: Vec<Value> = Vec::new();
    for _ in 0..documents {
        let object = if !written.is_empty() && g.chance(0.25) {
            let earlier = written[g.below(written.len() as u64) as usize].clone();
            g.rewrite(earlier)
        } else if g.chance(0.3) {
            g.endpoint_slice()
        } else {
            g.service()
        };
        written.push(object.clone());
        objects.push(object);
    }
    Case { id: format!("seed-{seed}-{index}"), objects, features: g.features }
}

/// The kube-proxy case `index` of `seed` for Kubernetes 1.`minor`: a ClusterProfile with host
/// facts, a KubeProxyConfiguration, two Nodes, and 1 to 6 Services as the apiserver stores them
/// (every address and port filled in) with their EndpointSlices; and the runs it is rendered in
/// (every mode the release has, every family of the cluster, on `node-a`).
pub fn proxy_case(seed: u64, minor: u32, index: u64) -> (Case, Vec<ProxyRun>) {
    let mut g = Gen::new(seed ^ 0x9e37_79b9_7f4a_7c15, minor, index);
    let mut p = Proxy::default();
    let mut objects = vec![g.proxy_profile(), g.kube_proxy_configuration()];
    objects.extend(g.nodes());
    for i in 0..1 + g.below(6) {
        let (service, slices) = g.stored_service(&mut p, i);
        objects.push(service);
        objects.extend(slices);
    }
    let modes: &[&'static str] =
        if minor >= 29 { &["iptables", "nftables"] } else { &["iptables"] };
    let mut runs = Vec::new();
    for mode in modes {
        for family in &g.families {
            runs.push(ProxyRun { mode, family: family.name(), node: "node-a".to_owned() });
        }
    }
    (Case { id: format!("seed-{seed}-{index}"), objects, features: g.features }, runs)
}

/// What the Services of a kube-proxy case have taken.
#[derive(Default)]
struct Proxy {
    node_ports: BTreeSet<u32>,
}

/// A small deterministic source with the feature record of the case it draws.
struct Gen {
    rng: ChaCha8Rng,
    minor: u32,
    features: BTreeSet<&'static str>,
    /// The cluster's families, primary first.
    families: Vec<Family>,
    /// Whether the profile's range is small (a /28 or /124): picks run out.
    small: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    V4,
    V6,
}

impl Family {
    fn name(self) -> &'static str {
        match self {
            Family::V4 => "IPv4",
            Family::V6 => "IPv6",
        }
    }
}

/// How often a value is deliberately invalid.
const INVALID: f64 = 0.08;

impl Gen {
    fn new(seed: u64, minor: u32, index: u64) -> Gen {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(index);
        Gen { rng, minor, features: BTreeSet::new(), families: vec![Family::V4], small: false }
    }

    fn below(&mut self, n: u64) -> u64 {
        if n <= 1 { 0 } else { self.rng.next_u64() % n }
    }

    fn chance(&mut self, p: f64) -> bool {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    fn pick<T: Clone>(&mut self, values: &[T]) -> T {
        values[self.below(values.len() as u64) as usize].clone()
    }

    fn feature(&mut self, name: &'static str) {
        debug_assert!(FEATURES.contains(&name), "{name} is not in FEATURES");
        self.features.insert(name);
    }

    /// `value`, or now and then one of the invalid ones (recorded as an invalid value).
    fn or_invalid(&mut self, value: Value, invalid: &[Value]) -> Value {
        if !invalid.is_empty() && self.chance(INVALID) {
            self.feature("invalid value");
            self.pick(invalid)
        } else {
            value
        }
    }

    fn cluster_profile(&mut self) -> Value {
        let mut profile = json!({
            "apiVersion": "svclab.dev/v1alpha1",
            "kind": "ClusterProfile",
            "kubernetesVersion": format!("1.{}", self.minor),
            "dynamicPicks": "FirstFit",
        });
        let ranges: Vec<&str> = match self.below(10) {
            0..=4 => vec!["10.96.0.0/12"],
            5 => {
                self.small = true;
                self.feature("small range");
                vec!["10.96.0.0/28"]
            }
            6 => {
                self.feature("small range");
                vec!["10.96.0.0/24"]
            }
            7 | 8 => {
                self.families = vec![Family::V4, Family::V6];
                self.feature("dual-stack cluster");
                vec!["10.96.0.0/16", "fd00:10:96::/112"]
            }
            _ => {
                self.families = vec![Family::V6];
                self.feature("IPv6-only cluster");
                vec!["fd00:10:96::/112"]
            }
        };
        profile["serviceClusterIPRanges"] = json!(ranges);
        if self.chance(0.15) {
            profile["serviceNodePortRange"] = json!("30000-30040");
        }
        if let Some(gate) = self.settable_gate() {
            self.feature("feature gate");
            profile["featureGates"] = json!({ gate: self.chance(0.5) });
        }
        profile
    }

    /// A gate that changes Service handling and that the release lets one set either way.
    fn settable_gate(&mut self) -> Option<&'static str> {
        if !self.chance(0.2) {
            return None;
        }
        let gates: &[&str] = match self.minor {
            24 => &[
                "ServiceIPStaticSubrange",
                "MixedProtocolLBService",
                "ServiceInternalTrafficPolicy",
            ],
            25 => &["ServiceIPStaticSubrange", "MixedProtocolLBService"],
            26 => &["MixedProtocolLBService"],
            27 => &["ServiceNodePortStaticSubrange"],
            28 => &["ServiceNodePortStaticSubrange"],
            29 | 30 => &["LoadBalancerIPMode"],
            31 | 32 => &["LoadBalancerIPMode", "ServiceTrafficDistribution"],
            _ => &["StrictIPCIDRValidation"],
        };
        Some(self.pick(gates))
    }

    fn service_cidr(&mut self) -> Value {
        let family = self.families[0];
        let cidr = match family {
            Family::V4 => self.pick(&["10.100.0.0/24", "10.96.0.0/12", "192.168.10.0/28"]),
            Family::V6 => self.pick(&["fd00:10:100::/112", "fd00:10:96::/112"]),
        };
        json!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "ServiceCIDR",
            "metadata": {"name": self.pick(&["extra", "more"])},
            "spec": {"cidrs": [cidr]},
        })
    }

    fn name(&mut self) -> String {
        let name = self.pick(&["web", "api", "db", "dns", "cache", "edge"]);
        self.or_invalid(json!(name), &[json!("Web_1"), json!(""), json!("a".repeat(64))])
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    fn metadata(&mut self) -> Value {
        let mut meta = json!({"name": self.name()});
        if self.chance(0.3) {
            meta["namespace"] = json!(self.pick(&["default", "shop", "kube-system"]));
        }
        meta
    }

    /// An address of the family: in the static band, the dynamic band, or elsewhere.
    fn address(&mut self, family: Family) -> String {
        let (static_band, dynamic_band, outside): (&[&str], &[&str], &[&str]) = match family {
            Family::V4 => (
                &["10.96.0.10", "10.96.0.11", "10.96.0.2"],
                &["10.96.1.1", "10.96.1.2", "10.96.200.7"],
                &["10.97.0.1", "192.168.0.1", "10.96.0.0"],
            ),
            Family::V6 => (
                &["fd00:10:96::a", "fd00:10:96::b"],
                &["fd00:10:96::101", "fd00:10:96::ff01"],
                &["fd00:10:97::1", "fd00:10:96::"],
            ),
        };
        match self.below(10) {
            0..=4 => {
                self.feature("requested ClusterIP (static band)");
                self.pick(static_band).to_owned()
            }
            5..=7 => {
                self.feature("requested ClusterIP (dynamic band)");
                self.pick(dynamic_band).to_owned()
            }
            _ => {
                self.feature("requested ClusterIP (taken or out of range)");
                self.pick(outside).to_owned()
            }
        }
    }

    fn service(&mut self) -> Value {
        let type_ =
            self.pick(&["ClusterIP", "ClusterIP", "NodePort", "LoadBalancer", "ExternalName"]);
        let mut spec = Map::new();
        let explicit_type = type_ != "ClusterIP" || self.chance(0.5);
        if explicit_type {
            let t = self.or_invalid(json!(type_), &[json!("Bogus"), json!("clusterip")]);
            spec.insert("type".into(), t);
        }
        match type_ {
            "ClusterIP" => self.feature("type:ClusterIP"),
            "NodePort" => self.feature("type:NodePort"),
            "LoadBalancer" => self.feature("type:LoadBalancer"),
            _ => self.feature("type:ExternalName"),
        }
        if type_ == "ExternalName" {
            let external = self.pick(&["db.example.com", "my.db", "10.1.2.3", "Bad_Name"]);
            spec.insert("externalName".into(), json!(external));
        } else {
            spec.insert("selector".into(), json!({"app": self.pick(&["web", "api"])}));
        }
        let ports = self.ports(type_);
        spec.insert("ports".into(), ports);
        if type_ != "ExternalName" {
            self.cluster_ips(&mut spec);
        }
        if matches!(type_, "NodePort" | "LoadBalancer") {
            self.external_policy(&mut spec, type_);
        }
        if type_ == "LoadBalancer" {
            self.load_balancer(&mut spec);
        }
        self.optional_fields(&mut spec, type_);
        let mut service = json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": self.metadata(),
            "spec": spec,
        });
        if self.chance(0.15) {
            self.feature("topology annotation");
            let (key, value) = self.pick(&[
                ("service.kubernetes.io/topology-aware-hints", "Auto"),
                ("service.kubernetes.io/topology-mode", "Auto"),
                ("service.kubernetes.io/topology-mode", "bogus"),
            ]);
            service["metadata"]["annotations"] = json!({ key: value });
        }
        if type_ == "LoadBalancer" && self.chance(0.2) {
            self.feature("ipMode");
            let ip = match self.families[0] {
                Family::V4 => "203.0.113.5",
                Family::V6 => "2001:db8::5",
            };
            let mode = self.pick(&["VIP", "Proxy"]);
            service["status"] = json!({"loadBalancer": {"ingress": [{"ip": ip, "ipMode": mode}]}});
        }
        if self.chance(0.05) {
            self.feature("unknown field");
            service["spec"]["bogusField"] = json!(1);
        }
        service
    }

    fn ports(&mut self, type_: &str) -> Value {
        let count = 1 + self.below(3) as usize;
        let mut ports = Vec::new();
        let mut protocols = BTreeSet::new();
        for i in 0..count {
            let mut port = Map::new();
            if count > 1 || self.chance(0.3) {
                let name = self.pick(&["http", "https", "dns", "metrics"]);
                let name = if i > 0 && name == "http" { "grpc" } else { name };
                port.insert(
                    "name".into(),
                    self.or_invalid(json!(name), &[json!("HTTP"), json!("http")]),
                );
            }
            let number = self.pick(&[80, 443, 53, 8080, 9090]);
            port.insert("port".into(), self.or_invalid(json!(number), &[json!(0), json!(70000)]));
            let protocol = match self.below(10) {
                0..=6 => "TCP",
                7 | 8 => "UDP",
                _ => {
                    self.feature("SCTP");
                    "SCTP"
                }
            };
            protocols.insert(protocol);
            if protocol != "TCP" || self.chance(0.3) {
                port.insert("protocol".into(), self.or_invalid(json!(protocol), &[json!("tcp")]));
            }
            if self.chance(0.4) {
                let target = if self.chance(0.5) {
                    self.feature("named targetPort");
                    json!(self.pick(&["http", "web", "Bad_Port"]))
                } else {
                    json!(self.pick(&[8080, 9376, 0]))
                };
                port.insert("targetPort".into(), target);
            }
            if matches!(type_, "NodePort" | "LoadBalancer") && self.chance(0.3) {
                self.feature("requested nodePort");
                let node_port = self.pick(&[30000, 30010, 30080, 30090, 32767, 30100, 40000]);
                port.insert("nodePort".into(), json!(node_port));
            } else if type_ == "ClusterIP" && self.chance(INVALID) {
                self.feature("invalid value");
                port.insert("nodePort".into(), json!(30080));
            }
            if self.chance(0.1) {
                self.feature("appProtocol");
                let app = self.pick(&["http", "kubernetes.io/h2c", "bad/ap/p"]);
                port.insert("appProtocol".into(), json!(app));
            }
            ports.push(Value::Object(port));
        }
        if protocols.len() > 1 {
            self.feature("mixed protocols");
        }
        Value::Array(ports)
    }

    fn cluster_ips(&mut self, spec: &mut Map<String, Value>) {
        match self.below(12) {
            0 => {
                self.feature("headless");
                spec.insert("clusterIP".into(), json!("None"));
            }
            1..=4 => {
                let family = self.pick(&self.families.clone());
                let ip = self.address(family);
                let ip = self.or_invalid(
                    json!(ip),
                    &[json!("10.96.0.010"), json!("not-an-ip"), json!("10.96.0.256")],
                );
                spec.insert("clusterIP".into(), ip);
            }
            5 if self.families.len() > 1 => {
                self.feature("clusterIPs (two families)");
                let a = self.address(Family::V4);
                let b = self.address(Family::V6);
                let (first, second) = if self.chance(0.5) { (a, b) } else { (b, a) };
                spec.insert("clusterIPs".into(), json!([first, second]));
                spec.insert("ipFamilyPolicy".into(), json!("PreferDualStack"));
            }
            _ => {}
        }
        if self.chance(0.3) {
            let policy = self.pick(&["SingleStack", "PreferDualStack", "RequireDualStack"]);
            match policy {
                "SingleStack" => self.feature("ipFamilyPolicy:SingleStack"),
                "PreferDualStack" => self.feature("ipFamilyPolicy:PreferDualStack"),
                _ => self.feature("ipFamilyPolicy:RequireDualStack"),
            }
            let policy = self.or_invalid(json!(policy), &[json!("DualStack")]);
            spec.insert("ipFamilyPolicy".into(), policy);
        }
        if self.chance(0.2) {
            self.feature("ipFamilies");
            let families = match self.below(4) {
                0 => json!(["IPv4"]),
                1 => json!(["IPv6"]),
                2 => json!(["IPv6", "IPv4"]),
                _ => json!(["IPv4", "IPv6"]),
            };
            spec.insert("ipFamilies".into(), families);
        }
    }

    fn external_policy(&mut self, spec: &mut Map<String, Value>, type_: &str) {
        if self.chance(0.3) {
            self.feature("externalTrafficPolicy:Local");
            let policy = self.or_invalid(json!("Local"), &[json!("local")]);
            spec.insert("externalTrafficPolicy".into(), policy);
            if type_ == "LoadBalancer" && self.chance(0.4) {
                self.feature("healthCheckNodePort");
                spec.insert("healthCheckNodePort".into(), json!(self.pick(&[30020, 30080, 31000])));
            }
        }
    }

    fn load_balancer(&mut self, spec: &mut Map<String, Value>) {
        if self.chance(0.3) {
            self.feature("loadBalancerSourceRanges");
            let ranges = self.pick(&[
                json!(["10.0.0.0/8"]),
                json!(["10.0.0.0/8", "192.168.1.0/24"]),
                json!(["0.0.0.0/0"]),
                json!(["10.0.0.1/8"]),
                json!(["2001:db8::/32"]),
                json!(["bogus"]),
            ]);
            spec.insert("loadBalancerSourceRanges".into(), ranges);
        }
        if self.chance(0.15) {
            self.feature("loadBalancerIP");
            spec.insert(
                "loadBalancerIP".into(),
                json!(self.pick(&["1.2.3.4", "1.2.3.004", "bad"])),
            );
        }
        if self.chance(0.15) {
            self.feature("loadBalancerClass");
            let class = self.pick(&["example.com/lb", "internal", "Bad Class"]);
            spec.insert("loadBalancerClass".into(), json!(class));
        }
        if self.chance(0.2) {
            self.feature("allocateLoadBalancerNodePorts:false");
            spec.insert("allocateLoadBalancerNodePorts".into(), json!(false));
        }
    }

    fn optional_fields(&mut self, spec: &mut Map<String, Value>, type_: &str) {
        if self.chance(0.15) {
            self.feature("externalIPs");
            let ips = self.pick(&[
                json!(["203.0.113.10"]),
                json!(["203.0.113.010"]),
                json!(["0.0.0.0"]),
                json!(["2001:db8::10"]),
                json!(["127.0.0.1"]),
            ]);
            spec.insert("externalIPs".into(), ips);
        }
        if self.chance(0.15) {
            self.feature("internalTrafficPolicy:Local");
            let policy = self.or_invalid(json!("Local"), &[json!("Bogus")]);
            spec.insert("internalTrafficPolicy".into(), policy);
        }
        if self.chance(0.15) {
            self.feature("sessionAffinity:ClientIP");
            spec.insert("sessionAffinity".into(), json!("ClientIP"));
            if self.chance(0.5) {
                let timeout = self.pick(&[10800, 86400, 0, 86401]);
                spec.insert(
                    "sessionAffinityConfig".into(),
                    json!({"clientIP": {"timeoutSeconds": timeout}}),
                );
            }
        }
        if self.chance(0.1) {
            self.feature("trafficDistribution");
            let value = self.pick(&["PreferClose", "PreferSameZone", "PreferSameNode", "Bogus"]);
            spec.insert("trafficDistribution".into(), json!(value));
        }
        if self.chance(0.1) {
            self.feature("publishNotReadyAddresses");
            spec.insert("publishNotReadyAddresses".into(), json!(true));
        }
        if type_ == "ClusterIP" && self.chance(INVALID) {
            self.feature("invalid value");
            spec.insert("externalTrafficPolicy".into(), json!("Local"));
        }
    }

    /// An update or delete of an earlier document (or a re-write of a refused one).
    fn rewrite(&mut self, mut earlier: Value) -> Value {
        let is_service = earlier["kind"] == "Service";
        if is_service && self.chance(0.3) {
            self.feature("delete");
            earlier["metadata"]["annotations"] = json!({"svclab.dev/operation": "delete"});
            return earlier;
        }
        self.feature("update");
        if !is_service {
            let fresh = self.endpoint_slice();
            earlier["endpoints"] = fresh["endpoints"].clone();
            return earlier;
        }
        let spec = &mut earlier["spec"];
        match self.below(5) {
            0 => {
                self.feature("type change");
                let type_ = self.pick(&["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"]);
                spec["type"] = json!(type_);
                if type_ == "ExternalName" {
                    spec["externalName"] = json!("db.example.com");
                }
            }
            1 => spec["ports"] = self.ports("NodePort"),
            2 => {
                let ip = self.address(self.families[0]);
                spec["clusterIP"] = json!(ip);
            }
            3 => spec["ipFamilyPolicy"] = json!(self.pick(&["SingleStack", "PreferDualStack"])),
            _ => spec["sessionAffinity"] = json!(self.pick(&["None", "ClientIP"])),
        }
        earlier
    }

    fn endpoint_slice(&mut self) -> Value {
        self.feature("EndpointSlice");
        let address_type = match self.below(10) {
            0..=6 => self.families[0].name(),
            7 => {
                self.feature("EndpointSlice IPv6");
                "IPv6"
            }
            8 => {
                self.feature("EndpointSlice FQDN");
                "FQDN"
            }
            _ => {
                self.feature("EndpointSlice invalid value");
                self.pick(&["IP", "Bogus", "IPv4"])
            }
        };
        let pools: &[&str] = match address_type {
            "IPv6" => &["fd00:10:244::5", "fd00:10:244::6", "::ffff:10.0.0.1", "10.244.1.5"],
            "FQDN" => &["db.example.com", "a", "Bad_Host.example.com"],
            _ => &[
                "10.244.1.5",
                "10.244.2.6",
                "10.244.1.7",
                "10.244.1.05",
                "fd00::5",
                "0.0.0.0",
                "bogus",
            ],
        };
        let count = self.below(4) as usize;
        let mut endpoints = Vec::new();
        for _ in 0..count {
            let address = self.pick(pools);
            let mut endpoint = json!({"addresses": [address]});
            if self.chance(0.05) {
                self.feature("EndpointSlice invalid value");
                endpoint["addresses"] = json!([]);
            }
            if self.chance(0.4) {
                let (ready, serving, terminating) = self.pick(&[
                    (true, true, false),
                    (false, true, true),
                    (false, false, true),
                    (false, false, false),
                ]);
                if terminating {
                    self.feature("terminating endpoint");
                }
                if !serving {
                    self.feature("not-serving endpoint");
                }
                endpoint["conditions"] =
                    json!({"ready": ready, "serving": serving, "terminating": terminating});
            }
            if self.chance(0.4) {
                self.feature("nodeName");
                endpoint["nodeName"] = json!(self.pick(&["node-a", "node-b", "Node_C"]));
            }
            if self.chance(0.2) {
                self.feature("topology hints");
                endpoint["zone"] = json!("zone-a");
                endpoint["hints"] = if self.chance(0.5) {
                    json!({"forZones": [{"name": "zone-a"}]})
                } else {
                    json!({"forZones": [{"name": "zone-a"}], "forNodes": [{"name": "node-a"}]})
                };
            }
            endpoints.push(endpoint);
        }
        let mut ports = Vec::new();
        for _ in 0..self.below(3) {
            let mut port = json!({"port": self.pick(&[8080, 9376, 53])});
            if self.chance(0.7) {
                port["name"] = json!(self.pick(&["http", "dns", "", "Bad_Name"]));
            }
            if self.chance(0.8) {
                port["protocol"] = json!(self.pick(&["TCP", "UDP", "SCTP", "tcp"]));
            }
            ports.push(port);
        }
        let mut slice = json!({
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": self.pick(&["web-abcde", "web-fghij", "api-klmno", "Bad_Slice"]),
                "labels": {"kubernetes.io/service-name": self.pick(&["web", "api"])},
            },
            "addressType": address_type,
            "endpoints": endpoints,
            "ports": ports,
        });
        if self.chance(0.3) {
            slice["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] =
                json!(self.pick(&["endpointslice-controller.k8s.io", "my-controller"]));
        }
        slice
    }
}

impl Gen {
    fn proxy_profile(&mut self) -> Value {
        let ranges: Vec<&str> = match self.below(10) {
            0..=6 => vec!["10.96.0.0/16"],
            7 | 8 => {
                self.families = vec![Family::V4, Family::V6];
                self.feature("dual-stack cluster");
                vec!["10.96.0.0/16", "fd00:10:96::/112"]
            }
            _ => {
                self.families = vec![Family::V6];
                self.feature("IPv6-only cluster");
                vec!["fd00:10:96::/112"]
            }
        };
        let mut host = Map::new();
        if self.chance(0.3) {
            self.feature("proxy: random-fully host");
            host.insert("iptablesRandomFully".into(), json!(true));
        }
        if self.chance(0.2) {
            self.feature("proxy: nfacct host");
            host.insert("nfacct".into(), json!(true));
        }
        if self.chance(0.3) {
            self.feature("proxy: interfaceAddresses");
            host.insert(
                "interfaceAddresses".into(),
                json!(["127.0.0.1/8", "::1/128", "192.168.0.10/24", "fd00:192:168::10/64"]),
            );
        }
        json!({
            "apiVersion": "svclab.dev/v1alpha1",
            "kind": "ClusterProfile",
            "kubernetesVersion": format!("1.{}", self.minor),
            "serviceClusterIPRanges": ranges,
            "host": host,
        })
    }

    fn kube_proxy_configuration(&mut self) -> Value {
        let mut kpc = json!({
            "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
            "kind": "KubeProxyConfiguration",
        });
        let cidr = match self.families.as_slice() {
            [Family::V4] => "10.244.0.0/16",
            [Family::V6] => "fd00:10:244::/64",
            _ => "10.244.0.0/16,fd00:10:244::/64",
        };
        match self.below(8) {
            0..=3 => {
                self.feature("proxy: detectLocalMode ClusterCIDR");
                kpc["clusterCIDR"] = json!(cidr);
            }
            4 => {
                self.feature("proxy: detectLocalMode NodeCIDR");
                kpc["detectLocalMode"] = json!("NodeCIDR");
                kpc["clusterCIDR"] = json!(cidr);
            }
            5 => {
                self.feature("proxy: detectLocalMode BridgeInterface");
                kpc["detectLocalMode"] = json!("BridgeInterface");
                kpc["detectLocal"] = json!({"bridgeInterface": "cbr0"});
            }
            6 => {
                self.feature("proxy: detectLocalMode InterfaceNamePrefix");
                kpc["detectLocalMode"] = json!("InterfaceNamePrefix");
                kpc["detectLocal"] = json!({"interfaceNamePrefix": "veth"});
            }
            _ => {}
        }
        if self.chance(0.15) {
            self.feature("proxy: masqueradeAll");
            kpc["iptables"]["masqueradeAll"] = json!(true);
        }
        if self.chance(0.15) {
            self.feature("proxy: masqueradeBit");
            kpc["iptables"]["masqueradeBit"] = json!(self.pick(&[9, 30]));
        }
        if self.chance(0.15) {
            self.feature("proxy: localhostNodePorts false");
            kpc["iptables"]["localhostNodePorts"] = json!(false);
        }
        if self.chance(0.2) {
            self.feature("proxy: nodePortAddresses");
            let addresses = self.pick(&[
                json!(["192.168.0.0/24"]),
                json!(["127.0.0.0/8"]),
                json!(["192.168.0.0/24", "fd00:192:168::/64"]),
                json!(["primary"]),
            ]);
            kpc["nodePortAddresses"] = addresses;
        }
        if self.chance(0.15) {
            self.feature("proxy: tcpBeLiberal");
            kpc["conntrack"] = json!({"tcpBeLiberal": true});
        }
        if self.chance(0.1) {
            self.feature("proxy: hostnameOverride");
            kpc["hostnameOverride"] = json!("Node-A");
        }
        if self.chance(0.04) {
            self.feature("proxy: invalid configuration");
            kpc["iptables"]["masqueradeBit"] = json!(32);
        }
        kpc
    }

    fn nodes(&mut self) -> Vec<Value> {
        let node = |name: &str, last: u8, zone: &str, families: &[Family]| {
            let mut addresses = Vec::new();
            let mut pod_cidrs = Vec::new();
            for family in families {
                match family {
                    Family::V4 => {
                        addresses.push(
                            json!({"type": "InternalIP", "address": format!("192.168.0.{last}")}),
                        );
                        pod_cidrs.push(json!(format!("10.244.{last}.0/24")));
                    }
                    Family::V6 => {
                        addresses.push(json!({"type": "InternalIP", "address": format!("fd00:192:168::{last}")}));
                        pod_cidrs.push(json!(format!("fd00:10:244:{last}::/64")));
                    }
                }
            }
            json!({
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
                "spec": {"podCIDR": pod_cidrs[0], "podCIDRs": pod_cidrs},
                "status": {"addresses": addresses},
            })
        };
        let families = self.families.clone();
        vec![node("node-a", 10, "zone-a", &families), node("node-b", 11, "zone-b", &families)]
    }

    /// One Service as the apiserver stores it, and its EndpointSlices (one per family).
    fn stored_service(&mut self, p: &mut Proxy, i: u64) -> (Value, Vec<Value>) {
        let name = format!("svc-{i}");
        let namespace = self.pick(&["default", "shop"]);
        let type_ = self.pick(&["ClusterIP", "ClusterIP", "NodePort", "LoadBalancer"]);
        match type_ {
            "ClusterIP" => self.feature("type:ClusterIP"),
            "NodePort" => self.feature("type:NodePort"),
            _ => self.feature("type:LoadBalancer"),
        }
        let dual = self.families.len() > 1 && self.chance(0.5);
        let families: Vec<Family> =
            if dual { self.families.clone() } else { vec![self.families[0]] };
        let ips: Vec<String> = families
            .iter()
            .map(|f| match f {
                Family::V4 => format!("10.96.{}.{}", i / 200, 10 + i % 200),
                Family::V6 => format!("fd00:10:96::{:x}", 0x10 + i),
            })
            .collect();
        let mut ports = Vec::new();
        let named = self.chance(0.4);
        let protocols = if self.chance(0.15) {
            self.feature("mixed protocols");
            vec!["TCP", "UDP"]
        } else {
            vec![self.pick(&["TCP", "TCP", "UDP", "SCTP"])]
        };
        for (k, protocol) in protocols.iter().enumerate() {
            let port_name = if named || protocols.len() > 1 { ["http", "dns"][k] } else { "" };
            let mut port = json!({"port": 80 + k as u32 * 1000, "protocol": protocol});
            if !port_name.is_empty() {
                port["name"] = json!(port_name);
            }
            if named && self.chance(0.5) {
                self.feature("proxy: named target port");
                port["targetPort"] = json!("web");
            } else {
                port["targetPort"] = json!(8080 + k as u32);
            }
            if type_ != "ClusterIP" {
                port["nodePort"] = json!(self.node_port(p));
            }
            ports.push(port);
        }
        let mut spec = json!({
            "type": type_,
            "clusterIP": ips[0],
            "clusterIPs": ips,
            "ipFamilies": families.iter().map(|f| f.name()).collect::<Vec<_>>(),
            "ipFamilyPolicy": if dual { "RequireDualStack" } else { "SingleStack" },
            "selector": {"app": name},
            "ports": ports,
            "sessionAffinity": "None",
            "internalTrafficPolicy": "Cluster",
        });
        if type_ != "ClusterIP" {
            spec["externalTrafficPolicy"] = json!("Cluster");
            if self.chance(0.3) {
                self.feature("externalTrafficPolicy:Local");
                spec["externalTrafficPolicy"] = json!("Local");
                if type_ == "LoadBalancer" {
                    self.feature("healthCheckNodePort");
                    spec["healthCheckNodePort"] = json!(self.node_port(p));
                }
            }
        }
        if self.chance(0.15) {
            self.feature("internalTrafficPolicy:Local");
            spec["internalTrafficPolicy"] = json!("Local");
        }
        if self.chance(0.15) {
            self.feature("sessionAffinity:ClientIP");
            spec["sessionAffinity"] = json!("ClientIP");
            spec["sessionAffinityConfig"] =
                json!({"clientIP": {"timeoutSeconds": self.pick(&[10800, 300])}});
        }
        if self.chance(0.1) {
            self.feature("externalIPs");
            spec["externalIPs"] = json!([match families[0] {
                Family::V4 => "203.0.113.10",
                Family::V6 => "2001:db8::10",
            }]);
        }
        if type_ == "LoadBalancer" && self.chance(0.3) {
            self.feature("loadBalancerSourceRanges");
            spec["loadBalancerSourceRanges"] =
                self.pick(&[json!(["203.0.113.0/24"]), json!(["192.168.0.0/24", "10.0.0.0/8"])]);
        }
        if self.minor >= 31 && self.chance(0.1) {
            self.feature("trafficDistribution");
            spec["trafficDistribution"] = json!("PreferClose");
        }
        let mut service = json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": namespace},
            "spec": spec,
        });
        if self.chance(0.1) {
            self.feature("topology annotation");
            service["metadata"]["annotations"] =
                json!({"service.kubernetes.io/topology-mode": "Auto"});
        }
        if type_ == "LoadBalancer" && self.chance(0.6) {
            self.feature("proxy: LB ingress");
            let ip = match families[0] {
                Family::V4 => "198.51.100.7",
                Family::V6 => "2001:db8::7",
            };
            let mut ingress = json!({"ip": ip});
            if self.minor >= 29 && self.chance(0.3) {
                self.feature("ipMode");
                ingress["ipMode"] = json!(self.pick(&["VIP", "Proxy"]));
            }
            service["status"] = json!({"loadBalancer": {"ingress": [ingress]}});
        }
        let mut slices = Vec::new();
        if self.chance(0.15) {
            self.feature("proxy: no endpoints");
        } else {
            for family in &families {
                slices.push(self.stored_slice(&name, namespace, *family, &protocols, named, i));
            }
        }
        (service, slices)
    }

    fn node_port(&mut self, p: &mut Proxy) -> u32 {
        loop {
            let port = 30000 + self.below(2768) as u32;
            if p.node_ports.insert(port) {
                return port;
            }
        }
    }

    fn stored_slice(
        &mut self,
        service: &str,
        namespace: &str,
        family: Family,
        protocols: &[&str],
        named: bool,
        i: u64,
    ) -> Value {
        let mut endpoints = Vec::new();
        for k in 0..1 + self.below(3) {
            let node = if self.chance(0.5) { "node-a" } else { "node-b" };
            if node == "node-a" {
                self.feature("proxy: local endpoints");
            } else {
                self.feature("proxy: endpoints on other nodes");
            }
            let last = if node == "node-a" { 10 } else { 11 };
            let address = match family {
                Family::V4 => format!("10.244.{last}.{}", 2 + i * 4 + k),
                Family::V6 => format!("fd00:10:244:{last}::{:x}", 2 + i * 4 + k),
            };
            let (ready, serving, terminating) = self.pick(&[
                (true, true, false),
                (true, true, false),
                (false, true, true),
                (false, false, true),
            ]);
            if terminating {
                self.feature("terminating endpoint");
            }
            let mut endpoint = json!({
                "addresses": [address],
                "conditions": {"ready": ready, "serving": serving, "terminating": terminating},
                "nodeName": node,
                "zone": if node == "node-a" { "zone-a" } else { "zone-b" },
            });
            if self.chance(0.2) {
                self.feature("topology hints");
                endpoint["hints"] =
                    json!({"forZones": [{"name": self.pick(&["zone-a", "zone-b"])}]});
            }
            endpoints.push(endpoint);
        }
        let ports: Vec<Value> = protocols
            .iter()
            .enumerate()
            .map(|(k, protocol)| {
                let mut port = json!({"port": 8080 + k as u32, "protocol": protocol});
                if named || protocols.len() > 1 {
                    port["name"] = json!(["http", "dns"][k]);
                }
                port
            })
            .collect();
        json!({
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": format!("{service}-{}", family.name().to_lowercase()),
                "namespace": namespace,
                "labels": {"kubernetes.io/service-name": service, "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"},
            },
            "addressType": family.name(),
            "endpoints": endpoints,
            "ports": ports,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(seed: u64, minor: u32) {
        let cases: Vec<Case> = (0..200).map(|i| apiserver_case(seed, minor, i)).collect();
        let again: Vec<Case> = (0..200).map(|i| apiserver_case(seed, minor, i)).collect();
        assert_eq!(cases, again, "generation is deterministic");
        let covered: BTreeSet<&str> =
            cases.iter().flat_map(|c| c.features.iter().copied()).collect();
        let missing: Vec<&&str> = FEATURES
            .iter()
            .filter(|f| !f.starts_with("proxy: ") && !covered.contains(**f))
            .filter(|f| minor >= 33 || **f != "ServiceCIDR objects")
            .collect();
        assert!(missing.is_empty(), "200 cases at 1.{minor} never cover {missing:?}");
    }

    #[test]
    fn cases_are_deterministic_and_cover_every_feature() {
        check(1, 37);
        check(7, 24);
    }

    #[test]
    fn proxy_cases_cover_every_kube_proxy_setting_and_render_in_every_mode() {
        let cases: Vec<(Case, Vec<ProxyRun>)> = (0..300).map(|i| proxy_case(3, 33, i)).collect();
        assert_eq!(cases, (0..300).map(|i| proxy_case(3, 33, i)).collect::<Vec<_>>());
        let covered: BTreeSet<&str> =
            cases.iter().flat_map(|(c, _)| c.features.iter().copied()).collect();
        let missing: Vec<&&str> = FEATURES
            .iter()
            .filter(|f| f.starts_with("proxy: ") && !covered.contains(**f))
            .collect();
        assert!(missing.is_empty(), "300 proxy cases never cover {missing:?}");
        assert!(cases.iter().all(|(_, runs)| runs.iter().any(|r| r.mode == "nftables")));
        assert_eq!(proxy_case(3, 28, 0).1.iter().filter(|r| r.mode == "nftables").count(), 0);
    }
}
