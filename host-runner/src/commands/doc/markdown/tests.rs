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

#[test]
fn the_command_may_be_the_first_line() {
    check(
        "```svclab\n# svclab trace --src 10.0.0.1 show=trace\nkind: Service\n```\n\n```expected\nout\n```\n",
        &[("trace --src 10.0.0.1", Some("out\n"))],
    );
    // The comment stays part of the scenario, so diagnostics count the lines the reader sees.
    let lines = lines("```svclab\n# svclab check\na: b\n```\n");
    assert_eq!(examples(&lines)[0].scenario.text, "# svclab check\na: b\n");
}

#[test]
fn a_block_without_a_command_is_check() {
    check("```svclab\nkind: Service\n```\n", &[("check", None)]);
    check("```svclab\n# a comment\nkind: Service\n```\n", &[("check", None)]);
}

#[test]
fn two_different_commands_are_a_problem() {
    let lines = lines("```svclab render\n# svclab check\na: b\n```\n");
    let found = examples(&lines);
    assert_eq!(
        found[0].problem.as_deref(),
        Some(
            "the info string says `svclab render` but the first line says `svclab check`: keep one"
        )
    );
    let same = lines_examples("```svclab check\n# svclab check\na: b\n```\n");
    assert_eq!(same[0].problem, None);
}

fn lines_examples(text: &str) -> Vec<Example> {
    examples(&lines(text))
}
