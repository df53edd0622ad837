//! Test suites: a cluster's Services and the operator's policy, with the results the cluster
//! must keep giving (`svclab test`, the npm package's `runTests`, the playground's "Export as
//! test").
//!
//! # The format
//!
//! A file `*.svclab-test.yaml` holds one or more `svclab.dev/v1alpha1 TestSuite` documents:
//!
//! ```yaml
//! apiVersion: svclab.dev/v1alpha1
//! kind: TestSuite
//! metadata: {name: dns}
//! scenario: [cluster.yaml]          # files, relative to this file
//! resources: |                      # and/or inline documents (or a list of objects)
//!   ...
//! policy: policy.yaml               # optional: ServicePolicy documents or bare settings (a file
//!                                   # or the settings inline)
//! tests:
//! - name: kube-dns keeps its address
//!   resources: |                    # optional: documents added after the suite's
//!     ...
//!   expect:
//!     objects:
//!     - ref: Service kube-system/kube-dns   # "Kind ns/name", or "Kind name" (default namespace)
//!       outcome: created                    # created | updated | deleted | rejected
//!       clusterIPs: [10.96.0.10]
//!       band: static                        # static | dynamic | none
//!       nodePorts: []
//!       errors: []                          # each cause's message, exact, in order
//!       warnings: []
//!       violations: []                      # policy rule ids (nodePorts.forbid)
//!     rules: {proxyMode: iptables, node: node-a, includes: [...], excludes: [...], golden: f}
//!     traces:
//!     - {src: 10.244.1.5, dst: 10.96.0.10, dport: 53, protocol: udp, endpoints: [...]}
//! ```
//!
//! Every test runs the suite's scenario files, then its inline resources, then the test's own,
//! through the pipeline (with the policy in effect before every object), and compares each
//! expectation it wrote, and only those. A key svclab does not know, a test without an
//! expectation, a ref that names no object, a file that is missing or does not parse are
//! errors with file, line and column; a test in error is never a pass.
//!
//! # Sans-I/O
//!
//! The host reads the suite files, asks [`test_files`] which other files they name, reads those
//! and hands everything to [`run_tests`]; with [`TestOptions::update`] the run also returns the
//! rewritten files ([`TestRun::updated`]) for the host to write. The same calls run natively,
//! in the plugin (`run-tests` in `wit/policy.wit`) and in the browser, with the same bytes.

mod answers;
mod compare;
mod export;
mod format;
mod result;
mod schema;
mod tree;
mod update;

use std::collections::BTreeMap;

use crate::diagnostic::Severity;
use crate::manifest::{self, Input};
use crate::source::Pos;

use format::{PolicySource, Problem, Suite, Test};

pub use export::{ExportError, ExportOptions, export_test};
pub use result::{Failure, SuiteResult, TestError, TestResult, TestRun, TestStatus};

/// How [`run_tests`] runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestOptions {
    /// Rewrite every expectation that does not hold with what svclab answers (and every golden
    /// ruleset), then run the rewritten suites: the result is theirs, and
    /// [`TestRun::updated`] holds the files that changed.
    pub update: bool,
}

/// The file name suffix of suite files, as `svclab test DIR` looks for them.
pub const SUITE_SUFFIX: &str = ".svclab-test.yaml";

/// The JSON Schema of the suite format (`svclab test schema`).
pub fn test_schema() -> String {
    schema::SCHEMA.to_owned()
}

/// The files the suites name (scenario files, policy files, golden rulesets), resolved against
/// each suite's folder, once each, in the order named: what a host reads for [`run_tests`].
///
/// ```
/// use svclab_core::{Input, test_files};
/// let suite = "apiVersion: svclab.dev/v1alpha1\nkind: TestSuite\nmetadata: {name: s}\nscenario: [../cluster.yaml]\ntests: []\n";
/// assert_eq!(test_files(&[Input::new("tests/s.svclab-test.yaml", suite)]), ["cluster.yaml"]);
/// assert!(test_files(&[Input::new("x.yaml", "not: [closed")]).is_empty());
/// ```
pub fn test_files(suites: &[Input]) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    let mut add = |path: &str| {
        if !files.iter().any(|f| f == path) {
            files.push(path.to_owned());
        }
    };
    for input in suites {
        let Ok(roots) = tree::parse(&input.text) else { continue };
        for suite in format::suites(&input.name, &input.text, &roots) {
            for file in &suite.scenario {
                add(&file.path);
            }
            let tests_policies = suite.tests.iter().filter_map(|t| t.policy.as_ref());
            for policy in suite.policy.iter().chain(tests_policies) {
                if let PolicySource::File(file) = policy {
                    add(&file.path);
                }
            }
            for test in &suite.tests {
                if let Some(golden) = test.rules.as_ref().and_then(|r| r.golden.as_ref()) {
                    add(&golden.value.path);
                }
            }
        }
    }
    files
}

