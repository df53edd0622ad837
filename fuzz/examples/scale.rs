//! The core alone over a scenario file, for measuring it against the limits table of
//! ARCHITECTURE.md: `scale check FILE` runs `check` and writes the report's JSON, `scale render
//! FILE` also renders the iptables and the nftables payload; both print what they produced.
//! `scripts/measure-limits.sh` runs it under GNU time for the 100,000-Service scenario.

use std::io::Write as _;

use svclab_core::{CheckOptions, Input, ProxyMode, RenderOptions, evaluate, render};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [command, file] = args.as_slice() else {
        return Err("usage: scale check|render FILE".into());
    };
    let text = std::fs::read_to_string(file)?;
    let (world, report) = evaluate(&[Input::new(file.as_str(), text)], &CheckOptions::default());
    let json = report.to_json();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "services {} slices {} diagnostics {} report {} bytes",
        report.services.len(),
        world.endpoint_slices.len(),
        report.diagnostics.len(),
        json.len()
    )?;
    if command == "render" {
        for mode in [ProxyMode::Iptables, ProxyMode::Nftables] {
            let rules = render(&world, &RenderOptions::new(mode))?;
            writeln!(out, "{} {} lines", mode.as_str(), rules.lines().count())?;
        }
    }
    Ok(())
}
