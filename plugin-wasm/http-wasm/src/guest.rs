//! The `http_handler` imports, the `handle_request` / `handle_response` exports, and the
//! adapter between them and `svclab_core::gateway`.

#![allow(unsafe_code, reason = "the http-wasm ABI is foreign functions over linear memory")]

use std::sync::OnceLock;

use svclab_core::gateway::{self, Decision, GatewayConfig, Interest, Reply, RequestHead};

/// `header_kind` / `body_kind` values of the ABI.
const REQUEST: u32 = 0;
const RESPONSE: u32 = 1;
/// `enable_features` bit: the host buffers the request body so the guest can read it and the
/// next handler still receives it.
const FEATURE_BUFFER_REQUEST: u32 = 1;
/// `log` level `error`.
const LOG_ERROR: i32 = 2;

#[link(wasm_import_module = "http_handler")]
unsafe extern "C" {
    fn log(level: i32, message: *const u8, message_len: u32);
    fn enable_features(features: u32) -> u32;
    fn get_config(buf: *mut u8, buf_limit: u32) -> u32;
    fn get_method(buf: *mut u8, buf_limit: u32) -> u32;
    fn get_uri(buf: *mut u8, buf_limit: u32) -> u32;
    fn get_header_values(
        kind: u32,
        name: *const u8,
        name_len: u32,
        buf: *mut u8,
        buf_limit: u32,
    ) -> u64;
    fn set_header_value(
        kind: u32,
        name: *const u8,
        name_len: u32,
        value: *const u8,
        value_len: u32,
    );
    fn add_header_value(
        kind: u32,
        name: *const u8,
        name_len: u32,
        value: *const u8,
        value_len: u32,
    );
    fn read_body(kind: u32, buf: *mut u8, buf_limit: u32) -> u64;
    fn write_body(kind: u32, body: *const u8, body_len: u32);
    fn set_status_code(code: u32);
}

/// The configuration, read on the first request of each instance.
static CONFIG: OnceLock<Result<GatewayConfig, String>> = OnceLock::new();

/// Reads the configuration (Traefik turns every middleware option into a string). A bad one
/// is logged and every request is refused, rather than passed unjudged.
fn configure() -> Result<GatewayConfig, String> {
    GatewayConfig::parse(&read_all(|buf, limit| unsafe { get_config(buf, limit) }), true).map_err(
        |err| {
            let message = format!("svclab: {err}");
            unsafe { log(LOG_ERROR, message.as_ptr(), len(message.as_bytes())) };
            message
        },
    )
}

/// `handle_request`: the high 32 bits are a context the host hands back to
/// `handle_response`, the low bit says whether the next handler runs.
#[unsafe(no_mangle)]
extern "C" fn handle_request() -> u64 {
    // Enabled during a request, buffering applies to that request.
    unsafe { enable_features(FEATURE_BUFFER_REQUEST) };
    match CONFIG.get_or_init(configure) {
        Ok(config) => u64::from(handle(config)),
        Err(message) => {
            respond(&gateway::failure(500, message, "InternalError"));
            0
        }
    }
}

/// `handle_response`: nothing to do, the warnings were set before the next handler ran.
#[unsafe(no_mangle)]
extern "C" fn handle_response(_request_context: u32, _is_error: u32) {}

/// Whether the next handler runs.
fn handle(config: &GatewayConfig) -> bool {
    let method = text(read_all(|buf, limit| unsafe { get_method(buf, limit) }));
    let path = text(read_all(|buf, limit| unsafe { get_uri(buf, limit) }));
    let content_length = header(REQUEST, "Content-Length").and_then(|v| v.trim().parse().ok());
    let head = RequestHead { method: &method, path: &path, content_length };
    let decision = match gateway::interest(config, &head) {
        Interest::Forward { warnings } => Decision::Forward { warnings },
        Interest::Respond(reply) => Decision::Respond(reply),
        Interest::Body => match read_request_body(config.max_body_bytes, content_length) {
            Some(body) => gateway::decide(config, &head, &body),
            None => Decision::Respond(gateway::too_large(config)),
        },
    };
    match decision {
        Decision::Forward { warnings } => {
            // Set before the next handler writes the response: without response buffering the
            // headers are gone by the time `handle_response` runs.
            for warning in warnings {
                let name = b"Warning";
                unsafe {
                    add_header_value(
                        RESPONSE,
                        name.as_ptr(),
                        len(name),
                        warning.as_ptr(),
                        len(warning.as_bytes()),
                    );
                }
            }
            true
        }
        Decision::Respond(reply) => {
            respond(&reply);
            false
        }
    }
}

