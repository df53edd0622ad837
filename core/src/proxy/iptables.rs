//! iptables mode: the `iptables-restore` payload kube-proxy writes (pkg/proxy/iptables/
//! proxier.go `syncProxyRules`), emitted in the tests' canonical order (proxy-rules.md §1.4).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::config::ProxyConfig;
use super::model::{Ep, SvcPort};
use super::{ProxyMode, Rendered, RuleStats, hash_b32};
use crate::net::IpFamily;

const NODEPORTS_LAST: &str =
    "\"kubernetes service nodeports; NOTE: this must be the last rule in this chain\"";

/// Rules of one table: declared chains with their rules in generation order.
#[derive(Debug, Default)]
struct Table {
    /// Chain name → rule arguments (without `-A CHAIN `).
    chains: BTreeMap<String, Vec<String>>,
}

impl Table {
    fn declare(&mut self, chain: &str) {
        self.chains.entry(chain.to_owned()).or_default();
    }

    fn add(&mut self, chain: &str, rule: String) {
        match self.chains.get_mut(chain) {
            Some(rules) => rules.push(rule),
            None => {
                self.chains.insert(chain.to_owned(), vec![rule]);
            }
        }
    }
}

/// `portProtoHash`: the 16-character suffix of SVC/SVL/EXT/FW chains.
fn port_proto_hash(sp: &SvcPort) -> String {
    let mut h = hash_b32(&format!("{}{}", sp.svc_name, sp.protocol));
    h.truncate(16);
    h
}

/// `KUBE-SEP-` + hash of service port name, protocol and endpoint string.
pub(crate) fn sep_chain(sp: &SvcPort, ep: &Ep) -> String {
    let mut h = hash_b32(&format!("{}{}{}", sp.svc_name, sp.protocol, ep.text));
    h.truncate(16);
    format!("KUBE-SEP-{h}")
}

/// A `--comment` argument: kube-proxy quotes comments that contain spaces.
fn comment(text: &str) -> String {
    if text.contains(' ') {
        format!("-m comment --comment \"{text}\"")
    } else {
        format!("-m comment --comment {text}")
    }
}

/// The jump rules kube-proxy installs in the built-in chains outside the payload
/// (proxy-rules.md §1.2), as (table, chain, args) in the order they end up in each chain on a
/// fresh host: each is "ensured" by prepending, so later list entries end up on top.
pub(crate) fn builtin_jumps(with_kube_firewall: bool) -> Vec<(&'static str, &'static str, String)> {
    let ext = "-m conntrack --ctstate NEW -m comment --comment \"kubernetes externally-visible service portals\" -j KUBE-EXTERNAL-SERVICES";
    let hc = "-m comment --comment \"kubernetes health check service ports\" -j KUBE-NODEPORTS";
    let svc_filter = "-m conntrack --ctstate NEW -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES";
    let fwd = "-m comment --comment \"kubernetes forwarding rules\" -j KUBE-FORWARD";
    let lbfw = "-m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j KUBE-PROXY-FIREWALL";
    let svc_nat = "-m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES";
    let post = "-m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING";
    // The list in kube-proxy's order (iptablesJumpChains, then the KUBE-FIREWALL copies).
    let mut list: Vec<(&'static str, &'static str, &str)> = vec![
        ("filter", "INPUT", ext),
        ("filter", "FORWARD", ext),
        ("filter", "INPUT", hc),
        ("filter", "FORWARD", svc_filter),
        ("filter", "OUTPUT", svc_filter),
        ("filter", "FORWARD", fwd),
        ("filter", "INPUT", lbfw),
        ("filter", "OUTPUT", lbfw),
        ("filter", "FORWARD", lbfw),
        ("nat", "OUTPUT", svc_nat),
        ("nat", "PREROUTING", svc_nat),
        ("nat", "POSTROUTING", post),
    ];
    if with_kube_firewall {
        list.push(("filter", "INPUT", "-j KUBE-FIREWALL"));
        list.push(("filter", "OUTPUT", "-j KUBE-FIREWALL"));
    }
    list.into_iter().rev().map(|(t, c, a)| (t, c, a.to_owned())).collect()
}

