//! Unit tests of the tracer: rule parsing in both spellings, branching, masquerade.

use super::*;

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
}

#[test]
fn unknown_destination_has_no_service() {
    let out = check(PAYLOAD, "10.0.0.5", "172.30.0.9", 80);
    assert_eq!(out, vec![("no service".to_owned(), None, false, 1.0)]);
}
