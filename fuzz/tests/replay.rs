//! Replays every input of the seed corpus (`fuzz/corpus/<target>/`) and every past crash
//! (`fuzz/regressions/<target>/`) through its target's body, on stable: one test per target
//! and folder, naming the file that fails. Also holds the three lists of targets (the bodies,
//! the libFuzzer binaries, the folders) to one another.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use svclab_fuzz::{TARGETS, Target};

fn main() {
    let args = Arguments::from_args();
    // Where cargo runs the test from, else where it was built (see svclab-tests' workspace_root).
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    let fuzz_dir = root.clone();
    let mut trials = vec![Trial::test("targets_match_libfuzzer_binaries_and_folders", move || {
        targets_match(&fuzz_dir)
    })];
    for target in TARGETS {
        for folder in ["corpus", "regressions"] {
            let dir = root.join(folder).join(target.name);
            trials.push(Trial::test(format!("{folder}::{}", target.name), move || {
                replay(target, &dir)
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// The files of a folder, sorted; a missing folder has none.
fn files(dir: &Path) -> Result<Vec<PathBuf>, Failed> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(Vec::new()) };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn replay(target: &Target, dir: &Path) -> Result<(), Failed> {
    let mut failures = Vec::new();
    let files = files(dir)?;
    for path in &files {
        let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if catch_unwind(AssertUnwindSafe(|| (target.run)(&data))).is_err() {
            failures.push(path.display().to_string());
        }
    }
    if dir.ends_with(Path::new("corpus").join(target.name)) && files.is_empty() {
        return Err(format!("{}: the seed corpus is empty", dir.display()).into());
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("{} panicked on:\n{}", target.name, failures.join("\n")).into())
    }
}

fn names_in(dir: &Path, suffix: &str) -> Result<Vec<String>, Failed> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for entry in entries {
        let name = entry.map_err(|e| format!("{}: {e}", dir.display()))?.file_name();
        if let Some(stem) = name.to_string_lossy().strip_suffix(suffix) {
            names.push(stem.to_owned());
        }
    }
    names.sort();
    Ok(names)
}

fn targets_match(root: &Path) -> Result<(), Failed> {
    let mut bodies: Vec<String> = TARGETS.iter().map(|t| t.name.to_owned()).collect();
    bodies.sort();
    let binaries = names_in(&root.join("libfuzzer/fuzz_targets"), ".rs")?;
    if binaries != bodies {
        return Err(format!("fuzz_targets/*.rs {binaries:?} != TARGETS {bodies:?}").into());
    }
    for folder in ["corpus", "regressions"] {
        for name in names_in(&root.join(folder), "")? {
            if !bodies.contains(&name) {
                return Err(format!("{folder}/{name} is not a target").into());
            }
        }
    }
    Ok(())
}
