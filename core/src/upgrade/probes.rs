//! Probe packets: for every Service port, new connections to each of its addresses from where
//! clients are (a pod on the node, the node itself, a client outside the cluster), traced
//! through a ruleset, and their outcomes put in a form two rulesets can be compared in.
//!
//! The probes of a Service port of the ruleset's family: its ClusterIPs from a pod and from the
//! node; its NodePort on the node's address from outside and on localhost from the node; its
//! external IPs and load-balancer ingress IPs from outside. The pod is an address of the node's pod CIDR (else of the
//! detector's cluster CIDR, else `10.244.0.10` / `fd00:10:244::a`), arriving on the detector's
//! interface when local traffic is detected by interface; the outside client is
//! `203.0.113.10` / `2001:db8::10` (documentation ranges).

use std::collections::BTreeSet;
use std::net::IpAddr;

use ipnet::IpNet;

use crate::model::ServiceKey;
use crate::net::{IpFamily, ip_string, parse_cidr_sloppy, parse_ip_sloppy};
use crate::proxy::{DetectLocal, ProxyConfig};
use crate::trace::{TraceReport, TraceRequest};
use crate::world::World;

/// One probe.
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    /// The Service.
    pub(crate) service: ServiceKey,
    /// kube-proxy's name of the Service port (`ns/name:port`).
    pub(crate) port_name: String,
    /// What is probed, in words (`the ClusterIP from a pod`).
    pub(crate) what: String,
    /// The packet.
    pub(crate) request: TraceRequest,
}

/// A probe's outcome, comparable across rulesets: each distinct fate (verdict, endpoint,
/// masquerade), in order; `None` when the trace could not be completed.
pub(crate) type Outcome = Option<BTreeSet<(String, String, bool)>>;

/// The outcome of a trace.
pub(crate) fn outcome(report: &TraceReport) -> Outcome {
    if !report.warnings.is_empty() && report.outcomes.is_empty() {
        return None;
    }
    if report.warnings.iter().any(|w| w.contains("cut short")) {
        return None;
    }
    Some(
        report
            .outcomes
            .iter()
            .map(|o| (o.verdict.clone(), o.endpoint.clone().unwrap_or_default(), o.masquerade))
            .collect(),
    )
}

/// An outcome in words: `10.244.0.5:8080, 10.244.1.5:8080 (masqueraded)`, `DROP`, `REJECT`,
/// `no rule takes it, routed as it is`.
pub(crate) fn outcome_words(outcome: &BTreeSet<(String, String, bool)>) -> String {
    let mut endpoints: Vec<String> = Vec::new();
    let mut others: Vec<String> = Vec::new();
    for (verdict, endpoint, masquerade) in outcome {
        let masq = if *masquerade { " (masqueraded)" } else { "" };
        match verdict.as_str() {
            "endpoint" => endpoints.push(format!("{endpoint}{masq}")),
            "no service" => others.push(format!("no rule takes it, routed as it is{masq}")),
            other => others.push(other.to_owned()),
        }
    }
    let mut parts = Vec::new();
    if !endpoints.is_empty() {
        parts.push(format!("reaches {}", endpoints.join(", ")));
    }
    others.dedup();
    parts.extend(others);
    if parts.is_empty() { "no outcome".to_owned() } else { parts.join("; ") }
}

/// Whether an outcome reaches an endpoint.
pub(crate) fn reaches(outcome: &BTreeSet<(String, String, bool)>) -> bool {
    outcome.iter().any(|(verdict, ..)| verdict == "endpoint")
}

