//! A kube-apiserver case: both sides' answers per object, put in one form, and their
//! differences. svclab's come from its report (Services by the document they were written in,
//! EndpointSlices and ServiceCIDRs from the diagnostics at their document); upstream's from the
//! oracle's output line (`oracle/apiserver/README.md` gives its format).
//!
//! Compared per object: the operation, the outcome, the errors in order (a cause as
//! `<reason> <field>: <body>`; a Status that is not `Invalid` as `<reason> : <message>`, an
//! empty reason as `Unknown`; svclab's decoder refusal as `BadRequest`), the warnings in order
//! (svclab's `Warning` and `UnknownField` diagnostics; its own advisories are not upstream's),
//! and for an accepted Service its type, families, policy, ClusterIPs, node ports and
//! health-check node port, exactly (both sides pick first-fit). Per case: the feature gates
//! refused. Not compared: names `generateName` gives (random upstream; in a message each
//! side's own stands for itself), a stored object's uid and the etcd key in a storage error,
//! the order of the errors of one label, annotation or selector field (Go map order upstream),
//! bands and ranges, rules, policy verdicts, the aggregated message of an `Invalid` Status
//! (built from the causes).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use svclab_core::{CheckOptions, Input, Report, Severity};

use crate::divergence::{Divergence, DivergenceKind, mask};

/// One object's answer, in the form both sides are put into.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// `Service`, `EndpointSlice` or `ServiceCIDR`.
    pub kind: String,
    /// The namespace (`default` when none was written; empty for a ServiceCIDR).
    pub namespace: String,
    /// The name.
    pub name: String,
    /// `create`, `update` or `delete`.
    pub op: String,
    /// `created`, `updated`, `deleted` or `rejected`.
    pub outcome: String,
    /// The refusal, cause by cause.
    pub errors: Vec<String>,
    /// The warnings, in order.
    pub warnings: Vec<String>,
    /// An accepted Service's addresses and ports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceFacts>,
}

/// What an accepted Service holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceFacts {
    /// `spec.type`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `spec.clusterIPs`.
    #[serde(rename = "clusterIPs")]
    pub cluster_ips: Vec<String>,
    /// `spec.ipFamilies`.
    pub ip_families: Vec<String>,
    /// `spec.ipFamilyPolicy`.
    pub ip_family_policy: String,
    /// Every port's `nodePort` (0 when none).
    pub node_ports: Vec<u32>,
    /// `spec.healthCheckNodePort`.
    pub health_check_node_port: u32,
}

/// The kind of an object svclab and the oracle answer for, by apiVersion and kind.
pub(crate) fn kind_of(object: &Value) -> Option<&'static str> {
    let api_version = object["apiVersion"].as_str().unwrap_or("");
    match (api_version, object["kind"].as_str().unwrap_or("")) {
        ("v1", "Service") => Some("Service"),
        ("discovery.k8s.io/v1", "EndpointSlice") => Some("EndpointSlice"),
        (v, "ServiceCIDR") if v.starts_with("networking.k8s.io/") => Some("ServiceCIDR"),
        _ => None,
    }
}

/// The scenario text svclab reads: one document per object, so a diagnostic's document is the
/// object's index.
pub fn scenario_text(objects: &[Value]) -> String {
    let documents: Vec<String> = objects.iter().map(Value::to_string).collect();
    documents.join("\n---\n") + "\n"
}

/// svclab's answer to a case: the feature-gate refusals, and each object's answer by index.
pub fn svclab_answers(objects: &[Value]) -> (Vec<String>, BTreeMap<usize, Answer>) {
    let input = Input::new("case.yaml", scenario_text(objects));
    let report = svclab_core::check(&[input], &CheckOptions::default());
    answers_of(objects, &report)
}

