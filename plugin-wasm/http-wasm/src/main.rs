//! The svclab core as an http-wasm middleware (Traefik): a thin adapter over the `http_handler`
//! ABI (http-wasm.io/http-handler-abi) that hands the request line and the buffered body to
//! `svclab_core::gateway` and carries its answer back to the host.
//!
//! The ABI is small enough to bind by hand: the imports below are the whole of it that svclab
//! uses. `main` runs once per instance (`_start`, as for TinyGo guests): it asks the host to
//! buffer request bodies, so reading the body does not consume what goes upstream.

#[cfg(target_arch = "wasm32")]
mod guest;

#[cfg(target_arch = "wasm32")]
fn main() {
    guest::init();
}

/// Built for any other target, this program only says what it is.
#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "svclab-plugin-http-wasm is an http-wasm guest: build it with `cargo xtask plugins` (target wasm32-wasip1) and load it in Traefik"
    );
    std::process::ExitCode::FAILURE
}
