//! `cargo xtask fuzz --time N [target...]`: builds the libFuzzer binaries of `fuzz/libfuzzer`
//! on the pinned nightly (cargo-fuzz, no sanitizer: core forbids `unsafe`, so what is left to
//! find is panics, overflows, runaway memory and time), runs every target (or the named ones)
//! for N seconds from its seed corpus and past crashes, and prints the executions per target
//! and in total. A crash fails the command and names the input libFuzzer saved.
//! `cargo xtask fuzz --list` prints the targets, one per line.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use crate::workspace::{say, target_dir, workspace_root};

/// The nightly `scripts/setup.d/50-fuzz.sh` installs.
const NIGHTLY: &str = "+nightly-2026-05-20";

/// A run's bounds for one input: libFuzzer's per-input timeout (seconds) and memory (MiB).
const INPUT_TIMEOUT_SECONDS: u32 = 10;
const RSS_LIMIT_MB: u32 = 2048;

/// How long past its `-max_total_time` a run may take (loading the corpus, final stats) before
/// it counts as hung. libFuzzer's timeout handler allocates inside a signal handler, so a
/// timeout that strikes while the target is in the allocator can deadlock instead of exiting.
const GRACE_SECONDS: u64 = 180;

/// The targets: the binaries of `fuzz/libfuzzer/fuzz_targets/`, sorted.
fn targets(root: &Path) -> anyhow::Result<Vec<String>> {
    let dir = root.join("fuzz/libfuzzer/fuzz_targets");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".rs") {
            names.push(stem.to_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// `cargo xtask fuzz`.
pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let root = workspace_root();
    let all = targets(&root)?;
    let mut seconds = None;
    let mut chosen = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--list" => {
                for name in &all {
                    say(name);
                }
                return Ok(());
            }
            "--time" => {
                let value = args.next().context("--time needs a number of seconds")?;
                seconds = Some(value.parse::<u32>().context("--time needs a number of seconds")?);
            }
            name if all.iter().any(|t| t == name) => chosen.push(name.to_owned()),
            other => bail!("unknown fuzz argument or target {other:?}; targets: {}", all.join(" ")),
        }
    }
    let seconds = seconds.context("usage: cargo xtask fuzz --time N [target...] | --list")?;
    if chosen.is_empty() {
        chosen = all;
    }
    let target = target_dir(&root);
    let binaries = build(&root, &target.join("libfuzzer"))?;
    let work = target.join("fuzz");
    say(&format!("{:<16} {:>12} {:>10} {:>8}  result", "target", "executions", "exec/s", "corpus"));
    let mut total = 0u64;
    let mut crashes = Vec::new();
    for name in &chosen {
        let outcome = campaign(&root, &binaries, &work, name, seconds)?;
        total += outcome.executions;
        let rate = outcome.executions / u64::from(seconds.max(1));
        let result = match &outcome.crash {
            None => "ok".to_owned(),
            Some(crash) => {
                crashes.push(format!("{name}: {crash}"));
                format!("CRASH {crash}")
            }
        };
        say(&format!(
            "{name:<16} {:>12} {rate:>10} {:>8}  {result}",
            outcome.executions, outcome.corpus
        ));
    }
    say(&format!("{:<16} {total:>12}", "total"));
    ensure!(
        crashes.is_empty(),
        "fuzzing found {} crash(es); minimise each into fuzz/regressions/<target>/ with the fix:\n{}",
        crashes.len(),
        crashes.join("\n")
    );
    Ok(())
}

/// A cargo of the pinned nightly, with nothing of the stable cargo that runs xtask in its
/// environment.
fn nightly_cargo(root: &Path) -> Command {
    let mut command = Command::new("cargo");
    command.current_dir(root).arg(NIGHTLY);
    for var in ["RUSTUP_TOOLCHAIN", "CARGO", "RUSTC", "RUSTDOC", "RUSTFLAGS"] {
        command.env_remove(var);
    }
    command
}

