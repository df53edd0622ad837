//! `cargo xtask build-plugin [--out PATH]` builds the svclab WebAssembly component
//! (`plugin-wasm`, `wasm32-wasip2`, profile `plugin`) and prints where it is and how big;
//! `cargo xtask bench [--quick]` runs the host's plugin-versus-native benchmark table.
//!
//! `host-runner/build.rs` runs the same build on its own, so neither is needed before
//! `cargo build`; `build-plugin` is for shipping the artifact (and for
//! `SVCLAB_PLUGIN_WASM=<path>`, which makes the host embed a prebuilt file).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail, ensure};

const TARGET: &str = "wasm32-wasip2";
/// The cargo profile every guest is built with (small, no debug info).
pub(crate) const PROFILE: &str = "plugin";

pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// `$CARGO_TARGET_DIR/plugin-wasm` (else `target/plugin-wasm`): the directory build.rs uses too,
/// so either build warms the other's cache.
pub(crate) fn plugin_target_dir(root: &Path) -> PathBuf {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() { dir } else { root.join(dir) }
        }
        _ => root.join("target"),
    };
    target.join("plugin-wasm")
}

/// `cargo xtask build-plugin [--out PATH]`.
pub(crate) fn build(args: &[String]) -> anyhow::Result<()> {
    let out = match args {
        [] => None,
        [flag, path] if flag == "--out" => Some(PathBuf::from(path)),
        _ => bail!("usage: cargo xtask build-plugin [--out PATH]"),
    };
    let root = workspace_root();
    let target_dir = plugin_target_dir(&root);
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
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
    let built = target_dir.join(TARGET).join(PROFILE).join("svclab_plugin.wasm");
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

/// `cargo xtask bench [--quick]`.
pub(crate) fn bench(args: &[String]) -> anyhow::Result<()> {
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(workspace_root())
        .args(["bench", "--package", "svclab-host", "--bench", "plugin", "--"])
        .args(args)
        .status()
        .context("cannot run cargo")?;
    ensure!(status.success(), "the benchmark failed");
    Ok(())
}

pub(crate) fn say(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stdout(), "{line}");
}
