//! File trees: finding files by name and copying a folder, for the tasks that assemble sites
//! and packages.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// Files under `dir` whose name ends with `suffix`, sorted.
pub(crate) fn find_files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(suffix) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Copies every file under `from` to the same place under `to`.
pub(crate) fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    for file in find_files(from, "") {
        let relative = file.strip_prefix(from)?;
        let out = to.join(relative);
        if let Some(parent) = out.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(&file, &out).with_context(|| format!("copying {}", file.display()))?;
    }
    Ok(())
}
