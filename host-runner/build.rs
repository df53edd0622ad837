//! Builds the svclab WebAssembly plugin (`plugin-wasm`, target `wasm32-wasip2`) so the host can
//! embed it with `include_bytes!`; a clean clone needs no extra step.
//!
//! `SVCLAB_PLUGIN_WASM=/path/to/plugin.wasm` embeds a prebuilt file instead (what
//! `cargo xtask build-plugin` prints), which skips the nested build.
//!
//! Next to it goes the file's SHA-256 (lowercase hex), the key of its compiled code in the cache,
//! so a start does not hash 1.4 MB.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "cargo reads build script instructions from stdout and shows stderr on failure"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";
const PROFILE: &str = "plugin";

fn main() {
    if let Err(message) = run() {
        // Cargo shows a failing build script's stderr; say what to do about it.
        eprintln!("error: cannot build the svclab plugin: {message}");
        eprintln!(
            "hint: the plugin needs the {TARGET} target (scripts/setup.d/10-rust.sh installs it); SVCLAB_PLUGIN_WASM=<file> embeds a prebuilt one"
        );
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR")?);
    let workspace =
        manifest_dir.parent().ok_or("host-runner has no parent directory")?.to_path_buf();
    let out_dir = PathBuf::from(env("OUT_DIR")?);
    let embedded = out_dir.join("svclab_plugin.wasm");

    println!("cargo:rerun-if-env-changed=SVCLAB_PLUGIN_WASM");
    if let Some(prebuilt) = std::env::var_os("SVCLAB_PLUGIN_WASM") {
        let prebuilt = PathBuf::from(prebuilt);
        println!("cargo:rerun-if-changed={}", prebuilt.display());
        copy(&prebuilt, &embedded)?;
        return write_digest(&embedded);
    }

    for input in ["core/src", "core/Cargo.toml", "plugin-wasm", "wit", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", workspace.join(input).display());
    }
    let target_dir = plugin_target_dir(&workspace);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(&workspace)
        .args(["build", "--package", "svclab-plugin", "--target", TARGET, "--profile", PROFILE])
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
        return Err(format!("`cargo build -p svclab-plugin --target {TARGET}` failed ({status})"));
    }
    let built = target_dir.join(TARGET).join(PROFILE).join("svclab_plugin.wasm");
    copy(&built, &embedded)?;
    write_digest(&embedded)
}

/// Writes `<file>.sha256`: the file's SHA-256 in lowercase hex.
fn write_digest(file: &Path) -> Result<(), String> {
    use sha2::Digest as _;
    let bytes =
        std::fs::read(file).map_err(|err| format!("cannot read {}: {err}", file.display()))?;
    let digest = data_encoding::HEXLOWER.encode(&sha2::Sha256::digest(&bytes));
    let out = file.with_extension("wasm.sha256");
    std::fs::write(&out, digest).map_err(|err| format!("cannot write {}: {err}", out.display()))
}

/// `$CARGO_TARGET_DIR/plugin-wasm`, else `<workspace>/target/plugin-wasm`: outside the outer
/// build's profile directory, so the nested cargo takes its own lock and keeps its cache.
fn plugin_target_dir(workspace: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir).join("plugin-wasm"),
        None => workspace.join("target").join("plugin-wasm"),
    }
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(drop)
        .map_err(|err| format!("cannot copy {}: {err}", from.display()))
}

fn env(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("{name} is not set"))
}
