//! libFuzzer entry of the `structured` target; the body is `svclab_fuzz::structured`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svclab_fuzz::structured(data));
