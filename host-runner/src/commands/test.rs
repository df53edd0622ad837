//! `svclab test [PATH...]`: runs `*.svclab-test.yaml` suites (a directory is searched for
//! them), prints the results in the shape of `cargo test` or as JSON, writes JUnit XML, and with
//! `--update` rewrites the expectations that do not hold. The suites run in the engine; this
//! command only finds and reads the files and writes what the engine hands back.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use svclab_core::{Input, SUITE_SUFFIX, TestOptions};

use crate::commands::{EXIT_REPORT_ERRORS, Io};
use crate::engine::Engine;
use crate::input::{STDIN_NAME, io_message, read_inputs};

/// Arguments of `svclab test`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct TestCommand {
    /// `schema` prints the suite format's JSON Schema instead of running suites.
    #[command(subcommand)]
    action: Option<TestAction>,
    /// Suite files and directories (searched for `*.svclab-test.yaml`, hidden directories,
    /// `target` and `node_modules` left out); `-` reads one suite from standard input. Default:
    /// the current directory.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Result format.
    #[arg(long, short, value_enum, default_value_t = TestFormat::Text)]
    output: TestFormat,
    /// Also write the results as JUnit XML to this file.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Rewrite, in place, every expectation that does not hold (and every golden ruleset) with
    /// what svclab answers now, keeping comments and order; then report the rewritten suites.
    #[arg(long)]
    update: bool,
}

#[derive(Debug, Subcommand)]
enum TestAction {
    /// Print the JSON Schema (draft 2020-12) of the suite format.
    Schema,
}

/// How the results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TestFormat {
    /// A line per test, then the failures with their file, line and a small diff.
    Text,
    /// `{"passed","failed","errors","suites":[...]}`.
    Json,
}

impl TestCommand {
    pub(crate) fn run(self, engine: &Engine, io: &mut Io<'_>, verbose: bool) -> anyhow::Result<u8> {
        if let Some(TestAction::Schema) = self.action {
            io.stdout.write_all(engine.test_schema()?.output.as_bytes())?;
            return Ok(0);
        }
        let suites = read_suites(&self.paths, io)?;
        anyhow::ensure!(
            !suites.is_empty(),
            "no test suites (*{SUITE_SUFFIX}) in {}",
            shown_paths(&self.paths)
        );
        let mut files = Vec::new();
        for name in engine.test_files(&suites)? {
            // A file that cannot be read is left out: the engine reports it at the suite line
            // that names it.
            if let Ok(text) = std::fs::read_to_string(&name) {
                files.push(Input::new(name, text));
            }
        }
        let tested = engine.run_tests(&suites, &files, &TestOptions { update: self.update })?;
        if verbose && let Some(fuel) = tested.fuel {
            writeln!(io.stderr, "svclab: plugin fuel used: {fuel}")?;
        }
        for file in &tested.run.updated {
            if file.name == STDIN_NAME {
                writeln!(io.stderr, "svclab: standard input was not rewritten (--update)")?;
                continue;
            }
            std::fs::write(&file.name, file.text.as_bytes()).map_err(|err| {
                anyhow::anyhow!("cannot write {:?}: {}", file.name, io_message(&err))
            })?;
            writeln!(io.stderr, "svclab: updated {}", file.name)?;
        }
        if let Some(path) = &self.junit {
            std::fs::write(path, tested.run.to_junit()).map_err(|err| {
                anyhow::anyhow!(
                    "cannot write {:?}: {}",
                    path.display().to_string(),
                    io_message(&err)
                )
            })?;
        }
        let text = match self.output {
            TestFormat::Text => &tested.text,
            TestFormat::Json => &tested.json,
        };
        io.stdout.write_all(text.as_bytes())?;
        Ok(if tested.run.success() { 0 } else { EXIT_REPORT_ERRORS })
    }
}

fn shown_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return ".".to_owned();
    }
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// The suites the paths name: files as given, directories searched (sorted, so every run
/// takes them in the same order), `-` standard input.
fn read_suites(paths: &[PathBuf], io: &mut Io<'_>) -> anyhow::Result<Vec<Input>> {
    let default = [PathBuf::from(".")];
    let paths = if paths.is_empty() { &default[..] } else { paths };
    let mut files: Vec<PathBuf> = Vec::new();
    let mut suites = Vec::new();
    for path in paths {
        if path.as_os_str() == STDIN_NAME {
            suites.extend(read_inputs(std::slice::from_ref(path), io.stdin)?);
        } else if path.is_dir() {
            let mut found = Vec::new();
            search(path, &mut found)?;
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    for file in files {
        let name = file.display().to_string();
        let name = name.strip_prefix("./").unwrap_or(&name).to_owned();
        let text = std::fs::read_to_string(&file)
            .map_err(|err| anyhow::anyhow!("cannot read {name:?}: {}", io_message(&err)))?;
        suites.push(Input::new(name, text));
    }
    Ok(suites)
}

/// Every `*.svclab-test.yaml` under `dir`.
fn search(dir: &Path, found: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|err| {
        anyhow::anyhow!("cannot read {:?}: {}", dir.display().to_string(), io_message(&err))
    })?;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            // Hidden folders, build output and dependencies hold no suites of the project's.
            if !name.starts_with('.') && name != "target" && name != "node_modules" {
                search(&path, found)?;
            }
        } else if name.ends_with(SUITE_SUFFIX) {
            found.push(path);
        }
    }
    Ok(())
}
