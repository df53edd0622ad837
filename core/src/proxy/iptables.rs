//! iptables mode: the `iptables-restore` payload kube-proxy writes (pkg/proxy/iptables/
//! proxier.go `syncProxyRules`), emitted in the canonical order of kube-proxy's own tests
//! (`pkg/proxy/iptables/proxier_test.go` sorts chains and rules before comparing).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::chain_hash;
use super::config::ProxyConfig;
use super::model::SvcPort;
use super::{ProxyMode, Rendered, RuleStats};
use crate::net::{IpFamily, ip_string, push_signed};

const NODEPORTS_LAST: &str =
    "\"kubernetes service nodeports; NOTE: this must be the last rule in this chain\"";

/// One chain: its name and its rule lines (`-A NAME ...\n`), written in generation order.
#[derive(Debug, Default)]
struct Chain {
    /// `-A NAME `, the start of every rule line (the name is this without its first three
    /// bytes and its last one, as in [`Arena::names`]).
    append: String,
    body: String,
    rules: u64,
}

impl Chain {
    fn new(name: &str) -> Chain {
        Chain { append: ["-A ", name, " "].concat(), body: String::new(), rules: 0 }
    }

    fn name(&self) -> &str {
        &self.append[3..self.append.len() - 1]
    }

    fn rule(&mut self, args: std::fmt::Arguments<'_>) {
        self.body.push_str(&self.append);
        let _ = self.body.write_fmt(args);
        self.body.push('\n');
        self.rules += 1;
    }

    /// Like [`Chain::rule`] from plain pieces (see [`push_parts`]).
    fn rule_parts(&mut self, parts: &[&str]) {
        self.body.push_str(&self.append);
        push_parts(&mut self.body, parts);
        self.rules += 1;
    }
}

/// Appends the pieces of a rule and its line feed, skipping empty pieces: every append is a
/// copy, which inside the WebAssembly plugin is a call into wasmtime (`memory.copy`) however
/// short the piece, so the rule writers hand over few, long pieces.
fn push_parts(out: &mut String, parts: &[&str]) {
    for part in parts {
        if !part.is_empty() {
            out.push_str(part);
        }
    }
    out.push('\n');
}

/// The chains kube-proxy always writes, plus the per-service nat chains.
#[derive(Debug)]
struct Tables {
    f_services: Chain,
    f_external: Chain,
    f_forward: Chain,
    f_nodeports: Chain,
    /// None in 1.24, before KUBE-PROXY-FIREWALL existed.
    f_proxy_firewall: Option<Chain>,
    f_firewall: Option<Chain>,
    n_services: Chain,
    n_nodeports: Chain,
    n_postrouting: Chain,
    n_mark_masq: Chain,
    /// Per-service nat chains (SVC, SVL, EXT, FW, SEP).
    arena: Arena,
}

/// Per-service nat chains written back to back into buffers of [`ARENA_CHUNK`] bytes (each
/// chain's rules are generated together, and a chain never spans two buffers), then emitted in
/// name order: no allocation per chain, and no buffer of tens of megabytes that the memory
/// just freed (the cluster state, once the service-port model is built) could not serve.
#[derive(Debug, Default)]
struct Arena {
    names: String,
    /// Filled buffers; `bodies` is the one being written.
    chunks: Vec<String>,
    bodies: String,
    chains: Vec<ArenaChain>,
    open: Option<ArenaChain>,
    /// `--probability` texts by the number of endpoints left (`probabilities[n]` is 1/n with
    /// ten decimals), formatted once per payload instead of once per rule.
    probabilities: Vec<String>,
    /// The masquerade match of SVC and SVL chains' first rule, formatted on first use.
    masq_match: Option<Option<String>>,
}

/// The size of the arena's body buffers.
const ARENA_CHUNK: usize = 16 * 1024;

/// Room a rule line is assumed to need before it is written (a longer one grows its buffer).
const RULE_ROOM: usize = 512;

#[derive(Debug, Clone)]
struct ArenaChain {
    /// First 16 bytes of the name, big-endian: sorts like the name except for ties.
    key: u128,
    /// `-A NAME ` in [`Arena::names`] (the name is this without its first three bytes and its
    /// last one): every rule line starts with it.
    name: std::ops::Range<usize>,
    /// The buffer holding the body: an index into `chunks`, or `chunks.len()` for `bodies`.
    chunk: usize,
    body: std::ops::Range<usize>,
    rules: u64,
}

impl Arena {
    fn begin(&mut self, name: &str) {
        self.end();
        let start = self.names.len();
        self.names.push_str("-A ");
        self.names.push_str(name);
        self.names.push(' ');
        let mut key = [0u8; 16];
        for (k, b) in key.iter_mut().zip(name.bytes()) {
            *k = b;
        }
        if self.bodies.capacity() - self.bodies.len() < RULE_ROOM {
            self.next_chunk(ARENA_CHUNK);
        }
        let body = self.bodies.len();
        self.open = Some(ArenaChain {
            key: u128::from_be_bytes(key),
            name: start..self.names.len(),
            chunk: self.chunks.len(),
            body: body..body,
            rules: 0,
        });
    }

    /// Starts a new body buffer of at least `size` bytes.
    fn next_chunk(&mut self, size: usize) {
        let full = std::mem::replace(&mut self.bodies, String::with_capacity(size));
        if full.capacity() > 0 {
            self.chunks.push(full);
        }
    }

