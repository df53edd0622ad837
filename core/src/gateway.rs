//! Admission and svclab's API inside an HTTP gateway: the decisions the proxy-wasm filter
//! (Envoy, Istio, Envoy Gateway) and the http-wasm middleware (Traefik) make, sans-I/O, so both
//! adapters only move bytes between their host and these functions.
//!
//! A gateway in front of a Kubernetes API sees `POST`/`PUT` of Services, `services/status` and
//! EndpointSlices. It judges the body as kube-apiserver of the configured profile would, plus
//! the configured policy, and answers a refusal itself with the `Status` kube-apiserver returns
//! (422 `Invalid`, 403 `Forbidden`); accepted requests go upstream untouched, with the warnings
//! as `Warning: 299 - "..."` response headers. Under a configured prefix, `POST /check`,
//! `/render` and `/trace` answer what the `svclab` command prints.

mod config;
mod path;

use serde_json::Value;

use crate::admission::{AdmissionRequest, admit};
use crate::manifest::{Input, parse};
use crate::model::well_known::SKIPPED_AUDIT_ANNOTATION;
use crate::net::IpFamily;
use crate::pipeline::{CheckOptions, check, evaluate};
use crate::proxy::{ProxyMode, RenderOptions};
use crate::trace::TraceRequest;
use crate::world::{render, trace};

pub use config::{
    DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_OBJECTS, GatewayConfig, GatewayConfigError, Guard, Mode,
    PatchMode,
};
use path::{ApiCall, Target, classify};

/// What the gateway needs after the request line and headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interest {
    /// Forward untouched without reading the body; add these `Warning` header values to the
    /// response (a PATCH passed by `patch: warn`).
    Forward {
        /// Values of `Warning` response headers, already in the `299 - "text"` form.
        warnings: Vec<String>,
    },
    /// Read the whole body (at most [`GatewayConfig::max_body_bytes`]), then call [`decide`].
    Body,
    /// Answer now, without reading the body (a declared length over the limit, a PATCH refused).
    Respond(Reply),
}

/// What the gateway does with a request whose body it has read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Forward the request untouched; add these `Warning` header values to the response.
    Forward {
        /// Values of `Warning` response headers, already in the `299 - "text"` form.
        warnings: Vec<String>,
    },
    /// Answer the client directly; nothing goes upstream.
    Respond(Reply),
}

/// A response the gateway sends itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// Response headers (`content-type` included), in order.
    pub headers: Vec<(String, String)>,
    /// Response body.
    pub body: String,
}

/// The request line and the headers the gateway looks at.
#[derive(Debug, Clone, Copy)]
pub struct RequestHead<'a> {
    /// `:method`.
    pub method: &'a str,
    /// `:path`, query string included.
    pub path: &'a str,
    /// `content-length`, when the client sent one.
    pub content_length: Option<u64>,
}

/// Looks at the request line and headers: pass, read the body, or answer at once.
pub fn interest(config: &GatewayConfig, head: &RequestHead<'_>) -> Interest {
    let target = classify(config, head.method, head.path);
    if matches!(target, Target::Pass) {
        return Interest::Forward { warnings: Vec::new() };
    }
    if let Target::Patch { .. } = &target {
        return match patch_decision(config, &target) {
            Decision::Forward { warnings } => Interest::Forward { warnings },
            Decision::Respond(reply) => Interest::Respond(reply),
        };
    }
    if head.content_length.is_some_and(|length| length > config.max_body_bytes as u64) {
        return Interest::Respond(too_large(config));
    }
    Interest::Body
}

/// Judges a request whose whole body has been read.
pub fn decide(config: &GatewayConfig, head: &RequestHead<'_>, body: &[u8]) -> Decision {
    if body.len() > config.max_body_bytes {
        return Decision::Respond(too_large(config));
    }
    match classify(config, head.method, head.path) {
        Target::Pass => Decision::Forward { warnings: Vec::new() },
        target @ Target::Patch { .. } => patch_decision(config, &target),
        Target::Admission { kind, operation, subresource, namespace } => {
            let Ok(text) = std::str::from_utf8(body) else {
                return Decision::Respond(bad_request("the request body is not UTF-8"));
            };
            admission(config, kind, operation, subresource, &namespace, text)
        }
        Target::Api(call) => Decision::Respond(api(config, &call, head.path, body)),
    }
}

/// The answer when a body is over the limit: kube-apiserver's own (`limitedReadBody` in
/// `apiserver/pkg/endpoints/handlers/rest.go` builds `NewRequestEntityTooLargeError("limit is
/// N")`).
pub fn too_large(config: &GatewayConfig) -> Reply {
    failure(
        413,
        &format!("Request entity too large: limit is {}", config.max_body_bytes),
        "RequestEntityTooLarge",
    )
}

