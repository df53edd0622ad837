//! Robustness tests of the whole pipeline: no input panics it, and the same input always gives
//! the same report bytes.

use proptest::prelude::*;

use crate::{CheckOptions, Input, check};

const EXAMPLES: &[&str] = &[
    include_str!("../../../examples/dns-static-band.yaml"),
    include_str!("../../../examples/gate-off-collision.yaml"),
    include_str!("../../../examples/policy-external-ips.yaml"),
    include_str!("../../../examples/policy-no-nodeport.yaml"),
    include_str!("../../../examples/policy-internal-load-balancers.yaml"),
    include_str!("../../../examples/policy-unique-selector.yaml"),
    include_str!("../../../examples/policy-allowed-ports.yaml"),
];

/// Runs the pipeline twice in both modes and checks that the outputs agree.
#[track_caller]
fn check_stable(text: &str) {
    for no_defaults in [false, true] {
        let options = CheckOptions { no_defaults, ..CheckOptions::default() };
        let first = check(&[Input::new("fuzz.yaml", text)], &options);
        let second = check(&[Input::new("fuzz.yaml", text)], &options);
        assert_eq!(first.to_json(), second.to_json());
        let _ = first.to_text();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
        check_stable(&text);
    }

    /// Cuts, duplicates and splices lines of real scenarios: the shapes that break parsers.
    #[test]
    fn mutated_examples_never_panic(
        example in 0..EXAMPLES.len(),
        edits in proptest::collection::vec((0usize..200, 0usize..200, 0u8..4, "[ -~]{0,12}"), 1..6),
    ) {
        let mut lines: Vec<String> = EXAMPLES[example].lines().map(str::to_owned).collect();
        for (a, b, kind, junk) in edits {
            if lines.is_empty() { break; }
            let (a, b) = (a % lines.len(), b % lines.len());
            match kind {
                0 => { lines.remove(a); }
                1 => { let l = lines[a].clone(); lines.insert(b, l); }
                2 => { let cut = lines[a].len().min(b % 40); let mut l = lines[a].clone(); l.truncate(cut); l.push_str(&junk); lines[a] = l; }
                _ => lines.insert(a, junk),
            }
        }
        check_stable(&lines.join("\n"));
    }
}

#[test]
fn hostile_shapes_become_diagnostics() {
    for text in [
        "apiVersion: v1\nkind: List\nitems: 7\n",
        "apiVersion: v1\nkind: Service\nmetadata: []\nspec: 5\n",
        "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: 99999999999}], clusterIPs: {a: b}}\n",
        "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: 9.99\nserviceClusterIPRanges: [10.0.0.0/8, 10.1.0.0/16, x]\nseed: -1\n",
        "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nserviceNodePortRange: 70000-1\n",
        "---\n---\n...\n",
        "\u{feff}apiVersion: v1\nkind: Service\n",
        "a: &x [*x]\n",
        "{\"apiVersion\": \"v1\", \"kind\": \"Service\", \"metadata\": {\"name\": \"j\"}, \"spec\": {\"ports\": [{\"port\": 80}]}}",
    ] {
        check_stable(text);
    }
}

/// `render_to`, and `render_ruleset`'s pieces of any size, hand over exactly the text `render`
/// returns: for many chains (the iptables payload's per-service chains fill several arena
/// buffers), a chain longer than a buffer (one Service with 900 endpoints), addresses of every
/// kind, and every mode. A piece holds whole parts (an nftables piece, whole lines) up to at
/// least the size asked for.
#[test]
fn render_to_hands_over_what_render_returns() {
    use std::fmt::Write as _;

    use crate::{ProxyMode, RenderOptions, evaluate, render, render_ruleset, render_to};
    let mut text = String::from(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-a\nstatus:\n  addresses:\n  - type: InternalIP\n    address: 192.168.0.10\n",
    );
    for i in 0..300 {
        let endpoints = if i == 7 { 900 } else { 4 };
        let kind = match i % 3 {
            0 => "LoadBalancer\n  externalIPs: [\"192.0.2.1\"]\n  externalTrafficPolicy: Local",
            1 => "NodePort",
            _ => "ClusterIP",
        };
        let _ = write!(
            text,
            "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc-{i}\nspec:\n  type: {kind}\n  selector:\n    app: a{i}\n  ports:\n  - name: http\n    port: 80\n  - name: dns\n    port: 53\n    protocol: UDP\nstatus:\n  loadBalancer:\n    ingress:\n    - ip: 198.51.100.{}\n",
            i % 250 + 1
        );
        let _ = write!(
            text,
            "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: svc-{i}-x\n  labels:\n    kubernetes.io/service-name: svc-{i}\naddressType: IPv4\nports:\n- name: http\n  port: 8080\n- name: dns\n  port: 53\n  protocol: UDP\nendpoints:\n"
        );
        for e in 0..endpoints {
            let node = if e % 2 == 0 { "node-a" } else { "node-b" };
            let _ = write!(
                text,
                "- addresses: [\"10.{}.{}.{}\"]\n  nodeName: {node}\n",
                i % 250,
                e / 250 + 4 * (i / 250),
                e % 250 + 1
            );
        }
    }
    let inputs = [Input::new("many.yaml", text)];
    for (mode, standalone) in
        [(ProxyMode::Iptables, false), (ProxyMode::Iptables, true), (ProxyMode::Nftables, false)]
    {
        let options = RenderOptions { standalone, ..RenderOptions::new(mode) };
        let (world, _) = evaluate(&inputs, &CheckOptions::WORLD_ONLY);
        let whole = render(&world, &options).expect("the scenario renders");
        let mut pieces = String::new();
        render_to(inputs.to_vec(), &options, &mut |piece| pieces.push_str(piece))
            .expect("the scenario renders");
        assert!(whole.len() > 300_000, "{mode:?}: a small payload ({} bytes)", whole.len());
        assert!(whole == pieces, "{mode:?}, standalone {standalone}: render_to differs");
        for bytes in [0, 1, 4096, 100_000, 1 << 20] {
            let mut ruleset = render_ruleset(inputs.to_vec(), &options).expect("it renders");
            let mut pieces = Vec::new();
            while let Some(piece) = ruleset.next_piece(bytes) {
                pieces.push(piece);
            }
            let (last, full) = pieces.split_last().expect("a piece at least");
            let case = format!("{mode:?}, standalone {standalone}, pieces of {bytes} bytes");
            assert!(full.iter().all(|p| p.len() >= bytes), "{case}: a short piece");
            assert!(pieces.iter().all(|p| p.ends_with('\n')), "{case}: a line cut");
            assert!(!last.is_empty() && ruleset.next_piece(bytes).is_none(), "{case}: no end");
            assert!(whole == pieces.concat(), "{case}: the pieces differ");
            // A piece, then the rest at once.
            let mut ruleset = render_ruleset(inputs.to_vec(), &options).expect("it renders");
            let mut text = ruleset.next_piece(bytes).expect("a first piece");
            ruleset.write_to(&mut |piece| text.push_str(piece));
            assert!(whole == text, "{case}: a piece and the rest differ");
        }
    }
}
