//! What svclab itself says about a scenario: the cluster state (`evaluate`), the standalone
//! ruleset (`render` with `standalone`, what `svclab render --standalone` prints) and the
//! packet trace (`trace`, what `svclab trace` prints), turned into the harness's expectations.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

use serde_json::{Value, json};
use svclab_core::testing::{DetectLocal, ProxyConfig};
use svclab_core::{
    CheckOptions, Input, IpFamily, Object, ProxyMode, RenderOptions, ServiceKey, TraceReport,
    TraceRequest, World,
};

use crate::case::{Ep, Expect, Family, Mode};

fn proxy_mode(mode: Mode) -> ProxyMode {
    match mode {
        Mode::Iptables => ProxyMode::Iptables,
        Mode::Nftables => ProxyMode::Nftables,
    }
}

fn strings(v: &Value) -> Vec<Value> {
    v.as_array().cloned().unwrap_or_default()
}

/// The documents that state a golden's `config.yaml` with real objects: the
/// KubeProxyConfiguration, the Node, and a ClusterProfile whose ranges admit the goldens'
/// addresses (ClusterIPs in 172.30.0.0/16, NodePorts from 3001).
pub(crate) fn golden_config_docs(config: &Value) -> String {
    let detect = &config["detectLocal"];
    let mode = detect["mode"].as_str().unwrap_or("None");
    let cluster_cidr: Vec<String> = strings(&detect["clusterCIDRs"])
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let node_name = config["nodeName"].as_str().unwrap_or("test-node");
    let kpc = json!({
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "hostnameOverride": node_name,
        "clusterCIDR": cluster_cidr.join(","),
        "detectLocalMode": mode,
        "detectLocal": {
            "bridgeInterface": detect["bridgeInterface"].as_str().unwrap_or(""),
            "interfaceNamePrefix": detect["interfaceNamePrefix"].as_str().unwrap_or(""),
        },
        "iptables": {
            "masqueradeAll": config["masqueradeAll"].as_bool().unwrap_or(false),
            "localhostNodePorts": config["localhostNodePorts"].as_bool().unwrap_or(true),
        },
        // The nftables proxier reads its own block.
        "nftables": {"masqueradeAll": config["masqueradeAll"].as_bool().unwrap_or(false)},
        "nodePortAddresses": Value::Array(strings(&config["nodePortAddresses"])),
        "conntrack": {"tcpBeLiberal": config["conntrackTCPBeLiberal"].as_bool().unwrap_or(false)},
    });
    let mut node = json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node_name, "labels": config["topologyLabels"].clone()},
        "spec": {"podCIDRs": detect["podCIDRs"].clone()},
    });
    if let Some(ip) = config["nodeIP"].as_str() {
        node["status"] = json!({"addresses": [{"type": "InternalIP", "address": ip}]});
    }
    if !node["metadata"]["labels"].is_object() {
        node["metadata"]["labels"] = json!({});
    }
    if !node["spec"]["podCIDRs"].is_array() {
        node["spec"]["podCIDRs"] = json!([]);
    }
    let nfacct = &config["nfacctCounters"];
    let profile = json!({
        "apiVersion": "svclab.dev/v1alpha1",
        "kind": "ClusterProfile",
        "serviceClusterIPRanges": ["172.30.0.0/16"],
        "serviceNodePortRange": "3000-32767",
        "host": {
            "iptablesRandomFully": config["iptablesHasRandomFully"].as_bool().unwrap_or(false),
            "nfacct": nfacct["ct_state_invalid_dropped_pkts"].as_bool().unwrap_or(false)
                && nfacct["localhost_nps_accepted_pkts"].as_bool().unwrap_or(false),
            "interfaceAddresses": config["nodeInterfaceAddresses"].clone(),
        },
    });
    let mut docs = String::new();
    for doc in [kpc, node, profile] {
        if let Ok(text) = serde_norway::to_string(&doc) {
            docs.push_str("---\n");
            docs.push_str(&text);
        }
    }
    docs
}

/// A scenario as svclab evaluates it, with what the API would not keep.
pub(crate) struct Evaluated {
    pub(crate) world: World,
    /// `status.loadBalancer.ingress` IPs as written, by (namespace, name): creating a Service
    /// ignores its status, but kube-proxy programs the load-balancer IPs a controller sets.
    pub(crate) ingress: BTreeMap<ServiceKey, Vec<IpAddr>>,
    /// Services of the files that the cluster did not accept, with the reasons.
    pub(crate) rejected: Vec<String>,
}

