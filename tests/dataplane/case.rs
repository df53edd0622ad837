//! One dataplane case: a scenario's objects reduced to what the topology and the probes need,
//! the probes themselves, what each one is expected to do, and the check of what happened.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};

use svclab_core::{EndpointSlice, Service, ServiceKey};

use crate::topology::PodSpec;

/// Connections per ClusterIP probe with one endpoint (from the node, a pod, an endpoint pod).
pub(crate) const CLUSTER_IP_CONNECTIONS: u32 = 200;
/// Connections per ClusterIP probe that spreads over several endpoints: enough to tell a
/// 1/3-1/3-1/3 split from a 1/2-1/4-1/4 one by far (11 standard deviations).
pub(crate) const SPREAD_CONNECTIONS: u32 = 1000;
/// Connections per NodePort / external IP / load-balancer IP probe.
pub(crate) const EXTERNAL_CONNECTIONS: u32 = 100;
/// Attempts for a probe that is expected to be refused or dropped.
pub(crate) const NEGATIVE_ATTEMPTS: u32 = 3;
/// The differential run's light probes: it proves where connections go and how they look, over
/// many scenarios, rather than the spread (the suite's own cases do that). Enough connections
/// that each of up to four endpoints is reached (p=1/4 misses all 60 with p < 1e-7).
pub(crate) const LIGHT_SPREAD_CONNECTIONS: u32 = 60;
/// Light probes to one endpoint, or through affinity.
pub(crate) const LIGHT_CONNECTIONS: u32 = 8;

/// Which proxy backend a case loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Mode {
    /// `iptables-restore` payload.
    Iptables,
    /// `nft -f` transaction.
    Nftables,
}

impl Mode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Mode::Iptables => "iptables",
            Mode::Nftables => "nftables",
        }
    }
}

/// Where a probe connects from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Role {
    /// A process on the node itself (OUTPUT path).
    Node,
    /// A pod on the node that is not an endpoint (source inside the detect-local CIDR).
    Pod,
    /// An endpoint pod of the Service itself (hairpin: it may reach itself).
    Endpoint,
    /// An off-node client whose address is in no loadBalancerSourceRanges.
    External,
    /// An off-node client whose address is inside a loadBalancerSourceRanges entry.
    Allowed,
    /// A pod on another node (differential run only): an address in the cluster CIDR that
    /// arrives from off the node.
    RemotePod,
}

impl Role {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Role::Node => "node",
            Role::Pod => "pod",
            Role::Endpoint => "endpoint-pod",
            Role::External => "client",
            Role::Allowed => "allowed-client",
            Role::RemotePod => "remote-pod",
        }
    }
}

/// A TCP or UDP Service port as the probes see it.
#[derive(Debug, Clone)]
pub(crate) struct SvcPort {
    /// `namespace/name:port` (kube-proxy's service-port name).
    pub(crate) name: String,
    /// The Service's key, namespace defaulted.
    pub(crate) service: ServiceKey,
    pub(crate) cluster_ip: Option<IpAddr>,
    pub(crate) port: u16,
    pub(crate) node_port: u16,
    pub(crate) external_ips: Vec<IpAddr>,
    pub(crate) lb_ips: Vec<IpAddr>,
    pub(crate) source_ranges: Vec<(IpAddr, u8)>,
    /// `sessionAffinity: ClientIP`.
    pub(crate) affinity: bool,
    /// IPv4 addresses in the Service's EndpointSlices that have a TCP or UDP port (sorted).
    pub(crate) endpoint_ips: Vec<IpAddr>,
    /// `protocol: UDP` (else TCP).
    pub(crate) udp: bool,
}

/// The scenario reduced to addresses.
#[derive(Debug, Clone)]
pub(crate) struct Model {
    pub(crate) family: Family,
    pub(crate) ports: Vec<SvcPort>,
    pub(crate) pods: Vec<PodSpec>,
    /// What is not probed (SCTP ports, Services the cluster rejected, ...), with the reason.
    pub(crate) skipped: Vec<String>,
}

/// One endpoint a connection may reach.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ep {
    pub(crate) addr: SocketAddr,
    /// Probability of a (first) connection reaching it.
    pub(crate) p: f64,
    /// The endpoint sees the node's address as source (else the client's).
    pub(crate) masquerade: bool,
}

