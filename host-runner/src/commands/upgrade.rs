//! `svclab upgrade`: rehearses an upgrade, rollback, kube-proxy mode switch or range change for
//! a scenario (a pasted cluster dump with its ClusterProfile and KubeProxyConfiguration): the
//! findings as text or the `UpgradeReport` JSON, exit status 1 when one breaks something.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use svclab_core::ProxyMode;

use crate::commands::render::ModeArg;
use crate::commands::{EXIT_REPORT_ERRORS, Io};
use crate::engine::{Engine, UpgradeRequest};
use crate::input::read_inputs;

/// Arguments of `svclab upgrade`.
#[derive(Debug, Args)]
pub(crate) struct UpgradeCommand {
    /// Scenario files: the cluster today (its objects, ClusterProfile and
    /// KubeProxyConfiguration); `-` or nothing reads standard input.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The target release: a minor (`1.33`, its newest checked patch) or a patch (`1.33.5`);
    /// older than today's rehearses a rollback.
    #[arg(long, value_name = "VERSION")]
    to: String,
    /// kube-proxy's mode at the target (default: the target profile's, else today's).
    #[arg(long, value_enum)]
    proxy_mode: Option<ModeArg>,
    /// The target's ClusterProfile, ServiceCIDR objects and KubeProxyConfiguration, which
    /// replace today's (default: today's, moved to --to).
    #[arg(long, value_name = "FILE")]
    to_profile: Option<PathBuf>,
    /// Report format.
    #[arg(long, short, value_enum, default_value_t = UpgradeFormat::Text)]
    output: UpgradeFormat,
    /// Also print (or, in JSON, include) both rulesets' full diff.
    #[arg(long)]
    diff: bool,
}

/// How the rehearsal is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum UpgradeFormat {
    /// The findings by area, in words.
    Text,
    /// The `UpgradeReport` JSON contract.
    Json,
}

impl UpgradeCommand {
    /// The same command with a relative `--to-profile` read from `dir` (a guide page's folder,
    /// for `svclab doc test`).
    pub(crate) fn relative_to(mut self, dir: &Path) -> UpgradeCommand {
        if let Some(path) = &self.to_profile
            && path.is_relative()
            && path.as_os_str() != "-"
        {
            self.to_profile = Some(dir.join(path));
        }
        self
    }

    pub(crate) fn run(self, engine: &Engine, io: &mut Io<'_>, verbose: bool) -> anyhow::Result<u8> {
        let inputs = read_inputs(&self.files, io.stdin)?;
        let to_profile = match &self.to_profile {
            Some(path) => Some(read_inputs(std::slice::from_ref(path), io.stdin)?.remove(0)),
            None => None,
        };
        let request = UpgradeRequest {
            to: self.to,
            proxy_mode: self.proxy_mode.map(|mode| match mode {
                ModeArg::Iptables => ProxyMode::Iptables,
                ModeArg::Nftables => ProxyMode::Nftables,
            }),
            to_profile,
            diff: self.diff,
        };
        let (text, breaks, fuel) = match self.output {
            UpgradeFormat::Text => {
                let answer = engine.upgrade_text(&inputs, &request)?;
                (answer.text, answer.has_errors, answer.fuel)
            }
            UpgradeFormat::Json => {
                let answer = engine.upgrade(&inputs, &request)?;
                let breaks = svclab_core::UpgradeReport::from_json(&answer.output)
                    .map_err(|err| {
                        anyhow::anyhow!("the engine returned a malformed report: {err}")
                    })?
                    .breaks();
                (answer.output, breaks, answer.fuel)
            }
        };
        if verbose && let Some(fuel) = fuel {
            writeln!(io.stderr, "svclab: plugin fuel used: {fuel}")?;
        }
        io.stdout.write_all(text.as_bytes())?;
        Ok(if breaks { EXIT_REPORT_ERRORS } else { 0 })
    }
}
