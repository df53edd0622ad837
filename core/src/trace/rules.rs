//! Parses iptables-restore / iptables-save text into tables, chains and typed rules.
//!
//! Both spellings are accepted: what kube-proxy writes (`-m tcp -p tcp -d 10.0.0.1 --dport 80`,
//! `-j MARK --or-mark 0x4000`) and what `iptables-save` prints back (`-d 10.0.0.1/32 -p tcp -m
//! tcp --dport 80`, `-j MARK --set-xmark 0x4000/0x4000`).

use std::collections::BTreeMap;
use std::net::IpAddr;

use ipnet::IpNet;

use crate::net::{parse_cidr_sloppy, parse_ip_sloppy};

/// One match of a rule; `bool` fields are the `!` negation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Match {
    Source(IpNet, bool),
    Destination(IpNet, bool),
    Protocol(String, bool),
    InInterface(String, bool),
    OutInterface(String, bool),
    DestPort(u16, u16, bool),
    /// `-m multiport --dports a,b:c`.
    DestPorts(Vec<(u16, u16)>, bool),
    SourcePort(u16, u16, bool),
    SrcType(String, bool),
    DstType(String, bool),
    CtState(Vec<String>, bool),
    Mark(u32, u32, bool),
    /// `-m statistic --mode random --probability p`.
    Probability(f64),
    /// `-m recent --rcheck`: an affinity entry exists (never, for a first connection).
    RecentCheck(String),
    /// A module svclab does not interpret; it is assumed to match.
    Other(String),
}

/// What a rule does when it matches.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Target {
    None,
    Jump(String),
    Goto(String),
    Accept,
    Drop,
    Reject,
    Return,
    Dnat(String),
    Masquerade,
    /// `mark = (mark & !mask) ^ value`.
    Mark(u32, u32),
    Other(String),
}

/// One rule with its original text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rule {
    pub(crate) text: String,
    pub(crate) matches: Vec<Match>,
    pub(crate) target: Target,
    /// `-m recent --set --name X` (an affinity entry is recorded).
    pub(crate) recent_set: Option<String>,
}

/// Tables → chains → rules, in text order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ruleset {
    pub(crate) tables: BTreeMap<String, BTreeMap<String, Vec<Rule>>>,
    /// Policies of built-in chains (`:FORWARD DROP [0:0]`), by (table, chain).
    pub(crate) policies: BTreeMap<(String, String), String>,
    pub(crate) warnings: Vec<String>,
    /// The long chains' [`DestinationIndex`], by table and chain.
    pub(crate) indices: BTreeMap<String, BTreeMap<String, DestinationIndex>>,
}

impl Ruleset {
    pub(crate) fn chain(&self, table: &str, chain: &str) -> Option<&Vec<Rule>> {
        self.tables.get(table).and_then(|t| t.get(chain))
    }

    /// The index of a chain long enough to have one.
    pub(crate) fn destination_index(&self, table: &str, chain: &str) -> Option<&DestinationIndex> {
        self.indices.get(table).and_then(|t| t.get(chain))
    }

    pub(crate) fn has_chain(&self, table: &str, chain: &str) -> bool {
        self.chain(table, chain).is_some()
    }
}

/// Where the rules of a long chain that match one host address as their destination are, by
/// address, so that a walk passes over the rules of other destinations without testing each
/// (KUBE-SERVICES holds a rule per Service port and address, and the kernel tests them in turn;
/// none of them can match a packet to another address, whatever else it says).
#[derive(Debug, Clone, Default)]
pub(crate) struct DestinationIndex {
    /// Rules with a `-d <host>` match, by host, in order.
    by_host: BTreeMap<IpAddr, Vec<usize>>,
    /// Every other rule, in order.
    others: Vec<usize>,
}

impl DestinationIndex {
    /// Chains shorter than this are walked rule by rule.
    const MIN_RULES: usize = 64;

    fn of(rules: &[Rule]) -> Option<DestinationIndex> {
        if rules.len() < Self::MIN_RULES {
            return None;
        }
        let mut index = DestinationIndex::default();
        for (i, rule) in rules.iter().enumerate() {
            let host = rule.matches.iter().find_map(|m| match m {
                Match::Destination(net, false) if net.prefix_len() == net.max_prefix_len() => {
                    Some(net.addr())
                }
                _ => None,
            });
            match host {
                Some(host) => index.by_host.entry(host).or_default().push(i),
                None => index.others.push(i),
            }
        }
        Some(index)
    }

