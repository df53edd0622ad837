//! Builds the svclab Kubewarden policy (`plugin-wasm/kubewarden`, target
//! `wasm32-unknown-unknown`, profile `plugin`) with `svclab-guest-build`'s nested cargo build
//! (the one `host-runner/build.rs` builds the plugin with), and annotates it with its metadata
//! exactly as `cargo xtask plugins` does (same code, included by path), so the tests drive the
//! module that ships.
//!
//! `SVCLAB_KUBEWARDEN_WASM=/path/to/svclab-kubewarden.wasm` tests a prebuilt (already
//! annotated) file instead, e.g. the one `cargo xtask plugins` wrote.

#![allow(clippy::print_stderr, reason = "cargo shows a failing build script's stderr")]

#[path = "../../xtask/src/annotate.rs"]
mod annotate;

use std::path::PathBuf;

use svclab_guest_build::Guest;

const POLICY: Guest = Guest {
    package: "svclab-plugin-kubewarden",
    target: "wasm32-unknown-unknown",
    profile: "plugin",
    inputs: &[
        "core/src",
        "core/Cargo.toml",
        "plugin-wasm/kubewarden",
        "xtask/src/annotate.rs",
        "Cargo.lock",
    ],
};
const FILE: &str = "svclab-kubewarden.wasm";

fn main() {
    if let Err(message) = run() {
        eprintln!("error: cannot build the svclab Kubewarden policy: {message}");
        eprintln!(
            "hint: it needs the {} target (scripts/setup.d/10-rust.sh installs it); SVCLAB_KUBEWARDEN_WASM=<file> tests a prebuilt one",
            POLICY.target
        );
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let out_dir = std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?;
    let embedded = PathBuf::from(out_dir).join(FILE);
    if let Some(prebuilt) = svclab_guest_build::prebuilt("SVCLAB_KUBEWARDEN_WASM") {
        return std::fs::copy(&prebuilt, &embedded)
            .map(drop)
            .map_err(|err| format!("cannot copy {}: {err}", prebuilt.display()));
    }
    let workspace = svclab_guest_build::workspace().map_err(|err| err.to_string())?;
    let built = POLICY.build(&workspace).map_err(|err| err.to_string())?;
    let wasm =
        std::fs::read(&built).map_err(|err| format!("cannot read {}: {err}", built.display()))?;
    let metadata_path = workspace.join("plugin-wasm/kubewarden/metadata.yml");
    let metadata = std::fs::read_to_string(&metadata_path)
        .map_err(|err| format!("cannot read {}: {err}", metadata_path.display()))?;
    let annotated = annotate::annotate(&wasm, &metadata, env!("CARGO_PKG_VERSION"))?;
    std::fs::write(&embedded, annotated)
        .map_err(|err| format!("cannot write {}: {err}", embedded.display()))
}
