//! `svclab policy`: the JSON Schema of the policy settings, and a check of settings alone.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::commands::{EXIT_REPORT_ERRORS, Io};
use crate::input::read_inputs;

/// Arguments of `svclab policy`.
#[derive(Debug, Args)]
pub(crate) struct PolicyCommand {
    #[command(subcommand)]
    action: PolicyAction,
}

#[derive(Debug, Subcommand)]
enum PolicyAction {
    /// Print the JSON Schema (draft 2020-12) of the settings object.
    Schema,
    /// Check policy settings (ServicePolicy documents or bare settings, YAML or JSON); exit 1
    /// on settings errors, printed as `FILE:LINE:COLUMN: <field.Error line>`.
    Check {
        /// The settings file; `-` reads standard input.
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
}

impl PolicyCommand {
    pub(crate) fn run(self, io: &mut Io<'_>) -> anyhow::Result<u8> {
        match self.action {
            PolicyAction::Schema => {
                io.stdout.write_all(svclab_core::settings_schema().as_bytes())?;
                Ok(0)
            }
            PolicyAction::Check { file } => {
                let input = read_inputs(std::slice::from_ref(&file), io.stdin)?.remove(0);
                let diagnostics = svclab_core::check_settings(&input);
                for d in &diagnostics {
                    match &d.source {
                        Some(s) => writeln!(
                            io.stdout,
                            "{}:{}:{}: {}",
                            input.name, s.line, s.column, d.message
                        )?,
                        None => writeln!(io.stdout, "{}: {}", input.name, d.message)?,
                    }
                }
                if diagnostics.is_empty() {
                    writeln!(io.stdout, "{}: the policy settings are valid", input.name)?;
                    Ok(0)
                } else {
                    Ok(EXIT_REPORT_ERRORS)
                }
            }
        }
    }
}
