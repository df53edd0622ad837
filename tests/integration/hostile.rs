//! Hostile guests (`tests/data/wasm/*.wat`): each is stopped by its limit with a clear error,
//! quickly, and the host then serves the next call normally.

use std::time::{Duration, Instant};

use svclab_core::{CheckOptions, Input, ProxyMode, RenderOptions};
use svclab_host::{CacheDir, Engine, EngineError, Limits, PluginError};

use crate::support::plugin;

/// Loads `data/wasm/<guest>.wat` under `limits`, makes the hostile call (`check` with
/// `no-defaults`), expects `expected` within `within`, then checks that the same engine and the
/// embedded plugin both still answer.
#[track_caller]
fn check(guest: &str, limits: Limits, expected: PluginError, within: Duration) {
    let text = std::fs::read(format!("data/wasm/{guest}.wat")).expect("hostile guest fixture");
    let engine = Engine::plugin(&text, limits, &CacheDir::disabled()).expect("the guest loads");
    let inputs = [Input::new("x.yaml", "")];
    let started = Instant::now();
    let result =
        engine.check(&inputs, &CheckOptions { no_defaults: true, ..CheckOptions::default() });
    let elapsed = started.elapsed();
    match (&result, &expected) {
        // A trap's text comes from wasmtime; match its kind and the instruction.
        (Err(EngineError::Plugin(PluginError::Trap(message))), PluginError::Trap(needle)) => {
            assert!(message.contains(needle.as_str()), "{message:?} does not mention {needle:?}");
        }
        _ => assert_eq!(result, Err(EngineError::Plugin(expected.clone()))),
    }
    assert!(elapsed < within, "{guest}: stopped after {elapsed:?}, limit {within:?}");

    let next = engine.check(&inputs, &CheckOptions::default()).expect("the next call is served");
    assert_eq!(next.output, "ok");
    assert_eq!(engine.diagnose(&inputs, &CheckOptions::default()), Ok(Vec::new()));
    let real =
        plugin().check(&[Input::new("x.yaml", "")], &CheckOptions::default()).expect("real plugin");
    assert!(real.output.contains("\"kind\": \"Report\""));
}

#[test]
fn endless_loop_runs_out_of_fuel() {
    let limits =
        Limits { fuel: Some(50_000_000), timeout: Duration::from_secs(60), ..Limits::default() };
    check(
        "endless-loop",
        limits,
        PluginError::OutOfFuel { fuel: 50_000_000 },
        Duration::from_secs(5),
    );
}

#[test]
fn endless_loop_hits_the_deadline() {
    let timeout = Duration::from_millis(200);
    let limits = Limits { fuel: Some(u64::MAX), timeout, ..Limits::default() };
    check("endless-loop", limits, PluginError::Timeout { timeout }, Duration::from_secs(5));
}

#[test]
fn unbounded_memory_growth_hits_the_memory_limit() {
    // Metered, in wasmtime's memories; unmetered, in the host's own (the command's default for
    // the embedded plugin: host-runner/src/linear_memory.rs).
    for fuel in [Some(Limits::DEFAULT_FUEL), None] {
        let limits = Limits { max_memory_bytes: 64 << 20, fuel, ..Limits::default() };
        check(
            "memory-growth",
            limits,
            PluginError::MemoryLimit { limit: 64 << 20 },
            Duration::from_secs(5),
        );
    }
}

#[test]
fn an_answer_larger_than_wasmtimes_default_copy_limit_is_taken() {
    // 200 MiB out of the guest in one call: past wasmtime's default 128 MiB per copy, within
    // the 1 GiB memory limit, which is what bounds the copy (`new_store` in plugin.rs).
    let text = std::fs::read("data/wasm/large-output.wat").expect("guest fixture");
    let engine = Engine::plugin(&text, Limits::default(), &CacheDir::disabled()).expect("loads");
    let options = CheckOptions { no_defaults: true, ..CheckOptions::default() };
    let checked = engine.check(&[Input::new("x.yaml", "")], &options).expect("the answer is taken");
    assert_eq!(checked.output.len(), 200 << 20);
    assert!(checked.output.bytes().all(|b| b == b'a'));
}

