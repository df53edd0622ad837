//! `svclab trace`: a packet walked through the rules kube-proxy programs (or a pasted
//! `iptables-save` dump): every rule it matches, the DNAT choices, masquerade, the verdict.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use svclab_core::{TraceReport, TraceRequest};

use crate::commands::Io;
use crate::engine::Engine;
use crate::input::read_inputs;

/// Arguments of `svclab trace`.
#[derive(Debug, Args)]
pub(crate) struct TraceCommand {
    /// Scenario files (multi-document YAML or JSON); `-` or nothing reads standard input.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Source address.
    #[arg(long, value_name = "IP")]
    src: String,
    /// Destination address.
    #[arg(long, value_name = "IP")]
    dst: String,
    /// Destination port.
    #[arg(long, value_name = "N")]
    dport: u16,
    /// Protocol.
    #[arg(long, value_enum, default_value_t = ProtocolArg::Tcp)]
    protocol: ProtocolArg,
    /// The node the packet arrives at (default: hostnameOverride, else the first Node).
    #[arg(long, value_name = "NAME")]
    node: Option<String>,
    /// The interface the packet arrives on (for `-i` matches such as BridgeInterface).
    #[arg(long, value_name = "NAME")]
    in_interface: Option<String>,
    /// Trace format.
    #[arg(long, short, value_enum, default_value_t = TraceFormat::Text)]
    output: TraceFormat,
}

/// `--protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ProtocolArg {
    /// TCP.
    Tcp,
    /// UDP.
    Udp,
    /// SCTP.
    Sctp,
}

/// How the trace is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TraceFormat {
    /// One line per outcome, one per matched rule.
    Text,
    /// The trace report as JSON.
    Json,
}

impl TraceCommand {
    pub(crate) fn run(self, engine: &Engine, io: &mut Io<'_>, verbose: bool) -> anyhow::Result<u8> {
        let inputs = read_inputs(&self.files, io.stdin)?;
        let request = TraceRequest {
            src: self.src,
            dst: self.dst,
            dport: self.dport,
            protocol: match self.protocol {
                ProtocolArg::Tcp => "tcp",
                ProtocolArg::Udp => "udp",
                ProtocolArg::Sctp => "sctp",
            }
            .to_owned(),
            node: self.node,
            in_interface: self.in_interface,
        };
        let outcome = engine.trace(&inputs, &request)?;
        if verbose {
            outcome.report_fuel(io.stderr)?;
        }
        let text = match self.output {
            TraceFormat::Json => outcome.output,
            TraceFormat::Text => {
                let report: TraceReport = serde_json::from_str(&outcome.output)
                    .context("the engine returned a malformed trace")?;
                report.to_text()
            }
        };
        io.stdout.write_all(text.as_bytes())?;
        Ok(0)
    }
}
