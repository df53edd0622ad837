//! The bodies of svclab's fuzz targets: plain functions over bytes, so libFuzzer (the
//! `fuzz/libfuzzer` package, nightly) drives them and a stable `cargo test` replays the seed
//! corpus (`fuzz/corpus/<target>/`) and every past crash (`fuzz/regressions/<target>/`).
//!
//! A body panics only when svclab misbehaves: core panicking, or a property every host relies
//! on failing (a share link that does not survive its own round trip, a report that does not
//! read back). Everything a body does is what a host does with untrusted input.

// The playground's share-link format, compiled here from the playground's own source: the
// playground is a yew binary that a fuzz target cannot link, and the decoder needs nothing of
// yew.
#[path = "../../playground-web/src/share.rs"]
mod share;
mod structured;

use svclab_core::gateway::{self, Decision, GatewayConfig, Interest, Reply, RequestHead};
use svclab_core::testing::{ProxyConfig, trace_mode, trace_nft_text, trace_text};
use svclab_core::{
    AdmissionOptions, CheckOptions, Input, IpFamily, ProxyMode, RenderOptions, Report,
    TraceRequest, World, check, check_settings, evaluate, render, report_rules, validate_admission,
};

/// One fuzz target: its name (the file `fuzz/libfuzzer/fuzz_targets/<name>.rs`, the corpus
/// and regression folders) and its body.
pub struct Target {
    /// The target's name.
    pub name: &'static str,
    /// What it feeds the input to.
    pub run: fn(&[u8]),
}

/// Every target, in the order `cargo xtask fuzz` runs them.
pub const TARGETS: &[Target] = &[
    Target { name: "check_yaml", run: check_yaml },
    Target { name: "check_json", run: check_json },
    Target { name: "render_trace", run: render_trace },
    Target { name: "trace_rules", run: trace_rules },
    Target { name: "admission", run: admission },
    Target { name: "policy_settings", run: policy_settings },
    Target { name: "share_link", run: share_link },
    Target { name: "gateway", run: gateway },
    Target { name: "structured", run: structured },
    Target { name: "yaml_readers", run: yaml_readers },
];

/// Scenario text (YAML) through `check`, and the report out as JSON and text, as the `svclab`
/// command prints it.
pub fn check_yaml(data: &[u8]) {
    check_text("fuzz.yaml", data);
}

/// Text through both YAML readers: what the fast reader for plain block YAML takes, it must
/// read exactly as the general (event) reader does, tree, scalars and positions alike.
pub fn yaml_readers(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Some(difference) = svclab_core::testing::yaml_fast_reader_disagreement(&text) {
        panic!("the YAML readers disagree on {text:?}: {difference}");
    }
}

/// Scenario text (JSON documents and `List`s) through `check`.
pub fn check_json(data: &[u8]) {
    check_text("fuzz.json", data);
}

fn check_text(name: &str, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let report = check(&[Input::new(name, text)], &CheckOptions::default());
    read_back(&report);
    let _ = report.to_text();
}

/// The report's JSON is the contract of `svclab check --output json`: it must read back.
fn read_back(report: &Report) {
    let json = report.to_json();
    if let Err(err) = Report::from_json(&json) {
        panic!("the report's JSON does not read back: {err}\n{json}");
    }
}