/// Expected fate of the connections of one probe.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expect {
    /// Every connection reaches one of these endpoints, with these probabilities.
    Land {
        endpoints: Vec<Ep>,
        /// ClientIP session affinity: one client always reaches the same endpoint.
        affinity: bool,
    },
    /// Connection refused (REJECT).
    Refused,
    /// No rule handles it (trace verdict `no service`, or local delivery without DNAT): the
    /// node or the topology's sink answers with a reset, so the connection is refused too.
    Unhandled,
    /// No answer (DROP).
    Dropped,
}

/// One probe: connections from a role to an address.
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    /// e.g. `ns1/svc1:p80 cluster IP`.
    pub(crate) what: String,
    pub(crate) role: Role,
    pub(crate) src: IpAddr,
    pub(crate) dst: SocketAddr,
    pub(crate) expect: Expect,
    /// A ClusterIP probe (these make the most connections: distributions are checked there).
    pub(crate) dst_is_cluster_ip: bool,
    /// UDP datagrams (else TCP connections).
    pub(crate) udp: bool,
    /// A differential probe: fewer connections (see [`LIGHT_SPREAD_CONNECTIONS`]).
    pub(crate) light: bool,
}

impl Probe {
    /// How many connections to make.
    pub(crate) fn count(&self) -> u32 {
        if self.light {
            return match &self.expect {
                Expect::Land { endpoints, affinity: false }
                    if endpoints.iter().filter(|e| e.p > 0.0).count() > 1 =>
                {
                    LIGHT_SPREAD_CONNECTIONS
                }
                Expect::Land { .. } => LIGHT_CONNECTIONS,
                _ => 1,
            };
        }
        match &self.expect {
            Expect::Land { endpoints, affinity: false }
                if self.dst_is_cluster_ip && endpoints.iter().filter(|e| e.p > 0.0).count() > 1 =>
            {
                SPREAD_CONNECTIONS
            }
            Expect::Land { .. } if self.dst_is_cluster_ip => CLUSTER_IP_CONNECTIONS,
            Expect::Land { .. } => EXTERNAL_CONNECTIONS,
            _ => NEGATIVE_ATTEMPTS,
        }
    }
}

/// A probe before its expectation is known.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) what: String,
    pub(crate) role: Role,
    /// Source address when the role does not imply it (hairpin pod, 127.0.0.1).
    pub(crate) src: Option<IpAddr>,
    pub(crate) dst: SocketAddr,
    /// The Service has ClientIP session affinity.
    pub(crate) affinity: bool,
    /// UDP (else TCP).
    pub(crate) udp: bool,
}

/// The IP family a case loads and probes (kube-proxy programs each family on its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Family {
    V4,
    V6,
}

impl Family {
    pub(crate) fn of(ip: IpAddr) -> Family {
        if ip.is_ipv6() { Family::V6 } else { Family::V4 }
    }

    /// Address width in bits.
    pub(crate) fn width(self) -> u32 {
        match self {
            Family::V4 => 32,
            Family::V6 => 128,
        }
    }

    /// An address of this family, else `None`.
    pub(crate) fn parse(self, text: &str) -> Option<IpAddr> {
        text.trim().parse().ok().filter(|ip| Family::of(*ip) == self)
    }

    /// A CIDR of this family (a bare address is a host route), else `None`.
    pub(crate) fn parse_cidr(self, text: &str) -> Option<(IpAddr, u8)> {
        let text = text.trim();
        let (ip, len) = text.split_once('/').map_or((text, None), |(a, l)| (a, Some(l)));
        let width = u8::try_from(self.width()).unwrap_or(128);
        let len: u8 = match len {
            Some(l) => l.parse().ok().filter(|l| *l <= width)?,
            None => width,
        };
        Some((self.parse(ip)?, len))
    }

    fn address(self, bits: u128) -> IpAddr {
        match self {
            Family::V4 => IpAddr::from(std::net::Ipv4Addr::from(u32::try_from(bits).unwrap_or(0))),
            Family::V6 => IpAddr::from(std::net::Ipv6Addr::from(bits)),
        }
    }
}

