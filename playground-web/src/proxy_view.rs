//! The playground's view of kube-proxy: rulesets for the Rules panel (`svclab_core::render`)
//! and packet walks for the Trace panel (`svclab_core::trace`).

use svclab_core::{Report, TraceReport, TraceRequest, World};

use crate::share::SharedTrace;

/// The result of a trace.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TraceOutcome {
    /// The packet could not be traced (bad address or port, unknown node...).
    Invalid(String),
    /// The walk: every possible fate of the packet with its probability.
    Walk(TraceReport),
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
