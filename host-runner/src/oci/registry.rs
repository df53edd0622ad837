//! An image pulled from a registry as a Wasm host pulls it, for `svclab oci check REF`: the
//! manifest by tag or digest, then the config and every layer by digest (OCI distribution-spec
//! `spec.md`, "Pulling manifests" and "Pulling blobs"), over HTTPS, with the registry's
//! token or basic authentication when it asks for it (distribution `docs/spec/auth/token.md`:
//! a 401 whose `WWW-Authenticate: Bearer realm=…,service=…,scope=…` names where to get a
//! token for `repository:<name>:pull`). What comes back goes through the same reading as a
//! layout's blobs (`super::manifest_image`): every blob is checked against its digest.
//!
//! References are written as the hosts write them: `registry://` (Kubewarden's
//! ClusterAdmissionPolicy `module`), `oci://` (Istio's WasmPlugin `url`), `docker://`
//! (skopeo), or bare; a name without a registry host is Docker Hub's, as in
//! `distribution/reference` `ParseNormalizedNamed` (`docker.io/library/<name>`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Empty, Limited};
use hyper::StatusCode;
use hyper::header::{self, HeaderValue};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use url::Url;

use super::{Artifact, Descriptor, LayoutError, manifest_image, sha256_digest};

/// The manifest types a Wasm host asks for (oci-client's and go-containerregistry's defaults).
const ACCEPT: &str = "application/vnd.oci.image.manifest.v1+json, \
                      application/vnd.docker.distribution.manifest.v2+json, \
                      application/vnd.oci.image.index.v1+json, \
                      application/vnd.docker.distribution.manifest.list.v2+json";
const INDEX_TYPES: &[&str] = &[
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
];
/// The largest manifest a registry stores (distribution's `maxManifestBodySize`, 4 MiB).
const MAX_MANIFEST: usize = 4 << 20;
/// The most blob bytes read for one image: Envoy Gateway's `maxWasmSize` (256 MiB), the most any
/// of the hosts takes of a module, and as much again for the rest of the image.
const MAX_BLOBS: u64 = 512 << 20;
/// How long one request may take, connecting included.
const TIMEOUT: Duration = Duration::from_secs(60);
/// Redirects followed per request (registries send blobs to object storage by 307).
const MAX_REDIRECTS: usize = 5;

/// An image reference: the registry to talk to, the repository, and a tag or digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reference {
    /// `host[:port]` of the registry's API (Docker Hub's is `registry-1.docker.io`).
    pub(crate) registry: String,
    pub(crate) repository: String,
    /// A tag, or a digest `sha256:…`.
    pub(crate) reference: String,
}

impl Reference {
    /// Reads `text` as an image reference, or `None` when it is not one. Without a scheme, the
    /// first path component must look like a registry host (a dot, a port or `localhost`),
    /// so that a mistyped file name is not sent to Docker Hub.
    pub(crate) fn parse(text: &str) -> Option<Reference> {
        let (schemed, rest) = ["registry://", "oci://", "docker://"]
            .iter()
            .find_map(|scheme| text.strip_prefix(scheme).map(|rest| (true, rest)))
            .unwrap_or((false, text));
        let (name, digest) = match rest.split_once('@') {
            Some((name, digest)) => (name, Some(digest)),
            None => (rest, None),
        };
        let (name, tag) = match name.rsplit_once(':') {
            Some((name, tag)) if !tag.contains('/') => (name, Some(tag)),
            _ => (name, None),
        };
        let (first, path) = name.split_once('/').unwrap_or(("", name));
        let is_host = first.contains('.') || first.contains(':') || first == "localhost";
        if !schemed && !is_host {
            return None;
        }
        let (registry, repository) = match (is_host, first) {
            (true, "docker.io" | "index.docker.io") => {
                ("registry-1.docker.io".to_owned(), hub_repository(path))
            }
            (true, _) => (first.to_owned(), path.to_owned()),
            (false, _) => ("registry-1.docker.io".to_owned(), hub_repository(name)),
        };
        let repository_ok = !repository.is_empty()
            && repository.split('/').all(|part| {
                !part.is_empty()
                    && part.bytes().all(|b| {
                        b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b)
                    })
            });
        let reference = match (digest, tag) {
            (Some(digest), _) => digest.to_owned(),
            (None, Some(tag)) => tag.to_owned(),
            (None, None) => "latest".to_owned(),
        };
        let reference_ok = match digest {
            Some(digest) => digest
                .strip_prefix("sha256:")
                .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())),
            None => {
                !reference.is_empty()
                    && reference.len() <= 128
                    && reference.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
            }
        };
        (repository_ok && reference_ok).then_some(Reference { registry, repository, reference })
    }
}

