//! What a test run found, and its three faces: the JSON contract of `svclab test --output
//! json` (and of the npm package's `runTests`), the text in the shape of `cargo test`, and
//! JUnit XML for CI systems.
//!
//! The JUnit document follows the Jenkins xUnit plugin's `junit-10.xsd` (the schema Jenkins,
//! GitLab and GitHub's test reporters accept; `tests/data/junit/` holds a copy that the
//! integration tests validate against): `<testsuites>` of one `<testsuite>` per suite, one
//! `<testcase>` per test with a `<failure>` (the diff) or an `<error>` (the problems), and no
//! attribute the schema lacks (a test case has no `file` or `line` there: they are in the text).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::manifest::Input;

/// Everything one `svclab test` run found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TestRun {
    /// Tests whose every expectation held.
    pub passed: usize,
    /// Tests with at least one expectation that did not hold.
    pub failed: usize,
    /// Tests that could not run (a problem of their suite or their own), and suites or files
    /// in error that have no test to carry it.
    pub errors: usize,
    /// Every suite, in the order of the files, then of the documents.
    pub suites: Vec<SuiteResult>,
    /// With `update`: the files rewritten (suites and golden rulesets), for the host to write.
    /// Not part of the JSON.
    #[serde(skip)]
    pub updated: Vec<Input>,
}

/// One suite.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteResult {
    /// `metadata.name` (the file's name when the file does not parse).
    pub name: String,
    /// The suite's file, as the host named it.
    pub file: String,
    /// Its tests, in order.
    pub tests: Vec<TestResult>,
    /// The line where the suite's document starts.
    pub line: u32,
    /// Problems of the suite itself (or of its file); its tests are then not run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<TestError>,
}

/// One test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestResult {
    /// The test's `name`.
    pub name: String,
    /// Passed, failed or error.
    pub status: TestStatus,
    /// Every expectation that did not hold, in the order written.
    pub failures: Vec<Failure>,
    /// The line of the test's entry in its suite.
    pub line: u32,
    /// Why the test could not run (status `error`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<TestError>,
}

/// How a test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestStatus {
    /// Every expectation held.
    Passed,
    /// At least one expectation did not.
    Failed,
    /// The test could not run.
    Error,
}

/// One expectation that did not hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The expectation's path in its test (`expect.objects[0].clusterIPs`).
    pub path: String,
    /// The line the expectation's value is written on.
    pub line: u32,
    /// What the suite expects (`null`: the line must not be there).
    pub want: serde_json::Value,
    /// What svclab answered (`null`: no such line, no such value).
    pub got: serde_json::Value,
    /// A unified diff when the values are whole files (a golden ruleset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// What else the answer said (a trace's warnings, a render's refusal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A problem that stops a test or a suite from running: a key svclab does not know, a test
/// without an expectation, a ref to no object, a file that is missing or does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestError {
    /// The file the problem is in.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for TestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.message)
    }
}

impl TestRun {
    /// Whether every test passed and nothing was in error (the command exits with 0).
    pub fn success(&self) -> bool {
        self.failed == 0 && self.errors == 0
    }