/// A warning text as the value of a `Warning` header, the way kube-apiserver sends it
/// (`apiserver/pkg/warning`'s `headerWarningRecorder`: code 299, agent `-`, the text as an
/// RFC 7230 quoted-string).
pub fn warning_header(text: &str) -> String {
    let mut value = String::with_capacity(text.len() + 8);
    value.push_str("299 - \"");
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                value.push('\\');
                value.push(c);
            }
            // Header values cannot carry control characters; the apiserver drops invalid
            // warnings the same way (`net/http`'s `ValidHeaderFieldValue`).
            c if c.is_control() => value.push(' '),
            c => value.push(c),
        }
    }
    value.push('"');
    value
}

fn patch_decision(config: &GatewayConfig, target: &Target) -> Decision {
    let Target::Patch { kind, name } = target else {
        return Decision::Forward { warnings: Vec::new() };
    };
    match config.patch {
        PatchMode::Warn => Decision::Forward {
            warnings: vec![warning_header(&format!(
                "svclab: PATCH of {kind} {name:?} was not validated at the gateway (a partial body cannot be judged without the stored object)"
            ))],
        },
        PatchMode::Refuse => Decision::Respond(failure(
            405,
            &format!(
                "PATCH of {kind} {name:?} is refused at this gateway: send the whole object with PUT"
            ),
            "MethodNotAllowed",
        )),
    }
}

/// Runs admission on one object; the refusal is the `Status` the apiserver returns.
fn admission(
    config: &GatewayConfig,
    kind: &'static str,
    operation: &'static str,
    subresource: &'static str,
    namespace: &str,
    body: &str,
) -> Decision {
    let object = if serde_json::from_str::<Value>(body).is_ok_and(|value| value.is_object()) {
        body.to_owned()
    } else {
        // kube-apiserver decodes YAML bodies too.
        match yaml_object(body) {
            Some(object) => object.to_string(),
            None => {
                return Decision::Respond(bad_request(
                    "the request body is neither a JSON nor a YAML object",
                ));
            }
        }
    };
    let request = AdmissionRequest {
        kind: kind.to_owned(),
        operation: operation.to_owned(),
        subresource: subresource.to_owned(),
        namespace: namespace.to_owned(),
        object: Some(object),
        // A gateway sees neither the stored object nor the requester.
        old_object: None,
        user_info: None,
    };
    let verdict = match admit(&request, &config.admission_options()) {
        Ok(verdict) => verdict,
        Err(err) => return Decision::Respond(bad_request(&err.to_string())),
    };
    let mut warnings: Vec<String> = verdict.warnings.iter().map(|w| warning_header(w)).collect();
    // A gateway has no audit log to carry the `skipped` audit annotation, and never knows the requester:
    // a rule that needed an input it lacks (user and group exemptions, `externalIPs` users)
    // tells the client so instead of passing silently.
    if let Some(skipped) = verdict.audit_annotations.get(SKIPPED_AUDIT_ANNOTATION) {
        warnings.push(warning_header(&format!("svclab: {skipped}")));
    }
    match verdict.status {
        Some(status) if config.mode == Mode::Enforce => {
            let mut body = with_kind(&status);
            body.push('\n');
            Decision::Respond(text_reply(verdict.code, "application/json", body))
        }
        Some(status) => {
            let message = serde_json::from_str::<Value>(&status)
                .ok()
                .and_then(|status| status["message"].as_str().map(str::to_owned))
                .unwrap_or_default();
            warnings.push(warning_header(&format!("svclab (mode warn) would refuse: {message}")));
            Decision::Forward { warnings }
        }
        None => Decision::Forward { warnings },
    }
}

/// The `Status` as kube-apiserver writes it to a client: `kind` and `apiVersion` first (inside
/// an AdmissionReview they are left out).
fn with_kind(status: &str) -> String {
    match status.strip_prefix('{') {
        Some(rest) if !status.contains("\"kind\":\"Status\"") => {
            let separator = if rest.trim_start().starts_with('}') { "" } else { "," };
            format!("{{\"kind\":\"Status\",\"apiVersion\":\"v1\"{separator}{rest}")
        }
        _ => status.to_owned(),
    }
}

/// A YAML body (one document, a mapping) as JSON.
fn yaml_object(body: &str) -> Option<Value> {
    let documents = crate::yaml::parse_stream(body);
    let [document] = documents.as_slice() else { return None };
    match &document.root {
        Ok(Some(node)) => Some(node.to_json()).filter(Value::is_object),
        _ => None,
    }
}

