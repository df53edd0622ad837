//! nftables mode: the `kube-proxy` table kube-proxy's nftables proxier writes
//! (pkg/proxy/nftables/proxier.go), as an `nft -f` transaction for an empty host.

use std::collections::BTreeMap;
use std::fmt::Write as _;

mod fixed;

use super::chain_hash;
use super::config::{NftablesMasquerade, NftablesTable, ProxyConfig, nft_ip};
use super::model::{Ep, SvcPort};
use super::{ProxyMode, Rendered, RuleStats};
use crate::net::IpFamily;
use fixed::Fixed;

/// `H8(name) + "-" + name`, truncated like kube-proxy for very long names.
#[cfg(test)]
pub(crate) fn hashed_base(name: &str) -> String {
    let mut digests = Vec::with_capacity(1);
    chain_hash::sha256_each([[name.as_bytes(), &[][..], &[][..]]], &mut digests);
    based(&digests[0], name)
}

/// [`hashed_base`] from the name's SHA-256 digest.
fn based(digest: &[u8; 32], name: &str) -> String {
    // 5 bytes encode to exactly 8 base32 characters.
    let mut base = data_encoding::BASE32.encode(&digest[..5]);
    base.push('-');
    base.push_str(name);
    if base.len() > 240 {
        let mut cut = 237;
        while !base.is_char_boundary(cut) {
            cut -= 1;
        }
        base.truncate(cut);
        base.push_str("...");
    }
    base
}

fn service_base(sp: &SvcPort) -> String {
    format!("{}/{}/{}/{}", sp.namespace, sp.name, sp.protocol, sp.port_name)
}

/// The hashed bases of a service port and of each of its endpoints, hashed together (see
/// [`chain_hash`]).
fn chain_bases(sp: &SvcPort) -> (String, Vec<String>) {
    let service = service_base(sp);
    let endpoints: Vec<String> = sp.endpoints.iter().map(|ep| endpoint_base(sp, ep)).collect();
    let names = || std::iter::once(&service).chain(&endpoints);
    let mut digests = Vec::with_capacity(1 + endpoints.len());
    chain_hash::sha256_each(names().map(|n| [n.as_bytes(), &[][..], &[][..]]), &mut digests);
    let mut bases = digests.iter().zip(names()).map(|(digest, name)| based(digest, name));
    let base = bases.next().unwrap_or_default();
    (base, bases.collect())
}

/// Endpoint chain / affinity set base: IPv6 colons become dots.
fn endpoint_base(sp: &SvcPort, ep: &Ep) -> String {
    let ip = ep.ip_text().replace(':', ".");
    format!("{}__{}/{}", service_base(sp), ip, ep.port)
}

/// The transaction text with counts. Everything a line refers to is defined above it
/// (`nft -f` rejects a `goto` to a chain added later in the file): the fixed sets, maps and
/// chains first, then per service its affinity sets, its chains, its rules, its elements.
struct Tx {
    text: String,
    prefix: String,
    rules: u64,
    chains: u64,
    /// Per set or map, each key written so far and its value (empty for a set): the
    /// `nftElementStorage` of pkg/proxy/nftables/proxier.go.
    /// Kept by set, so that a lookup takes the key as it is (a cluster writes tens of
    /// thousands of elements).
    elements: BTreeMap<&'static str, BTreeMap<String, String>>,
    /// Every element is added as met (no `nftElementStorage`): 1.29 and 1.30.
    every_add: bool,
    /// Element comments are cut to this many bytes (`knftables.CommentLengthMax`, 1.37 on).
    comment_max: Option<usize>,
}

/// `knftables.CommentLengthMax`: the longest comment nft takes.
const COMMENT_LENGTH_MAX: usize = 128;

impl Tx {
    fn line(&mut self, kind: &str, rest: &str) {
        match kind {
            "rule" => self.rules += 1,
            "chain" => self.chains += 1,
            _ => {}
        }
        let _ = writeln!(self.text, "add {kind} {} {rest}", self.prefix);
    }

    fn finish(self) -> (String, u64, u64) {
        (self.text, self.rules, self.chains)
    }

    fn chain(&mut self, name: &str) {
        self.line("chain", name);
    }

    fn rule(&mut self, chain: &str, rule: &str) {
        self.rulef(chain, format_args!("{rule}"));
    }

