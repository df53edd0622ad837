//! `svclab upgrade`'s apiserver findings against upstream: a scenario replayed into an empty
//! cluster at each of two releases by the apiserver oracle (kube-apiserver's own REST storage
//! of each release), and the documents whose answers differ between the two, against the
//! documents `svclab upgrade` reports a fresh-create finding about (its `apiserver` area, "… a
//! fresh create …"). Both releases' upstream answers, not only svclab's, must show each
//! difference the rehearsal reports, and the rehearsal must report each one they show.
//!
//! An answer is whether it was accepted, its errors as [`crate::apiserver`] compares them with
//! their values masked (a dual-stack pick's failing family is Go's map order per run), and its
//! warnings; the addresses and ports an accepted Service holds are left out, as the
//! rehearsal's own comparison leaves them (its `allocation` area covers them).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use svclab_core::{Area, Input, UpgradeOptions, Version};

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
