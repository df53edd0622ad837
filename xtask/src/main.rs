//! `cargo xtask`: build automation written in Rust.

mod playground;
mod plugin;
mod scaling;
mod tidy;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("playground") => playground::build(),
        Some("serve") => playground::serve(&args[1..]),
        Some("build-plugin") => plugin::build(&args[1..]),
        Some("bench") => bench(&args[1..]),
        Some("gen-scenario") => scaling::gen_scenario(&args[1..]),
        Some(other) => anyhow::bail!("unknown xtask command {other:?}; try `cargo xtask ci`"),
        None => anyhow::bail!("usage: cargo xtask <ci>"),
    }
}

/// `cargo xtask bench [scaling|plugin] [--quick] [--runs N] [--sizes 1000,10000] [--svclab PATH]`: the scaling
/// table of whole processes, then the plugin's per-call table; either alone when named.
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