/// Evaluates scenario files (a golden's input plus its config documents, or an example).
pub(crate) fn evaluate(inputs: &[(String, String)]) -> Result<Evaluated, String> {
    let inputs: Vec<Input> =
        inputs.iter().map(|(name, text)| Input::new(name.clone(), text)).collect();
    let (world, report) = svclab_core::evaluate(&inputs, &CheckOptions::default());
    // Scenario errors (an example may show a rejected Service) leave the rest of the cluster
    // usable; only a scenario without any Service is useless here.
    if world.services.is_empty() {
        let messages: Vec<String> = report.diagnostics.iter().map(|d| d.message.clone()).collect();
        return Err(format!("no Service in the scenario: {}", messages.join("; ")));
    }
    let mut ingress = BTreeMap::new();
    let mut rejected = Vec::new();
    for object in svclab_core::parse(&inputs).objects {
        let Object::Service(svc) = object else { continue };
        let meta = &svc.value.metadata;
        let key = ServiceKey::defaulted(meta);
        let ips: Vec<IpAddr> = svc
            .value
            .status
            .load_balancer_ingress
            .iter()
            .filter_map(|i| i.ip.parse().ok())
            .collect();
        if !ips.is_empty() {
            ingress.insert(key.clone(), ips);
        }
        if !world.services.contains_key(&key) {
            let reasons: Vec<String> = report
                .diagnostics
                .iter()
                .filter(|d| {
                    d.object.as_ref().is_some_and(|o| {
                        o.name == key.name
                            && (o.namespace == key.namespace || o.namespace.is_empty())
                    })
                })
                .map(|d| d.message.clone())
                .collect();
            rejected.push(format!("{key}: {}", reasons.join("; ")));
        }
    }
    Ok(Evaluated { world, ingress, rejected })
}

/// The node facts the topology needs, read through svclab's own proxier configuration.
#[derive(Debug, Clone)]
pub(crate) struct NodeFacts {
    /// The node's IPv4 address, if the scenario gives one (a Node's InternalIP/ExternalIP or
    /// the profile's interface addresses).
    pub(crate) node_ip: Option<IpAddr>,
    /// Further IPv4 addresses of the node (besides the node IP and loopback).
    pub(crate) other_addresses: Vec<IpAddr>,
    pub(crate) local_cidr: Option<(IpAddr, u8)>,
    /// InterfaceNamePrefix detector value, if any.
    pub(crate) interface_prefix: Option<String>,
    /// BridgeInterface detector value, if any (not modelled by the topology).
    pub(crate) bridge: Option<String>,
    /// The first IPv4 service CIDR (nftables drops unallocated addresses inside it).
    pub(crate) service_cidr: Option<(IpAddr, u8)>,
}

fn ip_family(family: Family) -> IpFamily {
    match family {
        Family::V4 => IpFamily::V4,
        Family::V6 => IpFamily::V6,
    }
}

pub(crate) fn node_facts(world: &World, mode: Mode, family: Family) -> Result<NodeFacts, String> {
    let config = ProxyConfig::from_world(world, Some(ip_family(family)), None, proxy_mode(mode))
        .map_err(|err| format!("proxier configuration: {err}"))?;
    let of_family = |ip: &IpAddr| (Family::of(*ip) == family).then_some(*ip);
    // kube-proxy 1.24 to 1.27 hands its proxier the bind address as node IP (`nodeIPTuple`:
    // 0.0.0.0 unless one is set); the node still has its own address, which is where its node
    // ports are reached and what a masqueraded connection shows.
    let node_ip =
        config.node_ip.as_ref().and_then(of_family).filter(|ip| !ip.is_unspecified()).or_else(
            || config.host_addresses.iter().filter_map(of_family).find(|ip| !ip.is_loopback()),
        );
    let other_addresses = config
        .host_addresses
        .iter()
        .filter_map(of_family)
        .filter(|ip| !ip.is_loopback() && Some(*ip) != node_ip)
        .collect();
    let (mut local_cidr, mut interface_prefix, mut bridge) = (None, None, None);
    match &config.detect_local {
        DetectLocal::Cidr(net) => local_cidr = family.parse_cidr(&net.to_string()),
        DetectLocal::InterfaceNamePrefix(prefix) => interface_prefix = Some(prefix.clone()),
        DetectLocal::BridgeInterface(name) => bridge = Some(name.clone()),
        _ => {}
    }
    let service_cidr =
        config.service_cidrs.iter().find_map(|net| family.parse_cidr(&net.to_string()));
    Ok(NodeFacts { node_ip, other_addresses, local_cidr, interface_prefix, bridge, service_cidr })
}

