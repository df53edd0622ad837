//! libFuzzer entry of the `policy_settings` target; the body is `svclab_fuzz::policy_settings`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svclab_fuzz::policy_settings(data));
