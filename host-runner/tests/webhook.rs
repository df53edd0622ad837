//! `svclab serve` over real sockets: the binary runs as a process (so SIGTERM is real), driven
//! by hyper's client over tokio-rustls, speaking HTTP/1.1 or HTTP/2 as ALPN decides. Every test
//! is bounded: a handful of connections, a few hundred requests, a few seconds.

use std::io::BufRead as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::{Method, Request, StatusCode, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// A test certificate or key under `tests/data/tls/`.
fn data(name: &str) -> PathBuf {
    // Where cargo runs the test from, else where it was built.
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest_dir.join("tests/data/tls").join(name)
}

/// A running `svclab serve`, killed when dropped.
struct Server {
    child: Child,
    address: SocketAddr,
    /// Standard error after the first line.
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts `svclab serve --listen 127.0.0.1:0 ARGS` with server certificate `a` from `dir`
    /// (the test's own copy, so it can be rotated), and waits for its address.
    fn start(dir: &Path, args: &[&str]) -> Server {
        let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("svclab-plugin-cache");
        let mut child = Command::new(env!("CARGO_BIN_EXE_svclab"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .arg("--tls-cert")
            .arg(dir.join("tls.crt"))
            .arg("--tls-key")
            .arg(dir.join("tls.key"))
            .args(args)
            .arg("--cache-dir")
            .arg(cache)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("svclab starts");
        let mut lines = std::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        let address = first
            .split_once("https://")
            .and_then(|(_, rest)| rest.split_once("/validate"))
            .and_then(|(address, _)| address.parse().ok())
            .unwrap_or_else(|| panic!("no address in the first line: {first:?}"));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                sink.lock().expect("stderr lock").push(line);
            }
        });
        Server { child, address, stderr }
    }

    /// Sends SIGTERM (what the kubelet sends a terminating pod).
    fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    /// Waits (at most 30 s) for the process to exit; its status and standard error.
    fn wait(mut self) -> (std::process::ExitStatus, String) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                std::thread::sleep(Duration::from_millis(100)); // the reader thread catches up
                return (status, self.stderr.lock().expect("stderr lock").join("\n"));
            }
            assert!(Instant::now() < deadline, "svclab serve did not exit after SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let stderr = self.stderr.lock().map(|lines| lines.join("\n")).unwrap_or_default();
            #[expect(clippy::print_stderr, reason = "the server's log explains a failed test")]
            {
                eprintln!("svclab serve's standard error:\n{stderr}");
            }
        }
    }
}

/// A fresh directory holding server certificate `a` as `tls.crt` / `tls.key`.
fn cert_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("webhook-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    install_cert(&dir, "server-a");
    dir
}

/// Puts `NAME.pem` / `NAME.key` in place as `tls.crt` / `tls.key`, each by an atomic rename.
fn install_cert(dir: &Path, name: &str) {
    for (from, to) in [(format!("{name}.pem"), "tls.crt"), (format!("{name}.key"), "tls.key")] {
        let staged = dir.join(format!("{to}.new"));
        std::fs::copy(data(&from), &staged).expect("copy");
        std::fs::rename(&staged, dir.join(to)).expect("rename");
    }
}

/// A TLS client trusting the test CA, offering `alpn`, presenting `identity` (a certificate
/// name under `tests/data/tls/`) when given.
fn connector(alpn: &[&str], identity: Option<&str>) -> TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    for cert in certificates("ca.pem") {
        roots.add(cert).expect("CA");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocols")
        .with_root_certificates(roots);
    let mut config = match identity {
        None => builder.with_no_client_auth(),
        Some(name) => {
            let key = PrivateKeyDer::from_pem_file(data(&format!("{name}.key"))).expect("key");
            builder.with_client_auth_cert(certificates(&format!("{name}.pem")), key).expect("pair")
        }
    };
    config.alpn_protocols = alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
    TlsConnector::from(Arc::new(config))
}

fn certificates(name: &str) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_file_iter(data(name))
        .expect("PEM")
        .collect::<Result<_, _>>()
        .expect("certificates")
}

async fn tls(
    address: SocketAddr,
    connector: &TlsConnector,
) -> std::io::Result<TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(address).await?;
    let name = ServerName::try_from("localhost").expect("name");
    connector.connect(name, tcp).await
}