    /// Makes room for one more rule of the open chain, moving what the chain has written so
    /// far to a new buffer when the current one is nearly full.
    fn room(&mut self) {
        if self.bodies.capacity() - self.bodies.len() >= RULE_ROOM {
            return;
        }
        let Some(open) = &mut self.open else { return };
        let written = open.body.start;
        let size = ARENA_CHUNK.max(2 * (self.bodies.len() - written) + RULE_ROOM);
        let mut next = String::with_capacity(size);
        next.push_str(&self.bodies[written..]);
        self.bodies.truncate(written);
        let full = std::mem::replace(&mut self.bodies, next);
        if full.is_empty() {
            // The chain had the buffer to itself: the new one replaces it.
        } else {
            self.chunks.push(full);
        }
        open.chunk = self.chunks.len();
        open.body = 0..0;
    }

    fn rule(&mut self, args: std::fmt::Arguments<'_>) {
        self.room();
        let Some(open) = &mut self.open else { return };
        self.bodies.push_str(&self.names[open.name.clone()]);
        let _ = self.bodies.write_fmt(args);
        self.bodies.push('\n');
        open.rules += 1;
    }

    /// Like [`Arena::rule`] from plain pieces (see [`push_parts`]): the hot rules skip `fmt`.
    fn rule_parts(&mut self, parts: &[&str]) {
        self.room();
        let Some(open) = &mut self.open else { return };
        self.bodies.push_str(&self.names[open.name.clone()]);
        push_parts(&mut self.bodies, parts);
        open.rules += 1;
    }

    /// A whole chain written elsewhere, as the open chain's body.
    fn body(&mut self, body: &str, rules: u64) {
        if self.bodies.capacity() - self.bodies.len() < body.len() {
            self.room();
            self.bodies.reserve(body.len());
        }
        let Some(open) = &mut self.open else { return };
        self.bodies.push_str(body);
        open.rules = rules;
    }

    fn end(&mut self) {
        if let Some(mut open) = self.open.take() {
            open.body.end = self.bodies.len();
            self.chains.push(open);
        }
    }

    fn name(&self, c: &ArenaChain) -> &str {
        &self.names[c.name.start + 3..c.name.end - 1]
    }

    fn chain_body(&self, c: &ArenaChain) -> &str {
        let chunk = self.chunks.get(c.chunk).unwrap_or(&self.bodies);
        &chunk[c.body.clone()]
    }
}

/// `portProtoHash` (the 16-character suffix of the SVC, SVL, EXT and FW chains) and every
/// endpoint's `KUBE-SEP-` chain of a service port (`servicePortEndpointChainName`), hashed
/// together (see [`chain_hash`]).
fn chain_names(sp: &SvcPort) -> (String, Vec<String>) {
    let (name, protocol) = (sp.svc_name.as_bytes(), sp.protocol.as_bytes());
    let mut digests = Vec::with_capacity(1 + sp.endpoints.len());
    let endpoints = sp.endpoints.iter().map(|ep| [name, protocol, ep.text.as_bytes()]);
    chain_hash::sha256_each(
        std::iter::once([name, protocol, &[][..]]).chain(endpoints),
        &mut digests,
    );
    let mut digests = digests.iter();
    let mut hash = String::with_capacity(16);
    if let Some(digest) = digests.next() {
        base32_16(digest, &mut hash);
    }
    let seps = digests
        .map(|digest| {
            let mut name = String::with_capacity(25);
            name.push_str("KUBE-SEP-");
            base32_16(digest, &mut name);
            name
        })
        .collect();
    (hash, seps)
}

/// First 16 characters of base32(sha256(concatenation)): 10 bytes encode to exactly 16.
#[cfg(test)]
pub(crate) fn hash16(parts: &[&str]) -> String {
    let message = parts.concat();
    let mut digests = Vec::new();
    chain_hash::sha256_each([[message.as_bytes(), &[][..], &[][..]]], &mut digests);
    let mut out = String::with_capacity(16);
    base32_16(&digests[0], &mut out);
    out
}

/// Appends the first 16 base32 characters of a digest (its first 10 bytes encode to exactly 16).
fn base32_16(digest: &[u8; 32], out: &mut String) {
    data_encoding::BASE32.encode_append(&digest[..10], out);
}

/// A `--comment` argument: kube-proxy quotes comments that contain spaces. Displayed, so a
/// rule writes it in place.
fn comment(text: &str) -> Comment<'_> {
    Comment(text)
}

/// See [`comment`].
struct Comment<'a>(&'a str);

impl<'a> Comment<'a> {
    /// The argument as the pieces a rule writes.
    fn pieces(&self) -> [&'a str; 4] {
        let quote = if self.0.contains(' ') { "\"" } else { "" };
        ["-m comment --comment ", quote, self.0, quote]
    }
}

impl std::fmt::Display for Comment<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.pieces().into_iter().try_for_each(|piece| f.write_str(piece))
    }
}

/// A rule's words for a service port on one of its addresses, as pieces (see [`push_parts`]):
/// `-m comment --comment "NAME WHAT" -m PROTO -p PROTO -d ADDRESS --dport PORT`, then `-j JUMP`
/// unless `jump` is empty. The quotes are part of the comment as proxier.go writes it
/// (`"%s cluster IP"`), not [`comment`]'s rule.
fn address_match<'a>(
    sp: &'a SvcPort,
    what: &'a str,
    address: &'a str,
    port: &'a str,
    jump: &'a str,
) -> [&'a str; 14] {
    let (n, p) = (sp.svc_name.as_str(), sp.protocol.as_str());
    let j = if jump.is_empty() { "" } else { " -j " };
    [
        "-m comment --comment \"",
        n,
        " ",
        what,
        "\" -m ",
        p,
        " -p ",
        p,
        " -d ",
        address,
        " --dport ",
        port,
        j,
        jump,
    ]
}