/// Renders the payload for one family.
pub(crate) fn render(ports: &[SvcPort], config: &ProxyConfig, standalone: bool) -> Rendered {
    let mut filter = Table::default();
    let mut nat = Table::default();
    let mark = &config.masquerade_mark;
    let v4 = config.family == IpFamily::V4;
    let localhost_nps = config.localhost_node_ports_effective();
    for chain in [
        "KUBE-SERVICES",
        "KUBE-EXTERNAL-SERVICES",
        "KUBE-FORWARD",
        "KUBE-NODEPORTS",
        "KUBE-PROXY-FIREWALL",
    ] {
        filter.declare(chain);
    }
    let kube_firewall = v4 && localhost_nps;
    if kube_firewall {
        filter.add(
            "KUBE-FIREWALL",
            "-m comment --comment \"block incoming localnet connections\" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP".to_owned(),
        );
    }
    for chain in ["KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-POSTROUTING", "KUBE-MARK-MASQ"] {
        nat.declare(chain);
    }
    nat.add("KUBE-POSTROUTING", format!("-m mark ! --mark {mark}/{mark} -j RETURN"));
    nat.add("KUBE-POSTROUTING", format!("-j MARK --xor-mark {mark}"));
    nat.add(
        "KUBE-POSTROUTING",
        format!(
            "-m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE{}",
            if config.random_fully { " --random-fully" } else { "" }
        ),
    );
    nat.add("KUBE-MARK-MASQ", format!("-j MARK --or-mark {mark}"));

    let total_endpoints: usize = ports.iter().map(|p| p.endpoints.len()).sum();
    let large = total_endpoints > config.large_cluster_threshold;
    let mut stats = RuleStats {
        service_ports: ports.len() as u64,
        endpoints: total_endpoints as u64,
        ..RuleStats::default()
    };
    for sp in ports {
        service_rules(sp, config, large, localhost_nps, &mut filter, &mut nat, &mut stats);
    }

    // filter KUBE-FORWARD comes last among the filter rules.
    if !config.tcp_be_liberal {
        let nfacct = if config.nfacct_invalid {
            " -m nfacct --nfacct-name ct_state_invalid_dropped_pkts"
        } else {
            ""
        };
        filter.add("KUBE-FORWARD", format!("-m conntrack --ctstate INVALID{nfacct} -j DROP"));
    }
    filter.add(
        "KUBE-FORWARD",
        format!("-m comment --comment \"kubernetes forwarding rules\" -m mark --mark {mark}/{mark} -j ACCEPT"),
    );
    filter.add(
        "KUBE-FORWARD",
        "-m comment --comment \"kubernetes forwarding conntrack rule\" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT".to_owned(),
    );

    // The last rule(s) of nat KUBE-SERVICES.
    match config.node_port_cidrs(ProxyMode::Iptables) {
        None => {
            let exclude = if !v4 {
                " ! -d ::1/128"
            } else if !localhost_nps {
                " ! -d 127.0.0.0/8"
            } else {
                ""
            };
            nat.add(
                "KUBE-SERVICES",
                format!("-m comment --comment {NODEPORTS_LAST} -m addrtype --dst-type LOCAL{exclude} -j KUBE-NODEPORTS"),
            );
        }
        Some(cidrs) => {
            for ip in config.node_port_ips(&cidrs, !v4 || !localhost_nps) {
                nat.add(
                    "KUBE-SERVICES",
                    format!("-m comment --comment {NODEPORTS_LAST} -d {ip} -j KUBE-NODEPORTS"),
                );
            }
        }
    }

    let mut text = String::with_capacity(256 + ports.len() * 2048);
    write_table(
        &mut text,
        "filter",
        &filter,
        standalone.then(|| builtins_for("filter", kube_firewall)),
    );
    write_table(&mut text, "nat", &nat, standalone.then(|| builtins_for("nat", kube_firewall)));
    for (name, table) in [("filter", &filter), ("nat", &nat)] {
        stats.chains.insert(name.to_owned(), table.chains.len() as u64);
        stats.rules.insert(name.to_owned(), table.chains.values().map(|r| r.len() as u64).sum());
    }
    Rendered { text, stats }
}

