//! A kube-proxy case: svclab's rules for one mode, family and node, the oracle's input line that
//! carries them (so the oracle normalises both sides with the release's own test normaliser),
//! and the comparison of the two normalised texts (`oracle/proxy/README.md`). A configuration
//! kube-proxy refuses is compared by message: kube-proxy's must appear in svclab's.

use serde_json::{Value, json};
use svclab_core::{CheckOptions, Input, IpFamily, ProxyMode, RenderError, RenderOptions};
use svclab_scenario_gen::variety::ProxyRun;

use crate::apiserver::scenario_text;
use crate::divergence::{Divergence, DivergenceKind};

/// svclab's rules for a run, or kube-proxy's refusal as svclab words it.
pub fn svclab_rules(objects: &[Value], run: &ProxyRun) -> Result<String, String> {
    let input = Input::new("case.yaml", scenario_text(objects));
    let (world, _) = svclab_core::evaluate(&[input], &CheckOptions::WORLD_ONLY);
    let options = RenderOptions {
        mode: if run.mode == "nftables" { ProxyMode::Nftables } else { ProxyMode::Iptables },
        family: Some(if run.family == "IPv6" { IpFamily::V6 } else { IpFamily::V4 }),
        node: Some(run.node.clone()),
        standalone: false,
    };
    svclab_core::render(&world, &options).map_err(|e| match e {
        RenderError::InvalidConfiguration { message, .. } => message,
        other => other.to_string(),
    })
}

/// The objects at `release`: the ClusterProfile's `kubernetesVersion` set to it, and, for
/// nftables where the mode is alpha (1.29 and 1.30), kube-proxy's `NFTablesProxyMode` gate on.
pub fn at_release(objects: &[Value], release: &str, run: &ProxyRun) -> Vec<Value> {
    let version = release.trim_start_matches('v');
    let minor: u32 = version.split('.').nth(1).and_then(|m| m.parse().ok()).unwrap_or(0);
    let mut objects = objects.to_vec();
    for object in &mut objects {
        if object["kind"] == "ClusterProfile" {
            object["kubernetesVersion"] = json!(version);
        }
        if object["kind"] == "KubeProxyConfiguration" && run.mode == "nftables" && minor <= 30 {
            let gates = &mut object["featureGates"];
            if gates.get("NFTablesProxyMode").is_none() {
                gates["NFTablesProxyMode"] = json!(true);
            }
        }
    }
    objects
}

/// The oracle's input line: the run, the objects, and svclab's rules to normalise.
pub fn oracle_case(
    id: &str,
    objects: &[Value],
    run: &ProxyRun,
    svclab: &Result<String, String>,
) -> Value {
    let mut line = json!({"id": id, "mode": run.mode, "ipFamily": run.family, "node": run.node,
                          "objects": objects});
    if let Ok(rules) = svclab {
        line["svclab"] = json!(rules);
    }
    line
}

/// The differences between svclab's rules (or refusal) and the oracle's answer `line`.
pub fn compare(
    id: &str,
    run: &ProxyRun,
    svclab: &Result<String, String>,
    line: &Value,
) -> Vec<Divergence> {
    let object = format!("{} {} {}", run.mode, run.family, run.node);
    let divergence = |svclab: Value, upstream: Value| Divergence {
        case: id.to_owned(),
        index: None,
        object: object.clone(),
        kind: DivergenceKind::Rules,
        svclab,
        upstream,
    };
    let upstream_error = line["error"].as_str().filter(|e| !e.is_empty());
    if line.is_null() {
        return vec![Divergence {
            kind: DivergenceKind::Harness,
            ..divergence(json!(""), json!("(no answer)"))
        }];
    }
    match (svclab, upstream_error) {
        (Err(ours), Some(theirs)) if ours.contains(theirs) => Vec::new(),
        (Err(ours), Some(theirs)) => vec![divergence(json!(ours), json!(theirs))],
        (Err(ours), None) => vec![divergence(json!(ours), json!("(renders)"))],
        (Ok(_), Some(theirs)) => vec![divergence(json!("(renders)"), json!(theirs))],
        (Ok(rules), None) => {
            if let Some(error) = line["svclabNormalizeError"].as_str().filter(|e| !e.is_empty()) {
                return vec![divergence(
                    json!(format!("does not parse: {error}")),
                    json!("(parses)"),
                )];
            }
            let (ours, theirs) = shared_key_comments(
                line["svclabNormalized"].as_str().unwrap_or(""),
                line["normalized"].as_str().unwrap_or(""),
            );
            if ours != theirs {
                return vec![divergence(
                    json!(differing_lines(&ours, &theirs)),
                    json!(differing_lines(&theirs, &ours)),
                )];
            }
            // The same state; an element added twice leaves it as once, but the transaction
            // handed to nft differs: the sorted `add element` lines must agree too.
            if run.mode == "nftables" {
                let elements = |text: &str| {
                    let mut lines: Vec<&str> =
                        text.lines().filter(|l| l.starts_with("add element ")).collect();
                    lines.sort_unstable();
                    lines.join("\n")
                };
                let (ours, theirs) =
                    shared_key_comments(rules, line["rules"].as_str().unwrap_or(""));
                let (ours, theirs) = (elements(&ours), elements(&theirs));
                if ours != theirs {
                    return vec![divergence(
                        json!(differing_lines(&ours, &theirs)),
                        json!(differing_lines(&theirs, &ours)),
                    )];
                }
            }
            Vec::new()
        }
    }
}

