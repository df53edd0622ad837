//! `apiserver`: what kube-apiserver answers for the stored objects at the target, against what
//! it answers today for the same request.
//!
//! Two requests per object, each made at both releases so that only the upgrade's differences
//! remain:
//!
//! - its next write: the stored object written again unchanged (what a `kubectl apply` that
//!   changes nothing, or any controller's update, sends), as an update of itself through the
//!   pipeline's write path: the target's defaulting (which also applies when kube-apiserver
//!   reads it from storage), the registry's preparation, allocation, `ValidateServiceUpdate`
//!   with upstream's ratcheting of unchanged fields, the warnings;
//! - a fresh create: the scenario's documents replayed in order into an empty cluster of the
//!   target (what re-applying the manifests, a restore or a new cluster does).
//!
//! Differences are new refusals (kube-apiserver's `Status` message), refusals that go or change
//! their text, warnings that appear or disappear, and fields the next write stores differently.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::cause::{Cause, Crossed};
use super::report::{Area, Finding, Impact};
use super::sides::Sides;
use crate::diagnostic::{Diagnostic, ObjectRef, Severity};
use crate::manifest::Object;
use crate::model::{Located, Service, ServiceKey};
use crate::pipeline::write_onward;
use crate::report::Report;
use crate::source::Source;
use crate::world::World;

/// The apiserver findings.
pub(crate) fn findings(
    sides: &Sides,
    today: &World,
    today_report: &Report,
    fresh_report: &Report,
    migrated: &World,
    out: &mut Vec<Finding>,
) {
    let crossed = Crossed::between(sides);
    let (base_world, base) = write_onward(today.clone(), next_writes(today));
    let (next_world, next) = write_onward(migrated.clone(), next_writes(migrated));
    let mut seen = Observations::default();
    compare(&by_object(&base), &by_object(&next), When::NextWrite, &mut seen);
    // A release without the ServiceCIDR API (MultiCIDRServiceAllocator off) answers no
    // ServiceCIDR request with a verdict of its own (`kubectl` finds no such kind), so there is
    // nothing to compare; the allocation area says when the objects take effect or stop.
    let served = sides.from.profile.multi_cidr() && sides.to.profile.multi_cidr();
    let creates = |report: &Report| {
        let mut answers = by_document(report);
        answers.retain(|_, a| served || !a.object.starts_with("ServiceCIDR "));
        answers
    };
    compare(&creates(today_report), &creates(fresh_report), When::Create, &mut seen);
    let release = sides.to.version.to_string();
    for ((object, kind, message), (whens, before, source)) in seen.0 {
        let (severity, text) = kind.describe(&release, &whens, &message, before.as_deref());
        let mut evidence = message.clone();
        if let Some(before) = &before {
            evidence.push(' ');
            evidence.push_str(before);
        }
        let causes = crossed.for_apiserver_message(&object, &evidence);
        out.push(
            Finding::new(Area::Apiserver, severity, text)
                .about(object)
                .caused_by(&causes)
                .at(source),
        );
    }
    stored_changes(&crossed, today, &base_world, &next_world, migrated, &release, out);
}

/// Every stored object written again as it is: the Services in key order (with the status the
/// scenario gave them, so the load balancer's addresses stay), then the EndpointSlices.
fn next_writes(world: &World) -> Vec<Object> {
    let services = world.services.iter().map(|(key, stored)| {
        let mut service = (*stored.service).clone();
        if let Some(status) = world.service_status.get(key) {
            service.status = status.clone();
        }
        Object::Service(Arc::new(Located {
            value: service,
            api_version: "v1".to_owned(),
            positions: stored.positions.clone(),
        }))
    });
    let slices = world.endpoint_slices.iter().map(|s| Object::EndpointSlice(Arc::clone(s)));
    services.chain(slices).collect()
}

/// When a request is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum When {
    NextWrite,
    Create,
}

/// What differs about one object between the releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// Refused at the target, accepted today.
    Refused,
    /// Refused at both, in other words.
    RefusalText,
    /// Accepted at the target, refused today.
    Accepted,
    /// A warning the target gives and today does not.
    WarningNew,
    /// A warning today gives and the target does not.
    WarningGone,
}

