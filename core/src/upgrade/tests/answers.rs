//! What the apiserver area compares: each side decodes the scenario at its own release, a
//! refusal that differs only in what the allocator picked is the same refusal, and ServiceCIDR
//! requests are compared only where both releases serve the API. Each was a divergence
//! `cargo xtask oracle --area upgrade` found against upstream's answers.

use super::Rehearsal;

/// The apiserver findings crossing `from` → `to`: one per expected text, each containing it.
#[track_caller]
fn check(scenario: &str, (from, to): (&str, &str), expected: &[&str]) {
    let report = Rehearsal { scenario, from, to, ..Rehearsal::default() }.run();
    let found: Vec<&str> = report
        .findings
        .iter()
        .filter(|f| f.area.as_str() == "apiserver")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(found.len(), expected.len(), "{from} → {to}: {found:#?}");
    for text in expected {
        assert!(found.iter().any(|f| f.contains(text)), "{from} → {to}: no {text:?} in {found:#?}");
    }
}

#[test]
fn an_unknown_field_is_warned_about_from_the_release_that_validates_fields() {
    // 1.24 decodes Service writes with fieldValidation=Ignore (ServerSideFieldValidation off);
    // 1.25 warns.
    let service = "apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  bogusField: 1
  ports: [{port: 80}]
";
    let warning = "warns on it as a fresh create: Warning: unknown field \"spec.bogusField\"";
    check(service, ("1.24", "1.25"), &[warning]);
    check(service, ("1.25", "1.24"), &["no longer warns on it as a fresh create"]);
    check(service, ("1.25", "1.26"), &[]);
}

#[test]
fn a_refusal_naming_a_pick_is_the_same_refusal_when_the_band_moves() {
    // A Service written again asking for IPv6 first is refused naming the IPv4 address it was
    // given; 1.25's static band moves svclab's pick (upstream draws it at random at both
    // releases).
    let service = "apiVersion: v1
kind: Service
metadata: {name: dns, namespace: default}
spec:
  ports: [{port: 53}]
---
apiVersion: v1
kind: Service
metadata: {name: dns, namespace: default}
spec:
  ipFamilies: [IPv6, IPv4]
  ports: [{port: 53}]
";
    check(service, ("1.24", "1.25"), &[]);
    // Two ports given one node port: the duplicate names the first port's pick, which 1.28's
    // node-port static band moves.
    let ports = "apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  type: NodePort
  ports: [{name: a, port: 80}, {name: b, port: 80}]
";
    check(ports, ("1.27", "1.28"), &[]);
}

#[test]
fn service_cidrs_are_compared_only_where_both_releases_serve_them() {
    let cidr = "apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: empty}
spec: {cidrs: []}
";
    check(cidr, ("1.37", "1.24"), &[]);
    check(cidr, ("1.24", "1.37"), &[]);
    // Both serve it, and both refuse it.
    check(cidr, ("1.36", "1.37"), &[]);
}
