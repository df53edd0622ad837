//! `cargo xtask`: build automation written in Rust.
//!
//! The tasks form layers, as core's modules do (no two modules use each other, checked by the
//! tidy test of `tidy/circles.rs`): `workspace` (root, target directory, cargo, running
//! programs, progress) at the bottom; `files`, `gzip`, `archive` (reproducible tar) and
//! `artifacthub` (the Kubewarden package descriptions) above it; then the tasks, each using
//! only what is below it (`plugin` under `npm` and `plugins`, `npm` under `docs`, `playground`
//! and `docs` under `serve`, `playground` under `scaling`, and `plugins`, `npm`, `playground`
//! and `docs` under `dist`).

mod annotate;
mod archive;
mod artifacthub;
mod cluster;
mod differential;
mod dist;
mod docs;
mod files;
mod fuzz;
mod gzip;
mod loadtest;
mod npm;
mod oracle;
mod playground;
mod plugin;
mod plugins;
mod scaling;
mod serve;
mod tidy;
mod workspace;

use std::io::Write as _;
use std::process::ExitCode;

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
                     without EndpointSlices, check and render, with slices also upgrade
                     from the oldest release in iptables mode to the newest in nftables,
                     native and plugin, peak memory), then the plugin's per-call table
  gen-scenario --services N [--slices]
                     print the generated scenario the benchmarks use
  npm                build the svclab npm package into target/npm/svclab/
  docs               build the guide (docs/guide/) into target/guide/
  dist [--twice]     every artifact a user installs, reproducibly, into target/dist/: the
                     Kubewarden policy and the proxy-wasm filter as OCI image layouts, the
                     Traefik plugin, the svclab tarball, the npm package, the playground and
                     guide, an SBOM each and SHA256SUMS (--twice: build again and compare)
  fuzz --time N [target...] | --list
                     run the fuzz targets (all, or the named ones) N seconds each on the
                     pinned nightly and print executions per target and in total
  loadtest [--seconds N] [--connections N] [--threads N] [--engine plugin|native]
                     wrk against `svclab serve`: reviews/s, p50, p99
  oracle [--release X.Y.Z ... | --all] [--area apiserver|proxy|all] [--cases N] [--seed S]
         [--no-shrink] [--write-regressions]
                     svclab against upstream's own code (Go, oracle/): divergences grouped,
                     each shrunk to a minimal case, optionally recorded under tests/data/oracle/
  cluster up [--release 1.X[.Y]] [--profile FILE] [--dir DIR] | cluster down [--dir DIR]
                     a real etcd and kube-apiserver on 127.0.0.1, built from their Go modules
                     (cached), ranges and gates from a ClusterProfile; prints the kubeconfig
  differential [--seeds N] [--start K] [--time SECONDS] [--no-shrink]
                     generated scenarios in the kernel (root): every probe against the
                     trace, iptables against nftables; failing seeds shrunk";

/// Runs the task and prints its error, if any, as one chain of causes (`{:#}`): never a
/// backtrace, whatever `RUST_BACKTRACE` says, because a task's error is a message to its user.
/// An unknown or missing command prints the usage and exits with 2.
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("playground") => playground::build(),
        Some("serve") => serve::run(&args[1..]),
        Some("build-plugin") => plugin::build(&args[1..]),
        Some("bench") => bench(&args[1..]),
        Some("gen-scenario") => scaling::gen_scenario(&args[1..]),
        Some("plugins") => plugins::build(&args[1..]),
        Some("npm") => npm::build(),
        Some("docs") => docs::build(),
        Some("dist") => dist::run_task(&args[1..]),
        Some("loadtest") => loadtest::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("differential") => differential::run(&args[1..]),
        Some("oracle") => oracle::run(&args[1..]),
        Some("cluster") => cluster::run(&args[1..]),
        Some(other) => return usage(&format!("unknown xtask command {other:?}")),
        None => return usage("no command given"),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let message = format!("{error:#}");
            let _ = writeln!(std::io::stderr().lock(), "error: {message}");
            // A task's own usage error (its message gives the usage) exits as a usage error.
            if message.contains("usage: cargo xtask") {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// Prints what went wrong and the usage, and gives the exit status of a usage error.
fn usage(problem: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr().lock(), "error: {problem}\n{USAGE}");
    ExitCode::from(2)
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