    /// `add <kind> <table> ` followed by plain pieces: the hot per-endpoint lines skip `fmt`.
    fn parts(&mut self, kind: &str, parts: &[&str]) {
        match kind {
            "rule" => self.rules += 1,
            "chain" => self.chains += 1,
            _ => {}
        }
        let b = &mut self.text;
        b.push_str("add ");
        b.push_str(kind);
        b.push(' ');
        b.push_str(&self.prefix);
        b.push(' ');
        for part in parts {
            b.push_str(part);
        }
        b.push('\n');
    }

    fn rulef(&mut self, chain: &str, rule: std::fmt::Arguments<'_>) {
        self.rules += 1;
        let b = &mut self.text;
        b.push_str("add rule ");
        b.push_str(&self.prefix);
        b.push(' ');
        b.push_str(chain);
        b.push(' ');
        let _ = b.write_fmt(rule);
        b.push('\n');
    }

    /// One element of a set (`value` empty) or map, written as kube-proxy's
    /// `nftElementStorage.ensureElem` (pkg/proxy/nftables/proxier.go, added by
    /// kubernetes/kubernetes#126013, 1.31 to the newest) writes it: a key is added once; the same key again with the same value (a
    /// multi-port Service's ClusterIP in `cluster-ips`, two Services without endpoints on one
    /// external IP and port) adds nothing and keeps the first comment; with another value (two
    /// Services with endpoints sharing an external IP and port) the element is deleted and
    /// added again, so the last writer in svclab's (namespace, name, port) order wins, where
    /// kube-proxy ranges over a Go map. Before (`every_add`, 1.29 and 1.30) kube-proxy added every
    /// element it met, so a key shared with another value is a second `add element`, which the
    /// kernel refuses ("File exists"), failing the whole `nft -f` transaction: svclab writes
    /// what that kube-proxy wrote.
    fn element(&mut self, set: &'static str, key: &str, comment: Option<&str>, value: &str) {
        if self.every_add {
            self.add_element(set, key, comment, value);
            return;
        }
        let written = self.elements.entry(set).or_default();
        match written.get_mut(key) {
            Some(previous) if previous == value => return,
            Some(previous) => {
                value.clone_into(previous);
                let _ = writeln!(self.text, "delete element {} {set} {{ {key} }}", self.prefix);
            }
            None => {
                written.insert(key.to_owned(), value.to_owned());
            }
        }
        self.add_element(set, key, comment, value);
    }

    /// `add element <table> <set> { <key> [comment "<c>"] [: <value>] }`.
    fn add_element(&mut self, set: &str, key: &str, comment: Option<&str>, value: &str) {
        let b = &mut self.text;
        b.push_str("add element ");
        b.push_str(&self.prefix);
        b.push(' ');
        b.push_str(set);
        b.push_str(" { ");
        b.push_str(key);
        if let Some(comment) = comment {
            // pkg/proxy/nftables/proxier.go `truncateNFTablesComment` (1.37 on) cuts the bytes;
            // a service port name is ASCII (DNS labels, an IANA service name), so the cut
            // never splits a character.
            let mut cut = self.comment_max.map_or(comment.len(), |max| max.min(comment.len()));
            while !comment.is_char_boundary(cut) {
                cut -= 1;
            }
            b.push_str(" comment \"");
            b.push_str(&comment[..cut]);
            b.push('"');
        }
        if !value.is_empty() {
            b.push_str(" : ");
            b.push_str(value);
        }
        b.push_str(" }\n");
    }
}

/// The statement that marks a packet for masquerading: `mark set mark or <mark>` inline (1.36
/// on, `proxier.masqueradeRule`), else a jump to the `mark-for-masquerade` chain.
pub(super) fn masquerade_statement(config: &ProxyConfig) -> String {
    match config.nftables_masquerade {
        NftablesMasquerade::HairpinSet => format!("mark set mark or {}", config.masquerade_mark),
        NftablesMasquerade::MarkChain => "jump mark-for-masquerade".to_owned(),
    }
}

/// The table for one family being rendered: the table and its fixed objects, then each service
/// port's ([`crate::proxy::Rendering`] hands them over).
pub(crate) struct Building<'p> {
    config: &'p ProxyConfig,
    tx: Tx,
    stats: RuleStats,
}

