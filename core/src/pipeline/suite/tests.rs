//! Tests of the suite format, runs, updates and exports: a suite that passes, the same suite
//! with one value changed for every kind of expectation (exactly one failure, naming the path),
//! the mistakes that must be errors rather than passes, `update` and the export round trip.

use expect_test::{Expect, expect};

use crate::manifest::Input;

use super::{ExportOptions, TestOptions, TestRun, export_test, run_tests, test_files, tree};

const FILE: &str = "tests/dns.svclab-test.yaml";
const GOLDEN: &str = "tests/node-a.rules";

/// A suite with every kind of expectation, all holding.
const SUITE: &str = r#"# A suite with every kind of expectation.
apiVersion: svclab.dev/v1alpha1
kind: TestSuite
metadata: {name: dns}
policy: {ports: {action: warn, allowedPorts: [53, 80]}}
resources: |
  apiVersion: svclab.dev/v1alpha1
  kind: ClusterProfile
  serviceClusterIPRanges: ["10.96.0.0/12"]
  seed: 42
  ---
  apiVersion: v1
  kind: Service
  metadata: {name: kube-dns, namespace: kube-system}
  spec:
    clusterIP: 10.96.0.10
    selector: {k8s-app: kube-dns}
    ports: [{name: dns, port: 53, protocol: UDP}]
  ---
  apiVersion: discovery.k8s.io/v1
  kind: EndpointSlice
  metadata:
    name: kube-dns-1
    namespace: kube-system
    labels: {kubernetes.io/service-name: kube-dns}
  addressType: IPv4
  ports: [{name: dns, port: 53, protocol: UDP}]
  endpoints:
  - {addresses: [10.244.1.10], conditions: {ready: true}, nodeName: node-a}
  - {addresses: [10.244.2.11], conditions: {ready: true}, nodeName: node-b}
  ---
  apiVersion: v1
  kind: Service
  metadata: {name: web}
  spec:
    type: NodePort
    selector: {app: web}
    ports: [{port: 8080, nodePort: 30080}]
  ---
  apiVersion: v1
  kind: Service
  metadata: {name: lb}
  spec:
    type: LoadBalancer
    loadBalancerIP: 192.0.2.7
    selector: {app: lb}
    ports: [{port: 80}]
  ---
  apiVersion: v1
  kind: Node
  metadata: {name: node-a}
  spec: {podCIDRs: [10.244.1.0/24]}
  status: {addresses: [{type: InternalIP, address: 192.168.0.2}]}
  ---
  apiVersion: kubeproxy.config.k8s.io/v1alpha1
  kind: KubeProxyConfiguration
  mode: iptables
  hostnameOverride: node-a
  clusterCIDR: 10.244.0.0/16
tests:
- name: kube-dns keeps its address  # the static band
  expect:
    objects:
    - ref: Service kube-system/kube-dns
      outcome: created
      clusterIPs: [10.96.0.10]
      band: static
      nodePorts: []
      ipFamilies: [IPv4]
      ipFamilyPolicy: SingleStack
      errors: []
      warnings: []
      violations: []
    - ref: Service web
      clusterIPs: [10.102.210.226]
      band: dynamic
      nodePorts: [30080]
      violations: [ports.allowedPorts]
    - ref: Service default/lb
      warnings:
      - "spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs)"
    rules:
      proxyMode: iptables
      node: node-a
      includes:
      - "-A KUBE-SERVICES -m comment --comment \"kube-system/kube-dns:dns cluster IP\" -m udp -p udp -d 10.96.0.10 --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU"
      excludes:
      - "-A KUBE-SERVICES -m comment --comment \"default/web has no endpoints\" -m tcp -p tcp -d 10.96.0.11 --dport 8080 -j REJECT"
      golden: node-a.rules
    traces:
    - {src: 10.244.1.5, dst: 10.96.0.10, dport: 53, protocol: udp, node: node-a, endpoints: ["10.244.1.10:53", "10.244.2.11:53"]}
    - {src: 10.244.1.5, dst: 10.96.0.99, dport: 53, protocol: udp, verdict: no-service}