/// Scenario text through `evaluate`, then `render` in the mode, family and shape the first
/// byte picks, and a trace to the first ports of the first Services in that mode.
pub fn render_trace(data: &[u8]) {
    let Some((&flags, text)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(text);
    let (world, report) = evaluate(&[Input::new("fuzz.yaml", text)], &CheckOptions::default());
    read_back(&report);
    let _ = report_rules(&world);
    let mode = if flags & 1 == 0 { ProxyMode::Iptables } else { ProxyMode::Nftables };
    let family = match (flags >> 1) & 3 {
        0 => None,
        1 => Some(IpFamily::V4),
        _ => Some(IpFamily::V6),
    };
    let options = RenderOptions { mode, family, node: None, standalone: flags & 8 != 0 };
    let _ = render(&world, &options);
    let src = if flags & 16 == 0 { "10.244.0.5" } else { "fd00:10:244::5" };
    for request in probes(&world, src).into_iter().take(6) {
        let _ = trace_mode(&world, &request, mode).to_text();
    }
}

/// Packets to the first cluster IPs and ports of the world's Services.
fn probes(world: &World, src: &str) -> Vec<TraceRequest> {
    let mut requests = Vec::new();
    for stored in world.services.values().take(3) {
        let spec = &stored.service.spec;
        for ip in spec.cluster_ips.iter().take(2) {
            for port in spec.ports.iter().take(2) {
                requests.push(TraceRequest {
                    src: src.to_owned(),
                    dst: ip.clone(),
                    dport: u16::try_from(port.port).unwrap_or(0),
                    protocol: port.protocol.to_lowercase(),
                    ..TraceRequest::default()
                });
            }
        }
    }
    requests
}

/// Rules text as a node would paste it (`iptables-save`, or an nft transaction when the first
/// byte is odd) traced for packets to the addresses and ports the text names.
pub fn trace_rules(data: &[u8]) {
    let Some((&flags, text)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(text);
    let family = if flags & 2 == 0 { IpFamily::V4 } else { IpFamily::V6 };
    let mut config = ProxyConfig::new(family);
    config.masquerade_all = flags & 4 != 0;
    let src = if flags & 8 == 0 { "10.244.0.5" } else { "192.168.0.10" };
    for (dst, dport) in destinations(&text) {
        let request = TraceRequest {
            src: src.to_owned(),
            dst,
            dport,
            protocol: if flags & 16 == 0 { "tcp" } else { "udp" }.to_owned(),
            ..TraceRequest::default()
        };
        let report = if flags & 1 == 0 {
            trace_text(&text, &config, &request)
        } else {
            trace_nft_text(&text, &config, &request)
        };
        let _ = report.to_text();
    }
}

/// The first destination addresses (`-d X/32`, `daddr X`) and port (`--dport N`, `dport N`)
/// of rules text, with a default packet when it names none.
fn destinations(text: &str) -> Vec<(String, u16)> {
    let mut words = text.split_whitespace();
    let mut addresses = Vec::new();
    let mut port = 80;
    while let Some(word) = words.next() {
        match word {
            "-d" | "daddr" if addresses.len() < 3 => {
                if let Some(next) = words.next() {
                    let address = next.split('/').next().unwrap_or(next);
                    addresses.push(address.to_owned());
                }
            }
            "--dport" | "dport" => {
                if let Some(n) = words.next().and_then(|n| n.parse().ok()) {
                    port = n;
                }
            }
            _ => {}
        }
    }
    if addresses.is_empty() {
        addresses.push("10.96.0.10".to_owned());
    }
    addresses.into_iter().map(|a| (a, port)).collect()
}

/// An AdmissionReview through `validate_admission`, as `svclab serve` answers it; an odd
/// first byte adds a policy and a profile.
pub fn admission(data: &[u8]) {
    let Some((&flags, text)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(text);
    let options = if flags & 1 == 0 {
        AdmissionOptions::default()
    } else {
        AdmissionOptions {
            policy: Some(Input::new("policy", POLICY)),
            profile: Some(Input::new("profile", "kubernetesVersion: \"1.29\"\n")),
            stringly_typed: flags & 2 != 0,
            inventory: Some(vec![SERVICE_JSON.to_owned()]),
        }
    };
    let _ = validate_admission(&text, &options);
}

/// Settings that switch every policy rule block on.
const POLICY: &str = "types: {allowed: [ClusterIP, NodePort, LoadBalancer]}
externalIPs: {mode: allowlist, allowedCIDRs: [192.0.2.0/24]}
nodePorts: {allowedRanges: ['30000-30100']}
selector: {uniqueInNamespace: true}
";

const SERVICE_JSON: &str = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"other","namespace":"default"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}}"#;

/// A scenario of every Service type the policy rules look at.
const POLICY_SCENARIO: &str = "apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: np, namespace: default}
spec: {type: NodePort, selector: {app: web}, ports: [{port: 80, nodePort: 30080}]}
---
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: prod}
spec: {type: LoadBalancer, externalIPs: [203.0.113.9], loadBalancerSourceRanges: [10.0.0.0/8], ports: [{port: 443}]}
";

