//! Shared harness of svclab's cross-crate tests: locating data and the conformance set.

use std::path::{Path, PathBuf};

/// The workspace root: from where cargo runs the test, else where it was built (a binary reused
/// by a clone at another path would otherwise read the other clone's files).
pub fn workspace_root() -> PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest_dir.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// `tests/data`.
pub fn data_dir() -> PathBuf {
    workspace_root().join("tests").join("data")
}

/// The shared conformance directory (`../shared/conformance` next to the clone, or
/// `$SVCLAB_CONFORMANCE_DIR`), when present. Held-out acceptance sets are dropped there.
pub fn conformance_dir() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("SVCLAB_CONFORMANCE_DIR") {
        return Some(PathBuf::from(dir));
    }
    let dir = workspace_root().parent()?.join("shared").join("conformance");
    dir.is_dir().then_some(dir)
}

/// Whether golden files should be rewritten (`UPDATE_EXPECT=1`).
pub fn bless() -> bool {
    std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1")
}

pub mod node;
pub mod vectors;
