//! The guide in headless Chromium, run by `cargo test`: builds the guide (`cargo xtask docs`,
//! which builds the npm package it embeds), serves it with `cargo xtask serve 0 --no-build` and
//! runs `tests/guide/guide.test.mjs` (playwright-core driving `/usr/bin/chromium`). Screenshots
//! and the measured figures (`metrics.json`) land in `<target>/guide-e2e/`. Missing tools fail
//! the test with the set-up command that installs them.

use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("target"),
    }
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// Kills the static server when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn guide_examples_in_headless_chromium() {
    let root = svclab_tests::workspace_root();
    let modules = root.join("playground-web/js/node_modules");
    let missing: Vec<&str> = [
        (Path::new("/usr/bin/chromium").exists(), "Chromium (/usr/bin/chromium): bash scripts/setup.d/32-chromium.sh"),
        (
            Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success()),
            "node: bash scripts/setup.d/31-npm.sh",
        ),
        (
            modules.join("playwright-core").exists() && modules.join("@bytecodealliance/jco").exists(),
            "playwright-core, jco and esbuild (playground-web/js/node_modules): bash scripts/setup.d/31-npm.sh",
        ),
    ]
    .into_iter()
    .filter(|(present, _)| !present)
    .map(|(_, what)| what)
    .collect();
    assert!(
        missing.is_empty(),
        "the guide's browser tests need tools that are missing (or run `bash scripts/setup.sh`):\n  {}",
        missing.join("\n  ")
    );

    let build = Command::new(cargo()).current_dir(&root).args(["xtask", "docs"]).status();
    assert!(build.as_ref().is_ok_and(|s| s.success()), "`cargo xtask docs` failed: {build:?}");

    let child = Command::new(cargo())
        .current_dir(&root)
        .args(["xtask", "serve", "0", "--for", "900", "--no-build"])
        .stdout(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else { panic!("could not start `cargo xtask serve`: {child:?}") };
    let stdout = child.stdout.take();
    let server = Server(child);
    let mut url = String::new();
    if let Some(stdout) = stdout {
        let mut reader = BufReader::new(stdout);
        // The first lines may be notes (a playground that is not built); the URL line follows.
        for _ in 0..4 {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            if let Some(found) = line.trim().strip_prefix("svclab playground: ") {
                url = found.to_owned();
                break;
            }
        }
    }
    assert!(!url.is_empty(), "`cargo xtask serve` did not print its URL");

    let shots = target_dir(&root).join("guide-e2e");
    let output = Command::new("node")
        .current_dir(&root)
        .args(["--test", "--test-reporter=spec", "tests/guide/"])
        .env("SVCLAB_URL", &url)
        .env("SVCLAB_SHOTS", &shots)
        .output();
    drop(server);
    let Ok(output) = output else { panic!("could not run node: {output:?}") };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "the guide's browser tests failed:\n{text}");
    let figures = text.lines().filter(|l| l.starts_with("METRICS ")).collect::<Vec<_>>().join("\n");
    let _ = writeln!(std::io::stdout(), "{figures}\nscreenshots: {}", shots.display());
}
