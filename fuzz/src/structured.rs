//! The structure-aware scenario: `arbitrary` picks Services, EndpointSlices, Nodes, a
//! ClusterProfile and a KubeProxyConfiguration from pools of values that mean something to a
//! cluster (addresses inside and outside the ranges, every type and policy, terminating and
//! zoned endpoints, dual-stack), with a little junk in every pool, so fuzzing reaches
//! allocation, validation, rendering and tracing instead of stopping at the YAML reader.

use arbitrary::{Arbitrary, Unstructured};
use serde_json::{Map, Value, json};
use svclab_core::TraceRequest;

/// The YAML scenario and the extra packets to trace, or `None` when the bytes run out before a
/// scenario is built.
pub(crate) fn scenario(data: &[u8]) -> Option<(String, Vec<TraceRequest>)> {
    let mut u = Unstructured::new(data);
    let scenario = Scenario::arbitrary(&mut u).ok()?;
    let mut docs = Vec::new();
    if let Some(profile) = &scenario.profile {
        docs.push(profile.to_json());
    }
    if let Some(proxy) = &scenario.proxy {
        docs.push(proxy.to_json());
    }
    docs.extend(scenario.nodes.iter().take(3).map(Node::to_json));
    // Services and slices interleave the way a stream of `kubectl apply`s would.
    let services = scenario.services.iter().take(10).map(Service::to_json);
    let slices = scenario.slices.iter().take(10).map(Slice::to_json);
    let mut slices = slices.peekable();
    for service in services {
        docs.push(service);
        if let Some(slice) = slices.next() {
            docs.push(slice);
        }
    }
    docs.extend(slices);
    let mut yaml = String::new();
    for doc in &docs {
        yaml.push_str("---\n");
        yaml.push_str(&serde_norway::to_string(doc).ok()?);
    }
    let probes = scenario.probes.iter().take(4).map(Probe::request).collect();
    Some((yaml, probes))
}

fn pick<'a>(pool: &[&'a str], i: u8) -> &'a str {
    pool[usize::from(i) % pool.len()]
}

fn picks(pool: &[&str], is: &[u8], max: usize) -> Vec<Value> {
    is.iter().take(max).map(|&i| Value::from(pick(pool, i))).collect()
}

const NAMES: &[&str] = &["web", "db", "dns", "kubernetes", "a", "api-v2", "x.y", "Bad_Name", ""];
const NAMESPACES: &[&str] = &["default", "kube-system", "prod", "", "UPPER"];
const NODE_NAMES: &[&str] = &["node-a", "node-b", "", "node-c"];
const ZONES: &[&str] = &["zone-a", "zone-b", "", "zone-c"];
const ADDRESSES: &[&str] = &[
    "10.96.0.1",
    "10.96.0.10",
    "10.96.0.200",
    "10.96.255.254",
    "10.97.0.1",
    "010.096.000.005",
    "192.0.2.10",
    "203.0.113.9",
    "0.0.0.0",
    "10.96.0.0",
    "not-an-ip",
    "10.244.1.5",
    "10.244.2.7",
    "fd00:10:96::1",
    "fd00:10:96::a",
    "fd00:10:96::ffff",
    "fd00:10:244::5",
    "2001:db8::1",
    "::1",
    "127.0.0.1",
    "192.168.0.10",
    "",
];
const CIDRS: &[&str] = &[
    "10.96.0.0/24",
    "10.96.0.0/12",
    "10.96.0.0/28",
    "10.96.0.0/29",
    "10.96.0.0/30",
    "fd00:10:96::/108",
    "fd00:10:96::/64",
    "fd00::/48",
    "2001:db8::/112",
    "10.96.0.0/33",
    "10.244.0.0/16",
    "fd00:10:244::/56",
    "0.0.0.0/0",
    "junk",
];
const NODE_PORT_RANGES: &[&str] = &["30000-32767", "30000-30010", "80-90", "30000", "junk"];
const GATES: &[&str] = &[
    "ServiceIPStaticSubrange",
    "ServiceNodePortStaticSubrange",
    "MultiCIDRServiceAllocator",
    "DisableAllocatorDualWrite",
    "PreferSameTrafficDistribution",
    "TopologyAwareHints",
    "ServiceTrafficDistribution",
    "ServiceInternalTrafficPolicy",
    "EndpointSliceTerminatingCondition",
    "LoadBalancerIPMode",
    "AllowServiceLBStatusOnNonLB",
    "RelaxedServiceNameValidation",
    "StrictIPCIDRValidation",
    "MixedProtocolLBService",
    "NFTablesProxyMode",
    "ProxyTerminatingEndpoints",
    "KubeProxyDrainingTerminatingNodes",
    "MinimizeIPTablesRestore",
    "IPTablesOwnershipCleanup",
    "KubeProxyIPVS",
    "NoSuchGate",
];
const PROTOCOLS: &[&str] = &["TCP", "UDP", "SCTP", "", "tcp", "HTTP"];
const PORT_NAMES: &[&str] = &["", "http", "https", "dns", "Bad_Port", "metrics"];

