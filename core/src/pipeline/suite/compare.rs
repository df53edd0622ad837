//! Each expectation of a test against what svclab answered: the objects' outcomes, addresses,
//! bands, ports and messages, the ruleset's lines, the packets' endpoints and verdicts.
//!
//! A value is compared exactly (lists in order, except a trace's endpoints, which are a set);
//! whatever does not hold is a miss with the value svclab gave instead, which `--update`
//! writes in its place.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::proxy::{ProxyMode, RenderOptions};
use crate::trace::TraceReport;
use crate::world::{self, World};

use super::answers::Answers;
use super::format::{At, Field, ObjectExpect, Problem, RulesExpect, Test, TraceExpect};

/// An expectation that did not hold.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Miss {
    pub(crate) at: At,
    pub(crate) want: Json,
    pub(crate) got: Json,
    pub(crate) diff: Option<String>,
    pub(crate) note: Option<String>,
    /// What `--update` writes in place of the value (`None`: nothing it could write holds).
    pub(crate) fix: Option<Json>,
}

/// What comparing one test found.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    pub(crate) misses: Vec<Miss>,
    pub(crate) problems: Vec<Problem>,
    /// Golden files that could not be read: errors too, but `--update` writes them, so they
    /// keep no other value from being rewritten.
    pub(crate) missing_goldens: Vec<Problem>,
    /// Golden rulesets to (re)write with `--update`: file and text.
    pub(crate) goldens: Vec<(String, String)>,
}

/// Compares every expectation of `test`. `files` are the files the host read for the suites
/// (golden rulesets among them).
pub(crate) fn test(
    test: &Test,
    answers: &Answers<'_>,
    world: &World,
    files: &BTreeMap<String, String>,
) -> Findings {
    let mut findings = Findings::default();
    for object in &test.objects {
        compare_object(object, answers, &mut findings);
    }
    if let Some(rules) = &test.rules {
        compare_rules(rules, world, files, &mut findings);
    }
    for trace in &test.traces {
        compare_trace(trace, world, &mut findings);
    }
    findings
}

fn compare_object(expect: &ObjectExpect, answers: &Answers<'_>, findings: &mut Findings) {
    let Some(answer) = answers.object(&expect.target) else {
        findings.problems.push(Problem {
            pos: expect.ref_pos,
            message: format!(
                "{}.ref: `{}` names no object in the scenario",
                expect.path, expect.target
            ),
        });
        return;
    };
    let misses = &mut findings.misses;
    same(&expect.outcome, Json::from(answer.outcome.as_str()), misses);
    if let Some(service) = &answer.service {
        same(&expect.cluster_ips, strings(&service.cluster_ips), misses);
        let mut bands: Vec<&str> = Vec::new();
        for allocation in &service.allocations {
            if !bands.contains(&allocation.band.as_str()) {
                bands.push(&allocation.band);
            }
        }
        let band = match bands.as_slice() {
            [] => Json::Null,
            [one] => Json::from(*one),
            many => Json::from(many.to_vec()),
        };
        same(&expect.band, band, misses);
        let node_ports: Vec<u32> =
            service.ports.iter().map(|p| p.node_port).filter(|p| *p != 0).collect();
        same(&expect.node_ports, Json::from(node_ports), misses);
        same(&expect.ip_families, strings(&service.ip_families), misses);
        same(&expect.ip_family_policy, Json::from(service.ip_family_policy.as_str()), misses);
    } else {
        // A Service whose document svclab could not read has no report of its own.
        for at in [
            expect.cluster_ips.as_ref().map(|f| &f.at),
            expect.band.as_ref().map(|f| &f.at),
            expect.node_ports.as_ref().map(|f| &f.at),
            expect.ip_families.as_ref().map(|f| &f.at),
            expect.ip_family_policy.as_ref().map(|f| &f.at),
        ]
        .into_iter()
        .flatten()
        {
            misses.push(Miss {
                at: at.clone(),
                want: Json::from("a value"),
                got: Json::Null,
                diff: None,
                note: Some(format!("svclab reports no Service for {}", expect.target)),
                fix: None,
            });
        }
    }
    same(&expect.errors, strings(&answer.errors), misses);
    same(&expect.warnings, strings(&answer.warnings), misses);
    same(&expect.violations, strings(&answer.violations), misses);
}

