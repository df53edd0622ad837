//! The on-disk cache of compiled components, keyed by the component's SHA-256 and the engine's
//! compatibility hash, so only the first process pays for compilation.

use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::plugin::PluginError;

/// Where compiled components are kept; `None` compiles every time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheDir(Option<PathBuf>);

impl CacheDir {
    /// No cache: compile on every load.
    pub fn disabled() -> CacheDir {
        CacheDir(None)
    }

    /// A cache in `dir` (created on first store).
    pub fn at(dir: impl Into<PathBuf>) -> CacheDir {
        CacheDir(Some(dir.into()))
    }

    /// `plugins/` in svclab's cache directory: `$SVCLAB_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/svclab`, else `$HOME/.cache/svclab` (none without any of them).
    pub fn from_env() -> CacheDir {
        let env_dir = |name: &str| {
            std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from)
        };
        let dir = env_dir("SVCLAB_CACHE_DIR")
            .or_else(|| env_dir("XDG_CACHE_HOME").map(|dir| dir.join("svclab")))
            .or_else(|| env_dir("HOME").map(|dir| dir.join(".cache").join("svclab")));
        CacheDir(dir.map(|dir| dir.join("plugins")))
    }

    /// The cache directory, if any.
    pub fn path(&self) -> Option<&Path> {
        self.0.as_deref()
    }

    /// The compiled component for `bytes` (whose SHA-256 in lowercase hex is `sha256`, computed
    /// here when `None`), from the cache when present; whether it was cached.
    pub(crate) fn load(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha256: Option<&str>,
    ) -> Result<(Component, bool), PluginError> {
        let Some(dir) = &self.0 else {
            return Ok((compile(engine, bytes)?, false));
        };
        let sha256 = match sha256 {
            Some(digest) => digest.to_owned(),
            None => data_encoding::HEXLOWER.encode(&Sha256::digest(bytes)),
        };
        let file = dir.join(cache_file_name(engine, &sha256));
        if file.is_file()
            && let Some(component) = deserialize(engine, &file)
        {
            return Ok((component, true));
        }
        let component = compile(engine, bytes)?;
        // A cache that cannot be written only costs time on the next start.
        let _ = store(&component, dir, &file);
        Ok((component, false))
    }
}

fn compile(engine: &Engine, bytes: &[u8]) -> Result<Component, PluginError> {
    Component::new(engine, bytes).map_err(|err| PluginError::Load(format!("{err:#}")))
}

/// `<sha256 of the component>-<engine compatibility hash>.cwasm`.
fn cache_file_name(engine: &Engine, sha256: &str) -> String {
    let mut hasher = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    env!("CARGO_PKG_VERSION").hash(&mut hasher);
    format!("{sha256}-{:016x}.cwasm", hasher.finish())
}

#[allow(unsafe_code, reason = "wasmtime can only trust precompiled code it is told to trust")]
fn deserialize(engine: &Engine, file: &Path) -> Option<Component> {
    // SAFETY: the file is one this host serialized from a component it compiled itself (named by
    // that component's SHA-256 and the engine's compatibility hash) in a per-user cache
    // directory; wasmtime still checks its header, version and engine configuration and
    // refuses a mismatch, in which case we recompile.
    unsafe { Component::deserialize_file(engine, file) }.ok()
}

fn store(component: &Component, dir: &Path, file: &Path) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir)?;
    let bytes = component.serialize().map_err(|err| format!("{err:#}"))?;
    // Write then rename, so a concurrent process never reads a half-written file.
    let temporary = file.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&temporary, bytes)?;
    std::fs::rename(&temporary, file)?;
    Ok(())
}

#[cfg(test)]
mod tests;