#[derive(Arbitrary, Debug)]
struct Scenario {
    profile: Option<Profile>,
    proxy: Option<KubeProxy>,
    nodes: Vec<Node>,
    services: Vec<Service>,
    slices: Vec<Slice>,
    probes: Vec<Probe>,
}

#[derive(Arbitrary, Debug)]
struct Profile {
    minor: u8,
    gates: Vec<(u8, bool)>,
    ranges: Vec<u8>,
    node_port_range: Option<u8>,
    seed: Option<u8>,
    interface_addresses: Vec<u8>,
}

impl Profile {
    fn to_json(&self) -> Value {
        let version = match self.minor % 16 {
            15 => "junk".to_owned(),
            m => format!("1.{}", 24 + m.min(13)),
        };
        let gates: Map<String, Value> = self
            .gates
            .iter()
            .take(4)
            .map(|&(g, on)| (pick(GATES, g).to_owned(), on.into()))
            .collect();
        let mut profile = json!({
            "apiVersion": "svclab.dev/v1alpha1",
            "kind": "ClusterProfile",
            "kubernetesVersion": version,
            "featureGates": gates,
        });
        if !self.ranges.is_empty() {
            profile["serviceClusterIPRanges"] = picks(CIDRS, &self.ranges, 3).into();
        }
        if let Some(range) = self.node_port_range {
            profile["serviceNodePortRange"] = pick(NODE_PORT_RANGES, range).into();
        }
        if let Some(seed) = self.seed {
            profile["seed"] = seed.into();
        }
        if !self.interface_addresses.is_empty() {
            profile["host"] =
                json!({"interfaceAddresses": picks(ADDRESSES, &self.interface_addresses, 2)});
        }
        profile
    }
}

#[derive(Arbitrary, Debug)]
struct KubeProxy {
    mode: u8,
    cluster_cidr: Option<u8>,
    detect_local_mode: u8,
    masquerade_all: bool,
    masquerade_bit: Option<i8>,
    node_port_addresses: Vec<u8>,
    hostname_override: Option<u8>,
    localhost_node_ports: Option<bool>,
    /// kube-proxy's own `featureGates` (unknown and locked gates are startup errors).
    gates: Vec<(u8, bool)>,
}