fn bits(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

/// An IPv4 address (the goldens' hand tables are IPv4).
pub(crate) fn parse_v4(text: &str) -> Option<IpAddr> {
    Family::V4.parse(text)
}

pub(crate) fn parse_cidr_v4(text: &str) -> Option<(IpAddr, u8)> {
    Family::V4.parse_cidr(text)
}

/// `ip` plus `delta` within its family (wrapping).
pub(crate) fn offset(ip: IpAddr, delta: u128) -> IpAddr {
    let family = Family::of(ip);
    let mask = if family == Family::V4 { u128::from(u32::MAX) } else { u128::MAX };
    family.address(bits(ip).wrapping_add(delta) & mask)
}

/// The number of addresses after the network address of a CIDR (`2^(width-len) - 1`).
pub(crate) fn cidr_span((net, len): (IpAddr, u8)) -> u128 {
    let host_bits = Family::of(net).width().saturating_sub(u32::from(len));
    if host_bits >= 128 { u128::MAX } else { (1u128 << host_bits) - 1 }
}

pub(crate) fn cidr_contains((net, len): (IpAddr, u8), ip: IpAddr) -> bool {
    if Family::of(net) != Family::of(ip) {
        return false;
    }
    let span = cidr_span((net, len));
    (bits(net) & !span) == (bits(ip) & !span)
}

impl Model {
    /// Reduces Services and EndpointSlices to the TCP and UDP service ports and endpoint pods
    /// of one family.
    pub(crate) fn new(services: &[&Service], slices: &[&EndpointSlice], family: Family) -> Model {
        let parse = |text: &str| family.parse(text);
        let mut model = Model { family, ports: Vec::new(), pods: Vec::new(), skipped: Vec::new() };
        for svc in services {
            let meta = &svc.metadata;
            let spec = &svc.spec;
            if spec.type_ == "ExternalName" {
                continue;
            }
            let cluster_ip = [spec.cluster_ip.as_str()]
                .into_iter()
                .chain(spec.cluster_ips.iter().map(String::as_str))
                .find_map(parse);
            for port in &spec.ports {
                let name = if port.name.is_empty() {
                    format!("{}/{}", meta.namespace, meta.name)
                } else {
                    format!("{}/{}:{}", meta.namespace, meta.name, port.name)
                };
                if !matches!(port.protocol.as_str(), "" | "TCP" | "UDP") {
                    model.skipped.push(format!(
                        "{name}: protocol {}, only TCP and UDP are probed",
                        port.protocol
                    ));
                    continue;
                }
                let namespace = if meta.namespace.is_empty() { "default" } else { &meta.namespace };
                model.ports.push(SvcPort {
                    name,
                    service: ServiceKey {
                        namespace: namespace.to_owned(),
                        name: meta.name.clone(),
                    },
                    cluster_ip,
                    port: u16::try_from(port.port).unwrap_or(0),
                    node_port: u16::try_from(port.node_port).unwrap_or(0),
                    external_ips: spec.external_ips.iter().filter_map(|s| parse(s)).collect(),
                    lb_ips: svc
                        .status
                        .load_balancer_ingress
                        .iter()
                        .filter_map(|i| parse(&i.ip))
                        .collect(),
                    source_ranges: spec
                        .load_balancer_source_ranges
                        .iter()
                        .filter_map(|s| family.parse_cidr(s))
                        .collect(),
                    affinity: spec.session_affinity == "ClientIP",
                    endpoint_ips: Vec::new(),
                    udp: port.protocol == "UDP",
                });
            }
        }
        let mut pods: BTreeMap<IpAddr, (Vec<u16>, Vec<u16>)> = BTreeMap::new();
        for slice in slices {
            let wanted = if family == Family::V4 { "IPv4" } else { "IPv6" };
            if slice.address_type != wanted {
                continue;
            }
            let ports_of = |udp: bool| -> Vec<u16> {
                slice
                    .ports
                    .iter()
                    .filter(|p| (p.protocol.as_deref() == Some("UDP")) == udp)
                    .filter(|p| {
                        p.protocol.as_deref().is_none_or(|proto| proto == "TCP" || proto == "UDP")
                    })
                    .filter_map(|p| p.port.and_then(|n| u16::try_from(n).ok()))
                    .collect()
            };
            let (tcp, udp) = (ports_of(false), ports_of(true));
            let namespace = if slice.metadata.namespace.is_empty() {
                "default"
            } else {
                &slice.metadata.namespace
            };
            let owner = slice.metadata.labels.get("kubernetes.io/service-name");
            for endpoint in &slice.endpoints {
                for address in &endpoint.addresses {
                    let Some(ip) = parse(address) else { continue };
                    if !tcp.is_empty() || !udp.is_empty() {
                        for sp in &mut model.ports {
                            if sp.service.namespace == namespace
                                && owner.is_some_and(|o| *o == sp.service.name)
                                && !sp.endpoint_ips.contains(&ip)
                            {
                                sp.endpoint_ips.push(ip);
                                sp.endpoint_ips.sort();
                            }
                        }
                    }
                    let entry = pods.entry(ip).or_default();
                    for (list, new) in [(&mut entry.0, &tcp), (&mut entry.1, &udp)] {
                        for port in new {
                            if !list.contains(port) {
                                list.push(*port);
                            }
                        }
                    }
                }
            }
        }
        model.pods = pods
            .into_iter()
            .filter(|(_, (tcp, udp))| !tcp.is_empty() || !udp.is_empty())
            .map(|(ip, (mut ports, mut udp_ports))| {
                ports.sort_unstable();
                udp_ports.sort_unstable();
                PodSpec { ip, ports, udp_ports }
            })
            .collect();
        model
    }

    /// Every address a probe will target from each role.
    /// `localhost_node_ports`: the rules accept NodePorts on 127.0.0.1 (iptables mode).
    /// `thorough`: NodePorts from the pod and the node too (the differential run).
    pub(crate) fn targets(
        &self,
        node_ip: IpAddr,
        localhost_node_ports: bool,
        thorough: bool,
    ) -> Vec<Target> {
        let mut out = Vec::new();
        for sp in &self.ports {
            if let Some(ip) = sp.cluster_ip {
                let roles: &[Role] = if thorough {
                    &[Role::Node, Role::Pod, Role::RemotePod]
                } else {
                    &[Role::Node, Role::Pod]
                };
                for role in roles.iter().copied() {
                    out.push(Target {
                        what: format!("{} cluster IP", sp.name),
                        role,
                        src: None,
                        dst: SocketAddr::new(ip, sp.port),
                        affinity: sp.affinity,
                        udp: sp.udp,
                    });
                }
                // Hairpin: an endpoint of the Service connects to its own Service.
                if let Some(first) = sp.endpoint_ips.first() {
                    out.push(Target {
                        what: format!("{} cluster IP (hairpin)", sp.name),
                        role: Role::Endpoint,
                        src: Some(*first),
                        dst: SocketAddr::new(ip, sp.port),
                        affinity: sp.affinity,
                        udp: sp.udp,
                    });
                }
            }
            if localhost_node_ports && sp.node_port != 0 {
                out.push(Target {
                    what: format!("{} node port on localhost", sp.name),
                    role: Role::Node,
                    src: Some(IpAddr::from([127, 0, 0, 1])),
                    dst: SocketAddr::new(IpAddr::from([127, 0, 0, 1]), sp.node_port),
                    affinity: sp.affinity,
                    udp: sp.udp,
                });
            }
            if sp.node_port != 0 {
                let roles: &[Role] = if thorough {
                    &[Role::External, Role::Pod, Role::Node, Role::RemotePod]
                } else {
                    &[Role::External]
                };
                for role in roles {
                    out.push(Target {
                        what: format!("{} node port", sp.name),
                        role: *role,
                        src: None,
                        dst: SocketAddr::new(node_ip, sp.node_port),
                        affinity: sp.affinity,
                        udp: sp.udp,
                    });
                }
            }
            // External IPs and load-balancer IPs from outside, and (beyond the hand tables)
            // from a pod and from the node: kube-proxy short-circuits those to the cluster-wide
            // endpoints even under eTP Local.
            let external = sp.external_ips.iter().map(|ip| (*ip, "external IP"));
            let balanced = sp.lb_ips.iter().map(|ip| (*ip, "loadbalancer IP"));
            for (ip, kind) in external.chain(balanced) {
                let mut roles = vec![Role::External, Role::Pod, Role::Node];
                if kind == "loadbalancer IP" && !sp.source_ranges.is_empty() {
                    roles.insert(0, Role::Allowed);
                }
                if thorough {
                    roles.push(Role::RemotePod);
                }
                for role in roles {
                    out.push(Target {
                        what: format!("{} {kind}", sp.name),
                        role,
                        src: None,
                        dst: SocketAddr::new(ip, sp.port),
                        affinity: sp.affinity,
                        udp: sp.udp,
                    });
                }
                // Hairpin through the external address.
                if thorough && let Some(first) = sp.endpoint_ips.first() {
                    out.push(Target {
                        what: format!("{} {kind} (hairpin)", sp.name),
                        role: Role::Endpoint,
                        src: Some(*first),
                        dst: SocketAddr::new(ip, sp.port),
                        affinity: sp.affinity,
                        udp: sp.udp,
                    });
                }
            }
            if thorough
                && sp.node_port != 0
                && let Some(first) = sp.endpoint_ips.first()
            {
                out.push(Target {
                    what: format!("{} node port (hairpin)", sp.name),
                    role: Role::Endpoint,
                    src: Some(*first),
                    dst: SocketAddr::new(node_ip, sp.node_port),
                    affinity: sp.affinity,
                    udp: sp.udp,
                });
            }
        }
        out
    }

    /// A client address inside the first loadBalancerSourceRanges entry of the scenario.
    pub(crate) fn allowed_source(&self, taken: &[IpAddr]) -> Option<IpAddr> {
        let range = self.ports.iter().find_map(|p| p.source_ranges.first().copied())?;
        (1..=255u32)
            .map(|i| offset(range.0, u128::from(i)))
            .find(|ip| cidr_contains(range, *ip) && !taken.contains(ip))
    }

    /// An off-node client address in no source range.
    pub(crate) fn external_source(&self, taken: &[IpAddr]) -> IpAddr {
        let ranges: Vec<(IpAddr, u8)> =
            self.ports.iter().flat_map(|p| p.source_ranges.iter().copied()).collect();
        let family = self.family;
        [
            "192.0.2.100",
            "198.51.100.100",
            "100.64.0.100",
            "203.0.113.250",
            "2001:db8:ee::100",
            "2001:db8:ef::100",
            "64:ff9b::100",
        ]
        .iter()
        .filter_map(|s| family.parse(s))
        .find(|ip| !taken.contains(ip) && !ranges.iter().any(|r| cidr_contains(*r, *ip)))
        .unwrap_or_else(|| match family {
            Family::V4 => IpAddr::from([192, 0, 2, 101]),
            Family::V6 => {
                IpAddr::from(std::net::Ipv6Addr::new(0x2001, 0xdb8, 0xee, 0, 0, 0, 0, 0x101))
            }
        })
    }

    /// A pod address inside the detect-local CIDR that no endpoint uses.
    pub(crate) fn pod_source(&self, local: Option<(IpAddr, u8)>, taken: &[IpAddr]) -> IpAddr {
        let fallback = match self.family {
            Family::V4 => "10.244.0.0/16",
            Family::V6 => "fd00:10:244::/56",
        };
        let Some(cidr) = local.or_else(|| self.family.parse_cidr(fallback)) else {
            return IpAddr::from([10, 244, 255, 250]);
        };
        let size = cidr_span(cidr);
        (2..size.min(4096))
            .map(|i| offset(cidr.0, size - i))
            .find(|ip| !taken.contains(ip) && !self.pods.iter().any(|p| p.ip == *ip))
            .unwrap_or(IpAddr::from([10, 244, 255, 250]))
    }
}

/// Pearson's chi-square of the observed spread against the expected probabilities, and the
/// critical value for a false-alarm probability of 1e-6 (Wilson-Hilferty approximation).
pub(crate) fn chi_square(
    endpoints: &[Ep],
    landed: &BTreeMap<SocketAddr, u32>,
    n: u32,
) -> (f64, f64) {
    let used: Vec<&Ep> = endpoints.iter().filter(|e| e.p > 0.0).collect();
    if used.len() < 2 {
        return (0.0, f64::INFINITY);
    }
    let chi2: f64 = used
        .iter()
        .map(|e| {
            let expected = f64::from(n) * e.p;
            let observed = f64::from(landed.get(&e.addr).copied().unwrap_or(0));
            (observed - expected).powi(2) / expected
        })
        .sum();
    let df = (used.len() - 1) as f64;
    // z for a one-sided 1e-6 tail.
    let z = 4.753;
    let critical = df * (1.0 - 2.0 / (9.0 * df) + z * (2.0 / (9.0 * df)).sqrt()).powi(3);
    (chi2, critical)
}

/// What the kernel did with one probe's connections, as the two proxy modes are compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Every connection was answered: the endpoints reached, each with whether its
    /// connections arrived with another source than the client's (masqueraded).
    Landed(BTreeMap<SocketAddr, bool>),
    Refused,
    Dropped,
    /// Anything else (a mix, errors), as described.
    Other(String),
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Landed(eps) => {
                let eps: Vec<String> = eps
                    .iter()
                    .map(|(ep, masq)| format!("{ep}{}", if *masq { "+masq" } else { "" }))
                    .collect();
                write!(f, "answered by {}", eps.join(" "))
            }
            Verdict::Refused => f.write_str("refused"),
            Verdict::Dropped => f.write_str("dropped"),
            Verdict::Other(text) => f.write_str(text),
        }
    }
}