impl<'p> Building<'p> {
    /// The table and its fixed objects, before any service port's; `ports` are the ones to
    /// come.
    pub(crate) fn new(ports: &[SvcPort], config: &'p ProxyConfig) -> Self {
        let ipx = nft_ip(config.family);
        let estimate: usize = ports.iter().map(|p| 1024 + p.endpoints.len() * 512).sum();
        let mut tx = Tx {
            text: String::with_capacity(4096 + estimate),
            prefix: format!("{ipx} kube-proxy"),
            rules: 0,
            chains: 0,
            elements: BTreeMap::new(),
            every_add: !config.nftables_elements_once,
            comment_max: config.nftables_truncate_comments.then_some(COMMENT_LENGTH_MAX),
        };
        let _ = writeln!(
            tx.text,
            "add table {ipx} kube-proxy {{ comment \"rules for kube-proxy\" ; }}"
        );
        let node_port_cidrs = config.node_port_cidrs(ProxyMode::Nftables);
        Fixed::new(config, node_port_cidrs.as_deref()).write(&mut tx);
        Building { config, tx, stats: RuleStats::of_ports(ports) }
    }

    /// Adds the objects of the next service port.
    pub(crate) fn add(&mut self, sp: &SvcPort) {
        service(&mut self.tx, sp, self.config, &mut self.stats);
    }

    /// The transaction, with the objects of the service ports added.
    pub(crate) fn finish(self) -> Rendered {
        let Building { tx, mut stats, .. } = self;
        let (text, rules, chains) = tx.finish();
        stats.rules.insert("rules".to_owned(), rules);
        stats.chains.insert("chains".to_owned(), chains);
        Rendered { text, stats }
    }
}

/// The chain names of one service port and the decisions the nftables proxier's
/// `syncProxyRules` takes once per service port, from which each part of its objects is written.
struct PortObjects<'a> {
    sp: &'a SvcPort,
    config: &'a ProxyConfig,
    ipx: &'static str,
    svc: String,
    svl: String,
    ext: String,
    fw: String,
    /// Endpoint chain and affinity set base names, hashed once per endpoint.
    ep_bases: Vec<String>,
    has_endpoints: bool,
    has_internal: bool,
    has_external: bool,
    use_svc: bool,
    use_svl: bool,
    use_ext: bool,
    use_fw: bool,
    /// 1.29: source ranges are elements of the `firewall` and `firewall-allow` sets, not a
    /// per-service `firewall-*` chain behind the `firewall-ips` map.
    fw_sets: bool,
    /// 1.36 on (`NftablesMasquerade::HairpinSet`): inline marks, hairpin set, and endpoint
    /// chains only with session affinity.
    hairpin: bool,
    /// `mark set mark or <mark>` (1.36's `proxier.masqueradeRule`) or `jump
    /// mark-for-masquerade`.
    masquerade: String,
    /// `drop` when only the local policy finds nothing, else `goto reject-chain`.
    verdict: &'static str,
}

/// One service port's objects, in an order where every line refers only to objects defined
/// above it: affinity sets, chain declarations, the SVC/SVL, EXT, endpoint and firewall
/// chains' rules, then the map elements that lead to them.
fn service(tx: &mut Tx, sp: &SvcPort, config: &ProxyConfig, stats: &mut RuleStats) {
    let port = PortObjects::new(sp, config);
    sp.count_no_local_endpoints(port.has_endpoints, stats);
    port.affinity_sets(tx);
    port.declare_chains(tx);
    port.service_chains(tx);
    port.external_chain(tx);
    port.endpoint_chains(tx);
    port.firewall_chain(tx);
    port.map_elements(tx);
}

impl<'a> PortObjects<'a> {
    fn new(sp: &'a SvcPort, config: &'a ProxyConfig) -> Self {
        let (base, ep_bases) = chain_bases(sp);
        let has_endpoints = sp.cat.has_any;
        PortObjects {
            sp,
            config,
            ipx: nft_ip(config.family),
            svc: format!("service-{base}"),
            svl: format!("local-{base}"),
            ext: format!("external-{base}"),
            fw: format!("firewall-{base}"),
            ep_bases,
            has_endpoints,
            has_internal: sp.has_internal(),
            has_external: sp.has_external(),
            use_svc: !sp.cluster_eps().is_empty() && sp.uses_cluster(),
            use_svl: !sp.local_eps().is_empty() && sp.uses_local(),
            use_ext: has_endpoints && sp.external_accessible(),
            // Unlike iptables, the firewall does not depend on endpoints (it filters before DNAT).
            use_fw: !sp.lb_vips.is_empty() && !sp.source_ranges.is_empty(),
            fw_sets: config.nftables_table == NftablesTable::Alpha,
            hairpin: config.nftables_masquerade == NftablesMasquerade::HairpinSet,
            masquerade: masquerade_statement(config),
            verdict: if has_endpoints { "drop" } else { "goto reject-chain" },
        }
    }