#[test]
fn endless_ruleset_pieces_stop_at_the_memory_limit() {
    // `render-next` that never ends: what the host takes is bounded by the memory limit, like
    // one answer, rather than by the deadline while the pieces pour out.
    let text = std::fs::read("data/wasm/large-output.wat").expect("guest fixture");
    let limits = Limits { max_memory_bytes: 64 << 20, ..Limits::default() };
    let engine = Engine::plugin(&text, limits, &CacheDir::disabled()).expect("loads");
    let started = Instant::now();
    let mut out = Vec::new();
    let options = RenderOptions::new(ProxyMode::Iptables);
    let result = engine.render_to(vec![Input::new("x.yaml", "")], &options, &mut out);
    assert_eq!(
        result.err(),
        Some(EngineError::Plugin(PluginError::MemoryLimit { limit: 64 << 20 }))
    );
    assert_eq!(out.len(), 64 << 20, "every piece within the limit was written");
    assert!(started.elapsed() < Duration::from_secs(5), "stopped after {:?}", started.elapsed());
    let next = engine.check(&[Input::new("x.yaml", "")], &CheckOptions::default());
    assert_eq!(next.expect("the next call is served").output, "ok");
}

#[test]
fn trap_mid_call_is_reported() {
    check(
        "trap",
        Limits::default(),
        PluginError::Trap("unreachable".into()),
        Duration::from_secs(5),
    );
}

#[test]
fn wrong_abi_version_is_refused_at_load() {
    let text = std::fs::read("data/wasm/wrong-abi.wat").expect("hostile guest fixture");
    let err = Engine::plugin(&text, Limits::default(), &CacheDir::disabled()).expect_err("refused");
    assert_eq!(err, EngineError::Plugin(PluginError::AbiVersion { found: 999, expected: 6 }));
    assert_eq!(
        err.to_string(),
        "plugin speaks svclab:policy ABI version 999, this host speaks version 6"
    );
}

#[test]
fn garbage_is_refused_at_load() {
    let err = Engine::plugin(b"\0asm garbage", Limits::default(), &CacheDir::disabled())
        .expect_err("refused");
    assert!(matches!(err, EngineError::Plugin(PluginError::Load(_))), "{err:?}");
}

#[test]
fn pooled_instances_are_limited_and_reset_too() {
    // What `svclab serve` runs: instance slots are reused between calls, so a hostile call must
    // leave nothing behind for the next one.
    let pooled = Limits {
        pooling: true,
        max_memory_bytes: 64 << 20,
        fuel: Some(50_000_000),
        ..Limits::default()
    };
    check(
        "memory-growth",
        pooled.clone(),
        PluginError::MemoryLimit { limit: 64 << 20 },
        Duration::from_secs(5),
    );
    check(
        "endless-loop",
        pooled.clone(),
        PluginError::OutOfFuel { fuel: 50_000_000 },
        Duration::from_secs(5),
    );
    check("trap", pooled, PluginError::Trap("unreachable".into()), Duration::from_secs(5));
}

#[test]
fn every_call_sees_a_fresh_instance() {
    // A guest that reads what the previous call wrote (in its data segment, a zero page and a
    // grown page) and says whether it found anything: under the pooling allocator the same slot
    // and its resident pages are reused, and only the pages a call dirtied are reset.
    let text = std::fs::read("data/wasm/fresh-state.wat").expect("guest fixture");
    let review = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#;
    for (pooling, fuel) in [(true, None), (true, Some(50_000_000)), (false, None)] {
        let limits = Limits { pooling, pool_slots: 1, fuel, ..Limits::default() };
        let engine = Engine::plugin(&text, limits, &CacheDir::disabled()).expect("the guest loads");
        let answers: Vec<String> = (0..4)
            .map(|_| {
                let answer = engine.validate_admission(review, &Default::default());
                answer.expect("the guest answers").output
            })
            .collect();
        assert_eq!(answers, ["fresh"; 4], "pooling {pooling}, fuel {fuel:?}");
    }
}