/// A chain name: `prefix` then the hash.
fn chain_name(prefix: &str, hash: &str) -> String {
    let mut name = String::with_capacity(prefix.len() + hash.len());
    name.push_str(prefix);
    name.push_str(hash);
    name
}

/// The jump rules kube-proxy installs in the built-in chains outside the payload
/// (`iptablesJumpChains` of the proxier), as (table, chain, args) in the order they end up in each chain on a
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

/// The payload's chains, ready to be written in canonical order: the filter table, then the
/// nat table's fixed head, its per-service chains (in the arena) and the built-in chains.
pub(crate) struct Payload {
    filter: Vec<Chain>,
    nat_head: [Chain; 2],
    order: Vec<ArenaChain>,
    arena: Arena,
    nat_builtins: Vec<Chain>,
    /// The figures of the payload.
    pub(crate) stats: RuleStats,
}

impl Payload {
    /// The payload as one text, with its figures.
    pub(crate) fn into_rendered(self) -> Rendered {
        let mut text = String::with_capacity(self.len());
        self.write(&mut |piece| text.push_str(piece));
        Rendered { text, stats: self.stats }
    }

    /// The payload's length in bytes.
    pub(crate) fn len(&self) -> usize {
        let table = |chains: &[Chain]| -> usize {
            chains.iter().map(|c| declaration_len(c.name()) + c.body.len()).sum()
        };
        let filter = "*filter\n".len() + table(&self.filter) + "COMMIT\n".len();
        let arena: usize = self
            .order
            .iter()
            .map(|c| declaration_len(self.arena.name(c)) + (c.body.end - c.body.start))
            .sum();
        filter
            + "*nat\n".len()
            + table(&self.nat_head)
            + arena
            + table(&self.nat_builtins)
            + "COMMIT\n".len()
    }

    /// Writes the payload piece by piece (to a string, or straight to the output: at 10,000
    /// Services it is tens of megabytes that need not be copied once more).
    pub(crate) fn write(&self, out: &mut dyn FnMut(&str)) {
        write_table(out, "filter", &self.filter);
        // nat: declarations, then bodies, in canonical order.
        out("*nat\n");
        for c in &self.nat_head {
            declare(out, c.name());
        }
        for c in &self.order {
            declare(out, self.arena.name(c));
        }
        for c in &self.nat_builtins {
            declare(out, c.name());
        }
        for c in &self.nat_head {
            out(&c.body);
        }
        for c in &self.order {
            out(self.arena.chain_body(c));
        }
        for c in &self.nat_builtins {
            out(&c.body);
        }
        out("COMMIT\n");
    }

    /// Writes part `part` of the payload, `false` past the last one: a writer may stop between
    /// parts and go on later ([`crate::RulesetWriter`]). The parts are [`Payload::write`]'s, in
    /// its order: the filter table, `*nat`, each declaration of the nat table (its fixed head,
    /// the per-service chains, the built-in chains), each body in the same order, `COMMIT`.
    /// (`write` stays the loops it is: it writes every payload of `svclab render`, and a part
    /// found by its number costs a little more.)
    pub(crate) fn write_part(&self, part: usize, out: &mut dyn FnMut(&str)) -> bool {
        let Some(mut i) = part.checked_sub(2) else {
            match part {
                0 => write_table(out, "filter", &self.filter),
                _ => out("*nat\n"),
            }
            return true;
        };
        for bodies in [false, true] {
            let write = |out: &mut dyn FnMut(&str), name: &str, body: &str| {
                if bodies { out(body) } else { declare(out, name) }
            };
            if let Some(c) = self.nat_head.get(i) {
                write(out, c.name(), &c.body);
                return true;
            }
            i -= self.nat_head.len();
            if let Some(c) = self.order.get(i) {
                write(out, self.arena.name(c), self.arena.chain_body(c));
                return true;
            }
            i -= self.order.len();
            if let Some(c) = self.nat_builtins.get(i) {
                write(out, c.name(), &c.body);
                return true;
            }
            i -= self.nat_builtins.len();
        }
        if i == 0 {
            out("COMMIT\n");
        }
        i == 0
    }
}

/// A chain's declaration line: `:NAME - [0:0]`, or `ACCEPT` for a built-in chain.
fn declare(out: &mut dyn FnMut(&str), name: &str) {
    out(":");
    out(name);
    out(if is_builtin(name) { " ACCEPT [0:0]\n" } else { " - [0:0]\n" });
}

fn declaration_len(name: &str) -> usize {
    1 + name.len() + if is_builtin(name) { " ACCEPT [0:0]\n".len() } else { " - [0:0]\n".len() }
}

/// The payload for one family being built: the fixed rules, each service port's
/// ([`crate::proxy::Rendering`] hands them over), then the chains in the canonical order (and,
/// `standalone`, the jumps from the built-in chains).
pub(crate) struct Building<'p> {
    config: &'p ProxyConfig,
    standalone: bool,
    t: Tables,
    stats: RuleStats,
    large: bool,
    localhost_nps: bool,
    node_ports: bool,
}