/// The probes of every stored Service of the configuration's family, in key order.
pub(crate) fn probes(world: &World, config: &ProxyConfig) -> Vec<Probe> {
    let family = config.family;
    let pod = pod_source(world, config);
    let outside = match family {
        IpFamily::V4 => "203.0.113.10",
        IpFamily::V6 => "2001:db8::10",
    };
    // The node's own address (a loopback address is no destination from outside).
    let usable = |ip: &IpAddr| IpFamily::of(*ip) == family && !ip.is_loopback();
    let node_ip = config
        .node_ip
        .filter(usable)
        .or_else(|| config.host_addresses.iter().copied().find(usable));
    // Node ports on localhost, probed from the node itself (iptables' localhostNodePorts).
    let loopback = config
        .host_addresses
        .iter()
        .copied()
        .find(|ip| IpFamily::of(*ip) == family && ip.is_loopback());
    let mut out = Vec::new();
    for (key, stored) in &world.services {
        let service = &stored.service;
        if !service.needs_cluster_ip() {
            continue;
        }
        let status = world.service_status.get(key).unwrap_or(&service.status);
        for port in &service.spec.ports {
            let Ok(dport) = u16::try_from(port.port) else { continue };
            let protocol = port.protocol.to_ascii_lowercase();
            let port_name = port_name(key, &port.name);
            let mut add =
                |what: String, src: &str, dst: IpAddr, dport: u16, interface: Option<String>| {
                    out.push(Probe {
                        service: key.clone(),
                        port_name: port_name.clone(),
                        what,
                        request: TraceRequest {
                            src: src.to_owned(),
                            dst: ip_string(dst),
                            dport,
                            protocol: protocol.clone(),
                            node: None,
                            in_interface: interface,
                        },
                    });
                };
            for ip in addresses(&service.spec.cluster_ips, family) {
                add(
                    format!("ClusterIP {}:{dport} from a pod", ip_string(ip)),
                    &pod.0,
                    ip,
                    dport,
                    pod.1.clone(),
                );
                if let Some(node) = node_ip {
                    add(
                        format!("ClusterIP {}:{dport} from the node", ip_string(ip)),
                        &ip_string(node),
                        ip,
                        dport,
                        None,
                    );
                }
            }
            if let (Some(node), Ok(node_port)) = (node_ip, u16::try_from(port.node_port))
                && node_port != 0
            {
                add(
                    format!("NodePort {}:{node_port} from outside", ip_string(node)),
                    outside,
                    node,
                    node_port,
                    None,
                );
            }
            if let (Some(lo), Ok(node_port)) = (loopback, u16::try_from(port.node_port))
                && node_port != 0
            {
                let what = format!("NodePort {}:{node_port} from the node", ip_string(lo));
                add(what, &ip_string(lo), lo, node_port, None);
            }
            for ip in addresses(&service.spec.external_ips, family) {
                add(
                    format!("external IP {}:{dport} from outside", ip_string(ip)),
                    outside,
                    ip,
                    dport,
                    None,
                );
            }
            let ingress: Vec<String> =
                status.load_balancer_ingress.iter().map(|i| i.ip.clone()).collect();
            for ip in addresses(&ingress, family) {
                add(
                    format!("load-balancer IP {}:{dport} from outside", ip_string(ip)),
                    outside,
                    ip,
                    dport,
                    None,
                );
            }
        }
    }
    out
}

/// kube-proxy's Service port name: `ns/name:port`, `ns/name` for an unnamed port.
pub(crate) fn port_name(key: &ServiceKey, port: &str) -> String {
    if port.is_empty() { key.to_string() } else { format!("{key}:{port}") }
}

/// Every Service port name of a world.
pub(crate) fn port_names(world: &World) -> BTreeSet<String> {
    world
        .services
        .iter()
        .flat_map(|(key, s)| {
            let names: Vec<String> =
                s.service.spec.ports.iter().map(|p| port_name(key, &p.name)).collect();
            names.into_iter().chain([key.to_string()])
        })
        .collect()
}

/// The addresses of a list that parse and are of a family.
fn addresses(texts: &[String], family: IpFamily) -> Vec<IpAddr> {
    texts
        .iter()
        .filter_map(|t| parse_ip_sloppy(t))
        .filter(|ip| IpFamily::of(*ip) == family)
        .collect()
}

/// The pod a probe comes from: its address, and the interface it arrives on when kube-proxy
/// detects local traffic by interface.
fn pod_source(world: &World, config: &ProxyConfig) -> (String, Option<String>) {
    let family = config.family;
    let node_cidr =
        world.nodes.iter().find(|n| n.value.metadata.name == config.node_name).and_then(|n| {
            n.value
                .pod_cidrs
                .iter()
                .filter_map(|c| parse_cidr_sloppy(c).map(|(_, n)| n))
                .find(|n| IpFamily::of_net(n) == family)
        });
    let detector_cidr = match &config.detect_local {
        DetectLocal::Cidr(net) if IpFamily::of_net(net) == family => Some(*net),
        _ => None,
    };
    let address = node_cidr.or(detector_cidr).map_or_else(
        || match family {
            IpFamily::V4 => "10.244.0.10".to_owned(),
            IpFamily::V6 => "fd00:10:244::a".to_owned(),
        },
        |net| ip_string(nth(net, 10)),
    );
    let interface = match &config.detect_local {
        DetectLocal::BridgeInterface(name) => Some(name.clone()),
        DetectLocal::InterfaceNamePrefix(prefix) => Some(format!("{prefix}0")),
        _ => None,
    };
    (address, interface)
}

/// The `n`th address of a network (the network address itself when it has fewer).
fn nth(net: IpNet, n: u128) -> IpAddr {
    match net {
        IpNet::V4(v4) => {
            let base = u32::from(v4.network());
            let size = 1u64 << (32 - u32::from(v4.prefix_len()));
            let offset = if u64::try_from(n).unwrap_or(u64::MAX) < size { n as u32 } else { 0 };
            IpAddr::V4(std::net::Ipv4Addr::from(base.wrapping_add(offset)))
        }
        IpNet::V6(v6) => {
            let base = u128::from(v6.network());
            let bits = 128 - u32::from(v6.prefix_len());
            let offset = if bits >= 128 || n < (1u128 << bits) { n } else { 0 };
            IpAddr::V6(std::net::Ipv6Addr::from(base.wrapping_add(offset)))
        }
    }
}
