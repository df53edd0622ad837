//! libFuzzer entry of the `admission` target; the body is `svclab_fuzz::admission`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svclab_fuzz::admission(data));