/// The whole request body, or `None` past `limit` bytes, then handed back to the host as the
/// body the next handler sends upstream (the same bytes).
///
/// Why both: the request-body buffering of the http-wasm host Traefik 3.7 ships keeps only what
/// a read returned together with end of stream (http-wasm-host-go v0.7.0,
/// `handler/nethttp/buffer.go`, `bufferingRequestBody.Read` buffers `p[:n]` only when `err !=
/// nil`), so a body the host reads from the connection in more than one piece would reach the
/// next handler truncated. Writing the bytes back replaces the request body with exactly what
/// was read (`RequestBodyWriter` in `handler/nethttp/host.go`).
///
/// The host's `read_body` fills the buffer until end of stream or the buffer is full
/// (`readBody` in `handler/middleware.go`); the result is the count in the low 32 bits and the
/// end-of-stream flag at bit 32. The buffer is sized from `Content-Length` (plus one byte, so a
/// body longer than announced is noticed) and doubled while the host fills it.
fn read_request_body(limit: usize, expected: Option<u64>) -> Option<Vec<u8>> {
    let size = expected.map_or(limit, |length| usize::try_from(length).unwrap_or(limit).min(limit));
    let mut body = vec![0u8; size + 1];
    let mut filled = 0;
    loop {
        let result =
            unsafe { read_body(REQUEST, body[filled..].as_mut_ptr(), len(&body[filled..])) };
        filled += ((result & 0xffff_ffff) as usize).min(body.len() - filled);
        if filled > limit {
            return None;
        }
        if result >> 32 != 0 {
            break;
        }
        if filled == body.len() {
            body.resize(body.len() * 2, 0);
        }
    }
    body.truncate(filled);
    unsafe { write_body(REQUEST, body.as_ptr(), len(&body)) };
    Some(body)
}

/// Headers first: without response buffering the host writes the status line (and with it the
/// headers) as soon as the status code is set.
fn respond(reply: &Reply) {
    for (name, value) in &reply.headers {
        unsafe {
            set_header_value(
                RESPONSE,
                name.as_ptr(),
                len(name.as_bytes()),
                value.as_ptr(),
                len(value.as_bytes()),
            );
        }
    }
    unsafe { set_status_code(u32::from(reply.status)) };
    unsafe { write_body(RESPONSE, reply.body.as_ptr(), len(reply.body.as_bytes())) };
}

/// The first value of a header.
fn header(kind: u32, name: &str) -> Option<String> {
    let values = read_all(|buf, limit| {
        // The count is in the high 32 bits, the length of the NUL-terminated values in the low.
        let result =
            unsafe { get_header_values(kind, name.as_ptr(), len(name.as_bytes()), buf, limit) };
        (result & 0xffff_ffff) as u32
    });
    values.split(|b| *b == 0).next().filter(|v| !v.is_empty()).map(|v| text(v.to_vec()))
}

/// Calls a `(buf, buf_limit) -> len` host function, again with a larger buffer when the value
/// did not fit (the ABI writes nothing then and returns the length needed).
fn read_all(mut call: impl FnMut(*mut u8, u32) -> u32) -> Vec<u8> {
    let mut buf = vec![0u8; 2048];
    let needed = call(buf.as_mut_ptr(), len(&buf)) as usize;
    if needed > buf.len() {
        buf = vec![0u8; needed];
        let again = call(buf.as_mut_ptr(), len(&buf)) as usize;
        buf.truncate(again.min(needed));
    } else {
        buf.truncate(needed);
    }
    buf
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into())
}

/// A buffer length as the ABI's `u32` (wasm32 memory is smaller than 4 GiB).
fn len(bytes: &[u8]) -> u32 {
    u32::try_from(bytes.len()).unwrap_or(u32::MAX)
}