/// What one probe did: answers per endpoint (`ip:port` the server saw as local), sources seen,
/// and failures by kind.
#[derive(Debug, Default)]
pub(crate) struct Observed {
    pub(crate) landed: BTreeMap<SocketAddr, u32>,
    /// (endpoint, source the endpoint saw) pairs.
    pub(crate) pairs: BTreeMap<(SocketAddr, IpAddr), u32>,
    pub(crate) peers: BTreeMap<IpAddr, u32>,
    pub(crate) other: BTreeMap<String, u32>,
    pub(crate) total: u32,
}

impl Observed {
    /// Parses the agent's probe output.
    pub(crate) fn parse(output: &str) -> Observed {
        let mut obs = Observed::default();
        for line in output.lines() {
            obs.total += 1;
            let mut words = line.split_whitespace();
            if words.next() == Some("ok") {
                let _name = words.next();
                let local = words.next().and_then(|s| s.parse::<SocketAddr>().ok());
                let peer = words.next().and_then(|s| s.parse::<SocketAddr>().ok());
                if let (Some(local), Some(peer)) = (local, peer) {
                    *obs.landed.entry(local).or_default() += 1;
                    *obs.peers.entry(peer.ip()).or_default() += 1;
                    *obs.pairs.entry((local, peer.ip())).or_default() += 1;
                    continue;
                }
            }
            *obs.other.entry(line.to_owned()).or_default() += 1;
        }
        obs
    }

