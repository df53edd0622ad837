//! `svclab test`: the example suites pass in both engines with the same bytes, the exit status
//! says what happened, the JUnit XML validates against the Jenkins JUnit schema, and
//! `--update` makes a suite with wrong values pass while changing nothing else in it.

use std::path::{Path, PathBuf};
use std::process::Command;

use svclab_core::{Input, TestOptions};
use svclab_host::Engine;

use crate::support::{Run, plugin, svclab};

/// Runs `svclab ARGS` and checks the exit code.
#[track_caller]
fn check(args: &[&str], code: u8) -> Run {
    let run = svclab(args, "");
    assert_eq!(run.code, code, "svclab {args:?}\nstdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    run
}

/// The example suites, as `svclab test ../examples/tests` reads them (from `tests/`).
fn example_suites() -> Vec<Input> {
    let dir = Path::new("../examples/tests");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("examples/tests")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.display().to_string().ends_with(".svclab-test.yaml"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let name = path.display().to_string();
            Input::new(name.clone(), std::fs::read_to_string(path).expect("suite"))
        })
        .collect()
}

fn named_files(engine: &Engine, suites: &[Input]) -> Vec<Input> {
    engine
        .test_files(suites)
        .expect("test-files")
        .into_iter()
        .filter_map(|name| std::fs::read_to_string(&name).ok().map(|text| Input::new(name, text)))
        .collect()
}

/// The absolute path of a file under `examples/` (a suite copied elsewhere names it so).
fn example(name: &str) -> String {
    crate::support::workspace().join("examples").join(name).display().to_string()
}

/// A scratch folder of its own for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("svclab-test").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

#[test]
fn the_example_suites_pass_with_the_same_bytes_in_both_engines() {
    let suites = example_suites();
    assert!(suites.len() >= 6, "{} suites", suites.len());
    let files = named_files(&Engine::Native, &suites);
    assert_eq!(files, named_files(plugin(), &suites));
    let native =
        Engine::Native.run_tests(&suites, &files, &TestOptions::default()).expect("native");
    let plugged = plugin().run_tests(&suites, &files, &TestOptions::default()).expect("plugin");
    assert!(native.run.success(), "{}", native.text);
    assert_eq!(native.json, plugged.json);
    assert_eq!(native.text, plugged.text);

    // Failures, errors and an update give the same bytes too.
    let broken: Vec<Input> = suites
        .iter()
        .map(|s| {
            let text = s
                .text
                .replace("outcome: created", "outcome: updated")
                .replace("band: static", "colour: static");
            Input::new(s.name.clone(), text)
        })
        .collect();
    let update = TestOptions { update: true };
    let native = Engine::Native.run_tests(&broken, &files, &update).expect("native");
    let plugged = plugin().run_tests(&broken, &files, &update).expect("plugin");
    assert_eq!(native.json, plugged.json);
    assert_eq!(native.run.updated, plugged.run.updated);
    assert!(!native.run.updated.is_empty());
    let schema = |engine: &Engine| engine.test_schema().map(|outcome| outcome.output);
    assert_eq!(schema(&Engine::Native), schema(plugin()), "test-schema");
}

#[test]
fn the_exit_status_says_what_happened() {
    let dir = scratch("exit");
    let passing = std::fs::read_to_string("../examples/tests/unique-selector.svclab-test.yaml")
        .expect("suite")
        .replace("../policy-unique-selector.yaml", &example("policy-unique-selector.yaml"));
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        path.display().to_string()
    };
    let ok = write("ok.svclab-test.yaml", &passing);
    let failing = write(
        "failing.svclab-test.yaml",
        &passing.replace("outcome: rejected", "outcome: created"),
    );
    let erring =
        write("erring.svclab-test.yaml", &passing.replace("violations: []}", "violation: []}"));
    let run = check(&["test", &ok], 0);
    assert!(run.stdout.ends_with("\n3 passed, 0 failed\n"), "{}", run.stdout);
    let run = check(&["test", &failing, "--engine", "native"], 1);
    assert!(
        run.stdout.contains(
            "test unique-selector::the same selector in the same namespace is denied ... FAILED"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "{failing}:18: expect.objects[0].outcome\n  - created\n  + rejected\n"
        )),
        "{}",
        run.stdout
    );
    let run = check(&["test", &erring], 1);
    assert!(
        run.stdout
            .contains(&format!("error: {erring}:10:49: unknown key `expect.objects[0].violation`")),
        "{}",
        run.stdout
    );
    assert!(run.stdout.ends_with("1 passed, 0 failed, 2 errors\n"), "{}", run.stdout);
    let run = check(&["test", "--output", "json", dir.to_str().expect("path")], 1);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(
        (json["passed"].as_u64(), json["failed"].as_u64(), json["errors"].as_u64()),
        (Some(6), Some(1), Some(2))
    );
    let run = check(&["test", "no/such/dir.svclab-test.yaml"], 2);
    assert!(run.stderr.contains("cannot read"), "{}", run.stderr);
    let run = check(&["test", "schema"], 0);
    let schema: serde_json::Value = serde_json::from_str(&run.stdout).expect("schema");
    assert_eq!(schema["properties"]["kind"]["const"], "TestSuite");
}

