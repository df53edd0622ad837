//! "Export as test": a suite for a scenario whose expectations are what svclab answers for it
//! now, so the suite passes as written and fails when a change makes the cluster answer
//! otherwise. The playground offers it; any host can call it.
//!
//! The values are written by the same code that compares them (the suite is written, then run
//! with `update`), so the export cannot disagree with `svclab test` about its own answers.

use std::fmt::Write as _;

use crate::manifest::{self, Input};
use crate::proxy::{ProxyMode, RenderOptions};
use crate::trace::TraceRequest;
use crate::world::{self, World};

use super::answers::Answers;
use super::update::scalar;
use super::{SUITE_SUFFIX, TestOptions};

/// What [`export_test`] writes besides the objects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// The suite's `metadata.name` (`playground` when empty).
    pub name: String,
    /// A packet whose endpoints (or verdict) the suite should keep.
    pub trace: Option<TraceRequest>,
    /// The ruleset whose Service entries the suite should keep (`None`: no rules expectation).
    pub proxy_mode: Option<ProxyMode>,
}

/// Why [`export_test`] wrote no suite.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportError {
    /// The scenario holds no object, so a test of it would check nothing (which `svclab test`
    /// reports as an error, never as a pass).
    NoObjects,
}

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExportError::NoObjects => {
                write!(f, "the scenario holds no object, so a test of it would check nothing")
            }
        }
    }
}

impl std::error::Error for ExportError {}

/// A `TestSuite` for `scenario` (its text inline, as `resources`), with one test expecting
/// every Service's (and every other object's with messages) outcome, addresses, band, node
/// ports, errors, warnings and policy violations, the Service entries of the ruleset and the
/// packet's endpoints or verdict, as svclab answers them now. A scenario without Services
/// expects every object; one without objects is [`ExportError::NoObjects`].
///
/// ```
/// use svclab_core::{ExportError, ExportOptions, Input, TestOptions, export_test, run_tests};
/// let scenario = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 0}]}\n";
/// let suite = export_test(&Input::new("-", scenario), &ExportOptions::default()).unwrap();
/// assert!(suite.contains("outcome: rejected"));
/// let run = run_tests(&[Input::new("p.svclab-test.yaml", suite)], &[], &TestOptions::default());
/// assert!(run.success());
/// let empty = export_test(&Input::new("-", "# nothing yet\n"), &ExportOptions::default());
/// assert_eq!(empty, Err(ExportError::NoObjects));
/// ```
pub fn export_test(scenario: &Input, options: &ExportOptions) -> Result<String, ExportError> {
    let name = if options.name.trim().is_empty() { "playground" } else { options.name.trim() };
    let file = format!("{name}{SUITE_SUFFIX}");
    let mut out = String::new();
    let _ =
        writeln!(out, "# Exported by svclab: the expectations are what svclab answered for this");
    let _ = writeln!(out, "# scenario. Run it with `svclab test {file}`.");
    let _ = writeln!(out, "apiVersion: svclab.dev/v1alpha1");
    let _ = writeln!(out, "kind: TestSuite");
    let _ = writeln!(out, "metadata:\n  name: {}", scalar(&serde_json::Value::from(name)));
    // `|2`: the indentation is given, so a scenario whose first line is indented stays whole.
    out.push_str("resources: |2\n");
    for line in scenario.text.lines() {
        if line.trim().is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "  {line}");
        }
    }
    let _ = writeln!(out, "tests:\n- name: the scenario as exported\n  expect:");
    // The answers, from the scenario as the suite will hold it.
    let skeleton = format!("{out}    objects: []\n");
    let inputs: Vec<Input> = match super::tree::parse(&skeleton) {
        Ok(roots) => super::format::suites(&file, &skeleton, &roots)
            .first()
            .map(|suite| {
                suite.resources.iter().map(|p| Input::new(file.clone(), p.text.clone())).collect()
            })
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    let (world, report) =
        crate::pipeline::evaluate(&inputs, &crate::pipeline::CheckOptions::default());
    let objects = manifest::parse(&inputs).objects;
    let answers = Answers::new(&objects, &report);
    let targets = answers.targets();
    if targets.is_empty() {
        return Err(ExportError::NoObjects);
    }
    // Objects of other kinds without a message say little; they are kept only when the
    // scenario has no Service, so that the test still checks something.
    let keep_quiet = !targets.iter().any(|target| target.kind == "Service");
    let mut expectations = String::new();
    for target in targets {
        let Some(answer) = answers.object(&target) else { continue };
        let quiet =
            answer.errors.is_empty() && answer.warnings.is_empty() && answer.violations.is_empty();
        if target.kind != "Service" && quiet && !keep_quiet {
            continue;
        }
        let reference = target.to_string();
        // A ref reads back plain when it holds only name characters (its space is safe in
        // block context, where it is written).
        let plain = reference.chars().all(|c| c.is_ascii_alphanumeric() || " ./-".contains(c));
        let reference =
            if plain { reference } else { scalar(&serde_json::Value::from(reference.as_str())) };
        let _ = writeln!(expectations, "    - ref: {reference}");
        let _ = writeln!(expectations, "      outcome: {}", answer.outcome);
        if let Some(service) = &answer.service {
            let _ = writeln!(expectations, "      clusterIPs: {}", list(&service.cluster_ips));
            let mut bands: Vec<&str> =
                service.allocations.iter().map(|a| a.band.as_str()).collect();
            bands.dedup();
            if let [band] = bands.as_slice() {
                let _ = writeln!(expectations, "      band: {band}");
            }
            let ports: Vec<String> = service
                .ports
                .iter()
                .filter(|p| p.node_port != 0)
                .map(|p| p.node_port.to_string())
                .collect();
            let _ = writeln!(expectations, "      nodePorts: [{}]", ports.join(", "));
        }
        let _ = writeln!(expectations, "      errors: {}", list(&answer.errors));
        let _ = writeln!(expectations, "      warnings: {}", list(&answer.warnings));
        let _ = writeln!(expectations, "      violations: {}", list(&answer.violations));
    }
    if !expectations.is_empty() {
        out.push_str("    objects:\n");
        out.push_str(&expectations);
    }
    if let Some(mode) = options.proxy_mode {
        let ruleset = world::render(&world, &RenderOptions::new(mode)).unwrap_or_default();
        let entries: Vec<&str> = ruleset.lines().filter(|line| service_entry(line, mode)).collect();
        if !entries.is_empty() {
            let _ =
                writeln!(out, "    rules:\n      proxyMode: {}\n      includes:", mode_name(mode));
            for line in entries {
                let _ = writeln!(out, "      - {}", scalar(&serde_json::Value::from(line)));
            }
        }
    }
    if let Some((trace, ends)) = options.trace.as_ref().and_then(|t| trace_ends(&world, t)) {
        let _ = writeln!(out, "    traces:");
        let _ =
            writeln!(out, "    - src: {}", scalar(&serde_json::Value::from(trace.src.as_str())));
        let _ =
            writeln!(out, "      dst: {}", scalar(&serde_json::Value::from(trace.dst.as_str())));
        let _ = writeln!(out, "      dport: {}", trace.dport);
        let _ = writeln!(out, "      protocol: {}", trace.protocol.to_lowercase());
        if let Some(node) = &trace.node {
            let _ =
                writeln!(out, "      node: {}", scalar(&serde_json::Value::from(node.as_str())));
        }
        if let Some(interface) = &trace.in_interface {
            let interface = scalar(&serde_json::Value::from(interface.as_str()));
            let _ = writeln!(out, "      inInterface: {interface}");
        }
        match ends {
            // The update below fills in the set.
            TraceEnds::Endpoints => {
                let _ = writeln!(out, "      endpoints: []");
            }
            TraceEnds::Verdict(verdict) => {
                let _ = writeln!(out, "      verdict: {verdict}");
            }
        }
    }
    // Written by the comparison itself: whatever the lines above got wrong, the update fixes.
    let run = super::run_tests(
        &[Input::new(file.clone(), out.clone())],
        &[],
        &TestOptions { update: true },
    );
    Ok(run.updated.into_iter().find(|u| u.name == file).map_or(out, |u| u.text.as_str().to_owned()))
}

