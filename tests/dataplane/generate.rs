//! Random valid scenarios for the differential run: a seed gives a cluster (one node, its
//! kube-proxy configuration) and a handful of Services of every type with EndpointSlices, as a
//! small model that prints as scenario YAML and shrinks one step at a time.
//!
//! The generator is deterministic (splitmix64 over the seed, no clock, no hashing), so a seed
//! names one scenario on every machine. Addresses come from disjoint pools so that the
//! topology's clients never collide with a Service address: this node's pods in 10.244.1.0/24,
//! other nodes' pods in 10.244.2.0/24, external IPs and load-balancer IPs in 198.51.100.0/24
//! from .10 up, the node at 192.168.60.2; the off-node clients sit at 192.0.2.100 and in the
//! first `loadBalancerSourceRanges` entry (see `case.rs`).

use std::fmt::Write as _;

/// Every (host, local) endpoint of the Services generated so far, if any.
fn endpoints_so_far(services: &[Svc]) -> Option<Vec<(u8, bool)>> {
    let all: Vec<(u8, bool)> =
        services.iter().flat_map(|s| s.endpoints.iter().map(|e| (e.host, e.local))).collect();
    (!all.is_empty()).then_some(all)
}

/// The node the rules are rendered for.
pub(crate) const NODE_IP: &str = "192.168.60.2";
/// Its IPv6 address on a dual-stack cluster.
pub(crate) const NODE_IP6: &str = "fd00:60::2";

/// splitmix64: tiny, deterministic, good enough to pick shapes.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// True with probability `percent`/100.
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[usize::try_from(self.below(items.len() as u64)).unwrap_or(0)]
    }
}

/// `spec.type`, with the two ClusterIP variants that program nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SvcType {
    ClusterIp,
    NodePort,
    LoadBalancer,
    /// `clusterIP: None`.
    Headless,
    ExternalName,
}

/// How kube-proxy tells pod traffic from the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Detect {
    ClusterCidr,
    NodeCidr,
    /// `InterfaceNamePrefix` with the topology's `veth` pod interfaces.
    InterfaceNamePrefix,
    /// `ClusterCIDR` mode without a `clusterCIDR`: kube-proxy cannot tell pod traffic.
    Nothing,
}

/// An endpoint's conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Condition {
    Ready,
    /// `ready: false, serving: true, terminating: true`.
    ServingTerminating,
    /// `ready: false, serving: false, terminating: true`.
    Terminating,
    /// `ready: false, serving: false, terminating: false`.
    NotReady,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// Last octet of the pod address (10.244.1.x on this node, 10.244.2.x elsewhere); 0 is a
    /// hostNetwork pod on this node (the node's own address).
    pub(crate) host: u8,
    /// On this node (node-a) or another (node-b).
    pub(crate) local: bool,
    pub(crate) condition: Condition,
    /// `hints.forZones` (zone-a is this node's zone).
    pub(crate) hint: Option<&'static str>,
}