impl<'p> Building<'p> {
    /// The fixed rules, before any service port's; `ports` are the ones to come.
    pub(crate) fn new(ports: &[SvcPort], config: &'p ProxyConfig, standalone: bool) -> Self {
        let v4 = config.family == IpFamily::V4;
        let localhost_nps = config.localhost_node_ports_effective();
        let kube_firewall = v4 && localhost_nps && config.kube_firewall_rule;
        let mut t = Tables {
            f_services: Chain::new("KUBE-SERVICES"),
            f_external: Chain::new("KUBE-EXTERNAL-SERVICES"),
            f_forward: Chain::new("KUBE-FORWARD"),
            f_nodeports: Chain::new("KUBE-NODEPORTS"),
            f_proxy_firewall: config
                .lb_firewall_in_filter
                .then(|| Chain::new("KUBE-PROXY-FIREWALL")),
            f_firewall: kube_firewall.then(|| Chain::new("KUBE-FIREWALL")),
            n_services: Chain::new("KUBE-SERVICES"),
            n_nodeports: Chain::new("KUBE-NODEPORTS"),
            n_postrouting: Chain::new("KUBE-POSTROUTING"),
            n_mark_masq: Chain::new("KUBE-MARK-MASQ"),
            arena: Arena::default(),
        };
        // Sized from the per-service and per-endpoint chain count, so the vectors never regrow.
        let endpoint_count: usize = ports.iter().map(|p| p.endpoints.len()).sum();
        t.arena.names.reserve((ports.len() * 4 + endpoint_count) * 30);
        t.arena.chains.reserve(ports.len() * 4 + endpoint_count);
        fixed_rules(&mut t, config);
        let large = endpoint_count > config.large_cluster_threshold;
        let stats = RuleStats::of_ports(ports);
        // 1.24 to 1.26 write no NodePort rule when no host address matches `nodePortAddresses`
        // (proxy/release.rs `NodePortRulesNeedNodeAddress`).
        let node_ports = !config.node_port_rules_need_address
            || config
                .node_port_cidrs(ProxyMode::Iptables)
                .is_none_or(|cidrs| !config.node_port_ips(&cidrs, false).is_empty());
        Building { config, standalone, t, stats, large, localhost_nps, node_ports }
    }

    /// Adds the rules of the next service port.
    pub(crate) fn add(&mut self, sp: &SvcPort) {
        let flags = (self.localhost_nps, self.node_ports);
        service_rules(sp, self.config, self.large, flags, &mut self.t, &mut self.stats);
    }

    /// The chains in the canonical order, with the rules of the service ports added.
    pub(crate) fn finish(self) -> Payload {
        let Building { config, standalone, mut t, stats, localhost_nps, .. } = self;
        forward_rules(&mut t.f_forward, config);
        nodeports_last(&mut t.n_services, config, localhost_nps);
        t.into_payload(stats, config, standalone)
    }
}

/// The rules that do not depend on any Service: the localnet block, KUBE-POSTROUTING and
/// KUBE-MARK-MASQ.
fn fixed_rules(t: &mut Tables, config: &ProxyConfig) {
    let mark = &config.masquerade_mark;
    if let Some(fw) = &mut t.f_firewall {
        fw.rule(format_args!(
            "-m comment --comment \"block incoming localnet connections\" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP"
        ));
    }
    t.n_postrouting.rule(format_args!("-m mark ! --mark {mark}/{mark} -j RETURN"));
    t.n_postrouting.rule(format_args!("-j MARK --xor-mark {mark}"));
    t.n_postrouting.rule(format_args!(
        "-m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE{}",
        if config.random_fully { " --random-fully" } else { "" }
    ));
    t.n_mark_masq.rule(format_args!("-j MARK --or-mark {mark}"));
}

/// filter KUBE-FORWARD, which comes last among the filter rules.
fn forward_rules(forward: &mut Chain, config: &ProxyConfig) {
    let mark = &config.masquerade_mark;
    if !config.tcp_be_liberal {
        let nfacct = if config.nfacct_invalid {
            " -m nfacct --nfacct-name ct_state_invalid_dropped_pkts"
        } else {
            ""
        };
        forward.rule(format_args!("-m conntrack --ctstate INVALID{nfacct} -j DROP"));
    }
    forward.rule(format_args!(
        "-m comment --comment \"kubernetes forwarding rules\" -m mark --mark {mark}/{mark} -j ACCEPT"
    ));
    forward.rule(format_args!(
        "-m comment --comment \"kubernetes forwarding conntrack rule\" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT"
    ));
}

/// The last rule(s) of nat KUBE-SERVICES: NodePort traffic on to KUBE-NODEPORTS.
fn nodeports_last(services: &mut Chain, config: &ProxyConfig, localhost_nps: bool) {
    let v4 = config.family == IpFamily::V4;
    match config.node_port_cidrs(ProxyMode::Iptables) {
        None => {
            let exclude = if !config.localhost_exclusions {
                ""
            } else if !v4 {
                " ! -d ::1/128"
            } else if !localhost_nps {
                " ! -d 127.0.0.0/8"
            } else {
                ""
            };
            services.rule(format_args!(
                "-m comment --comment {NODEPORTS_LAST} -m addrtype --dst-type LOCAL{exclude} -j KUBE-NODEPORTS"
            ));
        }
        Some(cidrs) => {
            let skip_loopback = config.localhost_exclusions && (!v4 || !localhost_nps);
            for ip in config.node_port_ips(&cidrs, skip_loopback) {
                services.rule(format_args!(
                    "-m comment --comment {NODEPORTS_LAST} -d {ip} -j KUBE-NODEPORTS"
                ));
            }
        }
    }
}

