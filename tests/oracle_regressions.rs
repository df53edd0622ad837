//! Every regression case `cargo xtask oracle --write-regressions` recorded under
//! `tests/data/oracle/`, as its own test: svclab's answers to the case against upstream's
//! recorded answer (kube-apiserver's, for `apiserver/`), with the oracle's own comparison, so a
//! divergence once found and fixed stays fixed without Go on the machine.

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use svclab_oracle::apiserver;

fn main() {
    let args = Arguments::from_args();
    let dir = svclab_tests::data_dir().join("oracle").join("apiserver");
    let mut trials = Vec::new();
    let mut files: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd.filter_map(Result::ok).map(|e| e.path()).collect(),
        Err(e) => {
            let message = format!("{}: {e}", dir.display());
            trials.push(Trial::test("apiserver", move || Err(message.into())));
            Vec::new()
        }
    };
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    for file in files {
        let name = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        trials.push(Trial::test(format!("apiserver/{name}"), move || check(&file)));
    }
    libtest_mimic::run(&args, trials).exit();
}

/// svclab's answers to one recorded case agree with upstream's.
fn check(file: &std::path::Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let record: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let objects = record["objects"].as_array().cloned().unwrap_or_default();
    if objects.is_empty() || !record["upstream"].is_object() {
        return Err(format!("{}: no objects or no upstream answer", file.display()).into());
    }
    let divergences = apiserver::compare("regression", &objects, &record["upstream"]);
    if divergences.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = divergences
        .iter()
        .map(|d| {
            format!(
                "{} {}:\n  svclab:   {}\n  upstream: {}",
                d.kind.as_str(),
                d.object,
                d.svclab,
                d.upstream
            )
        })
        .collect();
    Err(format!("svclab and upstream ({}) disagree:\n{}", record["release"], lines.join("\n"))
        .into())
}
