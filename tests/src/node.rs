//! Running svclab's JavaScript test suites (the playground and the guide in headless Chromium,
//! the npm package in Node) from `cargo test`: the tools they need, cargo and xtask steps, the
//! static server, and `node --test` over a directory.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::workspace_root;

/// A tool a suite needs: whether it is present, and what installs it.
pub struct Tool {
    present: bool,
    what: &'static str,
}

/// Node itself.
pub fn node() -> Tool {
    Tool { present: runs("node"), what: "node: bash scripts/setup.d/31-npm.sh" }
}

/// Debian's Chromium, which playwright-core drives.
pub fn chromium() -> Tool {
    Tool {
        present: Path::new("/usr/bin/chromium").exists(),
        what: "Chromium (/usr/bin/chromium): bash scripts/setup.d/32-chromium.sh",
    }
}

/// The wasm-bindgen CLI the playground build runs.
pub fn wasm_bindgen() -> Tool {
    Tool {
        present: runs("wasm-bindgen"),
        what: "the wasm-bindgen CLI: bash scripts/setup.d/30-wasm-bindgen.sh",
    }
}

/// npm packages under `playground-web/js/node_modules` (playwright-core, jco, esbuild, yaml).
pub fn npm_packages(names: &[&str]) -> Tool {
    let modules = workspace_root().join("playground-web/js/node_modules");
    Tool {
        present: names.iter().all(|name| modules.join(name).exists()),
        what: "npm packages (playground-web/js/node_modules): bash scripts/setup.d/31-npm.sh",
    }
}

fn runs(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Fails the test, naming every missing tool and its set-up step: a suite never skips silently.
pub fn require(suite: &str, tools: &[Tool]) {
    let missing: Vec<&str> = tools.iter().filter(|t| !t.present).map(|t| t.what).collect();
    assert!(
        missing.is_empty(),
        "{suite} needs tools that are missing (or run `bash scripts/setup.sh`):\n  {}",
        missing.join("\n  ")
    );
}

/// Cargo's target directory, as the build under test uses it.
pub fn target_dir() -> PathBuf {
    let root = workspace_root();
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("target"),
    }
}

fn cargo_command() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    command.current_dir(workspace_root());
    command
}

/// Runs `cargo ARGS` in the workspace and returns its output; fails the test if it fails.
pub fn cargo(args: &[&str]) -> String {
    let output = cargo_command().args(args).output();
    let Ok(output) = output else { panic!("could not run cargo {args:?}: {output:?}") };
    let text = combined(&output);
    assert!(output.status.success(), "`cargo {}` failed:\n{text}", args.join(" "));
    text
}

/// `cargo xtask serve 0 ...`: the built site on a free loopback port, stopped when dropped
/// however the test ends.
pub struct StaticServer {
    child: Child,
    /// The URL the server printed.
    pub url: String,
}

impl StaticServer {
    /// Starts the server with `extra` arguments after `serve 0 --for 900`.
    pub fn start(extra: &[&str]) -> Self {
        let child = cargo_command()
            .args(["xtask", "serve", "0", "--for", "900"])
            .args(extra)
            .stdout(Stdio::piped())
            .spawn();
        let Ok(mut child) = child else { panic!("could not start `cargo xtask serve`: {child:?}") };
        let mut url = String::new();
        if let Some(stdout) = child.stdout.take() {
            let mut reader = BufReader::new(stdout);
            // The first lines may be notes (a playground that is not built); the URL line follows.
            for _ in 0..4 {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if let Some(found) = line.trim().strip_prefix("svclab playground: ") {
                    found.clone_into(&mut url);
                    break;
                }
            }
        }
        let server = Self { child, url };
        assert!(!server.url.is_empty(), "`cargo xtask serve` did not print its URL");
        server
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `node --test` over `dir` (relative to the workspace) with `env`, fails the test with the
/// whole output if a test fails, and returns the output.
pub fn node_tests(suite: &str, dir: &str, env: &[(&str, &OsStr)]) -> String {
    let mut command = Command::new("node");
    command.current_dir(workspace_root()).args(["--test", "--test-reporter=spec", dir]);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output();
    let Ok(output) = output else { panic!("could not run node: {output:?}") };
    let text = combined(&output);
    assert!(output.status.success(), "{suite}'s tests failed:\n{text}");
    text
}

/// The `METRICS {...}` lines a browser suite prints, for `--nocapture`.
pub fn metrics(text: &str) -> String {
    text.lines().filter(|l| l.starts_with("METRICS ")).collect::<Vec<_>>().join("\n")
}

fn combined(output: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