/// Docker Hub's official images live under `library/`.
fn hub_repository(path: &str) -> String {
    if path.contains('/') { path.to_owned() } else { format!("library/{path}") }
}

/// How to reach the registry.
#[derive(Debug, Default)]
pub(crate) struct PullOptions {
    /// PEM certificates trusted besides the system's (`SSL_CERT_FILE`, else Debian's and
    /// Fedora's bundles).
    pub(crate) ca_file: Option<PathBuf>,
    /// Speak plain HTTP (a registry on localhost without TLS).
    pub(crate) plain_http: bool,
    /// Credentials as skopeo and docker keep them (`auths.<host>.auth`, base64 `user:password`);
    /// by default `$REGISTRY_AUTH_FILE`, `$XDG_RUNTIME_DIR/containers/auth.json`,
    /// `$DOCKER_CONFIG/config.json`, `~/.docker/config.json`, the first that exists.
    pub(crate) authfile: Option<PathBuf>,
}

/// Pulls the image `reference` names: its manifest (for an index, the linux/amd64 image or
/// its only one) and every blob, each checked against its digest.
pub(crate) fn pull(reference: &Reference, options: &PullOptions) -> Result<Artifact, LayoutError> {
    let runtime =
        tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|err| LayoutError::Invalid(format!("cannot start the HTTP client: {err}")))?;
    let mut client = Client::new(reference, options)?;
    let (mut entry, mut manifest) = runtime.block_on(client.manifest(&reference.reference))?;
    if reference.reference.starts_with("sha256:") && entry.digest != reference.reference {
        return Err(LayoutError::Invalid(format!(
            "the registry served a manifest of digest {} for {}",
            entry.digest, reference.reference
        )));
    }
    if INDEX_TYPES.contains(&entry.media_type.as_str()) {
        let digest = pick_from_index(&manifest)?;
        (entry, manifest) = runtime.block_on(client.manifest(&digest))?;
        if entry.digest != digest {
            return Err(LayoutError::Invalid(format!(
                "the registry served a manifest of digest {} for {digest}",
                entry.digest
            )));
        }
    }
    let manifest_digest = entry.digest.clone();
    // What the blobs take together: a hostile manifest may name many large ones.
    let mut pulled = 0u64;
    manifest_image(entry, |descriptor: &Descriptor| {
        if descriptor.digest == manifest_digest {
            return Ok(manifest.clone());
        }
        pulled = pulled.saturating_add(descriptor.size);
        if pulled > MAX_BLOBS {
            return Err(LayoutError::Invalid(format!(
                "the image's blobs come to more than {MAX_BLOBS} bytes, more than any host reads"
            )));
        }
        runtime.block_on(client.blob(descriptor))
    })
}

/// The image an index names for linux/amd64, or its only image.
fn pick_from_index(index: &[u8]) -> Result<String, LayoutError> {
    let index: Value = serde_json::from_slice(index)
        .map_err(|err| LayoutError::Invalid(format!("the image index is not JSON: {err}")))?;
    let manifests = index["manifests"].as_array().map_or(&[][..], Vec::as_slice);
    let chosen = match manifests {
        [only] => Some(only),
        _ => manifests
            .iter()
            .find(|m| m["platform"]["os"] == "linux" && m["platform"]["architecture"] == "amd64"),
    };
    chosen.and_then(|m| m["digest"].as_str()).map(str::to_owned).ok_or_else(|| {
        LayoutError::Invalid(format!(
            "the image index names {} images and none for linux/amd64",
            manifests.len()
        ))
    })
}