fn answers_of(objects: &[Value], report: &Report) -> (Vec<String>, BTreeMap<usize, Answer>) {
    let mut profile: Vec<String> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .filter(|d| d.object.as_ref().is_some_and(|o| o.kind == "ClusterProfile"))
        .map(|d| d.message.clone())
        .collect();
    profile.sort();
    let services: BTreeMap<usize, &svclab_core::ServiceReport> =
        report.services.iter().map(|s| (s.source.document, s)).collect();
    let mut at: BTreeMap<usize, Vec<&svclab_core::Diagnostic>> = BTreeMap::new();
    for d in &report.diagnostics {
        if let (Some(source), Some(_)) = (&d.source, &d.object) {
            at.entry(source.document).or_default().push(d);
        }
    }
    let mut stored: BTreeMap<String, bool> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (index, object) in objects.iter().enumerate() {
        let Some(kind) = kind_of(object) else { continue };
        let (namespace, name) = identity(object, kind);
        let key = format!("{kind}/{namespace}/{name}");
        let is_stored = stored.get(&key).copied().unwrap_or(false);
        let mut answer = Answer {
            kind: kind.to_owned(),
            namespace,
            name,
            op: op_of(object, kind, is_stored),
            ..Answer::default()
        };
        for d in at.get(&index).into_iter().flatten() {
            if d.object.as_ref().is_none_or(|o| o.kind != kind) {
                continue;
            }
            match d.severity {
                Severity::Error if d.message.contains(" cannot be handled as a ") => {
                    // The decoder's refusal: svclab places it at the field, the apiserver
                    // answers 400 BadRequest with the decoder's text.
                    answer.errors.push(format!("BadRequest : {}", d.message));
                }
                Severity::Error => {
                    let body =
                        d.message.strip_prefix(&format!("{}: ", d.field)).unwrap_or(&d.message);
                    answer.errors.push(format!("{} {}: {body}", d.reason, d.field));
                }
                Severity::Warning if d.reason == "Warning" || d.reason == "UnknownField" => {
                    answer.warnings.push(d.message.clone());
                }
                _ => {}
            }
        }
        answer.outcome = match (kind, services.get(&index)) {
            ("Service", Some(report)) => {
                answer.namespace.clone_from(&report.namespace);
                answer.name.clone_from(&report.name);
                if report.outcome != "rejected" {
                    answer.service = Some(ServiceFacts {
                        type_: report.type_.clone(),
                        cluster_ips: report.cluster_ips.clone(),
                        ip_families: report.ip_families.clone(),
                        ip_family_policy: report.ip_family_policy.clone(),
                        node_ports: report.ports.iter().map(|p| p.node_port).collect(),
                        health_check_node_port: report.health_check_node_port,
                    });
                }
                report.outcome.clone()
            }
            // Refused before the registry (decoding).
            ("Service", None) if !answer.errors.is_empty() => "rejected".to_owned(),
            ("Service", None) => "(no report)".to_owned(),
            _ if !answer.errors.is_empty() => "rejected".to_owned(),
            _ if answer.op == "update" => "updated".to_owned(),
            _ => "created".to_owned(),
        };
        match answer.outcome.as_str() {
            "created" | "updated" => {
                stored.insert(key, true);
            }
            "deleted" => {
                stored.remove(&key);
            }
            _ => {}
        }
        out.insert(index, answer);
    }
    (profile, out)
}

/// `(namespace, name)` as the apiserver stores the object (`default` for a namespaced object
/// written without one).
fn identity(object: &Value, kind: &str) -> (String, String) {
    let meta = &object["metadata"];
    let mut namespace = meta["namespace"].as_str().unwrap_or("").to_owned();
    if namespace.is_empty() && kind != "ServiceCIDR" {
        namespace = "default".to_owned();
    }
    (namespace, meta["name"].as_str().unwrap_or("").to_owned())
}

/// svclab's rule for what a document is: a delete when annotated so, an update when an object
/// of that name is stored, a create otherwise.
fn op_of(object: &Value, kind: &str, stored: bool) -> String {
    let delete = object["metadata"]["annotations"]["svclab.dev/operation"] == "delete";
    let named = object["metadata"]["name"].as_str().is_some_and(|n| !n.is_empty());
    match () {
        () if kind == "Service" && delete => "delete",
        () if named && stored => "update",
        () => "create",
    }
    .to_owned()
}

