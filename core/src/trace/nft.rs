//! Packet trace over an nftables `kube-proxy` table, by interpreting the `nft -f`
//! transaction text svclab renders (the `add table/chain/set/map/rule/element` form).
//!
//! Base chains run per hook in priority order (prerouting: `filter-prerouting-pre-dnat` at
//! -110, then `nat-prerouting` at -100; then input or forward at 0; postrouting at 100), so
//! the tables of earlier releases (filter chains at -101 in 1.29, at -110 and -90 in 1.30 to
//! 1.33.5) run in their own order.
//! Only the statement forms kube-proxy writes are understood; anything else is reported as a
//! warning and treated as matching.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use ipnet::IpNet;

use super::{Budget, Flow, Packet, TraceStep, split_host_port};
use crate::limits::MAX_TRACE_DEPTH;
use crate::net::{parse_cidr_sloppy, parse_ip_sloppy};
use crate::proxy::ProxyConfig;

/// A parsed table.
#[derive(Debug, Default)]
pub(crate) struct Table {
    /// Chain → rules (text after the chain name).
    chains: BTreeMap<String, Vec<String>>,
    /// Base chains: (hook, priority, name).
    base: Vec<(String, i32, String)>,
    /// Set → elements (text inside the braces).
    sets: BTreeMap<String, Vec<String>>,
    /// Map → (key text, verdict text).
    maps: BTreeMap<String, Vec<(String, String)>>,
    /// The sets and maps indexed once parsing is done, because they hold an element per
    /// Service port and every packet looks into them.
    set_index: BTreeMap<String, SetIndex>,
    /// Map → key → the verdict of its first element.
    map_index: BTreeMap<String, BTreeMap<String, String>>,
    pub(crate) warnings: Vec<String>,
}

/// A set's elements: as written (what a concatenated key is looked up by), and those that are
/// an address or a CIDR (what `@set` matches an address against).
#[derive(Debug, Default)]
struct SetIndex {
    texts: BTreeSet<String>,
    addresses: BTreeSet<IpAddr>,
    nets: Vec<IpNet>,
}

impl SetIndex {
    fn new(elements: &[String]) -> SetIndex {
        let mut index = SetIndex::default();
        for element in elements {
            index.texts.insert(element.clone());
            let text = element.trim();
            if text.contains('/') {
                index.nets.extend(parse_cidr_sloppy(text).map(|(_, n): (IpAddr, IpNet)| n));
            } else {
                index.addresses.extend(parse_ip_sloppy(text));
            }
        }
        index
    }

    /// What [`net_contains`] says of some element.
    fn contains(&self, addr: IpAddr) -> bool {
        self.addresses.contains(&addr) || self.nets.iter().any(|n| n.contains(&addr))
    }
}

/// Splits on whitespace, keeping `"..."` together (quotes kept).
fn words(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && bytes[i] == b' ' {
            i += 1;
        }
        if i >= bytes.len() {
            break;
        }
        let start = i;
        if bytes[i] == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += 1;
            }
            i = (i + 1).min(bytes.len());
        } else {
            while i < bytes.len() && bytes[i] != b' ' {
                i += 1;
            }
        }
        out.push(&text[start..i]);
    }
    out
}

