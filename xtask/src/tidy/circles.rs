//! No circles between sibling modules, in any crate: the module tree of every crate (followed
//! from its root files through `mod` declarations, `#[path]` included), the modules each file
//! names through `crate::`, `super::` and `self::` paths, and the cycles among the children of
//! each module. A use of an ancestor or a descendant is not a sibling edge; test code (a
//! `#[cfg(test)]` module and what follows the first `#[cfg(test)]` of a file) does not count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module: its crate (the root file) and its path of names from the crate root.
type Module = (PathBuf, Vec<String>);

/// One sibling edge and where it was written.
#[derive(Debug, Clone)]
struct Edge {
    file: PathBuf,
    line: usize,
}

/// The circles among sibling modules of the crates in `files` (path, text), each as
/// `parent: a -> b -> a (file:line, file:line)`, sorted.
pub(super) fn circles(files: &[(PathBuf, String)]) -> Vec<String> {
    let texts: BTreeMap<&Path, &str> =
        files.iter().map(|(p, t)| (p.as_path(), t.as_str())).collect();
    let modules = module_tree(&texts);
    let known: BTreeSet<&Module> = modules.values().collect();
    // parent module -> child -> child -> first witness
    let mut graphs: BTreeMap<Module, BTreeMap<String, BTreeMap<String, Edge>>> = BTreeMap::new();
    for (file, module) in &modules {
        let (krate, path) = module;
        let text = texts.get(file.as_path()).copied().unwrap_or("");
        for (line, used) in paths_used(text) {
            let Some(target) =
                resolve(&used, path, |p| known.contains(&(krate.clone(), p.to_vec())))
            else {
                continue;
            };
            let common = path.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common == path.len() || common == target.len() {
                continue; // an ancestor or a descendant
            }
            let parent = (krate.clone(), path[..common].to_vec());
            graphs
                .entry(parent)
                .or_default()
                .entry(path[common].clone())
                .or_default()
                .entry(target[common].clone())
                .or_insert(Edge { file: file.clone(), line });
        }
    }
    let mut out = Vec::new();
    for ((krate, parent), graph) in &graphs {
        for cycle in cycles(graph) {
            let witnesses: Vec<String> = cycle
                .windows(2)
                .filter_map(|w| graph.get(&w[0]).and_then(|e| e.get(&w[1])))
                .map(|e| format!("{}:{}", e.file.display(), e.line))
                .collect();
            let parent = if parent.is_empty() { "crate".to_owned() } else { parent.join("::") };
            out.push(format!(
                "{} {parent}: {} ({})",
                krate.display(),
                cycle.join(" -> "),
                witnesses.join(", ")
            ));
        }
    }
    out.sort();
    out
}

/// Every non-test module file with its module: roots are the files no `mod` declaration claims.
fn module_tree(texts: &BTreeMap<&Path, &str>) -> BTreeMap<PathBuf, Module> {
    let mut children: BTreeMap<PathBuf, Vec<(String, PathBuf, bool)>> = BTreeMap::new();
    let mut claimed = BTreeSet::new();
    for (&file, &text) in texts {
        let declared = declared_modules(file, text, texts);
        for (_, child, _) in &declared {
            claimed.insert(child.clone());
        }
        children.insert(file.to_path_buf(), declared);
    }
    let mut out = BTreeMap::new();
    let mut stack: Vec<(PathBuf, Module)> = texts
        .keys()
        .filter(|f| !claimed.contains(**f))
        .map(|f| (f.to_path_buf(), (f.to_path_buf(), Vec::new())))
        .collect();
    while let Some((file, module)) = stack.pop() {
        for (name, child, test_only) in children.get(&file).into_iter().flatten() {
            if !test_only && !out.contains_key(child) {
                let mut path = module.1.clone();
                path.push(name.clone());
                stack.push((child.clone(), (module.0.clone(), path)));
            }
        }
        out.insert(file, module);
    }
    out
}

/// The `mod name;` declarations of a file: name, file, and whether it is `#[cfg(test)]`.
fn declared_modules(
    file: &Path,
    text: &str,
    texts: &BTreeMap<&Path, &str>,
) -> Vec<(String, PathBuf, bool)> {
    let dir = file.parent().unwrap_or(Path::new(""));
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let owns_dir = matches!(stem, "lib" | "main" | "mod");
    let mut out = Vec::new();
    let mut attributes: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with("#[") {
            attributes.push(line);
            continue;
        }
        let declaration = line
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("pub ");
        if let Some(name) = declaration.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
            let name = name.trim().to_owned();
            let explicit = attributes.iter().find_map(|a| {
                a.strip_prefix("#[path = \"")
                    .and_then(|r| r.strip_suffix("\"]"))
                    .map(|p| dir.join(p))
            });
            let candidates = match explicit {
                Some(path) => vec![path],
                None if owns_dir => vec![dir.join(format!("{name}.rs"))],
                // A crate root that is not lib.rs or main.rs (a test or bench binary) keeps its
                // modules beside it.
                None => {
                    vec![dir.join(stem).join(format!("{name}.rs")), dir.join(format!("{name}.rs"))]
                }
            };
            let test_only = attributes.iter().any(|a| a.starts_with("#[cfg(test"));
            if let Some(child) = candidates.into_iter().find(|c| texts.contains_key(c.as_path())) {
                out.push((name, child, test_only));
            }
        }
        if !line.is_empty() && !line.starts_with("//") {
            attributes.clear();
        }
    }
    out
}

