//! The nested cargo build with which a build script turns one of the workspace's WebAssembly
//! guests into the file it embeds: `host-runner/build.rs` the plugin component, and
//! `tests/kubewarden/build.rs` the Kubewarden policy.
//!
//! Both build into `$CARGO_TARGET_DIR/plugin-wasm` (else `<workspace>/target/plugin-wasm`), the
//! directory `cargo xtask build-plugin` and `cargo xtask plugins` use: outside the outer build's
//! profile directory, so the nested cargo takes its own lock, and the builds warm each other's
//! cache.
//!
//! A build dependency rather than a file both build scripts include: it is compiled, linted and
//! tested once, as the library it is, and what the build scripts may use is what it exports.

#![allow(
    clippy::print_stdout,
    reason = "cargo reads build script instructions from the build script's stdout"
)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// A guest crate of the workspace, as a build script builds it.
#[derive(Debug, Clone, Copy)]
pub struct Guest {
    /// Its package.
    pub package: &'static str,
    /// The target it is built for (`wasm32-wasip2`, `wasm32-unknown-unknown`).
    pub target: &'static str,
    /// The cargo profile it is built with.
    pub profile: &'static str,
    /// Paths, relative to the workspace, whose change reruns the build script: the guest's
    /// sources and whatever else the build script reads.
    pub inputs: &'static [&'static str],
}

/// Why a guest could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum GuestBuildError {
    /// `CARGO_MANIFEST_DIR` is not set: not run by cargo.
    NoManifestDir,
    /// No directory at or above the package holds a workspace's `Cargo.toml`.
    NoWorkspace(PathBuf),
    /// cargo could not be started.
    Cargo(std::io::Error),
    /// The nested build failed (cargo has said why).
    Failed {
        /// The guest.
        guest: Guest,
        /// How cargo ended.
        status: ExitStatus,
    },
}

impl std::fmt::Display for GuestBuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GuestBuildError::NoManifestDir => write!(f, "CARGO_MANIFEST_DIR is not set"),
            GuestBuildError::NoWorkspace(dir) => {
                write!(f, "no workspace at or above {}", dir.display())
            }
            GuestBuildError::Cargo(err) => write!(f, "cannot run cargo: {err}"),
            GuestBuildError::Failed { guest, status } => write!(
                f,
                "`cargo build -p {} --target {}` failed ({status})",
                guest.package, guest.target
            ),
        }
    }
}

impl std::error::Error for GuestBuildError {}

/// The file named by the environment variable `var`, when it is set: a prebuilt guest to embed
/// instead of building one. Tells cargo to rerun the build script when the variable or the
/// file changes.
pub fn prebuilt(var: &str) -> Option<PathBuf> {
    println!("cargo:rerun-if-env-changed={var}");
    let file = PathBuf::from(std::env::var_os(var)?);
    println!("cargo:rerun-if-changed={}", file.display());
    Some(file)
}

/// The workspace of the package whose build script runs: the nearest directory at or above
/// `CARGO_MANIFEST_DIR` whose `Cargo.toml` has a `[workspace]` table, as cargo finds it.
pub fn workspace() -> Result<PathBuf, GuestBuildError> {
    let manifest_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").ok_or(GuestBuildError::NoManifestDir)?;
    workspace_of(Path::new(&manifest_dir))
}

fn workspace_of(manifest_dir: &Path) -> Result<PathBuf, GuestBuildError> {
    let declares_workspace = |dir: &Path| {
        std::fs::read_to_string(dir.join("Cargo.toml"))
            .is_ok_and(|manifest| manifest.lines().any(|line| line.trim() == "[workspace]"))
    };
    manifest_dir
        .ancestors()
        .find(|dir| declares_workspace(dir))
        .map(Path::to_path_buf)
        .ok_or_else(|| GuestBuildError::NoWorkspace(manifest_dir.to_path_buf()))
}

impl Guest {
    /// Builds the guest with the cargo that runs the build script; the built `.wasm`.
    pub fn build(&self, workspace: &Path) -> Result<PathBuf, GuestBuildError> {
        // Relative to the package (cargo resolves them against the package's root when it
        // checks them): clones that share a target directory share this build script's run
        // (its hash does not hold the clone's path), so absolute paths would watch the files of
        // whichever clone ran it last, and an edit in another clone would not rebuild the guest.
        let package = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
        let up = package
            .as_deref()
            .and_then(|p| p.strip_prefix(workspace).ok())
            .map_or(0, |below| below.components().count());
        for input in self.inputs {
            println!("cargo:rerun-if-changed={}{input}", "../".repeat(up));
        }
        let target_dir = target_dir(workspace, std::env::var_os("CARGO_TARGET_DIR"));
        let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        command
            .current_dir(workspace)
            .args(["build", "--package", self.package, "--target", self.target])
            .args(["--profile", self.profile])
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
        let status = command.status().map_err(GuestBuildError::Cargo)?;
        if !status.success() {
            return Err(GuestBuildError::Failed { guest: *self, status });
        }
        let file = format!("{}.wasm", self.package.replace('-', "_"));
        Ok(target_dir.join(self.target).join(self.profile).join(file))
    }
}

/// `<CARGO_TARGET_DIR>/plugin-wasm` (relative to the workspace when relative, as `cargo xtask`
/// takes it), else `<workspace>/target/plugin-wasm`.
fn target_dir(workspace: &Path, cargo_target_dir: Option<OsString>) -> PathBuf {
    let base = match cargo_target_dir {
        Some(dir) if !dir.is_empty() => workspace.join(dir),
        _ => workspace.join("target"),
    };
    base.join("plugin-wasm")
}

#[cfg(test)]
mod tests;
