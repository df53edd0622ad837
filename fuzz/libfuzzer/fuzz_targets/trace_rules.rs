//! libFuzzer entry of the `trace_rules` target; the body is `svclab_fuzz::trace_rules`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svclab_fuzz::trace_rules(data));