/// Upstream's answer to a case, from the oracle's output line: the feature-gate refusals, each
/// object's answer by index, and a harness error when the case did not run.
pub fn upstream_answers(line: &Value) -> (Vec<String>, BTreeMap<usize, Answer>, Option<String>) {
    let mut profile = Vec::new();
    let mut harness = None;
    if let Some(error) = line["error"].as_str() {
        for part in error.split("; ") {
            if part.starts_with("featureGates: ") {
                profile.push(part.to_owned());
            } else {
                harness = Some(part.to_owned());
            }
        }
    }
    profile.sort();
    let mut out = BTreeMap::new();
    for r in line["results"].as_array().into_iter().flatten() {
        let Some(index) = r["index"].as_u64() else { continue };
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        let mut answer = Answer {
            kind: r["kind"].as_str().unwrap_or("").to_owned(),
            namespace: r["namespace"].as_str().unwrap_or("").to_owned(),
            name: r["name"].as_str().unwrap_or("").to_owned(),
            op: r["op"].as_str().unwrap_or("").to_owned(),
            outcome: r["outcome"].as_str().unwrap_or("").to_owned(),
            errors: Vec::new(),
            warnings: strings(&r["warnings"]),
            service: None,
        };
        let status = &r["status"];
        if status.is_object() {
            let causes = status["causes"].as_array().filter(|c| !c.is_empty());
            match causes {
                Some(causes) if status["reason"] == "Invalid" => {
                    for c in causes {
                        answer.errors.push(format!(
                            "{} {}: {}",
                            c["reason"].as_str().unwrap_or(""),
                            c["field"].as_str().unwrap_or(""),
                            c["message"].as_str().unwrap_or("")
                        ));
                    }
                }
                _ => {
                    let reason =
                        status["reason"].as_str().filter(|r| !r.is_empty()).unwrap_or("Unknown");
                    answer
                        .errors
                        .push(format!("{reason} : {}", status["message"].as_str().unwrap_or("")));
                }
            }
        }
        if answer.kind == "Service"
            && matches!(answer.outcome.as_str(), "created" | "updated" | "deleted")
        {
            let ports = r["nodePorts"].as_array().into_iter().flatten();
            answer.service = Some(ServiceFacts {
                type_: r["type"].as_str().unwrap_or("").to_owned(),
                cluster_ips: strings(&r["clusterIPs"]),
                ip_families: strings(&r["ipFamilies"]),
                ip_family_policy: r["ipFamilyPolicy"].as_str().unwrap_or("").to_owned(),
                node_ports: ports.filter_map(Value::as_u64).map(|p| p as u32).collect(),
                health_check_node_port: r["healthCheckNodePort"].as_u64().unwrap_or(0) as u32,
            });
        }
        out.insert(index as usize, answer);
    }
    (profile, out, harness)
}

/// The differences between svclab's answers to `objects` and the oracle's output `line`.
pub fn compare(id: &str, objects: &[Value], line: &Value) -> Vec<Divergence> {
    let (svclab_profile, svclab) = svclab_answers(objects);
    compare_answers(id, (svclab_profile, svclab), line)
}

/// [`compare`] with svclab's answers already made.
pub fn compare_answers(
    id: &str,
    svclab: (Vec<String>, BTreeMap<usize, Answer>),
    line: &Value,
) -> Vec<Divergence> {
    // Where upstream's picks are not reproducible (two ServiceCIDRs of one family: which
    // allocator picks follows Go's map order, the oracle's `notes` say so), what depends on a
    // pick is not compared.
    let picks = if line["notes"].as_array().is_none_or(Vec::is_empty) {
        Picks::Exact
    } else {
        Picks::Unreproducible
    };
    compare_upstream(id, svclab, upstream_answers(line), picks)
}

/// How upstream drew its dynamic picks, and so what of them is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Picks {
    /// First-fit, as svclab's `FirstFit`: every address and port compared exactly.
    Exact,
    /// Not reproducible (the oracle's `notes`): addresses not compared, nor a refusal that
    /// names `spec.clusterIP`.
    Unreproducible,
    /// At random, as a real kube-apiserver draws them: the caller has put dynamic picks in a
    /// comparable form (their band, see `cluster::blackbox`); a refusal about addresses or
    /// ports is compared with its values masked, and one side's "already allocated" is not
    /// compared (the other side's random pick left the value free).
    Random,
}