impl KubeProxy {
    fn to_json(&self) -> Value {
        let mut config = json!({
            "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
            "kind": "KubeProxyConfiguration",
            "mode": pick(&["iptables", "nftables", "", "ipvs"], self.mode),
            "detectLocalMode": pick(&["", "ClusterCIDR", "NodeCIDR", "BridgeInterface", "InterfaceNamePrefix", "Junk"], self.detect_local_mode),
            "iptables": {"masqueradeAll": self.masquerade_all},
            "nftables": {"masqueradeAll": self.masquerade_all},
            "detectLocal": {"bridgeInterface": "cbr0", "interfaceNamePrefix": "veth"},
        });
        if let Some(cidr) = self.cluster_cidr {
            config["clusterCIDR"] = pick(CIDRS, cidr).into();
        }
        if let Some(bit) = self.masquerade_bit {
            config["iptables"]["masqueradeBit"] = bit.into();
        }
        if let Some(on) = self.localhost_node_ports {
            config["iptables"]["localhostNodePorts"] = on.into();
        }
        if !self.node_port_addresses.is_empty() {
            config["nodePortAddresses"] = picks(
                &["primary", "10.0.0.0/8", "192.168.0.0/16", "::/0", "127.0.0.0/8", "junk"],
                &self.node_port_addresses,
                2,
            )
            .into();
        }
        if let Some(name) = self.hostname_override {
            config["hostnameOverride"] = pick(NODE_NAMES, name).into();
        }
        if !self.gates.is_empty() {
            let gates: serde_json::Map<String, Value> = self
                .gates
                .iter()
                .take(3)
                .map(|&(g, on)| (pick(GATES, g).to_owned(), on.into()))
                .collect();
            config["featureGates"] = gates.into();
        }
        config
    }
}

#[derive(Arbitrary, Debug)]
struct Node {
    name: u8,
    zone: u8,
    addresses: Vec<u8>,
    pod_cidrs: Vec<u8>,
}

impl Node {
    fn to_json(&self) -> Value {
        let addresses: Vec<Value> = self
            .addresses
            .iter()
            .take(2)
            .map(|&a| json!({"type": "InternalIP", "address": pick(ADDRESSES, a)}))
            .collect();
        json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": pick(NODE_NAMES, self.name), "labels": {"topology.kubernetes.io/zone": pick(ZONES, self.zone)}},
            "spec": {"podCIDRs": picks(CIDRS, &self.pod_cidrs, 2)},
            "status": {"addresses": addresses},
        })
    }
}

/// A port number: mostly ones that matter, sometimes anything.
#[derive(Arbitrary, Debug)]
enum PortNumber {
    Common(u8),
    Any(u16),
    Wild(i32),
}