/// Both texts with the comment dropped from every `add element` line that the other text has
/// with another comment and otherwise the same. Several Service ports can write one key with
/// one value (two Services without endpoints on one external IP and port): kube-proxy's
/// `nftElementStorage.ensureElem` (pkg/proxy/nftables/proxier.go, 1.31 on) keeps the first
/// writer's comment, and which writer is first is the order it ranges over its service map, a
/// Go map. svclab keeps its own first; the key and value are still compared.
fn shared_key_comments(ours: &str, theirs: &str) -> (String, String) {
    fn uncommented(line: &str) -> Option<String> {
        let rest = line.strip_prefix("add element ")?;
        let start = rest.find(" comment \"")?;
        let end = start + " comment \"".len() + rest[start + " comment \"".len()..].find('"')? + 1;
        Some(format!("add element {}{}", &rest[..start], &rest[end..]))
    }
    let forms = |text: &str| -> std::collections::HashMap<String, Vec<String>> {
        let mut forms: std::collections::HashMap<String, Vec<String>> = Default::default();
        for line in text.lines() {
            if let Some(form) = uncommented(line) {
                forms.entry(form).or_default().push(line.to_owned());
            }
        }
        forms
    };
    let (our_forms, their_forms) = (forms(ours), forms(theirs));
    let align = |text: &str, other: &std::collections::HashMap<String, Vec<String>>| {
        let mut out = String::with_capacity(text.len());
        for line in text.lines() {
            match uncommented(line) {
                Some(form) if other.get(&form).is_some_and(|o| !o.iter().any(|l| l == line)) => {
                    out.push_str(&form);
                }
                _ => out.push_str(line),
            }
            out.push('\n');
        }
        out
    };
    (align(ours, &their_forms), align(theirs, &our_forms))
}

/// The lines of `text` that `other` lacks (as many times as they are missing), in order.
fn differing_lines(text: &str, other: &str) -> Vec<String> {
    let mut left: Vec<&str> = other.lines().collect();
    text.lines()
        .filter(|l| match left.iter().position(|o| o == l) {
            Some(at) => {
                left.remove(at);
                false
            }
            None => true,
        })
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use svclab_scenario_gen::variety::ProxyRun;

    use super::compare;
    use crate::DivergenceKind;

    fn check(svclab: Result<String, String>, line: serde_json::Value) -> Vec<DivergenceKind> {
        let run = ProxyRun { mode: "nftables", family: "IPv4", node: "node-a".to_owned() };
        compare("c", &run, &svclab, &line).into_iter().map(|d| d.kind).collect()
    }

    #[test]
    fn normalised_texts_elements_and_refusals_are_compared() {
        let rules =
            "add table ip kube-proxy\nadd element ip kube-proxy cluster-ips { 10.96.0.10 }\n";
        let line = |normalized: &str, svclab: &str, error: Option<&str>| json!({"id": "c", "rules": rules, "normalized": normalized, "svclabNormalized": svclab, "error": error});
        assert_eq!(check(Ok(rules.into()), line("a\nb\n", "a\nb\n", None)), []);
        assert_eq!(
            check(Ok(rules.into()), line("a\nb\n", "a\nc\n", None)),
            [DivergenceKind::Rules]
        );
        let twice = format!("{rules}add element ip kube-proxy cluster-ips {{ 10.96.0.10 }}\n");
        assert_eq!(check(Ok(twice), line("a\n", "a\n", None)), [DivergenceKind::Rules]);
        let refusal = "failed validate: [x: Invalid value: 32]";
        assert_eq!(
            check(Err(format!("kube-proxy 1.37: {refusal}")), line("", "", Some(refusal))),
            []
        );
        assert_eq!(
            check(Err("other".into()), line("", "", Some(refusal))),
            [DivergenceKind::Rules]
        );
        assert_eq!(check(Ok(rules.into()), line("", "", Some(refusal))), [DivergenceKind::Rules]);
    }

    #[test]
    fn a_shared_key_compares_without_its_first_writers_comment() {
        let element = |comment: &str, value: &str| {
            format!(
                "add element ip kube-proxy no-endpoint-services {{ 203.0.113.10 . tcp . 80 comment \"{comment}\" : {value} }}\n"
            )
        };
        let (ours, theirs) =
            (element("shop/svc-0:http", "drop"), element("shop/svc-5:http", "drop"));
        let line = |svclab: &str, upstream: &str| json!({"id": "c", "rules": upstream, "normalized": upstream, "svclabNormalized": svclab, "error": null});
        assert_eq!(check(Ok(ours.clone()), line(&ours, &theirs)), []);
        let rejected = element("shop/svc-5:http", "reject");
        assert_eq!(check(Ok(ours.clone()), line(&ours, &rejected)), [DivergenceKind::Rules]);
    }
}