    /// The first rule at or after `from` that may match a packet to `destination`.
    pub(crate) fn next(&self, from: usize, destination: IpAddr) -> Option<usize> {
        let first = |list: &[usize]| list.get(list.partition_point(|&i| i < from)).copied();
        let host = self.by_host.get(&destination).and_then(|list| first(list));
        match (first(&self.others), host) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Splits a rule into words, keeping double-quoted strings together (quotes removed).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            '\\' if quoted => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c if c.is_whitespace() && !quoted => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn net_of(text: &str) -> Option<IpNet> {
    if text.contains('/') {
        return parse_cidr_sloppy(text).map(|(_, n)| n);
    }
    let ip: IpAddr = parse_ip_sloppy(text)?;
    Some(IpNet::from(ip))
}

fn number(text: &str) -> Option<u32> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

fn mark_pair(text: &str) -> Option<(u32, u32)> {
    match text.split_once('/') {
        Some((v, m)) => Some((number(v)?, number(m)?)),
        None => Some((number(text)?, u32::MAX)),
    }
}

fn port_range(text: &str) -> Option<(u16, u16)> {
    match text.split_once(':') {
        Some((a, b)) => Some((
            if a.is_empty() { 0 } else { a.parse().ok()? },
            if b.is_empty() { u16::MAX } else { b.parse().ok()? },
        )),
        None => {
            let p = text.parse().ok()?;
            Some((p, p))
        }
    }
}

/// Parses one rule's arguments (after `-A CHAIN`).
fn parse_rule(text: &str, args: &[String], warnings: &mut Vec<String>) -> Rule {
    let mut rule =
        Rule { text: text.to_owned(), matches: Vec::new(), target: Target::None, recent_set: None };
    let mut i = 0;
    let mut negate = false;
    let mut recent_name = String::new();
    let mut target_name = String::new();
    let mut target_opts: Vec<(String, String)> = Vec::new();
    let next = |i: &mut usize| -> String {
        *i += 1;
        args.get(*i).cloned().unwrap_or_default()
    };
    while i < args.len() {
        let a = args[i].as_str();
        let neg = std::mem::take(&mut negate);
        match a {
            "!" => negate = true,
            // `--src` / `--dst`: the iptables command's aliases, which kubelet's own rules of
            // 1.24 to 1.26 used (iptables-save prints them as `-s` / `-d`).
            "-s" | "--source" | "--src" => match net_of(&next(&mut i)) {
                Some(n) => rule.matches.push(Match::Source(n, neg)),
                None => warnings.push(format!("unreadable source in {text}")),
            },
            "-d" | "--destination" | "--dst" => match net_of(&next(&mut i)) {
                Some(n) => rule.matches.push(Match::Destination(n, neg)),
                None => warnings.push(format!("unreadable destination in {text}")),
            },
            "-p" | "--protocol" => {
                rule.matches.push(Match::Protocol(next(&mut i).to_ascii_lowercase(), neg))
            }
            "-i" | "--in-interface" => rule.matches.push(Match::InInterface(next(&mut i), neg)),
            "-o" | "--out-interface" => rule.matches.push(Match::OutInterface(next(&mut i), neg)),
            "-m" | "--match" => {
                let module = next(&mut i);
                match module.as_str() {
                    "tcp" | "udp" | "sctp" | "comment" | "addrtype" | "conntrack" | "mark"
                    | "statistic" | "recent" | "nfacct" | "state" | "multiport" => {}
                    other => {
                        // Not kube-proxy's: assumed to match, and said so.
                        warnings.push(format!(
                            "match module {other:?} is not interpreted (assumed to match): {text}"
                        ));
                        rule.matches.push(Match::Other(other.to_owned()));
                    }
                }
            }
            "--comment" | "--mode" | "--nfacct-name" | "--seconds" | "--mask" => {
                let _ = next(&mut i);
            }
            "--dports" | "--destination-ports" => {
                let list = next(&mut i);
                let ranges: Option<Vec<(u16, u16)>> = list.split(',').map(port_range).collect();
                match ranges {
                    Some(ranges) => rule.matches.push(Match::DestPorts(ranges, neg)),
                    None => warnings.push(format!("unreadable ports in {text}")),
                }
            }
            "--dport" | "--destination-port" => match port_range(&next(&mut i)) {
                Some((a, b)) => rule.matches.push(Match::DestPort(a, b, neg)),
                None => warnings.push(format!("unreadable port in {text}")),
            },
            "--sport" | "--source-port" => match port_range(&next(&mut i)) {
                Some((a, b)) => rule.matches.push(Match::SourcePort(a, b, neg)),
                None => warnings.push(format!("unreadable port in {text}")),
            },
            "--src-type" => rule.matches.push(Match::SrcType(next(&mut i), neg)),
            "--dst-type" => rule.matches.push(Match::DstType(next(&mut i), neg)),
            "--ctstate" | "--state" => {
                let states = next(&mut i).split(',').map(str::to_owned).collect();
                rule.matches.push(Match::CtState(states, neg));
            }
            "--mark" => match mark_pair(&next(&mut i)) {
                Some((v, m)) => rule.matches.push(Match::Mark(v, m, neg)),
                None => warnings.push(format!("unreadable mark in {text}")),
            },
            "--probability" => {
                let p: f64 = next(&mut i).parse().unwrap_or(1.0);
                rule.matches.push(Match::Probability(p));
            }
            "--name" => recent_name = next(&mut i),
            "--rcheck" | "--update" => rule.matches.push(Match::RecentCheck(recent_name.clone())),
            "--set" => rule.recent_set = Some(recent_name.clone()),
            "--reap" | "--rsource" | "--rdest" | "--random-fully" | "--random" | "--persistent" => {
                if matches!(a, "--random-fully" | "--random" | "--persistent") {
                    target_opts.push((a.to_owned(), String::new()));
                }
            }
            "-j" | "--jump" => target_name = next(&mut i),
            "-g" | "--goto" => {
                let chain = next(&mut i);
                rule.target = Target::Goto(chain);
            }
            opt if opt.starts_with("--") => {
                let value = next(&mut i);
                target_opts.push((opt.to_owned(), value));
            }
            other => warnings.push(format!("unknown word {other:?} in {text}")),
        }
        i += 1;
    }
    if !target_name.is_empty() {
        let opt = |name: &str| target_opts.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        rule.target = match target_name.as_str() {
            "ACCEPT" => Target::Accept,
            "DROP" => Target::Drop,
            "REJECT" => Target::Reject,
            "RETURN" => Target::Return,
            "MASQUERADE" | "SNAT" => Target::Masquerade,
            "DNAT" => Target::Dnat(opt("--to-destination").unwrap_or_default()),
            "MARK" => {
                if let Some((v, _)) = opt("--or-mark").as_deref().and_then(mark_pair) {
                    Target::Mark(v, v)
                } else if let Some((v, _)) = opt("--xor-mark").as_deref().and_then(mark_pair) {
                    Target::Mark(v, 0)
                } else if let Some((v, m)) = opt("--set-xmark").as_deref().and_then(mark_pair) {
                    Target::Mark(v, m)
                } else if let Some((v, m)) = opt("--set-mark").as_deref().and_then(mark_pair) {
                    // --set-mark v/m = --set-xmark v/(v|m) with the value cleared first.
                    Target::Mark(v, v | m)
                } else {
                    Target::Other("MARK".to_owned())
                }
            }
            "LOG" | "NFLOG" | "TRACE" | "CT" | "NOTRACK" => Target::Other(target_name),
            chain => Target::Jump(chain.to_owned()),
        };
    }
    rule
}

/// Parses an iptables-restore / iptables-save document.
pub(crate) fn parse(text: &str) -> Ruleset {
    let mut set = Ruleset::default();
    let mut table = String::new();
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line == "COMMIT" {
            continue;
        }
        if let Some(name) = line.strip_prefix('*') {
            table = name.trim().to_owned();
            set.tables.entry(table.clone()).or_default();
            continue;
        }
        if let Some(decl) = line.strip_prefix(':') {
            let mut parts = decl.split_whitespace();
            let chain = parts.next().unwrap_or("").to_owned();
            if let Some(policy) = parts.next().filter(|p| *p != "-") {
                set.policies.insert((table.clone(), chain.clone()), policy.to_owned());
            }
            set.tables.entry(table.clone()).or_default().entry(chain).or_default();
            continue;
        }
        let w = words(line);
        match w.first().map(String::as_str) {
            Some("-A" | "--append") if w.len() >= 2 => {
                let chain = w[1].clone();
                let rule = parse_rule(line, &w[2..], &mut set.warnings);
                set.tables.entry(table.clone()).or_default().entry(chain).or_default().push(rule);
            }
            Some("-X" | "-F" | "-N") => {}
            _ => set.warnings.push(format!("line not understood: {line}")),
        }
    }
    for (table, chains) in &set.tables {
        for (chain, rules) in chains {
            if let Some(index) = DestinationIndex::of(rules) {
                set.indices.entry(table.clone()).or_default().insert(chain.clone(), index);
            }
        }
    }
    set
}
