//! One test per limit, each crossing it through the entrance a host calls (`check`, `trace`,
//! the YAML reader) and showing the diagnostic or warning it gets: what, where, and that
//! reading went on where it could.

use expect_test::{Expect, expect};

use super::*;
use crate::manifest::Input;
use crate::pipeline::{CheckOptions, check};
use crate::proxy::ProxyConfig;
use crate::trace::{TraceRequest, trace_text};
use crate::yaml::parse_stream;

/// Checks the inputs and prints every diagnostic (reason, object, field, file:document:line,
/// message) and the number of Services the report holds.
#[track_caller]
fn check_limit(inputs: &[Input], expect: Expect) {
    let report = check(inputs, &CheckOptions::default());
    let mut out = String::new();
    for d in &report.diagnostics {
        let object = d.object.as_ref().map(|o| format!("{} {}/{}", o.kind, o.namespace, o.name));
        let at = d.source.as_ref().map(|s| format!("{}:{}:{}", s.file, s.document, s.line));
        out.push_str(&format!(
            "{:?} {} {} [{}] {}: {}\n",
            d.severity,
            d.reason,
            object.unwrap_or_default(),
            d.field,
            at.unwrap_or_default(),
            d.message
        ));
    }
    out.push_str(&format!("services: {}\n", report.services.len()));
    expect.assert_eq(&out);
}

const SERVICE: &str =
    "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 80}]\n";