impl PortNumber {
    fn value(&self) -> Value {
        match *self {
            PortNumber::Common(i) => {
                const COMMON: &[i64] =
                    &[80, 443, 53, 8080, 30080, 30000, 32767, 0, 65535, 65536, -1];
                COMMON[usize::from(i) % COMMON.len()].into()
            }
            PortNumber::Any(n) => n.into(),
            PortNumber::Wild(n) => n.into(),
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Port {
    name: u8,
    port: PortNumber,
    protocol: u8,
    target_port: Option<PortNumber>,
    named_target: bool,
    node_port: Option<PortNumber>,
    app_protocol: bool,
}

impl Port {
    fn to_json(&self) -> Value {
        let mut port =
            json!({"port": self.port.value(), "protocol": pick(PROTOCOLS, self.protocol)});
        let name = pick(PORT_NAMES, self.name);
        if !name.is_empty() {
            port["name"] = name.into();
        }
        if self.named_target {
            port["targetPort"] = "http".into();
        } else if let Some(target) = &self.target_port {
            port["targetPort"] = target.value();
        }
        if let Some(node_port) = &self.node_port {
            port["nodePort"] = node_port.value();
        }
        if self.app_protocol {
            port["appProtocol"] = "kubernetes.io/h2c".into();
        }
        port
    }
}

#[derive(Arbitrary, Debug)]
struct Service {
    name: u8,
    namespace: u8,
    service_type: u8,
    cluster_ips: Vec<u8>,
    headless: bool,
    families: Vec<bool>,
    family_policy: u8,
    ports: Vec<Port>,
    selector: bool,
    external_traffic_policy: u8,
    internal_traffic_policy: u8,
    affinity: Option<i32>,
    external_ips: Vec<u8>,
    source_ranges: Vec<u8>,
    ingress: Vec<(u8, bool)>,
    allocate_node_ports: Option<bool>,
    health_check_node_port: Option<PortNumber>,
    traffic_distribution: u8,
    publish_not_ready: bool,
    delete: bool,
    load_balancer_class: bool,
}

impl Service {
    fn to_json(&self) -> Value {
        let mut metadata =
            json!({"name": pick(NAMES, self.name), "namespace": pick(NAMESPACES, self.namespace)});
        if self.delete {
            metadata["annotations"] = json!({"svclab.dev/operation": "delete"});
        }
        let mut spec = Map::new();
        let service_type = pick(
            &["", "ClusterIP", "NodePort", "LoadBalancer", "ExternalName", "Junk"],
            self.service_type,
        );
        if !service_type.is_empty() {
            spec.insert("type".into(), service_type.into());
        }
        if service_type == "ExternalName" {
            spec.insert("externalName".into(), "db.example.com".into());
        }
        if self.headless {
            spec.insert("clusterIP".into(), "None".into());
        } else if !self.cluster_ips.is_empty() {
            let ips = picks(ADDRESSES, &self.cluster_ips, 2);
            spec.insert("clusterIP".into(), ips[0].clone());
            spec.insert("clusterIPs".into(), ips.into());
        }
        if !self.families.is_empty() {
            let families: Vec<Value> = self
                .families
                .iter()
                .take(3)
                .map(|&v6| Value::from(if v6 { "IPv6" } else { "IPv4" }))
                .collect();
            spec.insert("ipFamilies".into(), families.into());
        }
        let policy = pick(
            &["", "SingleStack", "PreferDualStack", "RequireDualStack", "Junk"],
            self.family_policy,
        );
        if !policy.is_empty() {
            spec.insert("ipFamilyPolicy".into(), policy.into());
        }
        let ports: Vec<Value> = self.ports.iter().take(4).map(Port::to_json).collect();
        spec.insert("ports".into(), ports.into());
        if self.selector {
            spec.insert("selector".into(), json!({"app": pick(NAMES, self.name)}));
        }
        let traffic = ["", "Cluster", "Local", "Junk"];
        let etp = pick(&traffic, self.external_traffic_policy);
        if !etp.is_empty() {
            spec.insert("externalTrafficPolicy".into(), etp.into());
        }
        let itp = pick(&traffic, self.internal_traffic_policy);
        if !itp.is_empty() {
            spec.insert("internalTrafficPolicy".into(), itp.into());
        }
        if let Some(timeout) = self.affinity {
            spec.insert("sessionAffinity".into(), "ClientIP".into());
            spec.insert(
                "sessionAffinityConfig".into(),
                json!({"clientIP": {"timeoutSeconds": timeout}}),
            );
        }
        if !self.external_ips.is_empty() {
            spec.insert("externalIPs".into(), picks(ADDRESSES, &self.external_ips, 2).into());
        }
        if !self.source_ranges.is_empty() {
            spec.insert(
                "loadBalancerSourceRanges".into(),
                picks(CIDRS, &self.source_ranges, 2).into(),
            );
        }
        if let Some(allocate) = self.allocate_node_ports {
            spec.insert("allocateLoadBalancerNodePorts".into(), allocate.into());
        }
        if let Some(port) = &self.health_check_node_port {
            spec.insert("healthCheckNodePort".into(), port.value());
        }
        let distribution = pick(
            &["", "PreferClose", "PreferSameZone", "PreferSameNode", "Junk"],
            self.traffic_distribution,
        );
        if !distribution.is_empty() {
            spec.insert("trafficDistribution".into(), distribution.into());
        }
        if self.publish_not_ready {
            spec.insert("publishNotReadyAddresses".into(), true.into());
        }
        if self.load_balancer_class {
            spec.insert("loadBalancerClass".into(), "example.com/internal".into());
        }
        let mut service =
            json!({"apiVersion": "v1", "kind": "Service", "metadata": metadata, "spec": spec});
        if !self.ingress.is_empty() {
            let ingress: Vec<Value> = self
                .ingress
                .iter()
                .take(2)
                .map(|&(ip, proxy)| {
                    let mut entry = json!({"ip": pick(ADDRESSES, ip)});
                    if proxy {
                        entry["ipMode"] = "Proxy".into();
                    }
                    entry
                })
                .collect();
            service["status"] = json!({"loadBalancer": {"ingress": ingress}});
        }
        service
    }
}

#[derive(Arbitrary, Debug)]
struct Endpoint {
    addresses: Vec<u8>,
    ready: Option<bool>,
    serving: Option<bool>,
    terminating: Option<bool>,
    node: Option<u8>,
    zone: Option<u8>,
    for_zones: Vec<u8>,
    for_nodes: Vec<u8>,
}

impl Endpoint {
    fn to_json(&self) -> Value {
        let mut endpoint = json!({"addresses": picks(ADDRESSES, &self.addresses, 2)});
        let mut conditions = Map::new();
        for (name, value) in
            [("ready", self.ready), ("serving", self.serving), ("terminating", self.terminating)]
        {
            if let Some(value) = value {
                conditions.insert(name.into(), value.into());
            }
        }
        endpoint["conditions"] = conditions.into();
        if let Some(node) = self.node {
            endpoint["nodeName"] = pick(NODE_NAMES, node).into();
        }
        if let Some(zone) = self.zone {
            endpoint["zone"] = pick(ZONES, zone).into();
        }
        if !self.for_zones.is_empty() || !self.for_nodes.is_empty() {
            let named = |pool: &[&str], is: &[u8]| -> Vec<Value> {
                is.iter().take(2).map(|&i| json!({"name": pick(pool, i)})).collect()
            };
            endpoint["hints"] = json!({
                "forZones": named(ZONES, &self.for_zones),
                "forNodes": named(NODE_NAMES, &self.for_nodes),
            });
        }
        endpoint
    }
}

#[derive(Arbitrary, Debug)]
struct SlicePort {
    name: u8,
    port: Option<PortNumber>,
    protocol: u8,
}

#[derive(Arbitrary, Debug)]
struct Slice {
    name: u8,
    namespace: u8,
    service: u8,
    address_type: u8,
    endpoints: Vec<Endpoint>,
    ports: Vec<SlicePort>,
}

impl Slice {
    fn to_json(&self) -> Value {
        let service = pick(NAMES, self.service);
        let ports: Vec<Value> = self
            .ports
            .iter()
            .take(3)
            .map(|p| {
                let mut port = json!({"name": pick(PORT_NAMES, p.name), "protocol": pick(PROTOCOLS, p.protocol)});
                if let Some(number) = &p.port {
                    port["port"] = number.value();
                }
                port
            })
            .collect();
        json!({
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": format!("{service}-{}", self.name % 4),
                "namespace": pick(NAMESPACES, self.namespace),
                "labels": {"kubernetes.io/service-name": service},
            },
            "addressType": pick(&["IPv4", "IPv6", "FQDN", "Junk"], self.address_type),
            "endpoints": self.endpoints.iter().take(4).map(Endpoint::to_json).collect::<Vec<_>>(),
            "ports": ports,
        })
    }
}

#[derive(Arbitrary, Debug)]
struct Probe {
    src: u8,
    dst: u8,
    dport: PortNumber,
    protocol: u8,
}

impl Probe {
    fn request(&self) -> TraceRequest {
        let dport = self.dport.value().as_u64().and_then(|p| u16::try_from(p).ok()).unwrap_or(0);
        TraceRequest {
            src: pick(ADDRESSES, self.src).to_owned(),
            dst: pick(ADDRESSES, self.dst).to_owned(),
            dport,
            protocol: pick(&["tcp", "udp", "sctp"], self.protocol).to_owned(),
            ..TraceRequest::default()
        }
    }
}