    /// One line for the report.
    pub(crate) fn describe(&self, expect: &Expect) -> String {
        let mut text = format!("{} conns:", self.total);
        let probs: BTreeMap<SocketAddr, f64> = match expect {
            Expect::Land { endpoints, .. } => endpoints.iter().map(|e| (e.addr, e.p)).collect(),
            _ => BTreeMap::new(),
        };
        let mut keys: Vec<SocketAddr> = self.landed.keys().copied().collect();
        keys.extend(probs.keys().copied().filter(|k| !self.landed.contains_key(k)));
        keys.sort();
        for ep in keys {
            let n = self.landed.get(&ep).copied().unwrap_or(0);
            let pct =
                if self.total == 0 { 0.0 } else { 100.0 * f64::from(n) / f64::from(self.total) };
            match probs.get(&ep) {
                Some(p) => {
                    let _ = write!(text, " {ep}={n} ({pct:.1}% vs {:.1}%)", 100.0 * p);
                }
                None => {
                    let _ = write!(text, " {ep}={n} ({pct:.1}%, not in trace)");
                }
            }
        }
        if let Expect::Land { endpoints, affinity: false } = expect {
            let (chi2, critical) = chi_square(endpoints, &self.landed, self.total);
            if critical.is_finite() {
                let _ = write!(text, " chi2={chi2:.2} (limit {critical:.1})");
            }
        }
        for (kind, n) in &self.other {
            let _ = write!(text, " {kind}={n}");
        }
        if !self.peers.is_empty() {
            let peers: Vec<String> = self.peers.iter().map(|(ip, n)| format!("{ip}x{n}")).collect();
            let _ = write!(text, " src-seen=[{}]", peers.join(","));
        }
        text
    }

