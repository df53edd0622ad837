//! Sending a case's probes from their namespaces through the agent, and judging what each did
//! against what it must do.

use std::fmt::Write as _;
use std::net::IpAddr;
use std::path::Path;

use super::{CaseDef, describe_expect};
use crate::case::{Expect, Family, Observed, Probe, Role, Verdict};
use crate::netns;
use crate::topology::Topology;

/// Connect timeout of one attempt; a dropped SYN shows up as a timeout after this long.
const ATTEMPT_TIMEOUT_MS: &str = "1000";
/// The same for the differential run's light probes (many probes, each expected drop waits
/// this long once): the namespaces are on one host, an answer takes well under a millisecond.
const LIGHT_ATTEMPT_TIMEOUT_MS: &str = "500";
/// Light probes run side by side at most this many at a time (expected refusals and drops).
const PARALLEL_PROBES: usize = 16;
/// IPv6: a REJECT's ICMPv6 port-unreachable for the first SYN does not end a TCP connect
/// (measured on Linux 6.18, in these namespaces, with and without the topology: the connect is
/// refused when the SYN retransmitted after 1 s is rejected), so a refusal takes just over a
/// second.
const IPV6_ATTEMPT_TIMEOUT_MS: &str = "1400";

/// Runs every probe from its namespace through the agent; the agent's output of each, in
/// order. A light case runs its expected refusals and drops side by side first (they mostly
/// wait for timeouts and touch no affinity state), then the rest one after the other.
pub(super) fn run_probes(
    case: &CaseDef,
    topo: &Topology,
    exe: &Path,
    probes: &[Probe],
) -> Result<Vec<String>, String> {
    let timeout = match (case.family, case.light) {
        (Family::V6, _) => IPV6_ATTEMPT_TIMEOUT_MS,
        (Family::V4, true) => LIGHT_ATTEMPT_TIMEOUT_MS,
        (Family::V4, false) => ATTEMPT_TIMEOUT_MS,
    };
    let mut commands = probes
        .iter()
        .map(|probe| probe_command(topo, exe, probe, timeout))
        .collect::<Result<Vec<_>, _>>()?;
    let done = if case.light {
        run_negatives_side_by_side(probes, &mut commands)?
    } else {
        vec![None; probes.len()]
    };
    commands
        .iter_mut()
        .zip(done)
        .map(|(cmd, done)| match done {
            Some(output) => Ok(output),
            None => netns::run(cmd),
        })
        .collect()
}

/// The agent's command for one probe, in the namespace of its source.
fn probe_command(
    topo: &Topology,
    exe: &Path,
    probe: &Probe,
    timeout: &str,
) -> Result<std::process::Command, String> {
    let ns = match probe.role {
        Role::Node => Some(&topo.node),
        _ => topo.leaf(probe.src),
    };
    let Some(ns) = ns else { return Err(format!("no namespace for {}", probe.src)) };
    let mut cmd = ns.command(exe);
    cmd.args([
        crate::agent::AGENT_ARG,
        "probe",
        &probe.dst.to_string(),
        &probe.count().to_string(),
        timeout,
        if probe.udp { "udp" } else { "tcp" },
    ]);
    Ok(cmd)
}

/// Runs the probes expected not to land, `PARALLEL_PROBES` at a time; their outputs, `None`
/// for the others.
fn run_negatives_side_by_side(
    probes: &[Probe],
    commands: &mut [std::process::Command],
) -> Result<Vec<Option<String>>, String> {
    let mut outputs: Vec<Option<String>> = vec![None; probes.len()];
    let negative: Vec<usize> =
        (0..probes.len()).filter(|i| !matches!(probes[*i].expect, Expect::Land { .. })).collect();
    for window in negative.chunks(PARALLEL_PROBES) {
        let mut children = Vec::new();
        for i in window {
            let child = commands[*i]
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|err| format!("cannot run a probe: {err}"))?;
            children.push((*i, child));
        }
        for (i, child) in children {
            let out = child.wait_with_output().map_err(|err| format!("probe: {err}"))?;
            if !out.status.success() {
                return Err(format!(
                    "probe {} failed: {}",
                    probes[i].what,
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            outputs[i] = Some(String::from_utf8_lossy(&out.stdout).into_owned());
        }
    }
    Ok(outputs)
}

/// What the probes did, judged against what they should have done.
pub(super) struct Judged {
    /// One line per probe (a light case: per failing probe).
    pub(super) lines: String,
    pub(super) failures: Vec<String>,
    pub(super) verdicts: Vec<Verdict>,
    /// Connections made by all probes.
    pub(super) total: u32,
}

pub(super) fn judge(
    case: &CaseDef,
    probes: &[Probe],
    outputs: &[String],
    node_ip: IpAddr,
) -> Judged {
    let mut judged =
        Judged { lines: String::new(), failures: Vec::new(), verdicts: Vec::new(), total: 0 };
    for (probe, output) in probes.iter().zip(outputs) {
        let observed = Observed::parse(output);
        judged.total += observed.total;
        let verdict = observed.check(probe, node_ip);
        judged.verdicts.push(observed.verdict(probe.src));
        // A light (differential) case lists its failing probes only.
        let _ = (!case.light || verdict.is_err()).then(|| {
            write!(
                judged.lines,
                "\n  {:<4} {} from {} ({}) -> {}: expect {}; {}",
                if verdict.is_ok() { "ok" } else { "FAIL" },
                probe.what,
                probe.role.as_str(),
                probe.src,
                probe.dst,
                describe_expect(&probe.expect),
                observed.describe(&probe.expect)
            )
        });
        if let Err(err) = verdict {
            judged.failures.push(format!(
                "{} from {} -> {}: {err}",
                probe.what,
                probe.role.as_str(),
                probe.dst
            ));
        }
    }
    judged
}