- name: a port of zero is refused
  resources:
  - apiVersion: v1
    kind: Service
    metadata: {name: bad}
    spec:
      ports: [{port: 0}]
  expect:
    objects:
    - ref: Service bad
      outcome: rejected
      errors:
      - "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"
      - "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive"
"#;

/// The ruleset the suite's golden file holds: what svclab renders for node-a.
fn golden() -> String {
    let without = SUITE.replace("      golden: node-a.rules\n", "");
    let roots = tree::parse(&without).unwrap();
    let suite = &super::format::suites(FILE, &without, &roots)[0];
    let inputs: Vec<Input> =
        suite.resources.iter().map(|p| Input::new(FILE, p.text.clone())).collect();
    let (world, _) = crate::pipeline::evaluate(&inputs, &crate::pipeline::CheckOptions::default());
    crate::world::render(
        &world,
        &crate::proxy::RenderOptions::new(crate::proxy::ProxyMode::Iptables),
    )
    .unwrap()
}

fn run(suites: &[(&str, &str)], files: &[(&str, &str)], update: bool) -> TestRun {
    let suites: Vec<Input> = suites.iter().map(|(n, t)| Input::new(*n, *t)).collect();
    let files: Vec<Input> = files.iter().map(|(n, t)| Input::new(*n, *t)).collect();
    run_tests(&suites, &files, &TestOptions { update })
}

/// Runs suites (with the golden ruleset beside them) and compares the text `svclab test` prints.
#[track_caller]
fn check(suites: &[(&str, &str)], expect: Expect) {
    let golden = golden();
    expect.assert_eq(&run(suites, &[(GOLDEN, &golden)], false).to_text());
}

