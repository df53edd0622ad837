//! `cargo xtask npm` builds the `svclab` npm package into `<target>/npm/svclab/`, ready to
//! publish (never published from here): the plugin component (`plugin-wasm`, the very file the
//! `svclab` command runs under wasmtime) transpiled by jco into an ES module with TypeScript
//! types generated from `wit/policy.wit`, the hand-written API of `npm/src/api.js` on top, and
//! the `<svclab-example>` element. esbuild bundles each entry point with jco's WASI shims
//! (`@bytecodealliance/preview2-shim`, browser build), so the package has no dependencies and
//! the same files run in Node and in browsers.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, ensure};

use crate::files::{copy_dir, find_files};
use crate::gzip::gzip;
use crate::workspace::{run, say, target_dir, workspace_root};

/// The component's name in jco's output (`svclab.js`, `svclab.core.wasm`, ...).
const NAME: &str = "svclab";

/// Where the package is written.
pub(crate) fn package_dir() -> PathBuf {
    target_dir(&workspace_root()).join("npm/svclab")
}

/// `cargo xtask npm`: the package around the component as `cargo xtask build-plugin` builds it.
pub(crate) fn build() -> anyhow::Result<()> {
    package(&crate::plugin::build_component()?)
}

/// The package around the component `wasm` (`cargo xtask dist` passes one built without build
/// paths).
pub(crate) fn package(wasm: &Path) -> anyhow::Result<()> {
    let root = workspace_root();
    let js_dir = root.join("playground-web/js");
    let bin = js_dir.join("node_modules/.bin");
    for tool in ["jco", "esbuild"] {
        ensure!(
            bin.join(tool).exists(),
            "{} is missing: run `bash scripts/setup.d/31-npm.sh` (npm ci in playground-web/js) first",
            bin.join(tool).display()
        );
    }
    let out = package_dir();
    let staging = out.with_file_name("svclab-staging");
    for dir in [&out, &staging] {
        if dir.exists() {
            std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
        }
    }
    copy_dir(&root.join("npm/src"), &staging.join("src"))?;
    say("npm: jco transpile");
    run(
        Command::new(bin.join("jco"))
            .current_dir(&root)
            .arg("transpile")
            .arg(wasm)
            .args(["--name", NAME, "--no-namespaced-exports", "--quiet", "--out-dir"])
            .arg(staging.join("component")),
        "jco transpile",
    )?;
    let dist = out.join("dist");
    std::fs::create_dir_all(&dist)?;
    say("npm: esbuild (API and <svclab-example>)");
    for (entry, bundle) in [("api.js", "svclab.js"), ("element.js", "svclab-example.js")] {
        run(
            Command::new(bin.join("esbuild"))
                .current_dir(&js_dir)
                // The staging directory is under the target directory: resolve the shims from
                // playground-web/js/node_modules.
                .env("NODE_PATH", js_dir.join("node_modules"))
                .arg(staging.join("src").join(entry))
                .args([
                    "--bundle",
                    "--format=esm",
                    "--platform=browser",
                    "--target=es2022",
                    "--minify",
                    "--loader:.css=text",
                    // jco's glue imports node:fs only when it runs in Node.
                    "--external:node:*",
                    "--log-level=warning",
                ])
                .arg(format!("--outfile={}", dist.join(bundle).display())),
            "esbuild",
        )?;
    }
    for core in find_files(&staging.join("component"), ".wasm") {
        let name = core.file_name().context("a file name")?;
        std::fs::copy(&core, dist.join(name))?;
    }
    std::fs::copy(root.join("npm/src/element.css"), dist.join("svclab-example.css"))?;
    // Types: jco's, generated from the WIT, under types/; the API's own beside them.
    for file in find_files(&staging.join("component"), ".d.ts") {
        let relative = file.strip_prefix(staging.join("component"))?;
        let to = out.join("types").join(relative);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(&file, &to)?;
    }
    for file in ["index.d.ts", "element.d.ts", "README.md"] {
        std::fs::copy(root.join("npm").join(file), out.join(file))?;
    }
    let version = workspace_version(&root)?;
    let manifest = std::fs::read_to_string(root.join("npm/package.json"))?
        .replace("\"version\": \"0.0.0\"", &format!("\"version\": \"{version}\""));
    std::fs::write(out.join("package.json"), manifest)?;
    std::fs::copy(wasm, out.join("svclab.wasm"))?;
    std::fs::remove_dir_all(&staging)?;

    let mut lines = Vec::new();
    let (mut total, mut total_gzip) = (0, 0);
    for file in find_files(&dist, "") {
        let bytes = std::fs::read(&file)?;
        let gz = gzip(&bytes).len();
        if !file.to_string_lossy().ends_with(".css") {
            total += bytes.len();
            total_gzip += gz;
        }
        lines.push(format!(
            "  {}: {} bytes, {gz} gzipped",
            file.strip_prefix(&out)?.display(),
            bytes.len()
        ));
    }
    say(&format!("npm: wrote {}", out.display()));
    for line in lines {
        say(&line);
    }
    say(&format!("npm: dist/ scripts and wasm: {total} bytes, {total_gzip} gzipped"));
    Ok(())
}

/// `version` of `[workspace.package]`.
fn workspace_version(root: &Path) -> anyhow::Result<String> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml"))?;
    manifest
        .lines()
        .skip_while(|line| line.trim() != "[workspace.package]")
        .find_map(|line| line.strip_prefix("version = \""))
        .map(|rest| rest.trim_end_matches('"').to_owned())
        .context("no version in [workspace.package]")
}
