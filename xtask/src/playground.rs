//! `cargo xtask playground` builds the browser playground into a self-contained static site
//! (`<target>/playground/`), which `cargo xtask serve` serves.
//!
//! The build does without trunk: cargo builds `svclab-playground` for `wasm32-unknown-unknown`
//! in release, the `wasm-bindgen` CLI (the exact version of the crate in Cargo.lock) writes the
//! JS glue, and esbuild bundles the CodeMirror editor into the snippet wasm-bindgen copied, so
//! the page imports nothing from outside its own origin.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail, ensure};

use crate::files::find_files;
use crate::gzip::gzip;
use crate::workspace::{run, say, target_dir, workspace_root};

const PACKAGE: &str = "svclab-playground";
const WASM_NAME: &str = "svclab-playground.wasm";
const OUT_NAME: &str = "svclab_playground";

/// Where the static site goes.
pub(crate) fn site_dir() -> PathBuf {
    target_dir(&workspace_root()).join("playground")
}

/// The `wasm-bindgen` version in Cargo.lock.
fn locked_wasm_bindgen(root: &Path) -> anyhow::Result<String> {
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).context("reading Cargo.lock")?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == "name = \"wasm-bindgen\""
            && let Some(version) = lines.next().and_then(|l| l.strip_prefix("version = \""))
        {
            return Ok(version.trim_end_matches('"').to_owned());
        }
    }
    bail!("wasm-bindgen is not in Cargo.lock")
}

/// `cargo xtask playground`.
pub(crate) fn build() -> anyhow::Result<()> {
    build_with(&target_dir(&workspace_root()), &[])
}

/// The playground, its wasm built in `cargo_target_dir` with `config` as `--config` values
/// (`cargo xtask dist` remaps build paths in a target directory of its own); the site still
/// goes to [`site_dir`].
pub(crate) fn build_with(cargo_target_dir: &Path, config: &[String]) -> anyhow::Result<()> {
    let root = workspace_root();
    let target = target_dir(&root);
    let js_dir = root.join("playground-web/js");
    let esbuild = js_dir.join("node_modules/.bin/esbuild");
    ensure!(
        esbuild.exists(),
        "{} is missing: run `bash scripts/setup.d/31-npm.sh` (npm ci in playground-web/js) first",
        esbuild.display()
    );
    let wanted = locked_wasm_bindgen(&root)?;
    let found =
        Command::new("wasm-bindgen").arg("--version").output().ok().filter(|o| o.status.success());
    let found =
        found.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned()).unwrap_or_default();
    ensure!(
        found == format!("wasm-bindgen {wanted}"),
        "the wasm-bindgen CLI must be version {wanted} (Cargo.lock), found {:?}: run `bash scripts/setup.d/30-wasm-bindgen.sh`",
        if found.is_empty() { "none" } else { found.as_str() }
    );

    say("playground: cargo build (wasm32-unknown-unknown, release)");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    run(
        Command::new(cargo)
            .current_dir(&root)
            .args(["build", "--release", "--target", "wasm32-unknown-unknown", "-p", PACKAGE])
            .arg("--target-dir")
            .arg(cargo_target_dir)
            .args(config.iter().flat_map(|value| ["--config", value.as_str()]))
            // Speed over size: the core runs on every edit. Measured 2026-12-02 (1,000
            // Services, headless Chromium, median of 11 pastes, 4-5 runs each): re-evaluation
            // 39 ms at opt-level "s", 33 ms at 3, for 838 KB gzipped instead of 689 KB.
            // simd128 (sha2's vector backend) measured no faster here and is left off.
            .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "3")
            .env("CARGO_PROFILE_RELEASE_LTO", "true")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
            .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
            .env("CARGO_PROFILE_RELEASE_PANIC", "abort"),
        "cargo build of the playground",
    )?;
    let wasm = cargo_target_dir.join("wasm32-unknown-unknown/release").join(WASM_NAME);

    let staging = target.join("playground-staging");
    if staging.exists() {
        std::fs::remove_dir_all(&staging)
            .with_context(|| format!("removing {}", staging.display()))?;
    }
    say("playground: wasm-bindgen");
    run(
        Command::new("wasm-bindgen")
            .args(["--target", "web", "--no-typescript", "--out-name", OUT_NAME, "--out-dir"])
            .arg(&staging)
            .arg(&wasm),
        "wasm-bindgen",
    )?;

    // wasm-bindgen copied js/editor.js verbatim; replace the copy by its esbuild bundle.
    let snippets = find_files(&staging.join("snippets"), "editor.js");
    ensure!(snippets.len() == 1, "expected one editor.js snippet, found {}", snippets.len());
    say("playground: esbuild (CodeMirror bundle)");
    run(
        Command::new(&esbuild)
            .current_dir(&js_dir)
            .args([
                "editor.js",
                "--bundle",
                "--format=esm",
                "--minify",
                "--target=es2020",
                "--log-level=warning",
            ])
            .arg(format!("--outfile={}", snippets[0].display())),
        "esbuild",
    )?;

    let static_dir = root.join("playground-web/static");
    for entry in std::fs::read_dir(&static_dir)
        .with_context(|| format!("reading {}", static_dir.display()))?
    {
        let entry = entry?;
        std::fs::copy(entry.path(), staging.join(entry.file_name()))?;
    }
    let mut total = 0;
    let mut total_gzip = 0;
    for file in find_files(&staging, "") {
        let bytes = std::fs::read(&file)?;
        let gzip = gzip(&bytes);
        total += bytes.len();
        total_gzip += gzip.len();
        let mut name = file.clone().into_os_string();
        name.push(".gz");
        std::fs::write(PathBuf::from(name), gzip)?;
    }
    let site = target.join("playground");
    if site.exists() {
        std::fs::remove_dir_all(&site).with_context(|| format!("removing {}", site.display()))?;
    }
    std::fs::rename(&staging, &site)?;
    say(&format!("playground: wrote {} ({total} bytes, {total_gzip} gzipped)", site.display()));
    Ok(())
}
