//! `cargo xtask plugins [--out DIR]`: builds every plugin artifact into one folder and checks
//! their sizes: the WIT component (our host, jco), the proxy-wasm filter (Envoy, Istio, Envoy
//! Gateway) and the http-wasm middleware (Traefik). The http-wasm module is also copied into
//! Traefik's local plugin layout under `deploy/traefik/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail, ensure};

use crate::plugin::{PROFILE, plugin_target_dir, say, workspace_root};

mod lower;

/// The largest artifact we ship (gateways fetch modules over the network at start-up).
const MAX_BYTES: u64 = 1_500_000;

/// `cargo xtask plugins [--out DIR]`.
pub(crate) fn build(args: &[String]) -> anyhow::Result<()> {
    let root = workspace_root();
    let out = match args {
        [] => plugin_target_dir(&root).join("plugins"),
        [flag, dir] if flag == "--out" => PathBuf::from(dir),
        _ => bail!("usage: cargo xtask plugins [--out DIR]"),
    };
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let built = [component(&root, &out)?, proxy_wasm(&root, &out)?, http_wasm(&root, &out)?];
    let mut too_big = Vec::new();
    for path in &built {
        let size = std::fs::metadata(path)
            .with_context(|| format!("cannot stat {}", path.display()))?
            .len();
        say(&format!("{} ({size} bytes)", path.display()));
        if size > MAX_BYTES {
            too_big.push(path.display().to_string());
        }
    }
    ensure!(too_big.is_empty(), "over {MAX_BYTES} bytes: {}", too_big.join(", "));
    Ok(())
}

/// The WIT component (`wasm32-wasip2`).
fn component(root: &Path, out: &Path) -> anyhow::Result<PathBuf> {
    cargo_build(root, "svclab-plugin", "wasm32-wasip2", "svclab_plugin.wasm", out)
}

/// The proxy-wasm 0.2.1 filter (`wasm32-wasip1` cdylib).
fn proxy_wasm(root: &Path, out: &Path) -> anyhow::Result<PathBuf> {
    cargo_build(
        root,
        "svclab-plugin-proxy-wasm",
        "wasm32-wasip1",
        "svclab_plugin_proxy_wasm.wasm",
        out,
    )
}

/// The http-wasm middleware (`wasm32-wasip1` reactor module) with its `memory.fill`s lowered
/// (see `lower.rs`), also placed where Traefik's local plugin layout in `deploy/traefik/`
/// expects it.
fn http_wasm(root: &Path, out: &Path) -> anyhow::Result<PathBuf> {
    let path = cargo_build(
        root,
        "svclab-plugin-http-wasm",
        "wasm32-wasip1",
        "svclab_plugin_http_wasm.wasm",
        out,
    )?;
    let module = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let lowered = lower::lower_memory_fill(&module)?;
    ensure!(lower::memory_fills(&lowered)? == 0, "memory.fill left in {}", path.display());
    std::fs::write(&path, lowered).with_context(|| format!("cannot write {}", path.display()))?;
    let layout = root.join("deploy/traefik/plugins-local/src/svclab.dev/svclab/plugin.wasm");
    std::fs::copy(&path, &layout)
        .with_context(|| format!("cannot copy to {}", layout.display()))?;
    Ok(path)
}

/// Builds one package for `target` with the `plugin` profile and copies `file` into `out`.
fn cargo_build(
    root: &Path,
    package: &str,
    target: &str,
    file: &str,
    out: &Path,
) -> anyhow::Result<PathBuf> {
    let target_dir = plugin_target_dir(root);
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["build", "--package", package, "--target", target, "--profile", PROFILE])
        .arg("--target-dir")
        .arg(&target_dir)
        .status()
        .context("cannot run cargo")?;
    ensure!(
        status.success(),
        "building {package} failed (is the {target} target installed? see scripts/setup.d/10-rust.sh)"
    );
    let built = target_dir.join(target).join(PROFILE).join(file);
    let copy = out.join(file);
    std::fs::copy(&built, &copy).with_context(|| format!("cannot copy to {}", copy.display()))?;
    Ok(copy)
}
