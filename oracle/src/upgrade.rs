//! `svclab upgrade`'s findings against upstream, for the areas an oracle answers:
//!
//! - apiserver: a scenario replayed into an empty cluster at each of two releases by the
//!   apiserver oracle (kube-apiserver's own REST storage of each release), and the documents
//!   whose answers differ between the two, against the documents `svclab upgrade` reports a
//!   fresh-create finding about (its `apiserver` area, "… a fresh create …");
//! - kubeProxy: a kube-proxy case rendered by kube-proxy's own code of each release, and whether
//!   the rules differ, against whether the rehearsal reports a kube-proxy finding on that node
//!   and family ([`compare_proxy`]).
//!
//! Both releases' upstream answers, not only svclab's, must show each difference the rehearsal
//! reports, and the rehearsal must report each one they show.
//!
//! An apiserver answer is whether it was accepted, its errors as [`crate::apiserver`] compares
//! them with their values masked (a dual-stack pick's failing family is Go's map order per
//! run), and its warnings; the addresses and ports an accepted Service holds are left out, as
//! the rehearsal's own comparison leaves them (its `allocation` area covers them).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use svclab_core::{Area, Input, ProxyMode, UpgradeOptions, Version};
use svclab_scenario_gen::variety::ProxyRun;

use crate::apiserver::{
    Answer, comparable, mask_generated, scenario_text, unnamed_pick, upstream_answers,
};
use crate::divergence::{Divergence, DivergenceKind, mask};

/// What of an answer a release change may show: accepted or not (a create that became an
/// update because an earlier document is now accepted is the earlier document's finding), the
/// errors as the apiserver area compares them (uids, storage keys and Go map order masked),
/// the warnings.
fn signature(answer: &Answer, object: Option<&Value>) -> (bool, Vec<String>, Vec<String>) {
    let accepted = answer.outcome != "rejected";
    // The five characters generateName draws are random upstream, per run.
    let prefix = object.and_then(|o| o["metadata"]["generateName"].as_str()).unwrap_or("");
    let errors: Vec<String> = if prefix.is_empty() {
        answer.errors.clone()
    } else {
        answer.errors.iter().map(|e| mask_generated(e, prefix)).collect()
    };
    // Values are masked: which family of a dual-stack pick fails first, and so the address a
    // refusal names, is Go's map order in each run (see `apiserver::compare_upstream`).
    let errors = comparable(&errors).iter().map(|e| mask(&unnamed_pick(e))).collect();
    (accepted, errors, answer.warnings.clone())
}

/// Why a case is not compared: a feature gate one of the two releases refuses (kube-apiserver
/// would not start; the rehearsal reports that in its `featureGates` area instead).
pub fn not_comparable(line_from: &Value, line_to: &Value) -> Option<&'static str> {
    let refused = |line: &Value| !upstream_answers(line).0.is_empty();
    (refused(line_from) || refused(line_to)).then_some("a feature gate refused at one release")
}

