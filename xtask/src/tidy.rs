//! Tidy checks of the workspace, run as tests by `cargo test`: module docs on every file, no
//! `mod.rs`, no hash collections in the core, no ignored tests, no grab-bag module names,
//! core's modules using only the layers below them (the list in ARCHITECTURE.md), no circles
//! between sibling modules in any crate, and `.ci/run` running the README's test command.

#[cfg(test)]
mod circles;

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use crate::workspace::workspace_root;

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

    /// The layers of core from ARCHITECTURE.md, lowest first: the fenced block after the
    /// `### Layers` heading, one layer per line, modules of a layer separated by spaces.
    fn core_layers() -> Vec<Vec<String>> {
        let text =
            std::fs::read_to_string(workspace_root().join("ARCHITECTURE.md")).unwrap_or_default();
        let after = text.split_once("\n### Layers\n").map_or("", |(_, rest)| rest);
        let block = after.split("```").nth(1).unwrap_or("");
        block
            .lines()
            .skip(1)
            .map(|line| line.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
            .filter(|layer| !layer.is_empty())
            .collect()
    }

    /// The top-level modules a core source text names through `crate::` paths, in `use` lists
    /// too (`use crate::{a::X, b}`). Comments and the `#[cfg(test)]` tail are not code that
    /// ships, so they do not count.
    fn crate_modules_used(text: &str) -> Vec<String> {
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let mut out = Vec::new();
        for line in code.lines() {
            let line = line.split_once("//").map_or(line, |(code, _)| code);
            let mut rest = line;
            while let Some(at) = rest.find("crate::") {
                rest = &rest[at + "crate::".len()..];
                if let Some(group) = rest.strip_prefix('{') {
                    // Only the top level of the group: `{a::{X, Y}, b}` names `a` and `b`.
                    let mut depth = 0;
                    let mut start = true;
                    for (i, c) in group.char_indices() {
                        match c {
                            '{' => depth += 1,
                            '}' if depth == 0 => break,
                            '}' => depth -= 1,
                            ',' if depth == 0 => start = true,
                            _ if start && (c.is_ascii_lowercase() || c == '_') => {
                                out.push(leading_ident(&group[i..]));
                                start = false;
                            }
                            _ if !c.is_whitespace() => start = false,
                            _ => {}
                        }
                    }
                } else {
                    let name = leading_ident(rest);
                    if name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_') {
                        out.push(name);
                    }
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn leading_ident(text: &str) -> String {
        text.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
    }

    /// The uses in one file of module `module` that do not run to a lower layer.
    fn upward_uses(module: &str, text: &str, layers: &[Vec<String>]) -> Vec<String> {
        let layer_of = |m: &str| layers.iter().position(|l| l.iter().any(|x| x == m));
        let Some(own) = layer_of(module) else {
            return vec![format!("`{module}` is not in ARCHITECTURE.md's layers")];
        };
        crate_modules_used(text)
            .into_iter()
            .filter(|used| used != module)
            .filter_map(|used| match layer_of(&used) {
                Some(layer) if layer < own => None,
                Some(_) => Some(format!("`{module}` uses `{used}`, which is not below it")),
                // Items of the crate root (`crate::Report`) are re-exports of some layer.
                None => None,
            })
            .collect()
    }

    #[test]
    fn core_modules_only_use_lower_layers() {
        let layers = core_layers();
        assert!(layers.len() > 5, "no `### Layers` block found in ARCHITECTURE.md");
        let core = workspace_root().join("core").join("src");
        let mut offences = Vec::new();
        for path in rust_files().into_iter().filter(|p| p.starts_with(&core)) {
            let Ok(relative) = path.strip_prefix(&core) else { continue };
            let top = relative.components().next().map(|c| c.as_os_str().to_string_lossy());
            let Some(module) = top.map(|t| t.trim_end_matches(".rs").to_owned()) else { continue };
            // A module's `tests.rs` may reach any layer; the topic folders under `tests/` reach
            // higher layers only through the crate root, as an integration test would.
            let test_code = relative.components().any(|c| c.as_os_str() == "tests.rs");
            if module == "lib" || test_code {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for offence in upward_uses(&module, &text, &layers) {
                offences.push(format!("{}: {offence}", relative.display()));
            }
        }
        offences.dedup();
        assert!(offences.is_empty(), "core layers (ARCHITECTURE.md):\n  {}", offences.join("\n  "));
    }

    #[test]
    fn an_upward_use_is_found() {
        let layers: Vec<Vec<String>> = [vec!["model"], vec!["field", "net"], vec!["pipeline"]]
            .iter()
            .map(|l| l.iter().map(|m| (*m).to_owned()).collect())
            .collect();
        let text = "use crate::model::Positions;\nuse crate::{net::IpFamily, pipeline};\n\
                    // crate::pipeline in a comment\nfn f() { crate::model::x(); }\n\
                    #[cfg(test)]\nmod tests { use crate::pipeline::World; }\n";
        assert_eq!(crate_modules_used(text), ["model", "net", "pipeline"]);
        assert_eq!(
            upward_uses("field", text, &layers),
            [
                "`field` uses `net`, which is not below it",
                "`field` uses `pipeline`, which is not below it"
            ]
        );
        assert_eq!(upward_uses("pipeline", text, &layers), Vec::<String>::new());
        assert_eq!(
            upward_uses("policy", "", &layers),
            ["`policy` is not in ARCHITECTURE.md's layers"]
        );
    }

    /// `.ci/run` runs the README's test command as a user types it: the command the README
    /// gives, with no `CARGO_TARGET_DIR` or other cargo setting that a plain clone lacks (a build
    /// cache is a `target` link, which leaves every path as it is).
    #[test]
    fn ci_runs_the_readme_test_command_as_written() {
        let root = workspace_root();
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap_or_default();
        let command = readme
            .lines()
            .find(|l| l.contains("# every test"))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_default();
        assert_eq!(command, "scripts/test", "README's test command");
        let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap_or_default();
        let code: Vec<&str> =
            ci.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
        assert_eq!(code.last().copied(), Some("exec scripts/test"), ".ci/run's last command");
        for line in &code {
            assert!(
                !line.contains("CARGO_") && !line.contains("RUST"),
                ".ci/run sets what a user would not have: {line}"
            );
        }
    }

    /// Every crate's modules, fuzz targets included: no two sibling modules may use each other,
    /// directly or round a longer circle (`tidy/circles.rs`).
    #[test]
    fn no_circles_between_sibling_modules() {
        let root = workspace_root();
        let mut files = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().into_owned();
                if path.is_dir() {
                    if !matches!(name.as_str(), "target" | "node_modules" | ".git") {
                        stack.push(path);
                    }
                } else if name.ends_with(".rs") {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    files.push((path.strip_prefix(&root).unwrap_or(&path).to_path_buf(), text));
                }
            }
        }
        let found = super::circles::circles(&files);
        assert!(found.is_empty(), "circles between sibling modules:\n  {}", found.join("\n  "));
    }
}
