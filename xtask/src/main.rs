//! `cargo xtask`: build automation written in Rust.

mod annotate;
mod differential;
mod docs;
mod fuzz;
mod loadtest;
mod npm;
mod playground;
mod plugin;
mod plugins;
mod scaling;
mod tidy;

use std::path::{Path, PathBuf};

const USAGE: &str = "usage: cargo xtask <command>
  ci                 run .ci/run (the test command CI runs)
  playground         build the playground into target/playground/
  serve [PORT] [--for SECONDS] [--no-build]
                     serve the playground on 127.0.0.1 (built first when missing),
                     the guide at /guide/
  build-plugin [--out PATH]
                     build the WebAssembly component
  plugins [--out DIR]
                     build every guest (component, Kubewarden, proxy-wasm, http-wasm) into one folder
  bench [scaling|plugin] [--quick] [--runs N] [--sizes 1000,10000] [--svclab PATH]
                     scaling table of whole processes (1k/10k/100k Services, with and
                     without EndpointSlices, check and render, native and plugin, peak
                     memory), then the plugin's per-call table
  gen-scenario --services N [--slices]
                     print the generated scenario the benchmarks use
  npm                build the svclab npm package into target/npm/svclab/
  docs               build the guide (docs/guide/) into target/guide/
  fuzz --time N [target...] | --list
                     run the fuzz targets (all, or the named ones) N seconds each on the
                     pinned nightly and print executions per target and in total
  loadtest [--seconds N] [--connections N] [--threads N] [--engine plugin|native]
                     wrk against `svclab serve`: reviews/s, p50, p99
  differential [--seeds N] [--start K] [--time SECONDS] [--no-shrink]
                     generated scenarios in the kernel (root): every probe against the
                     trace, iptables against nftables; failing seeds shrunk";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("playground") => playground::build(),
        Some("serve") => playground::serve(&args[1..]),
        Some("build-plugin") => plugin::build(&args[1..]),
        Some("bench") => bench(&args[1..]),
        Some("gen-scenario") => scaling::gen_scenario(&args[1..]),
        Some("plugins") => plugins::build(&args[1..]),
        Some("npm") => npm::build(),
        Some("docs") => docs::build(),
        Some("loadtest") => loadtest::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("differential") => differential::run(&args[1..]),
        Some(other) => anyhow::bail!("unknown xtask command {other:?}\n{USAGE}"),
        None => anyhow::bail!("{USAGE}"),
    }
}

/// `cargo xtask bench`: the scaling table of whole processes, then the plugin's per-call table;
/// either alone when named (`bench scaling`, `bench plugin`).
fn bench(args: &[String]) -> anyhow::Result<()> {
    match args.first().map(String::as_str) {
        Some("scaling") => scaling::table(&scaling::Options::parse(&args[1..])?),
        Some("plugin") => plugin::bench(&args[1..]),
        _ => {
            scaling::table(&scaling::Options::parse(args)?)?;
            let quick: Vec<String> = args.iter().filter(|a| *a == "--quick").cloned().collect();
            plugin::bench(&quick)
        }
    }
}

fn ci() -> anyhow::Result<()> {
    let status = std::process::Command::new("bash").arg(".ci/run").status()?;
    anyhow::ensure!(status.success(), ".ci/run failed");
    Ok(())
}

/// The workspace root (the xtask crate's parent): where `cargo run` says the crate is, else where
/// it was built. Clones that share a `CARGO_TARGET_DIR` (CI caches one outside the clone) share
/// this binary too, and cargo does not rebuild it for a clone at another path, so the path
/// compiled in may be another clone's, or gone.
pub(crate) fn workspace_root() -> PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest_dir.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// `$CARGO_TARGET_DIR` (relative to the workspace when relative), else `target/` in the workspace.
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() { dir } else { root.join(dir) }
        }
        _ => root.join("target"),
    }
}

/// The cargo that runs this xtask.
pub(crate) fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// Prints a line of progress and flushes it, so long runs show where they are.
pub(crate) fn say(line: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}
