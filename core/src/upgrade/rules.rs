//! A rendered ruleset taken apart by Service port, so that two rulesets can be compared in
//! words: which chains a Service port has (iptables `KUBE-SVC-*`, `KUBE-SEP-*`, ...; nftables
//! `service-*`, `endpoint-*`, ...), which of its rules sit in the shared chains, sets and maps,
//! and what belongs to no Service port (the fixed chains every sync writes).
//!
//! A Service port is named as kube-proxy names it (`ns/name:port`, `ns/name` for an unnamed
//! port). iptables rules carry it in their comments, and a Service port's `KUBE-SVC-`, `KUBE-SVL-`,
//! `KUBE-EXT-` and `KUBE-FW-` chains share one hash, so a chain whose own rules name no port
//! (`KUBE-EXT-*` jumping on to `KUBE-SVC-*`) belongs to the port of its siblings; nftables chains
//! carry it in their names (`service-HASH-ns/name/tcp/port`), and map elements in their comment
//! or the chain they go to.

use std::collections::{BTreeMap, BTreeSet};

use crate::proxy::ProxyMode;

/// What one Service port (or nothing, for the fixed part) has in a ruleset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PortRules {
    /// Its own chains and their rules (key: `nat KUBE-SVC-…` or the nftables chain name).
    pub(crate) chains: BTreeMap<String, Vec<String>>,
    /// Its rules and elements in shared chains, sets and maps, by where they are.
    pub(crate) shared: BTreeMap<String, Vec<String>>,
}

impl PortRules {
    /// Rules, declarations and elements in all.
    pub(crate) fn lines(&self) -> usize {
        self.chains.values().map(|r| r.len().max(1)).sum::<usize>()
            + self.shared.values().map(Vec::len).sum::<usize>()
    }
}

/// A ruleset by Service port.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) ports: BTreeMap<String, PortRules>,
    pub(crate) fixed: PortRules,
}

/// Takes a ruleset apart; `known` are the Service ports of the cluster (`ns/name[:port]`).
pub(crate) fn layout(text: &str, mode: ProxyMode, known: &BTreeSet<String>) -> Layout {
    match mode {
        ProxyMode::Iptables => iptables(text, known),
        ProxyMode::Nftables => nftables(text, known),
    }
}

/// The Service port a comment names: the first of its words that is one of `known`.
fn port_in(comment: &str, known: &BTreeSet<String>) -> Option<String> {
    comment
        .split([' ', '"'])
        .map(|w| w.trim_end_matches([',', ';']))
        .find(|w| known.contains(*w))
        .map(str::to_owned)
}

/// The text after `--comment ` (quoted or one word), or after nft's `comment `.
fn comment_of(line: &str, marker: &str) -> Option<String> {
    let at = line.find(marker)? + marker.len();
    let rest = &line[at..];
    if let Some(quoted) = rest.strip_prefix('"') {
        return quoted.split('"').next().map(str::to_owned);
    }
    rest.split_whitespace().next().map(str::to_owned)
}

/// Per-port chain prefixes of iptables mode, which share their hash within a Service port.
const IPTABLES_PORT_CHAINS: [&str; 4] = ["KUBE-SVC-", "KUBE-SVL-", "KUBE-EXT-", "KUBE-FW-"];

fn iptables(text: &str, known: &BTreeSet<String>) -> Layout {
    let mut table = String::new();
    // chain key → its rules, in order of appearance; chain key → port named by its rules.
    let mut chains: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix('*') {
            table = name.trim().to_owned();
        } else if let Some(decl) = line.strip_prefix(':') {
            let chain = decl.split_whitespace().next().unwrap_or("");
            let key = format!("{table} {chain}");
            if !chains.contains_key(&key) {
                order.push(key.clone());
            }
            chains.entry(key).or_default();
        } else if let Some(rule) = line.strip_prefix("-A ") {
            let chain = rule.split_whitespace().next().unwrap_or("");
            let key = format!("{table} {chain}");
            if !chains.contains_key(&key) {
                order.push(key.clone());
            }
            chains.entry(key).or_default().push(line.to_owned());
        }
    }
    let is_port_chain = |chain: &str| {
        IPTABLES_PORT_CHAINS.iter().any(|p| chain.starts_with(p)) || chain.starts_with("KUBE-SEP-")
    };
    // The port each per-port chain's rules name; siblings by hash.
    let mut owner: BTreeMap<String, String> = BTreeMap::new();
    let mut by_hash: BTreeMap<String, String> = BTreeMap::new();
    for (key, rules) in &chains {
        let chain = key.split(' ').nth(1).unwrap_or("");
        if !is_port_chain(chain) {
            continue;
        }
        let named =
            rules.iter().find_map(|r| comment_of(r, "--comment ").and_then(|c| port_in(&c, known)));
        if let Some(port) = named {
            if let Some(hash) = IPTABLES_PORT_CHAINS.iter().find_map(|p| chain.strip_prefix(p)) {
                by_hash.insert(hash.to_owned(), port.clone());
            }
            owner.insert(key.clone(), port);
        }
    }
    let mut layout = Layout::default();
    for key in order {
        let rules = chains.remove(&key).unwrap_or_default();
        let chain = key.split(' ').nth(1).unwrap_or("");
        let port = owner.get(&key).cloned().or_else(|| {
            IPTABLES_PORT_CHAINS
                .iter()
                .find_map(|p| chain.strip_prefix(p))
                .and_then(|hash| by_hash.get(hash).cloned())
        });
        match port {
            Some(port) => {
                layout.ports.entry(port).or_default().chains.insert(key, rules);
            }
            None if is_port_chain(chain) => {
                layout.fixed.chains.insert(key, rules);
            }
            None => {
                // A shared chain: each rule to the port its comment names.
                let mut own = Vec::new();
                for rule in rules {
                    match comment_of(&rule, "--comment ").and_then(|c| port_in(&c, known)) {
                        Some(port) => layout
                            .ports
                            .entry(port)
                            .or_default()
                            .shared
                            .entry(key.clone())
                            .or_default()
                            .push(rule),
                        None => own.push(rule),
                    }
                }
                layout.fixed.chains.insert(key, own);
            }
        }
    }
    layout
}

