//! `svclab render`: only the ruleset kube-proxy programs, ready for `iptables-restore` / `nft -f`.

use std::io::Write as _;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use svclab_core::{IpFamily, ProxyMode, RenderOptions};

use crate::commands::Io;
use crate::engine::{Engine, EngineError};
use crate::input::read_inputs;

/// Arguments of `svclab render`.
#[derive(Debug, Args)]
pub(crate) struct RenderCommand {
    /// Scenario files (multi-document YAML or JSON); `-` or nothing reads standard input.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// kube-proxy backend.
    #[arg(long, value_enum, default_value_t = ModeArg::Iptables)]
    proxy_mode: ModeArg,
    /// The node kube-proxy runs on (default: hostnameOverride, else the first Node).
    #[arg(long, value_name = "NAME")]
    node: Option<String>,
    /// IP family of the payload (default: the cluster's primary family).
    #[arg(long, value_enum)]
    ip_family: Option<FamilyArg>,
    /// Also emit the jumps from the built-in chains, so the output alone is a complete dataplane.
    #[arg(long)]
    standalone: bool,
}

/// `--proxy-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ModeArg {
    /// iptables-restore input.
    Iptables,
    /// nft transaction.
    Nftables,
}

/// `--ip-family`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FamilyArg {
    /// IPv4.
    #[value(name = "IPv4", alias = "ipv4")]
    Ipv4,
    /// IPv6.
    #[value(name = "IPv6", alias = "ipv6")]
    Ipv6,
}

impl RenderCommand {
    pub(crate) fn run(self, engine: &Engine, io: &mut Io<'_>, verbose: bool) -> anyhow::Result<u8> {
        let inputs = read_inputs(&self.files, io.stdin)?;
        let options = RenderOptions {
            mode: match self.proxy_mode {
                ModeArg::Iptables => ProxyMode::Iptables,
                ModeArg::Nftables => ProxyMode::Nftables,
            },
            family: self.ip_family.map(|family| match family {
                FamilyArg::Ipv4 => IpFamily::V4,
                FamilyArg::Ipv6 => IpFamily::V6,
            }),
            node: self.node,
            standalone: self.standalone,
        };
        if let Engine::Native = engine {
            return render_natively(inputs, &options, io);
        }
        let outcome = engine.render(&inputs, &options)?;
        if verbose {
            outcome.report_fuel(io.stderr)?;
        }
        io.stdout.write_all(outcome.output.as_bytes())?;
        Ok(0)
    }
}

/// The native engine's render, written to standard output as it is produced: the ruleset of
/// 10,000 Services is tens of megabytes that need not be joined into one string first, and the
/// scenario text and cluster state are dropped as soon as the rules no longer need them (the
/// same bytes as [`Engine::render`]).
fn render_natively(
    inputs: Vec<svclab_core::Input>,
    options: &RenderOptions,
    io: &mut Io<'_>,
) -> anyhow::Result<u8> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, &mut *io.stdout);
    let mut written = Ok(());
    svclab_core::render_to(inputs, options, &mut |piece| {
        if written.is_ok() {
            written = out.write_all(piece.as_bytes());
        }
    })
    .map_err(|err| EngineError::Failed(err.to_string()))?;
    written?;
    out.flush()?;
    Ok(0)
}
