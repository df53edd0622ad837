//! Unit tests of the tracer: rule parsing in both spellings, branching, masquerade.

use super::*;
use crate::net::IpFamily;

const PAYLOAD: &str = "*nat
:KUBE-SERVICES - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-SVC-A - [0:0]
:KUBE-SEP-1 - [0:0]
:KUBE-SEP-2 - [0:0]
-A KUBE-SERVICES -m comment --comment \"ns/s cluster IP\" -m tcp -p tcp -d 172.30.0.1 --dport 80 -j KUBE-SVC-A
-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
-A KUBE-POSTROUTING -j MASQUERADE
-A KUBE-SVC-A -m tcp -p tcp -d 172.30.0.1 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A KUBE-SVC-A -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-1
-A KUBE-SVC-A -j KUBE-SEP-2
-A KUBE-SEP-1 -m tcp -p tcp -j DNAT --to-destination 10.1.0.1:8080
-A KUBE-SEP-2 -m tcp -p tcp -j DNAT --to-destination 10.1.0.2:8080
COMMIT
";

/// Traces `src -> dst:dport` over `rules` on a node with address 192.168.0.2 and returns
/// (verdict, endpoint, masquerade, probability) per outcome.
fn check(
    rules: &str,
    src: &str,
    dst: &str,
    dport: u16,
) -> Vec<(String, Option<String>, bool, f64)> {
    let mut config = ProxyConfig::new(IpFamily::V4);
    config.node_ip = Some("192.168.0.2".parse().unwrap());
    config.host_addresses = vec!["192.168.0.2".parse().unwrap(), "127.0.0.1".parse().unwrap()];
    let request =
        TraceRequest { src: src.into(), dst: dst.into(), dport, ..TraceRequest::default() };
    let report = trace_text(rules, &config, &request);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    report
        .outcomes
        .into_iter()
        .map(|o| (o.verdict, o.endpoint, o.masquerade, o.probability))
        .collect()
}

#[test]
fn pod_to_cluster_ip_splits_evenly_without_masquerade() {
    let out = check(PAYLOAD, "10.0.0.5", "172.30.0.1", 80);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0], ("endpoint".into(), Some("10.1.0.1:8080".into()), false, 0.5));
    assert_eq!(out[1], ("endpoint".into(), Some("10.1.0.2:8080".into()), false, 0.5));
}

#[test]
fn node_to_cluster_ip_is_masqueraded_on_output_path() {
    let out = check(PAYLOAD, "192.168.0.2", "172.30.0.1", 80);
    assert!(out.iter().all(|o| o.2 && o.0 == "endpoint"));
}

#[test]
fn iptables_save_spelling_is_understood() {
    let saved = PAYLOAD
        .replace(
            "-m tcp -p tcp -d 172.30.0.1 --dport 80 -j KUBE-SVC-A",
            "-d 172.30.0.1/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-A",
        )
        .replace("-j MARK --or-mark 0x4000", "-j MARK --set-xmark 0x4000/0x4000")
        .replace("-j MARK --xor-mark 0x4000", "-j MARK --set-xmark 0x4000/0x0");
    let out = check(&saved, "192.168.0.2", "172.30.0.1", 80);
    assert_eq!(out.len(), 2);
    assert!(out.iter().all(|o| o.2));
    // The command's long aliases (kubelet's 1.24 to 1.26 `--dst ... ! --src ...`).
    let aliases = PAYLOAD.replace("-d 172.30.0.1 --dport 80", "--dst 172.30.0.1 --dport 80");
    assert_eq!(check(&aliases, "10.0.0.5", "172.30.0.1", 80).len(), 2);
    assert_eq!(
        check(&aliases, "10.0.0.5", "172.30.0.9", 80),
        vec![("no service".to_owned(), None, false, 1.0)]
    );
}

#[test]
fn unknown_destination_has_no_service() {
    let out = check(PAYLOAD, "10.0.0.5", "172.30.0.9", 80);
    assert_eq!(out, vec![("no service".to_owned(), None, false, 1.0)]);
}

