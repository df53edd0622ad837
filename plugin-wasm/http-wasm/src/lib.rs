//! The svclab core as an http-wasm middleware (Traefik): a thin adapter over the `http_handler`
//! ABI (http-wasm.io/http-handler-abi) that hands the request line and the buffered body to
//! `svclab_core::gateway` and carries its answer back to the host.
//!
//! The ABI is small enough to bind by hand: the imports in `guest.rs` are the whole of it that
//! svclab uses. The module is a reactor (no `_start`): a command module's `_start` returns
//! before the host calls `handle_request`, and the exit path it runs (thread-local and
//! `atexit` destructors) leaves the instance in a state the handler must not rely on. The
//! configuration is read on the first request instead.

#[cfg(target_arch = "wasm32")]
mod guest;