    /// Compares with the expectation; `node_ip` is what a masqueraded connection shows.
    pub(crate) fn check(&self, probe: &Probe, node_ip: IpAddr) -> Result<(), String> {
        let n = probe.count();
        if self.total != n {
            return Err(format!("{} of {n} attempts reported", self.total));
        }
        match &probe.expect {
            Expect::Refused | Expect::Unhandled => self.all_other("refused"),
            Expect::Dropped => self.all_other("timeout"),
            Expect::Land { endpoints, affinity } => {
                if !self.other.is_empty() {
                    return Err(format!("not every connection was answered: {:?}", self.other));
                }
                for ep in self.landed.keys() {
                    if !endpoints.iter().any(|e| e.addr == *ep && e.p > 0.0) {
                        return Err(format!(
                            "a connection landed on {ep}, which the trace does not list"
                        ));
                    }
                }
                if *affinity {
                    if self.landed.len() != 1 {
                        return Err(format!(
                            "ClientIP affinity, yet {} endpoints answered",
                            self.landed.len()
                        ));
                    }
                } else {
                    for Ep { addr: ep, p, .. } in endpoints {
                        let got = f64::from(self.landed.get(ep).copied().unwrap_or(0));
                        let mean = f64::from(n) * p;
                        // Binomial bound: 5 standard deviations (false alarm < 1e-6 per endpoint).
                        let sd = (f64::from(n) * p * (1.0 - p)).sqrt();
                        if (got - mean).abs() > 5.0 * sd + 1.0 {
                            return Err(format!(
                                "{ep}: {got} of {n}, expected about {mean:.1} (p={p:.4})"
                            ));
                        }
                        if *p > 0.0 && got == 0.0 && mean >= 5.0 {
                            return Err(format!("{ep} never answered (p={p:.4})"));
                        }
                    }
                    let (chi2, critical) = chi_square(endpoints, &self.landed, n);
                    if chi2 > critical {
                        return Err(format!(
                            "the spread over the endpoints does not fit the trace's probabilities: \
                             chi-square {chi2:.1} > {critical:.1} (p < 1e-6)"
                        ));
                    }
                }
                for ((ep, seen), count) in &self.pairs {
                    let masquerade = endpoints.iter().any(|e| e.addr == *ep && e.masquerade);
                    let want = if masquerade { node_ip } else { probe.src };
                    if *seen != want {
                        let kind = if masquerade {
                            "masqueraded to the node IP"
                        } else {
                            "with its own source"
                        };
                        return Err(format!(
                            "{count} connections reached {ep} from {seen}; the trace says they arrive {kind} {want}"
                        ));
                    }
                }
                Ok(())
            }
        }
    }

    /// The verdict of the connections from `src` (see [`Verdict`]).
    pub(crate) fn verdict(&self, src: IpAddr) -> Verdict {
        if self.other.is_empty() && !self.landed.is_empty() {
            let mut eps = BTreeMap::new();
            for (ep, seen) in self.pairs.keys() {
                *eps.entry(*ep).or_insert(false) |= *seen != src;
            }
            return Verdict::Landed(eps);
        }
        let kinds: Vec<&str> = self.other.keys().map(String::as_str).collect();
        match (self.landed.is_empty(), kinds.as_slice()) {
            (true, ["refused"]) => Verdict::Refused,
            (true, ["timeout"]) => Verdict::Dropped,
            _ => Verdict::Other(self.describe(&Expect::Dropped)),
        }
    }

    fn all_other(&self, kind: &str) -> Result<(), String> {
        if self.landed.is_empty() && self.other.len() == 1 && self.other.contains_key(kind) {
            Ok(())
        } else {
            Err(format!(
                "expected every attempt to be {kind}, got {}",
                self.describe(&Expect::Dropped)
            ))
        }
    }
}