impl Tables {
    /// The chains in their order: canonical (that of `sortIPTablesRules` in kube-proxy's
    /// tests), with the built-in chains' jumps when `standalone`.
    fn into_payload(self, mut stats: RuleStats, config: &ProxyConfig, standalone: bool) -> Payload {
        let t = self;
        let kube_firewall = t.f_firewall.is_some();
        // KUBE-NODEPORTS, KUBE-SERVICES, other KUBE-* by name, then the built-in chains.
        // Service ports are iterated in the tests' sort order, so KUBE-SERVICES and
        // KUBE-NODEPORTS need no re-sorting.
        let mut arena = t.arena;
        arena.end();
        for fixed in [&t.n_mark_masq, &t.n_postrouting] {
            arena.begin(fixed.name());
            arena.body(&fixed.body, fixed.rules);
        }
        arena.end();
        let mut order: Vec<ArenaChain> = std::mem::take(&mut arena.chains);
        order.sort_unstable_by(|a, b| {
            a.key.cmp(&b.key).then_with(|| arena.name(a).cmp(arena.name(b)))
        });
        let mut filter: Vec<Chain> = vec![t.f_nodeports, t.f_services, t.f_external];
        filter.extend(t.f_firewall);
        filter.push(t.f_forward);
        filter.extend(t.f_proxy_firewall);
        let nat_head = [t.n_nodeports, t.n_services];
        stats.chains.insert("filter".to_owned(), filter.len() as u64);
        stats.rules.insert("filter".to_owned(), filter.iter().map(|c| c.rules).sum());
        stats.chains.insert("nat".to_owned(), (nat_head.len() + order.len()) as u64);
        stats.rules.insert(
            "nat".to_owned(),
            nat_head.iter().map(|c| c.rules).sum::<u64>()
                + order.iter().map(|c| c.rules).sum::<u64>(),
        );
        let builtins = if standalone {
            standalone_chains(&mut filter, kube_firewall, config)
        } else {
            [Vec::new(), Vec::new()]
        };
        let [filter_builtins, nat_builtins] = builtins;
        filter.extend(filter_builtins);
        Payload { filter, nat_head, order, arena, nat_builtins, stats }
    }
}

/// What a standalone payload adds: KUBE-FIREWALL where no rule of the payload made it, and the
/// built-in chains of filter and nat with their jumps into kube-proxy's chains.
fn standalone_chains(
    filter: &mut Vec<Chain>,
    kube_firewall: bool,
    config: &ProxyConfig,
) -> [Vec<Chain>; 2] {
    let v4 = config.family == IpFamily::V4;
    let mut builtins: [Vec<Chain>; 2] = [Vec::new(), Vec::new()];
    // pkg/proxy/iptables/proxier.go `syncProxyRules` ensures the chains and jumps of
    // `iptablesJumpChains` and `iptablesKubeletJumpChains` (KUBE-FIREWALL from INPUT and
    // OUTPUT) on every full sync, whatever the family and localhost NodePorts, and
    // kubelet's `syncIPTablesRules` creates the same jumps on nodes of every release; only
    // the "block incoming localnet connections" rule depends on IPv4 with localhost
    // NodePorts. So a standalone payload always has the jumps, into an empty chain when
    // the payload writes no rule into it.
    if !kube_firewall {
        // Where the written chain goes: after KUBE-EXTERNAL-SERVICES, before KUBE-FORWARD.
        let at = filter.iter().position(|c| c.name() == "KUBE-FORWARD").unwrap_or(filter.len());
        let mut chain = Chain::new("KUBE-FIREWALL");
        if !config.kube_firewall_rule {
            // 1.24 to 1.26: kubelet owns KUBE-FIREWALL and KUBE-MARK-DROP
            // (pkg/kubelet/kubelet_network_linux.go `syncNetworkUtil`, dropBit 15, until
            // IPTablesOwnershipCleanup went beta in 1.27): the marked-packet drop (1.24's
            // KUBE-FW-* ends in KUBE-MARK-DROP) and, for IPv4, the localnet rule, appended
            // in that order (kubelet's `--dst` / `! --src` written as `-d` / `! -s`).
            chain.rule(format_args!(
                "-m comment --comment \"kubernetes firewall for dropping marked packets\" -m mark --mark 0x00008000/0x00008000 -j DROP"
            ));
            if v4 {
                chain.rule(format_args!(
                    "-m comment --comment \"block incoming localnet connections\" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP"
                ));
            }
        }
        filter.insert(at, chain);
    }
    for (slot, table) in builtins.iter_mut().zip(["filter", "nat"]) {
        let mut map: BTreeMap<&str, Chain> = BTreeMap::new();
        for (t, chain, args) in builtin_jumps(true) {
            // No KUBE-PROXY-FIREWALL (and no jump to it) before 1.25.
            if !config.lb_firewall_in_filter && args.ends_with("-j KUBE-PROXY-FIREWALL") {
                continue;
            }
            if t == table {
                map.entry(chain).or_insert_with(|| Chain::new(chain)).rule(format_args!("{args}"));
            }
        }
        *slot = map.into_values().collect();
    }
    if !config.kube_firewall_rule {
        let mut mark_drop = Chain::new("KUBE-MARK-DROP");
        mark_drop.rule(format_args!("-j MARK --or-mark 0x00008000"));
        builtins[1].insert(0, mark_drop);
    }

    builtins
}

fn is_builtin(name: &str) -> bool {
    matches!(name, "INPUT" | "FORWARD" | "OUTPUT" | "PREROUTING" | "POSTROUTING")
}

fn write_table(out: &mut dyn FnMut(&str), name: &str, chains: &[Chain]) {
    out("*");
    out(name);
    out("\n");
    for chain in chains {
        declare(out, chain.name());
    }
    for chain in chains {
        out(&chain.body);
    }
    out("COMMIT\n");
}

