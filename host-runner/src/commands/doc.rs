//! `svclab doc test FILE.md...`: checks the svclab examples of Markdown files, like rustdoc's
//! doctests for Kubernetes Service examples. Each ```` ```svclab <command> ```` block is a
//! scenario; the command runs on it (as its standard input) and its standard output must equal
//! the ```` ```text expected ```` block that follows. `--bless` rewrites (or adds) the expected
//! blocks instead. The syntax is described in `markdown.rs`.

mod diff;
mod markdown;

use std::path::PathBuf;

use clap::{Args, Parser as _, Subcommand};

use crate::commands::{Cli, Command, EXIT_REPORT_ERRORS, Io};
use crate::engine::Engine;
use crate::input::io_message;

/// Arguments of `svclab doc`.
#[derive(Debug, Args)]
pub(crate) struct DocCommand {
    /// What to do with the documents.
    #[command(subcommand)]
    action: DocAction,
}

#[derive(Debug, Subcommand)]
enum DocAction {
    /// Run every ```svclab example of the files and compare with its ```text expected block.
    Test(DocTestCommand),
}

/// Arguments of `svclab doc test`.
#[derive(Debug, Args)]
struct DocTestCommand {
    /// Markdown files.
    #[arg(value_name = "FILE.md", required = true)]
    files: Vec<PathBuf>,
    /// Rewrite the expected blocks with the engine's output (adding missing ones).
    #[arg(long)]
    bless: bool,
}

/// What one example came to.
enum ExampleResult {
    Passed,
    /// The expected block was written (`--bless`).
    Blessed,
    Failed(String),
}

impl DocCommand {
    pub(crate) fn run(self, engine: &Engine, io: &mut Io<'_>) -> anyhow::Result<u8> {
        let DocAction::Test(command) = self.action;
        command.run(engine, io)
    }
}

impl DocTestCommand {
    fn run(self, engine: &Engine, io: &mut Io<'_>) -> anyhow::Result<u8> {
        let (mut passed, mut failed, mut blessed) = (0, 0, 0);
        for file in &self.files {
            let name = file.display().to_string();
            let text = std::fs::read_to_string(file)
                .map_err(|err| anyhow::anyhow!("cannot read {name:?}: {}", io_message(&err)))?;
            let lines = markdown::lines(&text);
            let mut edits: Vec<Edit> = Vec::new();
            for example in markdown::examples(&lines) {
                let line = example.scenario.open_line + 1;
                let label = format!("{name}:{line}: svclab {}", example.args.join(" "));
                let dir = file.parent().unwrap_or(std::path::Path::new("."));
                let result = match check_example(engine, &example, dir) {
                    Err(reason) => ExampleResult::Failed(reason),
                    Ok(actual) => {
                        let expected = example.expected.as_ref().map(|block| block.text.as_str());
                        if expected == Some(actual.as_str()) {
                            ExampleResult::Passed
                        } else if self.bless {
                            edits.push(Edit::new(&example, &actual));
                            ExampleResult::Blessed
                        } else {
                            ExampleResult::Failed(match expected {
                                Some(expected) => format!(
                                    "the output differs from the expected block (-expected +actual):\n{}",
                                    diff::unified(expected, &actual)
                                ),
                                None => "no ```text expected block follows the example (`--bless` adds it)".to_owned(),
                            })
                        }
                    }
                };
                match result {
                    ExampleResult::Passed => {
                        passed += 1;
                        writeln!(io.stdout, "{label} ... ok")?;
                    }
                    ExampleResult::Blessed => {
                        blessed += 1;
                        writeln!(io.stdout, "{label} ... blessed")?;
                    }
                    ExampleResult::Failed(reason) => {
                        failed += 1;
                        writeln!(io.stdout, "{label} ... FAILED\n{reason}")?;
                    }
                }
            }
            if !edits.is_empty() {
                std::fs::write(file, apply(&lines, edits)).map_err(|err| {
                    anyhow::anyhow!("cannot write {name:?}: {}", io_message(&err))
                })?;
            }
        }
        let total = passed + failed + blessed;
        writeln!(
            io.stdout,
            "doc test: {total} examples in {} files: {passed} passed, {failed} failed, {blessed} blessed",
            self.files.len()
        )?;
        Ok(if failed > 0 { EXIT_REPORT_ERRORS } else { 0 })
    }
}

/// Runs the example's command on its scenario; its standard output, or why it could not run.
/// Files the command names (`upgrade --to-profile`) are read from the page's folder, `dir`.
fn check_example(
    engine: &Engine,
    example: &markdown::Example,
    dir: &std::path::Path,
) -> Result<String, String> {
    if !example.scenario.closed {
        return Err("the example's fence is never closed".to_owned());
    }
    if let Some(problem) = &example.problem {
        return Err(problem.clone());
    }
    let argv = ["svclab"]
        .into_iter()
        .map(str::to_owned)
        .chain(example.args.iter().cloned())
        .chain(["-".to_owned()]);
    let cli = Cli::try_parse_from(argv).map_err(|err| err.render().to_string())?;
    let mut stdin = example.scenario.text.as_bytes();
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut io = Io { stdin: &mut stdin, stdout: &mut stdout, stderr: &mut stderr };
    // The example's own engine options are ignored: `svclab doc test --engine ...` chooses.
    let result = match cli.command {
        Command::Check(command) => command.run(engine, &mut io, false),
        Command::Render(command) => command.run(engine, &mut io, false),
        Command::Trace(command) => command.run(engine, &mut io, false),
        Command::Upgrade(command) => command.relative_to(dir).run(engine, &mut io, false),
        // The scenario block is a suite; its exit status (1 when a test fails) is part of
        // what the expected block shows, not a reason to refuse the example.
        Command::Test(command) => command.run(engine, &mut io, false),
        Command::Serve(_) | Command::Doc(_) | Command::Policy(_) | Command::Oci(_) => {
            return Err("examples run `check`, `render`, `trace`, `upgrade` or `test`".to_owned());
        }
    };
    result.map_err(|err| format!("error: {err:#}"))?;
    String::from_utf8(stdout).map_err(|_| "the output is not UTF-8".to_owned())
}

/// A rewrite of the lines `start..end` (0-based, end exclusive) of a file.
struct Edit {
    start: usize,
    end: usize,
    lines: Vec<String>,
}

impl Edit {
    /// Replaces the example's expected block, or adds one after the scenario.
    fn new(example: &markdown::Example, actual: &str) -> Edit {
        let fence = markdown::fence_for(actual);
        let mut text = actual.to_owned();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        let (start, end, info, mut lines) = match &example.expected {
            Some(block) => (block.open_line, block.close_line + 1, block.info.clone(), Vec::new()),
            None => {
                let at = example.scenario.close_line + 1;
                (at, at, "text expected".to_owned(), vec![String::new()])
            }
        };
        lines.push(format!("{fence}{info}"));
        lines.extend(markdown::lines(&text).into_iter().map(str::to_owned));
        lines.push(fence);
        Edit { start, end, lines }
    }
}

/// The file with the edits applied (edits are in file order and do not overlap).
fn apply(lines: &[&str], edits: Vec<Edit>) -> String {
    let mut out: Vec<String> = lines.iter().map(|line| (*line).to_owned()).collect();
    for edit in edits.into_iter().rev() {
        out.splice(edit.start..edit.end, edit.lines);
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}