/// One registry's HTTP client and the authorization it earned.
struct Client {
    base: Url,
    repository: String,
    tls: TlsConnector,
    credentials: Option<String>,
    /// The `Authorization` header the registry accepted or asked for.
    authorization: Option<HeaderValue>,
}

/// What a request got back.
struct Answer {
    status: StatusCode,
    headers: hyper::HeaderMap,
    body: Vec<u8>,
}

impl Client {
    fn new(reference: &Reference, options: &PullOptions) -> Result<Client, LayoutError> {
        let scheme = if options.plain_http { "http" } else { "https" };
        let base = Url::parse(&format!("{scheme}://{}/", reference.registry)).map_err(|err| {
            LayoutError::Invalid(format!("{} is not a registry host: {err}", reference.registry))
        })?;
        Ok(Client {
            base,
            repository: reference.repository.clone(),
            tls: connector(options.ca_file.as_deref())?,
            credentials: credentials(options.authfile.as_deref(), &reference.registry)?,
            authorization: None,
        })
    }

    /// The manifest `reference` names: its descriptor (type from `Content-Type`, digest of
    /// the bytes served) and bytes.
    async fn manifest(&mut self, reference: &str) -> Result<(Descriptor, Vec<u8>), LayoutError> {
        let url = self.url(&format!("manifests/{reference}"))?;
        let answer = self.get(&url, ACCEPT, MAX_MANIFEST as u64).await?;
        let media_type = answer
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .map(|value| value.split(';').next().unwrap_or_default().trim().to_owned())
            .unwrap_or_default();
        let descriptor = Descriptor {
            media_type,
            digest: sha256_digest(&answer.body),
            size: answer.body.len() as u64,
        };
        Ok((descriptor, answer.body))
    }

    async fn blob(&mut self, descriptor: &Descriptor) -> Result<Vec<u8>, LayoutError> {
        let url = self.url(&format!("blobs/{}", descriptor.digest))?;
        // A blob longer than its descriptor says is refused by the digest check after; reading
        // one byte more is enough to see it.
        Ok(self.get(&url, "*/*", descriptor.size + 1).await?.body)
    }

    fn url(&self, tail: &str) -> Result<Url, LayoutError> {
        self.base
            .join(&format!("v2/{}/{tail}", self.repository))
            .map_err(|err| LayoutError::Invalid(format!("cannot form the URL of {tail}: {err}")))
    }

    /// GETs `url` from the registry: authenticates once when it answers 401, follows
    /// redirects (without the registry's authorization when they leave its host).
    async fn get(&mut self, url: &Url, accept: &str, limit: u64) -> Result<Answer, LayoutError> {
        let mut url = url.clone();
        let mut authenticated = false;
        for _ in 0..=MAX_REDIRECTS {
            let same_host = url.host_str() == self.base.host_str()
                && url.port_or_known_default() == self.base.port_or_known_default();
            let authorization = if same_host { self.authorization.as_ref() } else { None };
            let answer = self.send(&url, accept, authorization, limit).await?;
            if answer.status == StatusCode::UNAUTHORIZED && same_host && !authenticated {
                authenticated = true;
                self.authenticate(&url, &answer).await?;
                continue;
            }
            if answer.status.is_redirection() {
                let location = answer
                    .headers
                    .get(header::LOCATION)
                    .and_then(|value| value.to_str().ok())
                    .and_then(|location| url.join(location).ok());
                match location {
                    Some(next) => url = next,
                    None => return Err(fetch_error(&url, "a redirect without a Location")),
                }
                continue;
            }
            if !answer.status.is_success() {
                return Err(fetch_error(&url, &refusal(&answer)));
            }
            return Ok(answer);
        }
        Err(fetch_error(&url, &format!("more than {MAX_REDIRECTS} redirects")))
    }

