//! `svclab oci check REF|LAYOUT --host HOST`: whether a host would take a published artifact
//! (an image in a registry, an OCI image layout folder or `oci-archive` tar, or Traefik's plugin
//! folder), and if not, every reason it would give (`crate::oci`). Exit 0 when accepted, 1 when
//! refused.

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
        /// An image in a registry (`registry://`, `oci://`, `docker://` or bare
        /// `host/name:tag` or `@sha256:…`), or an OCI image layout folder, an oci-archive tar,
        /// or a Traefik plugin folder. A file or folder of that name wins.
        #[arg(value_name = "REF|LAYOUT")]
        target: String,
        /// The host that would pull it.
        #[arg(long, value_enum)]
        host: Host,
        /// PEM certificates to trust besides the system's, for the registry.
        #[arg(long, value_name = "FILE")]
        ca_file: Option<PathBuf>,
        /// Talk to the registry over plain HTTP (a local registry without TLS).
        #[arg(long)]
        plain_http: bool,
        /// Registry credentials as skopeo and docker keep them (default: $REGISTRY_AUTH_FILE,
        /// $XDG_RUNTIME_DIR/containers/auth.json, $DOCKER_CONFIG/config.json,
        /// ~/.docker/config.json).
        #[arg(long, value_name = "FILE")]
        authfile: Option<PathBuf>,
    },
}

impl OciCommand {
    pub(crate) fn run(self, io: &mut Io<'_>) -> anyhow::Result<u8> {
        let OciAction::Check { target, host, ca_file, plain_http, authfile } = self.action;
        let name = clap::ValueEnum::to_possible_value(&host)
            .map_or_else(String::new, |value| value.get_name().to_owned());
        let path = PathBuf::from(&target);
        let artifact = match oci::Reference::parse(&target) {
            Some(reference) if !path.exists() => {
                oci::pull(&reference, &oci::PullOptions { ca_file, plain_http, authfile })?
            }
            _ => oci::read(&path)?,
        };
        let verdict = oci::check(host, &artifact);
        let digest = match &artifact {
            oci::Artifact::Image(image) => format!("manifest {}, ", image.manifest_digest),
            oci::Artifact::TraefikPlugin { .. } => String::new(),
        };
        if verdict.refusals.is_empty() {
            writeln!(io.stdout, "{target}: {name} accepts it ({digest}{})", verdict.summary)?;
            return Ok(0);
        }
        writeln!(io.stdout, "{target}: {name} refuses it:")?;
        for reason in &verdict.refusals {
            writeln!(io.stdout, "  - {}", reason.trim_end().replace('\n', "\n    "))?;
        }
        Ok(EXIT_REPORT_ERRORS)
    }
}
