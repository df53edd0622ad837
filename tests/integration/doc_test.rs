//! `svclab doc test`: checked Markdown examples fail with a diff, and `--bless` rewrites them.

use crate::support::{Run, svclab};

const SCENARIO: &str =
    "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 0}]\n";

/// Writes `markdown` to a fresh file, runs `svclab --engine native doc test [extra] FILE` and
/// checks the exit code; the run and the file's text afterwards.
#[track_caller]
fn check(name: &str, markdown: &str, extra: &[&str], code: u8) -> (Run, String) {
    let dir = std::env::temp_dir().join(format!("svclab-doc-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let file = dir.join("page.md");
    std::fs::write(&file, markdown).expect("the page is written");
    let path = file.display().to_string();
    let mut args = vec!["--engine", "native", "doc", "test"];
    args.extend(extra);
    args.push(&path);
    let run = svclab(&args, "");
    let text = std::fs::read_to_string(&file).expect("the page is readable");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(run.code, code, "svclab {args:?}\nstdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    (run, text)
}

fn page(expected: Option<&str>) -> String {
    let mut page = format!("# Page\n\n```svclab check show=diagnostics\n{SCENARIO}```\n");
    if let Some(expected) = expected {
        page.push_str(&format!("\n```text expected\n{expected}```\n"));
    }
    page.push_str("\nAfter.\n");
    page
}

#[test]
fn doc_test_fails_with_a_diff_and_bless_rewrites() {
    let stale = "The Service \"web\" is invalid: spec.ports[0].port: wrong\n";
    let (run, _) = check("stale", &page(Some(stale)), &[], 1);
    assert!(run.stdout.contains("page.md:3: svclab check ... FAILED"), "{}", run.stdout);
    assert!(
        run.stdout.contains("-The Service \"web\" is invalid: spec.ports[0].port: wrong"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("+  --> -:5:12: spec.ports[0].port"), "{}", run.stdout);
    assert!(
        run.stdout.ends_with("1 examples in 1 files: 0 passed, 1 failed, 0 blessed\n"),
        "{}",
        run.stdout
    );

    let (_, blessed) = check("bless", &page(Some(stale)), &["--bless"], 0);
    assert!(
        blessed.contains("Invalid value: 0: must be between 1 and 65535, inclusive"),
        "{blessed}"
    );
    assert!(blessed.ends_with("```\n\nAfter.\n"), "{blessed}");
    let (run, unchanged) = check("blessed", &blessed, &[], 0);
    assert_eq!(unchanged, blessed);
    assert!(run.stdout.ends_with("1 passed, 0 failed, 0 blessed\n"), "{}", run.stdout);
}

#[test]
fn doc_test_adds_a_missing_expected_block_when_blessing() {
    let (run, _) = check("missing", &page(None), &[], 1);
    assert!(run.stdout.contains("no ```text expected block follows the example"), "{}", run.stdout);
    let (_, blessed) = check("add", &page(None), &["--bless"], 0);
    assert!(
        blessed.contains(&format!(
            "{SCENARIO}```\n\n```text expected\nThe Service \"web\" is invalid"
        )),
        "{blessed}"
    );
    check("added", &blessed, &[], 0);
}

#[test]
fn doc_test_reports_an_example_that_cannot_run() {
    let markdown = "```svclab render --proxy-mode ipvs\nkind: Node\n```\n```expected\n```\n";
    let (run, _) = check("bad-mode", markdown, &[], 1);
    assert!(run.stdout.contains("FAILED") && run.stdout.contains("ipvs"), "{}", run.stdout);
}

#[test]
fn doc_test_reads_the_command_from_the_first_line() {
    // What a docs framework keeps of a fence: the language, and the block's text.
    let first_line = format!("```svclab\n# svclab check --output json\n{SCENARIO}```\n");
    let (_, blessed) = check("first-line", &first_line, &["--bless"], 0);
    assert!(blessed.contains("```text expected\n{"), "{blessed}");
    // The comment is part of the scenario: the bad port is on the block's sixth line.
    assert!(blessed.contains("\"line\": 6"), "{blessed}");
    let (run, _) = check("first-line-checked", &blessed, &[], 0);
    assert!(run.stdout.contains("page.md:1: svclab check --output json ... ok"), "{}", run.stdout);

    let both = format!("```svclab render\n# svclab check\n{SCENARIO}```\n\n```expected\nx\n```\n");
    let (run, _) = check("both", &both, &[], 1);
    assert!(
        run.stdout.contains(
            "the info string says `svclab render` but the first line says `svclab check`: keep one"
        ),
        "{}",
        run.stdout
    );
}
