//! `svclab upgrade`: the same bytes in both engines, exit status 1 exactly when a finding breaks
//! something, the `UpgradeReport` JSON contract (ARCHITECTURE.md, "Contracts"), `--to-profile`
//! read from a file and `--diff`.

use std::path::Path;

use serde_json::Value;

use crate::support::{Run, svclab};

/// A 1.27 cluster that sets a gate 1.28 removed: kube-apiserver 1.28 does not start.
const REMOVED_GATE: &str = "apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: \"1.27\"
featureGates: {ServiceIPStaticSubrange: true}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  ports: [{port: 80}]
";

/// A 1.33 cluster with a NodePort Service and its endpoints, kube-proxy in iptables mode.
const NODE_PORT: &str = "apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: \"1.33\"
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clusterCIDR: 10.244.0.0/16
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  type: NodePort
  selector: {app: web}
  clusterIP: 10.96.0.20
  ports: [{name: http, port: 80, targetPort: 8080, nodePort: 30080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: default, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
- addresses: [10.244.0.5]
";

/// Runs `svclab upgrade ARGS -` with the scenario on standard input in both engines, checks
/// that they print the same bytes and exit alike, and that the exit status is `code`.
#[track_caller]
fn check(args: &[&str], scenario: &str, code: u8) -> Run {
    let run = |engine: &str| {
        let mut argv = vec!["--engine", engine, "upgrade"];
        argv.extend_from_slice(args);
        argv.push("-");
        svclab(&argv, scenario)
    };
    let (native, plugin) = (run("native"), run("plugin"));
    assert_eq!(native.code, code, "svclab upgrade {args:?}\n{}{}", native.stdout, native.stderr);
    assert_eq!(native.stdout, plugin.stdout, "the engines differ on svclab upgrade {args:?}");
    assert_eq!(native.code, plugin.code, "{}", plugin.stderr);
    native
}

/// The findings of a report of the contract, checked field by field.
#[track_caller]
fn contract(json: &str) -> Vec<Value> {
    let report: Value = serde_json::from_str(json).expect("the report is JSON");
    assert_eq!(report["apiVersion"], "svclab.dev/v1alpha1");
    assert_eq!(report["kind"], "UpgradeReport");
    for side in ["from", "to"] {
        assert!(report[side]["kubernetesVersion"].is_string(), "{side}: {report}");
        let mode = report[side]["proxyMode"].as_str().expect("proxyMode");
        assert!(["iptables", "nftables"].contains(&mode), "{mode}");
    }
    let findings = report["findings"].as_array().expect("findings").clone();
    for finding in &findings {
        let area = finding["area"].as_str().expect("area");
        assert!(
            ["featureGates", "apiserver", "allocation", "kubeProxy", "ranges"].contains(&area),
            "{area}"
        );
        let severity = finding["severity"].as_str().expect("severity");
        assert!(["breaks", "changes", "note"].contains(&severity), "{severity}");
        assert!(finding["object"].is_string() || finding["object"].is_null(), "{finding}");
        assert!(!finding["message"].as_str().expect("message").is_empty(), "{finding}");
        assert!(!finding["upstream"].as_str().expect("upstream").is_empty(), "{finding}");
    }
    let breaks = findings.iter().filter(|f| f["severity"] == "breaks").count();
    assert_eq!(report["summary"]["breaks"], breaks, "{report}");
    findings
}

#[test]
fn a_removed_gate_breaks_with_kube_apiservers_error_in_text_and_json() {
    let text = check(&["--to", "1.28"], REMOVED_GATE, 1).stdout;
    assert!(text.starts_with("from: Kubernetes 1.27 (1.27.16), kube-proxy iptables\n"), "{text}");
    assert!(
        text.contains(
            "breaks  ClusterProfile: kube-apiserver 1.28 does not start: Error: invalid argument \"ServiceIPStaticSubrange=true\" for \"--feature-gates\" flag: unrecognized feature gate: ServiceIPStaticSubrange"
        ),
        "{text}"
    );
    let json = check(&["--to", "1.28", "--output", "json"], REMOVED_GATE, 1).stdout;
    let findings = contract(&json);
    let gate = findings
        .iter()
        .find(|f| f["area"] == "featureGates" && f["severity"] == "breaks")
        .expect("the removed gate's finding");
    assert_eq!(gate["object"], "ClusterProfile");
    assert!(gate["upstream"].as_str().unwrap_or_default().contains("removed in 1.28"), "{gate}");
}

#[test]
fn a_release_to_itself_finds_nothing_and_exits_0() {
    let text = check(&["--to", "1.33"], NODE_PORT, 0).stdout;
    assert!(text.contains("\nno findings: nothing this scenario holds meets a change\n"), "{text}");
    assert!(contract(&check(&["--to", "1.33", "-o", "json"], NODE_PORT, 0).stdout).is_empty());
}

#[test]
fn a_switch_to_nftables_loses_localhost_node_ports() {
    let args = ["--to", "1.33", "--proxy-mode", "nftables", "--output", "json"];
    let findings = contract(&check(&args, NODE_PORT, 1).stdout);
    let lost = findings
        .iter()
        .find(|f| f["area"] == "kubeProxy" && f["severity"] == "breaks")
        .expect("a probe that no longer reaches the Service");
    assert_eq!(lost["object"], "Service default/web");
    let message = lost["message"].as_str().unwrap_or_default();
    assert!(message.contains("NodePort 127.0.0.1:30080 from the node"), "{message}");
    assert!(findings.iter().all(|f| f["causes"] == serde_json::json!(["mode"])), "{findings:?}");
}

#[test]
fn diff_adds_both_rulesets() {
    let args = ["--to", "1.33", "--proxy-mode", "nftables", "--output", "json", "--diff"];
    let report: Value = serde_json::from_str(&check(&args, NODE_PORT, 1).stdout).expect("JSON");
    let rules = report["rules"].as_array().expect("rules with --diff");
    assert!(!rules.is_empty());
    assert!(rules[0]["before"].as_str().unwrap_or_default().contains("KUBE-SERVICES"));
    assert!(rules[0]["after"].as_str().unwrap_or_default().contains("add table ip kube-proxy"));
    let text = check(&["--to", "1.33", "--proxy-mode", "nftables", "--diff"], NODE_PORT, 1).stdout;
    assert!(text.contains("\n+add table ip kube-proxy"), "{text}");
}

#[test]
fn to_profile_is_read_from_its_file_and_rehearses_the_range_change() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("svclab-upgrade");
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let target = dir.join("target.yaml");
    std::fs::write(
        &target,
        "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"1.33\"\nserviceClusterIPRanges: [10.100.0.0/16]\n",
    )
    .expect("target profile");
    let target = target.display().to_string();
    let json = check(&["--to", "1.33", "--to-profile", &target, "-o", "json"], NODE_PORT, 1).stdout;
    let findings = contract(&json);
    assert!(findings.iter().any(|f| f["area"] == "ranges"), "{json}");
    let report: Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(report["to"]["serviceClusterIPRanges"], serde_json::json!(["10.100.0.0/16"]));
}

#[test]
fn a_release_svclab_does_not_model_is_a_usage_error() {
    let run = svclab(&["upgrade", "--to", "1.99", "-"], REMOVED_GATE);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("svclab models Kubernetes 1.24 to 1.37, not 1.99"),
        "{}",
        run.stderr
    );
}