/// The Service port an nftables per-port chain name carries (`service-HASH-ns/name/tcp/port`,
/// `endpoint-HASH-ns/name/tcp/port__ip/port`): `ns/name:port`.
fn nft_chain_port(chain: &str) -> Option<String> {
    let rest = ["service-", "external-", "endpoint-", "firewall-"]
        .iter()
        .find_map(|p| chain.strip_prefix(p))?;
    let (_, base) = rest.split_once('-')?;
    let base = base.split("__").next()?;
    let parts: Vec<&str> = base.split('/').collect();
    let [namespace, name, _protocol, port] = parts.as_slice() else { return None };
    Some(if port.is_empty() {
        format!("{namespace}/{name}")
    } else {
        format!("{namespace}/{name}:{port}")
    })
}

fn nftables(text: &str, known: &BTreeSet<String>) -> Layout {
    let mut layout = Layout::default();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        // add <kind> <family> kube-proxy <name> ...
        let (Some(kind), Some(name)) = (words.get(1), words.get(4)) else {
            layout.fixed.chains.entry(String::new()).or_default().push(line.to_owned());
            continue;
        };
        let port = match *kind {
            "chain" | "rule" => nft_chain_port(name),
            "element" => comment_of(line, "comment ")
                .and_then(|c| port_in(&c, known))
                .or_else(|| words.iter().find_map(|w| nft_chain_port(w))),
            _ => None,
        };
        let target = match port {
            Some(port) => layout.ports.entry(port).or_default(),
            None => &mut layout.fixed,
        };
        match *kind {
            "chain" => {
                target.chains.entry((*name).to_owned()).or_default();
            }
            "rule" => target.chains.entry((*name).to_owned()).or_default().push(line.to_owned()),
            _ => target.shared.entry((*name).to_owned()).or_default().push(line.to_owned()),
        }
    }
    layout
}

/// A chain key in words: `KUBE-SVC-X (nat)`, or the nftables chain.
fn chain_words(key: &str) -> String {
    match key.split_once(' ') {
        Some((table, chain)) => format!("{chain} ({table})"),
        None => key.to_owned(),
    }
}

/// What differs between two of a port's (or the fixed part's) rules, in words; empty when
/// nothing does. `mode_switch`: the two come from different modes, so every chain is new.
pub(crate) fn describe(before: &PortRules, after: &PortRules, mode_switch: bool) -> Vec<String> {
    let mut out = Vec::new();
    let list =
        |keys: Vec<&String>| keys.iter().map(|k| chain_words(k)).collect::<Vec<_>>().join(", ");
    if mode_switch {
        if before.chains.is_empty() && after.chains.is_empty() {
            return out;
        }
        out.push(format!(
            "chains {} ({} rules) are replaced by {} ({} rules)",
            or_none(&list(before.chains.keys().collect())),
            before.lines(),
            or_none(&list(after.chains.keys().collect())),
            after.lines()
        ));
        return out;
    }
    let added: Vec<&String> =
        after.chains.keys().filter(|k| !before.chains.contains_key(*k)).collect();
    let removed: Vec<&String> =
        before.chains.keys().filter(|k| !after.chains.contains_key(*k)).collect();
    let changed: Vec<String> = before
        .chains
        .iter()
        .filter_map(|(k, rules)| {
            let new = after.chains.get(k)?;
            (new != rules)
                .then(|| format!("{} ({} → {} rules)", chain_words(k), rules.len(), new.len()))
        })
        .collect();
    if !added.is_empty() {
        out.push(format!("chains added: {}", list(added)));
    }
    if !removed.is_empty() {
        out.push(format!("chains removed: {}", list(removed)));
    }
    if !changed.is_empty() {
        out.push(format!("chains changed: {}", changed.join(", ")));
    }
    let places: BTreeSet<&String> = before.shared.keys().chain(after.shared.keys()).collect();
    for place in places {
        let empty = Vec::new();
        let (a, b) =
            (before.shared.get(place).unwrap_or(&empty), after.shared.get(place).unwrap_or(&empty));
        if a == b {
            continue;
        }
        let gone = a.iter().filter(|r| !b.contains(r)).count();
        let new = b.iter().filter(|r| !a.contains(r)).count();
        let what = match (gone, new) {
            (0, 0) => "reordered".to_owned(),
            (0, n) => format!("{n} added"),
            (g, 0) => format!("{g} removed"),
            (g, n) => format!("{g} removed, {n} added"),
        };
        out.push(format!("its rules in {}: {what}", chain_words(place)));
    }
    out
}

fn or_none(text: &str) -> &str {
    if text.is_empty() { "none" } else { text }
}
