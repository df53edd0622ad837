//! `cargo xtask build-plugin [--out PATH]` builds the svclab WebAssembly component
//! (`plugin-wasm`, `wasm32-wasip2`, profile `plugin`) and prints where it is and how big;
//! `cargo xtask bench plugin [--quick]` runs the host's plugin-versus-native benchmark table.
//!
//! `host-runner/build.rs` runs the same build on its own, so neither is needed before
//! `cargo build`; `build-plugin` is for shipping the artifact (and for
//! `SVCLAB_PLUGIN_WASM=<path>`, which makes the host embed a prebuilt file).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail, ensure};

use crate::workspace::{cargo, say, target_dir, workspace_root};

const TARGET: &str = "wasm32-wasip2";
/// The cargo profile every guest is built with (small, no debug info).
pub(crate) const PROFILE: &str = "plugin";

/// `$CARGO_TARGET_DIR/plugin-wasm` (else `target/plugin-wasm`): the directory build.rs uses too,
/// so either build warms the other's cache.
pub(crate) fn plugin_target_dir(root: &Path) -> PathBuf {
    target_dir(root).join("plugin-wasm")
}

/// Builds the component; the path of the built `.wasm`.
pub(crate) fn build_component() -> anyhow::Result<PathBuf> {
    let root = workspace_root();
    let target_dir = plugin_target_dir(&root);
    let status = Command::new(cargo())
        .current_dir(&root)
        .args(["build", "--package", "svclab-plugin", "--target", TARGET, "--profile", PROFILE])
        .arg("--target-dir")
        .arg(&target_dir)
        .status()
        .context("cannot run cargo")?;
    ensure!(
        status.success(),
        "building the plugin failed (is the {TARGET} target installed? see scripts/setup.d/10-rust.sh)"
    );
    Ok(target_dir.join(TARGET).join(PROFILE).join("svclab_plugin.wasm"))
}

/// `cargo xtask build-plugin [--out PATH]`.
pub(crate) fn build(args: &[String]) -> anyhow::Result<()> {
    let out = match args {
        [] => None,
        [flag, path] if flag == "--out" => Some(PathBuf::from(path)),
        _ => bail!("usage: cargo xtask build-plugin [--out PATH]"),
    };
    let built = build_component()?;
    let path = match out {
        Some(out) => {
            std::fs::copy(&built, &out)
                .with_context(|| format!("cannot copy to {}", out.display()))?;
            out
        }
        None => built,
    };
    let size =
        std::fs::metadata(&path).with_context(|| format!("cannot stat {}", path.display()))?.len();
    say(&format!("{} ({size} bytes)", path.display()));
    Ok(())
}

/// The host's plugin-versus-native table (`cargo bench -p svclab-host --bench plugin`).
pub(crate) fn bench(args: &[String]) -> anyhow::Result<()> {
    let status = Command::new(cargo())
        .current_dir(workspace_root())
        .args(["bench", "--package", "svclab-host", "--bench", "plugin", "--"])
        .args(args)
        .status()
        .context("cannot run cargo")?;
    ensure!(status.success(), "the benchmark failed");
    Ok(())
}