fn strings(values: &[String]) -> Json {
    Json::from(values.iter().map(String::as_str).collect::<Vec<_>>())
}

/// A miss unless the expected value is the answer.
fn same<T>(expected: &Option<Field<T>>, got: Json, misses: &mut Vec<Miss>)
where
    T: Clone + Into<Json>,
{
    let Some(field) = expected else { return };
    let want: Json = field.value.clone().into();
    if want != got {
        let fix = match &got {
            // Only a value the key can hold is written back.
            Json::Null => None,
            Json::Array(items) if !want.is_array() && !items.is_empty() => None,
            other => Some(other.clone()),
        };
        misses.push(Miss { at: field.at.clone(), want, got, diff: None, note: None, fix });
    }
}

/// The scenario's kube-proxy mode: its KubeProxyConfiguration's, else iptables (kube-proxy's
/// default on Linux).
pub(crate) fn configured_mode(world: &World) -> ProxyMode {
    match world.kube_proxy.as_ref().map(|k| k.value.mode.as_str()) {
        Some("nftables") => ProxyMode::Nftables,
        _ => ProxyMode::Iptables,
    }
}

fn compare_rules(
    expect: &RulesExpect,
    world: &World,
    files: &BTreeMap<String, String>,
    findings: &mut Findings,
) {
    let options = RenderOptions {
        family: expect.family,
        node: expect.node.clone(),
        ..RenderOptions::new(expect.mode.unwrap_or_else(|| configured_mode(world)))
    };
    let ruleset = match world::render(world, &options) {
        Ok(text) => text,
        Err(err) => {
            findings.misses.push(Miss {
                at: At {
                    path: expect.path.clone(),
                    pos: expect.pos,
                    span: 0..0,
                    key_end: None,
                    block_indent: None,
                },
                want: Json::from("a ruleset"),
                got: Json::Null,
                diff: None,
                note: Some(format!("kube-proxy writes no rules: {err}")),
                fix: None,
            });
            return;
        }
    };
    let lines: Vec<&str> = ruleset.lines().collect();
    for include in &expect.includes {
        if lines.contains(&include.value.as_str()) {
            continue;
        }
        let closest = closest_line(&include.value, &lines);
        findings.misses.push(Miss {
            at: include.at.clone(),
            want: Json::from(include.value.as_str()),
            got: closest.map_or(Json::Null, Json::from),
            diff: None,
            note: Some(match closest {
                Some(_) => "no such line; `+` is the closest line of the same chain".to_owned(),
                None => "no such line".to_owned(),
            }),
            fix: closest.map(Json::from),
        });
    }
    for exclude in &expect.excludes {
        if lines.contains(&exclude.value.as_str()) {
            findings.misses.push(Miss {
                at: exclude.at.clone(),
                want: Json::Null,
                got: Json::from(exclude.value.as_str()),
                diff: None,
                note: Some("the line must not be in the ruleset".to_owned()),
                fix: None,
            });
        }
    }
    if let Some(golden) = &expect.golden {
        let path = &golden.value.path;
        match files.get(path) {
            Some(text) if *text == ruleset => {}
            Some(text) => {
                let (want, got) = first_difference(text, &ruleset);
                findings.misses.push(Miss {
                    at: golden.at.clone(),
                    want: Json::from(want),
                    got: Json::from(got),
                    diff: Some(format!("--- {path}\n+++ rendered\n{}", unified(text, &ruleset, 3))),
                    note: None,
                    fix: None,
                });
                findings.goldens.push((path.clone(), ruleset.clone()));
            }
            None => {
                findings.missing_goldens.push(Problem {
                    pos: golden.at.pos,
                    message: format!(
                        "{}: cannot read the golden file `{path}` (`svclab test --update` writes it)",
                        golden.at.path
                    ),
                });
                findings.goldens.push((path.clone(), ruleset.clone()));
            }
        }
    }
}

/// The ruleset line most like a missing one: of the lines that share its first two words (the
/// chain it appends to), the one with the longest common prefix.
fn closest_line<'l>(wanted: &str, lines: &[&'l str]) -> Option<&'l str> {
    let head: Vec<&str> = wanted.split_whitespace().take(2).collect();
    lines
        .iter()
        .filter(|line| line.split_whitespace().take(2).eq(head.iter().copied()))
        .max_by_key(|line| {
            let common = line.bytes().zip(wanted.bytes()).take_while(|(a, b)| a == b).count();
            (common, std::cmp::Reverse(line.len().abs_diff(wanted.len())))
        })
        .copied()
}

