//! `svclab serve`: a validating admission webhook (`admission.k8s.io/v1` AdmissionReview at
//! `/validate`, liveness at `/healthz`) answering through the engine, one fresh plugin store
//! per request; HTTPS when given a certificate and key (kube-apiserver only calls webhooks over
//! TLS), plain HTTP otherwise. `--policy` adds the operator's Service policy (403 `Forbidden`
//! with causes, warnings, audit annotations) and `--profile` the release and ranges that
//! apiserver validation models; both are read and checked once, before listening.
//!
//! [`route`] is the whole HTTP behaviour as a pure function and [`serve_connection`] speaks
//! HTTP/1.1 over any byte stream, so tests drive both in-process; the command only accepts
//! connections (and wraps them in TLS).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use svclab_core::{AdmissionOptions, Input, Severity};

use crate::commands::Io;
use crate::engine::{Engine, EngineError};
use crate::input::read_inputs;

/// Largest request body accepted (kube-apiserver's own limit on an object is 3 MiB).
const MAX_BODY_BYTES: usize = 4 << 20;
/// Largest request head (request line and headers).
const MAX_HEAD_BYTES: usize = 64 << 10;
/// How long a connection may stall before it is dropped.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// Arguments of `svclab serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeCommand {
    /// Address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8443")]
    listen: String,
    /// PEM certificate chain: serve HTTPS (needs --tls-key).
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
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
}

/// `--failure-policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailurePolicy {
    /// Deny the request.
    #[value(name = "Fail")]
    Fail,
    /// Allow the request.
    #[value(name = "Ignore")]
    Ignore,
}

/// An HTTP answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// Body.
    pub body: String,
}

impl HttpResponse {
    fn text(status: u16, body: impl Into<String>) -> HttpResponse {
        HttpResponse { status, content_type: "text/plain; charset=utf-8", body: body.into() }
    }

    fn json(body: String) -> HttpResponse {
        HttpResponse { status: 200, content_type: "application/json", body }
    }
}

/// The webhook's routes: `POST /validate` (judged under `options`), `GET /healthz`.
pub fn route(
    engine: &Engine,
    policy: FailurePolicy,
    options: &AdmissionOptions,
    method: &str,
    path: &str,
    body: &str,
) -> HttpResponse {
    let path = path.split('?').next().unwrap_or(path);
    match (method, path) {
        ("GET", "/healthz") => HttpResponse::text(200, "ok\n"),
        ("POST", "/validate") => match engine.validate_admission(body, options) {
            Ok(outcome) => HttpResponse::json(outcome.output),
            Err(EngineError::BadInput(message)) => HttpResponse::text(400, format!("{message}\n")),
            Err(err) => failure_response(policy, body, &err),
        },
        (_, "/healthz" | "/validate") => HttpResponse::text(405, "method not allowed\n"),
        _ => HttpResponse::text(404, "not found\n"),
    }
}

/// The review answer when the engine itself failed: allowed or denied per the failure policy,
/// with the failure as a 500 `Status` (what kube-apiserver shows for a failing webhook).
fn failure_response(policy: FailurePolicy, body: &str, err: &EngineError) -> HttpResponse {
    let uid = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|review| {
            review.pointer("/request/uid").and_then(|uid| uid.as_str()).map(str::to_owned)
        })
        .unwrap_or_default();
    let allowed = policy == FailurePolicy::Ignore;
    let mut response = serde_json::json!({ "uid": uid, "allowed": allowed });
    if !allowed {
        response["status"] = serde_json::json!({
            "metadata": {},
            "status": "Failure",
            "message": format!("svclab policy failed: {err}"),
            "reason": "InternalError",
            "code": 500,
        });
    } else {
        response["warnings"] =
            serde_json::json!([format!("svclab policy failed and was ignored: {err}")]);
    }
    let review = serde_json::json!({
        "apiVersion": svclab_core::ADMISSION_API_VERSION,
        "kind": "AdmissionReview",
        "response": response,
    });
    HttpResponse::json(format!("{review}\n"))
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
    pub(crate) fn run(self, engine: &Engine, io: &mut Io<'_>) -> anyhow::Result<u8> {
        let read = |path: &PathBuf, stdin: &mut dyn Read| -> anyhow::Result<Option<Input>> {
            Ok(read_inputs(std::slice::from_ref(path), stdin)?.pop())
        };
        let policy = match &self.policy {
            Some(path) => read(path, io.stdin)?,
            None => None,
        };
        let profile = match &self.profile {
            Some(path) => read(path, io.stdin)?,
            None => None,
        };
        let options = admission_options(engine, policy, profile)?;
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(TlsConfig::load(cert, key)?),
            _ => None,
        };
        let listener = TcpListener::bind(&self.listen)
            .with_context(|| format!("cannot listen on {}", self.listen))?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        writeln!(
            io.stderr,
            "svclab: serving AdmissionReview v1 on {scheme}://{}/validate",
            self.listen
        )?;
        for stream in listener.incoming() {
            let Ok(mut tcp) = stream else { continue };
            // A stalled client must not hold the (sequential) server forever.
            let _ = tcp.set_read_timeout(Some(IO_TIMEOUT));
            let _ = tcp.set_write_timeout(Some(IO_TIMEOUT));
            let served = match &tls {
                Some(tls) => tls.serve(tcp, engine, self.failure_policy, &options),
                None => serve_connection(&mut tcp, engine, self.failure_policy, &options),
            };
            if let Err(err) = served {
                writeln!(io.stderr, "svclab: connection dropped: {err}")?;
            }
        }
        Err(anyhow::anyhow!("the listener stopped"))
    }
}