    /// The JSON contract (pretty, two-space indent, trailing newline).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Parses what [`TestRun::to_json`] wrote.
    pub fn from_json(text: &str) -> Result<TestRun, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The text of `svclab test`, in the shape of `cargo test`: a line per test, then every
    /// failure and error with its file and line and what was wanted and what came, and last
    /// `N passed, M failed` (`, K errors` when there are).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let mut details = String::new();
        for suite in &self.suites {
            if !suite.errors.is_empty() {
                let _ = writeln!(details, "---- {} ({}) ----", suite.name, suite.file);
                for error in &suite.errors {
                    let _ = writeln!(details, "error: {error}");
                }
                details.push('\n');
                if suite.tests.is_empty() {
                    let _ = writeln!(out, "suite {} ({}) ... error", suite.name, suite.file);
                }
            }
            for test in &suite.tests {
                let status = match test.status {
                    TestStatus::Passed => "ok",
                    TestStatus::Failed => "FAILED",
                    TestStatus::Error => "error",
                };
                let _ = writeln!(out, "test {}::{} ... {status}", suite.name, test.name);
                if test.status == TestStatus::Passed {
                    continue;
                }
                let own: Vec<&TestError> =
                    test.errors.iter().filter(|e| !suite.errors.contains(e)).collect();
                if test.failures.is_empty() && own.is_empty() {
                    continue;
                }
                let _ = writeln!(details, "---- {}::{} ----", suite.name, test.name);
                for error in own {
                    let _ = writeln!(details, "error: {error}");
                }
                for failure in &test.failures {
                    let _ = writeln!(details, "{}:{}: {}", suite.file, failure.line, failure.path);
                    for line in failure_lines(failure) {
                        let _ = writeln!(details, "  {line}");
                    }
                }
                details.push('\n');
            }
        }
        if !details.is_empty() {
            out.push_str("\nfailures:\n\n");
            out.push_str(&details);
        } else {
            out.push('\n');
        }
        let _ = write!(out, "{} passed, {} failed", self.passed, self.failed);
        if self.errors > 0 {
            let _ = write!(out, ", {} errors", self.errors);
        }
        out.push('\n');
        out
    }

    /// JUnit XML (Jenkins xUnit `junit-10.xsd`): one `<testcase>` per test, a `<failure>`
    /// holding the diff, an `<error>` holding the problems. A suite in error without tests
    /// becomes one test case named after its file, so CI shows it.
    pub fn to_junit(&self) -> String {
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let total: usize = self.suites.iter().map(|s| s.tests.len().max(1)).sum();
        let _ = writeln!(
            out,
            "<testsuites name=\"svclab test\" tests=\"{total}\" failures=\"{}\" errors=\"{}\">",
            self.failed, self.errors
        );
        for suite in &self.suites {
            let failures = suite.tests.iter().filter(|t| t.status == TestStatus::Failed).count();
            let mut errors = suite.tests.iter().filter(|t| t.status == TestStatus::Error).count();
            if suite.tests.is_empty() {
                errors = 1;
            }
            let _ = writeln!(
                out,
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\" file=\"{}\">",
                xml(&suite.name),
                suite.tests.len().max(1),
                xml(&suite.file)
            );
            if suite.tests.is_empty() {
                let _ = writeln!(
                    out,
                    "    <testcase name=\"{}\" classname=\"{}\">",
                    xml(&suite.file),
                    xml(&suite.name)
                );
                let text: Vec<String> = suite.errors.iter().map(ToString::to_string).collect();
                let message = suite.errors.first().map(|e| e.message.as_str()).unwrap_or("");
                let _ = writeln!(
                    out,
                    "      <error type=\"error\" message=\"{}\">{}</error>",
                    xml(message),
                    xml_text(&text.join("\n"))
                );
                out.push_str("    </testcase>\n");
            }
            for test in &suite.tests {
                let open = format!(
                    "    <testcase name=\"{}\" classname=\"{}\"",
                    xml(&test.name),
                    xml(&suite.name)
                );
                match test.status {
                    TestStatus::Passed => {
                        let _ = writeln!(out, "{open}/>");
                    }
                    TestStatus::Failed => {
                        let _ = writeln!(out, "{open}>");
                        let paths: Vec<&str> =
                            test.failures.iter().map(|f| f.path.as_str()).collect();
                        let mut body = String::new();
                        for failure in &test.failures {
                            let _ =
                                writeln!(body, "{}:{}: {}", suite.file, failure.line, failure.path);
                            for line in failure_lines(failure) {
                                let _ = writeln!(body, "  {line}");
                            }
                        }
                        let _ = writeln!(
                            out,
                            "      <failure type=\"expectation\" message=\"{}\">{}</failure>",
                            xml(&format!("expectation not met: {}", paths.join(", "))),
                            xml_text(&body)
                        );
                        out.push_str("    </testcase>\n");
                    }
                    TestStatus::Error => {
                        let _ = writeln!(out, "{open}>");
                        let text: Vec<String> =
                            test.errors.iter().map(ToString::to_string).collect();
                        let message = test.errors.first().map(|e| e.message.as_str()).unwrap_or("");
                        let _ = writeln!(
                            out,
                            "      <error type=\"error\" message=\"{}\">{}</error>",
                            xml(message),
                            xml_text(&text.join("\n"))
                        );
                        out.push_str("    </testcase>\n");
                    }
                }
            }
            out.push_str("  </testsuite>\n");
        }
        out.push_str("</testsuites>\n");
        out
    }
}

/// What was wanted and what came, as lines of a small diff: `- want`, `+ got`; for two lists,
/// the items in common once (two spaces) and the others marked.
pub(crate) fn failure_lines(failure: &Failure) -> Vec<String> {
    if let Some(diff) = &failure.diff {
        let mut lines: Vec<String> = diff.lines().map(str::to_owned).collect();
        if let Some(note) = &failure.note {
            lines.push(format!("note: {note}"));
        }
        return lines;
    }
    let mut lines = match (&failure.want, &failure.got) {
        (serde_json::Value::Array(want), serde_json::Value::Array(got)) => list_diff(want, got),
        (want, got) => vec![format!("- {}", shown(want)), format!("+ {}", shown(got))],
    };
    if let Some(note) = &failure.note {
        lines.push(format!("note: {note}"));
    }
    lines
}

/// A value as the diff shows it: strings bare, `null` as "(none)".
fn shown(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => "(none)".to_owned(),
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Array(items) if items.is_empty() => "[]".to_owned(),
        other => other.to_string(),
    }
}

/// The items of two lists as a line diff (longest common subsequence).
fn list_diff(want: &[serde_json::Value], got: &[serde_json::Value]) -> Vec<String> {
    if want.is_empty() {
        let mut lines = vec!["- []".to_owned()];
        lines.extend(got.iter().map(|g| format!("+ {}", shown(g))));
        return lines;
    }
    if got.is_empty() {
        let mut lines: Vec<String> = want.iter().map(|w| format!("- {}", shown(w))).collect();
        lines.push("+ []".to_owned());
        return lines;
    }
    let (n, m) = (want.len(), got.len());
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if want[i] == got[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut lines = Vec::new();
    while i < n || j < m {
        if i < n && j < m && want[i] == got[j] {
            lines.push(format!("  {}", shown(&want[i])));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            // What was wanted first, then what came, as a reader compares them.
            lines.push(format!("- {}", shown(&want[i])));
            i += 1;
        } else {
            lines.push(format!("+ {}", shown(&got[j])));
            j += 1;
        }
    }
    lines
}

/// Text escaped for an XML attribute (a line end kept as a reference, which attribute
/// normalisation would otherwise turn into a space).
fn xml(text: &str) -> String {
    xml_text(text).replace('\n', "&#10;")
}

/// Text escaped for an XML element; characters XML 1.0 forbids are dropped.
fn xml_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push('\n'),
            '\t' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}