    /// Earns an `Authorization` for pulling from the repository, as the 401 asks: a bearer
    /// token from the realm it names, or the stored credentials as basic authentication.
    async fn authenticate(&mut self, url: &Url, answer: &Answer) -> Result<(), LayoutError> {
        let challenge = answer
            .headers
            .get(header::WWW_AUTHENTICATE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        let Some((scheme, params)) = parse_challenge(challenge) else {
            return Err(fetch_error(url, &refusal(answer)));
        };
        let basic = self.credentials.as_ref().map(|c| basic_authorization(c));
        if scheme.eq_ignore_ascii_case("basic") {
            let Some(basic) = basic else {
                return Err(fetch_error(
                    url,
                    &format!(
                        "{}; the registry asks for a user and password and the authfile has \
                         none for {}",
                        refusal(answer),
                        self.base.host_str().unwrap_or_default()
                    ),
                ));
            };
            self.authorization = Some(basic);
            return Ok(());
        }
        let param = |name: &str| params.iter().find(|(key, _)| key == name).map(|(_, v)| v);
        let Some(realm) = param("realm").filter(|_| scheme.eq_ignore_ascii_case("bearer")) else {
            return Err(fetch_error(url, &format!("unsupported challenge {challenge:?}")));
        };
        let mut token_url = Url::parse(realm)
            .map_err(|err| fetch_error(url, &format!("token realm {realm:?}: {err}")))?;
        {
            let mut query = token_url.query_pairs_mut();
            if let Some(service) = param("service") {
                query.append_pair("service", service);
            }
            let scope = format!("repository:{}:pull", self.repository);
            query.append_pair("scope", param("scope").map_or(&scope, |s| s));
        }
        let answer = self.send(&token_url, "application/json", basic.as_ref(), 1 << 20).await?;
        if !answer.status.is_success() {
            return Err(fetch_error(&token_url, &refusal(&answer)));
        }
        let body: Value = serde_json::from_slice(&answer.body).unwrap_or_default();
        let token = body["token"].as_str().or_else(|| body["access_token"].as_str());
        let header = token.and_then(|t| HeaderValue::from_str(&format!("Bearer {t}")).ok());
        match header {
            Some(header) => {
                self.authorization = Some(header);
                Ok(())
            }
            None => Err(fetch_error(&token_url, "the answer holds no token")),
        }
    }

    /// One GET on a fresh connection (HTTP/1.1; TLS for `https`).
    async fn send(
        &self,
        url: &Url,
        accept: &str,
        authorization: Option<&HeaderValue>,
        limit: u64,
    ) -> Result<Answer, LayoutError> {
        let request = async {
            let host = url.host_str().ok_or("no host")?.to_owned();
            let port = url.port_or_known_default().ok_or("no port")?;
            let tcp = TcpStream::connect((host.trim_matches(['[', ']']), port))
                .await
                .map_err(|err| format!("cannot connect: {err}"))?;
            // HTTP/1.1 sends the path, and the host apart.
            let authority = match url.port() {
                Some(port) => format!("{}:{port}", host),
                None => host.clone(),
            };
            let mut builder = hyper::Request::get(&url[url::Position::BeforePath..])
                .header(header::HOST, authority)
                .header(header::ACCEPT, accept)
                .header(header::USER_AGENT, concat!("svclab/", env!("CARGO_PKG_VERSION")));
            if let Some(authorization) = authorization {
                builder = builder.header(header::AUTHORIZATION, authorization);
            }
            let request = builder
                .body(Empty::<Bytes>::new())
                .map_err(|err| format!("cannot form the request: {err}"))?;
            let response = if url.scheme() == "https" {
                let name = ServerName::try_from(host.trim_matches(['[', ']']).to_owned())
                    .map_err(|err| format!("{host} is no TLS server name: {err}"))?;
                let tls = self.tls.connect(name, tcp).await.map_err(|err| format!("TLS: {err}"))?;
                exchange(TokioIo::new(tls), request).await?
            } else {
                exchange(TokioIo::new(tcp), request).await?
            };
            let (parts, body) = response.into_parts();
            let body = Limited::new(body, usize::try_from(limit).unwrap_or(usize::MAX))
                .collect()
                .await
                .map_err(|err| format!("reading the body (at most {limit} bytes): {err}"))?
                .to_bytes()
                .to_vec();
            Ok::<_, String>(Answer { status: parts.status, headers: parts.headers, body })
        };
        match tokio::time::timeout(TIMEOUT, request).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(reason)) => Err(fetch_error(url, &reason)),
            Err(_) => Err(fetch_error(url, &format!("no answer within {}s", TIMEOUT.as_secs()))),
        }
    }
}

