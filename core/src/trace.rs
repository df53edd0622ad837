//! Packet trace: walks one new connection through iptables rules by interpreting the rules
//! text (a rendered payload or a pasted `iptables-save` dump), and lists every rule matched,
//! each DNAT choice with its probability, masquerade and the verdict.
//!
//! The packet takes the PREROUTING path (nat PREROUTING → routing → filter INPUT or FORWARD →
//! nat POSTROUTING) unless its source is one of the node's own addresses, which means it is
//! locally generated (nat OUTPUT → filter OUTPUT → nat POSTROUTING). Every random branch
//! (`-m statistic`) is followed, so the outcomes carry probabilities that sum to 1. It is a
//! first connection: no `-m recent` affinity entry exists yet.
//!
//! When the rules do not contain the built-in chains (kube-proxy's payload never does), the
//! jump rules kube-proxy installs there (`iptablesJumpChains` of the proxier) are assumed.
//!
//! ```
//! use svclab_core::{Input, CheckOptions, evaluate, trace, TraceRequest};
//! let yaml = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec:\n  clusterIP: 10.96.0.20\n  ports: [{port: 80}]\n";
//! let (world, _) = evaluate(&[Input::new("web.yaml", yaml)], &CheckOptions::default());
//! let request = TraceRequest { src: "10.244.0.5".into(), dst: "10.96.0.20".into(), dport: 80, ..TraceRequest::default() };
//! let report = trace(&world, &request);
//! assert_eq!(report.outcomes[0].verdict, "REJECT");
//! ```

mod nft;
mod rules;

use std::cell::Cell;
use std::fmt::Write as _;
use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::limits::{MAX_TRACE_BYTES, MAX_TRACE_DEPTH, MAX_TRACE_PATHS, MAX_TRACE_RULES};
use crate::net::parse_ip_sloppy;
use crate::proxy::{ProxyConfig, builtin_jumps};
use rules::{Match, Rule, Target};

pub(crate) use nft::{Table as NftTable, parse as parse_nft};
pub(crate) use rules::{Ruleset, parse as parse_iptables};

/// The packet to trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceRequest {
    /// Source address.
    pub src: String,
    /// Destination address.
    pub dst: String,
    /// Destination port.
    pub dport: u16,
    /// `tcp`, `udp` or `sctp`.
    pub protocol: String,
    /// Node the packet arrives at (`None` = the renderer's default node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Interface the packet arrives on (for `-i` matches such as the BridgeInterface
    /// detector); `None` matches no `-i` rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_interface: Option<String>,
}

impl Default for TraceRequest {
    fn default() -> Self {
        TraceRequest {
            src: String::new(),
            dst: String::new(),
            dport: 0,
            protocol: "tcp".to_owned(),
            node: None,
            in_interface: None,
        }
    }
}

/// One matched rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceStep {
    /// `nat` or `filter`.
    pub table: String,
    /// The chain.
    pub chain: String,
    /// The rule text (`-A CHAIN ...`); assumed built-in jumps are marked `(assumed)`.
    pub rule: String,
    /// What it did (`jump`, `DNAT to 10.0.0.1:80 (p=0.5000)`, `mark 0x4000`, ...).
    pub effect: String,
}

/// One possible fate of the packet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceOutcome {
    /// Probability of this path (random endpoint choice).
    pub probability: f64,
    /// `endpoint` (DNATed and accepted), `DROP`, `REJECT`, or `no service` (no rule took the
    /// packet: it is routed or delivered as it is).
    pub verdict: String,
    /// `ip:port` after DNAT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Whether the source is masqueraded to the node's address.
    pub masquerade: bool,
    /// Every matched rule in order.
    pub steps: Vec<TraceStep>,
}

/// The trace of one packet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceReport {
    /// The packet.
    pub request: TraceRequest,
    /// What was interpreted (`rendered iptables (IPv4)` or `iptables-save dump <file>`).
    pub ruleset: String,
    /// `PREROUTING` or `OUTPUT`.
    pub path: String,
    /// Every outcome, in rule order.
    pub outcomes: Vec<TraceOutcome>,
    /// Problems reading the request or the rules.
    pub warnings: Vec<String>,
}

