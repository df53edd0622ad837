//! Robustness tests of the whole pipeline: no input panics it, and the same input always gives
//! the same report bytes.

use proptest::prelude::*;

use crate::{CheckOptions, Input, check};

const EXAMPLES: &[&str] = &[
    include_str!("../../../examples/dns-static-band.yaml"),
    include_str!("../../../examples/gate-off-collision.yaml"),
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
