//! The test topology: one node namespace that holds the kube-proxy rules, and "leaf"
//! namespaces routed through it (endpoint pods, client pods, off-node clients, and a sink that
//! stands for the rest of the world).
//!
//! ```text
//!             +------------------ node (rules, ip_forward) ------------------+
//!  pod 10.x --| vethN 169.254.1.1/32 scope link, route 10.x/32               |
//!  client  ---| vclN  169.254.1.1/32 scope link, route <client>/32           |
//!  sink    ---| vsink 169.254.1.1/32 scope link, default via 169.254.2.2     |
//!             |  lo: 127.0.0.1/8, <nodeIP>/32                                |
//!             +--------------------------------------------------------------+
//! ```
//!
//! Every leaf has `<ip>/32` on its `eth0` and a default route via 169.254.1.1. The node side
//! addresses are link-scoped, so MASQUERADE picks the node IP (the only global address): a
//! masqueraded packet reaches a pod with the node's address as source, as on a real node.
//! The sink forwards and rejects every TCP connection with a reset (an nftables forward
//! chain; a reset from a non-local source needs the forward path, AnyIP routes outside the
//! `local` table fail the reply's source check), so a packet that the rules should have dropped
//! but did not is "refused" instead of vanishing: a "timeout" really means the rules dropped
//! it. The negative-control case (no rules loaded: everything refused) proves this.
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::IpAddr;
use std::path::Path;
use std::process::{Child, Stdio};

use crate::agent::AGENT_ARG;
use crate::netns::{Netns, PREFIX};

/// Link-scoped address of the node side of every veth.
const GATEWAY: &str = "169.254.1.1";
/// Address of the sink.
const SINK: &str = "169.254.2.2";
/// The same for IPv6 topologies: a link-local gateway on every node-side veth, and a sink
/// address from the documentation prefix.
const GATEWAY6: &str = "fe80::1";
const SINK6: &str = "2001:db8:ffff::2";
/// The sink's ruleset: reset every TCP connection and refuse every UDP datagram that reaches it
/// (ICMP port unreachable), drop the rest.
const SINK_RULES6: &str = "table ip6 sink {\n  chain forward {\n    type filter hook forward priority 0; policy drop;\n    meta l4proto tcp reject with tcp reset\n    meta l4proto udp reject\n  }\n}\n";
const SINK_RULES: &str = "table ip sink {\n  chain forward {\n    type filter hook forward priority 0; policy drop;\n    meta l4proto tcp reject with tcp reset\n    meta l4proto udp reject\n  }\n}\n";

/// One endpoint pod: its address, the ports it serves, and its name.
#[derive(Debug, Clone)]
pub(crate) struct PodSpec {
    /// The pod IP (an endpoint address of the scenario).
    pub(crate) ip: IpAddr,
    /// Target ports served over TCP.
    pub(crate) ports: Vec<u16>,
    /// Target ports served over UDP.
    pub(crate) udp_ports: Vec<u16>,
}

/// What to build.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    /// Unique tag of this topology (`<pid>-<n>`), part of every namespace name.
    pub(crate) tag: String,
    /// The node's IP.
    pub(crate) node_ip: IpAddr,
    /// Further addresses of the node (they only need to be local: `--dst-type LOCAL`).
    pub(crate) node_addresses: Vec<IpAddr>,
    /// Endpoint pods.
    pub(crate) pods: Vec<PodSpec>,
    /// Pods that are not endpoints (clients), attached like endpoint pods.
    pub(crate) pod_clients: Vec<IpAddr>,
    /// Node-side interface name for the pod clients instead of `<prefix><n>` (the
    /// BridgeInterface detector's bridge name).
    pub(crate) pod_client_if: Option<String>,
    /// Off-node client namespaces, by address.
    pub(crate) clients: Vec<IpAddr>,
    /// Name prefix of the node-side pod interfaces (`veth`, or the scenario's
    /// InterfaceNamePrefix detect-local value).
    pub(crate) pod_if_prefix: String,
    /// Set `net.ipv4.conf.all.route_localnet=1` on the node (kube-proxy does when localhost
    /// NodePorts are on).
    pub(crate) route_localnet: bool,
}

/// A running server process, killed when dropped.
#[derive(Debug)]
pub(crate) struct Server {
    child: Child,
}