/// The paths a file names from `crate::`, `super::` or `self::`, with their line: every path
/// of a `use` group separately (`use super::{a::X, b}` is `super::a::X` and `super::b`).
fn paths_used(text: &str) -> Vec<(usize, Vec<String>)> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut out = Vec::new();
    for (index, line) in code.lines().enumerate() {
        let line = line.split_once("//").map_or(line, |(code, _)| code);
        let bytes = line.as_bytes();
        for start in ["crate::", "super::", "self::"] {
            let mut from = 0;
            while let Some(at) = line[from..].find(start).map(|a| a + from) {
                from = at + start.len();
                let preceded = at > 0
                    && (bytes[at - 1].is_ascii_alphanumeric()
                        || matches!(bytes[at - 1], b'_' | b'$' | b':'));
                if preceded {
                    continue; // `$crate::`, `foo_crate::`, `super::super::` (taken whole below)
                }
                let head = start.trim_end_matches(':').to_owned();
                for path in expand(&line[from..]) {
                    let mut full = vec![head.clone()];
                    full.extend(path);
                    out.push((index + 1, full));
                }
            }
        }
    }
    out
}

/// The paths a path tail stands for: `a::b::C` is one, `{a::X, b}` two, nested groups likewise.
fn expand(tail: &str) -> Vec<Vec<String>> {
    let tail = tail.trim_start();
    if let Some(group) = tail.strip_prefix('{') {
        let mut out = Vec::new();
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    out.extend(expand(&group[start..i]));
                    return out;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.extend(expand(&group[start..i]));
                    start = i + 1;
                }
                _ => {}
            }
        }
        out.extend(expand(&group[start..]));
        return out;
    }
    let name: String =
        tail.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    if name.is_empty() {
        return vec![Vec::new()];
    }
    let rest = &tail[name.len()..];
    match rest.strip_prefix("::") {
        Some(rest) => expand(rest)
            .into_iter()
            .map(|mut p| {
                p.insert(0, name.clone());
                p
            })
            .collect(),
        None => vec![vec![name]],
    }
}

/// The deepest module a path from module `from` names, if the path starts at `crate`, `super`
/// or `self` and stays inside the crate.
fn resolve(
    path: &[String],
    from: &[String],
    is_module: impl Fn(&[String]) -> bool,
) -> Option<Vec<String>> {
    let mut segments = path.iter().peekable();
    let mut base: Vec<String> = match segments.next()?.as_str() {
        "crate" => Vec::new(),
        "super" => from.get(..from.len().checked_sub(1)?)?.to_vec(),
        "self" => from.to_vec(),
        _ => return None,
    };
    while segments.peek().is_some_and(|s| *s == "super") {
        segments.next();
        base.pop()?;
    }
    for segment in segments {
        if segment == "self" {
            break;
        }
        let mut next = base.clone();
        next.push(segment.clone());
        if !is_module(&next) {
            break;
        }
        base = next;
    }
    Some(base)
}

/// The elementary cycles of a small directed graph that pass through their least node, each
/// closed (`[a, b, a]`), found by depth-first search from each node in order.
fn cycles(graph: &BTreeMap<String, BTreeMap<String, Edge>>) -> Vec<Vec<String>> {
    fn walk(
        graph: &BTreeMap<String, BTreeMap<String, Edge>>,
        start: &str,
        path: &mut Vec<String>,
        out: &mut Vec<Vec<String>>,
    ) {
        let Some(last) = path.last().cloned() else { return };
        for next in graph.get(&last).into_iter().flat_map(BTreeMap::keys) {
            if next == start {
                let mut cycle = path.clone();
                cycle.push(next.clone());
                out.push(cycle);
            } else if next.as_str() > start && !path.contains(next) && out.len() < 100 {
                path.push(next.clone());
                walk(graph, start, path, out);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    for start in graph.keys() {
        walk(graph, start, &mut vec![start.clone()], &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::circles;

    fn check(files: &[(&str, &str)], want: &[&str]) {
        let files: Vec<(PathBuf, String)> =
            files.iter().map(|(p, t)| (PathBuf::from(p), (*t).to_owned())).collect();
        assert_eq!(circles(&files), want);
    }

    #[test]
    fn a_planted_circle_between_siblings_is_found() {
        check(
            &[
                ("c/src/lib.rs", "mod a;\nmod b;\nmod c;\n"),
                ("c/src/a.rs", "//! a\nuse crate::b::Thing;\n"),
                ("c/src/b.rs", "//! b\nuse crate::{c, x};\n"),
                ("c/src/c.rs", "//! c\nfn f() { super::a::g() }\n"),
            ],
            &["c/src/lib.rs crate: a -> b -> c -> a (c/src/a.rs:2, c/src/b.rs:2, c/src/c.rs:2)"],
        );
    }

    #[test]
    fn nested_siblings_and_path_attributes_count() {
        check(
            &[
                ("t/run.rs", "#[path = \"run/x.rs\"]\nmod x;\nmod y;\n"),
                ("t/run/x.rs", "//! x\nmod inner;\nuse super::y;\n"),
                ("t/run/x/inner.rs", "//! inner\n"),
                ("t/run/y.rs", "//! y\nuse crate::x::inner::Z;\n"),
            ],
            &["t/run.rs crate: x -> y -> x (t/run/x.rs:3, t/run/y.rs:2)"],
        );
    }

    #[test]
    fn ancestors_descendants_and_test_code_are_not_circles() {
        check(
            &[
                ("c/src/lib.rs", "mod a;\nmod b;\npub use a::X;\n"),
                ("c/src/a.rs", "//! a\nmod deep;\nuse crate::b;\nuse self::deep::Y;\n"),
                ("c/src/a/deep.rs", "//! deep\nuse super::super::a;\nuse crate::X;\n"),
                ("c/src/b.rs", "//! b\n// crate::a in a comment\n#[cfg(test)]\nmod tests;\n"),
                ("c/src/b/tests.rs", "//! tests\nuse crate::a;\n"),
            ],
            &[],
        );
    }
}