/// One client connection: HTTP/1.1 or HTTP/2, as negotiated.
enum Client {
    Http1(hyper::client::conn::http1::SendRequest<Full<Bytes>>),
    Http2(hyper::client::conn::http2::SendRequest<Full<Bytes>>),
}

/// What a request got back.
struct Answer {
    status: StatusCode,
    version: Version,
    headers: hyper::HeaderMap,
    body: String,
}

impl Client {
    /// Connects, offering `alpn`; HTTP/2 when the server picked `h2`.
    async fn connect(address: SocketAddr, alpn: &[&str]) -> hyper::Result<Client> {
        let stream = tls(address, &connector(alpn, None)).await.expect("TLS handshake");
        Client::over(stream).await
    }

    async fn over(stream: TlsStream<TcpStream>) -> hyper::Result<Client> {
        let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
        let io = TokioIo::new(stream);
        Ok(if h2 {
            let (sender, connection) =
                hyper::client::conn::http2::handshake(TokioExecutor::new(), io).await?;
            tokio::spawn(connection);
            Client::Http2(sender)
        } else {
            let (sender, connection) = hyper::client::conn::http1::handshake(io).await?;
            tokio::spawn(connection);
            Client::Http1(sender)
        })
    }

    async fn send(&mut self, method: Method, path: &str, body: String) -> hyper::Result<Answer> {
        let request = Request::builder()
            .method(method)
            .uri(format!("https://localhost{path}"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .expect("request");
        let response = match self {
            Client::Http1(sender) => {
                sender.ready().await?;
                sender.send_request(request).await?
            }
            Client::Http2(sender) => {
                let (mut parts, body) = request.into_parts();
                parts.version = Version::HTTP_2;
                sender.send_request(Request::from_parts(parts, body)).await?
            }
        };
        let (status, version, headers) =
            (response.status(), response.version(), response.headers().clone());
        let body = response.into_body().collect().await?.to_bytes();
        Ok(Answer { status, version, headers, body: String::from_utf8_lossy(&body).into_owned() })
    }

    async fn review(&mut self, review: &str) -> hyper::Result<Answer> {
        self.send(Method::POST, "/validate", review.to_owned()).await
    }
}

/// A typical AdmissionReview: a ClusterIP Service with two ports created in `shop`.
fn review(uid: &str, ports: usize) -> String {
    let ports: Vec<Value> = (0..ports)
        .map(|i| json!({"name": format!("p{i}"), "port": 1000 + i, "targetPort": 8080, "protocol": "TCP"}))
        .collect();
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Service"},
            "resource": {"group": "", "version": "v1", "resource": "services"},
            "operation": "CREATE",
            "namespace": "shop",
            "name": "web",
            "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
            "object": {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
                "spec": {"type": "ClusterIP", "selector": {"app": "web"}, "ports": ports}},
        }
    })
    .to_string()
}

