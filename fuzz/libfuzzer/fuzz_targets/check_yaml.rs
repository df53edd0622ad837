//! libFuzzer entry of the `check_yaml` target; the body is `svclab_fuzz::check_yaml`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svclab_fuzz::check_yaml(data));
