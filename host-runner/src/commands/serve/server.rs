//! Connections: accept, TLS handshake under a deadline, HTTP/1.1 or HTTP/2 by ALPN, each
//! connection on its own task (a slow or idle client holds up nobody), the certificate poller,
//! and the graceful stop (stop accepting, fail `/readyz`, let in-flight requests finish).

use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc::UnboundedSender;

use super::tls::Reloading;
use super::webhook::Webhook;

/// How long a client may take over its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an HTTP/1.1 client may take to send a request head (also bounds an idle
/// keep-alive connection's wait for its next request).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// HTTP/2 keep-alive: a PING after this much silence, the connection dropped if unanswered
/// within [`H2_PING_TIMEOUT`].
const H2_PING_INTERVAL: Duration = Duration::from_secs(30);
const H2_PING_TIMEOUT: Duration = Duration::from_secs(10);
/// Concurrent HTTP/2 streams per connection (kube-apiserver multiplexes its webhook calls).
const H2_MAX_STREAMS: u32 = 256;
/// How often the certificate files are looked at.
const RELOAD_PERIOD: Duration = Duration::from_secs(1);

/// How the server runs.
pub(super) struct Options {
    /// TLS (HTTPS); `None` serves plain HTTP/1.1.
    pub(super) tls: Option<Arc<Reloading>>,
    /// How long in-flight requests get after the stop signal.
    pub(super) shutdown_grace: Duration,
    /// Lines for standard error.
    pub(super) log: UnboundedSender<String>,
}

/// Serves until `stop` resolves, then drains.
pub(super) async fn run(
    listener: TcpListener,
    webhook: Arc<Webhook>,
    options: Options,
    stop: impl Future<Output = &'static str>,
) -> anyhow::Result<()> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(H2_PING_INTERVAL)
        .keep_alive_timeout(H2_PING_TIMEOUT)
        .max_concurrent_streams(H2_MAX_STREAMS);
    let http1 = builder.clone().http1_only();
    let http2 = builder.http2_only();

    let poller = options.tls.clone().map(|tls| {
        let (webhook, log) = (Arc::clone(&webhook), options.log.clone());
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(RELOAD_PERIOD);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                match tls.reload_if_changed() {
                    None => {}
                    Some(Ok(())) => {
                        webhook.metrics.reload(true);
                        let _ = log.send("certificate files changed: reloaded".to_owned());
                    }
                    Some(Err(err)) => {
                        webhook.metrics.reload(false);
                        let _ = log.send(format!(
                            "certificate files changed but cannot be used (keeping the \
                             previous ones): {err}"
                        ));
                    }
                }
            }
        })
    });

    let graceful = GracefulShutdown::new();
    let mut stop = std::pin::pin!(stop);
    let signal = loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(err) => {
                    // Out of file descriptors, most likely: back off instead of spinning.
                    let _ = options.log.send(format!("accept failed: {err}"));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            signal = &mut stop => break signal,
        };
        let connection = Connection {
            webhook: Arc::clone(&webhook),
            http1: http1.clone(),
            http2: http2.clone(),
            watcher: graceful.watcher(),
        };
        tokio::spawn(connection.serve(tcp, options.tls.clone()));
    };

    drop(listener);
    webhook.drain();
    let _ = options.log.send(format!(
        "{signal}: draining (in-flight requests get {} s)",
        options.shutdown_grace.as_secs()
    ));
    if tokio::time::timeout(options.shutdown_grace, graceful.shutdown()).await.is_err() {
        let _ = options.log.send("grace period over: closing the remaining connections".into());
    } else {
        let _ = options.log.send("stopped".into());
    }
    if let Some(poller) = poller {
        poller.abort();
    }
    Ok(())
}

/// One accepted connection and what it is served with.
struct Connection {
    webhook: Arc<Webhook>,
    http1: auto::Builder<TokioExecutor>,
    http2: auto::Builder<TokioExecutor>,
    watcher: hyper_util::server::graceful::Watcher,
}

impl Connection {
    async fn serve(self, tcp: TcpStream, tls: Option<Arc<Reloading>>) {
        // Reviews are small request/response pairs: send them without Nagle's delay.
        let _ = tcp.set_nodelay(true);
        self.webhook.metrics.connections.inc();
        let service = |authenticated: bool| {
            let webhook = Arc::clone(&self.webhook);
            service_fn(move |request| Arc::clone(&webhook).handle(request, authenticated))
        };
        match tls {
            None => {
                let served = self.http1.serve_connection(TokioIo::new(tcp), service(true));
                let _ = self.watcher.watch(served).await;
            }
            Some(tls) => {
                let handshake = tls.acceptor().accept(tcp);
                match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await {
                    Ok(Ok(stream)) => {
                        let session = stream.get_ref().1;
                        let authenticated = !tls.requires_client_certificate()
                            || session.peer_certificates().is_some_and(|chain| !chain.is_empty());
                        let h2 = session.alpn_protocol() == Some(b"h2");
                        let builder = if h2 { &self.http2 } else { &self.http1 };
                        let served =
                            builder.serve_connection(TokioIo::new(stream), service(authenticated));
                        let _ = self.watcher.watch(served).await;
                    }
                    Ok(Err(_)) | Err(_) => {
                        self.webhook.metrics.handshake_failures.inc();
                    }
                }
            }
        }
        self.webhook.metrics.connections.dec();
    }
}