/// Checks `answer` is a 200 AdmissionReview for `uid` with `allowed`; its `response`.
#[track_caller]
fn check(answer: &Answer, uid: &str, allowed: bool) -> Value {
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert_eq!(answer.headers["content-type"], "application/json");
    let review: Value = serde_json::from_str(&answer.body).expect("JSON body");
    assert_eq!(review["kind"], "AdmissionReview");
    assert_eq!(review["response"]["uid"], uid);
    assert_eq!(review["response"]["allowed"], allowed, "{}", answer.body);
    review["response"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_and_http2() {
    let server = Server::start(&cert_dir("protocols"), &[]);

    // HTTP/1.1 (ALPN offers only it): several reviews on one kept-alive connection.
    let mut client = Client::connect(server.address, &["http/1.1"]).await.expect("h1");
    assert!(matches!(client, Client::Http1(_)));
    for i in 0..5 {
        let answer = client.review(&review(&format!("h1-{i}"), 2)).await.expect("kept alive");
        assert_eq!(answer.version, Version::HTTP_11);
        check(&answer, &format!("h1-{i}"), true);
    }

    // HTTP/2 when offered, as kube-apiserver does: 50 reviews multiplexed on one connection.
    let client = Client::connect(server.address, &["h2", "http/1.1"]).await.expect("h2");
    let Client::Http2(sender) = client else { panic!("the server did not pick h2") };
    let mut tasks = Vec::new();
    for i in 0..50 {
        let mut client = Client::Http2(sender.clone());
        tasks.push(tokio::spawn(async move {
            let uid = format!("h2-{i}");
            let answer = client.review(&review(&uid, 1 + i % 4)).await.expect("h2 review");
            assert_eq!(answer.version, Version::HTTP_2);
            check(&answer, &uid, true);
        }));
    }
    for task in tasks {
        task.await.expect("task");
    }
}

/// A fuel budget no review reaches: the embedded plugin runs unmetered unless `--fuel` is given,
/// and these tests read the fuel histogram of `/metrics`.
const METERED: &str = "10000000000";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_codes() {
    let server = Server::start(&cert_dir("status"), &["--fuel", METERED]);
    let mut client = Client::connect(server.address, &["h2"]).await.expect("h2");
    let send = async |client: &mut Client, method: Method, path: &str, body: String| {
        client.send(method, path, body).await.expect("answered")
    };

    let answer = send(&mut client, Method::POST, "/validate", "not json".into()).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(answer.body.starts_with("the AdmissionReview is not JSON"), "{}", answer.body);
    let answer = send(&mut client, Method::GET, "/validate", String::new()).await;
    assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(answer.headers["allow"], "POST");
    let answer = send(&mut client, Method::POST, "/healthz", String::new()).await;
    assert_eq!(
        (answer.status, &answer.headers["allow"]),
        (StatusCode::METHOD_NOT_ALLOWED, &"GET".parse().expect("value"))
    );
    assert_eq!(send(&mut client, Method::GET, "/nope", String::new()).await.status, 404);
    // 5 MiB, over the 4 MiB limit.
    let huge = format!("{{\"pad\":\"{}\"}}", "x".repeat(5 << 20));
    assert_eq!(send(&mut client, Method::POST, "/validate", huge).await.status, 413);
    let answer = send(&mut client, Method::GET, "/healthz", String::new()).await;
    assert_eq!((answer.status, answer.body.as_str()), (StatusCode::OK, "ok\n"));
    let answer = send(&mut client, Method::GET, "/readyz", String::new()).await;
    assert_eq!((answer.status, answer.body.as_str()), (StatusCode::OK, "ok\n"));
    check(&send(&mut client, Method::POST, "/validate", review("ok", 1)).await, "ok", true);

    // A refusal: port 0 is invalid, as kube-apiserver says it.
    let invalid = review("bad-port", 1).replace("\"port\":1000", "\"port\":0");
    let response =
        check(&send(&mut client, Method::POST, "/validate", invalid).await, "bad-port", false);
    assert_eq!(response["status"]["code"], 422);
    assert_eq!(response["status"]["reason"], "Invalid");

    let metrics = send(&mut client, Method::GET, "/metrics", String::new()).await;
    assert_eq!(metrics.status, StatusCode::OK);
    for line in [
        "svclab_webhook_requests_total{path=\"/validate\",code=\"200\"} 2",
        "svclab_webhook_requests_total{path=\"/validate\",code=\"400\"} 1",
        "svclab_webhook_requests_total{path=\"/validate\",code=\"413\"} 1",
        "svclab_webhook_requests_total{path=\"/validate\",code=\"405\"} 1",
        "svclab_webhook_reviews_total{outcome=\"allowed\"} 1",
        "svclab_webhook_reviews_total{outcome=\"denied\"} 1",
        "svclab_webhook_reviews_total{outcome=\"bad_request\"} 1",
        "svclab_webhook_rule_verdicts_total{rule=\"spec.ports[*].port\",effect=\"Invalid\"} 1",
        "svclab_webhook_plugin_fuel_count 2",
        "svclab_webhook_request_duration_seconds_count{path=\"/validate\"} 5",
        "svclab_webhook_connections 1",
    ] {
        assert!(metrics.body.lines().any(|l| l == line), "no {line:?} in\n{}", metrics.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_are_reloaded_when_the_files_change() {
    let dir = cert_dir("reload");
    let server = Server::start(&dir, &[]);
    let served = async || {
        let stream = tls(server.address, &connector(&["h2"], None)).await.expect("handshake");
        let leaf = stream.get_ref().1.peer_certificates().expect("certificates")[0].clone();
        // The connection works too.
        let mut client = Client::over(stream).await.expect("h2");
        check(&client.review(&review("reload", 1)).await.expect("review"), "reload", true);
        leaf
    };
    let (a, b) = (certificates("server-a.pem").remove(0), certificates("server-b.pem").remove(0));
    assert_eq!(served().await, a);
    // A connection opened before the rotation keeps working after it.
    let mut before = Client::connect(server.address, &["http/1.1"]).await.expect("h1");

    install_cert(&dir, "server-b");
    let deadline = Instant::now() + Duration::from_secs(10);
    while served().await != b {
        assert!(Instant::now() < deadline, "server-b not served 10 s after the rotation");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    check(&before.review(&review("before", 1)).await.expect("old connection"), "before", true);
    let stderr = server.stderr.lock().expect("lock").join("\n");
    assert!(stderr.contains("certificate files changed: reloaded"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_certificates_are_required_with_client_ca() {
    let ca = data("ca.pem");
    let server = Server::start(&cert_dir("mtls"), &["--client-ca", ca.to_str().expect("UTF-8")]);

    // A certificate the CA did not sign: refused. TLS 1.3: the client's handshake may finish
    // before the server checks its certificate; the refusal then arrives on the first read.
    let refused = match tls(server.address, &connector(&["h2"], Some("stranger"))).await {
        Err(_) => true,
        Ok(stream) => match Client::over(stream).await {
            Err(_) => true,
            Ok(mut client) => client.review(&review("x", 1)).await.is_err(),
        },
    };
    assert!(refused, "a client with a stranger's certificate was served");

    // No certificate: probes work (the kubelet presents none), reviews are refused.
    let mut anonymous = Client::connect(server.address, &["h2"]).await.expect("handshake");
    let answer = anonymous.send(Method::GET, "/readyz", String::new()).await.expect("readyz");
    assert_eq!(answer.status, StatusCode::OK);
    let answer = anonymous.review(&review("anonymous", 1)).await.expect("answered");
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}", answer.body);

    let stream = tls(server.address, &connector(&["h2"], Some("client"))).await.expect("accepted");
    let mut client = Client::over(stream).await.expect("h2");
    check(&client.review(&review("mtls", 1)).await.expect("served"), "mtls", true);
    let metrics = client.send(Method::GET, "/metrics", String::new()).await.expect("metrics");
    for line in [
        "svclab_webhook_tls_handshake_failures_total 1",
        "svclab_webhook_requests_total{path=\"/validate\",code=\"403\"} 1",
    ] {
        assert!(metrics.body.lines().any(|l| l == line), "no {line:?} in\n{}", metrics.body);
    }
}

/// Writes an HTTP/1.1 review whose body arrives in two parts, the second after `between`
/// resolves; returns the raw answer (the server closes the connection after it when draining).
async fn split_review(
    address: SocketAddr,
    uid: String,
    between: impl Future<Output = ()>,
) -> String {
    let mut stream = tls(address, &connector(&["http/1.1"], None)).await.expect("handshake");
    let body = review(&uid, 3);
    let head = format!(
        "POST /validate HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n",
        body.len()
    );
    let (first, second) = body.split_at(body.len() / 2);
    stream.write_all(format!("{head}{first}").as_bytes()).await.expect("first half");
    stream.flush().await.expect("flush");
    between.await;
    stream.write_all(second.as_bytes()).await.expect("second half");
    stream.flush().await.expect("flush");
    let mut answer = Vec::new();
    // The server closes the connection after answering (it is draining); a TLS close without
    // close_notify is tolerated.
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_in_flight_reviews_finish() {
    let server = Arc::new(Server::start(&cert_dir("sigterm"), &[]));
    let (terminated, on_terminate) = tokio::sync::watch::channel(false);

    // Load: 4 HTTP/2 and 4 HTTP/1.1 connections sending reviews back to back until refused.
    let mut load = Vec::new();
    for worker in 0..8 {
        let address = server.address;
        load.push(tokio::spawn(async move {
            let alpn: &[&str] = if worker % 2 == 0 { &["h2"] } else { &["http/1.1"] };
            let mut client = Client::connect(address, alpn).await.expect("connect");
            let mut answered = 0_usize;
            for i in 0.. {
                let uid = format!("load-{worker}-{i}");
                match client.review(&review(&uid, 2)).await {
                    // Every answer is complete and right, before and after SIGTERM.
                    Ok(answer) => {
                        check(&answer, &uid, true);
                        answered += 1;
                    }
                    // Refused: the server stopped taking requests on this connection.
                    Err(_) => break,
                }
            }
            answered
        }));
    }
    // In flight at SIGTERM: reviews whose body is half sent.
    let mut in_flight = Vec::new();
    for i in 0..3 {
        let mut on_terminate = on_terminate.clone();
        in_flight.push(tokio::spawn(split_review(
            server.address,
            format!("slow-{i}"),
            async move {
                let _ = on_terminate.wait_for(|done| *done).await;
                // Well after the signal was handled.
                tokio::time::sleep(Duration::from_millis(300)).await;
            },
        )));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    server.terminate();
    let _ = terminated.send(true);

    for (i, task) in in_flight.into_iter().enumerate() {
        let answer = task.await.expect("task");
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or_else(|| panic!("{answer:?}"));
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.contains("connection: close"), "{head}");
        let review: Value = serde_json::from_str(body).expect("a whole JSON body");
        assert_eq!(review["response"]["uid"], format!("slow-{i}"));
        assert_eq!(review["response"]["allowed"], true);
    }
    let mut answered = 0;
    for task in load {
        answered += task.await.expect("load task");
    }
    assert!(answered > 0, "no review answered under load");
    // New connections are refused once the listener is closed.
    let server = Arc::into_inner(server).expect("one owner");
    let (status, stderr) = server.wait();
    assert!(status.success(), "{status}: {stderr}");
    assert!(stderr.contains("SIGTERM: draining"), "{stderr}");
    assert!(stderr.contains("stopped"), "{stderr}");
}

#[expect(clippy::print_stdout, reason = "prints the measured figures, seen with --nocapture")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_do_not_delay_reviews() {
    let server = Server::start(&cert_dir("idle"), &[]);
    // 100 connections that never start TLS, 100 that stop halfway through a request head.
    let mut idle = Vec::new();
    for _ in 0..100 {
        idle.push(TcpStream::connect(server.address).await.expect("tcp").into_std().expect("std"));
    }
    let mut stalled = Vec::new();
    for _ in 0..100 {
        let mut stream = tls(server.address, &connector(&["http/1.1"], None)).await.expect("tls");
        stream.write_all(b"POST /validate HTTP/1.1\r\nhost: local").await.expect("half a head");
        stream.flush().await.expect("flush");
        stalled.push(stream);
    }
    // A new client (handshake included), then a kept-alive one, each answered at once. The
    // sequential server this replaced took 10 s per stalled connection; kube-apiserver gives
    // up after 10 s. Liveness is the property: the bound is generous (a debug build on a
    // loaded 2-core machine), the measured figures are printed.
    let started = Instant::now();
    let mut client = Client::connect(server.address, &["h2"]).await.expect("h2");
    check(&client.review(&review("fresh", 2)).await.expect("review"), "fresh", true);
    let fresh = started.elapsed();
    let started = Instant::now();
    check(&client.review(&review("again", 2)).await.expect("review"), "again", true);
    let again = started.elapsed();
    println!("with 200 idle connections: new connection + review {fresh:?}, next review {again:?}");
    assert!(fresh < Duration::from_secs(1), "{fresh:?}");
    assert!(again < Duration::from_secs(1), "{again:?}");
    drop((idle, stalled));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_fuel_answers_by_failure_policy_while_others_are_served() {
    // A budget a 2-port review fits in (it takes ~0.4 M units) and a 300-port one does not
    // (~26 M).
    let server = Server::start(&cert_dir("fuel"), &["--fuel", "5000000"]);
    let client = Client::connect(server.address, &["h2"]).await.expect("h2");
    let Client::Http2(sender) = client else { panic!("h2") };
    let mut tasks = Vec::new();
    for i in 0..40 {
        let mut client = Client::Http2(sender.clone());
        tasks.push(tokio::spawn(async move {
            let starved = i % 4 == 0;
            let uid = format!("fuel-{i}");
            let body = review(&uid, if starved { 300 } else { 2 });
            let answer = client.review(&body).await.expect("answered");
            let response = check(&answer, &uid, !starved);
            if starved {
                assert_eq!(response["status"]["code"], 500);
                let message = response["status"]["message"].as_str().expect("message");
                assert!(message.contains("plugin ran out of fuel"), "{message}");
            }
        }));
    }
    for task in tasks {
        task.await.expect("task");
    }
}

/// `--policy`: the externalIPs allowlist (CVE-2020-8554) denies, the NodePort rule audits.
const POLICY: &str = "\
apiVersion: svclab.dev/v1alpha1
kind: ServicePolicy
metadata: {name: webhook-test}
spec:
  externalIPs:
    mode: allowlist
    allowedCIDRs: [192.0.2.0/24]
  nodePorts: {forbid: true, action: audit}
";

/// `--profile`: a cluster whose Services get cluster IPs from 10.200.0.0/16.
const PROFILE: &str = "\
apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: \"1.33\"
serviceClusterIPRanges: [10.200.0.0/16]
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_and_profile_files_on_both_engines() {
    let dir = cert_dir("policy");
    let (policy, profile) = (dir.join("policy.yaml"), dir.join("profile.yaml"));
    std::fs::write(&policy, POLICY).expect("policy file");
    std::fs::write(&profile, PROFILE).expect("profile file");
    let with_spec = |uid: &str, spec: Value| {
        let mut review: Value = serde_json::from_str(&review(uid, 1)).expect("JSON");
        let object = &mut review["request"]["object"]["spec"];
        for (key, value) in spec.as_object().expect("object") {
            object[key] = value.clone();
        }
        review.to_string()
    };
    for engine in ["plugin", "native"] {
        let flags = [
            ["--engine", engine],
            ["--policy", path(&policy)],
            ["--profile", path(&profile)],
            ["--fuel", METERED],
        ]
        .concat();
        let server = Server::start(&dir, &flags);
        let mut client = Client::connect(server.address, &["h2"]).await.expect("h2");

        let outside = with_spec("outside", json!({"externalIPs": ["203.0.113.9"]}));
        let response = check(&client.review(&outside).await.expect("review"), "outside", false);
        assert_eq!(response["status"]["code"], 403, "{engine}: {response}");
        assert_eq!(response["status"]["reason"], "Forbidden");
        let cause = &response["status"]["details"]["causes"][0];
        assert_eq!(cause["field"], "spec.externalIPs[0]");
        assert!(
            cause["message"].as_str().is_some_and(|m| m.ends_with("(externalIPs.allowedCIDRs)"))
        );

        // The profile's range: 10.96.0.10 (the default range's) is not in it.
        let default_range = with_spec("range", json!({"clusterIP": "10.96.0.10"}));
        let response = check(&client.review(&default_range).await.expect("review"), "range", false);
        assert_eq!(response["status"]["code"], 422, "{engine}: {response}");
        let in_range = with_spec("in-range", json!({"clusterIP": "10.200.0.10"}));
        check(&client.review(&in_range).await.expect("review"), "in-range", true);

        let node_port = with_spec("audited", json!({"type": "NodePort"}));
        let response = check(&client.review(&node_port).await.expect("review"), "audited", true);
        assert!(response["auditAnnotations"]["nodePorts.forbid"].is_string(), "{response}");

        let metrics = client.send(Method::GET, "/metrics", String::new()).await.expect("metrics");
        for line in [
            "svclab_webhook_rule_verdicts_total{rule=\"externalIPs.allowedCIDRs\",effect=\"deny\"} 1",
            "svclab_webhook_rule_verdicts_total{rule=\"nodePorts.forbid\",effect=\"audit\"} 1",
            "svclab_webhook_reviews_total{outcome=\"denied\"} 2",
            "svclab_webhook_reviews_total{outcome=\"allowed\"} 2",
        ] {
            assert!(
                metrics.body.lines().any(|l| l == line),
                "{engine}: no {line:?} in\n{}",
                metrics.body
            );
        }
        // Fuel is the plugin's figure; the native engine has none.
        let fuel = metrics.body.lines().any(|l| l == "svclab_webhook_plugin_fuel_count 4");
        assert_eq!(fuel, engine == "plugin", "{engine}:\n{}", metrics.body);
    }

    // A settings error stops the start: a typo must never switch a rule off silently.
    std::fs::write(&policy, POLICY.replace("allowedCIDRs", "allowedCIDR")).expect("typo");
    let output = Command::new(env!("CARGO_BIN_EXE_svclab"))
        .args(["serve", "--listen", "127.0.0.1:0", "--policy", path(&policy)])
        .arg("--cache-dir")
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("svclab-plugin-cache"))
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is invalid"), "{stderr}");
    assert!(stderr.contains("allowedCIDR"), "{stderr}");
}

fn path(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}