fn builtins_for(table: &str, kube_firewall: bool) -> BTreeMap<String, Vec<String>> {
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (t, chain, args) in builtin_jumps(kube_firewall) {
        if t == table {
            map.entry(chain.to_owned()).or_default().push(args);
        }
    }
    map
}

/// Per service-port rules (proxy-rules.md §1.6).
fn service_rules(
    sp: &SvcPort,
    config: &ProxyConfig,
    large: bool,
    localhost_nps: bool,
    filter: &mut Table,
    nat: &mut Table,
    stats: &mut RuleStats,
) {
    let n = &sp.svc_name;
    let p = &sp.protocol;
    let mp = format!("-m {p} -p {p}");
    let hash = port_proto_hash(sp);
    let svc = format!("KUBE-SVC-{hash}");
    let svl = format!("KUBE-SVL-{hash}");
    let ext = format!("KUBE-EXT-{hash}");
    let fw = format!("KUBE-FW-{hash}");
    let has_endpoints = sp.cat.has_any;
    let ext_accessible = sp.external_accessible();
    let use_svc = !sp.cluster_eps().is_empty() && sp.uses_cluster();
    let use_svl = !sp.local_eps().is_empty() && sp.uses_local();
    let internal_chain = if sp.itp_local { &svl } else { &svc };
    let external_policy_chain = if sp.etp_local { &svl } else { &svc };
    let has_internal = sp.has_internal();
    let has_external = sp.has_external();
    let use_ext = has_endpoints && ext_accessible;
    let use_fw = has_endpoints && !sp.lb_vips.is_empty() && !sp.source_ranges.is_empty();
    let lb_target = if use_fw { &fw } else { &ext };
    let (internal_verdict, external_verdict) = if !has_endpoints {
        let c = format!("\"{n} has no endpoints\"");
        ((c.clone(), "REJECT"), (c, "REJECT"))
    } else {
        let c = format!("\"{n} has no local endpoints\"");
        ((c.clone(), "DROP"), (c, "DROP"))
    };
    if sp.itp_local && has_endpoints && sp.local_eps().is_empty() {
        stats.no_local_endpoints_internal += 1;
    }
    if sp.etp_local && has_endpoints && sp.local_eps().is_empty() {
        stats.no_local_endpoints_external += 1;
    }

    // 1. ClusterIP.
    let cip = sp.cluster_ip;
    let port = sp.port;
    if has_internal {
        nat.add("KUBE-SERVICES", format!("-m comment --comment \"{n} cluster IP\" {mp} -d {cip} --dport {port} -j {internal_chain}"));
    } else {
        let (c, v) = &internal_verdict;
        filter.add(
            "KUBE-SERVICES",
            format!("-m comment --comment {c} {mp} -d {cip} --dport {port} -j {v}"),
        );
    }
    // 2. externalIPs.
    for eip in &sp.external_ips {
        if has_endpoints {
            nat.add(
                "KUBE-SERVICES",
                format!(
                    "-m comment --comment \"{n} external IP\" {mp} -d {eip} --dport {port} -j {ext}"
                ),
            );
        }
        if !has_external {
            let (c, v) = &external_verdict;
            filter.add(
                "KUBE-EXTERNAL-SERVICES",
                format!("-m comment --comment {c} {mp} -d {eip} --dport {port} -j {v}"),
            );
        }
    }
    // 3. Load-balancer VIPs.
    for vip in &sp.lb_vips {
        if has_endpoints {
            nat.add(
                "KUBE-SERVICES",
                format!("-m comment --comment \"{n} loadbalancer IP\" {mp} -d {vip} --dport {port} -j {lb_target}"),
            );
        }
        if use_fw {
            filter.add(
                "KUBE-PROXY-FIREWALL",
                format!("-m comment --comment \"{n} traffic not accepted by {fw}\" {mp} -d {vip} --dport {port} -j DROP"),
            );
        }
    }
    if !has_external {
        let (c, v) = &external_verdict;
        for vip in &sp.lb_vips {
            filter.add(
                "KUBE-EXTERNAL-SERVICES",
                format!("-m comment --comment {c} {mp} -d {vip} --dport {port} -j {v}"),
            );
        }
    }
    // 4. NodePort.
    if sp.node_port != 0 {
        let np = sp.node_port;
        if has_endpoints {
            if localhost_nps && config.nfacct_localhost {
                nat.add(
                    "KUBE-NODEPORTS",
                    format!("{} {mp} -d 127.0.0.0/8 --dport {np} -m nfacct --nfacct-name localhost_nps_accepted_pkts -j {ext}", comment(n)),
                );
            }
            nat.add("KUBE-NODEPORTS", format!("{} {mp} --dport {np} -j {ext}", comment(n)));
        }
        if !has_external {
            let (c, v) = &external_verdict;
            filter.add(
                "KUBE-EXTERNAL-SERVICES",
                format!(
                    "-m comment --comment {c} -m addrtype --dst-type LOCAL {mp} --dport {np} -j {v}"
                ),
            );
        }
    }
    // 5. healthCheckNodePort (always tcp).
    if sp.health_check_node_port != 0 {
        filter.add(
            "KUBE-NODEPORTS",
            format!(
                "-m comment --comment \"{n} health check node port\" -m tcp -p tcp --dport {} -j ACCEPT",
                sp.health_check_node_port
            ),
        );
    }
    // 7. Internal masquerade.
    let masq_match = if config.masquerade_all {
        Some(String::new())
    } else {
        config.detect_local.if_not_local().map(|m| format!(" {m}"))
    };
    if has_internal {
        if let Some(extra) = &masq_match {
            nat.add(
                internal_chain,
                format!("-m comment --comment \"{n} cluster IP\" {mp} -d {cip} --dport {port}{extra} -j KUBE-MARK-MASQ"),
            );
        }
    }
    // 8. EXT chain.
    if use_ext {
        nat.declare(&ext);
        if !sp.etp_local {
            nat.add(&ext, format!("-m comment --comment \"masquerade traffic for {n} external destinations\" -j KUBE-MARK-MASQ"));
        } else {
            if let Some(if_local) = config.detect_local.if_local() {
                nat.add(&ext, format!("-m comment --comment \"pod traffic for {n} external destinations\" {if_local} -j {svc}"));
            }
            nat.add(
                &ext,
                format!("-m comment --comment \"masquerade LOCAL traffic for {n} external destinations\" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ"),
            );
            nat.add(
                &ext,
                format!("-m comment --comment \"route LOCAL traffic for {n} external destinations\" -m addrtype --src-type LOCAL -j {svc}"),
            );
        }
        if has_external {
            nat.add(&ext, format!("-j {external_policy_chain}"));
        }
    }
    // 9. FW chain.
    if use_fw {
        nat.declare(&fw);
        for cidr in &sp.source_ranges {
            nat.add(
                &fw,
                format!("-m comment --comment \"{n} loadbalancer IP\" -s {cidr} -j {ext}"),
            );
        }
        let allow_node =
            config.node_ip.is_some_and(|ip| sp.source_ranges.iter().any(|c| c.contains(&ip)));
        if allow_node {
            for vip in &sp.lb_vips {
                nat.add(
                    &fw,
                    format!("-m comment --comment \"{n} loadbalancer IP\" -s {vip} -j {ext}"),
                );
            }
        }
        nat.add(&fw, format!("-m comment --comment \"other traffic to {n} will be dropped by KUBE-PROXY-FIREWALL\""));
    }
    // 10. SVC / SVL.
    if use_svc {
        nat.declare(&svc);
        endpoint_jumps(nat, &svc, sp, sp.cluster_eps(), large);
    }
    if use_svl {
        nat.declare(&svl);
        endpoint_jumps(nat, &svl, sp, sp.local_eps(), large);
    }
    // 11. SEP chains.
    for ep in &sp.cat.reachable {
        let sep = sep_chain(sp, ep);
        let c = if large { String::new() } else { format!("{} ", comment(n)) };
        nat.add(&sep, format!("{c}-s {} -j KUBE-MARK-MASQ", ep.ip));
        let recent = if sp.affinity.is_some() {
            format!("-m recent --name {sep} --set ")
        } else {
            String::new()
        };
        nat.add(&sep, format!("{c}{recent}{mp} -j DNAT --to-destination {}", ep.text));
    }
}

