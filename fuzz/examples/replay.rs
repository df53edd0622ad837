//! Runs one target's body over files, on stable: `replay TARGET FILE...`, printing each file's
//! time, so a crash or a slow input from libFuzzer can be looked at (under GNU time for its
//! memory) and minimised by hand.

use std::io::Write as _;
use std::time::Instant;

use svclab_fuzz::TARGETS;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((name, files)) = args.split_first() else {
        return Err("usage: replay TARGET FILE...".into());
    };
    let target = TARGETS.iter().find(|t| t.name == name).ok_or("no such target")?;
    let mut out = std::io::stdout().lock();
    for file in files {
        let data = std::fs::read(file)?;
        let start = Instant::now();
        (target.run)(&data);
        writeln!(out, "{file}: {:.3} s", start.elapsed().as_secs_f64())?;
    }
    Ok(())
}
