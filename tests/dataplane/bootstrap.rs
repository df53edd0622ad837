//! Hand-written reference material that proves the harness independently of svclab's own
//! renderer and tracer: the built-in chain jump rules of proxy-rules.md §1.2, a loadable
//! ordering of the nftables golden transaction, and expected outcomes for golden cases 01, 04,
//! 05 and 06 worked out by hand from their expected rules.

use std::net::{IpAddr, SocketAddr};

use crate::case::{Ep, Expect, Role};

/// The jump rules kube-proxy "ensures" in the built-in chains (proxy-rules.md §1.2), in its
/// list order, as `iptables-restore --noflush` input. Each is inserted at position 1, which is
/// what kube-proxy's "prepend" does on a fresh host, so later entries end up on top.
/// `kube_firewall`: the payload declares KUBE-FIREWALL (IPv4 with localhost NodePorts).
pub(crate) fn builtin_jumps(kube_firewall: bool) -> String {
    const EXT: &str = "-m conntrack --ctstate NEW -m comment --comment \"kubernetes externally-visible service portals\" -j KUBE-EXTERNAL-SERVICES";
    const HC: &str =
        "-m comment --comment \"kubernetes health check service ports\" -j KUBE-NODEPORTS";
    const SVC: &str = "-m conntrack --ctstate NEW -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES";
    const FWD: &str = "-m comment --comment \"kubernetes forwarding rules\" -j KUBE-FORWARD";
    const LBFW: &str = "-m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j KUBE-PROXY-FIREWALL";
    const NAT_SVC: &str = "-m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES";
    const POST: &str = "-m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING";
    let mut filter = vec![
        ("INPUT", EXT),
        ("FORWARD", EXT),
        ("INPUT", HC),
        ("FORWARD", SVC),
        ("OUTPUT", SVC),
        ("FORWARD", FWD),
        ("INPUT", LBFW),
        ("OUTPUT", LBFW),
        ("FORWARD", LBFW),
    ];
    if kube_firewall {
        filter.push(("INPUT", "-j KUBE-FIREWALL"));
        filter.push(("OUTPUT", "-j KUBE-FIREWALL"));
    }
    let nat = [("OUTPUT", NAT_SVC), ("PREROUTING", NAT_SVC), ("POSTROUTING", POST)];
    let mut text = String::from("*filter\n");
    for (chain, args) in filter {
        text.push_str(&format!("-I {chain} 1 {args}\n"));
    }
    text.push_str("COMMIT\n*nat\n");
    for (chain, args) in nat {
        text.push_str(&format!("-I {chain} 1 {args}\n"));
    }
    text.push_str("COMMIT\n");
    text
}

