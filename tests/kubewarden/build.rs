//! Builds the svclab Kubewarden policy (`plugin-wasm/kubewarden`, target
//! `wasm32-unknown-unknown`, profile `plugin`) and annotates it with its metadata exactly as
//! `cargo xtask plugins` does (same code, included by path), so the tests drive the module
//! that ships.
//!
//! `SVCLAB_KUBEWARDEN_WASM=/path/to/svclab-kubewarden.wasm` tests a prebuilt (already
//! annotated) file instead, e.g. the one `cargo xtask plugins` wrote.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "cargo reads build script instructions from stdout and shows stderr on failure"
)]

#[path = "../../xtask/src/annotate.rs"]
mod annotate;

use std::path::{Path, PathBuf};
use std::process::Command;

const PACKAGE: &str = "svclab-plugin-kubewarden";
const TARGET: &str = "wasm32-unknown-unknown";
const PROFILE: &str = "plugin";
const FILE: &str = "svclab-kubewarden.wasm";

fn main() {
    if let Err(message) = run() {
        eprintln!("error: cannot build the svclab Kubewarden policy: {message}");
        eprintln!(
            "hint: it needs the {TARGET} target (scripts/setup.d/10-rust.sh installs it); SVCLAB_KUBEWARDEN_WASM=<file> tests a prebuilt one"
        );
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR")?);
    let workspace = manifest_dir
        .parent()
        .and_then(Path::parent)
        .ok_or("tests/kubewarden is not two levels below the workspace")?
        .to_path_buf();
    let embedded = PathBuf::from(env("OUT_DIR")?).join(FILE);

    println!("cargo:rerun-if-env-changed=SVCLAB_KUBEWARDEN_WASM");
    if let Some(prebuilt) = std::env::var_os("SVCLAB_KUBEWARDEN_WASM") {
        let prebuilt = PathBuf::from(prebuilt);
        println!("cargo:rerun-if-changed={}", prebuilt.display());
        return std::fs::copy(&prebuilt, &embedded)
            .map(drop)
            .map_err(|err| format!("cannot copy {}: {err}", prebuilt.display()));
    }

    for input in [
        "core/src",
        "core/Cargo.toml",
        "plugin-wasm/kubewarden",
        "xtask/src/annotate.rs",
        "Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={}", workspace.join(input).display());
    }
    // `$CARGO_TARGET_DIR/plugin-wasm`, the directory `cargo xtask plugins` and host-runner's
    // build script use: outside the outer build's profile directory, so the nested cargo takes
    // its own lock, and the builds warm each other's cache.
    let target_dir = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir).join("plugin-wasm"),
        None => workspace.join("target").join("plugin-wasm"),
    };
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command
        .current_dir(&workspace)
        .args(["build", "--package", PACKAGE, "--target", TARGET, "--profile", PROFILE])
        .arg("--target-dir")
        .arg(&target_dir);
    // The outer build's flags and wrappers are for the host, not for the wasm target.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "RUSTC_WORKSPACE_WRAPPER",
    ] {
        command.env_remove(var);
    }
    let status = command.status().map_err(|err| format!("cannot run cargo: {err}"))?;
    if !status.success() {
        return Err(format!("`cargo build -p {PACKAGE} --target {TARGET}` failed ({status})"));
    }
    let built =
        target_dir.join(TARGET).join(PROFILE).join(format!("{}.wasm", PACKAGE.replace('-', "_")));
    let wasm =
        std::fs::read(&built).map_err(|err| format!("cannot read {}: {err}", built.display()))?;
    let metadata_path = workspace.join("plugin-wasm/kubewarden/metadata.yml");
    let metadata = std::fs::read_to_string(&metadata_path)
        .map_err(|err| format!("cannot read {}: {err}", metadata_path.display()))?;
    let annotated = annotate::annotate(&wasm, &metadata, env!("CARGO_PKG_VERSION"))?;
    std::fs::write(&embedded, annotated)
        .map_err(|err| format!("cannot write {}: {err}", embedded.display()))
}

fn env(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("{name} is not set"))
}
