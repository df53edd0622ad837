//! The webhook's HTTP surface: `POST /validate` (the review, on the blocking pool so the reactor
//! never waits for the engine), `GET /healthz`, `/readyz` and `/metrics`; 405 with `Allow` on a
//! wrong method, 404 elsewhere, 413 past the body limit, 408 on a stalled body.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::ValueEnum;
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode, header};
use svclab_core::AdmissionOptions;

use super::metrics::{Decision, Metrics, Review};
use crate::engine::{Engine, EngineError, Outcome};
use crate::plugin::PluginError;

/// Largest request body accepted (kube-apiserver's own limit on an object is 3 MiB; a review of
/// an update carries the object twice, but Services are small).
pub(super) const MAX_BODY_BYTES: usize = 4 << 20;
/// How long a client may take to send a request body once its head arrived.
const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

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

/// The review routes as a pure function: `POST /validate` (judged under `options`),
/// `GET /healthz`.
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
        ("POST", "/validate") => review(engine, policy, options, body).0,
        (_, "/healthz" | "/validate") => HttpResponse::text(405, "method not allowed\n"),
        _ => HttpResponse::text(404, "not found\n"),
    }
}

/// Reviews `body`; the answer, and what the metrics record of it.
fn review(
    engine: &Engine,
    policy: FailurePolicy,
    options: &AdmissionOptions,
    body: &str,
) -> (HttpResponse, Review) {
    match engine.validate_admission(body, options) {
        Ok(Outcome { output, fuel, .. }) => {
            let review = Review::Answered { decision: Decision::of(&output), fuel };
            (HttpResponse::json(output), review)
        }
        Err(EngineError::BadInput(message)) => {
            (HttpResponse::text(400, format!("{message}\n")), Review::BadRequest)
        }
        Err(err) => {
            let failure = Review::Failed { kind: failure_kind(&err) };
            (failure_response(policy, body, &err.to_string()), failure)
        }
    }
}

/// The metric label of an engine failure.
fn failure_kind(err: &EngineError) -> &'static str {
    match err {
        EngineError::Plugin(PluginError::OutOfFuel { .. }) => "out_of_fuel",
        EngineError::Plugin(PluginError::Timeout { .. }) => "timeout",
        EngineError::Plugin(PluginError::MemoryLimit { .. }) => "memory_limit",
        EngineError::Plugin(PluginError::Trap(_)) => "trap",
        EngineError::Plugin(_) => "plugin",
        EngineError::BadInput(_) | EngineError::Failed(_) => "failed",
    }
}

/// The review answer when the engine itself failed: allowed or denied per the failure policy,
/// with the failure as a 500 `Status` (what kube-apiserver shows for a failing webhook).
fn failure_response(policy: FailurePolicy, body: &str, err: &str) -> HttpResponse {
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

/// The served state: the engine, its call slots, readiness and metrics.
pub(super) struct Webhook {
    engine: Engine,
    policy: FailurePolicy,
    options: AdmissionOptions,
    /// One permit per review that may run at once (see `concurrency`).
    slots: Arc<tokio::sync::Semaphore>,
    /// Set when shutting down: `/readyz` then answers 503 so endpoints drop this pod.
    draining: AtomicBool,
    pub(super) metrics: Metrics,
}

impl Webhook {
    pub(super) fn new(
        engine: Engine,
        policy: FailurePolicy,
        options: AdmissionOptions,
        slots: u32,
    ) -> Webhook {
        Webhook {
            engine,
            policy,
            options,
            slots: Arc::new(tokio::sync::Semaphore::new(usize::try_from(slots).unwrap_or(1))),
            draining: AtomicBool::new(false),
            metrics: Metrics::new(),
        }
    }

    pub(super) fn drain(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }

    /// Answers one request (never fails: every problem is an HTTP status); `authenticated`
    /// is false on a connection without the client certificate `--client-ca` asks for.
    pub(super) async fn handle(
        self: Arc<Self>,
        request: Request<Incoming>,
        authenticated: bool,
    ) -> Result<Response<Full<Bytes>>, Infallible> {
        let started = Instant::now();
        let (label, allow) = match request.uri().path() {
            "/validate" => ("/validate", Method::POST),
            "/healthz" => ("/healthz", Method::GET),
            "/readyz" => ("/readyz", Method::GET),
            "/metrics" => ("/metrics", Method::GET),
            _ => ("other", Method::GET),
        };
        let answer = if label == "other" {
            HttpResponse::text(404, "not found\n")
        } else if request.method() != allow {
            HttpResponse::text(405, "method not allowed\n")
        } else {
            match label {
                "/validate" if !authenticated => HttpResponse::text(
                    403,
                    "reviews need a client certificate signed by --client-ca\n",
                ),
                "/validate" => Arc::clone(&self).validate(request).await,
                "/readyz" if self.draining.load(Ordering::Relaxed) => {
                    HttpResponse::text(503, "shutting down\n")
                }
                "/metrics" => HttpResponse {
                    status: 200,
                    content_type: "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    body: self.metrics.encode(),
                },
                _ => HttpResponse::text(200, "ok\n"),
            }
        };
        self.metrics.request(label, answer.status, started.elapsed());
        let mut response = Response::builder()
            .status(
                StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            )
            .header(header::CONTENT_TYPE, answer.content_type);
        if answer.status == 405 {
            response = response.header(header::ALLOW, allow.as_str());
        }
        Ok(response
            .body(Full::new(Bytes::from(answer.body)))
            .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))))
    }

    /// Reads the body under the limit and the timeout, then reviews it on the blocking pool.
    async fn validate(self: Arc<Self>, request: Request<Incoming>) -> HttpResponse {
        let too_large =
            || HttpResponse::text(413, format!("request body over {MAX_BODY_BYTES} bytes\n"));
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|length| length.to_str().ok())
            .and_then(|length| length.parse::<u64>().ok());
        if declared.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
            return too_large();
        }
        let body = Limited::new(request.into_body(), MAX_BODY_BYTES).collect();
        let body = match tokio::time::timeout(BODY_READ_TIMEOUT, body).await {
            Err(_) => return HttpResponse::text(408, "request body timed out\n"),
            Ok(Err(err)) if err.downcast_ref::<LengthLimitError>().is_some() => return too_large(),
            Ok(Err(err)) => {
                return HttpResponse::text(400, format!("cannot read the body: {err}\n"));
            }
            Ok(Ok(body)) => body.to_bytes(),
        };
        let Ok(body) = String::from_utf8(body.into()) else {
            return HttpResponse::text(400, "the AdmissionReview is not UTF-8\n");
        };
        // Closed only if the runtime is going away.
        let Ok(permit) = Arc::clone(&self.slots).acquire_owned().await else {
            return HttpResponse::text(503, "shutting down\n");
        };
        let webhook = Arc::clone(&self);
        let reviewed = tokio::task::spawn_blocking(move || {
            let (answer, review) = review(&webhook.engine, webhook.policy, &webhook.options, &body);
            drop(permit);
            webhook.metrics.review(&review);
            answer
        })
        .await;
        reviewed.unwrap_or_else(|err| {
            // The engine panicked: a bug, answered like any other engine failure.
            self.metrics.review(&Review::Failed { kind: "panic" });
            failure_response(self.policy, "", &format!("the engine panicked: {err}"))
        })
    }
}
