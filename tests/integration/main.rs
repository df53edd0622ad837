//! The host's integration tests, in one binary: the `svclab` command line, the plugin artifact's
//! import/export allow-list, native = plugin parity, hostile guests, `svclab upgrade`, and the gateway guests inside real Envoy and Traefik.
//!
//! Run with `cargo test -p svclab-tests --features host --test integration` (the feature pulls
//! in wasmtime).

mod cache;
mod cli;
mod doc_test;
mod gateways;
mod hostile;
mod http_api;
mod parity;
mod plugin_abi;
mod scaling;
mod suites;
mod support;
mod upgrade;