impl Kind {
    /// The severity and the message of an observation.
    fn describe(
        self,
        release: &str,
        whens: &[When],
        message: &str,
        before: Option<&str>,
    ) -> (Impact, String) {
        let request = match whens {
            [When::NextWrite] => "its next write",
            [When::Create] => "it as a fresh create",
            _ => "its next write and a fresh create",
        };
        let before = before.unwrap_or_default();
        match self {
            Kind::Refused => {
                (Impact::Breaks, format!("kube-apiserver {release} refuses {request}: {message}"))
            }
            Kind::RefusalText => (
                Impact::Note,
                format!(
                    "kube-apiserver {release} refuses {request} in other words: {message} (today: {before})"
                ),
            ),
            Kind::Accepted => (
                Impact::Note,
                format!(
                    "kube-apiserver {release} accepts {request}, which today it refuses: {before}"
                ),
            ),
            Kind::WarningNew => (
                Impact::Changes,
                format!("kube-apiserver {release} warns on {request}: Warning: {message}"),
            ),
            Kind::WarningGone => (
                Impact::Note,
                format!(
                    "kube-apiserver {release} no longer warns on {request}: Warning: {message}"
                ),
            ),
        }
    }
}

/// Observations by (object, kind, message): when they happen, today's message (for a refusal
/// in other words, or one that goes), and where the object was written.
#[derive(Default)]
struct Observations(BTreeMap<(String, Kind, String), Seen>);

/// One observation: when it happens, today's message, where the object was written.
type Seen = (Vec<When>, Option<String>, Option<Source>);

impl Observations {
    fn add(
        &mut self,
        object: &str,
        kind: Kind,
        message: String,
        before: Option<String>,
        when: When,
        source: Option<Source>,
    ) {
        let entry = self
            .0
            .entry((object.to_owned(), kind, message))
            .or_insert_with(|| (Vec::new(), before, source));
        if !entry.0.contains(&when) {
            entry.0.push(when);
            entry.0.sort_unstable();
        }
    }
}

/// One object's answer: its refusal (kube-apiserver's Status message) and its warnings.
#[derive(Debug, Default)]
struct Answer {
    object: String,
    refusal: Option<String>,
    /// The refusal's `Status.details.causes`, as `<reason> <field>: <message>`.
    causes: Vec<String>,
    warnings: Vec<String>,
    source: Option<Source>,
}

/// The answers of a report by object (each object written once: the next writes).
fn by_object(report: &Report) -> BTreeMap<String, Answer> {
    answers(report, |d| d.object.as_ref().map(object_name))
}

/// The answers of a report by document and object (a scenario may write an object many times).
fn by_document(report: &Report) -> BTreeMap<String, Answer> {
    answers(report, |d| {
        let object = d.object.as_ref()?;
        let source = d.source.as_ref()?;
        Some(format!("{}#{}#{}", source.file, source.document, object_name(object)))
    })
}

/// `Service ns/name`, `ServiceCIDR name`.
fn object_name(object: &ObjectRef) -> String {
    if object.namespace.is_empty() {
        format!("{} {}", object.kind, object.name)
    } else {
        format!("{} {}/{}", object.kind, object.namespace, object.name)
    }
}

/// What kube-apiserver answered, grouped by `key`: errors (the pipeline's refusals of
/// Services, EndpointSlices and ServiceCIDRs) and warnings (reasons `Warning` and
/// `UnknownField`: svclab's own advisories and notes are not kube-apiserver's).
fn answers(
    report: &Report,
    key: impl Fn(&Diagnostic) -> Option<String>,
) -> BTreeMap<String, Answer> {
    let mut errors: BTreeMap<String, (ObjectRef, Vec<&Diagnostic>)> = BTreeMap::new();
    let mut out: BTreeMap<String, Answer> = BTreeMap::new();
    for d in &report.diagnostics {
        let Some(object) = &d.object else { continue };
        if !matches!(object.kind.as_str(), "Service" | "EndpointSlice" | "ServiceCIDR") {
            continue;
        }
        let Some(k) = key(d) else { continue };
        let answer = out.entry(k.clone()).or_insert_with(|| Answer {
            object: object_name(object),
            source: d.source.as_ref().map(|s| Source { column: 1, ..s.clone() }),
            ..Answer::default()
        });
        match d.severity {
            Severity::Error => {
                errors.entry(k).or_insert_with(|| (object.clone(), Vec::new())).1.push(d)
            }
            // kube-apiserver's own warnings and the decoder's unknown fields, which it sends the
            // same way (`Warning:` lines in kubectl).
            Severity::Warning if d.reason == "Warning" || d.reason == "UnknownField" => {
                answer.warnings.push(d.message.clone());
            }
            _ => {}
        }
    }
    for (k, (object, list)) in errors {
        if let Some(answer) = out.get_mut(&k) {
            answer.refusal = Some(status_message(&object, &list));
            answer.causes =
                list.iter().map(|d| format!("{} {}: {}", d.reason, d.field, d.message)).collect();
        }
    }
    out
}

