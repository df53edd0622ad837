//! Builds the svclab WebAssembly plugin (`plugin-wasm`, target `wasm32-wasip2`) so the host can
//! embed it with `include_bytes!`; a clean clone needs no extra step. The nested cargo build is
//! `svclab-guest-build`'s, shared with `tests/kubewarden/build.rs`.
//!
//! `SVCLAB_PLUGIN_WASM=/path/to/plugin.wasm` embeds a prebuilt file instead (what
//! `cargo xtask build-plugin` prints), which skips the nested build.
//!
//! Next to it goes the file's SHA-256 (lowercase hex), the key of its compiled code in the cache,
//! so a start does not hash 1.4 MB.

#![allow(clippy::print_stderr, reason = "cargo shows a failing build script's stderr")]

use std::path::{Path, PathBuf};

use svclab_guest_build::Guest;

const PLUGIN: Guest = Guest {
    package: "svclab-plugin",
    target: "wasm32-wasip2",
    profile: "plugin",
    inputs: &["core/src", "core/Cargo.toml", "plugin-wasm", "wit", "Cargo.lock"],
};

fn main() {
    if let Err(message) = run() {
        // Cargo shows a failing build script's stderr; say what to do about it.
        eprintln!("error: cannot build the svclab plugin: {message}");
        eprintln!(
            "hint: the plugin needs the {} target (scripts/setup.d/10-rust.sh installs it); SVCLAB_PLUGIN_WASM=<file> embeds a prebuilt one",
            PLUGIN.target
        );
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let out_dir = std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?;
    let embedded = PathBuf::from(out_dir).join("svclab_plugin.wasm");
    let wasm = match svclab_guest_build::prebuilt("SVCLAB_PLUGIN_WASM") {
        Some(prebuilt) => prebuilt,
        None => svclab_guest_build::workspace()
            .and_then(|workspace| PLUGIN.build(&workspace))
            .map_err(|err| err.to_string())?,
    };
    copy(&wasm, &embedded)?;
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

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(drop)
        .map_err(|err| format!("cannot copy {}: {err}", from.display()))
}
