//! Tests of the example finder: fences, pairing with expected blocks, attributes.

use super::*;

/// The examples of `text` as (command words, expected text) pairs.
fn check(text: &str, expected: &[(&str, Option<&str>)]) {
    let lines = lines(text);
    let found: Vec<(String, Option<String>)> = examples(&lines)
        .into_iter()
        .map(|example| (example.args.join(" "), example.expected.map(|block| block.text)))
        .collect();
    let expected: Vec<(String, Option<String>)> =
        expected.iter().map(|(args, text)| ((*args).to_owned(), text.map(str::to_owned))).collect();
    assert_eq!(found, expected);
}

#[test]
fn pairs_a_scenario_with_the_expected_block_after_blank_lines() {
    check(
        "# Title\n\n```svclab check\nkind: Service\n```\n\n```text expected\nout\n```\n",
        &[("check", Some("out\n"))],
    );
}

#[test]
fn attributes_do_not_reach_the_command() {
    check(
        "```svclab render --proxy-mode nftables show=nftables\na\n```\n```expected\nb\n```\n",
        &[("render --proxy-mode nftables", Some("b\n"))],
    );
}

#[test]
fn text_between_blocks_unpairs_them() {
    check("```svclab check\na\n```\nprose\n```text expected\nb\n```\n", &[("check", None)]);
}

#[test]
fn other_blocks_and_longer_fences_are_respected() {
    check(
        "```yaml\n```svclab check\n```\n~~~~svclab trace --src 1.2.3.4\n```\n~~~~\n~~~text expected\nx\n~~~\n",
        &[("trace --src 1.2.3.4", Some("x\n"))],
    );
}

#[test]
fn a_fence_for_text_with_backticks_is_longer() {
    assert_eq!(fence_for("plain\n"), "```");
    assert_eq!(fence_for("````\n"), "`````");
}