impl Endpoint {
    pub(crate) fn ip(&self) -> String {
        if self.host == 0 {
            return NODE_IP.to_owned();
        }
        format!("10.244.{}.{}", if self.local { 1 } else { 2 }, self.host)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Port {
    pub(crate) port: u16,
    pub(crate) target: u16,
    pub(crate) udp: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Svc {
    pub(crate) name: String,
    pub(crate) type_: SvcType,
    pub(crate) ports: Vec<Port>,
    pub(crate) etp_local: bool,
    pub(crate) itp_local: bool,
    pub(crate) affinity: bool,
    pub(crate) prefer_close: bool,
    /// `ipFamilyPolicy: PreferDualStack` (with an IPv6 EndpointSlice next to the IPv4 one).
    pub(crate) dual_stack: bool,
    /// Last octets in 198.51.100.0/24; 0 is the node's own address.
    pub(crate) external_ips: Vec<u8>,
    pub(crate) lb_ips: Vec<u8>,
    /// The load-balancer ingress has `ipMode: Proxy` (kube-proxy leaves such IPs alone).
    pub(crate) proxy_ip_mode: bool,
    pub(crate) source_ranges: Vec<&'static str>,
    /// A dual-stack Service's source ranges name IPv6 ones too (else its IPv6 load-balancer
    /// IPs have no firewall at all).
    pub(crate) v6_ranges: bool,
    /// `allocateLoadBalancerNodePorts: false`.
    pub(crate) no_lb_node_ports: bool,
    pub(crate) endpoints: Vec<Endpoint>,
}

/// One generated scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scenario {
    pub(crate) seed: u64,
    pub(crate) detect: Detect,
    pub(crate) masquerade_all: bool,
    /// `nodePortAddresses: ["192.168.60.0/24"]` (NodePorts on the node IP only, not on
    /// 127.0.0.1).
    pub(crate) node_port_addresses: bool,
    /// `iptables.localhostNodePorts: false`.
    pub(crate) no_localhost_node_ports: bool,
    pub(crate) dual_stack_cluster: bool,
    pub(crate) services: Vec<Svc>,
}

/// `loadBalancerSourceRanges` values: the first holds the allowed client; one holds the
/// load-balancer IPs themselves (kube-proxy then lets the node reach them), one the pods.
const RANGES: [&str; 4] = ["203.0.113.0/25", "198.51.100.0/24", "10.244.0.0/16", "192.0.2.0/28"];
/// The IPv6 counterparts, in the same order (the external IPv6 client is 2001:db8:ee::100).
const RANGES6: [&str; 4] =
    ["2001:db8:113::/64", "2001:db8:51::/64", "fd00:10:244::/56", "2001:db8:2::/64"];

/// Service port numbers (a UDP and a TCP port may share one, as DNS does).
const PORTS: [u16; 5] = [80, 443, 53, 8080, 9000];

impl Scenario {
    /// The scenario of a seed.
    pub(crate) fn generate(seed: u64) -> Scenario {
        let mut rng = Rng(seed ^ 0x5eed_d1ff);
        let dual_stack_cluster = rng.chance(30);
        let mut next_host = 10u8;
        let mut next_vip = 10u8;
        let count = 1 + rng.below(4);
        let mut services = Vec::new();
        for i in 0..count {
            let type_ = rng.pick(&[
                SvcType::ClusterIp,
                SvcType::ClusterIp,
                SvcType::NodePort,
                SvcType::NodePort,
                SvcType::LoadBalancer,
                SvcType::LoadBalancer,
                SvcType::LoadBalancer,
                SvcType::Headless,
                SvcType::ExternalName,
            ]);
            let nports = if rng.chance(70) { 1 } else { 2 };
            let mut ports: Vec<Port> = Vec::new();
            for k in 0..nports {
                let port = rng.pick(&PORTS);
                let udp = rng.chance(20);
                if ports.iter().any(|p| p.port == port && p.udp == udp) {
                    continue;
                }
                let target =
                    if rng.chance(30) { port } else { 8000 + u16::try_from(k).unwrap_or(0) };
                ports.push(Port { port, target, udp });
            }
            let external = matches!(type_, SvcType::NodePort | SvcType::LoadBalancer);
            let mut external_ips = Vec::new();
            if matches!(type_, SvcType::ClusterIp | SvcType::NodePort | SvcType::LoadBalancer)
                && rng.chance(25)
            {
                // Now and then the node's own address (a "local" external IP).
                if rng.chance(15) {
                    external_ips.push(0);
                } else {
                    external_ips.push(next_vip);
                    next_vip += 1;
                }
            }
            let mut lb_ips = Vec::new();
            let mut source_ranges = Vec::new();
            let mut no_lb_node_ports = false;
            let mut proxy_ip_mode = false;
            let mut v6_ranges = false;
            if type_ == SvcType::LoadBalancer {
                lb_ips.push(next_vip);
                next_vip += 1;
                if rng.chance(15) {
                    lb_ips.push(next_vip);
                    next_vip += 1;
                }
                if rng.chance(45) {
                    source_ranges.push(rng.pick(&RANGES));
                    if rng.chance(30) {
                        let more = rng.pick(&RANGES);
                        if !source_ranges.contains(&more) {
                            source_ranges.push(more);
                        }
                    }
                }
                no_lb_node_ports = rng.chance(15);
                proxy_ip_mode = rng.chance(10);
                v6_ranges = rng.chance(70);
            }
            let programs =
                matches!(type_, SvcType::ClusterIp | SvcType::NodePort | SvcType::LoadBalancer);
            let etp_local = (external || !external_ips.is_empty()) && rng.chance(40);
            let itp_local = programs && rng.chance(25);
            let affinity = type_ != SvcType::ExternalName && rng.chance(20);
            let prefer_close = programs && rng.chance(20);
            let dual_stack = dual_stack_cluster && type_ != SvcType::ExternalName && rng.chance(60);
            let mut endpoints = Vec::new();
            if type_ != SvcType::ExternalName && rng.chance(90) {
                let n = rng.below(5);
                let zoned = prefer_close && rng.chance(70);
                for _ in 0..n {
                    let local = rng.chance(55);
                    // Now and then a hostNetwork pod on this node, or a pod another Service
                    // already selects.
                    let shared = endpoints_so_far(&services).filter(|_| rng.chance(10));
                    let picked = shared
                        .map(|all| all[usize::try_from(rng.below(all.len() as u64)).unwrap_or(0)]);
                    let host = match picked {
                        _ if local && rng.chance(5) => 0,
                        Some((host, was_local)) if was_local == local => host,
                        _ => next_host,
                    };
                    if host == next_host {
                        next_host += 1;
                    }
                    if endpoints.iter().any(|e: &Endpoint| e.host == host && e.local == local) {
                        continue;
                    }
                    let condition = match rng.below(10) {
                        0 => Condition::ServingTerminating,
                        1 => Condition::Terminating,
                        2 => Condition::NotReady,
                        _ => Condition::Ready,
                    };
                    let hint = zoned.then(|| rng.pick(&["zone-a", "zone-a", "zone-b"]));
                    endpoints.push(Endpoint { host, local, condition, hint });
                }
            }
            services.push(Svc {
                name: format!("s{i}"),
                type_,
                ports,
                etp_local,
                itp_local,
                affinity,
                prefer_close,
                dual_stack,
                external_ips,
                lb_ips,
                proxy_ip_mode,
                source_ranges,
                v6_ranges,
                no_lb_node_ports,
                endpoints,
            });
        }
        Scenario {
            seed,
            detect: match rng.below(20) {
                0..15 => Detect::ClusterCidr,
                15..18 => Detect::NodeCidr,
                18 => Detect::InterfaceNamePrefix,
                _ => Detect::Nothing,
            },
            masquerade_all: rng.chance(10),
            node_port_addresses: rng.chance(15),
            no_localhost_node_ports: rng.chance(15),
            dual_stack_cluster,
            services,
        }
    }

    /// Every scenario one step smaller than this one, most drastic first: one Service fewer,
    /// then per Service one port or endpoint fewer, then one feature turned off.
    pub(crate) fn shrink(&self) -> Vec<Scenario> {
        let mut out = Vec::new();
        for i in 0..self.services.len() {
            if self.services.len() > 1 {
                let mut s = self.clone();
                s.services.remove(i);
                out.push(s);
            }
        }
        let mut with = |i: usize, f: &dyn Fn(&mut Svc) -> bool| {
            let mut s = self.clone();
            if f(&mut s.services[i]) {
                out.push(s);
            }
        };
        for i in 0..self.services.len() {
            let svc = &self.services[i];
            for k in 0..svc.ports.len() {
                with(i, &|s| {
                    s.ports.len() > 1 && {
                        s.ports.remove(k);
                        true
                    }
                });
            }
            for k in 0..svc.endpoints.len() {
                with(i, &|s| {
                    s.endpoints.remove(k);
                    true
                });
            }
            for k in 0..svc.source_ranges.len() {
                with(i, &|s| {
                    s.source_ranges.remove(k);
                    true
                });
            }
            for k in 0..svc.external_ips.len() {
                with(i, &|s| {
                    s.external_ips.remove(k);
                    s.etp_local &= s.type_ != SvcType::ClusterIp || !s.external_ips.is_empty();
                    true
                });
            }
            for k in 1..svc.lb_ips.len() {
                with(i, &|s| {
                    s.lb_ips.remove(k);
                    true
                });
            }
            with(i, &|s| std::mem::take(&mut s.etp_local));
            with(i, &|s| std::mem::take(&mut s.itp_local));
            with(i, &|s| std::mem::take(&mut s.affinity));
            with(i, &|s| std::mem::take(&mut s.prefer_close));
            with(i, &|s| std::mem::take(&mut s.dual_stack));
            with(i, &|s| std::mem::take(&mut s.no_lb_node_ports));
            with(i, &|s| std::mem::take(&mut s.proxy_ip_mode));
            with(i, &|s| std::mem::take(&mut s.v6_ranges));
            with(i, &|s| {
                let had = s.endpoints.iter().any(|e| e.hint.is_some());
                for e in &mut s.endpoints {
                    e.hint = None;
                }
                had
            });
            for k in 0..svc.endpoints.len() {
                with(i, &|s| {
                    std::mem::replace(&mut s.endpoints[k].condition, Condition::Ready)
                        != Condition::Ready
                });
                with(i, &|s| !std::mem::replace(&mut s.endpoints[k].local, true));
            }
            with(i, &|s| match s.type_ {
                SvcType::LoadBalancer => {
                    s.type_ = SvcType::NodePort;
                    s.lb_ips.clear();
                    s.source_ranges.clear();
                    s.no_lb_node_ports = false;
                    true
                }
                SvcType::NodePort => {
                    s.type_ = SvcType::ClusterIp;
                    s.etp_local &= !s.external_ips.is_empty();
                    true
                }
                _ => false,
            });
            for k in 0..svc.ports.len() {
                with(i, &|s| {
                    // UDP to TCP unless that port is already served over TCP too.
                    let port = s.ports[k].port;
                    let taken = s.ports.iter().any(|p| p.port == port && !p.udp);
                    !taken && std::mem::take(&mut s.ports[k].udp)
                });
            }
        }
        if self.masquerade_all {
            out.push(Scenario { masquerade_all: false, ..self.clone() });
        }
        if self.node_port_addresses {
            out.push(Scenario { node_port_addresses: false, ..self.clone() });
        }
        if self.no_localhost_node_ports {
            out.push(Scenario { no_localhost_node_ports: false, ..self.clone() });
        }
        if self.detect != Detect::ClusterCidr {
            out.push(Scenario { detect: Detect::ClusterCidr, ..self.clone() });
        }
        if self.dual_stack_cluster && !self.services.iter().any(|s| s.dual_stack) {
            out.push(Scenario { dual_stack_cluster: false, ..self.clone() });
        }
        out.retain(|s| s != self);
        out
    }

    /// A one-line summary: `seed 7: 3 Services (LoadBalancer eTP=Local ranges, ...)`.
    pub(crate) fn summary(&self) -> String {
        let services: Vec<String> = self
            .services
            .iter()
            .map(|s| {
                let mut text = format!("{:?}", s.type_);
                for (on, flag) in [
                    (s.etp_local, " eTP=Local"),
                    (s.itp_local, " iTP=Local"),
                    (s.affinity, " ClientIP"),
                    (s.prefer_close, " PreferClose"),
                    (s.dual_stack, " dual-stack"),
                    (!s.external_ips.is_empty(), " externalIPs"),
                    (!s.source_ranges.is_empty(), " sourceRanges"),
                    (s.no_lb_node_ports, " noNodePorts"),
                    (s.proxy_ip_mode, " ipMode=Proxy"),
                    (s.external_ips.contains(&0), " nodeIP-as-externalIP"),
                    (s.endpoints.iter().any(|e| e.host == 0), " hostNetwork"),
                ] {
                    if on {
                        text.push_str(flag);
                    }
                }
                let _ = write!(text, " {}p/{}e", s.ports.len(), s.endpoints.len());
                text
            })
            .collect();
        format!(
            "{} Services [{}]{}{}{}{}",
            self.services.len(),
            services.join(", "),
            if self.masquerade_all { ", masqueradeAll" } else { "" },
            match self.detect {
                Detect::ClusterCidr => "",
                Detect::NodeCidr => ", detect-local NodeCIDR",
                Detect::InterfaceNamePrefix => ", detect-local InterfaceNamePrefix",
                Detect::Nothing => ", no clusterCIDR",
            },
            if self.node_port_addresses { ", nodePortAddresses" } else { "" },
            if self.no_localhost_node_ports { ", localhostNodePorts=false" } else { "" },
        )
    }

    /// The scenario as a multi-document YAML stream (what `svclab check` reads).
    pub(crate) fn to_yaml(&self) -> String {
        let mut y = String::new();
        let _ = writeln!(
            y,
            "# Differential scenario (tests/dataplane/generate.rs), seed {}: {}",
            self.seed,
            self.summary()
        );
        let ranges = if self.dual_stack_cluster {
            r#"["10.96.0.0/16", "fd00:10:96::/108"]"#
        } else {
            r#"["10.96.0.0/16"]"#
        };
        let _ = write!(
            y,
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"1.33\"\n\
             serviceClusterIPRanges: {ranges}\nseed: {}\n---\n",
            self.seed % 1_000_000
        );
        let detect = match self.detect {
            Detect::ClusterCidr => "clusterCIDR: {cidr}\ndetectLocalMode: ClusterCIDR",
            Detect::NodeCidr => "clusterCIDR: {cidr}\ndetectLocalMode: NodeCIDR",
            Detect::InterfaceNamePrefix => {
                "detectLocalMode: InterfaceNamePrefix\ndetectLocal: {interfaceNamePrefix: veth}"
            }
            Detect::Nothing => "detectLocalMode: ClusterCIDR",
        };
        let ds = self.dual_stack_cluster;
        let detect = detect.replace(
            "{cidr}",
            if ds { "\"10.244.0.0/16,fd00:10:244::/56\"" } else { "10.244.0.0/16" },
        );
        let _ = write!(
            y,
            "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n\
             mode: iptables\nhostnameOverride: node-a\n{detect}\niptables: {{masqueradeAll: {m}, localhostNodePorts: {l}}}\n\
             nftables: {{masqueradeAll: {m}}}\n{a}---\n",
            m = self.masquerade_all,
            l = !self.no_localhost_node_ports,
            a = match (self.node_port_addresses, ds) {
                (false, _) => "",
                (true, false) => "nodePortAddresses: [\"192.168.60.0/24\"]\n",
                (true, true) => "nodePortAddresses: [\"192.168.60.0/24\", \"fd00:60::/64\"]\n",
            },
        );
        let _ = write!(
            y,
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-a\n  labels: {{topology.kubernetes.io/zone: zone-a}}\n\
             spec: {{podCIDRs: [\"10.244.1.0/24\"{p6}]}}\nstatus:\n  addresses: [{{type: InternalIP, address: {NODE_IP}}}{a6}]\n",
            p6 = if ds { ", \"fd00:10:244:1::/64\"" } else { "" },
            a6 = if ds {
                format!(", {{type: InternalIP, address: \"{NODE_IP6}\"}}")
            } else {
                String::new()
            },
        );
        for svc in &self.services {
            y.push_str("---\n");
            service_yaml(&mut y, svc);
            if svc.type_ == SvcType::ExternalName {
                continue;
            }
            if !svc.endpoints.is_empty() {
                y.push_str("---\n");
                slice_yaml(&mut y, svc, false);
                if svc.dual_stack {
                    y.push_str("---\n");
                    slice_yaml(&mut y, svc, true);
                }
            }
        }
        y
    }
}

fn port_name(port: &Port) -> String {
    format!("{}{}", if port.udp { "u" } else { "p" }, port.port)
}

fn service_yaml(y: &mut String, svc: &Svc) {
    let _ = write!(
        y,
        "apiVersion: v1\nkind: Service\nmetadata: {{name: {}, namespace: diff}}\nspec:\n",
        svc.name
    );
    let type_ = match svc.type_ {
        SvcType::ClusterIp | SvcType::Headless => "ClusterIP",
        SvcType::NodePort => "NodePort",
        SvcType::LoadBalancer => "LoadBalancer",
        SvcType::ExternalName => "ExternalName",
    };
    let _ = writeln!(y, "  type: {type_}");
    if svc.type_ == SvcType::ExternalName {
        let _ = writeln!(y, "  externalName: {}.example.com", svc.name);
    } else {
        let _ = writeln!(y, "  selector: {{app: {}}}", svc.name);
    }
    let flags = [
        (svc.type_ == SvcType::Headless, "  clusterIP: None\n"),
        (svc.dual_stack, "  ipFamilyPolicy: PreferDualStack\n"),
        (svc.etp_local, "  externalTrafficPolicy: Local\n"),
        (svc.itp_local, "  internalTrafficPolicy: Local\n"),
        (svc.affinity, "  sessionAffinity: ClientIP\n"),
        (svc.prefer_close, "  trafficDistribution: PreferClose\n"),
        (svc.no_lb_node_ports, "  allocateLoadBalancerNodePorts: false\n"),
    ];
    for (_, line) in flags.iter().filter(|(set, _)| *set) {
        y.push_str(line);
    }
    if !svc.external_ips.is_empty() {
        let mut ips: Vec<String> = svc
            .external_ips
            .iter()
            .map(|h| if *h == 0 { NODE_IP.to_owned() } else { format!("198.51.100.{h}") })
            .collect();
        if svc.dual_stack {
            ips.extend(svc.external_ips.iter().map(|h| {
                if *h == 0 { format!("\"{NODE_IP6}\"") } else { format!("\"2001:db8:51::{h:x}\"") }
            }));
        }
        let _ = writeln!(y, "  externalIPs: [{}]", ips.join(", "));
    }
    if !svc.source_ranges.is_empty() {
        let mut ranges: Vec<String> = svc.source_ranges.iter().map(|r| (*r).to_owned()).collect();
        if svc.dual_stack && svc.v6_ranges {
            for range in &svc.source_ranges {
                if let Some(i) = RANGES.iter().position(|r| r == range) {
                    ranges.push(format!("\"{}\"", RANGES6[i]));
                }
            }
        }
        let _ = writeln!(y, "  loadBalancerSourceRanges: [{}]", ranges.join(", "));
    }
    y.push_str("  ports:\n");
    for port in &svc.ports {
        let _ = writeln!(
            y,
            "  - {{name: {}, port: {}, targetPort: {}, protocol: {}}}",
            port_name(port),
            port.port,
            port.target,
            if port.udp { "UDP" } else { "TCP" }
        );
    }
    if !svc.lb_ips.is_empty() {
        let mode = if svc.proxy_ip_mode { ", ipMode: Proxy" } else { "" };
        let mut ips: Vec<String> =
            svc.lb_ips.iter().map(|h| format!("{{ip: 198.51.100.{h}{mode}}}")).collect();
        if svc.dual_stack {
            ips.extend(svc.lb_ips.iter().map(|h| format!("{{ip: \"2001:db8:51::{h:x}\"{mode}}}")));
        }
        let _ = writeln!(y, "status:\n  loadBalancer:\n    ingress: [{}]", ips.join(", "));
    }
}

fn slice_yaml(y: &mut String, svc: &Svc, v6: bool) {
    let _ = write!(
        y,
        "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: {n}-{f}\n  namespace: diff\n\
         \x20 labels: {{kubernetes.io/service-name: {n}}}\naddressType: {t}\nendpoints:\n",
        n = svc.name,
        f = if v6 { "v6" } else { "v4" },
        t = if v6 { "IPv6" } else { "IPv4" },
    );
    for ep in &svc.endpoints {
        let address = if v6 {
            if ep.host == 0 {
                NODE_IP6.to_owned()
            } else {
                format!("fd00:10:244:{}::{:x}", if ep.local { 1 } else { 2 }, ep.host)
            }
        } else {
            ep.ip()
        };
        let (ready, serving, terminating) = match ep.condition {
            Condition::Ready => (true, true, false),
            Condition::ServingTerminating => (false, true, true),
            Condition::Terminating => (false, false, true),
            Condition::NotReady => (false, false, false),
        };
        let _ = writeln!(
            y,
            "- addresses: [\"{address}\"]\n  conditions: {{ready: {ready}, serving: {serving}, terminating: {terminating}}}\n  nodeName: {}",
            if ep.local { "node-a" } else { "node-b" }
        );
        if let Some(zone) = ep.hint {
            let _ = writeln!(y, "  zone: {zone}\n  hints: {{forZones: [{{name: {zone}}}]}}");
        }
    }
    y.push_str("ports:\n");
    for port in &svc.ports {
        let _ = writeln!(
            y,
            "- {{name: {}, port: {}, protocol: {}}}",
            port_name(port),
            port.target,
            if port.udp { "UDP" } else { "TCP" }
        );
    }
}
