//! libFuzzer entry of the `share_link` target; the body is `svclab_fuzz::share_link`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svclab_fuzz::share_link(data));