/// Service-to-endpoint rules (proxy-rules.md §1.7).
fn endpoint_jumps(nat: &mut Table, chain: &str, sp: &SvcPort, eps: &[Ep], large: bool) {
    let n = &sp.svc_name;
    let c = |ep: &Ep| {
        if large { String::new() } else { format!("-m comment --comment \"{n} -> {}\" ", ep.text) }
    };
    if let Some(timeout) = sp.affinity {
        for ep in eps {
            let sep = sep_chain(sp, ep);
            nat.add(
                chain,
                format!(
                    "{}-m recent --name {sep} --rcheck --seconds {timeout} --reap -j {sep}",
                    c(ep)
                ),
            );
        }
    }
    let count = eps.len();
    for (i, ep) in eps.iter().enumerate() {
        let sep = sep_chain(sp, ep);
        if i + 1 < count {
            let probability = 1.0f64 / (count - i) as f64;
            nat.add(
                chain,
                format!(
                    "{}-m statistic --mode random --probability {probability:.10} -j {sep}",
                    c(ep)
                ),
            );
        } else {
            nat.add(chain, format!("{}-j {sep}", c(ep)));
        }
    }
}

/// Chain order of the canonical form: KUBE-NODEPORTS, KUBE-SERVICES, other KUBE-*, the rest.
fn chain_rank(name: &str) -> (u8, &str) {
    match name {
        "KUBE-NODEPORTS" => (0, name),
        "KUBE-SERVICES" => (1, name),
        _ if name.starts_with("KUBE-") => (2, name),
        _ => (3, name),
    }
}

