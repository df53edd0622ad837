//! Unit tests of the proxy renderer: chain-name hashing, marks, probabilities, selection.

use super::config::mark_string;
use super::*;
use crate::manifest::{Input, Object, parse};

/// Renders a YAML scenario (objects as written) for IPv4 with the golden fakes' settings.
fn check(yaml: &str, mode: ProxyMode, want: &[&str], unwanted: &[&str]) -> String {
    let scenario = parse(&[Input::new("t.yaml", yaml)]);
    let mut services = Vec::new();
    let mut slices = Vec::new();
    for object in &scenario.objects {
        match object {
            Object::Service(s) => services.push(&s.value),
            Object::EndpointSlice(s) => slices.push(&s.value),
            _ => {}
        }
    }
    let mut config = ProxyConfig::new(IpFamily::V4);
    config.node_name = "test-node".into();
    config.masquerade_mark = "0x4000".into();
    config.detect_local = DetectLocal::Cidr("10.0.0.0/8".parse().unwrap());
    let text = render_objects(&services, &slices, &[], &config, mode, false).text;
    for w in want {
        assert!(text.contains(w), "missing {w:?} in\n{text}");
    }
    for u in unwanted {
        assert!(!text.contains(u), "unexpected {u:?} in\n{text}");
    }
    text
}

const SVC: &str = "apiVersion: v1\nkind: Service\nmetadata: {namespace: ns1, name: svc1}\nspec:\n  clusterIP: 172.30.0.41\n  ports: [{name: p80, port: 80, protocol: TCP}]\n";

#[test]
fn hashes_match_kube_proxy() {
    assert_eq!(iptables::hash16(&["ns1/svc1:p80", "tcp"]), "XPGD46QRK7WJZT7O");
    assert_eq!(iptables::hash16(&["ns1/svc1", "tcp", "10.0.1.5:80"]), "EQCHZ7S2PJ72OHAY");
    assert_eq!(
        nftables::hashed_base("ns5/svc5/tcp/p80__10.180.0.3/80"),
        "GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80"
    );
    let long = "x".repeat(300);
    let base = nftables::hashed_base(&long);
    assert_eq!(base.len(), 240);
    assert!(base.ends_with("..."));
}

#[test]
fn mark_is_go_formatted() {
    assert_eq!(mark_string(14), "0x00004000");
    assert_eq!(mark_string(0), "0x00000001");
}

#[test]
fn no_endpoints_rejects() {
    check(
        SVC,
        ProxyMode::Iptables,
        &[
            "-A KUBE-SERVICES -m comment --comment \"ns1/svc1:p80 has no endpoints\" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j REJECT",
        ],
        &["KUBE-SVC-"],
    );
    check(
        SVC,
        ProxyMode::Nftables,
        &["comment \"ns1/svc1:p80\" : goto reject-chain"],
        &["service-ULMVA6XW"],
    );
}

#[test]
fn probabilities_for_three_endpoints() {
    let slice = "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: ns1, name: s, labels: {kubernetes.io/service-name: svc1}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.1.1]}, {addresses: [10.0.1.11]}, {addresses: [10.0.1.2]}]\nports: [{name: p80, port: 80, protocol: TCP}]\n";
    let text = check(
        &format!("{SVC}{slice}"),
        ProxyMode::Iptables,
        &["--probability 0.3333333333", "--probability 0.5000000000"],
        &[],
    );
    // Byte-wise endpoint order: 10.0.1.11:80 sorts before 10.0.1.1:80.
    let first = text.find("-> 10.0.1.11:80").unwrap();
    let second = text.find("-> 10.0.1.1:80").unwrap();
    assert!(first < second);
}
