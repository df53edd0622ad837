//! libFuzzer entry of the `gateway` target; the body is `svclab_fuzz::gateway`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svclab_fuzz::gateway(data));