    /// Whether the endpoints get chains of their own: always before 1.36; from 1.36
    /// (`serviceUsesAffinity`) only with ClientIP affinity, whose sets they update.
    fn endpoint_chains_used(&self) -> bool {
        !self.hairpin || self.sp.affinity.is_some()
    }

    /// The chain internal traffic goes to.
    fn internal_chain(&self) -> &str {
        if self.sp.itp_local { &self.svl } else { &self.svc }
    }

    /// With ClientIP affinity, one dynamic set per reachable endpoint.
    fn affinity_sets(&self, tx: &mut Tx) {
        let Some(timeout) = self.sp.affinity else { return };
        let addr_type = if self.config.family == IpFamily::V4 { "ipv4_addr" } else { "ipv6_addr" };
        for &i in &self.sp.cat.reachable {
            tx.line(
                "set",
                &format!("affinity-{} {{ type {addr_type} ; flags dynamic,timeout ; timeout {timeout}s ; }}", self.ep_bases[i]),
            );
        }
    }

    /// The chains of this service port, declared before any rule or element refers to them.
    fn declare_chains(&self, tx: &mut Tx) {
        if self.use_svc {
            tx.chain(&self.svc);
        }
        if self.use_svl {
            tx.chain(&self.svl);
        }
        if self.use_ext {
            tx.chain(&self.ext);
        }
        if self.endpoint_chains_used() {
            for &i in &self.sp.cat.reachable {
                tx.parts("chain", &["endpoint-", &self.ep_bases[i]]);
            }
        }
        if self.use_fw && !self.fw_sets {
            tx.chain(&self.fw);
        }
    }

    /// The cluster-wide and local chains: before 1.36 the internal policy's chain masquerades
    /// off-cluster sources (from 1.36 one `services` rule on `@cluster-ips` does,
    /// nftables/fixed.rs); affinity jumps go first, then a random pick among the endpoints: a
    /// jump to an endpoint chain, or from 1.36 without affinity a DNAT from a map
    /// (`writeServiceToEndpointDNATs`; 1.37: `dnat to` for a single endpoint).
    fn service_chains(&self, tx: &mut Tx) {
        let (sp, config, ipx) = (self.sp, self.config, self.ipx);
        let cip = sp.cluster_ip;
        // 1.29 to 1.33 also match the port; kubernetes/kubernetes#131492 (1.34) dropped it:
        // only the `service-ips` element of this very port leads here with the ClusterIP.
        let dest = if config.nftables_masquerade_port {
            format!("{ipx} daddr {cip} {} dport {}", sp.protocol, sp.port)
        } else {
            format!("{ipx} daddr {cip}")
        };
        let masq = if self.hairpin {
            None
        } else if config.masquerade_all {
            Some(format!("{dest} jump mark-for-masquerade"))
        } else {
            config
                .detect_local
                .nft_if_not_local(config.family, config.nftables_iifname)
                .map(|m| format!("{dest} {m} jump mark-for-masquerade"))
        };
        for (use_chain, chain, eps) in
            [(self.use_svc, &self.svc, sp.cluster_eps()), (self.use_svl, &self.svl, sp.local_eps())]
        {
            if !use_chain {
                continue;
            }
            if chain == self.internal_chain()
                && self.has_internal
                && let Some(m) = &masq
            {
                tx.rule(chain, m);
            }
            if !self.endpoint_chains_used() {
                self.endpoint_dnats(tx, chain, eps);
                continue;
            }
            if sp.affinity.is_some() {
                for &i in eps {
                    let b = &self.ep_bases[i];
                    tx.rulef(chain, format_args!("{ipx} saddr @affinity-{b} goto endpoint-{b}"));
                }
            }
            let mut elements = String::with_capacity(eps.len() * 64);
            for (k, &i) in eps.iter().enumerate() {
                if k > 0 {
                    elements.push_str(" , ");
                }
                let _ = write!(elements, "{k} : goto endpoint-{}", self.ep_bases[i]);
            }
            tx.rulef(chain, format_args!("numgen random mod {} vmap {{ {elements} }}", eps.len()));
        }
    }

