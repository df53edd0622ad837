//! `cargo xtask`: build automation written in Rust.

mod annotate;
mod loadtest;
mod playground;
mod plugin;
mod plugins;
mod tidy;

const USAGE: &str = "usage: cargo xtask <command>
  ci                 run .ci/run (the test command CI runs)
  playground         build the playground into target/playground/
  serve [PORT] [--for SECONDS]
                     serve the playground on 127.0.0.1 (built first when missing)
  build-plugin [--out PATH]
                     build the WebAssembly component
  bench [--quick]    native vs plugin timing table
  loadtest [--seconds N] [--connections N] [--threads N] [--engine plugin|native]
                     wrk against `svclab serve`: reviews/s, p50, p99";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("playground") => playground::build(),
        Some("serve") => playground::serve(&args[1..]),
        Some("build-plugin") => plugin::build(&args[1..]),
        Some("plugins") => plugins::build(&args[1..]),
        Some("bench") => plugin::bench(&args[1..]),
        Some("loadtest") => loadtest::run(&args[1..]),
        Some(other) => anyhow::bail!("unknown xtask command {other:?}\n{USAGE}"),
        None => anyhow::bail!("{USAGE}"),
    }
}

fn ci() -> anyhow::Result<()> {
    let status = std::process::Command::new("bash").arg(".ci/run").status()?;
    anyhow::ensure!(status.success(), ".ci/run failed");
    Ok(())
}