async fn exchange<S>(
    io: TokioIo<S>,
    request: hyper::Request<Empty<Bytes>>,
) -> Result<hyper::Response<hyper::body::Incoming>, String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(io).await.map_err(|err| format!("HTTP: {err}"))?;
    tokio::spawn(connection);
    sender.send_request(request).await.map_err(|err| format!("HTTP: {err}"))
}

fn fetch_error(url: &Url, reason: &str) -> LayoutError {
    let mut shown = url.clone();
    shown.set_query(None);
    LayoutError::Registry { url: shown.to_string(), reason: reason.to_owned() }
}

/// The status and the registry's own error codes (distribution-spec "Error Codes":
/// `{"errors":[{"code","message"}]}`), e.g. `404 Not Found: MANIFEST_UNKNOWN manifest unknown`.
fn refusal(answer: &Answer) -> String {
    let body: Value = serde_json::from_slice(&answer.body).unwrap_or_default();
    let codes: Vec<String> = body["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            format!("{} {}", e["code"].as_str().unwrap_or("?"), e["message"].as_str().unwrap_or(""))
        })
        .collect();
    if codes.is_empty() {
        answer.status.to_string()
    } else {
        format!("{}: {}", answer.status, codes.join("; "))
    }
}

/// `Bearer realm="…",service="…"` as (scheme, [(name, value)]) (RFC 7235 `challenge`).
fn parse_challenge(text: &str) -> Option<(&str, Vec<(String, String)>)> {
    let (scheme, mut rest) = text.trim().split_once(' ').unwrap_or((text.trim(), ""));
    if scheme.is_empty() {
        return None;
    }
    let mut params = Vec::new();
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        let Some((name, after)) = rest.split_once('=') else { break };
        let (value, after) = match after.strip_prefix('"') {
            Some(quoted) => {
                let mut value = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((at, c)) = chars.next() {
                    match c {
                        '\\' => value.extend(chars.next().map(|(_, c)| c)),
                        '"' => {
                            end = at + 1;
                            break;
                        }
                        c => value.push(c),
                    }
                }
                (value, &quoted[end..])
            }
            None => {
                let end = after.find(',').unwrap_or(after.len());
                (after[..end].trim().to_owned(), &after[end..])
            }
        };
        params.push((name.trim().to_ascii_lowercase(), value));
        rest = after;
    }
    Some((scheme, params))
}

fn basic_authorization(credentials: &str) -> HeaderValue {
    let encoded = data_encoding::BASE64.encode(credentials.as_bytes());
    HeaderValue::from_str(&format!("Basic {encoded}")).unwrap_or(HeaderValue::from_static(""))
}

/// `user:password` for `registry` from the authfile, if it has them.
fn credentials(authfile: Option<&Path>, registry: &str) -> Result<Option<String>, LayoutError> {
    let env = |name: &str| std::env::var_os(name).map(PathBuf::from);
    let file = match authfile {
        Some(file) => Some(file.to_owned()),
        None => [
            env("REGISTRY_AUTH_FILE"),
            env("XDG_RUNTIME_DIR").map(|dir| dir.join("containers/auth.json")),
            env("DOCKER_CONFIG").map(|dir| dir.join("config.json")),
            env("HOME").map(|home| home.join(".docker/config.json")),
        ]
        .into_iter()
        .flatten()
        .find(|file| file.is_file()),
    };
    let Some(file) = file else { return Ok(None) };
    let text =
        std::fs::read(&file).map_err(|source| LayoutError::Read { path: file.clone(), source })?;
    let config: Value = serde_json::from_slice(&text).map_err(|err| {
        LayoutError::Invalid(format!("{} is not an authfile (JSON): {err}", file.display()))
    })?;
    let hub = registry == "registry-1.docker.io";
    let entry = config["auths"].as_object().into_iter().flatten().find(|(key, _)| {
        let host = key.trim_start_matches("https://").trim_start_matches("http://");
        let host = host.split('/').next().unwrap_or_default();
        host == registry || (hub && matches!(host, "docker.io" | "index.docker.io"))
    });
    let Some(auth) = entry.and_then(|(_, value)| value["auth"].as_str()) else { return Ok(None) };
    let decoded = data_encoding::BASE64
        .decode(auth.as_bytes())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .filter(|text| text.contains(':'));
    match decoded {
        Some(credentials) => Ok(Some(credentials)),
        None => Err(LayoutError::Invalid(format!(
            "{}: the auth of {registry} is not base64 of user:password",
            file.display()
        ))),
    }
}

