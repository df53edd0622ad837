//! The playground's view of kube-proxy: rulesets for the Rules panel and packet walks for the
//! Trace panel, taken from the core's proxy and trace modules.

use svclab_core::{Report, World};

use crate::share::SharedTrace;

/// One rule a packet matched.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TraceStep {
    /// Table / chain (iptables) or chain (nftables).
    pub(crate) chain: String,
    /// The rule text.
    pub(crate) rule: String,
    /// What happened (jump, DNAT choice with probability, masquerade...).
    pub(crate) note: String,
}

/// The result of a trace.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TraceOutcome {
    /// The core has no packet tracer in this build.
    Unavailable,
    /// The packet could not be traced (bad address, ...).
    Invalid(String),
    /// The walk and its verdict.
    Walk {
        /// Mode the ruleset was rendered in.
        mode: String,
        /// Matched rules in order.
        steps: Vec<TraceStep>,
        /// Final verdict (`DNAT to 10.244.1.5:8080`, `DROP`, ...).
        verdict: String,
    },
}

/// Whether the core renders kube-proxy rules in this build.
pub(crate) fn rules_available(report: &Report) -> bool {
    report.rules.is_some()
}

/// Fills what the pipeline does not yet put into the report.
pub(crate) fn complete_report(world: &World, report: &mut Report) {
    let _ = (world, report);
}

/// Walks a packet through the ruleset kube-proxy would program on `node` in `mode`.
pub(crate) fn trace(world: &World, report: &Report, packet: &SharedTrace, mode: &str, node: &str) -> TraceOutcome {
    let _ = (world, report, packet, mode, node);
    TraceOutcome::Unavailable
}