    /// pkg/proxy/nftables/proxier.go `writeServiceToEndpointDNATs` (1.36 on): `meta l4proto
    /// tcp dnat ip addr . port to numgen random mod n map { 0 : ip . port , ... }`; 1.37 writes
    /// `dnat to ip:port` (`net.JoinHostPort`) for a single endpoint.
    fn endpoint_dnats(&self, tx: &mut Tx, chain: &str, eps: &[usize]) {
        let (sp, ipx, p) = (self.sp, self.ipx, &self.sp.protocol);
        if let [only] = eps
            && self.config.nftables_single_endpoint_dnat
        {
            // The endpoint string is `ip:port` / `[ip]:port`, what `JoinHostPort` gives.
            tx.rulef(chain, format_args!("meta l4proto {p} dnat to {}", sp.endpoints[*only].text));
            return;
        }
        let mut elements = String::with_capacity(eps.len() * 32);
        for (k, &i) in eps.iter().enumerate() {
            if k > 0 {
                elements.push_str(" , ");
            }
            let ep = &sp.endpoints[i];
            let _ = write!(elements, "{k} : {} . {}", ep.ip_text(), ep.port);
        }
        tx.rulef(
            chain,
            format_args!(
                "meta l4proto {p} dnat {ipx} addr . port to numgen random mod {} map {{ {elements} }}",
                eps.len()
            ),
        );
    }

    /// The external chain: masquerade external traffic (with `externalTrafficPolicy: Local`,
    /// only traffic from the node itself, short-circuited to the cluster-wide chain), then the
    /// external policy's chain.
    fn external_chain(&self, tx: &mut Tx) {
        if !self.use_ext {
            return;
        }
        let (ext, svc, masquerade) = (&self.ext, &self.svc, &self.masquerade);
        if !self.sp.etp_local {
            if self.hairpin {
                // 1.36 on: the mark inline, with a comment.
                tx.rulef(ext, format_args!("{masquerade} comment \"masquerade\""));
            } else {
                tx.rule(ext, "jump mark-for-masquerade");
            }
        } else {
            if let Some(m) = self
                .config
                .detect_local
                .nft_if_local(self.config.family, self.config.nftables_iifname)
            {
                tx.rulef(ext, format_args!("{m} goto {svc} comment \"short-circuit pod traffic\""));
            }
            tx.rulef(
                ext,
                format_args!(
                    "fib saddr type local {masquerade} comment \"masquerade local traffic\""
                ),
            );
            tx.rulef(
                ext,
                format_args!(
                    "fib saddr type local goto {svc} comment \"short-circuit local traffic\""
                ),
            );
        }
        if self.has_external {
            let chain = if self.sp.etp_local { &self.svl } else { &self.svc };
            tx.rulef(ext, format_args!("goto {chain}"));
        }
    }

    /// Each reachable endpoint's chain: masquerade hairpin traffic (before 1.36; from 1.36 the
    /// `hairpin-connections` set does), remember the client for affinity, DNAT. From 1.36 only
    /// a Service with affinity has endpoint chains.
    fn endpoint_chains(&self, tx: &mut Tx) {
        if !self.endpoint_chains_used() {
            return;
        }
        let (sp, ipx, p) = (self.sp, self.ipx, &self.sp.protocol);
        for &i in &sp.cat.reachable {
            let ep = &sp.endpoints[i];
            let base = self.ep_bases[i].as_str();
            if !self.hairpin {
                tx.parts(
                    "rule",
                    &[
                        "endpoint-",
                        base,
                        " ",
                        ipx,
                        " saddr ",
                        ep.ip_text(),
                        " jump mark-for-masquerade",
                    ],
                );
            }
            if sp.affinity.is_some() {
                tx.parts(
                    "rule",
                    &["endpoint-", base, " update @affinity-", base, " { ", ipx, " saddr }"],
                );
            }
            // The endpoint string is `ip:port` / `[ip]:port`, exactly nft's dnat syntax.
            tx.parts("rule", &["endpoint-", base, " meta l4proto ", p, " dnat to ", &ep.text]);
        }
    }

    /// The firewall chain: drop sources outside `loadBalancerSourceRanges` (the VIPs count as
    /// inside when the node is).
    fn firewall_chain(&self, tx: &mut Tx) {
        if !self.use_fw || self.fw_sets {
            return;
        }
        let sp = self.sp;
        let mut sources: Vec<String> = sp.source_range_texts.clone();
        let allow_node =
            self.config.node_ip.is_some_and(|ip| sp.source_ranges.iter().any(|c| c.contains(&ip)));
        if allow_node {
            sources.extend(sp.lb_vip_texts.iter().cloned());
        }
        tx.rulef(
            &self.fw,
            format_args!("{} saddr != {{ {} }} drop", self.ipx, sources.join(" , ")),
        );
    }

