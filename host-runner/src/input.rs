//! Reading scenario inputs: files named on the command line, or `-` for standard input.

use std::io::Read;
use std::path::PathBuf;

use anyhow::Context as _;
use svclab_core::Input;

/// The name standard input gets in diagnostics.
pub(crate) const STDIN_NAME: &str = "-";

/// Reads every named file (or standard input for `-` or no file at all), in order.
pub(crate) fn read_inputs(files: &[PathBuf], stdin: &mut dyn Read) -> anyhow::Result<Vec<Input>> {
    if files.is_empty() {
        return Ok(vec![read_stdin(stdin)?]);
    }
    let mut inputs = Vec::with_capacity(files.len());
    for file in files {
        if file.as_os_str() == STDIN_NAME {
            inputs.push(read_stdin(stdin)?);
            continue;
        }
        let name = file.display().to_string();
        // The io::Error's own text ("No such file or directory (os error 2)") is shown through
        // the context chain; strip the "(os error N)" suffix for a kubectl-like message.
        let text = std::fs::read_to_string(file)
            .map_err(|err| anyhow::anyhow!("cannot read {name:?}: {}", io_message(&err)))?;
        inputs.push(Input::new(name, text));
    }
    Ok(inputs)
}

fn read_stdin(stdin: &mut dyn Read) -> anyhow::Result<Input> {
    let mut text = String::new();
    stdin.read_to_string(&mut text).context("cannot read standard input")?;
    Ok(Input::new(STDIN_NAME, text))
}

/// The OS error text without Rust's ` (os error N)` suffix.
pub(crate) fn io_message(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error ") {
        Some(idx) => text[..idx].to_owned(),
        None => text,
    }
}