/// The first line where two texts differ (`(end)` past the last line).
fn first_difference(want: &str, got: &str) -> (String, String) {
    let mut want_lines = want.lines();
    let mut got_lines = got.lines();
    loop {
        match (want_lines.next(), got_lines.next()) {
            (Some(w), Some(g)) if w == g => {}
            (None, None) => return ("(end)".to_owned(), "(end of line ends)".to_owned()),
            (w, g) => return (w.unwrap_or("(end)").to_owned(), g.unwrap_or("(end)").to_owned()),
        }
    }
}

/// A unified diff of two texts with `context` lines around each change (no line numbers: a
/// reader compares it with the golden file, and `--update` rewrites it).
fn unified(want: &str, got: &str, context: usize) -> String {
    let want: Vec<&str> = want.lines().collect();
    let got: Vec<&str> = got.lines().collect();
    // Trim what both share at the ends, so the table below covers only the changed middle.
    let prefix = want.iter().zip(&got).take_while(|(a, b)| a == b).count();
    let suffix = want[prefix..]
        .iter()
        .rev()
        .zip(got[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (w, g) = (&want[prefix..want.len() - suffix], &got[prefix..got.len() - suffix]);
    let mut out = String::new();
    for line in &want[prefix.saturating_sub(context)..prefix] {
        out.push_str(&format!(" {line}\n"));
    }
    // The middle as removals then additions when it is large; an LCS when it is small.
    if w.len() * g.len() > 1_000_000 {
        for line in w {
            out.push_str(&format!("-{line}\n"));
        }
        for line in g {
            out.push_str(&format!("+{line}\n"));
        }
    } else {
        let (n, m) = (w.len(), g.len());
        let mut lcs = vec![vec![0u32; m + 1]; n + 1];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i][j] = if w[i] == g[j] {
                    lcs[i + 1][j + 1] + 1
                } else {
                    lcs[i + 1][j].max(lcs[i][j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && w[i] == g[j] {
                out.push_str(&format!(" {}\n", w[i]));
                i += 1;
                j += 1;
            } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
                out.push_str(&format!("-{}\n", w[i]));
                i += 1;
            } else {
                out.push_str(&format!("+{}\n", g[j]));
                j += 1;
            }
        }
    }
    let tail = want.len() - suffix;
    for line in &want[tail..(tail + context).min(want.len())] {
        out.push_str(&format!(" {line}\n"));
    }
    out
}

fn compare_trace(expect: &TraceExpect, world: &World, findings: &mut Findings) {
    let report: TraceReport = world::trace_mode(world, &expect.request, expect.mode);
    let note = (!report.warnings.is_empty()).then(|| report.warnings.join("; "));
    if let Some(endpoints) = &expect.endpoints {
        let mut got: Vec<&str> = report
            .outcomes
            .iter()
            .filter(|o| o.verdict == "endpoint")
            .filter_map(|o| o.endpoint.as_deref())
            .collect();
        got.sort_unstable();
        got.dedup();
        let mut want: Vec<&str> = endpoints.value.iter().map(String::as_str).collect();
        want.sort_unstable();
        want.dedup();
        if want != got {
            findings.misses.push(Miss {
                at: endpoints.at.clone(),
                want: Json::from(want),
                got: Json::from(got.clone()),
                diff: None,
                note: note.clone(),
                fix: Some(Json::from(got)),
            });
        }
    }
    if let Some(verdict) = &expect.verdict {
        let mut verdicts: Vec<&str> = Vec::new();
        for outcome in &report.outcomes {
            let v = if outcome.verdict == "no service" { "no-service" } else { &outcome.verdict };
            if !verdicts.contains(&v) {
                verdicts.push(v);
            }
        }
        let got = match verdicts.as_slice() {
            [] => Json::Null,
            [one] => Json::from(*one),
            many => Json::from(many.to_vec()),
        };
        if got != verdict.value.as_str() {
            let fix = got.is_string().then(|| got.clone());
            findings.misses.push(Miss {
                at: verdict.at.clone(),
                want: Json::from(verdict.value.as_str()),
                got,
                diff: None,
                note,
                fix,
            });
        }
    }
}