/// The differences between svclab's answers and upstream's (as [`upstream_answers`] gives
/// them).
pub fn compare_upstream(
    id: &str,
    (svclab_profile, svclab): (Vec<String>, BTreeMap<usize, Answer>),
    (upstream_profile, upstream, harness): (Vec<String>, BTreeMap<usize, Answer>, Option<String>),
    picks: Picks,
) -> Vec<Divergence> {
    let mut out = Vec::new();
    let mut add = |index: Option<usize>, object: String, kind, svclab: Value, upstream: Value| {
        out.push(Divergence { case: id.to_owned(), index, object, kind, svclab, upstream });
    };
    if svclab_profile != upstream_profile {
        add(
            None,
            "ClusterProfile".into(),
            DivergenceKind::Profile,
            json!(svclab_profile),
            json!(upstream_profile),
        );
    }
    if let Some(error) = &harness {
        add(None, "case".into(), DivergenceKind::Harness, Value::Null, json!(error));
        if upstream.is_empty() {
            return out;
        }
    }
    // Set once a refusal may have left an address allocated upstream ([`may_leak_a_pick`]).
    let (mut leaked, mut dual_stack) = (false, false);
    // With random picks: the objects one side refused for a taken value (which the other
    // side's pick left free), so that what follows from it is not compared either.
    let mut diverged_by_picks: BTreeSet<String> = BTreeSet::new();
    for (index, s) in &svclab {
        let object = if s.kind == "ServiceCIDR" {
            format!("{} {}", s.kind, s.name)
        } else {
            format!("{} {}/{}", s.kind, s.namespace, s.name)
        };
        let Some(u) = upstream.get(index) else {
            // The IPAddress allocator is off: both sides ignore the ServiceCIDR.
            if s.kind != "ServiceCIDR" || !s.errors.is_empty() {
                add(Some(*index), object, DivergenceKind::Harness, json!(s), json!("(no answer)"));
            }
            continue;
        };
        if s.op != u.op {
            add(Some(*index), object.clone(), DivergenceKind::Op, json!(s.op), json!(u.op));
        }
        // Where upstream's picks are not reproducible, what depends on a pick is not compared
        // either: a later request for a picked address is refused on one side only ("provided
        // IP is already allocated", "may not change once set").
        let reproducible = picks != Picks::Unreproducible;
        let on_picks = |a: &Answer| a.errors.iter().any(|e| e.contains(" spec.clusterIP"));
        if !reproducible && (on_picks(s) || on_picks(u)) {
            continue;
        }
        // A refusal for a taken value that only one side gives: with random picks the other
        // side's pick left it free; after a leak upstream ([`may_leak_a_pick`]) upstream still
        // holds an address svclab gave back.
        let taken = |a: &Answer| a.errors.iter().any(|e| e.contains("already allocated"));
        let unsettled = picks == Picks::Random || leaked;
        if unsettled && (taken(s) != taken(u) || diverged_by_picks.contains(&object)) {
            diverged_by_picks.insert(object);
            continue;
        }
        if s.outcome != u.outcome {
            let side = |a: &Answer| json!(format!("{} {}", a.outcome, a.errors.join(" | ")));
            add(Some(*index), object, DivergenceKind::Outcome, side(s), side(u));
            continue;
        }
        // A name generateName gave is random upstream (names.SimpleNameGenerator: the prefix and
        // five random characters), and upstream reports no name for a refused object: the five
        // characters after the prefix of the generated name either side reports are masked.
        let generated = |a: &Answer| -> Vec<String> {
            let errors = comparable(&a.errors);
            let name = if s.name.is_empty() { &u.name } else { &s.name };
            match name.len().checked_sub(5).map(|cut| &name[..cut]) {
                Some(prefix) if s.name != u.name && !prefix.is_empty() => {
                    errors.iter().map(|e| mask_generated(e, prefix)).collect()
                }
                _ => errors,
            }
        };
        // After a pick that may have leaked upstream, addresses in messages may differ too
        // ("may not change once set" quotes the stored clusterIPs): compared masked. So are
        // the refusals about addresses and ports when upstream picked at random.
        let on_random_picks = picks == Picks::Random
            && [s, u].iter().any(|a| {
                a.errors.iter().any(|e| {
                    e.contains(" spec.clusterIP")
                        || e.contains("odePort")
                        || e.contains(" spec.externalIPs")
                })
            });
        // Which family of a two-family allocation fails first is Go's map order upstream (a
        // refused IPAddress names the address of that family, also in a 500 that does not list
        // the families).
        let family_order = [s, u].iter().any(|a| {
            a.errors
                .iter()
                .any(|e| two_family_allocation(e) || e.contains("IPAddress.networking.k8s.io"))
        });
        let differ = if leaked || on_random_picks || family_order {
            let masked = |a: &Answer| {
                generated(a)
                    .iter()
                    .map(|e| mask(&if family_order { unnamed_pick(e) } else { e.clone() }))
                    .collect::<Vec<_>>()
            };
            masked(s) != masked(u)
        } else {
            generated(s) != generated(u)
        };
        if differ {
            add(
                Some(*index),
                object.clone(),
                DivergenceKind::Errors,
                json!(s.errors),
                json!(u.errors),
            );
        }
        if s.warnings != u.warnings {
            add(
                Some(*index),
                object.clone(),
                DivergenceKind::Warnings,
                json!(s.warnings),
                json!(u.warnings),
            );
        }
        // Where upstream's own picks are not reproducible (two ServiceCIDRs of one family: which
        // allocator picks follows Go's map order, the oracle's `notes` say so), its addresses
        // are not compared.
        if s.kind == "Service" && u.outcome != "rejected" && reproducible {
            let facts = |a: &Answer| {
                let mut facts = a.service.clone();
                if leaked {
                    for ip in facts.iter_mut().flat_map(|f| f.cluster_ips.iter_mut()) {
                        *ip = "<pick after a leak>".to_owned();
                    }
                }
                facts
            };
            if facts(s) != facts(u) {
                add(
                    Some(*index),
                    object,
                    DivergenceKind::Addresses,
                    json!(s.service),
                    json!(u.service),
                );
            }
        }
        dual_stack |= u.service.as_ref().is_some_and(|f| f.ip_families.len() == 2);
        leaked |= s.kind == "Service"
            && u.outcome == "rejected"
            && u.errors.iter().any(|e| may_leak_a_pick(e, dual_stack));
    }
    out
}