impl Server {
    /// The agent's `serve` role in `ns` as `name` on `addrs` (`ip:port`, `udp:ip:port`),
    /// returned once it is ready.
    pub(crate) fn start(
        ns: &Netns,
        exe: &Path,
        name: &str,
        addrs: &[String],
    ) -> Result<Server, String> {
        let child = ns
            .command(exe)
            .args([AGENT_ARG, "serve", name])
            .args(addrs)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|err| format!("cannot start server {name}: {err}"))?;
        let mut server = Server { child };
        let mut line = String::new();
        if let Some(stdout) = server.child.stdout.take() {
            let _ = BufReader::new(stdout).read_line(&mut line);
        }
        if line.trim() != "ready" {
            return Err(format!("server {name} did not start"));
        }
        Ok(server)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The built topology. Field order is drop order: servers stop before namespaces go.
#[derive(Debug)]
pub(crate) struct Topology {
    servers: Vec<Server>,
    /// Leaf namespaces by address (pods and clients), with the node-side interface name.
    leaves: BTreeMap<IpAddr, (Netns, String)>,
    sink: Netns,
    /// The node namespace.
    pub(crate) node: Netns,
}

fn ns_name(tag: &str, role: &str) -> String {
    format!("{PREFIX}{tag}-{role}")
}

fn sysctl(ns: &Netns, exe: &Path, key: &str, value: &str) -> Result<(), String> {
    let path = format!("/proc/sys/{}", key.replace('.', "/"));
    crate::netns::run(ns.command(exe).args([AGENT_ARG, "write", &path, value])).map(drop)
}

/// Attaches a leaf namespace to the node with a veth pair (`node_if` on the node, `eth0` in
/// the leaf) and routes `ip`/32 (IPv6: `ip`/128) to it. IPv6 addresses skip duplicate address
/// detection (`nodad`), so they are usable at once.
fn attach(node: &Netns, leaf: &Netns, node_if: &str, ip: &str) -> Result<(), String> {
    node.ip(&[
        "link", "add", node_if, "type", "veth", "peer", "name", "eth0", "netns", &leaf.name,
    ])?;
    if ip.contains(':') {
        node.ip(&["-6", "addr", "add", &format!("{GATEWAY6}/64"), "dev", node_if, "nodad"])?;
        node.ip(&["link", "set", node_if, "up"])?;
        node.ip(&["-6", "route", "add", &format!("{ip}/128"), "dev", node_if])?;
        leaf.ip(&["-6", "addr", "add", &format!("{ip}/128"), "dev", "eth0", "nodad"])?;
        leaf.ip(&["link", "set", "eth0", "up"])?;
        leaf.ip(&["-6", "route", "add", "default", "via", GATEWAY6, "dev", "eth0"])?;
        return Ok(());
    }
    node.ip(&["addr", "add", &format!("{GATEWAY}/32"), "dev", node_if, "scope", "link"])?;
    node.ip(&["link", "set", node_if, "up"])?;
    node.ip(&["route", "add", &format!("{ip}/32"), "dev", node_if])?;
    leaf.ip(&["addr", "add", &format!("{ip}/32"), "dev", "eth0"])?;
    leaf.ip(&["link", "set", "eth0", "up"])?;
    leaf.ip(&["route", "add", GATEWAY, "dev", "eth0", "scope", "link"])?;
    leaf.ip(&["route", "add", "default", "via", GATEWAY, "dev", "eth0"])?;
    Ok(())
}

/// Interface names are limited to 15 bytes.
pub(crate) fn if_name(prefix: &str, index: usize) -> String {
    let suffix = index.to_string();
    let keep = 15usize.saturating_sub(suffix.len()).min(prefix.len());
    format!("{}{suffix}", &prefix[..keep])
}

impl Topology {
    /// Builds the namespaces, links and routes, and starts one server per pod. Everything
    /// created so far is removed again if a step fails (the guards drop).
    pub(crate) fn build(spec: &Spec, exe: &Path) -> Result<Topology, String> {
        let node = Netns::create(ns_name(&spec.tag, "node"))?;
        let sink = Netns::create(ns_name(&spec.tag, "sink"))?;
        let mut topo = Topology { servers: Vec::new(), leaves: BTreeMap::new(), sink, node };
        let node = &topo.node;
        for key in ["net.ipv4.conf.all.rp_filter", "net.ipv4.conf.default.rp_filter"] {
            sysctl(node, exe, key, "0")?;
        }
        sysctl(node, exe, "net.ipv4.ip_forward", "1")?;
        // No ICMP rate limit: a client that is refused many times within a second (the
        // differential run probes fast) must get every port-unreachable, not a timeout after
        // the kernel's per-destination burst of six (icmpv4_xrlim_allow).
        sysctl(node, exe, "net.ipv4.icmp_ratelimit", "0")?;
        sysctl(node, exe, "net.ipv4.icmp_msgs_per_sec", "100000")?;
        if spec.route_localnet {
            sysctl(node, exe, "net.ipv4.conf.all.route_localnet", "1")?;
        }
        let v6 = spec.node_ip.is_ipv6();
        let host = if v6 { 128 } else { 32 };
        if v6 {
            sysctl(node, exe, "net.ipv6.conf.all.forwarding", "1")?;
            sysctl(node, exe, "net.ipv6.icmp.ratelimit", "0")?;
        }
        // The node IP lives on lo (this needs no dummy-interface driver in the kernel).
        node.ip(&["addr", "add", &format!("{}/{host}", spec.node_ip), "dev", "lo"])?;
        for ip in &spec.node_addresses {
            node.ip(&["addr", "add", &format!("{ip}/{host}"), "dev", "lo"])?;
        }

        // The sink: default route of the node; answers every TCP connection with a reset.
        let sink_ip = if v6 { SINK6 } else { SINK };
        attach(node, &topo.sink, "vsink", sink_ip)?;
        node.ip(&["route", "add", "default", "via", sink_ip, "dev", "vsink"])?;
        sysctl(&topo.sink, exe, "net.ipv4.ip_forward", "1")?;
        sysctl(&topo.sink, exe, "net.ipv4.icmp_ratelimit", "0")?;
        sysctl(&topo.sink, exe, "net.ipv4.icmp_msgs_per_sec", "100000")?;
        sysctl(&topo.sink, exe, "net.ipv4.conf.all.send_redirects", "0")?;
        sysctl(&topo.sink, exe, "net.ipv4.conf.eth0.send_redirects", "0")?;
        if v6 {
            sysctl(&topo.sink, exe, "net.ipv6.conf.all.forwarding", "1")?;
            sysctl(&topo.sink, exe, "net.ipv6.icmp.ratelimit", "0")?;
        }
        topo.sink.exec_with_input(
            "nft",
            &["-f", "-"],
            if v6 { SINK_RULES6 } else { SINK_RULES },
        )?;

        let pods = spec.pods.iter().map(|p| p.ip).chain(spec.pod_clients.iter().copied());
        let on_node = |ip: IpAddr| ip == spec.node_ip || spec.node_addresses.contains(&ip);
        for (i, ip) in pods.enumerate() {
            // An endpoint on a node address is a hostNetwork pod (the apiserver behind
            // `default/kubernetes`, say): it serves from the node namespace itself.
            if on_node(ip) {
                continue;
            }
            let leaf = Netns::create(ns_name(&spec.tag, &format!("p{i}")))?;
            let if_name = match &spec.pod_client_if {
                Some(name) if i >= spec.pods.len() => name.clone(),
                _ => if_name(&spec.pod_if_prefix, i),
            };
            attach(node, &leaf, &if_name, &ip.to_string())?;
            topo.leaves.insert(ip, (leaf, if_name));
        }
        for (i, client) in spec.clients.iter().enumerate() {
            let leaf = Netns::create(ns_name(&spec.tag, &format!("c{i}")))?;
            let if_name = if_name("vcl", i);
            attach(node, &leaf, &if_name, &client.to_string())?;
            topo.leaves.insert(*client, (leaf, if_name));
        }
        for pod in &spec.pods {
            let ns = if on_node(pod.ip) {
                &topo.node
            } else {
                let Some((leaf, _)) = topo.leaves.get(&pod.ip) else { continue };
                leaf
            };
            let mut addrs: Vec<String> = pod
                .ports
                .iter()
                .map(|port| std::net::SocketAddr::new(pod.ip, *port).to_string())
                .collect();
            addrs.extend(
                pod.udp_ports
                    .iter()
                    .map(|port| format!("udp:{}", std::net::SocketAddr::new(pod.ip, *port))),
            );
            topo.servers.push(Server::start(ns, exe, &pod_name(pod.ip), &addrs)?);
        }
        Ok(topo)
    }

    /// The namespace of a leaf (pod or client) by address.
    pub(crate) fn leaf(&self, ip: IpAddr) -> Option<&Netns> {
        self.leaves.get(&ip).map(|(ns, _)| ns)
    }
}

/// The name a pod's server answers with.
pub(crate) fn pod_name(ip: IpAddr) -> String {
    format!("pod-{ip}")
}
