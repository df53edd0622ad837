//! A finding cites the rows that produced it, not every row its release step crosses: a
//! kube-proxy row is a cause of a Service port's rules where setting it back takes them back, a
//! row only kube-proxy's startup validation reads is none of a kube-proxy that starts, and a
//! refusal cites the table of its object's kind.

use std::collections::BTreeSet;

use super::Rehearsal;

/// The causes the findings of `area` cite, crossing `from` → `to`.
#[track_caller]
fn check(scenario: &str, (from, to): (&str, &str), area: &str, expected: &[&str]) {
    let report = Rehearsal { scenario, from, to, ..Rehearsal::default() }.run();
    let cited: BTreeSet<&str> = report
        .findings
        .iter()
        .filter(|f| f.area.as_str() == area)
        .flat_map(|f| f.causes.iter().map(String::as_str))
        .collect();
    assert_eq!(cited.into_iter().collect::<Vec<_>>(), expected, "{}", report.to_text());
}

/// One Service with one endpoint, kube-proxy in iptables mode.
const SERVICE: &str = "apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  clusterIP: 10.96.0.10
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: default, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{port: 8080, protocol: TCP}]
endpoints: [{addresses: [10.244.1.5]}]
";

#[test]
fn kube_proxy_findings_cite_the_row_that_changed_the_rules() {
    // 1.36 → 1.37 crosses IptablesRandomFullyAlways (the MASQUERADE rule), NodePortAddressKeywords
    // (no keyword is written here) and IpvsModeGated (a startup check of a mode not used).
    check(SERVICE, ("1.36", "1.37"), "kubeProxy", &["proxy:IptablesRandomFullyAlways"]);
    // Back to 1.36, KubeProxyIPVS's default cannot be set back (1.36's kube-proxy refuses the
    // gate), so the attribution keeps it, as it keeps any gate it cannot try.
    check(
        SERVICE,
        ("1.37", "1.36"),
        "kubeProxy",
        &["proxy:IptablesRandomFullyAlways", "proxyGate:KubeProxyIPVS"],
    );
}

#[test]
fn a_service_cidr_refusal_cites_the_service_cidr_row() {
    // 1.33 prints the bad value of a pair of one family as the list, not the whole spec.
    let cidr = "apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: \"RELEASE\"
featureGates: {MultiCIDRServiceAllocator: true}
---
apiVersion: networking.k8s.io/v1beta1
kind: ServiceCIDR
metadata: {name: extra}
spec:
  cidrs: [\"10.100.0.0/24\", \"10.101.0.0/24\"]
";
    check(cidr, ("1.32", "1.33"), "apiserver", &["validation:ServiceCidrStrictSpec"]);
}