/// Reads one HTTP/1.1 request from `stream`, answers it through [`route`], and ends the
/// exchange (`Connection: close`).
pub fn serve_connection<S: Read + Write>(
    stream: &mut S,
    engine: &Engine,
    policy: FailurePolicy,
    options: &AdmissionOptions,
) -> std::io::Result<()> {
    let answer = match read_request(stream)? {
        Ok(request) => {
            route(engine, policy, options, &request.method, &request.target, &request.body)
        }
        Err(refusal) => refusal,
    };
    let reason = match answer.status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        411 => "Length Required",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        _ => "Error",
    };
    let head = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        answer.status,
        answer.content_type,
        answer.body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(answer.body.as_bytes())?;
    stream.flush()
}

/// One parsed request.
struct Request {
    method: String,
    target: String,
    body: String,
}

/// The request, or the answer refusing it; `Err` only for I/O failures.
fn read_request(stream: &mut impl Read) -> std::io::Result<Result<Request, HttpResponse>> {
    let mut buffer = Vec::new();
    let mut chunk = [0_u8; 8192];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break end;
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return Ok(Err(HttpResponse::text(431, "request head too large\n")));
        }
        let read = stream.read(&mut chunk)?;
        if read == 0 {
            return Ok(Err(HttpResponse::text(400, "incomplete request\n")));
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let Ok(head) = std::str::from_utf8(&buffer[..head_end]) else {
        return Ok(Err(HttpResponse::text(400, "request head is not UTF-8\n")));
    };
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let (Some(method), Some(target), Some(_version)) =
        (request_line.next(), request_line.next(), request_line.next())
    else {
        return Ok(Err(HttpResponse::text(400, "malformed request line\n")));
    };
    let mut content_length = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        if name.trim().eq_ignore_ascii_case("content-length") {
            match value.trim().parse::<usize>() {
                Ok(length) => content_length = Some(length),
                Err(_) => return Ok(Err(HttpResponse::text(400, "malformed Content-Length\n"))),
            }
        }
    }
    let length = match (content_length, method) {
        (Some(length), _) => length,
        (None, "POST") => return Ok(Err(HttpResponse::text(411, "Content-Length required\n"))),
        (None, _) => 0,
    };
    if length > MAX_BODY_BYTES {
        return Ok(Err(HttpResponse::text(413, "request body too large\n")));
    }
    let mut body = buffer[head_end + 4..].to_vec();
    if body.len() < length {
        let already = body.len();
        body.resize(length, 0);
        stream.read_exact(&mut body[already..])?;
    }
    body.truncate(length);
    let Ok(body) = String::from_utf8(body) else {
        return Ok(Err(HttpResponse::text(400, "request body is not UTF-8\n")));
    };
    Ok(Ok(Request { method: method.to_owned(), target: target.to_owned(), body }))
}

/// A TLS server configuration from PEM files.
#[derive(Debug, Clone)]
pub struct TlsConfig(Arc<rustls::ServerConfig>);

/// Why the certificate or key could not be used.
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
    /// The certificate file holds no certificate.
    NoCertificate(PathBuf),
    /// rustls refused the pair (for example a key that does not match the certificate).
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

impl TlsConfig {
    /// Reads a PEM certificate chain and its private key.
    pub fn load(cert: &Path, key: &Path) -> Result<TlsConfig, TlsError> {
        use rustls::pki_types::pem::PemObject as _;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};

        let pem_error = |path: &Path| {
            let path = path.to_path_buf();
            move |err: rustls::pki_types::pem::Error| TlsError::Pem {
                path: path.clone(),
                message: err.to_string(),
            }
        };
        let certs = CertificateDer::pem_file_iter(cert)
            .map_err(pem_error(cert))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(pem_error(cert))?;
        if certs.is_empty() {
            return Err(TlsError::NoCertificate(cert.to_path_buf()));
        }
        let key = PrivateKeyDer::from_pem_file(key).map_err(pem_error(key))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|err| TlsError::Config(err.to_string()))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|err| TlsError::Config(err.to_string()))?;
        Ok(TlsConfig(Arc::new(config)))
    }

    /// Runs one exchange over TLS on `tcp`.
    fn serve(
        &self,
        tcp: std::net::TcpStream,
        engine: &Engine,
        policy: FailurePolicy,
        options: &AdmissionOptions,
    ) -> std::io::Result<()> {
        let connection =
            rustls::ServerConnection::new(Arc::clone(&self.0)).map_err(std::io::Error::other)?;
        let mut stream = rustls::StreamOwned::new(connection, tcp);
        serve_connection(&mut stream, engine, policy, options)?;
        stream.conn.send_close_notify();
        stream.flush()
    }
}
