//! The `svclab` npm package in Node, run by `cargo test`: builds the native `svclab` command and
//! the package (`cargo xtask npm`, jco over the plugin component), then runs
//! `npm/test/` with node's test runner: `parity.test.mjs` compares the package's answers with the
//! command's bytes on the examples, the guide, the validation vectors and the kube-proxy golden
//! inputs; `types.test.mjs` type-checks a consumer against the package's TypeScript types. Missing tools fail the test with the set-up command that installs them.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("target"),
    }
}

fn cargo(root: &Path, args: &[&str]) -> String {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .current_dir(root)
        .args(args)
        .output();
    let Ok(output) = output else { panic!("could not run cargo {args:?}: {output:?}") };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "`cargo {}` failed:\n{text}", args.join(" "));
    text
}

#[test]
fn npm_package_matches_the_command_in_node() {
    let root = svclab_tests::workspace_root();
    let modules = root.join("playground-web/js/node_modules");
    let missing: Vec<&str> = [
        (
            Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success()),
            "node: bash scripts/setup.d/31-npm.sh",
        ),
        (
            modules.join("@bytecodealliance/jco").exists() && modules.join("yaml").exists(),
            "jco, esbuild and yaml (playground-web/js/node_modules): bash scripts/setup.d/31-npm.sh",
        ),
    ]
    .into_iter()
    .filter(|(present, _)| !present)
    .map(|(_, what)| what)
    .collect();
    assert!(
        missing.is_empty(),
        "the npm package's tests need tools that are missing (or run `bash scripts/setup.sh`):\n  {}",
        missing.join("\n  ")
    );

    cargo(&root, &["build", "--quiet", "-p", "svclab-host", "--bin", "svclab"]);
    let built = cargo(&root, &["xtask", "npm"]);
    let target = target_dir(&root);
    let output = Command::new("node")
        .current_dir(&root)
        .args(["--test", "--test-reporter=spec", "npm/test/"])
        .env("SVCLAB_NPM", target.join("npm/svclab"))
        .env("SVCLAB_BIN", target.join("debug/svclab"))
        .output();
    let Ok(output) = output else { panic!("could not run node: {output:?}") };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "the npm package's tests failed:\n{text}");
    // Shown with `--nocapture`: the package's files and sizes.
    let sizes: Vec<&str> =
        built.lines().filter(|l| l.starts_with("npm: ") || l.starts_with("  ")).collect();
    let _ = writeln!(std::io::stdout(), "{}", sizes.join("\n"));
}
