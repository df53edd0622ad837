//! Tidy checks of the workspace, run as tests by `cargo test`: module docs on every file, no
//! `mod.rs`, no hash collections in the core, no ignored tests, no grab-bag module names.

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    fn workspace_root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
    }

    /// Every `.rs` file of the workspace, skipping build output and dependencies.
    fn rust_files() -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut stack = vec![workspace_root()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().into_owned();
                if path.is_dir() {
                    if !matches!(name.as_str(), "target" | "node_modules" | ".git" | "fuzz") {
                        stack.push(path);
                    }
                } else if name.ends_with(".rs") {
                    out.push(path);
                }
            }
        }
        out.sort();
        out
    }

    /// Runs one rule over every file and fails with the list of offenders.
    #[track_caller]
    fn check(rule: &str, offends: impl Fn(&Path, &str) -> bool) {
        let root = workspace_root();
        let offenders: Vec<String> = rust_files()
            .into_iter()
            .filter(|p| {
                let text = std::fs::read_to_string(p).unwrap_or_default();
                offends(p, &text)
            })
            .map(|p| p.strip_prefix(&root).unwrap_or(&p).display().to_string())
            .collect();
        assert!(offenders.is_empty(), "{rule}:\n  {}", offenders.join("\n  "));
    }

    #[test]
    fn every_file_starts_with_a_module_doc() {
        check("files without a leading `//!` sentence", |_, text| {
            !text.trim_start().starts_with("//!")
        });
    }

    #[test]
    fn no_mod_rs_files() {
        check("use foo.rs + foo/ instead of foo/mod.rs", |p, _| {
            p.file_name().is_some_and(|n| n == "mod.rs")
        });
    }

    #[test]
    fn core_uses_ordered_collections_only() {
        let core = workspace_root().join("core").join("src");
        check("HashMap/HashSet in core (iteration order would leak into outputs)", |p, text| {
            p.starts_with(&core) && (text.contains("HashMap") || text.contains("HashSet"))
        });
    }

    #[test]
    fn no_ignored_tests() {
        let marker = ["#[", "ignore]"].concat();
        check("ignored tests (assert today's output with a FIXME instead)", |_, text| {
            text.contains(&marker)
        });
    }

    #[test]
    fn no_grab_bag_modules() {
        check("modules named utils/common/helpers (name the domain instead)", |p, _| {
            p.file_stem()
                .is_some_and(|s| matches!(s.to_str(), Some("utils" | "common" | "helpers")))
        });
    }
}
