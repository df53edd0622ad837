//! The svclab host: the `svclab` command line, the engines it runs the core with (native, or the
//! sandboxed WebAssembly plugin) and the admission webhook.
//!
//! `main.rs` only parses arguments and calls [`run`]; everything else lives here so the
//! integration tests can drive the command in-process with captured standard streams.

mod commands;
mod engine;
mod input;
#[cfg(target_os = "linux")]
mod linear_memory;
mod oci;
mod plugin;

// The public surface: the command line and the engines behind it.
pub use commands::{
    Cli, EngineKind, FailurePolicy, HttpResponse, Io, TlsConfig, TlsError, route, run, run_args,
};
pub use engine::{Checked, CheckedText, Engine, EngineError, Outcome, UpgradeRequest};
pub use plugin::{
    ABI_VERSION, CacheDir, CallOutput, ComponentInterface, EMBEDDED_PLUGIN, Limits, PluginError,
    PluginRunner, component_interface,
};