/// Builds every target into `target_dir` (named to cargo-fuzz, which otherwise builds into the
/// fuzz package's own workspace, `fuzz/libfuzzer/target/`) and returns the folder of the
/// binaries: `<target_dir>/<host triple>/release`, where cargo puts a `--target` build.
fn build(root: &Path, target_dir: &Path) -> anyhow::Result<PathBuf> {
    let fuzz = nightly_cargo(root).args(["fuzz", "--version"]).output();
    ensure!(
        fuzz.is_ok_and(|o| o.status.success()),
        "cargo-fuzz or the pinned nightly ({}) is missing: run scripts/setup.sh (scripts/setup.d/50-fuzz.sh)",
        &NIGHTLY[1..]
    );
    let status = nightly_cargo(root)
        .args(["fuzz", "build", "--fuzz-dir", "fuzz/libfuzzer", "--sanitizer", "none"])
        .arg("--target-dir")
        .arg(target_dir)
        .status()
        .context("cannot run cargo fuzz")?;
    ensure!(status.success(), "building the fuzz targets failed");
    Ok(target_dir.join(host_triple()?).join("release"))
}

/// The host's target triple, which cargo-fuzz builds for unless told otherwise.
fn host_triple() -> anyhow::Result<String> {
    let output = Command::new("rustc").arg("-vV").output().context("cannot run rustc -vV")?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_owned)
        .context("rustc -vV printed no host triple")
}

/// What one target's run did.
struct Outcome {
    executions: u64,
    corpus: usize,
    crash: Option<String>,
}

fn campaign(
    root: &Path,
    binaries: &Path,
    work: &Path,
    name: &str,
    seconds: u32,
) -> anyhow::Result<Outcome> {
    let corpus = work.join("corpus").join(name);
    let artifacts = work.join("artifacts").join(name);
    std::fs::create_dir_all(&corpus)?;
    std::fs::create_dir_all(&artifacts)?;
    let mut command = Command::new(binaries.join(name));
    // libFuzzer adds what it finds to the first folder; the checked-in seeds and past crashes
    // are read only.
    command.arg(&corpus).arg(root.join("fuzz/corpus").join(name));
    let regressions = root.join("fuzz/regressions").join(name);
    if regressions.is_dir() {
        command.arg(&regressions);
    }
    let log_path = artifacts.join("last.log");
    let log_file = std::fs::File::create(&log_path)?;
    let mut child = command
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-timeout={INPUT_TIMEOUT_SECONDS}"))
        .arg(format!("-rss_limit_mb={RSS_LIMIT_MB}"))
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg("-print_final_stats=1")
        .stdout(Stdio::null())
        .stderr(log_file)
        .spawn()
        .with_context(|| format!("cannot run {}", binaries.join(name).display()))?;
    let deadline = Instant::now() + Duration::from_secs(u64::from(seconds) + GRACE_SECONDS);
    let success = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status.success());
        }
        if Instant::now() > deadline {
            child.kill()?;
            child.wait()?;
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let log = String::from_utf8_lossy(&std::fs::read(&log_path)?).into_owned();
    let stat = |key: &str| -> u64 {
        log.lines()
            .filter_map(|l| l.strip_prefix(key))
            .filter_map(|v| v.trim().parse().ok())
            .next_back()
            .unwrap_or(0)
    };
    let saved = log
        .lines()
        .filter_map(|l| l.split("Test unit written to ").nth(1))
        .next_back()
        .map(str::to_owned);
    let crash = match success {
        Some(true) => None,
        Some(false) => {
            Some(saved.unwrap_or_else(|| format!("no input saved; see {}", log_path.display())))
        }
        None => Some(format!(
            "hung past its time (a timeout that deadlocked libFuzzer); see {}",
            log_path.display()
        )),
    };
    Ok(Outcome {
        executions: stat("stat::number_of_executed_units:"),
        corpus: count_files(&corpus),
        crash,
    })
}

fn count_files(dir: &PathBuf) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| entries.filter_map(Result::ok).count())
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use crate::workspace::{cargo, workspace_root};

    /// The fuzz step as the README's test command runs it in a plain clone: no
    /// `CARGO_TARGET_DIR`, so cargo-fuzz's own default (`fuzz/libfuzzer/target/`) and the
    /// workspace's `target/` differ, and the task must run what it built (issue 40: it used to
    /// build into one and look in the other).
    #[test]
    fn the_fuzz_step_runs_what_it_built_without_cargo_target_dir() {
        let output = Command::new(cargo())
            .current_dir(workspace_root())
            .args(["xtask", "fuzz", "--time", "1", "share_link"])
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET_DIR")
            .output()
            .expect("cargo runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "cargo xtask fuzz failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let line = stdout.lines().find(|l| l.starts_with("share_link ")).unwrap_or_default();
        assert!(line.ends_with(" ok"), "no result line for share_link:\n{stdout}");
    }
}