#[test]
fn junit_output_validates_against_the_jenkins_junit_schema() {
    let dir = scratch("junit");
    let failing = std::fs::read_to_string("../examples/tests/no-nodeport.svclab-test.yaml")
        .expect("suite")
        .replace("../policy-no-nodeport.yaml", &example("policy-no-nodeport.yaml"))
        .replace("outcome: rejected", "outcome: created")
        .replace(
            "name: a ClusterIP Service passes",
            "name: a <ClusterIP> & \"quoted\" Service passes",
        );
    std::fs::write(dir.join("failing.svclab-test.yaml"), failing).expect("write");
    std::fs::write(dir.join("broken.svclab-test.yaml"), "kind: [\n").expect("write");
    std::fs::write(dir.join("erring.svclab-test.yaml"), "apiVersion: svclab.dev/v1alpha1\nkind: TestSuite\nmetadata: {name: e}\ntests:\n- name: t\n  expect: {}\n").expect("write");
    let junit = dir.join("junit.xml");
    let junit_path = junit.display().to_string();
    check(&["test", "../examples/tests", dir.to_str().expect("path"), "--junit", &junit_path], 1);
    let xml = std::fs::read_to_string(&junit).expect("junit.xml");
    assert!(xml.contains("<failure type=\"expectation\""), "{xml}");
    assert!(xml.contains("<error type=\"error\""), "{xml}");
    assert!(
        xml.contains("name=\"a &lt;ClusterIP&gt; &amp; &quot;quoted&quot; Service passes\""),
        "{xml}"
    );
    assert_eq!(xmllint(&junit), Ok(()), "{xml}");

    // The check has teeth: an attribute the schema does not know is refused.
    let invalid = dir.join("invalid.xml");
    std::fs::write(&invalid, xml.replacen("<testcase ", "<testcase line=\"1\" ", 1))
        .expect("write");
    assert!(xmllint(&invalid).is_err(), "xmllint accepted an unknown attribute");
}

/// `xmllint --schema tests/data/junit/junit-10.xsd FILE`: Ok, or what xmllint said.
fn xmllint(file: &Path) -> Result<(), String> {
    let output = Command::new("xmllint")
        .args(["--noout", "--schema", "data/junit/junit-10.xsd"])
        .arg(file)
        .output()
        .map_err(|err| {
            format!(
                "cannot run xmllint ({err}): scripts/setup.d/46-junit.sh installs libxml2-utils"
            )
        })?;
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

#[test]
fn update_makes_wrong_values_pass_and_changes_nothing_else() {
    let dir = scratch("update");
    let original = std::fs::read_to_string("../examples/tests/dns.svclab-test.yaml")
        .expect("suite")
        .replace("../dns-static-band.yaml", &example("dns-static-band.yaml"))
        .replace("policies/", &example("tests/policies/"));
    let golden = std::fs::read_to_string("../examples/tests/dns-node-a.rules").expect("golden");
    let wrong = original
        .replace("clusterIPs: [10.102.210.226]", "clusterIPs: [10.96.0.99]")
        .replace("band: static", "band: dynamic")
        .replace("\"10.244.2.11:53\"", "\"10.244.2.12:53\"")
        .replace("verdict: no-service", "verdict: DROP")
        .replace("violations: [clusterIP.reservations]", "violations: []");
    assert_ne!(wrong, original);
    let suite = dir.join("dns.svclab-test.yaml");
    std::fs::write(&suite, &wrong).expect("write");
    std::fs::write(dir.join("dns-node-a.rules"), golden.replace("-j KUBE-SVC-", "-j KUBE-SVX-"))
        .expect("write");
    let path = suite.display().to_string();
    check(&["test", &path], 1);
    let run = check(&["test", "--update", &path], 0);
    assert!(run.stderr.contains(&format!("svclab: updated {path}")), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&suite).expect("read"), original);
    assert_eq!(std::fs::read_to_string(dir.join("dns-node-a.rules")).expect("read"), golden);
    check(&["test", &path], 0);
}