#[test]
fn input_bytes_past_the_limit_skip_the_input_that_crosses_it() {
    let big = "#".repeat(MAX_INPUT_BYTES);
    check_limit(
        &[
            Input::new("web.yaml", SERVICE),
            Input::new("big.yaml", big),
            Input::new("again.yaml", SERVICE.replace("web", "api")),
        ],
        expect![[r#"
            Error RequestEntityTooLarge  [] big.yaml:0:1: svclab reads at most 268435456 bytes of scenario text; this input (268435456 bytes) takes it to 268435535 and is skipped
            services: 2
        "#]],
    );
}

#[test]
fn documents_past_the_limit_are_one_error_and_nothing_more_is_read() {
    let text = "~\n---\n".repeat(MAX_DOCUMENTS + 5);
    let docs = parse_stream(&text);
    assert_eq!(docs.len(), MAX_DOCUMENTS + 1);
    let last = docs.last().map(|d| d.root.clone());
    expect![[r#"
        Some(
            Err(
                SyntaxError {
                    pos: Pos {
                        line: 2000001,
                        column: 1,
                    },
                    message: "more than 1000000 documents in one input; this one and the rest are skipped",
                },
            ),
        )
    "#]]
    .assert_debug_eq(&last);
}

#[test]
fn objects_past_the_limit_stop_reading_at_the_next_document() {
    // Pasted rulesets, the cheapest objects to read (one per input, never decoded), then a
    // Service that is not read.
    let mut inputs = vec![Input::new("dump", "*nat\nCOMMIT\n"); MAX_OBJECTS];
    inputs.push(Input::new("web.yaml", SERVICE));
    inputs.push(Input::new("more.yaml", SERVICE));
    check_limit(
        &inputs,
        expect![[r#"
            Error RequestEntityTooLarge  [] web.yaml:0:1: svclab reads at most 1000000 objects; this document and the rest are skipped
            services: 0
        "#]],
    );
}

#[test]
fn nodes_past_the_limit_refuse_the_document() {
    let flow = format!("[{}0]\n", "0,".repeat(MAX_NODES));
    check_limit(
        &[Input::new("wide.yaml", flow), Input::new("web.yaml", SERVICE)],
        expect![[r#"
            Error InvalidSyntax  [] wide.yaml:0:1: error converting YAML to JSON: yaml: line 1: document has more than 2000000 nodes
            services: 1
        "#]],
    );
}

#[test]
fn nesting_past_the_limit_refuses_the_document_and_the_next_one_is_read() {
    let deep = format!("{}{}\n", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    let ok = format!("{}{}\n", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    // An alias does not get around it: a 100-deep anchor used 100 deep.
    let anchored = format!(
        "a: &a {}{}\nb: {}*a{}\n",
        "[".repeat(100),
        "]".repeat(100),
        "[".repeat(100),
        "]".repeat(100)
    );
    check_limit(
        &[Input::new("deep.yaml", format!("{deep}---\n{ok}---\n{anchored}---\n{SERVICE}"))],
        expect![[r#"
            Error InvalidSyntax  [] deep.yaml:0:1: error converting YAML to JSON: yaml: line 1: document nests deeper than 128 levels
            Error InvalidObject  [] deep.yaml:1:3: error unmarshaling JSON: json: cannot unmarshal array into Go value of type map[string]interface {}
            Error InvalidSyntax  [] deep.yaml:2:6: error converting YAML to JSON: yaml: line 6: document nests deeper than 128 levels
            services: 1
        "#]],
    );
}

#[test]
fn alias_expansion_past_go_yamls_ratio_is_excessive_aliasing() {
    // The billion laughs: nine levels of ten aliases to the level below.
    let mut bomb = String::from(
        "apiVersion: v1\nkind: Service\nmetadata:\n  a: &a [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n",
    );
    for i in 0..9 {
        let prev = if i == 0 { "a".to_owned() } else { format!("l{}", i - 1) };
        let row = vec![format!("*{prev}"); 10].join(", ");
        bomb.push_str(&format!("  l{i}: &l{i} [{row}]\n"));
    }
    check_limit(
        &[Input::new("laughs.yaml", bomb), Input::new("web.yaml", SERVICE)],
        expect![[r#"
            Error InvalidSyntax  [] laughs.yaml:0:7: error converting YAML to JSON: yaml: line 7: document contains excessive aliasing
            services: 1
        "#]],
    );
    // A document that uses its anchors a few times is fine.
    let modest = "apiVersion: v1\nkind: Service\nmetadata: {name: web, labels: &l {app: web}, annotations: *l}\nspec:\n  selector: *l\n  ports: [{port: 80}]\n";
    check_limit(
        &[Input::new("modest.yaml", modest)],
        expect![[r#"
        services: 1
    "#]],
    );
}

#[test]
fn list_nesting_past_the_limit_skips_the_inner_items() {
    let mut text = SERVICE.replace("metadata: {name: web}", "metadata: {name: inner}");
    for _ in 0..=MAX_LIST_DEPTH {
        let indented: String = text.lines().map(|l| format!("    {l}\n")).collect();
        text = format!("apiVersion: v1\nkind: List\nitems:\n  -\n{indented}");
    }
    check_limit(
        &[Input::new("lists.yaml", text), Input::new("web.yaml", SERVICE)],
        expect![[r#"
            Error RequestEntityTooLarge List / [items] lists.yaml:0:33: List nests deeper than 8 Lists; its items are skipped
            services: 1
        "#]],
    );
}

/// A pod's DNS query to 10.96.0.10:53 traced through pasted `iptables-save` text.
fn trace_dns(text: &str) -> crate::trace::TraceReport {
    let request = TraceRequest {
        src: "10.244.0.5".into(),
        dst: "10.96.0.10".into(),
        dport: 53,
        ..TraceRequest::default()
    };
    trace_text(text, &ProxyConfig::new(crate::net::IpFamily::V4), &request)
}

/// A pasted ruleset whose chains each jump twice into the next: 2^30 rule visits unbounded.
fn doubling_chains(depth: usize) -> String {
    let mut text = String::from("*nat\n:PREROUTING ACCEPT [0:0]\n");
    for i in 0..depth {
        text.push_str(&format!(":C{i} - [0:0]\n"));
    }
    text.push_str("-A PREROUTING -j C0\n");
    for i in 0..depth - 1 {
        let next = i + 1;
        text.push_str(&format!("-A C{i} -j C{next}\n-A C{i} -j C{next}\n"));
    }
    text.push_str("COMMIT\n");
    text
}

#[test]
fn trace_rules_past_the_limit_cut_the_trace_short_with_a_warning() {
    let report = trace_dns(&doubling_chains(30));
    expect![[r#"
        [
            "the trace was cut short: svclab follows at most 65536 paths and evaluates at most 1000000 rules per packet; the outcomes are incomplete",
        ]
    "#]]
    .assert_debug_eq(&report.warnings);
    let small = trace_dns(&doubling_chains(4));
    assert!(small.warnings.is_empty(), "{:?}", small.warnings);
}

#[test]
fn trace_paths_past_the_limit_cut_the_trace_short_with_a_warning() {
    // Random branches inside random branches: 8 levels of 8 make 16,777,216 paths.
    let mut text = String::from("*nat\n:PREROUTING ACCEPT [0:0]\n");
    for i in 0..9 {
        text.push_str(&format!(":R{i} - [0:0]\n"));
    }
    text.push_str("-A PREROUTING -j R0\n");
    for i in 0..8 {
        for _ in 0..7 {
            text.push_str(&format!(
                "-A R{i} -m statistic --mode random --probability 0.5 -j R{}\n",
                i + 1
            ));
        }
        text.push_str(&format!("-A R{i} -j R{}\n", i + 1));
    }
    text.push_str("-A R8 -j DNAT --to-destination 10.244.1.5:53\nCOMMIT\n");
    let report = trace_dns(&text);
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert!(report.outcomes.len() <= MAX_TRACE_PATHS + 1, "{} outcomes", report.outcomes.len());
}

/// A ruleset whose every random branch copies a long history: `commented` rules carrying a 1 KiB
/// comment each, then `branches` random jumps, each a path that copies the steps so far.
fn branches_copying_long_histories(commented: usize, branches: usize) -> String {
    let comment = "x".repeat(1024);
    let mut text = String::from("*nat\n:PREROUTING ACCEPT [0:0]\n:SEP - [0:0]\n");
    for _ in 0..commented {
        text.push_str(&format!("-A PREROUTING -m comment --comment \"{comment}\"\n"));
    }
    for _ in 0..branches {
        text.push_str("-A PREROUTING -m statistic --mode random --probability 0.5 -j SEP\n");
    }
    text.push_str("-A SEP -j DNAT --to-destination 10.244.1.5:53\nCOMMIT\n");
    text
}

#[test]
fn trace_bytes_past_the_limit_cut_the_trace_short_with_a_warning() {
    // The fuzzer's `trace_rules/oom-repeated-jumps` in its smallest form: 2,000 branches that
    // each copy about 2 MiB of recorded steps would hold 4 GiB; MAX_TRACE_BYTES stops it at 64 MiB.
    let report = trace_dns(&branches_copying_long_histories(2_000, 2_000));
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    // Neither the paths (2,001 < 65,536) nor the rules (about 6,000) run out: the bytes do,
    // after a few dozen copies.
    assert!(report.outcomes.len() < 100, "{} outcomes", report.outcomes.len());
    let small = trace_dns(&branches_copying_long_histories(20, 20));
    assert!(small.warnings.is_empty(), "{:?}", small.warnings);
    assert_eq!(small.outcomes.len(), 21);
}

#[test]
fn go_yaml_alias_ratio_scales_from_99_to_10_percent() {
    let cases = [
        (1000, 1000),
        (2000, 100),
        (2000, 1981),
        (400_000, 396_001),
        (2_200_000, 1_200_000),
        (4_000_000, 400_001),
    ];
    let got: Vec<bool> = cases.iter().map(|&(d, a)| excessive_aliasing(d, a)).collect();
    assert_eq!(got, [false, false, true, true, true, true]);
    assert!(!excessive_aliasing(2000, 1980));
    assert!(!excessive_aliasing(4_000_000, 400_000));
}

#[test]
fn bitmap_ranges_past_20_host_bits_are_the_apiservers_flag_error() {
    // 1.30 writes the bitmap (the ServiceCIDR allocator is off by default).
    let profile = "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"1.30\"\nserviceClusterIPRanges: [10.0.0.0/8]\n";
    check_limit(
        &[Input::new("profile.yaml", profile), Input::new("web.yaml", SERVICE)],
        expect![[r#"
            Error FieldValueInvalid ClusterProfile / [serviceClusterIPRanges] profile.yaml:0:4: specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12
            services: 1
        "#]],
    );
}

#[test]
fn ipaddress_ranges_of_any_size_hold_only_what_is_allocated() {
    use crate::allocation::IpAddressAllocator;
    // A /64 (2^64 addresses) and a /8: never a bitmap of them. Shorter IPv6 prefixes are
    // refused, as the ServiceCIDR allocator refuses them.
    let wide = "fd00::/48".parse().expect("a CIDR");
    assert!(IpAddressAllocator::new(wide, 0, 7).is_err());
    for cidr in ["fd00:10:96::/64", "10.0.0.0/8"] {
        let net = cidr.parse().expect("a CIDR");
        let mut allocator = IpAddressAllocator::new(net, 0, 7).expect("an allocator");
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..20_000 {
            let ip = allocator.allocate_next().expect("room");
            assert!(seen.insert(ip), "{ip} handed out twice in {cidr}");
        }
        assert_eq!(allocator.used(), 20_000);
    }
    // Dual-stack Services over a /8 and a /64 under the newest release's ServiceCIDR
    // allocator (no bitmap is written any more).
    let profile = "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nserviceClusterIPRanges: [10.0.0.0/8, fd00:10:96::/64]\n";
    let services: String = (0..2000)
        .map(|i| format!("---\napiVersion: v1\nkind: Service\nmetadata: {{name: s{i}}}\nspec: {{ipFamilyPolicy: RequireDualStack, ports: [{{port: 80}}]}}\n"))
        .collect();
    let report = check(
        &[Input::new("profile.yaml", profile), Input::new("s.yaml", services)],
        &CheckOptions::default(),
    );
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics.first());
    assert_eq!(report.services.iter().filter(|s| s.cluster_ips.len() == 2).count(), 2000);
}

#[test]
fn render_entries_past_the_limit_are_a_render_error_before_anything_is_written() {
    use crate::pipeline::evaluate;
    use crate::proxy::{ProxyMode, RenderOptions};
    use crate::world::render;
    // 3,000 ports times 3,000 external IPs: 9,000,000 entries from a 100 kB Service.
    let ports: Vec<String> = (1..=3000).map(|p| format!("{{name: p{p}, port: {p}}}")).collect();
    let ips: Vec<String> =
        (0..3000).map(|i| format!("203.0.{}.{}", i / 250, i % 250 + 1)).collect();
    let service = format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: wide}}\nspec:\n  ports: [{}]\n  externalIPs: [{}]\n",
        ports.join(", "),
        ips.join(", ")
    );
    let slice = "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: wide-1, labels: {kubernetes.io/service-name: wide}}\naddressType: IPv4\nendpoints: [{addresses: [10.244.0.5]}]\nports: [{name: p1, port: 1}]\n";
    let scenario = Input::new("wide.yaml", format!("{service}{slice}"));
    let (world, report) = evaluate(&[scenario], &CheckOptions::default());
    assert!(report.rules.is_none());
    let error = render(&world, &RenderOptions::new(ProxyMode::Iptables)).err();
    expect!["the scenario would render 9015001 service-port and endpoint entries; svclab renders at most 8000000"].assert_eq(&error.map(|e| e.to_string()).unwrap_or_default());
}
