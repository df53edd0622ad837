//! Links the component with a linear memory that already holds a typical call (an
//! AdmissionReview needs ~1.2 MiB, stack included), so a call seldom grows it.
//!
//! Every call gets a fresh instance from a pooled slot. A call that grew its memory leaves the
//! slot larger than the module's initial size, and wasmtime's next instantiation in that slot
//! makes the grown pages inaccessible again (`mprotect`), as the growth itself made them
//! accessible: two `mprotect`s per call, each a TLB shootdown across the cores the server's
//! threads run on (a tenth of `svclab serve --engine plugin`'s CPU under load). With room for
//! the call from the start, nothing changes protection between calls; wasi-libc's allocator
//! uses the room between `__heap_base` and `__heap_end` before it grows memory.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_FAMILY").as_deref() == Ok("wasm") {
        println!("cargo:rustc-link-arg-cdylib=--initial-memory={INITIAL_MEMORY_BYTES}");
    }
}

/// 4 MiB: three times what a review needs; a multiple of the 64 KiB wasm page.
const INITIAL_MEMORY_BYTES: u32 = 4 << 20;
