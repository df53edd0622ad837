//! A small HTTP/1.1 server that plays the Kubernetes API server behind a gateway: it answers
//! the discovery documents kubectl asks for, echoes created and updated objects, and records
//! every complete request that reached it.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A header on every response of the upstream: a response without it came from the gateway.
pub(crate) const UPSTREAM_HEADER: &str = "x-svclab-test-upstream";

/// One request as it reached the upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recorded {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) body: Vec<u8>,
}

/// The recording upstream; it serves until the process ends (its threads only block on its
/// own sockets).
pub(crate) struct Upstream {
    pub(crate) port: u16,
    seen: Arc<Mutex<Vec<Recorded>>>,
}

impl Upstream {
    pub(crate) fn start() -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the upstream");
        let port = listener.local_addr().expect("upstream address").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = Arc::clone(&log);
                std::thread::spawn(move || serve(stream, &log));
            }
        });
        Upstream { port, seen }
    }

    /// The requests recorded so far, minus readiness probes, and forgets them.
    pub(crate) fn take(&self) -> Vec<Recorded> {
        let mut seen = self.seen.lock().expect("upstream log");
        std::mem::take(&mut *seen).into_iter().filter(|r| r.path != "/healthz").collect()
    }
}

fn serve(stream: TcpStream, log: &Mutex<Vec<Recorded>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    let Ok(mut writer) = stream.try_clone() else { return };
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader) {
        let (status, body) = answer(&request);
        log.lock().expect("upstream log").push(request);
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{UPSTREAM_HEADER}: 1\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        if writer.write_all(head.as_bytes()).and_then(|()| writer.write_all(&body)).is_err() {
            return;
        }
    }
}

/// One request (Content-Length or chunked body); `None` at end of stream or on garbage.
pub(crate) fn read_request(reader: &mut impl BufRead) -> Option<Recorded> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let headers = read_headers(reader)?;
    let body = read_body(reader, &headers)?;
    Some(Recorded { method, path, body })
}

/// Header lines up to the blank line, names lower-cased.
pub(crate) fn read_headers(reader: &mut impl BufRead) -> Option<Vec<(String, String)>> {
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            return Some(headers);
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
}

/// The body a message's headers announce.
pub(crate) fn read_body(
    reader: &mut impl BufRead,
    headers: &[(String, String)],
) -> Option<Vec<u8>> {
    let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        let mut body = Vec::new();
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                return Some(body);
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }
    let length: usize = header("content-length").map_or(Some(0), |v| v.parse().ok())?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

/// What the API server would answer: discovery documents, the object back on create/update.
fn answer(request: &Recorded) -> (&'static str, Vec<u8>) {
    let path = request.path.split_once('?').map_or(request.path.as_str(), |(p, _)| p);
    let document = match (request.method.as_str(), path) {
        ("GET", "/healthz") => return ("200 OK", b"ok".to_vec()),
        ("GET", "/api") => API_VERSIONS,
        ("GET", "/apis") => API_GROUPS,
        ("GET", "/api/v1") => CORE_V1_RESOURCES,
        ("GET", "/apis/discovery.k8s.io/v1") => DISCOVERY_V1_RESOURCES,
        ("POST", _) => return ("201 Created", request.body.clone()),
        ("PUT" | "PATCH", _) => return ("200 OK", request.body.clone()),
        _ => NOT_FOUND,
    };
    let status = if document == NOT_FOUND { "404 Not Found" } else { "200 OK" };
    (status, document.as_bytes().to_vec())
}

const API_VERSIONS: &str = r#"{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1:6443"}]}"#;
const API_GROUPS: &str = r#"{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"discovery.k8s.io","versions":[{"groupVersion":"discovery.k8s.io/v1","version":"v1"}],"preferredVersion":{"groupVersion":"discovery.k8s.io/v1","version":"v1"}}]}"#;
const CORE_V1_RESOURCES: &str = r#"{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"services","singularName":"service","namespaced":true,"kind":"Service","verbs":["create","delete","get","list","patch","update","watch"],"shortNames":["svc"]},{"name":"services/status","singularName":"","namespaced":true,"kind":"Service","verbs":["get","patch","update"]},{"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","verbs":["get","list"]}]}"#;
const DISCOVERY_V1_RESOURCES: &str = r#"{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"discovery.k8s.io/v1","resources":[{"name":"endpointslices","singularName":"endpointslice","namespaced":true,"kind":"EndpointSlice","verbs":["create","delete","get","list","patch","update","watch"]}]}"#;
const NOT_FOUND: &str = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}"#;