/// Runs every suite of `suites` (each input one suite file) against the files they name
/// (`files`: scenario files, policies, golden rulesets, as [`test_files`] lists them).
///
/// ```
/// use svclab_core::{Input, TestOptions, run_tests};
/// let suite = r#"apiVersion: svclab.dev/v1alpha1
/// kind: TestSuite
/// metadata: {name: dns}
/// resources: |
///   apiVersion: v1
///   kind: Service
///   metadata: {name: kube-dns, namespace: kube-system}
///   spec: {clusterIP: 10.96.0.10, ports: [{port: 53, protocol: UDP}]}
/// tests:
/// - name: kube-dns keeps its address
///   expect:
///     objects:
///     - {ref: Service kube-system/kube-dns, clusterIPs: [10.96.0.10], band: static}
/// "#;
/// let run = run_tests(&[Input::new("dns.svclab-test.yaml", suite)], &[], &TestOptions::default());
/// assert_eq!((run.passed, run.failed, run.errors), (1, 0, 0));
///
/// let wrong = suite.replace("band: static", "band: dynamic");
/// let run = run_tests(&[Input::new("dns.svclab-test.yaml", wrong)], &[], &TestOptions::default());
/// assert_eq!(run.suites[0].tests[0].failures[0].path, "expect.objects[0].band");
/// ```
pub fn run_tests(suites: &[Input], files: &[Input], options: &TestOptions) -> TestRun {
    let mut file_texts: BTreeMap<String, String> =
        files.iter().map(|f| (f.name.clone(), f.text.as_str().to_owned())).collect();
    let first = run_all(suites, &file_texts);
    if !options.update {
        return first.run;
    }
    // Rewrite, then run what was written: the result says whether the update made the suites
    // pass, rather than assuming it.
    let mut updated = Vec::new();
    let mut rewritten: Vec<Input> = Vec::with_capacity(suites.len());
    for input in suites {
        let replacements: Vec<(format::At, serde_json::Value)> = first
            .misses
            .iter()
            .filter(|(file, _, _)| *file == input.name)
            .map(|(_, at, value)| (at.clone(), value.clone()))
            .collect();
        let text = update::apply(&input.text, &replacements);
        if text != *input.text {
            updated.push(Input::new(input.name.clone(), text.clone()));
        }
        rewritten.push(Input::new(input.name.clone(), text));
    }
    for (path, text) in first.goldens {
        if file_texts.get(&path) != Some(&text) {
            updated.push(Input::new(path.clone(), text.clone()));
            file_texts.insert(path, text);
        }
    }
    let mut run = run_all(&rewritten, &file_texts).run;
    run.updated = updated;
    run
}

/// A run with what `--update` needs: the replacements (file, where, value) and the goldens.
struct Evaluated {
    run: TestRun,
    misses: Vec<(String, format::At, serde_json::Value)>,
    goldens: Vec<(String, String)>,
}

fn run_all(suites: &[Input], files: &BTreeMap<String, String>) -> Evaluated {
    let mut out = Evaluated { run: TestRun::default(), misses: Vec::new(), goldens: Vec::new() };
    for input in suites {
        let file = input.name.as_str();
        let roots = match tree::parse(&input.text) {
            Ok(roots) => roots,
            Err(err) => {
                out.run.suites.push(file_error(file, err.pos, &err.message));
                continue;
            }
        };
        if roots.is_empty() {
            let message = "the file holds no test suite";
            out.run.suites.push(file_error(file, Pos { line: 1, column: 1 }, message));
            continue;
        }
        for suite in format::suites(file, &input.text, &roots) {
            let result = run_suite(file, &suite, files, &mut out);
            out.run.suites.push(result);
        }
    }
    let run = &mut out.run;
    for suite in &run.suites {
        if suite.tests.is_empty() && !suite.errors.is_empty() {
            run.errors += 1;
        }
        for test in &suite.tests {
            match test.status {
                TestStatus::Passed => run.passed += 1,
                TestStatus::Failed => run.failed += 1,
                TestStatus::Error => run.errors += 1,
            }
        }
    }
    out
}

fn file_error(file: &str, pos: Pos, message: &str) -> SuiteResult {
    let name = file.rsplit('/').next().unwrap_or(file);
    SuiteResult {
        name: name.strip_suffix(SUITE_SUFFIX).unwrap_or(name).to_owned(),
        file: file.to_owned(),
        tests: Vec::new(),
        line: pos.line,
        errors: vec![error(file, pos, message)],
    }
}

fn error(file: &str, pos: Pos, message: &str) -> TestError {
    TestError {
        file: file.to_owned(),
        line: pos.line,
        column: pos.column,
        message: message.to_owned(),
    }
}

