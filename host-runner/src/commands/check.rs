//! `svclab check`: the whole pipeline, the report as text, JSON or YAML.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use svclab_core::{CheckOptions, UserInfo};

use crate::commands::{EXIT_REPORT_ERRORS, Io};
use crate::engine::Engine;
use crate::input::read_inputs;

/// Arguments of `svclab check`.
#[derive(Debug, Args)]
pub(crate) struct CheckCommand {
    /// Scenario files (multi-document YAML or JSON); `-` or nothing reads standard input.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Report format.
    #[arg(long, short, value_enum, default_value_t = OutputFormat::Text)]
    output: OutputFormat,
    /// Validate the objects exactly as written: no defaulting, no allocation.
    #[arg(long)]
    no_defaults: bool,
    /// The operator's Service policy: ServicePolicy documents or the bare settings, YAML or
    /// JSON, in effect before every object of the scenario.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// The requester's user name, for user-based policy rules (without it they are skipped).
    #[arg(long, value_name = "NAME")]
    user: Option<String>,
    /// A group of the requester (repeatable); implies a requester with an empty name when
    /// --user is absent.
    #[arg(long = "group", value_name = "G")]
    groups: Vec<String>,
    /// For every diagnostic, the Kubernetes releases in which kube-apiserver gives exactly
    /// that text for this scenario, with the release-table rows behind it.
    #[arg(long)]
    explain_release: bool,
}

/// How the report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    /// kubectl-like lines plus allocation tables.
    Text,
    /// The report's JSON contract.
    Json,
    /// The same document as YAML.
    Yaml,
}

impl CheckCommand {
    pub(crate) fn run(self, engine: &Engine, io: &mut Io<'_>, verbose: bool) -> anyhow::Result<u8> {
        let inputs = read_inputs(&self.files, io.stdin)?;
        let policy = match &self.policy {
            Some(path) => Some(read_inputs(std::slice::from_ref(path), io.stdin)?.remove(0)),
            None => None,
        };
        let user_info = (self.user.is_some() || !self.groups.is_empty())
            .then(|| UserInfo { username: self.user.unwrap_or_default(), groups: self.groups });
        let options = CheckOptions {
            no_defaults: self.no_defaults,
            policy,
            user_info,
            explain_release: self.explain_release,
            // The text does not print the rulesets; JSON and YAML carry them.
            omit_rules: self.output == OutputFormat::Text,
        };
        // Text comes from the engine as text (the plugin renders it in the guest); JSON and
        // YAML from the report.
        let (text, has_errors, fuel) = match self.output {
            OutputFormat::Text => {
                let checked = engine.check_text(&inputs, &options)?;
                (checked.text, checked.has_errors, checked.fuel)
            }
            OutputFormat::Json => {
                let checked = engine.check_report(&inputs, &options)?;
                let (has_errors, fuel) = (checked.report.has_errors(), checked.fuel);
                (checked.into_json(), has_errors, fuel)
            }
            // From the typed report, not a `serde_json::Value`, so keys keep the contract's
            // order without serde_json's `preserve_order` (which would leak into core builds).
            OutputFormat::Yaml => {
                let checked = engine.check_report(&inputs, &options)?;
                let yaml = serde_norway::to_string(&checked.report)
                    .context("cannot encode the report as YAML")?;
                (yaml, checked.report.has_errors(), checked.fuel)
            }
        };
        if verbose && let Some(fuel) = fuel {
            writeln!(io.stderr, "svclab: plugin fuel used: {fuel}")?;
        }
        let exit = if has_errors { EXIT_REPORT_ERRORS } else { 0 };
        io.stdout.write_all(text.as_bytes())?;
        Ok(exit)
    }
}