/// The golden nftables transaction is in the Go test's order, which refers to chains and sets
/// before adding them (the test fake does not care; the kernel does). This keeps every line but
/// orders them table, chain, set, map, rule, element, keeping the relative order within each kind.
pub(crate) fn loadable_nft(text: &str) -> String {
    let kinds = ["table", "chain", "set", "map", "rule", "element"];
    let mut groups: Vec<Vec<&str>> = vec![Vec::new(); kinds.len() + 1];
    for line in text.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let kind = line.split_whitespace().nth(1).unwrap_or_default();
        let index = kinds.iter().position(|k| *k == kind).unwrap_or(kinds.len());
        groups[index].push(line);
    }
    let mut out = String::new();
    for line in groups.into_iter().flatten() {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Expected outcomes worked out by hand from the golden rules. One line per probe:
/// `<roles> <dst ip:port> -> <ep>=<p> ... [masq] [affinity]`, or `<roles> <dst> reject|drop`.
/// `node`/`pod` lines are ClusterIP probes from the node and from a pod; `node 127.0.0.1:<n>`
/// lines are localhost NodePorts (svc2 has no local endpoint, but "route LOCAL traffic" sends
/// the node's own connections to the cluster-wide endpoints).
fn table(case: &str) -> &'static str {
    match case {
        "01-overall-current" => {
            "node 172.30.0.41:80 -> 10.180.0.1:80=1 masq
             pod 172.30.0.41:80 -> 10.180.0.1:80=1
             node 172.30.0.42:80 -> 10.180.0.2:80=1 masq
             pod 172.30.0.42:80 -> 10.180.0.2:80=1
             client 192.168.99.22:80 drop
             client 1.2.3.4:80 drop
             client 192.168.0.2:3001 drop
             node 172.30.0.43:80 -> 10.180.0.3:80=1 masq
             pod 172.30.0.43:80 -> 10.180.0.3:80=1
             client 192.168.0.2:3003 -> 10.180.0.3:80=1 masq
             node 172.30.0.44:80 -> 10.180.0.4:80=0.5 10.180.0.5:80=0.5 masq
             pod 172.30.0.44:80 -> 10.180.0.4:80=0.5 10.180.0.5:80=0.5
             client 192.168.99.33:80 -> 10.180.0.4:80=0.5 10.180.0.5:80=0.5 masq
             node 172.30.0.45:80 -> 10.180.0.3:80=1 masq affinity
             pod 172.30.0.45:80 -> 10.180.0.3:80=1 affinity
             client 192.168.0.2:3002 -> 10.180.0.3:80=1 masq affinity
             allowed-client 5.6.7.8:80 -> 10.180.0.3:80=1 masq affinity
             client 5.6.7.8:80 drop
             node 172.30.0.46:80 reject
             pod 172.30.0.46:80 reject
             node 127.0.0.1:3001 -> 10.180.0.2:80=1 masq
             node 127.0.0.1:3002 -> 10.180.0.3:80=1 masq affinity
             node 127.0.0.1:3003 -> 10.180.0.3:80=1 masq"
        }
        "04-clusterip-two-services" => {
            "node 172.30.0.41:80 -> 10.0.1.1:80=1 masq
             pod 172.30.0.41:80 -> 10.0.1.1:80=1
             node 172.30.0.42:8080 -> 10.0.2.1:8080=1 masq
             pod 172.30.0.42:8080 -> 10.0.2.1:8080=1"
        }
        "05-itp-cluster-three-endpoints" => {
            "node 172.30.1.1:80 -> 10.0.1.1:80=0.3333333333 10.0.1.2:80=0.3333333333 10.0.1.3:80=0.3333333334 masq
             pod 172.30.1.1:80 -> 10.0.1.1:80=0.3333333333 10.0.1.2:80=0.3333333333 10.0.1.3:80=0.3333333334"
        }
        "06-itp-local-with-local-endpoint" => {
            "node 172.30.1.1:80 -> 10.0.1.1:80=1 masq
             pod 172.30.1.1:80 -> 10.0.1.1:80=1"
        }
        _ => "",
    }
}

/// The hand-worked expectation for a probe of a golden case.
pub(crate) fn expect(case: &str, role: Role, dst: SocketAddr) -> Result<Expect, String> {
    for line in table(case).lines() {
        let mut words = line.split_whitespace();
        let (Some(roles), Some(target)) = (words.next(), words.next()) else { continue };
        if roles != role.as_str() || target.parse::<SocketAddr>().ok() != Some(dst) {
            continue;
        }
        let rest: Vec<&str> = words.collect();
        return match rest.first().copied() {
            Some("reject") => Ok(Expect::Refused),
            Some("drop") => Ok(Expect::Dropped),
            Some("->") => {
                let masquerade = rest.contains(&"masq");
                let mut endpoints = Vec::new();
                for word in &rest[1..] {
                    if let Some((ep, p)) = word.split_once('=') {
                        let addr: SocketAddr =
                            ep.parse().map_err(|_| format!("bad endpoint {ep}"))?;
                        let p: f64 = p.parse().map_err(|_| format!("bad probability {p}"))?;
                        endpoints.push(Ep { addr, p, masquerade });
                    }
                }
                Ok(Expect::Land { endpoints, affinity: rest.contains(&"affinity") })
            }
            _ => Err(format!("bad table line {line:?}")),
        };
    }
    Err(format!("no hand-worked expectation for {} -> {dst} in {case}", role.as_str()))
}

/// The node IP every golden case uses (config.yaml `nodeIP`).
pub(crate) const GOLDEN_NODE_IP: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 168, 0, 2));