/// A TLS client trusting the system's certificates and those of `ca_file`.
fn connector(ca_file: Option<&Path>) -> Result<TlsConnector, LayoutError> {
    let mut roots = rustls::RootCertStore::empty();
    let system = std::env::var_os("SSL_CERT_FILE").map(PathBuf::from).into_iter().chain(
        ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"]
            .map(PathBuf::from),
    );
    if let Some(bundle) = system.into_iter().find(|file| file.is_file()) {
        // One unreadable certificate in the system's bundle does not stop the rest.
        for cert in CertificateDer::pem_file_iter(&bundle).into_iter().flatten().flatten() {
            let _ = roots.add(cert);
        }
    }
    if let Some(file) = ca_file {
        let certs = CertificateDer::pem_file_iter(file)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|err| {
                LayoutError::Invalid(format!("{} is not PEM certificates: {err}", file.display()))
            })?;
        for cert in certs {
            roots.add(cert).map_err(|err| {
                LayoutError::Invalid(format!(
                    "{}: a certificate rustls refuses: {err}",
                    file.display()
                ))
            })?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|err| LayoutError::Invalid(format!("TLS: {err}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(TlsConnector::from(Arc::new(config)))
}

#[cfg(test)]
mod tests {
    use super::{Reference, parse_challenge};

    #[track_caller]
    fn check(text: &str, expected: Option<(&str, &str, &str)>) {
        let parsed = Reference::parse(text);
        let parsed = parsed.as_ref().map(|r| (&*r.registry, &*r.repository, &*r.reference));
        assert_eq!(parsed, expected, "{text}");
    }

    #[test]
    fn references_as_hosts_write_them() {
        let digest = format!("sha256:{}", "a".repeat(64));
        check("registry://ghcr.io/svclab/policy:v1", Some(("ghcr.io", "svclab/policy", "v1")));
        check(
            "oci://127.0.0.1:5000/svclab/filter",
            Some(("127.0.0.1:5000", "svclab/filter", "latest")),
        );
        check(
            &format!("localhost/svclab/webhook@{digest}"),
            Some(("localhost", "svclab/webhook", &digest)),
        );
        check("docker://busybox", Some(("registry-1.docker.io", "library/busybox", "latest")));
        check("docker.io/busybox:1", Some(("registry-1.docker.io", "library/busybox", "1")));
        // Not references: a file name, upper case, a short digest.
        check("target/dist/kubewarden", None);
        check("ghcr.io/Svclab/x", None);
        check("ghcr.io/svclab/x@sha256:abc", None);
    }

    #[test]
    fn challenges() {
        let (scheme, params) = parse_challenge(
            r#"Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull""#,
        )
        .expect("a challenge");
        assert_eq!(scheme, "Bearer");
        let value = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        assert_eq!(value("realm"), Some("https://auth.example/token"));
        assert_eq!(value("service"), Some("registry.example"));
        assert_eq!(value("scope"), Some("repository:a/b:pull"));
        let (scheme, params) = parse_challenge(r#"Basic realm="Registry Realm""#).expect("basic");
        assert_eq!((scheme, params[0].1.as_str()), ("Basic", "Registry Realm"));
    }
}
