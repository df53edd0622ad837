//! `svclab oci check PATH --host HOST`: whether a host would take a published artifact (an OCI
//! image layout folder or `oci-archive` tar, or Traefik's plugin folder), and if not, every
//! reason it would give (`crate::oci`). Exit 0 when accepted, 1 when refused.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::commands::{EXIT_REPORT_ERRORS, Io};
use crate::oci::{self, Host};

/// Arguments of `svclab oci`.
#[derive(Debug, Args)]
pub(crate) struct OciCommand {
    #[command(subcommand)]
    action: OciAction,
}

#[derive(Debug, Subcommand)]
enum OciAction {
    /// Apply a host's acceptance rules (layer count, media types, plugin.wasm in the last
    /// layer, size, annotations, the module's own shape) and print what it would refuse.
    Check {
        /// An OCI image layout folder, an oci-archive tar, or a Traefik plugin folder.
        #[arg(value_name = "LAYOUT")]
        path: PathBuf,
        /// The host that would pull it.
        #[arg(long, value_enum)]
        host: Host,
    },
}

impl OciCommand {
    pub(crate) fn run(self, io: &mut Io<'_>) -> anyhow::Result<u8> {
        let OciAction::Check { path, host } = self.action;
        let name = clap::ValueEnum::to_possible_value(&host)
            .map_or_else(String::new, |value| value.get_name().to_owned());
        let artifact = oci::read(&path)?;
        let verdict = oci::check(host, &artifact);
        let digest = match &artifact {
            oci::Artifact::Image(image) => format!("manifest {}, ", image.manifest_digest),
            oci::Artifact::TraefikPlugin { .. } => String::new(),
        };
        if verdict.refusals.is_empty() {
            writeln!(
                io.stdout,
                "{}: {name} accepts it ({digest}{})",
                path.display(),
                verdict.summary
            )?;
            return Ok(0);
        }
        writeln!(io.stdout, "{}: {name} refuses it:", path.display())?;
        for reason in &verdict.refusals {
            writeln!(io.stdout, "  - {}", reason.trim_end().replace('\n', "\n    "))?;
        }
        Ok(EXIT_REPORT_ERRORS)
    }
}