/// The documents whose upstream answers differ between `line_from` and `line_to` (the oracle's
/// output for `objects` at each release), against the documents `svclab upgrade --to to`
/// reports a fresh-create apiserver finding about: the divergences, and how many documents
/// upstream answers differently (how much the case checked).
pub fn compare(
    id: &str,
    objects: &[Value],
    to: Version,
    line_from: &Value,
    line_to: &Value,
) -> (Vec<Divergence>, usize) {
    let (_, from_answers, _) = upstream_answers(line_from);
    let (_, to_answers, _) = upstream_answers(line_to);
    // Per object (the rehearsal reports an object once for the same message, however many
    // documents write it): the documents upstream answers differently, by object.
    let mut upstream: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut documents = 0;
    for (index, before) in &from_answers {
        let Some(after) = to_answers.get(index) else { continue };
        if signature(before, objects.get(*index)) != signature(after, objects.get(*index)) {
            documents += 1;
            let side = |a: &Answer| json!({"outcome": a.outcome, "errors": a.errors, "warnings": a.warnings});
            upstream
                .entry(identity(objects, *index))
                .or_default()
                .push(json!({"document": index, "from": side(before), "to": side(after)}));
        }
    }
    let input = Input::new("case.yaml", scenario_text(objects));
    let report = match svclab_core::upgrade(&[input], &UpgradeOptions::new(to)) {
        Ok(report) => report,
        Err(err) => {
            let harness = Divergence {
                case: id.to_owned(),
                index: None,
                object: "case".into(),
                kind: DivergenceKind::Harness,
                svclab: json!(err.to_string()),
                upstream: Value::Null,
            };
            return (vec![harness], documents);
        }
    };
    let mut svclab: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for finding in &report.findings {
        if finding.area != Area::Apiserver || !finding.message.contains("a fresh create") {
            continue;
        }
        if let Some(source) = &finding.source {
            svclab
                .entry(identity(objects, source.document))
                .or_default()
                .push(finding.message.clone());
        }
    }
    let keys: BTreeSet<&String> = upstream.keys().chain(svclab.keys()).collect();
    let divergences = keys
        .into_iter()
        .filter(|key| upstream.contains_key(*key) != svclab.contains_key(*key))
        .map(|key| Divergence {
            case: id.to_owned(),
            index: None,
            object: key.clone(),
            kind: DivergenceKind::Outcome,
            svclab: json!(svclab.get(key).cloned().unwrap_or_default()),
            upstream: json!(upstream.get(key).cloned().unwrap_or_default()),
        })
        .collect();
    (divergences, documents)
}

/// The object a document writes: kind, namespace and name (`generateName*` for a generated
/// one).
fn identity(objects: &[Value], index: usize) -> String {
    let Some(object) = objects.get(index) else { return format!("document {index}") };
    let meta = &object["metadata"];
    let namespace = meta["namespace"].as_str().filter(|n| !n.is_empty()).unwrap_or("default");
    let name = match meta["name"].as_str().filter(|n| !n.is_empty()) {
        Some(name) => name.to_owned(),
        None => format!("{}*", meta["generateName"].as_str().unwrap_or("")),
    };
    format!("{} {namespace}/{name}", object["kind"].as_str().unwrap_or("?"))
}

/// A kube-proxy case as the rehearsal reads it: kube-proxy in the run's mode on the run's node
/// today (its KubeProxyConfiguration's `mode` and `hostnameOverride`, one added where the case
/// has none), at release `from` ([`crate::proxy::at_release`]).
pub fn proxy_objects(objects: &[Value], run: &ProxyRun, from: &str) -> Vec<Value> {
    let mut objects = objects.to_vec();
    if !objects.iter().any(|o| o["kind"] == "KubeProxyConfiguration") {
        objects.push(json!({"apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
                            "kind": "KubeProxyConfiguration"}));
    }
    for object in &mut objects {
        if object["kind"] == "KubeProxyConfiguration" {
            object["mode"] = json!(run.mode);
            object["hostnameOverride"] = json!(run.node);
        }
    }
    crate::proxy::at_release(&objects, from, run)
}

/// The same objects at release `to`: the ClusterProfile's `kubernetesVersion` alone changed, as
/// the rehearsal moves today's cluster.
pub fn proxy_objects_at(objects: &[Value], to: &str) -> Vec<Value> {
    let mut objects = objects.to_vec();
    for object in &mut objects {
        if object["kind"] == "ClusterProfile" {
            object["kubernetesVersion"] = json!(to.trim_start_matches('v'));
        }
    }
    objects
}

/// Why a kube-proxy case is not compared: kube-proxy refuses its configuration at one of the two
/// releases (the rehearsal says so in its own words, a finding that breaks).
pub fn proxy_not_comparable(line_from: &Value, line_to: &Value) -> Option<&'static str> {
    let refused = |line: &Value| line["error"].as_str().is_some_and(|e| !e.is_empty());
    (refused(line_from) || refused(line_to)).then_some("kube-proxy refuses it at one release")
}