/// `svclab render --proxy-mode <mode> --ip-family <family> --standalone`.
pub(crate) fn render(world: &World, mode: Mode, family: Family) -> Result<String, String> {
    let options = RenderOptions {
        family: Some(ip_family(family)),
        standalone: true,
        ..RenderOptions::new(proxy_mode(mode))
    };
    svclab_core::render(world, &options).map_err(|err| format!("render: {err}"))
}

/// The trace request for one connection from `src` to `dst`.
fn request(src: IpAddr, dst: SocketAddr, udp: bool, in_interface: Option<&str>) -> TraceRequest {
    TraceRequest {
        src: src.to_string(),
        dst: dst.ip().to_string(),
        dport: dst.port(),
        protocol: if udp { "udp" } else { "tcp" }.to_owned(),
        node: None,
        in_interface: in_interface.map(str::to_owned),
    }
}

/// `svclab trace` for one connection, through the rules of the given mode.
pub(crate) fn trace(
    world: &World,
    mode: Mode,
    src: IpAddr,
    dst: SocketAddr,
    udp: bool,
    in_interface: Option<&str>,
) -> TraceReport {
    let request = request(src, dst, udp, in_interface);
    // `svclab trace --proxy-mode <mode>`: the nftables tracer walks the nftables rendering.
    svclab_core::testing::trace_mode(world, &request, proxy_mode(mode))
}

/// `svclab trace` over an `iptables-save` dump of the loaded kernel rules (what a user pastes
/// into a scenario), with the scenario's node facts.
pub(crate) fn trace_dump(
    world: &World,
    dump: &str,
    src: IpAddr,
    dst: SocketAddr,
    udp: bool,
    in_interface: Option<&str>,
) -> Result<TraceReport, String> {
    let family = Family::of(dst.ip());
    let config = ProxyConfig::from_world(world, Some(ip_family(family)), None, ProxyMode::Iptables)
        .map_err(|err| format!("proxier configuration: {err}"))?;
    let request = request(src, dst, udp, in_interface);
    Ok(svclab_core::testing::trace_text(dump, &config, &request))
}

/// Turns a trace into what the connections should do. `affinity`: the Service has ClientIP
/// session affinity (the trace describes a first connection only).
pub(crate) fn expectation(report: &TraceReport, affinity: bool) -> Result<Expect, String> {
    let outcomes = &report.outcomes;
    if outcomes.is_empty() {
        return Err(format!("the trace has no outcome ({})", report.warnings.join("; ")));
    }
    let verdicts: Vec<&str> = outcomes.iter().map(|o| o.verdict.as_str()).collect();
    if verdicts.iter().all(|v| *v == "endpoint") {
        let mut endpoints: Vec<Ep> = Vec::new();
        for outcome in outcomes {
            let text = outcome.endpoint.as_deref().unwrap_or_default();
            let addr: SocketAddr =
                text.parse().map_err(|_| format!("trace endpoint {text:?} is not ip:port"))?;
            match endpoints.iter_mut().find(|e| e.addr == addr) {
                Some(e) if e.masquerade != outcome.masquerade => {
                    return Err(format!("the trace masquerades on some paths to {addr} only"));
                }
                Some(e) => e.p += outcome.probability,
                None => endpoints.push(Ep {
                    addr,
                    p: outcome.probability,
                    masquerade: outcome.masquerade,
                }),
            }
        }
        endpoints.sort_by_key(|e| e.addr);
        return Ok(Expect::Land { endpoints, affinity });
    }
    match verdicts.as_slice() {
        ["DROP"] => Ok(Expect::Dropped),
        ["REJECT"] => Ok(Expect::Refused),
        // Not handled by any service rule (or delivered locally without DNAT): in the topology
        // nothing listens there, so the node or the sink answers with a reset.
        ["no service"] | ["ACCEPT"] => Ok(Expect::Unhandled),
        _ => Err(format!("mixed trace verdicts {verdicts:?}")),
    }
}

/// Whether the EndpointSlices of a scenario hold at least one IPv4 address (the examples and
/// suite scenarios are probed over IPv4).
pub(crate) fn has_endpoints(world: &World) -> bool {
    world.endpoint_slices.iter().any(|s| {
        s.value.address_type == "IPv4" && s.value.endpoints.iter().any(|e| !e.addresses.is_empty())
    })
}

/// Reads a file.
pub(crate) fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))
}