#[test]
fn a_suite_whose_expectations_hold_passes() {
    check(
        &[(FILE, SUITE)],
        expect![[r#"
            test dns::kube-dns keeps its address ... ok
            test dns::a port of zero is refused ... ok

            2 passed, 0 failed
        "#]],
    );
}

/// For every kind of expectation, the passing suite with one value changed fails with exactly
/// one failure, at the path of that value.
#[test]
fn one_changed_value_is_one_failure_naming_its_path() {
    let golden = golden();
    let changed_golden = golden.replace("--dport 53 -j KUBE-SVC", "--dport 54 -j KUBE-SVC");
    let mutations: &[(&str, &str, &str)] = &[
        ("outcome", "outcome: rejected", "outcome: created"),
        ("clusterIPs", "clusterIPs: [10.96.0.10]", "clusterIPs: [10.96.0.11]"),
        ("band", "band: static", "band: dynamic"),
        ("nodePorts", "nodePorts: [30080]", "nodePorts: [30081]"),
        ("ipFamilies", "ipFamilies: [IPv4]", "ipFamilies: [IPv6]"),
        ("ipFamilyPolicy", "ipFamilyPolicy: SingleStack", "ipFamilyPolicy: PreferDualStack"),
        (
            "errors",
            "65535, inclusive\"\n      - \"spec.ports[0].targetPort",
            "65536, inclusive\"\n      - \"spec.ports[0].targetPort",
        ),
        ("warnings", "instead (for example metallb", "instead (e.g. metallb"),
        ("violations", "[ports.allowedPorts]", "[ports.deniedPorts]"),
        (
            "includes",
            "-d 10.96.0.10 --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU",
            "-d 10.96.0.10 --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNX",
        ),
        (
            "excludes",
            "-d 10.96.0.11 --dport 8080 -j REJECT",
            "-d 10.102.210.226 --dport 8080 -j REJECT",
        ),
        ("golden", "", ""),
        ("endpoints", "\"10.244.2.11:53\"]", "\"10.244.2.12:53\"]"),
        ("verdict", "verdict: no-service", "verdict: DROP"),
    ];
    let mut table = String::new();
    for (kind, from, to) in mutations {
        let (suite, golden_text) = if *kind == "golden" {
            (SUITE.to_owned(), changed_golden.clone())
        } else {
            assert_eq!(SUITE.matches(from).count(), 1, "{kind}: {from}");
            (SUITE.replace(from, to), golden.clone())
        };
        let result = run(&[(FILE, &suite)], &[(GOLDEN, &golden_text)], false);
        let failures: Vec<(String, u32)> = result
            .suites
            .iter()
            .flat_map(|s| &s.tests)
            .flat_map(|t| &t.failures)
            .map(|f| (f.path.clone(), f.line))
            .collect();
        assert_eq!((result.passed, result.failed, result.errors), (1, 1, 0), "{kind}");
        assert_eq!(failures.len(), 1, "{kind}: {failures:?}");
        table.push_str(&format!("{kind}: {} (line {})\n", failures[0].0, failures[0].1));
    }
    expect![[r#"
        outcome: expect.objects[0].outcome (line 103)
        clusterIPs: expect.objects[0].clusterIPs (line 66)
        band: expect.objects[0].band (line 67)
        nodePorts: expect.objects[1].nodePorts (line 77)
        ipFamilies: expect.objects[0].ipFamilies (line 69)
        ipFamilyPolicy: expect.objects[0].ipFamilyPolicy (line 70)
        errors: expect.objects[0].errors (line 105)
        warnings: expect.objects[2].warnings (line 81)
        violations: expect.objects[1].violations (line 78)
        includes: expect.rules.includes[0] (line 86)
        excludes: expect.rules.excludes[0] (line 88)
        golden: expect.rules.golden (line 89)
        endpoints: expect.traces[0].endpoints (line 91)
        verdict: expect.traces[1].verdict (line 92)
    "#]]
    .assert_eq(&table);
}

#[test]
fn a_failure_shows_the_file_line_and_a_small_diff() {
    let suite = SUITE
        .replace("clusterIPs: [10.96.0.10]", "clusterIPs: [10.96.0.11]")
        .replace(
            "65535, inclusive\"\n      - \"spec.ports[0].targetPort",
            "65536, inclusive\"\n      - \"spec.ports[0].targetPort",
        )
        .replace(
            "--dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU",
            "--dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNX",
        );
    check(
        &[(FILE, &suite)],
        expect![[r#"
            test dns::kube-dns keeps its address ... FAILED
            test dns::a port of zero is refused ... FAILED

            failures:

            ---- dns::kube-dns keeps its address ----
            tests/dns.svclab-test.yaml:66: expect.objects[0].clusterIPs
              - 10.96.0.11
              + 10.96.0.10
            tests/dns.svclab-test.yaml:86: expect.rules.includes[0]
              - -A KUBE-SERVICES -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp -p udp -d 10.96.0.10 --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNX
              + -A KUBE-SERVICES -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp -p udp -d 10.96.0.10 --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
              note: no such line; `+` is the closest line of the same chain

            ---- dns::a port of zero is refused ----
            tests/dns.svclab-test.yaml:105: expect.objects[0].errors
              - spec.ports[0].port: Invalid value: 0: must be between 1 and 65536, inclusive
              + spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive
                spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive

            0 passed, 2 failed
        "#]],
    );
}

#[test]
fn mistakes_are_errors_never_passes() {
    let unknown_key =
        SUITE.replace("      band: static\n", "      band: static\n      clusterIP: 10.96.0.10\n");
    let empty_test = SUITE.replace(
        "- name: a port of zero is refused\n",
        "- name: checks nothing\n  expect: {}\n- name: a port of zero is refused\n",
    );
    let no_expect = SUITE.replace(
        "- name: a port of zero is refused\n",
        "- name: has no expect\n- name: a port of zero is refused\n",
    );
    let dangling = SUITE.replace("ref: Service bad", "ref: Service default/bat");
    let only_ref = SUITE.replace("    - ref: Service web\n", "    - ref: Service web\n    - ref: Service default/lb\n      warnings: []\n    - ref: Service web\n");
    let suite_key = SUITE.replace("resources: |\n", "resource: |\n");
    let missing_file = SUITE.replace("policy: {ports", "scenario: [cluster.yaml]\npolicy: {ports");
    check(
        &[
            ("tests/unknown-key.svclab-test.yaml", &unknown_key),
            ("tests/empty-test.svclab-test.yaml", &empty_test),
            ("tests/no-expect.svclab-test.yaml", &no_expect),
            ("tests/dangling.svclab-test.yaml", &dangling),
            ("tests/suite-key.svclab-test.yaml", &suite_key),
            ("tests/missing-file.svclab-test.yaml", &missing_file),
            (
                "tests/broken.svclab-test.yaml",
                "apiVersion: svclab.dev/v1alpha1\nkind: [TestSuite\n",
            ),
            (
                "tests/only-ref.svclab-test.yaml",
                &only_ref.replace("    - ref: Service default/lb\n      warnings: []\n", ""),
            ),
        ],
        expect![[r#"
            test dns::kube-dns keeps its address ... error
            test dns::a port of zero is refused ... ok
            test dns::kube-dns keeps its address ... ok
            test dns::checks nothing ... error
            test dns::a port of zero is refused ... ok
            test dns::kube-dns keeps its address ... ok
            test dns::has no expect ... error
            test dns::a port of zero is refused ... ok
            test dns::kube-dns keeps its address ... ok
            test dns::a port of zero is refused ... error
            test dns::kube-dns keeps its address ... error
            test dns::a port of zero is refused ... error
            test dns::kube-dns keeps its address ... error
            test dns::a port of zero is refused ... error
            suite broken (tests/broken.svclab-test.yaml) ... error
            test dns::kube-dns keeps its address ... error
            test dns::a port of zero is refused ... ok

            failures:

            ---- dns::kube-dns keeps its address ----
            error: tests/unknown-key.svclab-test.yaml:68:7: unknown key `expect.objects[0].clusterIP` (known here: ref, outcome, clusterIPs, band, nodePorts, ipFamilies, ipFamilyPolicy, errors, warnings, violations)

            ---- dns::checks nothing ----
            error: tests/empty-test.svclab-test.yaml:94:11: expect names no expectation (objects, rules or traces): the test would check nothing

            ---- dns::has no expect ----
            error: tests/no-expect.svclab-test.yaml:93:3: the test has no expect: it would check nothing

            ---- dns::a port of zero is refused ----
            error: tests/dangling.svclab-test.yaml:102:12: expect.objects[0].ref: `Service default/bat` names no object in the scenario

            ---- dns (tests/suite-key.svclab-test.yaml) ----
            error: tests/suite-key.svclab-test.yaml:6:1: unknown key `resource` (known here: apiVersion, kind, metadata, description, scenario, resources, policy, tests)

            ---- dns (tests/missing-file.svclab-test.yaml) ----
            error: tests/missing-file.svclab-test.yaml:5:12: cannot read `tests/cluster.yaml` (paths are relative to the suite file)

            ---- broken (tests/broken.svclab-test.yaml) ----
            error: tests/broken.svclab-test.yaml:3:1: while parsing a flow sequence, expected ',' or ']'

            ---- dns::kube-dns keeps its address ----
            error: tests/only-ref.svclab-test.yaml:74:7: expect.objects[1] names an object but expects nothing of it

            7 passed, 0 failed, 10 errors
        "#]],
    );
}

#[test]
fn update_rewrites_only_the_values_that_do_not_hold() {
    let golden = golden();
    let wrong = SUITE
        .replace("clusterIPs: [10.96.0.10]", "clusterIPs: [10.96.0.11, 10.96.0.12]")
        .replace("band: dynamic", "band: static")
        .replace("nodePorts: [30080]", "nodePorts: []")
        .replace("outcome: rejected", "outcome: created")
        .replace("\"10.244.2.11:53\"]", "\"10.244.2.12:53\"]")
        .replace("verdict: no-service", "verdict: DROP")
        .replace(
            "      - \"spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive\"\n",
            "",
        )
        .replace("violations: [ports.allowedPorts]", "violations: []");
    let stale = golden.replace("--dport 53 -j KUBE-SVC", "--dport 54 -j KUBE-SVC");
    let result = run(&[(FILE, &wrong)], &[(GOLDEN, &stale)], true);
    assert!(result.success(), "{}", result.to_text());
    let written: Vec<(&str, &str)> =
        result.updated.iter().map(|u| (u.name.as_str(), u.text.as_str())).collect();
    assert_eq!(written.len(), 2);
    assert_eq!(written[0], (FILE, SUITE));
    assert_eq!(written[1], (GOLDEN, golden.as_str()));
}

#[test]
fn update_writes_a_missing_golden_file() {
    let result = run(&[(FILE, SUITE)], &[], true);
    assert!(result.success(), "{}", result.to_text());
    assert_eq!(result.updated.len(), 1);
    assert_eq!(result.updated[0].name, GOLDEN);
}

#[test]
fn json_and_junit() {
    let suite = SUITE.replace("band: static", "band: dynamic");
    let result =
        run(&[(FILE, &suite), ("x.svclab-test.yaml", "kind: [")], &[(GOLDEN, &golden())], false);
    expect![[r#"
        {
          "passed": 1,
          "failed": 1,
          "errors": 1,
          "suites": [
            {
              "name": "dns",
              "file": "tests/dns.svclab-test.yaml",
              "tests": [
                {
                  "name": "kube-dns keeps its address",
                  "status": "failed",
                  "failures": [
                    {
                      "path": "expect.objects[0].band",
                      "line": 67,
                      "want": "dynamic",
                      "got": "static"
                    }
                  ],
                  "line": 61
                },
                {
                  "name": "a port of zero is refused",
                  "status": "passed",
                  "failures": [],
                  "line": 93
                }
              ],
              "line": 2
            },
            {
              "name": "x",
              "file": "x.svclab-test.yaml",
              "tests": [],
              "line": 2,
              "errors": [
                {
                  "file": "x.svclab-test.yaml",
                  "line": 2,
                  "column": 1,
                  "message": "while parsing a node, did not find expected node content"
                }
              ]
            }
          ]
        }
    "#]]
    .assert_eq(&result.to_json());
    expect![[r#"
        <?xml version="1.0" encoding="UTF-8"?>
        <testsuites name="svclab test" tests="3" failures="1" errors="1">
          <testsuite name="dns" tests="2" failures="1" errors="0" skipped="0" file="tests/dns.svclab-test.yaml">
            <testcase name="kube-dns keeps its address" classname="dns">
              <failure type="expectation" message="expectation not met: expect.objects[0].band">tests/dns.svclab-test.yaml:67: expect.objects[0].band
          - dynamic
          + static
        </failure>
            </testcase>
            <testcase name="a port of zero is refused" classname="dns"/>
          </testsuite>
          <testsuite name="x" tests="1" failures="0" errors="1" skipped="0" file="x.svclab-test.yaml">
            <testcase name="x.svclab-test.yaml" classname="x">
              <error type="error" message="while parsing a node, did not find expected node content">x.svclab-test.yaml:2:1: while parsing a node, did not find expected node content</error>
            </testcase>
          </testsuite>
        </testsuites>
    "#]].assert_eq(&result.to_junit());
    assert_eq!(TestRun::from_json(&result.to_json()).unwrap(), result);
}

#[test]
fn the_files_a_suite_names() {
    let suite = SUITE
        .replace("policy: {ports", "scenario: [../cluster.yaml, ./more/./b.yaml]\npolicy: {ports");
    let files = test_files(&[Input::new(FILE, suite)]);
    assert_eq!(files, ["cluster.yaml", "tests/more/b.yaml", "tests/node-a.rules"]);
}

/// The export of [`SUITE`]'s scenario, with the trace and the iptables ruleset.
fn exported() -> String {
    let scenario_start = SUITE.find("resources: |\n").unwrap() + "resources: |\n".len();
    let scenario_end = SUITE.find("tests:\n").unwrap();
    let scenario: String = SUITE[scenario_start..scenario_end]
        .lines()
        .map(|l| format!("{}\n", l.strip_prefix("  ").unwrap_or(l)))
        .collect();
    let options = ExportOptions {
        name: "exported".into(),
        trace: Some(crate::trace::TraceRequest {
            src: "10.244.1.5".into(),
            dst: "10.96.0.10".into(),
            dport: 53,
            protocol: "udp".into(),
            ..Default::default()
        }),
        proxy_mode: Some(crate::proxy::ProxyMode::Iptables),
    };
    export_test(&Input::new("-", scenario), &options).unwrap()
}

#[test]
fn an_exported_suite_passes_as_written() {
    let exported = exported();
    let result = run(&[("tests/exported.svclab-test.yaml", &exported)], &[], false);
    assert!(result.success(), "{}\n{exported}", result.to_text());
    expect![[r#"
        tests:
        - name: the scenario as exported
          expect:
            objects:
            - ref: Service kube-system/kube-dns
              outcome: created
              clusterIPs: [10.96.0.10]
              band: static
              nodePorts: []
              errors: []
              warnings: []
              violations: []
            - ref: Service default/web
              outcome: created
              clusterIPs: [10.102.210.226]
              band: dynamic
              nodePorts: [30080]
              errors: []
              warnings: []
              violations: []
            - ref: Service default/lb
              outcome: created
              clusterIPs: [10.99.179.121]
              band: dynamic
              nodePorts: [31875]
              errors: []
              warnings: ["spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs)"]
              violations: []
            rules:
              proxyMode: iptables
              includes:
              - "-A KUBE-SERVICES -m comment --comment \"kube-system/kube-dns:dns cluster IP\" -m udp -p udp -d 10.96.0.10 --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU"
            traces:
            - src: 10.244.1.5
              dst: 10.96.0.10
              dport: 53
              protocol: udp
              endpoints: ["10.244.1.10:53", "10.244.2.11:53"]
    "#]].assert_eq(&exported[exported.find("tests:").unwrap()..]);
}

#[test]
fn an_exported_suite_fails_when_the_cluster_answers_otherwise() {
    let exported = exported();
    // One value of each kind the export writes, changed: exactly one failure, at that path.
    let mutations = [
        ("outcome: created", "outcome: rejected", "expect.objects[0].outcome"),
        ("clusterIPs: [10.96.0.10]", "clusterIPs: [10.96.0.11]", "expect.objects[0].clusterIPs"),
        ("band: static", "band: dynamic", "expect.objects[0].band"),
        ("nodePorts: [30080]", "nodePorts: [30081]", "expect.objects[1].nodePorts"),
        ("warnings: [\"spec.loadBalancerIP", "warnings: [\"x", "expect.objects[2].warnings"),
        ("violations: []", "violations: [ports.allowedPorts]", "expect.objects[0].violations"),
        ("--dport 53 -j", "--dport 54 -j", "expect.rules.includes[0]"),
        ("\"10.244.2.11:53\"", "\"10.244.2.12:53\"", "expect.traces[0].endpoints"),
    ];
    for (from, to, path) in mutations {
        let at = exported.find(from).unwrap_or_else(|| panic!("{from:?} not in:\n{exported}"));
        let changed = format!("{}{to}{}", &exported[..at], &exported[at + from.len()..]);
        let result = run(&[("tests/exported.svclab-test.yaml", &changed)], &[], false);
        let failures: Vec<&str> = result.suites[0].tests[0]
            .failures
            .iter()
            .map(|failure| failure.path.as_str())
            .collect();
        assert_eq!((result.failed, result.errors, failures), (1, 0, vec![path]), "{to}");
    }
}

#[test]
fn a_scenario_without_services_exports_its_objects_and_an_empty_one_nothing() {
    let scenario = "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\n";
    let options = ExportOptions {
        trace: Some(crate::trace::TraceRequest {
            src: "10.244.1.5".into(),
            dst: "10.96.0.99".into(),
            dport: 80,
            ..Default::default()
        }),
        ..Default::default()
    };
    let exported = export_test(&Input::new("-", scenario), &options).unwrap();
    let result = run(&[("playground.svclab-test.yaml", &exported)], &[], false);
    assert!(result.success(), "{}\n{exported}", result.to_text());
    expect![[r#"
        metadata:
          name: playground
        resources: |2
          apiVersion: v1
          kind: Node
          metadata: {name: node-a}
        tests:
        - name: the scenario as exported
          expect:
            objects:
            - ref: Node node-a
              outcome: created
              errors: []
              warnings: []
              violations: []
            traces:
            - src: 10.244.1.5
              dst: 10.96.0.99
              dport: 80
              protocol: tcp
              verdict: no-service
    "#]]
    .assert_eq(&exported[exported.find("metadata:").unwrap()..]);
    for empty in ["", "# nothing yet\n", "---\n"] {
        let exported = export_test(&Input::new("-", empty), &ExportOptions::default());
        assert_eq!(exported, Err(super::ExportError::NoObjects), "{empty:?}");
    }
}

#[test]
fn the_schema_knows_every_key_the_reader_knows() {
    let schema = super::schema::schema();
    expect_test::expect_file!["schema.json"].assert_eq(&schema);
    use super::format::{
        EXPECT_KEYS, METADATA_KEYS, OBJECT_KEYS, RULES_KEYS, SUITE_KEYS, TEST_KEYS, TRACE_KEYS,
    };
    let keys =
        [SUITE_KEYS, METADATA_KEYS, TEST_KEYS, EXPECT_KEYS, OBJECT_KEYS, RULES_KEYS, TRACE_KEYS];
    for key in keys.concat() {
        assert!(schema.contains(&format!("\"{key}\"")), "{key}");
    }
}

#[test]
fn spans_end_where_the_values_end() {
    let text = "a: [x, \"y, z\"]   # c\nb:\n- one\n- 'it''s'  # c2\nc: {p: 1}\n";
    let roots = tree::parse(text).unwrap();
    let mut seen = Vec::new();
    let mut pending: Vec<&tree::Node> = roots.iter().collect();
    while let Some(node) = pending.pop() {
        seen.push(&text[node.span.clone()]);
        match &node.value {
            tree::Value::Seq { items, .. } => pending.extend(items.iter().rev()),
            tree::Value::Map { entries, .. } => {
                pending.extend(entries.iter().rev().map(|e| &e.value))
            }
            tree::Value::Scalar { .. } | tree::Value::Null => {}
        }
    }
    assert_eq!(
        seen,
        [
            "a: [x, \"y, z\"]   # c\nb:\n- one\n- 'it''s'  # c2\nc: {p: 1}",
            "[x, \"y, z\"]",
            "x",
            "\"y, z\"",
            "- one\n- 'it''s'",
            "one",
            "'it''s'",
            "{p: 1}",
            "1",
        ]
    );
    let err = tree::parse("a: 1\nb: 2\na: 3\n").unwrap_err();
    assert_eq!((err.pos.line, err.message.as_str()), (3, "duplicate key `a`"));
}