impl TraceReport {
    /// Human-readable trace.
    pub fn to_text(&self) -> String {
        let r = &self.request;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "packet: {} {} -> {}:{} (path {})",
            r.protocol, r.src, r.dst, r.dport, self.path
        );
        let _ = writeln!(out, "rules: {}", self.ruleset);
        for w in &self.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        for (i, o) in self.outcomes.iter().enumerate() {
            let target = o.endpoint.as_deref().map(|e| format!(" {e}")).unwrap_or_default();
            let masq = if o.masquerade { ", masquerade" } else { "" };
            let _ = writeln!(
                out,
                "outcome {} (p={:.4}): {}{target}{masq}",
                i + 1,
                o.probability,
                o.verdict
            );
            for s in &o.steps {
                let _ = writeln!(out, "  {}/{}: {}  => {}", s.table, s.chain, s.rule, s.effect);
            }
        }
        out
    }
}

/// The report skeleton of a trace and its parsed addresses, with the path the source implies
/// (a node address starts in OUTPUT, anything else in PREROUTING); or the report saying why the
/// packet cannot be traced (no addresses).
fn begin(
    request: &TraceRequest,
    config: &ProxyConfig,
    ruleset: String,
    warnings: &[String],
) -> (TraceReport, Option<(IpAddr, IpAddr)>) {
    let mut report = TraceReport {
        request: request.clone(),
        ruleset,
        path: String::new(),
        outcomes: Vec::new(),
        warnings: warnings.to_vec(),
    };
    let (Some(src), Some(dst)) = (parse_ip_sloppy(&request.src), parse_ip_sloppy(&request.dst))
    else {
        report.warnings.push("source and destination must be IP addresses".to_owned());
        return (report, None);
    };
    report.path = if config.is_local_address(src) { "OUTPUT" } else { "PREROUTING" }.to_owned();
    (report, Some((src, dst)))
}

/// Traces a packet through an nftables `kube-proxy` table given as `nft -f` text.
pub fn trace_nft_text(
    rules_text: &str,
    config: &ProxyConfig,
    request: &TraceRequest,
) -> TraceReport {
    trace_nft_table(&nft::parse(rules_text), config, request)
}

/// [`trace_nft_text`] through a table parsed once ([`parse_nft`]), for callers that trace many
/// packets through one ruleset.
pub(crate) fn trace_nft_table(
    table: &NftTable,
    config: &ProxyConfig,
    request: &TraceRequest,
) -> TraceReport {
    let ruleset = format!("rendered nftables ({})", config.family.as_str());
    let (mut report, addresses) = begin(request, config, ruleset, &table.warnings);
    let Some((src, dst)) = addresses else { return report };
    let local_source = report.path == "OUTPUT";
    let walker = nft::Walker {
        table,
        config,
        protocol: request.protocol.to_ascii_lowercase(),
        in_interface: request.in_interface.clone(),
        budget: Budget::default(),
    };
    let start = Packet {
        src,
        dst,
        dport: request.dport,
        mark: 0,
        dnat: None,
        masquerade: false,
        probability: 1.0,
        steps: Vec::new(),
        forced: None,
    };
    let stopped = |f: Flow| matches!(f, Flow::Drop | Flow::Reject);
    for (p, flow) in walker.hook(if local_source { "output" } else { "prerouting" }, start) {
        if stopped(flow) {
            report.outcomes.push(finish(p, flow));
            continue;
        }
        let states = if local_source {
            vec![(p, flow)]
        } else {
            let to_node = config.is_local_address(p.dst);
            let after = walker.hook(if to_node { "input" } else { "forward" }, p);
            if to_node {
                for (p, flow) in after {
                    report
                        .outcomes
                        .push(finish(p, if stopped(flow) { flow } else { Flow::Accept }));
                }
                continue;
            }
            after
        };
        for (p, flow) in states {
            if stopped(flow) {
                report.outcomes.push(finish(p, flow));
                continue;
            }
            for (p, flow) in walker.hook("postrouting", p) {
                report.outcomes.push(finish(p, flow));
            }
        }
    }
    report.warnings.extend(walker.budget.warning());
    report
}

/// What one trace may spend over all its paths ([`MAX_TRACE_RULES`] rules evaluated or copied,
/// [`MAX_TRACE_PATHS`] paths, [`MAX_TRACE_BYTES`] of recorded steps, copies included): rules
/// whose chains jump into one another, or random branches inside random branches, would
/// otherwise cost exponential time and memory. Once anything runs out, every path stops where
/// it is and is dropped, and the trace says so.
#[derive(Debug, Default)]
pub(crate) struct Budget {
    rules: Cell<usize>,
    paths: Cell<usize>,
    bytes: Cell<usize>,
    exhausted: Cell<bool>,
}

