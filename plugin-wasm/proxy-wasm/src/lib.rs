//! The svclab core as a proxy-wasm 0.2.1 HTTP filter (Envoy, Istio `WasmPlugin`, Envoy Gateway
//! `EnvoyExtensionPolicy`): a thin adapter that hands the request line, headers and body to
//! `svclab_core::gateway` and carries its answer back to the host.
//!
//! Flow: the request headers always continue (a filter that pauses on the headers never sees
//! the body in Envoy); the body callback pauses until the end of the stream, so Envoy buffers
//! the whole body, then the core decides: forward (warnings are added to the response headers)
//! or answer locally with the apiserver's `Status` JSON.

#![allow(unsafe_code, reason = "proxy_wasm::main! exports `_initialize` with #[no_mangle]")]

use proxy_wasm::traits::{Context, HttpContext, RootContext};
use proxy_wasm::types::{Action, ContextType, LogLevel};
use svclab_core::gateway::{self, Decision, GatewayConfig, Interest, Reply, RequestHead};

// `_initialize`: the host calls it once per VM before anything else.
#[allow(missing_docs, reason = "proxy_wasm::main! generates the undocumented `_initialize` export")]
mod entry {
    use super::{LogLevel, Root, RootContext};

    proxy_wasm::main! {{
        proxy_wasm::set_log_level(LogLevel::Warn);
        proxy_wasm::set_root_context(|_| -> Box<dyn RootContext> { Box::new(Root::default()) });
    }}
}

/// The plugin context: holds the configuration every request shares.
#[derive(Default)]
struct Root {
    config: std::rc::Rc<GatewayConfig>,
}

impl Context for Root {}

impl RootContext for Root {
    fn on_configure(&mut self, _plugin_configuration_size: usize) -> bool {
        let bytes = self.get_plugin_configuration().unwrap_or_default();
        match GatewayConfig::parse(&bytes, false) {
            Ok(config) => {
                self.config = std::rc::Rc::new(config);
                true
            }
            Err(err) => {
                // Returning false makes Envoy refuse the configuration, with this line logged.
                proxy_wasm::hostcalls::log(LogLevel::Critical, &format!("svclab: {err}")).ok();
                false
            }
        }
    }

    fn create_http_context(&self, _context_id: u32) -> Option<Box<dyn HttpContext>> {
        Some(Box::new(Filter {
            config: std::rc::Rc::clone(&self.config),
            method: String::new(),
            path: String::new(),
            warnings: Vec::new(),
            judging: false,
        }))
    }

    fn get_type(&self) -> Option<ContextType> {
        Some(ContextType::HttpContext)
    }
}

/// One HTTP request.
struct Filter {
    config: std::rc::Rc<GatewayConfig>,
    method: String,
    path: String,
    /// `Warning` header values for the response of a forwarded request.
    warnings: Vec<String>,
    /// The body is being buffered for a decision.
    judging: bool,
}

impl Filter {
    fn head(&self) -> RequestHead<'_> {
        RequestHead { method: &self.method, path: &self.path, content_length: None }
    }

    fn respond(&self, reply: &Reply) -> Action {
        let headers: Vec<(&str, &str)> =
            reply.headers.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
        self.send_http_response(u32::from(reply.status), headers, Some(reply.body.as_bytes()));
        Action::Pause
    }
}

impl Context for Filter {}

impl HttpContext for Filter {
    fn on_http_request_headers(&mut self, _num_headers: usize, end_of_stream: bool) -> Action {
        self.method = self.get_http_request_header(":method").unwrap_or_default();
        self.path = self.get_http_request_header(":path").unwrap_or_default();
        let content_length = self
            .get_http_request_header("content-length")
            .and_then(|length| length.trim().parse::<u64>().ok());
        let head = RequestHead { content_length, ..self.head() };
        match gateway::interest(&self.config, &head) {
            Interest::Forward { warnings } => {
                self.warnings = warnings;
                Action::Continue
            }
            Interest::Respond(reply) => self.respond(&reply),
            Interest::Body if end_of_stream => {
                // No body at all: judge the empty body now.
                match gateway::decide(&self.config, &head, &[]) {
                    Decision::Forward { warnings } => {
                        self.warnings = warnings;
                        Action::Continue
                    }
                    Decision::Respond(reply) => self.respond(&reply),
                }
            }
            Interest::Body => {
                self.judging = true;
                Action::Continue
            }
        }
    }

    fn on_http_request_body(&mut self, body_size: usize, end_of_stream: bool) -> Action {
        if !self.judging {
            return Action::Continue;
        }
        if body_size > self.config.max_body_bytes {
            self.judging = false;
            return self.respond(&gateway::too_large(&self.config));
        }
        if !end_of_stream {
            return Action::Pause;
        }
        self.judging = false;
        let body = self.get_http_request_body(0, body_size).unwrap_or_default();
        match gateway::decide(&self.config, &self.head(), &body) {
            Decision::Forward { warnings } => {
                self.warnings = warnings;
                Action::Continue
            }
            Decision::Respond(reply) => self.respond(&reply),
        }
    }

    fn on_http_response_headers(&mut self, _num_headers: usize, _end_of_stream: bool) -> Action {
        for warning in std::mem::take(&mut self.warnings) {
            self.add_http_response_header("warning", &warning);
        }
        Action::Continue
    }
}
