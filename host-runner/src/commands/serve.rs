//! `svclab serve`: a validating admission webhook (`admission.k8s.io/v1` AdmissionReview at
//! `/validate`, liveness at `/healthz`) answering through the engine, one fresh plugin store
//! per request.
//!
//! [`route`] is the whole HTTP behaviour as a pure function, so tests drive it in-process; the
//! command only moves bytes between the socket and it.

use std::io::Read as _;

use anyhow::Context as _;
use clap::{Args, ValueEnum};

use crate::commands::Io;
use crate::engine::{Engine, EngineError};

/// Largest request body accepted (kube-apiserver's own limit on an object is 3 MiB).
const MAX_BODY_BYTES: u64 = 4 << 20;

/// Arguments of `svclab serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeCommand {
    /// Address to listen on (plain HTTP; put a TLS-terminating proxy in front for a cluster).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8443")]
    listen: String,
    /// What to answer when the engine fails (out of fuel, deadline, trap): like the
    /// webhook's `failurePolicy`, `Fail` denies and `Ignore` allows.
    #[arg(long, value_enum, default_value_t = FailurePolicy::Fail)]
    failure_policy: FailurePolicy,
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

/// The webhook's routes: `POST /validate`, `GET /healthz`.
pub fn route(
    engine: &Engine,
    policy: FailurePolicy,
    method: &str,
    path: &str,
    body: &str,
) -> HttpResponse {
    let path = path.split('?').next().unwrap_or(path);
    match (method, path) {
        ("GET", "/healthz") => HttpResponse::text(200, "ok\n"),
        ("POST", "/validate") => match engine.validate_admission(body) {
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

impl ServeCommand {
    pub(crate) fn run(self, engine: &Engine, io: &mut Io<'_>) -> anyhow::Result<u8> {
        let server = tiny_http::Server::http(&self.listen)
            .map_err(|err| anyhow::anyhow!("cannot listen on {}: {err}", self.listen))?;
        writeln!(
            io.stderr,
            "svclab: serving AdmissionReview v1 on http://{}/validate",
            self.listen
        )?;
        for mut request in server.incoming_requests() {
            let mut body = String::new();
            let read = request.as_reader().take(MAX_BODY_BYTES).read_to_string(&mut body);
            let answer = match read {
                Ok(_) => route(
                    engine,
                    self.failure_policy,
                    request.method().as_str(),
                    request.url(),
                    &body,
                ),
                Err(err) => {
                    HttpResponse::text(400, format!("cannot read the request body: {err}\n"))
                }
            };
            let header =
                tiny_http::Header::from_bytes(&b"Content-Type"[..], answer.content_type.as_bytes())
                    .map_err(|()| anyhow::anyhow!("invalid content type"))?;
            let response = tiny_http::Response::from_string(answer.body)
                .with_status_code(answer.status)
                .with_header(header);
            // A client that hung up is its own problem; keep serving.
            let _ = request.respond(response);
        }
        Err(anyhow::anyhow!("the server stopped")).context("svclab serve")
    }
}
