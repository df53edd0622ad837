//! `cargo xtask`: build automation written in Rust.

mod loadtest;
mod playground;
mod plugin;
mod tidy;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("playground") => playground::build(),
        Some("serve") => playground::serve(&args[1..]),
        Some("build-plugin") => plugin::build(&args[1..]),
        Some("bench") => plugin::bench(&args[1..]),
        Some("loadtest") => loadtest::run(&args[1..]),
        Some(other) => anyhow::bail!("unknown xtask command {other:?}; try `cargo xtask ci`"),
        None => anyhow::bail!("usage: cargo xtask <ci>"),
    }
}

fn ci() -> anyhow::Result<()> {
    let status = std::process::Command::new("bash").arg(".ci/run").status()?;
    anyhow::ensure!(status.success(), ".ci/run failed");
    Ok(())
}