/// Whether `svclab upgrade --to to` reports a kube-proxy finding on kube-proxy's own node in the
/// run's family exactly when upstream's rules differ between the two releases. `line_to` is the
/// oracle's answer at `to` for a line carrying svclab's rules at `from`, which the caller has
/// found equal to upstream's there; so both rulesets are normalised by one release's
/// normaliser: `normalized` (upstream at `to`) against `svclabNormalized` (`from`'s). An older
/// release's own nftables transaction does not load into a newer `knftables.Fake` (1.36
/// flushes and deletes the chains of its older layout); svclab's does.
pub fn compare_proxy(
    id: &str,
    objects: &[Value],
    run: &ProxyRun,
    to: Version,
    line_to: &Value,
) -> Option<Divergence> {
    let divergence = |svclab: Value, upstream: Value, kind| Divergence {
        case: id.to_owned(),
        index: None,
        object: format!("{} {} {}", run.mode, run.family, run.node),
        kind,
        svclab,
        upstream,
    };
    if let Some(error) = line_to["svclabNormalizeError"].as_str().filter(|e| !e.is_empty()) {
        return Some(divergence(json!(""), json!(error), DivergenceKind::Harness));
    }
    let before = line_to["svclabNormalized"].as_str().unwrap_or("");
    let after = line_to["normalized"].as_str().unwrap_or("");
    let upstream_changed = before != after;
    let mode = ProxyMode::parse(run.mode);
    let options = UpgradeOptions { proxy_mode: mode, ..UpgradeOptions::new(to) };
    let input = Input::new("case.yaml", scenario_text(objects));
    let report = match svclab_core::upgrade(&[input], &options) {
        Ok(report) => report,
        Err(err) => {
            return Some(divergence(json!(err.to_string()), Value::Null, DivergenceKind::Harness));
        }
    };
    let places = [
        format!("on the node ({})", run.family),
        format!("on kube-proxy's own node ({})", run.family),
    ];
    let found: Vec<&str> = report
        .findings
        .iter()
        .filter(|f| {
            f.area == Area::KubeProxy && places.iter().any(|p| f.message.contains(p.as_str()))
        })
        .map(|f| f.message.as_str())
        .collect();
    if upstream_changed != found.is_empty() {
        return None;
    }
    let upstream = if upstream_changed {
        let (a, b) =
            (before.lines().collect::<BTreeSet<_>>(), after.lines().collect::<BTreeSet<_>>());
        let gone: Vec<&&str> = a.difference(&b).take(3).collect();
        let new: Vec<&&str> = b.difference(&a).take(3).collect();
        json!({"rules differ": {"gone": gone, "new": new}})
    } else {
        json!("the same rules at both releases")
    };
    Some(divergence(json!(found), upstream, DivergenceKind::Rules))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// Which family of a dual-stack pick fails first is Go's map order in each run: the two
    /// refusals are one answer; a refusal of other words is another.
    #[test]
    fn a_dual_stack_refusal_is_one_answer_whichever_family_fails_first() {
        let answer = |error: &str| super::Answer {
            kind: "Service".into(),
            outcome: "rejected".into(),
            errors: vec![error.to_owned()],
            ..super::Answer::default()
        };
        let v4 = "FieldValueInvalid spec.clusterIPs: Invalid value: [\"fd00:10:96::b\",\"\"]: failed to allocate IP: IPAddress.networking.k8s.io \"10.96.1.1\" is invalid: spec.parentRef.name: Required value";
        let v6 = "FieldValueInvalid spec.clusterIPs: Invalid value: [\"fd00:10:96::b\",\"\"]: failed to allocate IP fd00:10:96::b: IPAddress.networking.k8s.io \"fd00:10:96::b\" is invalid: spec.parentRef.name: Required value";
        let object = json!({"kind": "Service"});
        let signature = |e: &str| super::signature(&answer(e), Some(&object));
        assert_eq!(signature(v4), signature(v6));
        assert_ne!(signature(v4), signature(&v4.replace("parentRef.name", "parentRef.resource")));
    }
}