/// The "service name from the comment": comment value up to the first space or colon.
fn comment_service(rule: &str) -> &str {
    let Some(idx) = rule.find("--comment ") else { return "" };
    let rest = &rule[idx + "--comment ".len()..];
    let rest = rest.strip_prefix('"').unwrap_or(rest);
    let end = rest.find([' ', ':', '"']).unwrap_or(rest.len());
    &rest[..end]
}

fn write_table(
    out: &mut String,
    name: &str,
    table: &Table,
    builtins: Option<BTreeMap<String, Vec<String>>>,
) {
    let _ = writeln!(out, "*{name}");
    let builtins = builtins.unwrap_or_default();
    let mut chains: Vec<(&str, &Vec<String>)> =
        table.chains.iter().map(|(k, v)| (k.as_str(), v)).collect();
    chains.extend(builtins.iter().map(|(k, v)| (k.as_str(), v)));
    chains.sort_by(|a, b| chain_rank(a.0).cmp(&chain_rank(b.0)));
    for (chain, _) in &chains {
        if builtins.contains_key(*chain) {
            let _ = writeln!(out, ":{chain} ACCEPT [0:0]");
        } else {
            let _ = writeln!(out, ":{chain} - [0:0]");
        }
    }
    for (chain, rules) in &chains {
        let sorted = matches!(*chain, "KUBE-NODEPORTS" | "KUBE-SERVICES");
        if sorted {
            let mut ordered: Vec<&String> = rules.iter().collect();
            // Stable sort by service name; nat's "must be the last rule" stays last.
            ordered.sort_by(|a, b| {
                let last_a = a.contains("must be the last rule");
                let last_b = b.contains("must be the last rule");
                last_a.cmp(&last_b).then_with(|| comment_service(a).cmp(comment_service(b)))
            });
            for rule in ordered {
                let _ = writeln!(out, "-A {chain} {rule}");
            }
        } else {
            for rule in *rules {
                let _ = writeln!(out, "-A {chain} {rule}");
            }
        }
    }
    out.push_str("COMMIT\n");
}