impl Budget {
    /// Spends one rule evaluation; `false` once anything has run out.
    pub(crate) fn rule(&self) -> bool {
        self.spend(&self.rules, 1, MAX_TRACE_RULES)
    }

    /// Spends `n` rule evaluations at once; `false` once anything has run out.
    pub(crate) fn rules(&self, n: usize) -> bool {
        self.spend(&self.rules, n, MAX_TRACE_RULES)
    }

    /// Spends the copy of a chain's `n` rules.
    pub(crate) fn copy_rules(&self, n: usize) {
        self.spend(&self.rules, n, MAX_TRACE_RULES);
    }

    /// Spends one more path (a random branch) that copies `steps`; `false` once anything has
    /// run out.
    pub(crate) fn path(&self, steps: &[TraceStep]) -> bool {
        self.spend(&self.paths, 1, MAX_TRACE_PATHS)
            && steps.iter().all(|step| self.spend(&self.bytes, step_bytes(step), MAX_TRACE_BYTES))
    }

    /// Spends a step about to be recorded.
    pub(crate) fn record(&self, step: &TraceStep) {
        self.spend(&self.bytes, step_bytes(step), MAX_TRACE_BYTES);
    }

    fn spend(&self, counter: &Cell<usize>, n: usize, limit: usize) -> bool {
        if self.exhausted.get() {
            return false;
        }
        let spent = counter.get().saturating_add(n);
        if spent > limit {
            self.exhausted.set(true);
            return false;
        }
        counter.set(spent);
        true
    }

    /// The warning of a trace cut short.
    pub(crate) fn warning(&self) -> Option<String> {
        self.exhausted.get().then(|| {
            format!(
                "the trace was cut short: svclab follows at most {MAX_TRACE_PATHS} paths and \
                 evaluates at most {MAX_TRACE_RULES} rules per packet; the outcomes are incomplete"
            )
        })
    }
}

/// What a recorded step costs: its text and its own size.
fn step_bytes(step: &TraceStep) -> usize {
    std::mem::size_of::<TraceStep>()
        + step.table.len()
        + step.chain.len()
        + step.rule.len()
        + step.effect.len()
}

pub(crate) fn failed(request: &TraceRequest, message: &str) -> TraceReport {
    TraceReport {
        request: request.clone(),
        ruleset: String::new(),
        path: String::new(),
        outcomes: Vec::new(),
        warnings: vec![message.to_owned()],
    }
}

/// Traces a packet through iptables rules text, with the node facts of `config` (its
/// addresses decide `--dst-type LOCAL` and the path).
pub fn trace_text(rules_text: &str, config: &ProxyConfig, request: &TraceRequest) -> TraceReport {
    trace_ruleset(&rules::parse(rules_text), config, request)
}

/// [`trace_text`] through rules parsed once ([`parse_iptables`]), for callers that trace many
/// packets through one ruleset.
pub(crate) fn trace_ruleset(
    ruleset: &Ruleset,
    config: &ProxyConfig,
    request: &TraceRequest,
) -> TraceReport {
    let name = format!("rendered iptables ({})", config.family.as_str());
    let (mut report, addresses) = begin(request, config, name, &ruleset.warnings);
    let Some((src, dst)) = addresses else { return report };
    let local_source = report.path == "OUTPUT";
    let protocol = request.protocol.to_ascii_lowercase();
    let tracer = Tracer { set: ruleset, config, request, protocol, budget: Budget::default() };
    let start = Packet {
        src,
        dst,
        dport: request.dport,
        mark: 0,
        dnat: None,
        masquerade: false,
        probability: 1.0,
        steps: Vec::new(),
        forced: None,
    };
    let nat_hook = if local_source { "OUTPUT" } else { "PREROUTING" };
    for (p, flow) in tracer.run("nat", nat_hook, start) {
        if matches!(flow, Flow::Drop | Flow::Reject) {
            report.outcomes.push(finish(p, flow));
            continue;
        }
        let filter_hook = if local_source {
            "OUTPUT"
        } else if config.is_local_address(p.dst) {
            "INPUT"
        } else {
            "FORWARD"
        };
        for (p, flow) in tracer.run_builtin("filter", filter_hook, p) {
            if matches!(flow, Flow::Drop | Flow::Reject) {
                report.outcomes.push(finish(p, flow));
                continue;
            }
            if filter_hook == "INPUT" {
                report.outcomes.push(finish(p, Flow::Accept));
                continue;
            }
            for (p, flow) in tracer.run("nat", "POSTROUTING", p) {
                report.outcomes.push(finish(p, flow));
            }
        }
    }
    report.warnings.extend(tracer.budget.warning());
    report
}