/// kube-apiserver's `Status.message` of a refusal: `<Kind> "<name>" is invalid: <causes>` for
/// field errors (one as it is, several as `[a, b]`, duplicates dropped), else the messages.
pub(crate) fn status_message(object: &ObjectRef, errors: &[&Diagnostic]) -> String {
    let mut fields: Vec<&str> = Vec::new();
    let mut others: Vec<&str> = Vec::new();
    for d in errors {
        let list = if d.reason.starts_with("FieldValue") && d.reason != "FieldValueTypeInvalid" {
            &mut fields
        } else {
            &mut others
        };
        if !list.contains(&d.message.as_str()) {
            list.push(&d.message);
        }
    }
    let mut parts: Vec<String> = others.iter().map(|m| (*m).to_owned()).collect();
    if !fields.is_empty() {
        let causes = if fields.len() == 1 {
            fields[0].to_owned()
        } else {
            format!("[{}]", fields.join(", "))
        };
        parts.insert(
            0,
            format!(
                "{} {} is invalid: {causes}",
                object.kind,
                crate::field::go_quote(&object.name)
            ),
        );
    }
    parts.join("; ")
}

/// Today's answers against the target's, for the same requests.
fn compare(
    today: &BTreeMap<String, Answer>,
    target: &BTreeMap<String, Answer>,
    when: When,
    seen: &mut Observations,
) {
    let empty = Answer::default();
    let keys: std::collections::BTreeSet<&String> = today.keys().chain(target.keys()).collect();
    for key in keys {
        let (a, b) = (today.get(key).unwrap_or(&empty), target.get(key).unwrap_or(&empty));
        let object = if b.object.is_empty() { &a.object } else { &b.object };
        let source = b.source.clone().or_else(|| a.source.clone());
        match (&a.refusal, &b.refusal) {
            (None, Some(refusal)) => {
                seen.add(object, Kind::Refused, refusal.clone(), None, when, source.clone())
            }
            (Some(old), None) => seen.add(
                object,
                Kind::Accepted,
                String::new(),
                Some(old.clone()),
                when,
                source.clone(),
            ),
            (Some(old), Some(new)) if without_picks(old) != without_picks(new) => {
                seen.add(
                    object,
                    Kind::RefusalText,
                    new.clone(),
                    Some(old.clone()),
                    when,
                    source.clone(),
                );
            }
            // The same message from other causes (a cause listed once more or less, which the
            // message's aggregate folds away but `kubectl get -o json` shows).
            (Some(old), Some(new))
                if a.causes
                    .iter()
                    .map(|c| without_picks(c))
                    .ne(b.causes.iter().map(|c| without_picks(c))) =>
            {
                let new = format!("{new} ({} causes: {})", b.causes.len(), b.causes.join("; "));
                let old = format!("{old} ({} causes: {})", a.causes.len(), a.causes.join("; "));
                seen.add(object, Kind::RefusalText, new, Some(old), when, source.clone());
            }
            _ => {}
        }
        // A refused request returns its warnings too (the decoder's unknown fields among
        // them): kubectl prints them before the error. The apiserver oracles, in-process and a
        // real kube-apiserver, answer so (`cargo xtask oracle --area upgrade` found the
        // rehearsal silent about them).
        for w in b.warnings.iter().filter(|w| !a.warnings.contains(w)) {
            seen.add(object, Kind::WarningNew, w.clone(), None, when, source.clone());
        }
        for w in a.warnings.iter().filter(|w| !b.warnings.contains(w)) {
            seen.add(object, Kind::WarningGone, w.clone(), None, when, source.clone());
        }
    }
}