/// Whether a Service's refusal may leave one of its addresses allocated upstream: `allocIPs`
/// (pkg/registry/core/service/storage/alloc.go, k8s.io/kubernetes@v1.24.17 to @v1.37.2) walks a
/// Go map of family to requested IP and returns at the first failure without releasing what the
/// other family took, when the map happened to give that family first. So a dual-stack request
/// that fails to allocate leaves a random address taken (the repair loop frees it later) and
/// the ClusterIPs picked after it are not compared; svclab gives it back at once
/// (`allocation/service.rs` `alloc_cluster_ips`), the state the cluster settles in.
fn may_leak_a_pick(error: &str, dual_stack: bool) -> bool {
    if !error.contains("failed to allocate") {
        return false;
    }
    let two_families = two_family_allocation(error);
    // With dual write (1.31 to 1.34, DisableAllocatorDualWrite off) the bitmap's bit is set
    // before the IPAddress object is refused, and kept (`MetaAllocator.AllocateNextService`
    // and `AllocateService`, cidrallocator.go).
    let object_refused = error.contains("IPAddress.networking.k8s.io");
    two_families
        || object_refused
        || (dual_stack && error.contains("failed to allocate a serviceIP"))
}

/// Whether `error` is the refusal of a two-family allocation, where which family fails first
/// (and so which address the message names) follows Go's map order upstream (`allocIPs`):
/// `spec.clusterIPs: Invalid value: []string{"fd00:10:96::", ""}: failed to allocate IP …`, from
/// 1.34 `Invalid value: ["fd00:10:96::",""]` (the value as JSON).
fn two_family_allocation(error: &str) -> bool {
    if !error.contains("failed to allocate") {
        return false;
    }
    let go = error
        .split_once("[]string{")
        .and_then(|(_, rest)| rest.split_once('}'))
        .is_some_and(|(ips, _)| ips.contains(", "));
    let json = error
        .split_once("Invalid value: [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .is_some_and(|(ips, _)| ips.contains("\",\""));
    go || json
}

/// `error` with the address of "failed to allocate IP <requested>: …" dropped, so that it reads
/// as a dynamic pick's "failed to allocate IP: …": which family of a dual-stack allocation
/// fails first, a requested or a picked one, is Go's map order upstream.
pub(crate) fn unnamed_pick(error: &str) -> String {
    match error.split_once("failed to allocate IP ") {
        Some((head, rest)) => match rest.split_once(": ") {
            Some((_, tail)) => format!("{head}failed to allocate IP: {tail}"),
            None => error.to_owned(),
        },
        None => error.to_owned(),
    }
}

/// Errors as they are compared: what kube-apiserver draws at random or lays out per
/// installation is masked (a stored object's uid, random at create; a pointer's address; the etcd key of a storage
/// error, which the oracle keeps under a prefix of its own per case, where a real apiserver and
/// svclab use `/registry/services/specs/…`), and a run of errors of one label, annotation or
/// selector field is sorted: upstream ranges over a Go map there (`ValidateLabels`,
/// `ValidateAnnotations` in apimachinery's validation), whose order is random.
pub(crate) fn comparable(errors: &[String]) -> Vec<String> {
    let mut out: Vec<String> = errors.iter().map(|e| mask_storage(e)).collect();
    let field = |e: &str| -> String {
        // `<reason> <field>: <body>`
        let rest = e.split_once(' ').map_or(e, |(_, rest)| rest);
        rest.split_once(": ").map_or(rest, |(field, _)| field).to_owned()
    };
    let unordered =
        |f: &str| ["labels", "annotations", "selector"].iter().any(|suffix| f.ends_with(suffix));
    let mut start = 0;
    while start < out.len() {
        let f = field(&out[start]);
        let end = start + out[start..].iter().take_while(|e| field(e) == f).count();
        if unordered(&f) {
            out[start..end].sort();
        }
        start = end;
    }
    out
}

