//! End-to-end tests of the browser playground in real headless Chromium, run by `cargo test`.
//!
//! This harness builds the static site (`cargo xtask playground`), serves it on 127.0.0.1 with
//! `cargo xtask serve 0` and runs `tests/e2e/playground.test.mjs` with node's test runner
//! (playwright-core driving `/usr/bin/chromium`). Missing tools fail the test with the set-up
//! command that installs them; nothing is skipped silently. Screenshots and the measured figures
//! (`metrics.json`) land in `<target>/e2e/`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

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

fn check_tools(root: &Path) {
    let missing: Vec<&str> = [
        (Path::new("/usr/bin/chromium").exists(), "Chromium (/usr/bin/chromium): bash scripts/setup.d/32-chromium.sh"),
        (
            Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success()),
            "node: bash scripts/setup.d/31-npm.sh",
        ),
        (
            root.join("playground-web/js/node_modules/playwright-core").exists(),
            "playwright-core and esbuild (playground-web/js/node_modules): bash scripts/setup.d/31-npm.sh",
        ),
        (
            Command::new("wasm-bindgen").arg("--version").output().is_ok_and(|o| o.status.success()),
            "the wasm-bindgen CLI: bash scripts/setup.d/30-wasm-bindgen.sh",
        ),
    ]
    .into_iter()
    .filter(|(present, _)| !present)
    .map(|(_, what)| what)
    .collect();
    assert!(
        missing.is_empty(),
        "the playground's browser tests need tools that are missing (or run `bash scripts/setup.sh`):\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn playground_in_headless_chromium() {
    let root = workspace_root();
    check_tools(&root);

    let build = Command::new(cargo())
        .current_dir(&root)
        .args(["xtask", "playground"])
        .status()
        .map(|s| s.success());
    assert!(matches!(build, Ok(true)), "`cargo xtask playground` failed: {build:?}");

    let child = Command::new(cargo())
        .current_dir(&root)
        .args(["xtask", "serve", "0", "--for", "900"])
        .stdout(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else { panic!("could not start `cargo xtask serve`: {child:?}") };
    let stdout = child.stdout.take();
    let server = Server(child);
    let mut first_line = String::new();
    if let Some(stdout) = stdout {
        let _ = BufReader::new(stdout).read_line(&mut first_line);
    }
    let Some(url) = first_line.trim().strip_prefix("svclab playground: ") else {
        panic!("`cargo xtask serve` did not print its URL: {first_line:?}");
    };

    let shots = target_dir(&root).join("e2e");
    let output = Command::new("node")
        .current_dir(&root)
        .args(["--test", "--test-reporter=spec", "tests/e2e/"])
        .env("SVCLAB_URL", url)
        .env("SVCLAB_SHOTS", &shots)
        .output();
    drop(server);
    let Ok(output) = output else { panic!("could not run node: {output:?}") };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "browser tests failed:\n{text}");
    // Shown with `--nocapture`: the figures and where the screenshots are.
    let figures = text.lines().filter(|l| l.starts_with("METRICS ")).collect::<Vec<_>>().join("\n");
    let _ = writeln!(std::io::stdout(), "{figures}\nscreenshots: {}", shots.display());
}
