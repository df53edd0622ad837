//! `cargo run --release -p svclab-host --example review_cost [N]`: the CPU time one admission
//! review costs in-process (no HTTP, no TLS), on the native engine and on the plugin as
//! `svclab serve` runs it (pooled instances; embedded and unmetered, then metered as a
//! `--plugin` is, then with a Service policy), and the fixed cost of a fresh instance.
//!
//! Times are this thread's CPU time (`/proc/thread-self/schedstat`) over N calls (default
//! 20,000), so other processes on a shared machine do not skew them. "2 threads" runs the same
//! calls on two threads at once, as `svclab serve` does on two cores: costs that only show when
//! another thread of the process runs (TLB shootdowns of `mprotect`/`madvise`) count there.
//! "peak memory" is the guest's largest linear memory during one review.

#![allow(clippy::print_stdout, reason = "an example prints its table")]

use std::time::Duration;

use svclab_core::{AdmissionOptions, Input};
use svclab_host::{CacheDir, Engine, Limits};

/// The review `cargo xtask loadtest` sends: a two-port ClusterIP Service created.
const REVIEW: &str = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","kind":{"group":"","version":"v1","kind":"Service"},"resource":{"group":"","version":"v1","resource":"services"},"requestKind":{"group":"","version":"v1","kind":"Service"},"requestResource":{"group":"","version":"v1","resource":"services"},"name":"web","namespace":"shop","operation":"CREATE","userInfo":{"username":"alice","groups":["system:authenticated"]},"object":{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop","labels":{"app":"web"}},"spec":{"type":"ClusterIP","selector":{"app":"web"},"ports":[{"name":"http","port":80,"targetPort":8080,"protocol":"TCP"},{"name":"https","port":443,"targetPort":8443,"protocol":"TCP"}]}},"oldObject":null,"dryRun":false,"options":{"apiVersion":"meta.k8s.io/v1","kind":"CreateOptions"}}}"#;

/// A Service policy of several rules (what `--policy` loads).
const POLICY: &str = "types: {allowed: [ClusterIP, NodePort]}\n\
externalIPs: {mode: allowlist, allowedCIDRs: [192.0.2.0/24]}\n\
ports: {allowedPorts: [80, 443, 8443]}\n";

fn main() {
    let calls: u32 = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(20_000);
    let cache = CacheDir::from_env();
    let pooled = |fuel| Limits { pooling: true, pool_slots: 2, fuel, ..Limits::default() };
    let plain = AdmissionOptions::default();
    let with_policy =
        AdmissionOptions { policy: Some(Input::new("policy.yaml", POLICY)), ..plain.clone() };
    println!("CPU time per call, {calls} calls each (thread CPU time)");
    println!("| engine | options | per review | 2 threads | peak memory |");
    println!("|---|---|---:|---:|---:|");
    let engines = [
        ("native", Engine::Native),
        ("plugin, unmetered", load(pooled(None), &cache)),
        ("plugin, metered", load(pooled(Some(Limits::DEFAULT_FUEL)), &cache)),
    ];
    for (name, engine) in &engines {
        for (label, options) in [("none", &plain), ("--policy", &with_policy)] {
            let answer = engine.validate_admission(REVIEW, options).unwrap_or_else(|err| {
                panic!("{name}: {err}");
            });
            let native = Engine::Native.validate_admission(REVIEW, options).map(|o| o.output);
            let peak = answer.peak_memory_bytes.map_or_else(
                || "-".to_owned(),
                |bytes| format!("{:.2} MiB", bytes as f64 / f64::from(1 << 20)),
            );
            assert_eq!(Ok(answer.output), native, "{name}: the engines differ");
            let call = || drop(engine.validate_admission(REVIEW, options));
            let cost = per_call(calls, call);
            let two = two_threads(calls, call);
            println!("| {name} | {label} | {} | {} | {peak} |", show(cost), show(two));
        }
        if let Engine::Plugin(runner) = engine {
            let call = || drop(runner.ping());
            let cost = per_call(calls, call);
            let two = two_threads(calls, call);
            println!(
                "| {name} | fresh instance + abi-version | {} | {} | |",
                show(cost),
                show(two)
            );
        }
    }
}

fn load(limits: Limits, cache: &CacheDir) -> Engine {
    Engine::embedded_plugin(limits, cache).unwrap_or_else(|err| panic!("load: {err}"))
}

/// [`per_call`] on two threads at once; the mean of both threads' figures.
fn two_threads(calls: u32, call: impl Fn() + Sync) -> Duration {
    let costs = std::thread::scope(|scope| {
        let threads = [(); 2].map(|()| scope.spawn(|| per_call(calls, &call)));
        threads.map(|thread| thread.join().unwrap_or_default())
    });
    costs.iter().sum::<Duration>() / 2
}

fn per_call(calls: u32, mut call: impl FnMut()) -> Duration {
    for _ in 0..calls.min(200) {
        call();
    }
    let before = thread_cpu();
    for _ in 0..calls {
        call();
    }
    thread_cpu().saturating_sub(before) / calls.max(1)
}

/// CPU time this thread has run (`/proc/thread-self/schedstat`, first field, nanoseconds).
fn thread_cpu() -> Duration {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    Duration::from_nanos(text.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0))
}

fn show(duration: Duration) -> String {
    format!("{:.1} µs", duration.as_secs_f64() * 1e6)
}
