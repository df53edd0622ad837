//! The webhook's TLS: a rustls server configuration (ring provider, ALPN `h2` then `http/1.1`,
//! optional client-certificate authentication) read from PEM files, and reloaded when the files
//! change. cert-manager rotates a certificate by rewriting its Secret; the kubelet then swaps the
//! mounted files, so polling their metadata once a second catches every rotation (inotify would
//! miss the symlink swap of a Secret volume unless it watched the directory).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A TLS server configuration from PEM files.
#[derive(Debug, Clone)]
pub struct TlsConfig(Arc<rustls::ServerConfig>);

/// Why the certificate, key or client CA could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TlsError {
    /// A PEM file could not be read or parsed.
    Pem {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The certificate (or client CA) file holds no certificate.
    NoCertificate(PathBuf),
    /// rustls refused the configuration (for example a key that does not match the certificate).
    Config(String),
}

impl std::fmt::Display for TlsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TlsError::Pem { path, message } => {
                write!(f, "cannot read {:?}: {message}", path.display().to_string())
            }
            TlsError::NoCertificate(path) => {
                write!(f, "no certificate in {:?}", path.display().to_string())
            }
            TlsError::Config(message) => write!(f, "unusable certificate and key: {message}"),
        }
    }
}

impl std::error::Error for TlsError {}

/// The files a TLS configuration is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsFiles {
    pub(crate) cert: PathBuf,
    pub(crate) key: PathBuf,
    /// CA bundle for client certificates; `None` accepts clients without one.
    pub(crate) client_ca: Option<PathBuf>,
}

impl TlsConfig {
    /// Reads a PEM certificate chain and its private key (no client authentication).
    pub fn load(cert: &Path, key: &Path) -> Result<TlsConfig, TlsError> {
        TlsConfig::from_files(&TlsFiles {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            client_ca: None,
        })
    }

    fn from_files(files: &TlsFiles) -> Result<TlsConfig, TlsError> {
        let certs = certificates(&files.cert)?;
        let key = PrivateKeyDer::from_pem_file(&files.key).map_err(pem_error(&files.key))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|err| TlsError::Config(err.to_string()))?;
        let builder = match &files.client_ca {
            None => builder.with_no_client_auth(),
            Some(path) => {
                let mut roots = rustls::RootCertStore::empty();
                for ca in certificates(path)? {
                    roots.add(ca).map_err(|err| TlsError::Config(format!("{path:?}: {err}")))?;
                }
                // A client without a certificate still completes the handshake (the kubelet's
                // probes present none) and is refused at `/validate`; a certificate that is
                // presented must verify, or the handshake fails.
                let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider,
                )
                .allow_unauthenticated()
                .build()
                .map_err(|err| TlsError::Config(err.to_string()))?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let mut config = builder
            .with_single_cert(certs, key)
            .map_err(|err| TlsError::Config(err.to_string()))?;
        // kube-apiserver's webhook client offers both and prefers HTTP/2.
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(TlsConfig(Arc::new(config)))
    }
}

/// Every certificate of a PEM file (at least one).
fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(pem_error(path))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem_error(path))?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate(path.to_path_buf()));
    }
    Ok(certs)
}

fn pem_error(path: &Path) -> impl Fn(rustls::pki_types::pem::Error) -> TlsError {
    let path = path.to_path_buf();
    move |err| TlsError::Pem { path: path.clone(), message: err.to_string() }
}

/// What identifies one version of a file: its modification time and length (a rewrite that
/// keeps both within the file system's timestamp granularity is not seen; cert-manager's
/// rotations change the certificate's length or at worst land a second later).
type Stamp = Option<(SystemTime, u64)>;

fn stamps(files: &TlsFiles) -> Vec<Stamp> {
    let stamp = |path: &Path| {
        let metadata = std::fs::metadata(path).ok()?;
        Some((metadata.modified().ok()?, metadata.len()))
    };
    let mut out = vec![stamp(&files.cert), stamp(&files.key)];
    out.extend(files.client_ca.as_deref().map(stamp));
    out
}

/// The configuration in force, and the files it is reloaded from.
pub(super) struct Reloading {
    files: TlsFiles,
    current: RwLock<Arc<rustls::ServerConfig>>,
    /// The stamps last looked at (loaded, or refused).
    seen: Mutex<Vec<Stamp>>,
}

impl Reloading {
    /// Loads the files (a failure here stops the server from starting).
    pub(crate) fn load(files: TlsFiles) -> Result<Reloading, TlsError> {
        let seen = stamps(&files);
        let TlsConfig(config) = TlsConfig::from_files(&files)?;
        Ok(Reloading { files, current: RwLock::new(config), seen: Mutex::new(seen) })
    }

    /// Whether reviews need a verified client certificate (`--client-ca`).
    pub(super) fn requires_client_certificate(&self) -> bool {
        self.files.client_ca.is_some()
    }

    /// The acceptor for a new connection, with the configuration in force.
    pub(super) fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        let config = self.current.read().map_or_else(
            |poisoned| Arc::clone(&poisoned.into_inner()),
            |config| Arc::clone(&config),
        );
        tokio_rustls::TlsAcceptor::from(config)
    }

    /// Reloads the files if they changed since last looked at: `None` when unchanged, else
    /// whether the new files were taken (a refused set keeps the configuration in force, and
    /// is tried again when the files change again: a half-written rotation then completes).
    pub(super) fn reload_if_changed(&self) -> Option<Result<(), TlsError>> {
        let now = stamps(&self.files);
        {
            let mut seen = self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if *seen == now {
                return None;
            }
            *seen = now;
        }
        Some(TlsConfig::from_files(&self.files).map(|TlsConfig(config)| {
            let mut current =
                self.current.write().unwrap_or_else(std::sync::PoisonError::into_inner);
            *current = config;
        }))
    }
}