/// Where a traced packet ends, as a suite can expect it.
enum TraceEnds {
    /// At one or more endpoints (the set is filled in by the update).
    Endpoints,
    /// With one verdict, the same on every path.
    Verdict(String),
}

/// How the exported trace ends; `None` when a suite could not expect it (no outcome, as when
/// the request names a node that is not in the scenario, or several verdicts without an
/// endpoint), so the export leaves the packet out rather than write a failing test.
fn trace_ends<'r>(world: &World, trace: &'r TraceRequest) -> Option<(&'r TraceRequest, TraceEnds)> {
    let report = world::trace(world, trace);
    if report.outcomes.iter().any(|o| o.verdict == "endpoint") {
        return Some((trace, TraceEnds::Endpoints));
    }
    let mut verdicts: Vec<&str> = Vec::new();
    for outcome in &report.outcomes {
        let verdict =
            if outcome.verdict == "no service" { "no-service" } else { outcome.verdict.as_str() };
        if !verdicts.contains(&verdict) {
            verdicts.push(verdict);
        }
    }
    match verdicts.as_slice() {
        [verdict] if super::format::VERDICTS.contains(verdict) => {
            Some((trace, TraceEnds::Verdict((*verdict).to_owned())))
        }
        _ => None,
    }
}

fn list(values: &[String]) -> String {
    let items: Vec<String> =
        values.iter().map(|v| scalar(&serde_json::Value::from(v.as_str()))).collect();
    format!("[{}]", items.join(", "))
}

fn mode_name(mode: ProxyMode) -> &'static str {
    match mode {
        ProxyMode::Iptables => "iptables",
        ProxyMode::Nftables => "nftables",
    }
}

/// A ruleset line that sends one Service's traffic on (its entry in `KUBE-SERVICES`, or its
/// element of nftables' `service-ips` map).
fn service_entry(line: &str, mode: ProxyMode) -> bool {
    match mode {
        ProxyMode::Iptables => line.starts_with("-A KUBE-SERVICES ") && line.contains("cluster IP"),
        ProxyMode::Nftables => {
            line.starts_with("add element ip kube-proxy service-ips ")
                || line.starts_with("add element ip6 kube-proxy service-ips ")
        }
    }
}