#[test]
fn nftables_trace_matches_iptables_trace() {
    use crate::manifest::{Input as In, Object, parse};
    use crate::proxy::{DetectLocal, ProxyMode, render_objects};
    let yaml = "apiVersion: v1\nkind: Service\nmetadata: {namespace: ns1, name: web}\nspec:\n  type: LoadBalancer\n  clusterIP: 172.30.0.41\n  loadBalancerSourceRanges: [203.0.113.0/25]\n  ports: [{name: http, port: 80, nodePort: 30080}]\nstatus: {loadBalancer: {ingress: [{ip: 5.6.7.8}]}}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: ns1, name: web-1, labels: {kubernetes.io/service-name: web}}\naddressType: IPv4\nendpoints: [{addresses: [10.180.0.1]}, {addresses: [10.180.0.2]}]\nports: [{name: http, port: 8080, protocol: TCP}]\n---\napiVersion: v1\nkind: Service\nmetadata: {namespace: ns1, name: empty}\nspec:\n  clusterIP: 172.30.0.42\n  ports: [{port: 80}]\n";
    let scenario = parse(&[In::new("t.yaml", yaml)]);
    let (mut services, mut slices) = (Vec::new(), Vec::new());
    for o in &scenario.objects {
        match o {
            Object::Service(s) => services.push(&s.value),
            Object::EndpointSlice(s) => slices.push(&s.value),
            _ => {}
        }
    }
    let mut config = ProxyConfig::new(IpFamily::V4);
    config.node_ip = Some("192.168.0.2".parse().unwrap());
    config.host_addresses = vec!["192.168.0.2".parse().unwrap(), "127.0.0.1".parse().unwrap()];
    config.detect_local = DetectLocal::Cidr("10.0.0.0/8".parse().unwrap());
    let ipt = render_objects(&services, &slices, &[], &config, ProxyMode::Iptables, false).text;
    let nft = render_objects(&services, &slices, &[], &config, ProxyMode::Nftables, false).text;
    for (src, dst, dport) in [
        ("10.0.0.5", "172.30.0.41", 80),
        ("192.168.0.2", "172.30.0.41", 80),
        ("203.0.113.9", "5.6.7.8", 80),
        ("198.51.100.1", "5.6.7.8", 80),
        ("198.51.100.1", "192.168.0.2", 30080),
        ("10.0.0.5", "172.30.0.42", 80),
        ("10.0.0.5", "172.30.0.99", 80),
    ] {
        let request =
            TraceRequest { src: src.into(), dst: dst.into(), dport, ..TraceRequest::default() };
        let a = trace_text(&ipt, &config, &request);
        let b = trace_nft_text(&nft, &config, &request);
        assert!(b.warnings.is_empty(), "{:?}", b.warnings);
        let fates = |r: &TraceReport| {
            r.outcomes
                .iter()
                .map(|o| (o.verdict.clone(), o.endpoint.clone(), o.masquerade, o.probability))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            fates(&a),
            fates(&b),
            "{src} -> {dst}:{dport}\n{}\n{}",
            a.to_text(),
            b.to_text()
        );
        assert!(!b.outcomes.is_empty());
    }
}

#[test]
fn foreign_rules_in_a_dump_are_honoured_or_reported() {
    let dump = format!(
        "*mangle\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n-A FORWARD -p tcp -m multiport --dports 22,8000:9000 -j DROP\n-A FORWARD -j ACCEPT\nCOMMIT\n{}",
        PAYLOAD.replace(
            "COMMIT\n",
            ":PREROUTING ACCEPT [0:0]\n-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\nCOMMIT\n"
        )
    );
    // The DNATed port 8080 hits the multiport DROP in FORWARD.
    let out = check(&dump, "10.0.0.5", "172.30.0.1", 80);
    assert!(out.iter().all(|o| o.0 == "DROP"), "{out:?}");
    let mut config = ProxyConfig::new(IpFamily::V4);
    config.host_addresses = vec!["192.168.0.2".parse().unwrap()];
    let odd = "*filter\n:FORWARD ACCEPT [0:0]\n-A FORWARD -m set --match-set blocked src -j DROP\nCOMMIT\n";
    let request = TraceRequest {
        src: "10.0.0.5".into(),
        dst: "10.9.9.9".into(),
        dport: 1,
        ..TraceRequest::default()
    };
    let report = trace_text(odd, &config, &request);
    assert!(report.warnings.iter().any(|w| w.contains("\"set\"")), "{:?}", report.warnings);
}

#[test]
fn builtin_chain_policy_applies_at_the_end() {
    let dump = format!("*filter\n:FORWARD DROP [0:0]\nCOMMIT\n{PAYLOAD}");
    let out = check(&dump, "10.0.0.5", "172.30.0.1", 80);
    assert!(!out.is_empty() && out.iter().all(|o| o.0 == "DROP"), "{out:?}");
}

#[test]
fn a_long_chain_is_walked_through_its_destination_index_alike() {
    // 200 Services before the one traced and a catch-all rule among them: the index passes
    // over the other destinations, never over a rule without one.
    let mut rules = String::new();
    for i in 0..200 {
        rules.push_str(&format!(
            "-A KUBE-SERVICES -m comment --comment \"ns/s{i} cluster IP\" -m tcp -p tcp -d 172.31.{}.{} --dport 80 -j KUBE-MARK-MASQ\n",
            i / 250,
            i % 250 + 1
        ));
        if i == 100 {
            rules.push_str(
                "-A KUBE-SERVICES -m tcp -p tcp -d 172.30.0.1/32 --dport 81 -j KUBE-SVC-A\n",
            );
        }
    }
    let long = PAYLOAD.replace("-A KUBE-MARK-MASQ -j", &format!("{rules}-A KUBE-MARK-MASQ -j"));
    assert!(rules::parse(&long).destination_index("nat", "KUBE-SERVICES").is_some());
    assert_eq!(
        check(&long, "10.0.0.5", "172.30.0.1", 80),
        check(PAYLOAD, "10.0.0.5", "172.30.0.1", 80)
    );
    // A rule of a network, not a host, is never passed over.
    let network = long.replace("-d 172.30.0.1/32 --dport 81", "-d 172.30.0.0/24 --dport 80");
    let out = check(&network, "10.0.0.5", "172.30.0.7", 80);
    assert!(out.len() == 2 && out.iter().all(|o| o.0 == "endpoint"), "{out:?}");
    assert_eq!(
        check(&long, "10.0.0.5", "172.30.0.9", 80),
        vec![("no service".to_owned(), None, false, 1.0)]
    );
}
