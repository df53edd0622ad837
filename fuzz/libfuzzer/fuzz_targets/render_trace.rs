//! libFuzzer entry of the `render_trace` target; the body is `svclab_fuzz::render_trace`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svclab_fuzz::render_trace(data));
