//! nftables mode: the `kube-proxy` table kube-proxy's nftables proxier writes
//! (pkg/proxy/nftables/proxier.go), as an `nft -f` transaction for an empty host.

use std::fmt::Write as _;
use std::net::IpAddr;

use super::config::{ProxyConfig, nft_ip};
use super::model::{Ep, SvcPort};
use super::{ProxyMode, Rendered, RuleStats, hash_b32};
use crate::net::IpFamily;

/// `H8(name) + "-" + name`, truncated like kube-proxy for very long names.
fn hashed_name(prefix: &str, name: &str) -> String {
    let mut h = hash_b32(name);
    h.truncate(8);
    let mut base = format!("{h}-{name}");
    if base.len() > 240 {
        let mut cut = 237;
        while !base.is_char_boundary(cut) {
            cut -= 1;
        }
        base.truncate(cut);
        base.push_str("...");
    }
    format!("{prefix}-{base}")
}

fn service_base(sp: &SvcPort) -> String {
    format!("{}/{}/{}/{}", sp.namespace, sp.name, sp.protocol, sp.port_name)
}

/// Endpoint chain / affinity set base: IPv6 colons become dots.
fn endpoint_base(sp: &SvcPort, ep: &Ep) -> String {
    let ip = ep.ip.to_string().replace(':', ".");
    format!("{}__{}/{}", service_base(sp), ip, ep.port)
}

/// The transaction text with counts. Objects are grouped so that everything a line refers to
/// is defined above it (`nft -f` rejects a `goto` to a chain added later in the file): sets
/// and maps, then chains, then rules, then elements.
struct Tx {
    text: String,
    objects: String,
    chain_lines: String,
    rule_lines: String,
    element_lines: String,
    prefix: String,
    rules: u64,
    chains: u64,
}

impl Tx {
    fn line(&mut self, kind: &str, rest: &str) {
        let buffer = match kind {
            "rule" => {
                self.rules += 1;
                &mut self.rule_lines
            }
            "chain" => {
                self.chains += 1;
                &mut self.chain_lines
            }
            "element" => &mut self.element_lines,
            _ => &mut self.objects,
        };
        let _ = writeln!(buffer, "add {kind} {} {rest}", self.prefix);
    }

    fn finish(mut self) -> (String, u64, u64) {
        for part in [&self.objects, &self.chain_lines, &self.rule_lines, &self.element_lines] {
            self.text.push_str(part);
        }
        (self.text, self.rules, self.chains)
    }

    fn chain(&mut self, name: &str) {
        self.line("chain", name);
    }

    fn rule(&mut self, chain: &str, rule: &str) {
        self.line("rule", &format!("{chain} {rule}"));
    }

    fn element(&mut self, set: &str, element: &str) {
        self.line("element", &format!("{set} {{ {element} }}"));
    }
}