/// Parses an `nft -f` transaction of one table.
pub(crate) fn parse(text: &str) -> Table {
    let mut t = Table::default();
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let w = words(line);
        // add <kind> <family> <table> <name> ...
        // `delete element <family> <table> <map> { <key> }`: the renderer replaces a map key
        // another service port wrote first (kube-proxy's `nftElementStorage.ensureElem`).
        if w.len() >= 5 && w[0] == "delete" && w[1] == "element" {
            let body = w.get(5..).map(|x| x.join(" ")).unwrap_or_default();
            let key = body.trim().trim_start_matches('{').trim_end_matches('}').trim();
            if let Some(map) = t.maps.get_mut(w[4]) {
                map.retain(|(k, _)| k != key);
            } else if let Some(set) = t.sets.get_mut(w[4]) {
                set.retain(|e| e != key);
            }
            continue;
        }
        if w.len() < 5 || w[0] != "add" {
            if !matches!(w.first(), Some(&"flush") | Some(&"delete")) {
                t.warnings.push(format!("line not understood: {line}"));
            }
            continue;
        }
        let rest_of = |n: usize| -> String { w.get(n..).map(|x| x.join(" ")).unwrap_or_default() };
        let name = w[4].to_owned();
        match w[1] {
            "table" => {}
            "chain" => {
                t.chains.entry(name.clone()).or_default();
                if let Some(h) = w.iter().position(|x| *x == "hook") {
                    let hook = w.get(h + 1).copied().unwrap_or("").to_owned();
                    let priority = w
                        .iter()
                        .position(|x| *x == "priority")
                        .and_then(|p| w.get(p + 1))
                        .and_then(|p| p.trim_end_matches(';').parse().ok())
                        .unwrap_or(0);
                    t.base.push((hook, priority, name));
                }
            }
            "set" => {
                t.sets.entry(name).or_default();
            }
            "map" => {
                t.maps.entry(name).or_default();
            }
            // 1.37's named counters (localhost NodePort rejects) only count.
            "counter" => {}
            "rule" => t.chains.entry(name).or_default().push(rest_of(5)),
            "element" => {
                let body = rest_of(5);
                let inner =
                    body.trim().trim_start_matches('{').trim_end_matches('}').trim().to_owned();
                if t.maps.contains_key(&name) {
                    let (key, verdict) = inner.rsplit_once(" : ").unwrap_or((inner.as_str(), ""));
                    // Element comments sit between key and verdict.
                    let key = key.split(" comment ").next().unwrap_or(key).trim().to_owned();
                    t.maps.entry(name).or_default().push((key, verdict.trim().to_owned()));
                } else {
                    for e in inner.split(',') {
                        // 1.29's firewall sets carry element comments.
                        let e = e.split(" comment ").next().unwrap_or(e);
                        t.sets.entry(name.clone()).or_default().push(e.trim().to_owned());
                    }
                }
            }
            _ => t.warnings.push(format!("line not understood: {line}")),
        }
    }
    t.base.sort_by_key(|(_, p, _)| *p);
    t.set_index = t.sets.iter().map(|(name, e)| (name.clone(), SetIndex::new(e))).collect();
    for (name, entries) in &t.maps {
        let index = t.map_index.entry(name.clone()).or_default();
        for (key, verdict) in entries {
            index.entry(key.clone()).or_insert_with(|| verdict.clone());
        }
    }
    t
}

/// What one rule does when it matches.
enum Action {
    Continue,
    Jump(String),
    Goto(String),
    Verdict(Flow),
    Return,
    /// `numgen random mod n vmap { ... }`: each target with probability 1/n.
    Random(Vec<String>),
    /// `dnat ip addr . port to numgen random mod n map { ... }` (1.36 on): each `ip:port`
    /// (`[ip]:port`) with probability 1/n.
    RandomDnat(Vec<String>),
}

pub(crate) struct Walker<'a> {
    pub(crate) table: &'a Table,
    pub(crate) config: &'a ProxyConfig,
    pub(crate) protocol: String,
    pub(crate) in_interface: Option<String>,
    pub(crate) budget: Budget,
}