/// The chain names of one service port and the decisions `syncProxyRules` takes once per
/// service port, from which each group of its rules is written.
struct PortRules<'a> {
    sp: &'a SvcPort,
    /// The cluster IP and the port as text, written once for the rules that name them.
    cluster_ip: String,
    port: String,
    /// `-m comment --comment "N cluster IP" -m P -p P -d IP --dport PORT`, which starts both
    /// the cluster IP's jump and its masquerade rule (empty when nothing serves it).
    cluster_ip_match: String,
    svc: String,
    svl: String,
    ext: String,
    fw: String,
    /// SEP chain names, computed once per endpoint.
    seps: Vec<String>,
    has_endpoints: bool,
    has_internal: bool,
    has_external: bool,
    use_svc: bool,
    use_svl: bool,
    use_ext: bool,
    use_fw: bool,
    /// REJECT when nothing serves the service; DROP when only the local policy finds nothing.
    why: &'static str,
    verdict: &'static str,
}

/// Per service-port rules (the service-port loop of `syncProxyRules`), in its order: the
/// filter and nat jumps for the cluster IP, external IPs, load-balancer VIPs, NodePort and
/// health-check port, then the EXT, FW, SVC/SVL and SEP chains.
/// `node_ports` is `(localhost NodePorts in effect, NodePort rules written at all)`.
fn service_rules(
    sp: &SvcPort,
    config: &ProxyConfig,
    large: bool,
    (localhost_nps, node_ports): (bool, bool),
    t: &mut Tables,
    stats: &mut RuleStats,
) {
    let rules = PortRules::new(sp, config);
    sp.count_no_local_endpoints(rules.has_endpoints, stats);
    rules.cluster_ip(t);
    rules.external_ips(t);
    rules.load_balancer_vips(t);
    if node_ports {
        rules.node_port(t, config, localhost_nps);
    }
    rules.health_check_node_port(t);
    rules.ext_chain(&mut t.arena, config);
    rules.fw_chain(&mut t.arena, config);
    rules.svc_and_svl_chains(&mut t.arena, config, large);
    rules.sep_chains(&mut t.arena, config, large);
    t.arena.end();
}

impl<'a> PortRules<'a> {
    fn new(sp: &'a SvcPort, config: &ProxyConfig) -> Self {
        // A port without endpoints names no chain of its own: each of its rules REJECTs by
        // address in the filter table. So its hash is not computed (in the plugin that was a
        // tenth of rendering 1,000 Services without EndpointSlices) and the names stay empty.
        let named = !sp.endpoints.is_empty();
        let (hash, seps) = if named { chain_names(sp) } else { (String::new(), Vec::new()) };
        let name = |prefix| if named { chain_name(prefix, &hash) } else { String::new() };
        let has_endpoints = sp.cat.has_any;
        // 1.24 (before #110290): a Local policy with no local endpoint still jumps on, to an
        // SVL chain that marks the packet for kubelet's drop.
        let svl_drops = !config.no_local_endpoints_in_filter && sp.local_eps().is_empty();
        let (why, verdict) = if has_endpoints {
            ("has no local endpoints", "DROP")
        } else {
            ("has no endpoints", "REJECT")
        };
        let cluster_ip = ip_string(sp.cluster_ip);
        let mut port = String::with_capacity(5);
        push_signed(&mut port, i64::from(sp.port));
        let has_internal = sp.has_internal() || (svl_drops && has_endpoints);
        // Joined, not `format!`ted: that cost about 2,800 instructions a port in the plugin.
        let cluster_ip_match = if has_internal {
            address_match(sp, "cluster IP", &cluster_ip, &port, "").concat()
        } else {
            String::new()
        };
        PortRules {
            sp,
            cluster_ip,
            port,
            cluster_ip_match,
            svc: name("KUBE-SVC-"),
            svl: name("KUBE-SVL-"),
            ext: name("KUBE-EXT-"),
            fw: name("KUBE-FW-"),
            seps,
            has_endpoints,
            has_internal,
            has_external: sp.has_external() || (svl_drops && has_endpoints),
            use_svc: !sp.cluster_eps().is_empty() && sp.uses_cluster(),
            use_svl: (!sp.local_eps().is_empty() || (svl_drops && has_endpoints))
                && sp.uses_local(),
            use_ext: has_endpoints && sp.external_accessible(),
            use_fw: has_endpoints && !sp.lb_vips.is_empty() && !sp.source_ranges.is_empty(),
            why,
            verdict,
        }
    }

    /// A rule of `chain`: this port on `address` ([`address_match`]), then `-j JUMP`.
    fn address_rule(&self, chain: &mut Chain, what: &str, address: &str, jump: &str) {
        chain.rule_parts(&address_match(self.sp, what, address, &self.port, jump));
    }

    /// The chain internal traffic goes to.
    fn internal_chain(&self) -> &str {
        if self.sp.itp_local { &self.svl } else { &self.svc }
    }

    /// The cluster IP: to the internal chain, or rejected/dropped when nothing serves it.
    fn cluster_ip(&self, t: &mut Tables) {
        if self.has_internal {
            t.n_services.rule_parts(&[&self.cluster_ip_match, " -j ", self.internal_chain()]);
        } else {
            // Every port of a Service without endpoints gets this rule: plain pieces, no `fmt`.
            self.address_rule(&mut t.f_services, self.why, &self.cluster_ip, self.verdict);
        }
    }

    /// Each external IP: to the EXT chain, or rejected/dropped when nothing serves it.
    fn external_ips(&self, t: &mut Tables) {
        for eip in &self.sp.external_ip_texts {
            if self.has_endpoints {
                self.address_rule(&mut t.n_services, "external IP", eip, &self.ext);
            }
            if !self.has_external {
                self.address_rule(&mut t.f_external, self.why, eip, self.verdict);
            }
        }
    }