fn run_suite(
    file: &str,
    suite: &Suite,
    files: &BTreeMap<String, String>,
    out: &mut Evaluated,
) -> SuiteResult {
    let mut problems = suite.problems.clone();
    let missing = |path: &str, pos: Pos| Problem {
        pos,
        message: format!("cannot read `{path}` (paths are relative to the suite file)"),
    };
    for scenario in &suite.scenario {
        if !files.contains_key(&scenario.path) {
            problems.push(missing(&scenario.path, scenario.pos));
        }
    }
    if let Some(PolicySource::File(policy)) = &suite.policy
        && !files.contains_key(&policy.path)
    {
        problems.push(missing(&policy.path, policy.pos));
    }
    let suite_errors: Vec<TestError> =
        problems.iter().map(|p| error(file, p.pos, &p.message)).collect();
    let mut result = SuiteResult {
        name: suite.name.clone(),
        file: file.to_owned(),
        tests: Vec::new(),
        line: suite.line,
        errors: suite_errors.clone(),
    };
    for test in &suite.tests {
        let mut errors: Vec<TestError> =
            test.problems.iter().map(|p| error(file, p.pos, &p.message)).collect();
        if let Some(PolicySource::File(policy)) = &test.policy
            && !files.contains_key(&policy.path)
        {
            let problem = missing(&policy.path, policy.pos);
            errors.push(error(file, problem.pos, &problem.message));
        }
        if !suite_errors.is_empty() {
            errors.extend(suite_errors.iter().cloned());
        }
        let tested =
            if errors.is_empty() { run_test(file, suite, test, files, out) } else { Err(errors) };
        result.tests.push(match tested {
            Ok(failures) => TestResult {
                name: test.name.clone(),
                status: if failures.is_empty() { TestStatus::Passed } else { TestStatus::Failed },
                failures,
                line: test.line,
                errors: Vec::new(),
            },
            Err(errors) => TestResult {
                name: test.name.clone(),
                status: TestStatus::Error,
                failures: Vec::new(),
                line: test.line,
                errors,
            },
        });
    }
    result
}

/// The scenario of one test: the suite's files, its resources, the test's resources.
fn test_inputs(
    file: &str,
    suite: &Suite,
    test: &Test,
    files: &BTreeMap<String, String>,
) -> Vec<Input> {
    let mut inputs: Vec<Input> = suite
        .scenario
        .iter()
        .filter_map(|f| files.get(&f.path).map(|text| Input::new(f.path.clone(), text.clone())))
        .collect();
    for piece in suite.resources.iter().chain(&test.resources) {
        inputs.push(Input::new(file, piece.text.clone()));
    }
    inputs
}

/// Runs one test: its failures, or the errors that kept it from counting.
fn run_test(
    file: &str,
    suite: &Suite,
    test: &Test,
    files: &BTreeMap<String, String>,
    out: &mut Evaluated,
) -> Result<Vec<Failure>, Vec<TestError>> {
    let inputs = test_inputs(file, suite, test, files);
    let policy_source = test.policy.as_ref().or(suite.policy.as_ref());
    let policy = policy_source.and_then(|source| match source {
        PolicySource::File(f) => {
            files.get(&f.path).map(|text| Input::new(f.path.clone(), text.clone()))
        }
        PolicySource::Inline(piece) => Some(Input::new(file, piece.text.clone())),
    });
    let options = crate::pipeline::CheckOptions { policy, ..Default::default() };
    let (world, report) = crate::pipeline::evaluate(&inputs, &options);
    // What does not parse, and a policy that is not in effect, would make expectations hold
    // or fail for the wrong reason: errors, not results.
    let mut errors = Vec::new();
    for d in &report.diagnostics {
        let Some(source) = &d.source else { continue };
        let pos = Pos { line: source.line, column: source.column };
        let from_policy = match policy_source {
            Some(PolicySource::File(f)) => source.file == f.path,
            Some(PolicySource::Inline(piece)) => {
                source.file == file && piece.lines.contains(&source.line)
            }
            None => false,
        };
        let kind = d.object.as_ref().map_or("", |o| o.kind.as_str());
        if d.severity == Severity::Error
            && (d.reason == "InvalidSyntax" || (from_policy && kind == "ServicePolicy"))
        {
            errors.push(error(&source.file, pos, &d.message));
        }
    }
    let objects = manifest::parse(&inputs).objects;
    let answers = answers::Answers::new(&objects, &report);
    let findings = compare::test(test, &answers, &world, files);
    out.goldens.extend(findings.goldens);
    errors.extend(findings.problems.iter().map(|p| error(file, p.pos, &p.message)));
    if errors.is_empty() {
        for miss in &findings.misses {
            if let Some(fix) = &miss.fix {
                out.misses.push((file.to_owned(), miss.at.clone(), fix.clone()));
            }
        }
    }
    errors.extend(findings.missing_goldens.iter().map(|p| error(file, p.pos, &p.message)));
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut failures = Vec::with_capacity(findings.misses.len());
    for miss in findings.misses {
        failures.push(Failure {
            path: miss.at.path,
            line: miss.at.pos.line,
            want: miss.want,
            got: miss.got,
            diff: miss.diff,
            note: miss.note,
        });
    }
    Ok(failures)
}

#[cfg(test)]
mod tests;