/// A refusal's text with what kube-apiserver picked for the request masked. A refusal can name
/// a ClusterIP or node port allocated for the request itself (`spec.clusterIPs[0]: Invalid
/// value: "10.96.1.1": expected an IPv6 value …` for a family that refuses its pick,
/// `spec.ports[1].nodePort: Duplicate value: 30086` for two ports given one pick, the
/// `IPAddress.networking.k8s.io "10.96.1.2"` a pick failed to write), and upstream draws those
/// at random (`pkg/registry/core/service/ipallocator` and `portallocator`, `AllocateNext`), so
/// two releases name different ones for the same request. svclab's own picks are
/// deterministic but move with the static bands (ServiceIPStaticSubrange in 1.25,
/// ServiceNodePortStaticSubrange in 1.28), which is no refusal in other words. A value the
/// document gives is the same at both releases, so masking these fields hides nothing else.
fn without_picks(message: &str) -> String {
    const FIELDS: [&str; 3] = ["spec.clusterIP", "nodePort", "NodePort"];
    const IP_ADDRESS: &str = "IPAddress.networking.k8s.io ";
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some((at, marker)) =
        FIELDS.iter().chain([&IP_ADDRESS]).filter_map(|m| rest.find(m).map(|at| (at, *m))).min()
    {
        out.push_str(&rest[..at + marker.len()]);
        rest = &rest[at + marker.len()..];
        let value = if marker == IP_ADDRESS {
            Some(rest)
        } else {
            // `spec.clusterIPs[N]`, then the cause's value.
            let field_end = rest.strip_prefix('s').unwrap_or(rest);
            let field_end = field_end
                .strip_prefix('[')
                .and_then(|r| r.split_once(']'))
                .filter(|(i, _)| i.bytes().all(|b| b.is_ascii_digit()))
                .map_or(field_end, |(_, r)| r);
            ["Invalid value: ", "Duplicate value: "]
                .iter()
                .find_map(|kind| field_end.strip_prefix(": ")?.strip_prefix(kind))
        };
        let Some(value) = value else { continue };
        let after = match value.strip_prefix('"') {
            Some(quoted) => quoted.split_once('"').map(|(_, after)| after),
            None => Some(value.trim_start_matches(|c: char| c.is_ascii_digit()))
                .filter(|after| after.len() < value.len()),
        };
        let Some(after) = after else { continue };
        out.push_str(&rest[..rest.len() - value.len()]);
        out.push('…');
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Fields the target stores differently on the next write (its defaulting, which kube-apiserver
/// also applies when it reads the object, and the registry's preparation), beyond what the
/// same write changes today.
fn stored_changes(
    crossed: &Crossed,
    today: &World,
    base: &World,
    next: &World,
    migrated: &World,
    release: &str,
    out: &mut Vec<Finding>,
) {
    let causes = defaulting_causes(crossed);
    for (key, stored) in &today.services {
        let after = next.services.get(key).or_else(|| migrated.services.get(key));
        let Some(after) = after else { continue };
        let same_today = base
            .services
            .get(key)
            .map(|s| spec_changes(&stored.service, &s.service))
            .unwrap_or_default();
        let changes: Vec<String> = spec_changes(&stored.service, &after.service)
            .into_iter()
            .filter(|c| !same_today.contains(c))
            .collect();
        if changes.is_empty() {
            continue;
        }
        out.push(
            Finding::new(
                Area::Apiserver,
                Impact::Changes,
                format!(
                    "kube-apiserver {release} stores the Service differently on its next write (and returns it so on every read): {}",
                    changes.join("; ")
                ),
            )
            .about(format!("Service {}", key_name(key)))
            .caused_by(&causes)
            .at(Some(stored.positions.source_of(""))),
        );
    }
}

fn key_name(key: &ServiceKey) -> String {
    format!("{}/{}", key.namespace, key.name)
}

/// The causes of a changed stored object: the crossed rows about defaulting and the Service
/// strategy's preparation, the crossed gates; else whatever else reaches kube-apiserver.
fn defaulting_causes(crossed: &Crossed) -> Vec<Cause> {
    let rows: Vec<Cause> = crossed
        .validation
        .iter()
        .filter(|(_, row)| {
            ["defaults.go", "SetDefaults", "strategy.go", "PrepareFor", "dropDisabled"]
                .iter()
                .any(|m| row.upstream.contains(m))
        })
        .map(|(table, row)| Crossed::validation_cause(table, row))
        .collect();
    let mut causes = rows;
    causes.extend(crossed.gates.iter().cloned());
    if causes.is_empty() { crossed.apiserver_profile() } else { causes }
}

/// The fields of a Service's spec that differ, as `path: old → new`.
pub(crate) fn spec_changes(a: &Service, b: &Service) -> Vec<String> {
    let mut out = Vec::new();
    let (x, y) = (&a.spec, &b.spec);
    let mut field = |path: &str, old: String, new: String| {
        if old != new {
            out.push(format!("{path}: {old} → {new}"));
        }
    };
    let text = |s: &str| if s.is_empty() { "(unset)".to_owned() } else { format!("{s:?}") };
    let opt = |s: &Option<String>| {
        s.as_deref().map_or_else(|| "(unset)".to_owned(), |s| format!("{s:?}"))
    };
    let list = |l: &[String]| format!("{l:?}");
    field("spec.type", text(&x.type_), text(&y.type_));
    field("spec.clusterIPs", list(&x.cluster_ips), list(&y.cluster_ips));
    field("spec.ipFamilies", list(&x.ip_families), list(&y.ip_families));
    field("spec.ipFamilyPolicy", opt(&x.ip_family_policy), opt(&y.ip_family_policy));
    field(
        "spec.externalTrafficPolicy",
        text(&x.external_traffic_policy),
        text(&y.external_traffic_policy),
    );
    field(
        "spec.internalTrafficPolicy",
        opt(&x.internal_traffic_policy),
        opt(&y.internal_traffic_policy),
    );
    field("spec.sessionAffinity", text(&x.session_affinity), text(&y.session_affinity));
    field(
        "spec.sessionAffinityConfig",
        format!("{:?}", x.session_affinity_config),
        format!("{:?}", y.session_affinity_config),
    );
    let flag = |v: Option<bool>| v.map_or_else(|| "(unset)".to_owned(), |v| v.to_string());
    field(
        "spec.allocateLoadBalancerNodePorts",
        flag(x.allocate_load_balancer_node_ports),
        flag(y.allocate_load_balancer_node_ports),
    );
    field("spec.loadBalancerClass", opt(&x.load_balancer_class), opt(&y.load_balancer_class));
    field("spec.trafficDistribution", opt(&x.traffic_distribution), opt(&y.traffic_distribution));
    field(
        "spec.healthCheckNodePort",
        x.health_check_node_port.to_string(),
        y.health_check_node_port.to_string(),
    );
    field("spec.externalIPs", list(&x.external_ips), list(&y.external_ips));
    field("spec.loadBalancerIP", text(&x.load_balancer_ip), text(&y.load_balancer_ip));
    field(
        "spec.loadBalancerSourceRanges",
        list(&x.load_balancer_source_ranges),
        list(&y.load_balancer_source_ranges),
    );
    field("spec.externalName", text(&x.external_name), text(&y.external_name));
    if x.ports.len() != y.ports.len() {
        field("spec.ports", format!("{} ports", x.ports.len()), format!("{} ports", y.ports.len()));
    } else {
        for (i, (p, q)) in x.ports.iter().zip(&y.ports).enumerate() {
            field(&format!("spec.ports[{i}].protocol"), text(&p.protocol), text(&q.protocol));
            field(
                &format!("spec.ports[{i}].targetPort"),
                format!("{:?}", p.target_port),
                format!("{:?}", q.target_port),
            );
            field(
                &format!("spec.ports[{i}].nodePort"),
                p.node_port.to_string(),
                q.node_port.to_string(),
            );
            field(
                &format!("spec.ports[{i}].appProtocol"),
                opt(&p.app_protocol),
                opt(&q.app_protocol),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::without_picks;

    #[track_caller]
    fn check(today: &str, target: &str, same: bool) {
        assert_eq!(without_picks(today) == without_picks(target), same, "{today}\n{target}");
    }

    #[test]
    fn picks_are_masked_and_given_values_are_not() {
        let family = |ip: &str| {
            format!(
                "Service \"dns\" is invalid: spec.clusterIPs[0]: Invalid value: \"{ip}\": expected an IPv6 value as indicated by `ipFamilies[0]`"
            )
        };
        check(&family("10.96.0.1"), &family("10.96.1.1"), true);
        let ports = |port: u16| {
            format!(
                "Service \"web\" is invalid: [spec.ports[1].nodePort: Duplicate value: {port}, spec.ports[1]: Duplicate value: core.ServicePort{{Port:53}}]"
            )
        };
        check(&ports(30000), &ports(30086), true);
        let write = |ip: &str| {
            format!(
                "failed to allocate IP: IPAddress.networking.k8s.io \"{ip}\" is invalid: spec.parentRef.name: Required value"
            )
        };
        check(&write("10.96.1.1"), &write("10.96.1.2"), true);
        // What else the message says still counts.
        check(&family("10.96.0.1"), &family("10.96.0.1").replace("IPv6", "IPv4"), false);
        let timeout = |n: u32| {
            format!(
                "spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: {n}: must be greater than 0"
            )
        };
        check(&timeout(86401), &timeout(0), false);
        let range = |cidr: &str| {
            format!(
                "spec.clusterIPs: Invalid value: [\"10.0.0.1\"]: failed to allocate IP 10.0.0.1: provided IP is not in the valid range. The range of valid IPs is {cidr}"
            )
        };
        check(&range("10.96.0.0/12"), &range("10.0.0.0/16"), false);
    }
}
