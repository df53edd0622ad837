//! `svclab serve`: a validating admission webhook (`admission.k8s.io/v1` AdmissionReview at
//! `/validate`; `/healthz`, `/readyz` and Prometheus `/metrics` beside it) on tokio and hyper:
//! concurrent connections, keep-alive, HTTP/2 by ALPN (kube-apiserver's webhook client speaks
//! HTTP/2 when offered), per-connection timeouts, a body limit, certificates reloaded when their
//! files change, optional client-certificate authentication, and a graceful stop on SIGTERM.
//! `--policy` adds the operator's Service policy (403 `Forbidden` with causes, warnings, audit
//! annotations) and `--profile` the release and ranges that apiserver validation models; both
//! are read and checked once, before listening.
//!
//! [`route`] is the review behaviour as a pure function (tests drive it in-process on both
//! engines); `webhook.rs` adds the HTTP surface and metrics, `server.rs` the connections,
//! `tls.rs` the certificates, `metrics.rs` the Prometheus registry.

mod metrics;
mod server;
mod tls;
mod webhook;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use svclab_core::{AdmissionOptions, Input, Severity};

use crate::commands::Io;
use crate::engine::{Engine, EngineError};
use crate::input::read_inputs;

pub use tls::{TlsConfig, TlsError};
pub use webhook::{FailurePolicy, HttpResponse, route};

/// Arguments of `svclab serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeCommand {
    /// Address to listen on (port 0 picks a free port; the first line on standard error names it).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8443")]
    listen: String,
    /// PEM certificate chain: serve HTTPS (needs --tls-key). Reloaded when the file changes.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert. Reloaded when the file changes.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// PEM CA bundle: reviews need a client certificate signed by one of these CAs (kube-apiserver
    /// presents one when its admission control config file names a kubeconfig for the webhook);
    /// other certificates fail the handshake; /healthz, /readyz and /metrics need none (the
    /// kubelet's probes present none).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    client_ca: Option<PathBuf>,
    /// What to answer when the engine fails (out of fuel, deadline, trap): like the
    /// webhook's `failurePolicy`, `Fail` denies and `Ignore` allows.
    #[arg(long, value_enum, default_value_t = FailurePolicy::Fail)]
    failure_policy: FailurePolicy,
    /// The operator's Service policy: a ServicePolicy document or the bare settings, YAML or
    /// JSON. Settings errors refuse to start.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// The cluster apiserver validation models: a ClusterProfile document or its bare fields
    /// (kubernetesVersion, featureGates, serviceClusterIPRanges, serviceNodePortRange); the
    /// newest release with its default ranges when absent.
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Seconds in-flight reviews get to finish after SIGTERM (keep it under the pod's
    /// terminationGracePeriodSeconds, 30 by default).
    #[arg(long, value_name = "SECONDS", default_value_t = 20)]
    shutdown_grace: u64,
}

/// How many reviews run at once: one per core (each holds a core for its whole call; more would
/// only queue inside the blocking pool). The plugin's instance pool has as many slots.
pub(crate) fn concurrency() -> u32 {
    std::thread::available_parallelism()
        .map_or(1, |cores| u32::try_from(cores.get()).unwrap_or(u32::MAX))
        .clamp(1, 64)
}

/// A Service every profile accepts: the request [`admission_options`] answers once so that
/// settings that cannot apply to the profile (and a malformed profile) stop the start instead
/// of failing every request.
const PROBE_REVIEW: &str = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"svclab-serve-probe","kind":{"group":"","version":"v1","kind":"Service"},"operation":"CREATE","namespace":"default","object":{"apiVersion":"v1","kind":"Service","metadata":{"name":"probe"},"spec":{"ports":[{"port":80}]}}}}"#;

/// The admission options of `--policy FILE` and `--profile FILE`, refused when the settings
/// have errors (a typo must never switch a security rule off silently) or do not fit the
/// profile.
fn admission_options(
    engine: &Engine,
    policy: Option<Input>,
    profile: Option<Input>,
) -> anyhow::Result<AdmissionOptions> {
    if let Some(settings) = &policy {
        let errors: Vec<String> = engine
            .check_settings(settings)?
            .into_iter()
            .filter(|diagnostic| diagnostic.severity == Severity::Error)
            .map(|diagnostic| match diagnostic.source {
                Some(source) => format!(
                    "{}:{}:{}: {}",
                    source.file, source.line, source.column, diagnostic.message
                ),
                None => diagnostic.message,
            })
            .collect();
        anyhow::ensure!(
            errors.is_empty(),
            "the Service policy {:?} is invalid:\n{}",
            settings.name,
            errors.join("\n")
        );
    }
    let options = AdmissionOptions { policy, profile, stringly_typed: false, inventory: None };
    match engine.validate_admission(PROBE_REVIEW, &options) {
        Err(EngineError::BadInput(message)) => Err(anyhow::anyhow!("{message}")),
        Err(err) => Err(err.into()),
        Ok(_) => Ok(options),
    }
}

impl ServeCommand {
    pub(crate) fn run(self, engine: Engine, io: &mut Io<'_>) -> anyhow::Result<u8> {
        let mut read = |path: &Option<PathBuf>| -> anyhow::Result<Option<Input>> {
            match path {
                Some(path) => Ok(read_inputs(std::slice::from_ref(path), io.stdin)?.pop()),
                None => Ok(None),
            }
        };
        let (policy, profile) = (read(&self.policy)?, read(&self.profile)?);
        let options = admission_options(&engine, policy, profile)?;
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(Arc::new(tls::Reloading::load(tls::TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
                client_ca: self.client_ca.clone(),
            })?)),
            _ => None,
        };
        let slots = concurrency();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(usize::try_from(slots).unwrap_or(1))
            .thread_name("svclab-serve")
            .enable_all()
            .build()
            .context("cannot start the server runtime")?;
        let webhook = Arc::new(webhook::Webhook::new(engine, self.failure_policy, options, slots));
        let served: anyhow::Result<u8> = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind(&self.listen)
                .await
                .with_context(|| format!("cannot listen on {}", self.listen))?;
            let address = listener.local_addr()?;
            // Installed before the address is announced, so a SIGTERM right after it is caught.
            let stop = stop()?;
            let scheme = if tls.is_some() { "https" } else { "http" };
            writeln!(
                io.stderr,
                "svclab: serving AdmissionReview v1 on {scheme}://{address}/validate \
                 ({slots} reviews at a time)"
            )?;
            io.stderr.flush()?;
            let (log, mut lines) = tokio::sync::mpsc::unbounded_channel();
            let options = server::Options {
                tls,
                shutdown_grace: Duration::from_secs(self.shutdown_grace),
                log,
            };
            let mut served = std::pin::pin!(server::run(listener, webhook, options, stop));
            // The tasks log through a channel: only this (the main) thread writes to `io`.
            loop {
                tokio::select! {
                    outcome = &mut served => {
                        while let Ok(line) = lines.try_recv() {
                            writeln!(io.stderr, "svclab: {line}")?;
                        }
                        outcome?;
                        return Ok(0);
                    }
                    Some(line) = lines.recv() => {
                        writeln!(io.stderr, "svclab: {line}")?;
                        io.stderr.flush()?;
                    }
                }
            }
        });
        // A review still running past the grace period is abandoned, not waited for.
        runtime.shutdown_timeout(Duration::from_millis(100));
        served
    }
}

/// A future resolving on SIGTERM (what the kubelet sends a terminating pod) or SIGINT; the
/// handlers are installed at once.
fn stop() -> std::io::Result<impl Future<Output = &'static str>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = interrupt.recv() => "SIGINT",
        }
    })
}