    /// Each load-balancer VIP: to the FW chain when source ranges apply, else to EXT, with the
    /// firewall's drop rule, or rejected/dropped when nothing serves it.
    fn load_balancer_vips(&self, t: &mut Tables) {
        let (n, p, port, fw) = (&self.sp.svc_name, &self.sp.protocol, &self.port, &self.fw);
        let target = if self.use_fw { &self.fw } else { &self.ext };
        for vip in &self.sp.lb_vip_texts {
            if self.has_endpoints {
                self.address_rule(&mut t.n_services, "loadbalancer IP", vip, target);
            }
            if self.use_fw
                && let Some(proxy_firewall) = &mut t.f_proxy_firewall
            {
                proxy_firewall.rule(format_args!(
                    "-m comment --comment \"{n} traffic not accepted by {fw}\" -m {p} -p {p} -d {vip} --dport {port} -j DROP"
                ));
            }
        }
        if !self.has_external {
            for vip in &self.sp.lb_vip_texts {
                self.address_rule(&mut t.f_external, self.why, vip, self.verdict);
            }
        }
    }

    /// The NodePort: to the EXT chain (counted with nfacct for localhost when configured), or
    /// rejected/dropped for local destinations when nothing serves it.
    fn node_port(&self, t: &mut Tables, config: &ProxyConfig, localhost_nps: bool) {
        let sp = self.sp;
        if sp.node_port == 0 {
            return;
        }
        let (n, p, np, ext) = (&sp.svc_name, &sp.protocol, sp.node_port, &self.ext);
        let (why, verdict) = (self.why, self.verdict);
        if self.has_endpoints {
            if localhost_nps && config.nfacct_localhost {
                t.n_nodeports.rule(format_args!(
                    "{} -m {p} -p {p} -d 127.0.0.0/8 --dport {np} -m nfacct --nfacct-name localhost_nps_accepted_pkts -j {ext}",
                    comment(n)
                ));
            }
            t.n_nodeports.rule(format_args!("{} -m {p} -p {p} --dport {np} -j {ext}", comment(n)));
        }
        if !self.has_external {
            t.f_external.rule(format_args!(
                "-m comment --comment \"{n} {why}\" -m addrtype --dst-type LOCAL -m {p} -p {p} --dport {np} -j {verdict}"
            ));
        }
    }

    /// The health-check NodePort is accepted (always tcp).
    fn health_check_node_port(&self, t: &mut Tables) {
        if self.sp.health_check_node_port != 0 {
            t.f_nodeports.rule(format_args!(
                "-m comment --comment \"{} health check node port\" -m tcp -p tcp --dport {} -j ACCEPT",
                self.sp.svc_name, self.sp.health_check_node_port
            ));
        }
    }

    /// The EXT chain: masquerade external traffic (with `externalTrafficPolicy: Local`, only
    /// traffic from the node itself, which goes to the cluster-wide chain), then the external
    /// policy's chain.
    fn ext_chain(&self, a: &mut Arena, config: &ProxyConfig) {
        if !self.use_ext {
            return;
        }
        let (sp, n, svc) = (self.sp, &self.sp.svc_name, &self.svc);
        a.begin(&self.ext);
        if !sp.etp_local {
            a.rule(format_args!(
                "-m comment --comment \"masquerade traffic for {n} external destinations\" -j KUBE-MARK-MASQ"
            ));
        } else {
            if let Some(if_local) = config.detect_local.if_local() {
                a.rule(format_args!(
                    "-m comment --comment \"pod traffic for {n} external destinations\" {if_local} -j {svc}"
                ));
            }
            a.rule(format_args!(
                "-m comment --comment \"masquerade LOCAL traffic for {n} external destinations\" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ"
            ));
            a.rule(format_args!(
                "-m comment --comment \"route LOCAL traffic for {n} external destinations\" -m addrtype --src-type LOCAL -j {svc}"
            ));
        }
        if self.has_external {
            let chain = if sp.etp_local { &self.svl } else { &self.svc };
            a.rule(format_args!("-j {chain}"));
        }
    }

    /// The FW chain: allowed source ranges (and the VIPs themselves when the node is in one)
    /// go on to EXT; the rest falls through to KUBE-PROXY-FIREWALL's drop.
    fn fw_chain(&self, a: &mut Arena, config: &ProxyConfig) {
        if !self.use_fw {
            return;
        }
        let (sp, n, ext) = (self.sp, &self.sp.svc_name, &self.ext);
        a.begin(&self.fw);
        let allow_node =
            config.node_ip.is_some_and(|ip| sp.source_ranges.iter().any(|c| c.contains(&ip)));
        if !config.lb_firewall_in_filter {
            // 1.24 (pkg/proxy/iptables/proxier.go `syncProxyRules` at v1.24.17, before
            // kubernetes/kubernetes#110289): the allow rules are written once per VIP, inside
            // the loop over the VIPs, each block with its own VIP as an allowed source when the
            // node is in a range, then the mark for kubelet's filter KUBE-FIREWALL to drop.
            for vip in &sp.lb_vip_texts {
                for cidr in &sp.source_range_texts {
                    a.rule(format_args!(
                        "-m comment --comment \"{n} loadbalancer IP\" -s {cidr} -j {ext}"
                    ));
                }
                if allow_node {
                    a.rule(format_args!(
                        "-m comment --comment \"{n} loadbalancer IP\" -s {vip} -j {ext}"
                    ));
                }
                a.rule(format_args!(
                    "-m comment --comment \"{n} loadbalancer IP\" -j KUBE-MARK-DROP"
                ));
            }
            return;
        }
        for cidr in &sp.source_range_texts {
            a.rule(format_args!("-m comment --comment \"{n} loadbalancer IP\" -s {cidr} -j {ext}"));
        }
        if allow_node {
            for vip in &sp.lb_vip_texts {
                a.rule(format_args!(
                    "-m comment --comment \"{n} loadbalancer IP\" -s {vip} -j {ext}"
                ));
            }
        }
        // 1.27 on (proxy/release.rs `FirewallChainClosingComment`).
        if config.fw_closing_comment {
            a.rule(format_args!(
                "-m comment --comment \"other traffic to {n} will be dropped by KUBE-PROXY-FIREWALL\""
            ));
        }
    }

