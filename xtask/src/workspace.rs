//! The workspace every task works in, and what every task needs of it: the root, the cargo
//! target directory, the cargo that runs xtask, running a program with what it is for, and
//! progress lines. The lowest layer of xtask: it uses no other module.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, ensure};

/// The workspace root (the xtask crate's parent): where `cargo run` says the crate is, else where
/// it was built. Clones that share a `CARGO_TARGET_DIR` (CI caches one outside the clone) share
/// this binary too, and cargo does not rebuild it for a clone at another path, so the path
/// compiled in may be another clone's, or gone.
pub(crate) fn workspace_root() -> PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest_dir.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// `$CARGO_TARGET_DIR` (relative to the workspace when relative), else `target/` in the workspace.
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() { dir } else { root.join(dir) }
        }
        _ => root.join("target"),
    }
}

/// The cargo that runs this xtask.
pub(crate) fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// Prints a line of progress and flushes it, so long runs show where they are.
pub(crate) fn say(line: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Runs a program to its end and fails, naming `what`, when it cannot start or does not succeed.
pub(crate) fn run(command: &mut Command, what: &str) -> anyhow::Result<()> {
    let status = command.status().with_context(|| format!("could not start {what}"))?;
    ensure!(status.success(), "{what} failed ({status})");
    Ok(())
}