/// Renders the table for one family.
pub(crate) fn render(ports: &[SvcPort], config: &ProxyConfig) -> Rendered {
    let family = config.family;
    let ipx = nft_ip(family);
    let addr_type = match family {
        IpFamily::V4 => "ipv4_addr",
        IpFamily::V6 => "ipv6_addr",
    };
    let mark = &config.masquerade_mark;
    let mut tx = Tx {
        text: String::with_capacity(4096 + ports.len() * 2048),
        objects: String::new(),
        chain_lines: String::new(),
        rule_lines: String::with_capacity(ports.len() * 1024),
        element_lines: String::new(),
        prefix: format!("{ipx} kube-proxy"),
        rules: 0,
        chains: 0,
    };
    let _ =
        writeln!(tx.text, "add table {ipx} kube-proxy {{ comment \"rules for kube-proxy\" ; }}");
    let node_port_cidrs = config.node_port_cidrs(ProxyMode::Nftables);

    tx.line(
        "set",
        &format!("cluster-ips {{ type {addr_type} ; comment \"Active ClusterIPs\" ; }}"),
    );
    if node_port_cidrs.is_some() {
        tx.line("set", &format!("nodeport-ips {{ type {addr_type} ; comment \"IPs that accept NodePort traffic\" ; }}"));
    }
    tx.line(
        "map",
        &format!("firewall-ips {{ type {addr_type} . inet_proto . inet_service : verdict ; comment \"destinations that are subject to LoadBalancerSourceRanges\" ; }}"),
    );
    tx.line(
        "map",
        "no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment \"vmap to drop or reject packets to service nodeports with no endpoints\" ; }",
    );
    tx.line(
        "map",
        &format!("no-endpoint-services {{ type {addr_type} . inet_proto . inet_service : verdict ; comment \"vmap to drop or reject packets to services with no endpoints\" ; }}"),
    );
    tx.line(
        "map",
        &format!("service-ips {{ type {addr_type} . inet_proto . inet_service : verdict ; comment \"ClusterIP, ExternalIP and LoadBalancer IP traffic\" ; }}"),
    );
    tx.line("map", "service-nodeports { type inet_proto . inet_service : verdict ; comment \"NodePort traffic\" ; }");

    for chain in [
        "cluster-ips-check",
        "filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }",
        "filter-output-pre-dnat { type filter hook output priority -110 ; }",
        "filter-forward { type filter hook forward priority 0 ; }",
        "filter-input { type filter hook input priority 0 ; }",
        "filter-output { type filter hook output priority 0 ; }",
        "firewall-check",
        "mark-for-masquerade",
        "masquerading",
        "nat-output { type nat hook output priority -100 ; }",
        "nat-postrouting { type nat hook postrouting priority 100 ; }",
        "nat-prerouting { type nat hook prerouting priority -100 ; }",
        "nodeport-endpoints-check",
        "reject-chain { comment \"helper for @no-endpoint-services / @no-endpoint-nodeports\" ; }",
        "services",
        "service-endpoints-check",
    ] {
        tx.chain(chain);
    }
    tx.rule("cluster-ips-check", &format!("{ipx} daddr @cluster-ips reject comment \"Reject traffic to invalid ports of ClusterIPs\""));
    if !config.service_cidrs.is_empty() {
        let cidrs: Vec<String> = config.service_cidrs.iter().map(ToString::to_string).collect();
        tx.rule(
            "cluster-ips-check",
            &format!(
                "{ipx} daddr {{ {} }} drop comment \"Drop traffic to unallocated ClusterIPs\"",
                cidrs.join(" , ")
            ),
        );
    }
    tx.rule("filter-prerouting-pre-dnat", "ct state new jump firewall-check");
    tx.rule("filter-forward", "ct state new jump service-endpoints-check");
    tx.rule("filter-forward", "ct state new jump cluster-ips-check");
    tx.rule("filter-input", "ct state new jump nodeport-endpoints-check");
    tx.rule("filter-input", "ct state new jump service-endpoints-check");
    tx.rule("filter-output", "ct state new jump service-endpoints-check");
    tx.rule("filter-output-pre-dnat", "ct state new jump firewall-check");
    tx.rule("filter-output", "ct state new jump cluster-ips-check");
    tx.rule("firewall-check", &format!("{ipx} daddr . meta l4proto . th dport vmap @firewall-ips"));
    tx.rule("mark-for-masquerade", &format!("mark set mark or {mark}"));
    tx.rule("masquerading", &format!("mark and {mark} == 0 return"));
    tx.rule("masquerading", &format!("mark set mark xor {mark}"));
    tx.rule("masquerading", "masquerade fully-random");
    tx.rule("nat-output", "jump services");
    tx.rule("nat-postrouting", "jump masquerading");
    tx.rule("nat-prerouting", "jump services");
    let loopback = match family {
        IpFamily::V4 => "127.0.0.0/8",
        IpFamily::V6 => "::1",
    };
    let nodeport_match = match &node_port_cidrs {
        None => format!("fib daddr type local {ipx} daddr != {loopback}"),
        Some(_) => format!("{ipx} daddr @nodeport-ips"),
    };
    tx.rule(
        "nodeport-endpoints-check",
        &format!("{nodeport_match} meta l4proto . th dport vmap @no-endpoint-nodeports"),
    );
    tx.rule("reject-chain", "reject");
    tx.rule("services", &format!("{ipx} daddr . meta l4proto . th dport vmap @service-ips"));
    tx.rule(
        "services",
        &format!("{nodeport_match} meta l4proto . th dport vmap @service-nodeports"),
    );
    if let Some(cidrs) = &node_port_cidrs {
        for ip in config.node_port_ips(cidrs, true) {
            tx.element("nodeport-ips", &ip.to_string());
        }
    }
    tx.rule(
        "service-endpoints-check",
        &format!("{ipx} daddr . meta l4proto . th dport vmap @no-endpoint-services"),
    );

    let total_endpoints: usize = ports.iter().map(|p| p.endpoints.len()).sum();
    let mut stats = RuleStats {
        service_ports: ports.len() as u64,
        endpoints: total_endpoints as u64,
        ..RuleStats::default()
    };
    for sp in ports {
        service(&mut tx, sp, config, &mut stats);
    }
    let (text, rules, chains) = tx.finish();
    stats.rules.insert("rules".to_owned(), rules);
    stats.chains.insert("chains".to_owned(), chains);
    Rendered { text, stats }
}