    /// SVC and SVL: the internal policy's chain starts with the masquerade rule, then each
    /// chain holds its service-to-endpoint rules.
    fn svc_and_svl_chains(&self, a: &mut Arena, config: &ProxyConfig, large: bool) {
        let sp = self.sp;
        let n = &sp.svc_name;
        let masq_match = a
            .masq_match
            .get_or_insert_with(|| {
                if config.masquerade_all {
                    Some(String::new())
                } else {
                    config.detect_local.if_not_local().map(|m| format!(" {m}"))
                }
            })
            .clone();
        for (used, chain, local_policy, eps) in [
            (self.use_svc, &self.svc, false, sp.cluster_eps()),
            (self.use_svl, &self.svl, true, sp.local_eps()),
        ] {
            if !used {
                continue;
            }
            a.begin(chain);
            if self.has_internal
                && sp.itp_local == local_policy
                && let Some(extra) = &masq_match
            {
                a.rule_parts(&[&self.cluster_ip_match, extra, " -j KUBE-MARK-MASQ"]);
            }
            endpoint_jumps(a, sp, eps, &self.seps, large);
            if local_policy && eps.is_empty() {
                a.rule(format_args!(
                    "-m comment --comment \"{n} has no local endpoints\" -j KUBE-MARK-DROP"
                ));
            }
        }
    }

    /// The SEP chain of every reachable endpoint: masquerade hairpin traffic, then DNAT (with
    /// the `recent` list for ClientIP affinity).
    fn sep_chains(&self, a: &mut Arena, config: &ProxyConfig, large: bool) {
        let sp = self.sp;
        let p = &sp.protocol;
        // Joined once per service port (`format!` costs a rule's worth in the plugin).
        let c = if large {
            String::new()
        } else {
            let mut c = comment(&sp.svc_name).pieces().concat();
            c.push(' ');
            c
        };
        let dnat = ["-m ", p, " -p ", p, " -j DNAT --to-destination "].concat();
        for &i in &sp.cat.reachable {
            let ep = &sp.endpoints[i];
            let sep = &self.seps[i];
            a.begin(sep);
            // 1.24 to 1.28: `epInfo.IP()` is `proxyutil.IPPart(endpoint)`, which parses the
            // address the endpoint string keeps as written (proxy/release.rs
            // `EndpointIpPartParsed`).
            if config.endpoint_ip_part_parsed && ep.ip_text() != ep.ip.to_string() {
                a.rule_parts(&[&c, "-s ", &ep.ip.to_string(), " -j KUBE-MARK-MASQ"]);
            } else {
                a.rule_parts(&[&c, "-s ", ep.ip_text(), " -j KUBE-MARK-MASQ"]);
            }
            if sp.affinity.is_some() {
                a.rule(format_args!(
                    "{c}-m recent --name {sep} --set -m {p} -p {p} -j DNAT --to-destination {}",
                    ep.text
                ));
            } else {
                a.rule_parts(&[&c, &dnat, &ep.text]);
            }
        }
    }
}

/// Service-to-endpoint rules (`writeServiceToEndpointRules`).
fn endpoint_jumps(chain: &mut Arena, sp: &SvcPort, eps: &[usize], seps: &[String], large: bool) {
    /// `-m comment --comment "N -> ip:port" ` unless in large-cluster mode.
    struct Comment<'a>(&'a str, &'a str, bool);
    impl std::fmt::Display for Comment<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            if self.2 {
                Ok(())
            } else {
                write!(f, "-m comment --comment \"{} -> {}\" ", self.0, self.1)
            }
        }
    }
    let n = &sp.svc_name;
    let c = |i: usize| Comment(n, &sp.endpoints[i].text, large);
    if let Some(timeout) = sp.affinity {
        for &i in eps {
            let sep = &seps[i];
            chain.rule(format_args!(
                "{}-m recent --name {sep} --rcheck --seconds {timeout} --reap -j {sep}",
                c(i)
            ));
        }
    }
    let count = eps.len();
    let mut probabilities = std::mem::take(&mut chain.probabilities);
    if probabilities.len() <= count {
        probabilities.extend(
            (probabilities.len()..=count).map(|left| format!("{:.10}", 1.0f64 / left as f64)),
        );
    }
    // `-m comment --comment "N -> ip:port" ` unless in large-cluster mode: its head once per
    // service port, the rest joined to the words that follow it.
    let head = if large { String::new() } else { ["-m comment --comment \"", n, " -> "].concat() };
    let (statistic, jump) = if large {
        ("-m statistic --mode random --probability ", "-j ")
    } else {
        ("\" -m statistic --mode random --probability ", "\" -j ")
    };
    for (k, &i) in eps.iter().enumerate() {
        let sep = &seps[i];
        let ep = if large { "" } else { sp.endpoints[i].text.as_str() };
        if k + 1 < count {
            let probability = &probabilities[count - k];
            chain.rule_parts(&[&head, ep, statistic, probability, " -j ", sep]);
        } else {
            chain.rule_parts(&[&head, ep, jump, sep]);
        }
    }
    chain.probabilities = probabilities;
}
