//! libFuzzer entry of the `yaml_readers` target; the body is `svclab_fuzz::yaml_readers`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svclab_fuzz::yaml_readers(data));
