//! `svclab render`: only the ruleset kube-proxy programs, ready for `iptables-restore` / `nft -f`.

use std::io::Write as _;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use svclab_core::{IpFamily, ProxyMode, RenderOptions};

use crate::commands::Io;
use crate::engine::Engine;
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
        // Written as it is produced: the ruleset of 10,000 Services is tens of megabytes that
        // need not be joined into one string first.
        let mut out = std::io::BufWriter::with_capacity(1 << 16, &mut *io.stdout);
        let fuel = engine.render_to(inputs, &options, &mut out)??;
        out.flush()?;
        drop(out);
        if verbose && let Some(fuel) = fuel {
            writeln!(io.stderr, "svclab: plugin fuel used: {fuel}")?;
        }
        Ok(0)
    }
}