#[derive(Debug, Clone)]
struct Packet {
    src: IpAddr,
    dst: IpAddr,
    dport: u16,
    mark: u32,
    dnat: Option<String>,
    masquerade: bool,
    probability: f64,
    steps: Vec<TraceStep>,
    /// Rule index whose random match is taken on this branch.
    forced: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    /// Fell off the end of the chain or returned.
    Continue,
    Accept,
    Drop,
    Reject,
}

fn finish(p: Packet, flow: Flow) -> TraceOutcome {
    let verdict = match (flow, &p.dnat) {
        (Flow::Drop, _) => "DROP",
        (Flow::Reject, _) => "REJECT",
        (_, Some(_)) => "endpoint",
        _ => "no service",
    };
    TraceOutcome {
        probability: p.probability,
        verdict: verdict.to_owned(),
        endpoint: if matches!(flow, Flow::Drop | Flow::Reject) { None } else { p.dnat.clone() },
        masquerade: p.masquerade,
        steps: p.steps,
    }
}

struct Tracer<'a> {
    set: &'a Ruleset,
    config: &'a ProxyConfig,
    request: &'a TraceRequest,
    /// The request's protocol as `-p` writes it, lowercased once (every rule of KUBE-SERVICES
    /// names one, before its destination).
    protocol: String,
    budget: Budget,
}

/// Result of matching one rule.
enum Matched {
    No,
    Yes,
    /// Matches with this probability.
    Maybe(f64),
}

/// The rules a walk runs through in one chain: the ruleset's own, borrowed (a chain such as
/// KUBE-SERVICES holds a rule per Service port, and every packet walks it), or the jumps
/// kube-proxy is assumed to have written into an empty built-in chain.
enum ChainRules<'a> {
    Stored(&'a [Rule]),
    Assumed(Vec<(Rule, bool)>),
}

impl ChainRules<'_> {
    fn len(&self) -> usize {
        match self {
            ChainRules::Stored(rules) => rules.len(),
            ChainRules::Assumed(rules) => rules.len(),
        }
    }

    /// The rule at `index` and whether it is assumed.
    fn get(&self, index: usize) -> Option<(&Rule, bool)> {
        match self {
            ChainRules::Stored(rules) => rules.get(index).map(|r| (r, false)),
            ChainRules::Assumed(rules) => rules.get(index).map(|(r, assumed)| (r, *assumed)),
        }
    }
}

