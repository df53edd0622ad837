//! The playground's view of kube-proxy: rulesets for the Rules panel (`svclab_core::render`),
//! what the panel reads off them once ([`RulesIndex`]), and packet walks for the Trace panel
//! (`svclab_core::trace`).

use std::collections::BTreeSet;

use svclab_core::{Report, Rules, TraceReport, TraceRequest, World};

use crate::share::SharedTrace;

/// The result of a trace.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TraceOutcome {
    /// The packet could not be traced (bad address or port, unknown node...).
    Invalid(String),
    /// The walk: every possible fate of the packet with its probability.
    Walk(TraceReport),
}

/// What the Rules panel reads off one ruleset once, rather than at each drawing (a cluster's is
/// hundreds of thousands of lines): the chains it defines, whose names it links, and how many
/// lines it has.
#[derive(Debug, Default)]
pub(crate) struct RulesetIndex {
    pub(crate) chains: BTreeSet<String>,
    pub(crate) lines: usize,
}

impl RulesetIndex {
    /// Reads the ruleset's next `lines` into the index: `false` once they ran out before
    /// `count` of them.
    pub(crate) fn read<'a>(&mut self, lines: impl Iterator<Item = &'a str>, count: usize) -> bool {
        let mut read = 0;
        for line in lines.take(count) {
            read += 1;
            if let Some(name) = defined(line) {
                self.chains.insert(name.to_owned());
            }
        }
        self.lines += read;
        read == count
    }
}

/// Both rulesets' indexes.
#[derive(Debug, Default)]
pub(crate) struct RulesIndex {
    pub(crate) iptables: RulesetIndex,
    pub(crate) nftables: RulesetIndex,
}

impl RulesIndex {
    /// The index of a ruleset of `mode` (`iptables` or `nftables`).
    pub(crate) fn of_mode(&self, mode: &str) -> &RulesetIndex {
        if mode == "nftables" { &self.nftables } else { &self.iptables }
    }

    /// Both rulesets' index, at once.
    pub(crate) fn of(rules: &Rules) -> RulesIndex {
        let mut index = RulesIndex::default();
        index.iptables.read(rules.iptables.lines(), usize::MAX);
        index.nftables.read(rules.nftables.lines(), usize::MAX);
        index
    }
}

/// The chain a ruleset's line defines, if it is a definition: iptables `:NAME policy [0:0]`,
/// nft `chain NAME {` and `add chain <family> <table> NAME` (most lines are not: they are told
/// apart by their first bytes).
pub(crate) fn defined(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    if let Some(rest) = trimmed.strip_prefix(':') {
        return rest.split_whitespace().next();
    }
    if trimmed.starts_with("chain ") {
        return trimmed.split_whitespace().nth(1);
    }
    if trimmed.starts_with("add chain ") {
        return trimmed.split_whitespace().nth(4);
    }
    None
}

/// Whether the Rules panel has rulesets to show.
pub(crate) fn rules_available(report: &Report) -> bool {
    report.rules.is_some()
}

/// The first live Service's ClusterIP and port: what the Trace form suggests.
pub(crate) fn suggestion(report: &Report) -> (String, String) {
    report
        .services
        .iter()
        .find(|s| !s.cluster_ips.is_empty() && s.outcome != "rejected" && s.outcome != "deleted")
        .map(|s| {
            (
                s.cluster_ips[0].clone(),
                s.ports.first().map(|p| p.port.to_string()).unwrap_or_default(),
            )
        })
        .unwrap_or_default()
}

/// Walks a packet through the iptables rules kube-proxy would program on `node` (empty: the
/// scenario's default node). An empty destination or port takes the suggestion.
pub(crate) fn trace(
    world: &World,
    report: &Report,
    packet: &SharedTrace,
    node: &str,
) -> TraceOutcome {
    let (suggested_dst, suggested_port) = suggestion(report);
    let dst =
        if packet.dst.trim().is_empty() { suggested_dst } else { packet.dst.trim().to_owned() };
    let port =
        if packet.port.trim().is_empty() { suggested_port } else { packet.port.trim().to_owned() };
    if dst.is_empty() {
        return TraceOutcome::Invalid(
            "Give a destination address (the scenario has no Service with a ClusterIP).".into(),
        );
    }
    let Ok(dport) = port.parse::<u16>() else {
        return TraceOutcome::Invalid(format!(
            "The port {port:?} is not a number between 1 and 65535."
        ));
    };
    let request = TraceRequest {
        src: packet.src.trim().to_owned(),
        dst,
        dport,
        protocol: packet.protocol.to_ascii_lowercase(),
        node: (!node.is_empty()).then(|| node.to_owned()),
        in_interface: None,
    };
    TraceOutcome::Walk(svclab_core::trace(world, &request))
}