/// Policy settings through `check_settings`, then in force over a small scenario.
pub fn policy_settings(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let settings = Input::new("settings.yaml", text);
    let _ = check_settings(&settings);
    let options = CheckOptions { policy: Some(settings), ..CheckOptions::default() };
    let report = check(&[Input::new("scenario.yaml", POLICY_SCENARIO)], &options);
    read_back(&report);
}

/// A playground share-link fragment through its decoder; what decodes must survive the
/// round trip through the encoder.
pub fn share_link(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(state) = share::decode(&text) else { return };
    let again = share::decode(&share::encode(&state));
    assert_eq!(again.as_ref(), Ok(&state), "a decoded share link does not round-trip");
}

/// What a gateway guest (proxy-wasm or http-wasm) does with a request: its configuration,
/// request line and body are the input, split at NUL bytes (`config NUL method NUL path NUL
/// body`); the first byte says whether the configuration is Traefik's stringly-typed one.
pub fn gateway(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else { return };
    let mut parts = rest.splitn(4, |&b| b == 0);
    let config = parts.next().unwrap_or_default();
    let method = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let path = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let body = parts.next().unwrap_or_default();
    let config = GatewayConfig::parse(config, flags & 1 != 0).unwrap_or_else(|_| GatewayConfig {
        prefix: "/svclab".to_owned(),
        ..GatewayConfig::default()
    });
    let declared = if flags & 2 == 0 { Some(body.len() as u64) } else { None };
    let head = RequestHead { method: &method, path: &path, content_length: declared };
    match gateway::interest(&config, &head) {
        Interest::Forward { warnings } => header_values(&warnings),
        Interest::Respond(reply) => reply_headers(&reply),
        Interest::Body => match gateway::decide(&config, &head, body) {
            Decision::Forward { warnings } => header_values(&warnings),
            Decision::Respond(reply) => reply_headers(&reply),
        },
    }
}

/// What the guests put into response headers must be one header line each: no CR, LF or NUL
/// (header injection), whatever the request said.
fn header_values(values: &[String]) {
    for value in values {
        assert!(!value.contains(['\r', '\n', '\0']), "a header value spans lines: {value:?}");
    }
}

fn reply_headers(reply: &Reply) {
    let (names, values): (Vec<String>, Vec<String>) = reply.headers.iter().cloned().unzip();
    header_values(&names);
    header_values(&values);
}

/// A structure-aware scenario: `arbitrary` builds Services, EndpointSlices, Nodes, a profile
/// and a kube-proxy configuration from the bytes, written out as YAML, then `check`, `render`
/// in both modes and traces to every Service.
pub fn structured(data: &[u8]) {
    let Some((yaml, probes)) = structured::scenario(data) else { return };
    let (world, report) =
        evaluate(&[Input::new("structured.yaml", yaml)], &CheckOptions::default());
    read_back(&report);
    for mode in [ProxyMode::Iptables, ProxyMode::Nftables] {
        let _ = render(&world, &RenderOptions::new(mode));
        for request in probes.iter().chain(&self::probes(&world, "10.244.0.5")).take(8) {
            let _ = trace_mode(&world, request, mode);
        }
    }
}

/// The YAML the structure-aware target builds from `data` (for reading a crash).
pub fn structured_yaml(data: &[u8]) -> Option<String> {
    structured::scenario(data).map(|(yaml, _)| yaml)
}