    /// 1.29 (pkg/proxy/nftables/proxier.go `syncProxyRules` before
    /// kubernetes/kubernetes#122296): per VIP, a `firewall` element, one `firewall-allow`
    /// element per source range as written, and the VIP itself as a source when a range holds
    /// the node IP (the VIP-like load balancers whose VIP is local), that one without comment.
    fn firewall_set_elements(&self, tx: &mut Tx) {
        let sp = self.sp;
        let (n, p, port) = (&sp.svc_name, &sp.protocol, sp.port);
        let allow_node =
            self.config.node_ip.is_some_and(|ip| sp.source_ranges.iter().any(|c| c.contains(&ip)));
        for vip in &sp.lb_vip_texts {
            tx.element("firewall", &format!("{vip} . {p} . {port}"), Some(n), "");
            for range in &sp.source_range_texts {
                tx.element(
                    "firewall-allow",
                    &format!("{vip} . {p} . {port} . {range}"),
                    Some(n),
                    "",
                );
            }
            if allow_node {
                tx.element("firewall-allow", &format!("{vip} . {p} . {port} . {vip}"), None, "");
            }
        }
    }

    /// The map elements that lead to this service port: cluster IP, external IPs and VIPs,
    /// NodePort, firewall VIPs, and the no-endpoint verdicts.
    fn map_elements(&self, tx: &mut Tx) {
        let sp = self.sp;
        let (n, p, port, cip) = (&sp.svc_name, &sp.protocol, sp.port, sp.cluster_ip);
        let (ext, fw, verdict) = (&self.ext, &self.fw, self.verdict);
        let key = |ip: &dyn std::fmt::Display| format!("{ip} . {p} . {port}");
        let node_key = format!("{p} . {}", sp.node_port);
        // 1.36 on: this node's reachable endpoints as `ip . ip . protocol . port`, the hairpin
        // connections `masquerading` masquerades (`hairpinConnections.ensureElem` for
        // `epInfo.IsLocal()`).
        if self.hairpin {
            for &i in &sp.cat.reachable {
                let ep = &sp.endpoints[i];
                if ep.local {
                    let ip = ep.ip_text();
                    let key = format!("{ip} . {ip} . {p} . {}", ep.port);
                    tx.element("hairpin-connections", &key, None, "");
                }
            }
        }
        // No `cluster-ips` set in 1.29 (kubernetes/kubernetes#122692 added it in 1.30).
        if !self.fw_sets {
            tx.element("cluster-ips", &cip.to_string(), None, "");
        }
        if self.has_internal {
            let chain = self.internal_chain();
            tx.element("service-ips", &key(&cip), None, &format!("goto {chain}"));
        } else {
            tx.element("no-endpoint-services", &key(&cip), Some(n), verdict);
        }
        for ip in sp.external_ip_texts.iter().chain(&sp.lb_vip_texts) {
            if self.has_endpoints {
                tx.element("service-ips", &key(ip), None, &format!("goto {ext}"));
            }
        }
        // 1.37 with KubeProxyNFTablesLocalhostNodePorts: the NodePort on loopback is rejected
        // (and counted) for each protocol kube-proxy does not serve there itself.
        if sp.node_port != 0 && fixed::localhost_rejects(self.config).contains(&p.as_str()) {
            tx.element(
                "localhost-nodeport-reject-ports",
                &node_key,
                None,
                &format!("goto localhost-nodeport-reject-{p}"),
            );
        }
        if sp.node_port != 0 && self.has_endpoints {
            tx.element("service-nodeports", &node_key, None, &format!("goto {ext}"));
        }
        if self.use_fw && self.fw_sets {
            self.firewall_set_elements(tx);
        } else if self.use_fw {
            // 1.30 comments each element with the service port name.
            let comment = self.config.nftables_firewall_comment.then_some(n.as_str());
            for vip in &sp.lb_vip_texts {
                tx.element("firewall-ips", &key(vip), comment, &format!("goto {fw}"));
            }
        }
        if !self.has_external {
            if sp.node_port != 0 {
                tx.element("no-endpoint-nodeports", &node_key, Some(n), verdict);
            }
            for ip in sp.external_ip_texts.iter().chain(&sp.lb_vip_texts) {
                tx.element("no-endpoint-services", &key(ip), Some(n), verdict);
            }
        }
    }
}
