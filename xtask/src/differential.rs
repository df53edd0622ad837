//! `cargo xtask differential`: the dataplane suite's differential run over many seeds (issue 15).
//! Scenarios generated from seeds are rendered by svclab in both proxy modes, loaded into the
//! kernel inside network namespaces and probed; every answer must be one the trace predicts,
//! and iptables and nftables must agree. Needs root (as the dataplane suite does).
//!
//! ```text
//! cargo xtask differential [--seeds N] [--start K] [--time SECONDS] [--no-shrink]
//! ```
//!
//! Runs seeds K..K+N (default 1..=20), stopping before a new seed once SECONDS have passed, and
//! prints the totals with the CPU time (user+sys) of the run, which is the figure to compare
//! on a shared machine. A failing seed is shrunk and printed with the command that replays it.

use anyhow::{Context, bail, ensure};

use crate::workspace::{cargo, say, workspace_root};

const USAGE: &str =
    "usage: cargo xtask differential [--seeds N] [--start K] [--time SECONDS] [--no-shrink]";

/// `cargo xtask differential ...`.
pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let mut seeds = 20u64;
    let mut start = 1u64;
    let mut time: Option<u64> = None;
    let mut shrink = true;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> anyhow::Result<u64> {
            let value = args.next().with_context(|| format!("{name} needs a number\n{USAGE}"))?;
            value.parse().with_context(|| format!("{name}: bad number {value:?}"))
        };
        match arg.as_str() {
            "--seeds" => seeds = number("--seeds")?,
            "--start" => start = number("--start")?,
            "--time" => time = Some(number("--time")?),
            "--no-shrink" => shrink = false,
            other => bail!("unknown argument {other:?}\n{USAGE}"),
        }
    }
    let before = children_cpu_seconds();
    let mut cmd = std::process::Command::new(cargo());
    cmd.current_dir(workspace_root())
        .args([
            "test",
            "--locked",
            "-p",
            "svclab-tests",
            "--no-default-features",
            "--test",
            "dataplane",
            "--",
            "differential/",
        ])
        .env("SVCLAB_DIFFERENTIAL_SEEDS", seeds.to_string())
        .env("SVCLAB_DIFFERENTIAL_START", start.to_string());
    if let Some(time) = time {
        cmd.env("SVCLAB_DIFFERENTIAL_TIME", time.to_string());
    }
    if !shrink {
        cmd.env("SVCLAB_DIFFERENTIAL_SHRINK", "0");
    }
    let status = cmd.status().context("running cargo test")?;
    if let (Some(before), Some(after)) = (before, children_cpu_seconds()) {
        say(&format!(
            "differential: CPU time (user+sys) of the build and the run: {:.1}s",
            after - before
        ));
    }
    ensure!(
        status.success(),
        "the differential run failed (the seeds and replay commands are above)"
    );
    Ok(())
}

/// CPU time (user+sys) of the waited-for children of this process, from `/proc/self/stat`
/// (`cutime` and `cstime`, in clock ticks of 1/100 s on Linux); `None` elsewhere.
fn children_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at field 3.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // cutime and cstime are fields 16 and 17 of the whole line: 14 and 15 after the name.
    let cutime: f64 = fields.get(13)?.parse().ok()?;
    let cstime: f64 = fields.get(14)?.parse().ok()?;
    Some((cutime + cstime) / 100.0)
}