/// svclab's own API under the prefix: the same output as the `svclab` command.
fn api(config: &GatewayConfig, call: &ApiCall, path: &str, body: &[u8]) -> Reply {
    let Ok(text) = std::str::from_utf8(body) else {
        return bad_request("the request body is not UTF-8");
    };
    // Named like the command line's standard input, so the report is the same bytes.
    let inputs = [Input::new("-", text)];
    let scenario = parse(&inputs);
    if scenario.objects.len() > config.max_objects {
        return failure(
            413,
            &format!(
                "Request entity too large: {} objects, limit is {}",
                scenario.objects.len(),
                config.max_objects
            ),
            "RequestEntityTooLarge",
        );
    }
    let query = Query::parse(path);
    match call {
        ApiCall::Check => {
            let options =
                CheckOptions { no_defaults: query.flag("noDefaults"), ..CheckOptions::default() };
            let report = check(&inputs, &options);
            text_reply(200, "application/json", report.to_json())
        }
        ApiCall::Render => {
            let mode = match query.get("proxyMode").map(ProxyMode::parse) {
                None => ProxyMode::Iptables,
                Some(Some(mode)) => mode,
                Some(None) => return bad_request("proxyMode must be iptables or nftables"),
            };
            let family = match query.get("ipFamily") {
                None => None,
                Some("IPv4" | "ipv4") => Some(IpFamily::V4),
                Some("IPv6" | "ipv6") => Some(IpFamily::V6),
                Some(_) => return bad_request("ipFamily must be IPv4 or IPv6"),
            };
            let options = RenderOptions {
                mode,
                family,
                node: query.get("node").map(str::to_owned),
                standalone: query.flag("standalone"),
            };
            let (world, _) = evaluate(&inputs, &CheckOptions::WORLD_ONLY);
            match render(&world, &options) {
                Ok(rules) => text_reply(200, "text/plain; charset=utf-8", rules),
                Err(err) => bad_request(&err.to_string()),
            }
        }
        ApiCall::Trace => {
            let (Some(src), Some(dst), Some(dport)) =
                (query.get("src"), query.get("dst"), query.get("dport"))
            else {
                return bad_request("trace needs the query parameters src, dst and dport");
            };
            let Ok(dport) = dport.parse::<u16>() else {
                return bad_request("dport must be a port number");
            };
            let request = TraceRequest {
                src: src.to_owned(),
                dst: dst.to_owned(),
                dport,
                protocol: query.get("protocol").unwrap_or("tcp").to_owned(),
                node: query.get("node").map(str::to_owned),
                in_interface: query.get("inInterface").map(str::to_owned),
            };
            let (world, _) = evaluate(&inputs, &CheckOptions::WORLD_ONLY);
            // The same encoding as `svclab trace --output json`.
            match serde_json::to_string_pretty(&trace(&world, &request)) {
                Ok(mut json) => {
                    json.push('\n');
                    text_reply(200, "application/json", json)
                }
                Err(err) => bad_request(&err.to_string()),
            }
        }
        ApiCall::NotFound => failure(
            404,
            &format!("{path:?} is not one of {0}/check, {0}/render, {0}/trace", config.prefix),
            "NotFound",
        ),
        ApiCall::MethodNotAllowed => {
            failure(405, "svclab's API answers POST only", "MethodNotAllowed")
        }
    }
}

/// The decoded query string of a request path (`a=b&c`, percent-decoded).
struct Query(Vec<(String, String)>);

impl Query {
    fn parse(path: &str) -> Query {
        let query = path.split_once('?').map(|(_, query)| query).unwrap_or_default();
        Query(
            query
                .split('&')
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, "true"));
                    (percent_decode(key), percent_decode(value))
                })
                .collect(),
        )
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(high), Some(low)) => {
                    out.push((high * 16 + low) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn bad_request(message: &str) -> Reply {
    failure(400, message, "BadRequest")
}

/// A `metav1.Status` failure, as kube-apiserver writes one.
pub fn failure(code: u16, message: &str, reason: &str) -> Reply {
    let status = serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    });
    json_reply(code, status)
}

fn json_reply(code: u16, value: Value) -> Reply {
    let mut body = value.to_string();
    body.push('\n');
    text_reply(code, "application/json", body)
}

fn text_reply(status: u16, content_type: &str, body: String) -> Reply {
    Reply { status, headers: vec![("content-type".into(), content_type.into())], body }
}

#[cfg(test)]
mod tests;
