//! libFuzzer entry of the `check_json` target; the body is `svclab_fuzz::check_json`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svclab_fuzz::check_json(data));