impl<'a> Tracer<'a> {
    /// Rules of a chain; built-in chains without rules get kube-proxy's assumed jumps.
    fn rules(&self, table: &str, chain: &str) -> ChainRules<'a> {
        if let Some(rules) = self.set.chain(table, chain)
            && (!rules.is_empty() || !is_builtin(chain))
        {
            // Counted as the copy it once was, so the budget ends a walk where it did.
            self.budget.copy_rules(rules.len());
            return ChainRules::Stored(rules);
        }
        if !is_builtin(chain) {
            return ChainRules::Assumed(Vec::new());
        }
        let with_firewall = self.set.has_chain("filter", "KUBE-FIREWALL");
        let assumed = builtin_jumps(with_firewall)
            .into_iter()
            .filter(|(t, c, _)| *t == table && *c == chain)
            .filter_map(|(_, c, args)| {
                let target = args.rsplit(' ').next().unwrap_or("");
                self.set.has_chain(table, target).then(|| format!("-A {c} {args}"))
            })
            .map(|text| {
                let parsed = rules::parse(&format!("*{table}\n{text}\n"));
                let rule = parsed.chain(table, chain).and_then(|r| r.first().cloned());
                (
                    rule.unwrap_or(Rule {
                        text,
                        matches: Vec::new(),
                        target: Target::None,
                        recent_set: None,
                    }),
                    true,
                )
            })
            .collect();
        ChainRules::Assumed(assumed)
    }

    /// Runs a built-in chain; a packet falling off its end gets the chain's policy.
    fn run_builtin(&self, table: &str, chain: &str, p: Packet) -> Vec<(Packet, Flow)> {
        let policy =
            self.set.policies.get(&(table.to_owned(), chain.to_owned())).map(String::as_str);
        self.run(table, chain, p)
            .into_iter()
            .map(|(mut q, flow)| match (flow, policy) {
                (Flow::Continue, Some("DROP")) => {
                    q.steps.push(TraceStep {
                        table: table.to_owned(),
                        chain: chain.to_owned(),
                        rule: format!(":{chain} DROP"),
                        effect: "policy DROP".to_owned(),
                    });
                    (q, Flow::Drop)
                }
                other => (q, other.0),
            })
            .collect()
    }

    fn run(&self, table: &str, chain: &str, p: Packet) -> Vec<(Packet, Flow)> {
        let rules = self.rules(table, chain);
        let mut out = Vec::new();
        self.run_from(table, chain, &rules, 0, p, 0, &mut out);
        out
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "one recursive walker state, kept flat for clarity"
    )]
    fn run_from(
        &self,
        table: &str,
        chain: &str,
        rules: &ChainRules<'_>,
        start: usize,
        mut p: Packet,
        depth: usize,
        out: &mut Vec<(Packet, Flow)>,
    ) {
        let index = match rules {
            ChainRules::Stored(_) => self.set.destination_index(table, chain),
            ChainRules::Assumed(_) => None,
        };
        let mut idx = start;
        loop {
            if let Some(index) = index {
                // The rules passed over cannot match; each is spent as if tested, so the budget
                // ends a walk where it did.
                let next = index.next(idx, p.dst).unwrap_or(usize::MAX);
                let passed = next.min(rules.len()) - idx.min(rules.len());
                if passed > 0 && !self.budget.rules(passed) {
                    return;
                }
                idx = next;
            }
            let Some((rule, assumed)) = rules.get(idx) else { break };
            if !self.budget.rule() {
                return;
            }
            idx += 1;
            let mut note = String::new();
            match self.matches(rule, &p) {
                Matched::No => continue,
                Matched::Yes => {}
                Matched::Maybe(prob) => {
                    if p.forced.take() == Some(idx - 1) {
                        p.probability *= prob;
                        note = format!(" (random, p={prob:.10})");
                    } else {
                        // First the branch where the rule fires, then the walk goes on
                        // without it.
                        if self.budget.path(&p.steps) {
                            let mut taken = p.clone();
                            taken.forced = Some(idx - 1);
                            self.run_from(table, chain, rules, idx - 1, taken, depth, out);
                        }
                        p.probability *= 1.0 - prob;
                        if p.probability <= 0.0 {
                            return;
                        }
                        continue;
                    }
                }
            }
            let text = if assumed { format!("{} (assumed)", rule.text) } else { rule.text.clone() };
            let step = |p: &mut Packet, effect: String| {
                let step = TraceStep {
                    table: table.to_owned(),
                    chain: chain.to_owned(),
                    rule: text.clone(),
                    effect,
                };
                self.budget.record(&step);
                p.steps.push(step);
            };
            if let Some(name) = &rule.recent_set {
                note.push_str(&format!(" (records affinity in {name})"));
            }
            match &rule.target {
                Target::None | Target::Other(_) => step(&mut p, format!("match, continue{note}")),
                Target::Mark(value, mask) => {
                    p.mark = (p.mark & !mask) ^ value;
                    let effect = format!("mark now {:#x}{note}", p.mark);
                    step(&mut p, effect);
                }
                Target::Accept => {
                    step(&mut p, format!("ACCEPT{note}"));
                    out.push((p, Flow::Accept));
                    return;
                }
                Target::Drop => {
                    step(&mut p, format!("DROP{note}"));
                    out.push((p, Flow::Drop));
                    return;
                }
                Target::Reject => {
                    step(&mut p, format!("REJECT{note}"));
                    out.push((p, Flow::Reject));
                    return;
                }
                Target::Return => {
                    step(&mut p, format!("RETURN{note}"));
                    out.push((p, Flow::Continue));
                    return;
                }
                Target::Masquerade => {
                    p.masquerade = true;
                    step(&mut p, format!("MASQUERADE (source becomes the node's address){note}"));
                    out.push((p, Flow::Accept));
                    return;
                }
                Target::Dnat(to) => {
                    if let Some((ip, port)) = split_host_port(to) {
                        p.dst = ip;
                        p.dport = port;
                    }
                    p.dnat = Some(to.clone());
                    step(&mut p, format!("DNAT to {to}{note}"));
                    out.push((p, Flow::Accept));
                    return;
                }
                Target::Jump(target) | Target::Goto(target) => {
                    let is_goto = matches!(rule.target, Target::Goto(_));
                    if !self.set.has_chain(table, target) || depth >= MAX_TRACE_DEPTH {
                        step(&mut p, format!("jump to unknown chain {target}, ignored{note}"));
                        continue;
                    }
                    step(
                        &mut p,
                        format!("{} {target}{note}", if is_goto { "goto" } else { "jump" }),
                    );
                    for (q, flow) in self.run_sub(table, target, p, depth + 1) {
                        if flow == Flow::Continue && !is_goto {
                            self.run_from(table, chain, rules, idx, q, depth, out);
                        } else {
                            out.push((q, flow));
                        }
                    }
                    return;
                }
            }
        }
        out.push((p, Flow::Continue));
    }

    fn run_sub(&self, table: &str, chain: &str, p: Packet, depth: usize) -> Vec<(Packet, Flow)> {
        let rules = self.rules(table, chain);
        let mut out = Vec::new();
        self.run_from(table, chain, &rules, 0, p, depth, &mut out);
        out
    }

    fn matches(&self, rule: &Rule, p: &Packet) -> Matched {
        // A rule matches when all its matches do, so the most telling one is tried first: a
        // chain such as KUBE-SERVICES holds a rule per Service port, each writing its protocol
        // and comment before the destination that tells it apart.
        let other_destination = rule
            .matches
            .iter()
            .any(|m| matches!(m, Match::Destination(net, neg) if net.contains(&p.dst) == *neg));
        if other_destination {
            return Matched::No;
        }
        let mut probability = None;
        for m in &rule.matches {
            let ok = match m {
                Match::Source(net, neg) => net.contains(&p.src) != *neg,
                Match::Destination(net, neg) => net.contains(&p.dst) != *neg,
                Match::Protocol(proto, neg) => (proto == "all" || *proto == self.protocol) != *neg,
                Match::InInterface(name, neg) => {
                    let hit = self
                        .request
                        .in_interface
                        .as_deref()
                        .is_some_and(|i| iface_matches(name, i));
                    hit != *neg
                }
                // Output interfaces are decided by routing, which svclab does not model.
                Match::OutInterface(_, neg) => *neg,
                Match::DestPort(a, b, neg) => (*a..=*b).contains(&p.dport) != *neg,
                Match::DestPorts(ranges, neg) => {
                    ranges.iter().any(|(a, b)| (*a..=*b).contains(&p.dport)) != *neg
                }
                Match::SourcePort(_, _, neg) => !*neg,
                Match::SrcType(kind, neg) => self.addr_type(kind, p.src) != *neg,
                Match::DstType(kind, neg) => self.addr_type(kind, p.dst) != *neg,
                Match::CtState(states, neg) => {
                    // A first packet is NEW; once DNATed its conntrack entry also has DNAT.
                    let hit =
                        states.iter().any(|s| s == "NEW" || (s == "DNAT" && p.dnat.is_some()));
                    hit != *neg
                }
                Match::Mark(value, mask, neg) => ((p.mark & mask) == *value) != *neg,
                Match::Probability(prob) => {
                    probability = Some(*prob);
                    true
                }
                Match::RecentCheck(_) => false,
                Match::Other(_) => true,
            };
            if !ok {
                return Matched::No;
            }
        }
        match probability {
            Some(prob) if prob < 1.0 => Matched::Maybe(prob),
            _ => Matched::Yes,
        }
    }

    fn addr_type(&self, kind: &str, ip: IpAddr) -> bool {
        match kind {
            "LOCAL" => self.config.is_local_address(ip),
            "UNICAST" => !ip.is_multicast(),
            _ => false,
        }
    }
}

/// `-i veth+` matches any interface starting with `veth`.
fn iface_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('+') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

fn is_builtin(chain: &str) -> bool {
    matches!(chain, "PREROUTING" | "INPUT" | "FORWARD" | "OUTPUT" | "POSTROUTING")
}

/// `10.0.0.1:80` or `[2001:db8::1]:80`.
fn split_host_port(text: &str) -> Option<(IpAddr, u16)> {
    let (host, port) = text.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Some((parse_ip_sloppy(host)?, port.parse().ok()?))
}

#[cfg(test)]
mod tests;