fn service(tx: &mut Tx, sp: &SvcPort, config: &ProxyConfig, stats: &mut RuleStats) {
    let family = config.family;
    let ipx = nft_ip(family);
    let n = &sp.svc_name;
    let p = &sp.protocol;
    let base = service_base(sp);
    let svc = hashed_name("service", &base);
    let svl = hashed_name("local", &base);
    let ext = hashed_name("external", &base);
    let fw = hashed_name("firewall", &base);
    let has_endpoints = sp.cat.has_any;
    let use_svc = !sp.cluster_eps().is_empty() && sp.uses_cluster();
    let use_svl = !sp.local_eps().is_empty() && sp.uses_local();
    let internal_chain = if sp.itp_local { &svl } else { &svc };
    let external_policy_chain = if sp.etp_local { &svl } else { &svc };
    let has_internal = sp.has_internal();
    let has_external = sp.has_external();
    let use_ext = has_endpoints && sp.external_accessible();
    let use_fw = !sp.lb_vips.is_empty() && !sp.source_ranges.is_empty();
    let verdict = if has_endpoints { "drop" } else { "goto reject-chain" };
    if sp.itp_local && has_endpoints && sp.local_eps().is_empty() {
        stats.no_local_endpoints_internal += 1;
    }
    if sp.etp_local && has_endpoints && sp.local_eps().is_empty() {
        stats.no_local_endpoints_external += 1;
    }
    let cip = sp.cluster_ip;
    let port = sp.port;

    // Affinity sets, one per reachable endpoint.
    if let Some(timeout) = sp.affinity {
        let addr_type = if family == IpFamily::V4 { "ipv4_addr" } else { "ipv6_addr" };
        for ep in &sp.cat.reachable {
            let set = hashed_name("affinity", &endpoint_base(sp, ep));
            tx.line(
                "set",
                &format!(
                    "{set} {{ type {addr_type} ; flags dynamic,timeout ; timeout {timeout}s ; }}"
                ),
            );
        }
    }
    let masq = if config.masquerade_all {
        Some(format!("{ipx} daddr {cip} jump mark-for-masquerade"))
    } else {
        config
            .detect_local
            .nft_if_not_local(family)
            .map(|m| format!("{ipx} daddr {cip} {m} jump mark-for-masquerade"))
    };
    for (use_chain, chain, eps) in
        [(use_svc, &svc, sp.cluster_eps()), (use_svl, &svl, sp.local_eps())]
    {
        if !use_chain {
            continue;
        }
        tx.chain(chain);
        if chain == internal_chain && has_internal {
            if let Some(m) = &masq {
                tx.rule(chain, m);
            }
        }
        if sp.affinity.is_some() {
            for ep in eps {
                let set = hashed_name("affinity", &endpoint_base(sp, ep));
                let target = hashed_name("endpoint", &endpoint_base(sp, ep));
                tx.rule(chain, &format!("{ipx} saddr @{set} goto {target}"));
            }
        }
        let elements: Vec<String> = eps
            .iter()
            .enumerate()
            .map(|(i, ep)| {
                format!("{i} : goto {}", hashed_name("endpoint", &endpoint_base(sp, ep)))
            })
            .collect();
        tx.rule(
            chain,
            &format!("numgen random mod {} vmap {{ {} }}", eps.len(), elements.join(" , ")),
        );
    }
    if use_ext {
        tx.chain(&ext);
        if !sp.etp_local {
            tx.rule(&ext, "jump mark-for-masquerade");
        } else {
            if let Some(m) = config.detect_local.nft_if_local(family) {
                tx.rule(&ext, &format!("{m} goto {svc} comment \"short-circuit pod traffic\""));
            }
            tx.rule(&ext, "fib saddr type local jump mark-for-masquerade comment \"masquerade local traffic\"");
            tx.rule(
                &ext,
                &format!("fib saddr type local goto {svc} comment \"short-circuit local traffic\""),
            );
        }
        if has_external {
            tx.rule(&ext, &format!("goto {external_policy_chain}"));
        }
    }
    for ep in &sp.cat.reachable {
        let chain = hashed_name("endpoint", &endpoint_base(sp, ep));
        tx.chain(&chain);
        tx.rule(&chain, &format!("{ipx} saddr {} jump mark-for-masquerade", ep.ip));
        if sp.affinity.is_some() {
            let set = hashed_name("affinity", &endpoint_base(sp, ep));
            tx.rule(&chain, &format!("update @{set} {{ {ipx} saddr }}"));
        }
        let to = match ep.ip {
            IpAddr::V4(v4) => format!("{v4}:{}", ep.port),
            IpAddr::V6(v6) => format!("[{v6}]:{}", ep.port),
        };
        tx.rule(&chain, &format!("meta l4proto {p} dnat to {to}"));
    }
    if use_fw {
        tx.chain(&fw);
        let mut sources: Vec<String> = sp.source_ranges.iter().map(ToString::to_string).collect();
        let allow_node =
            config.node_ip.is_some_and(|ip| sp.source_ranges.iter().any(|c| c.contains(&ip)));
        if allow_node {
            sources.extend(sp.lb_vips.iter().map(ToString::to_string));
        }
        tx.rule(&fw, &format!("{ipx} saddr != {{ {} }} drop", sources.join(" , ")));
    }

    tx.element("cluster-ips", &cip.to_string());
    if has_internal {
        tx.element("service-ips", &format!("{cip} . {p} . {port} : goto {internal_chain}"));
    } else {
        let v = if has_endpoints { "drop" } else { "goto reject-chain" };
        tx.element("no-endpoint-services", &format!("{cip} . {p} . {port} comment \"{n}\" : {v}"));
    }
    for ip in sp.external_ips.iter().chain(sp.lb_vips.iter()) {
        if has_endpoints {
            tx.element("service-ips", &format!("{ip} . {p} . {port} : goto {ext}"));
        }
    }
    if sp.node_port != 0 && has_endpoints {
        tx.element("service-nodeports", &format!("{p} . {} : goto {ext}", sp.node_port));
    }
    if use_fw {
        for vip in &sp.lb_vips {
            tx.element("firewall-ips", &format!("{vip} . {p} . {port} : goto {fw}"));
        }
    }
    if !has_external {
        if sp.node_port != 0 {
            tx.element(
                "no-endpoint-nodeports",
                &format!("{p} . {} comment \"{n}\" : {verdict}", sp.node_port),
            );
        }
        for ip in sp.external_ips.iter().chain(sp.lb_vips.iter()) {
            tx.element(
                "no-endpoint-services",
                &format!("{ip} . {p} . {port} comment \"{n}\" : {verdict}"),
            );
        }
    }
}