impl Walker<'_> {
    /// Runs the base chains of a hook in priority order.
    pub(crate) fn hook(&self, hook: &str, p: Packet) -> Vec<(Packet, Flow)> {
        let mut states = vec![(p, Flow::Continue)];
        for (h, _, name) in &self.table.base {
            if h != hook {
                continue;
            }
            let mut next = Vec::new();
            for (p, flow) in states {
                if matches!(flow, Flow::Drop | Flow::Reject) {
                    next.push((p, flow));
                    continue;
                }
                for (q, f) in self.run(name, p, 0) {
                    // accept ends this base chain only.
                    next.push((q, if f == Flow::Accept { Flow::Continue } else { f }));
                }
            }
            states = next;
        }
        states
    }

    fn run(&self, chain: &str, p: Packet, depth: usize) -> Vec<(Packet, Flow)> {
        let mut out = Vec::new();
        self.run_from(chain, 0, p, depth, &mut out);
        out
    }

    fn run_from(
        &self,
        chain: &str,
        start: usize,
        mut p: Packet,
        depth: usize,
        out: &mut Vec<(Packet, Flow)>,
    ) {
        let Some(rules) = self.table.chains.get(chain) else {
            out.push((p, Flow::Continue));
            return;
        };
        for (idx, rule) in rules.iter().enumerate().skip(start) {
            if !self.budget.rule() {
                return;
            }
            let Some(action) = self.eval(rule, &mut p) else { continue };
            let step = |p: &mut Packet, effect: String| {
                let step = TraceStep {
                    table: "kube-proxy".to_owned(),
                    chain: chain.to_owned(),
                    rule: rule.clone(),
                    effect,
                };
                self.budget.record(&step);
                p.steps.push(step);
            };
            match action {
                Action::Continue => step(&mut p, "match, continue".to_owned()),
                Action::Return => {
                    step(&mut p, "return".to_owned());
                    out.push((p, Flow::Continue));
                    return;
                }
                Action::Verdict(flow) => {
                    let effect = match flow {
                        Flow::Drop => "drop",
                        Flow::Reject => "reject",
                        _ => "accept",
                    };
                    step(&mut p, effect.to_owned());
                    out.push((p, flow));
                    return;
                }
                Action::Jump(target) | Action::Goto(target) if depth >= MAX_TRACE_DEPTH => {
                    step(&mut p, format!("{target}: too deep, ignored"));
                }
                Action::Jump(target) => {
                    step(&mut p, format!("jump {target}"));
                    for (q, flow) in self.run(&target, p, depth + 1) {
                        if flow == Flow::Continue {
                            self.run_from(chain, idx + 1, q, depth, out);
                        } else {
                            out.push((q, flow));
                        }
                    }
                    return;
                }
                Action::Goto(target) => {
                    step(&mut p, format!("goto {target}"));
                    out.extend(self.run(&target, p, depth + 1));
                    return;
                }
                Action::RandomDnat(targets) => {
                    let share = 1.0 / targets.len() as f64;
                    for (i, to) in targets.into_iter().enumerate() {
                        if i > 0 && !self.budget.path(&p.steps) {
                            break;
                        }
                        let mut q = p.clone();
                        q.probability *= share;
                        if let Some((ip, port)) = split_host_port(&to) {
                            q.dst = ip;
                            q.dport = port;
                        }
                        step(&mut q, format!("dnat to {to} (random, p={share:.10})"));
                        q.dnat = Some(to);
                        out.push((q, Flow::Accept));
                    }
                    return;
                }
                Action::Random(targets) => {
                    let share = 1.0 / targets.len() as f64;
                    for (i, target) in targets.into_iter().enumerate() {
                        if i > 0 && !self.budget.path(&p.steps) {
                            break;
                        }
                        let mut q = p.clone();
                        q.probability *= share;
                        step(&mut q, format!("goto {target} (random, p={share:.10})"));
                        out.extend(self.run(&target, q, depth + 1));
                    }
                    return;
                }
            }
        }
        out.push((p, Flow::Continue));
    }

    /// Evaluates one rule: `None` when a match fails, else the action (statements with side
    /// effects such as mark, masquerade and dnat are applied to the packet).
    fn eval(&self, rule: &str, p: &mut Packet) -> Option<Action> {
        let w = words(rule);
        let mut i = 0;
        let at = |i: usize| w.get(i).copied().unwrap_or("");
        while i < w.len() {
            match at(i) {
                "comment" => i += 2,
                "ct" if at(i + 1) == "state" => {
                    // A first packet is "new".
                    if !at(i + 2).split(',').any(|s| s == "new") {
                        return None;
                    }
                    i += 3;
                }
                // 1.36's hairpin connections: `ip saddr . ip daddr . meta l4proto . th dport
                // @hairpin-connections`.
                "ip" | "ip6" if at(i + 2) == "." && at(i + 4) == "daddr" => {
                    let key = format!("{} . {} . {} . {}", p.src, p.dst, self.protocol, p.dport);
                    let set = at(i + 11).trim_start_matches('@');
                    if !self.table.set_index.get(set).is_some_and(|s| s.texts.contains(&key)) {
                        return None;
                    }
                    i += 12;
                }
                // `ct status dnat`: the connection was DNATed.
                "ct" if at(i + 1) == "status" => {
                    if at(i + 2) == "dnat" && p.dnat.is_none() {
                        return None;
                    }
                    i += 3;
                }
                "ip" | "ip6" if at(i + 2) == "." => {
                    let addr = if at(i + 1) == "saddr" { p.src } else { p.dst };
                    let key = format!("{addr} . {} . {}", self.protocol, p.dport);
                    match at(i + 8) {
                        // ip daddr . meta l4proto . th dport vmap @map
                        "vmap" => {
                            let map = at(i + 9).trim_start_matches('@');
                            return self.lookup(map, &key).map(|v| self.verdict(&v));
                        }
                        // 1.29's firewall-allow: ip daddr . meta l4proto . th dport . ip saddr
                        // @set, whose last field is a source CIDR (an interval set).
                        "." => {
                            let set = at(i + 11).trim_start_matches('@');
                            let allowed = self.table.sets.get(set).is_some_and(|elems| {
                                elems.iter().any(|e| {
                                    e.rsplit_once(" . ").is_some_and(|(dest, source)| {
                                        dest == key && net_contains(source, p.src)
                                    })
                                })
                            });
                            if !allowed {
                                return None;
                            }
                            i += 12;
                        }
                        // 1.29's firewall: ip daddr . meta l4proto . th dport @set
                        set => {
                            let set = set.trim_start_matches('@');
                            let hit = self
                                .table
                                .set_index
                                .get(set)
                                .is_some_and(|s| s.texts.contains(&key));
                            if !hit {
                                return None;
                            }
                            i += 9;
                        }
                    }
                }
                // 1.29 to 1.33's masquerade rule: `tcp dport 80`.
                "tcp" | "udp" | "sctp" if at(i + 1) == "dport" => {
                    if at(i) != self.protocol || at(i + 2).parse::<u16>().ok() != Some(p.dport) {
                        return None;
                    }
                    i += 3;
                }
                "ip" | "ip6" => {
                    let addr = if at(i + 1) == "saddr" { p.src } else { p.dst };
                    let (negate, value_at) =
                        if at(i + 2) == "!=" { (true, i + 3) } else { (false, i + 2) };
                    let (hit, next) = self.value_match(&w, value_at, addr);
                    if hit == negate {
                        return None;
                    }
                    i = next;
                }
                "meta" if at(i + 1) == "l4proto" && at(i + 2) == "." => {
                    // meta l4proto . th dport vmap @map
                    let key = format!("{} . {}", self.protocol, p.dport);
                    let map = at(i + 6).trim_start_matches('@');
                    return self.lookup(map, &key).map(|v| self.verdict(&v));
                }
                "meta" if at(i + 1) == "l4proto" => {
                    if at(i + 2) != self.protocol {
                        return None;
                    }
                    i += 3;
                }
                "fib" => {
                    let addr = if at(i + 1) == "saddr" { p.src } else { p.dst };
                    if !self.config.is_local_address(addr) {
                        return None;
                    }
                    i += 4;
                }
                "iif" | "iifname" => {
                    let (negate, pattern) =
                        if at(i + 1) == "!=" { (true, at(i + 2)) } else { (false, at(i + 1)) };
                    let hit = self.in_interface.as_deref().is_some_and(|name| {
                        match pattern.strip_suffix('*') {
                            Some(prefix) => name.starts_with(prefix),
                            None => name == pattern,
                        }
                    });
                    if hit == negate {
                        return None;
                    }
                    i += if negate { 3 } else { 2 };
                }
                "mark" if at(i + 1) == "and" => {
                    // mark and M == 0 (1.29 to 1.35), mark and M != 0 (1.36 on)
                    let mask = number(at(i + 2));
                    let value = number(at(i + 4));
                    let equal = p.mark & mask == value;
                    if equal == (at(i + 3) == "!=") {
                        return None;
                    }
                    i += 5;
                }
                "mark" if at(i + 1) == "set" => {
                    let v = number(at(i + 4));
                    match at(i + 3) {
                        "or" => p.mark |= v,
                        "xor" => p.mark ^= v,
                        _ => p.mark = v,
                    }
                    i += 5;
                }
                "numgen" => {
                    let open = w.iter().position(|x| *x == "{").unwrap_or(w.len());
                    let targets = w[open..]
                        .windows(2)
                        .filter(|pair| pair[0] == "goto")
                        .map(|pair| pair[1].to_owned())
                        .collect::<Vec<_>>();
                    return Some(Action::Random(targets));
                }
                "update" => i += 6,
                "masquerade" => {
                    p.masquerade = true;
                    return Some(Action::Verdict(Flow::Accept));
                }
                // dnat ip addr . port to numgen random mod n map { 0 : a . p , 1 : b . q }
                "dnat" if at(i + 2) == "addr" => {
                    let open = w.iter().position(|x| *x == "{").unwrap_or(w.len());
                    let close = w.iter().rposition(|x| *x == "}").unwrap_or(w.len());
                    let inner = w.get(open + 1..close).unwrap_or_default().join(" ");
                    let targets = inner
                        .split(" , ")
                        .filter_map(|entry| {
                            let (_, value) = entry.split_once(" : ")?;
                            let (ip, port) = value.split_once(" . ")?;
                            let ip = ip.trim();
                            Some(if ip.contains(':') {
                                format!("[{ip}]:{}", port.trim())
                            } else {
                                format!("{ip}:{}", port.trim())
                            })
                        })
                        .collect();
                    return Some(Action::RandomDnat(targets));
                }
                "dnat" => {
                    let to = at(i + 2).to_owned();
                    if let Some((ip, port)) = split_host_port(&to) {
                        p.dst = ip;
                        p.dport = port;
                    }
                    p.dnat = Some(to);
                    return Some(Action::Verdict(Flow::Accept));
                }
                "jump" => return Some(Action::Jump(at(i + 1).to_owned())),
                "goto" => return Some(Action::Goto(at(i + 1).to_owned())),
                "return" => return Some(Action::Return),
                "drop" => return Some(Action::Verdict(Flow::Drop)),
                "reject" => return Some(Action::Verdict(Flow::Reject)),
                "accept" => return Some(Action::Verdict(Flow::Accept)),
                _ => i += 1,
            }
        }
        Some(Action::Continue)
    }

    /// Matches an address against `@set`, `{ a , b }` or a single address/CIDR; returns the
    /// result and the index after the value.
    fn value_match(&self, w: &[&str], at: usize, addr: IpAddr) -> (bool, usize) {
        let first = w.get(at).copied().unwrap_or("");
        if let Some(set) = first.strip_prefix('@') {
            // Affinity sets start empty: no entry for a first connection.
            let hit = self.table.set_index.get(set).is_some_and(|s| s.contains(addr));
            return (hit, at + 1);
        }
        if first == "{" {
            let close = w[at..].iter().position(|x| *x == "}").map_or(w.len(), |p| at + p);
            let hit = w[at + 1..close]
                .iter()
                .flat_map(|x| x.split(','))
                .filter(|x| !x.is_empty())
                .any(|e| net_contains(e, addr));
            return (hit, close + 1);
        }
        (net_contains(first, addr), at + 1)
    }

    fn lookup(&self, map: &str, key: &str) -> Option<String> {
        self.table.map_index.get(map)?.get(key).cloned()
    }

    fn verdict(&self, text: &str) -> Action {
        let w: Vec<&str> = text.split_whitespace().collect();
        match w.as_slice() {
            ["goto", target] => Action::Goto((*target).to_owned()),
            ["jump", target] => Action::Jump((*target).to_owned()),
            ["drop"] => Action::Verdict(Flow::Drop),
            ["reject", ..] => Action::Verdict(Flow::Reject),
            ["accept"] => Action::Verdict(Flow::Accept),
            _ => Action::Continue,
        }
    }
}

fn net_contains(text: &str, addr: IpAddr) -> bool {
    let text = text.trim();
    if text.contains('/') {
        return parse_cidr_sloppy(text).is_some_and(|(_, n): (IpAddr, IpNet)| n.contains(&addr));
    }
    parse_ip_sloppy(text) == Some(addr)
}

fn number(text: &str) -> u32 {
    match text.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).unwrap_or(0),
        None => text.parse().unwrap_or(0),
    }
}
