//! A Kubewarden policy-server in miniature for the tests: the svclab policy module loaded with
//! the waPC host crates policy-server embeds (`wapc` 2.2.0, `wasmtime-provider` 2.25.0), the
//! same 2 s epoch deadline as its default `--policy-timeout`, and its call order:
//! `protocol_version`, then `validate_settings` with the policy's settings, then `validate`
//! once per admission request.
//!
//! (`kubewarden/policy-evaluator:src/policy_evaluator/policy_evaluator_builder.rs` sets
//! `EpochDeadlines` from the timeout; policy-server ticks the engine's epoch once a second.)

use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};
use wapc::{HostCallback, WapcHost};
use wasmtime_provider::{EpochDeadlines, WasmtimeEngineProviderBuilder};

/// The annotated module, built by `build.rs`.
pub const WASM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/svclab-kubewarden.wasm"));

/// policy-server's default `--policy-timeout` in seconds, which it uses as epoch ticks of one
/// second for both `wapc_init` and every waPC call.
pub const POLICY_TIMEOUT_TICKS: u64 = 2;

/// One engine and compiled module per test process, and an epoch ticker like policy-server's.
fn engine_and_module() -> Result<&'static (wasmtime::Engine, wasmtime::Module), String> {
    static COMPILED: OnceLock<Result<(wasmtime::Engine, wasmtime::Module), String>> =
        OnceLock::new();
    COMPILED
        .get_or_init(|| {
            let mut config = wasmtime::Config::new();
            config.epoch_interruption(true);
            let engine = wasmtime::Engine::new(&config).map_err(|err| format!("{err:#}"))?;
            let module = wasmtime::Module::new(&engine, WASM).map_err(|err| format!("{err:#}"))?;
            let ticking = engine.clone();
            std::thread::spawn(move || {
                loop {
                    std::thread::sleep(Duration::from_secs(1));
                    ticking.increment_epoch();
                }
            });
            Ok((engine, module))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The compiled module, for its imports and exports.
pub fn module() -> Result<&'static wasmtime::Module, String> {
    engine_and_module().map(|(_, module)| module)
}

/// A host capability answer: what policy-server's callback handler gives back for
/// `(binding, namespace, operation, payload)`.
pub type Capability = Box<dyn Fn(&str, &str, &str, &[u8]) -> Result<Vec<u8>, String> + Send + Sync>;

/// One policy as policy-server holds it: a waPC host over the module, with its settings.
pub struct Policy {
    host: WapcHost,
    settings: Value,
}

/// Why a policy could not be loaded or did not answer.
#[derive(Debug)]
pub enum PolicyError {
    /// `validate_settings` answered `valid: false` with this message.
    Settings(String),
    /// The waPC host or the guest failed (a guest error, a trap, the epoch deadline).
    Host(String),
}

impl std::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PolicyError::Settings(message) => write!(f, "invalid settings: {message}"),
            PolicyError::Host(message) => write!(f, "waPC: {message}"),
        }
    }
}

impl std::error::Error for PolicyError {}

impl Policy {
    /// Instantiates the module, checks its protocol version and validates `settings`, as
    /// policy-server does before it serves a policy. `capability` answers host calls; without
    /// it every host call fails, as for a policy-server that grants no context.
    pub fn load(settings: Value, capability: Option<Capability>) -> Result<Policy, PolicyError> {
        let (engine, module) = engine_and_module().map_err(PolicyError::Host)?;
        let provider = WasmtimeEngineProviderBuilder::new()
            .engine(engine.clone())
            .module(module.clone())
            .enable_epoch_interruptions(EpochDeadlines {
                wapc_init: POLICY_TIMEOUT_TICKS,
                wapc_func: POLICY_TIMEOUT_TICKS,
            })
            .build()
            .map_err(|err| PolicyError::Host(err.to_string()))?;
        let callback: Box<HostCallback> =
            Box::new(move |_id, binding, namespace, operation, payload| match &capability {
                Some(answer) => answer(binding, namespace, operation, payload).map_err(Into::into),
                None => Err(format!(
                    "host capability {binding}/{namespace}/{operation} is not available"
                )
                .into()),
            });
        let host = WapcHost::new(Box::new(provider), Some(callback))
            .map_err(|err| PolicyError::Host(err.to_string()))?;
        let policy = Policy { host, settings };
        let version = policy.call_json("protocol_version", b"")?;
        if version != json!("v1") {
            return Err(PolicyError::Host(format!("protocol_version answered {version}")));
        }
        let settings_payload = serde_json::to_vec(&policy.settings)
            .map_err(|err| PolicyError::Host(err.to_string()))?;
        let answer = policy.call_json("validate_settings", &settings_payload)?;
        match answer.get("valid") {
            Some(Value::Bool(true)) => Ok(policy),
            Some(Value::Bool(false)) => Err(PolicyError::Settings(
                answer.get("message").and_then(Value::as_str).unwrap_or_default().to_owned(),
            )),
            _ => Err(PolicyError::Host(format!("validate_settings answered {answer}"))),
        }
    }

    /// `validate` on one AdmissionRequest: the ValidationResponse.
    pub fn validate(&self, request: &Value) -> Result<Value, PolicyError> {
        let payload = json!({ "request": request, "settings": self.settings });
        let payload =
            serde_json::to_vec(&payload).map_err(|err| PolicyError::Host(err.to_string()))?;
        self.call_json("validate", &payload)
    }

    fn call_json(&self, operation: &str, payload: &[u8]) -> Result<Value, PolicyError> {
        let answer =
            self.host.call(operation, payload).map_err(|err| PolicyError::Host(err.to_string()))?;
        serde_json::from_slice(&answer).map_err(|err| {
            PolicyError::Host(format!(
                "{operation} answered no JSON ({err}): {}",
                String::from_utf8_lossy(&answer)
            ))
        })
    }
}