/// `error` with the five characters `names.SimpleNameGenerator` appends after `prefix` masked.
pub(crate) fn mask_generated(error: &str, prefix: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut out = String::with_capacity(error.len());
    let mut rest = error;
    while let Some(at) = rest.find(prefix) {
        let after = &rest[at + prefix.len()..];
        let suffix = after.as_bytes().iter().take(5).take_while(|b| ALPHABET.contains(b)).count();
        out.push_str(&rest[..at + prefix.len()]);
        if suffix == 5 {
            out.push_str("<5>");
            rest = &after[5..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// `error` with every uid replaced by `<uid>`, a storage error's `Key: …,` by `Key: <key>,` and a
/// pointer `%#v` prints by `<pointer>`.
fn mask_storage(error: &str) -> String {
    let is_uid = |w: &[u8]| {
        w.len() == 36
            && w.iter().enumerate().all(|(i, b)| match i {
                8 | 13 | 18 | 23 => *b == b'-',
                _ => b.is_ascii_digit() || (b'a'..=b'f').contains(b),
            })
    };
    let mut out = String::with_capacity(error.len());
    let mut rest = error;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("Key: ")
            && let Some(end) = after.find(',')
        {
            out.push_str("Key: <key>");
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix(")(0x") {
            // `%#v` of a pointer field (`AppProtocol:(*string)(0xc000123456)`, the mixed-protocol
            // error before 1.26): an address of the process.
            let digits = after.bytes().take_while(u8::is_ascii_hexdigit).count();
            out.push_str(")(<pointer>");
            rest = &after[digits..];
        } else if rest.len() >= 36 && is_uid(&rest.as_bytes()[..36]) {
            out.push_str("<uid>");
            rest = &rest[36..];
        } else {
            let next = rest.chars().next().map_or(1, char::len_utf8);
            out.push_str(&rest[..next]);
            rest = &rest[next..];
        }
    }
    out
}

/// The case as the oracle binary reads it: `{"id", "objects"}` with the ClusterProfile at
/// `release` (the oracle's own) and first-fit picks, added when the case has none.
pub fn oracle_case(id: &str, objects: &[Value], release: &str) -> (Value, Vec<Value>) {
    let mut objects = objects.to_vec();
    let version = release.trim_start_matches('v');
    match objects.iter_mut().rev().find(|o| o["kind"] == "ClusterProfile") {
        Some(profile) => {
            profile["kubernetesVersion"] = json!(version);
            profile["dynamicPicks"] = json!("FirstFit");
        }
        None => objects.insert(
            0,
            json!({"apiVersion": "svclab.dev/v1alpha1", "kind": "ClusterProfile",
                   "kubernetesVersion": version, "dynamicPicks": "FirstFit"}),
        ),
    }
    (json!({"id": id, "objects": objects}), objects)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::{Value, json};

    use super::{Answer, DivergenceKind, compare_answers, svclab_answers};

    /// An oracle output line that says exactly what svclab says (the inverse of
    /// `upstream_answers`).
    fn line_of(answers: &BTreeMap<usize, Answer>) -> Value {
        let results: Vec<Value> = answers
            .iter()
            .map(|(index, a)| {
                let causes: Vec<Value> = a
                    .errors
                    .iter()
                    .map(|e| {
                        let (reason, rest) = e.split_once(' ').unwrap_or(("", e));
                        let (field, message) = rest.split_once(": ").unwrap_or(("", rest));
                        json!({"reason": reason, "field": field, "message": message})
                    })
                    .collect();
                let status = if causes.is_empty() {
                    Value::Null
                } else {
                    json!({"code": 422, "reason": "Invalid", "causes": causes})
                };
                let mut r = json!({"index": index, "kind": a.kind, "namespace": a.namespace,
                    "name": a.name, "op": a.op, "outcome": a.outcome, "status": status,
                    "warnings": a.warnings});
                if let Some(s) = &a.service {
                    r["type"] = json!(s.type_);
                    r["clusterIPs"] = json!(s.cluster_ips);
                    r["ipFamilies"] = json!(s.ip_families);
                    r["ipFamilyPolicy"] = json!(s.ip_family_policy);
                    r["nodePorts"] = json!(s.node_ports);
                    r["healthCheckNodePort"] = json!(s.health_check_node_port);
                }
                r
            })
            .collect();
        json!({"id": "self", "error": null, "results": results})
    }

    /// Compares svclab with an upstream line made from its own answers after `plant` changed
    /// one value, and returns the kinds of divergence found.
    fn check(plant: impl Fn(&mut Value)) -> Vec<DivergenceKind> {
        let objects: Vec<Value> = serde_json::from_str(
            r#"[{"apiVersion": "svclab.dev/v1alpha1", "kind": "ClusterProfile", "dynamicPicks": "FirstFit"},
                {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"},
                 "spec": {"type": "NodePort", "ports": [{"port": 80}], "loadBalancerIP": "1.2.3.004"}},
                {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b"},
                 "spec": {"ports": [{"port": 0}]}}]"#,
        )
        .unwrap_or_default();
        let answers = svclab_answers(&objects);
        let mut line = line_of(&answers.1);
        plant(&mut line);
        compare_answers("self", answers, &line).into_iter().map(|d| d.kind).collect()
    }

    #[test]
    fn svclab_agrees_with_its_own_answers() {
        assert_eq!(check(|_| {}), []);
    }

    #[test]
    fn one_changed_word_address_or_port_is_a_divergence() {
        let word = |line: &mut Value| {
            let cause = &mut line["results"][1]["status"]["causes"][0]["message"];
            *cause = json!(cause.as_str().unwrap_or("").replacen("Invalid", "Bad", 1));
        };
        assert_eq!(check(word), [DivergenceKind::Errors]);
        let address = |line: &mut Value| line["results"][0]["clusterIPs"][0] = json!("10.96.1.9");
        assert_eq!(check(address), [DivergenceKind::Addresses]);
        let port = |line: &mut Value| line["results"][0]["nodePorts"][0] = json!(30087);
        assert_eq!(check(port), [DivergenceKind::Addresses]);
        let warning = |line: &mut Value| line["results"][0]["warnings"] = json!([]);
        assert_eq!(check(warning), [DivergenceKind::Warnings]);
        let outcome = |line: &mut Value| line["results"][1]["outcome"] = json!("created");
        assert_eq!(check(outcome), [DivergenceKind::Outcome]);
    }

    #[test]
    fn uids_storage_keys_and_label_order_are_upstreams_randomness() {
        let conflict = |key: &str, uid: &str| {
            format!(
                "Conflict : Operation cannot be fulfilled on services \"uid\": StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 99999999-2222-3333-4444-555555555555, UID in object meta: {uid}"
            )
        };
        let ours = conflict(
            "/registry/services/specs/default/uid",
            "eaf93019-5ab3-4c99-bbfb-2a5e05ca84dd",
        );
        let theirs = conflict(
            "/registry/oracle-526/services/default/uid",
            "54f3eaa9-de12-4d21-a95b-68279b40821e",
        );
        assert_eq!(super::comparable(std::slice::from_ref(&ours)), super::comparable(&[theirs]));
        let other = ours.replace("Code: 4", "Code: 5");
        assert_ne!(super::comparable(&[ours]), super::comparable(&[other]));
        let ports = |p: &str| {
            format!(
                "FieldValueInvalid spec.ports: Invalid value: []core.ServicePort{{core.ServicePort{{Name:\"grpc\", AppProtocol:(*string)({p}), Port:443}}}}: may not contain more than 1 protocol"
            )
        };
        assert_eq!(
            super::comparable(&[ports("0xc000000000")]),
            super::comparable(&[ports("0x139de6d78d00")])
        );
        assert_ne!(super::comparable(&[ports("0xc000000000")]), super::comparable(&[ports("nil")]));
        let (a, b) = (
            "FieldValueInvalid metadata.annotations: Invalid value: \"k\": a".to_owned(),
            "FieldValueInvalid metadata.annotations: Invalid value: \"p\": b".to_owned(),
        );
        let (c, d) = (
            "FieldValueInvalid spec.ports[0].name: a".to_owned(),
            "FieldValueInvalid spec.ports[0].name: b".to_owned(),
        );
        assert_eq!(super::comparable(&[a.clone(), b.clone()]), super::comparable(&[b, a]));
        assert_ne!(super::comparable(&[c.clone(), d.clone()]), super::comparable(&[d, c]));
    }

    #[test]
    fn a_failed_dual_stack_pick_may_leak_one_address() {
        let failed = |value: &str| {
            format!(
                "FieldValueInvalid spec.clusterIPs: Invalid value: []string{{{value}}}: failed to allocate IP fd00:10:96::: the provided network does not match the current range"
            )
        };
        assert!(super::may_leak_a_pick(&failed("\"fd00:10:96::\", \"\""), false));
        assert!(!super::may_leak_a_pick(&failed("\"fd00:10:96::\""), false));
        let json = "FieldValueInvalid spec.clusterIPs: Invalid value: [\"fd00:10:96::\",\"\"]: failed to allocate IP fd00:10:96::: the provided network does not match the current range";
        assert!(super::may_leak_a_pick(json, false));
        assert!(!super::may_leak_a_pick(&json.replace(",\"\"", ""), false));
        let internal = "InternalError : Internal error occurred: failed to allocate a serviceIP: range is full";
        assert!(!super::may_leak_a_pick(internal, false));
        assert!(super::may_leak_a_pick(internal, true));
    }

    #[test]
    fn generated_names_are_masked() {
        let error =
            |name: &str| format!("FieldValueInvalid metadata.name: Invalid value: \"{name}\": bad");
        assert_eq!(
            super::mask_generated(&error("Bad_t2wpg"), "Bad_"),
            super::mask_generated(&error("Bad_qcwzf"), "Bad_")
        );
        assert_ne!(
            super::mask_generated(&error("Bad_t2wpg"), "Bad_"),
            super::mask_generated(&error("Bad_other"), "Bad_")
        );
    }

    /// A real kube-apiserver's random picks: one side refusing a request for an address the
    /// other side's pick left free is not a divergence, nor is what follows for that object;
    /// the same answers under first-fit picks are.
    #[test]
    fn random_picks_excuse_what_depends_on_them() {
        let answer = |op: &str, outcome: &str, errors: &[&str]| Answer {
            kind: "Service".into(),
            namespace: "default".into(),
            name: "b".into(),
            op: op.into(),
            outcome: outcome.into(),
            errors: errors.iter().map(|e| (*e).to_owned()).collect(),
            ..Answer::default()
        };
        let taken = "FieldValueInvalid spec.clusterIPs: Invalid value: [\"10.96.0.5\"]: failed to allocate IP 10.96.0.5: provided IP is already allocated";
        let svclab: BTreeMap<usize, Answer> = [
            (1, answer("create", "rejected", &[taken])),
            (2, answer("delete", "rejected", &["NotFound : services \"b\" not found"])),
        ]
        .into();
        let upstream: BTreeMap<usize, Answer> =
            [(1, answer("create", "created", &[])), (2, answer("delete", "deleted", &[]))].into();
        let run = |picks| {
            super::compare_upstream(
                "case",
                (Vec::new(), svclab.clone()),
                (Vec::new(), upstream.clone(), None),
                picks,
            )
        };
        assert!(run(super::Picks::Random).is_empty());
        assert_eq!(run(super::Picks::Exact).len(), 2);
    }

    /// Which family of a two-family allocation fails first is Go's map order: the address a
    /// refusal names, and whether it was requested, are not compared.
    #[test]
    fn the_family_a_dual_stack_refusal_names_is_map_order() {
        let refused = |error: &str| Answer {
            kind: "Service".into(),
            namespace: "default".into(),
            op: "create".into(),
            outcome: "rejected".into(),
            errors: vec![error.to_owned()],
            ..Answer::default()
        };
        let v6 = "FieldValueInvalid spec.clusterIPs: Invalid value: [\"fd00:10:96::b\",\"\"]: failed to allocate IP fd00:10:96::b: IPAddress.networking.k8s.io \"fd00:10:96::b\" is invalid: spec.parentRef.name: Required value";
        let v4 = "FieldValueInvalid spec.clusterIPs: Invalid value: [\"fd00:10:96::b\",\"\"]: failed to allocate IP: IPAddress.networking.k8s.io \"10.96.28.110\" is invalid: spec.parentRef.name: Required value";
        let compare = |s: &str, u: &str| {
            super::compare_upstream(
                "case",
                (Vec::new(), [(1, refused(s))].into()),
                (Vec::new(), [(1, refused(u))].into(), None),
                super::Picks::Exact,
            )
        };
        assert!(compare(v6, v4).is_empty());
        let other =
            v4.replace("parentRef.name: Required value", "parentRef.resource: Required value");
        assert_eq!(compare(v6, &other).len(), 1, "the words of the refusal are still compared");
    }
}
