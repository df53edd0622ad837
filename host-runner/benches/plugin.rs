//! `cargo bench -p svclab-host --bench plugin` (or `cargo xtask bench`): the plugin's costs next
//! to the native core's, as a table of medians: compile, load from the disk cache, per-call
//! instantiation, a 1-Service and a 1,000-Service check, a 10,000-Service render.
//!
//! Calls longer than 20 ms are timed in this thread's CPU time (`/proc/thread-self/schedstat`,
//! which has scheduler-tick resolution) when available, so other processes on a shared machine
//! do not skew the ratio; the plugin runs on the calling thread, so its time is all there.
//! Shorter calls, and compilation (which uses worker threads), are timed on the wall clock.

#![allow(clippy::print_stdout, reason = "a benchmark prints its table")]

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use svclab_core::{CheckOptions, Input, ProxyMode, RenderOptions};
use svclab_host::{CacheDir, EMBEDDED_PLUGIN, Engine, Limits, Outcome, PluginRunner};

fn main() {
    // `cargo bench` passes `--bench`; without it (`cargo test --benches`) this is a smoke test
    // on small scenarios.
    let smoke = !std::env::args().any(|arg| arg == "--bench");
    let quick = smoke || std::env::args().any(|arg| arg == "--quick");
    let runs = if quick { 1 } else { 5 };
    let (large_check, large_render) = if smoke { (10, 100) } else { (1_000, 10_000) };
    let cache_dir = std::env::temp_dir().join(format!("svclab-bench-cache-{}", std::process::id()));
    let cache = CacheDir::at(&cache_dir);

    let clock = if thread_cpu().is_some() { "thread CPU time over 20 ms" } else { "wall time" };
    println!(
        "svclab plugin benchmark (median of {runs} runs, {clock}; component {} bytes)",
        EMBEDDED_PLUGIN.len()
    );
    println!();
    println!("| what | native | plugin | plugin / native | plugin fuel | plugin memory |");
    println!("|---|---:|---:|---:|---:|---:|");

    let compile = median(runs.min(3), || {
        let started = Instant::now();
        let runner = PluginRunner::load(EMBEDDED_PLUGIN, Limits::default(), &CacheDir::disabled());
        let elapsed = started.elapsed();
        drop(runner.unwrap_or_else(|err| panic!("load: {err}")));
        elapsed
    });
    row("compile the component (no cache)", None, compile, None, None);

    // Fill the cache once, then measure a process's start: read, link, ABI check.
    let _ = PluginRunner::load(EMBEDDED_PLUGIN, Limits::default(), &cache)
        .unwrap_or_else(|err| panic!("{err}"));
    let load = median(runs, || {
        let (elapsed, runner) =
            timed(|| PluginRunner::load(EMBEDDED_PLUGIN, Limits::default(), &cache));
        assert!(runner.unwrap_or_else(|err| panic!("load: {err}")).from_cache());
        elapsed
    });
    row("load from the disk cache (deserialize + link + ABI check)", None, load, None, None);

    let engine = Engine::plugin(EMBEDDED_PLUGIN, Limits::default(), &cache)
        .unwrap_or_else(|err| panic!("{err}"));
    let Engine::Plugin(runner) = &engine else { unreachable!("a plugin engine") };
    let instantiate = median(runs.max(20), || {
        let (elapsed, answer) = timed(|| runner.ping());
        answer.unwrap_or_else(|err| panic!("ping: {err}"));
        elapsed
    });
    row("instantiate (fresh store + instance + abi-version call)", None, instantiate, None, None);

    for (label, services) in
        [("check, 1 Service", 1), (&*format!("check, {large_check} Services"), large_check)]
    {
        let inputs = [Input::new("bench.yaml", scenario(services))];
        let options = CheckOptions::default();
        compare(label, runs, &engine, |engine| engine.check(&inputs, &options));
    }
    let inputs = [Input::new("bench.yaml", scenario(large_render))];
    let options = RenderOptions::new(ProxyMode::Iptables);
    compare(&format!("render iptables, {large_render} Services"), runs.min(3), &engine, |engine| {
        engine.render(&inputs, &options)
    });
    let options = RenderOptions::new(ProxyMode::Nftables);
    compare(&format!("render nftables, {large_render} Services"), runs.min(3), &engine, |engine| {
        engine.render(&inputs, &options)
    });

    let _ = std::fs::remove_dir_all(&cache_dir);
}

/// Times `call` on the native engine and on `plugin`; checks both give the same bytes.
fn compare<F>(label: &str, runs: usize, plugin: &Engine, call: F)
where
    F: Fn(&Engine) -> Result<Outcome, svclab_host::EngineError>,
{
    let native_engine = Engine::Native;
    let native_output = call(&native_engine).unwrap_or_else(|err| panic!("{label}: {err}"));
    let plugin_output = call(plugin).unwrap_or_else(|err| panic!("{label}: {err}"));
    assert_eq!(native_output.output, plugin_output.output, "{label}: native and plugin differ");
    let native = median(runs, || timed(|| call(&native_engine)).0);
    let plugged = median(runs, || timed(|| call(plugin)).0);
    row(label, Some(native), plugged, plugin_output.fuel, plugin_output.peak_memory_bytes);
}

/// Calls at least this long are timed in thread CPU time.
const CPU_CLOCK_THRESHOLD: Duration = Duration::from_millis(20);

/// Runs `f`; its cost in thread CPU time (else wall time) and its result.
fn timed<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let cpu = thread_cpu();
    let started = Instant::now();
    let result = f();
    let wall = started.elapsed();
    let elapsed = match (cpu, thread_cpu()) {
        (Some(before), Some(after)) if wall >= CPU_CLOCK_THRESHOLD => after.saturating_sub(before),
        _ => wall,
    };
    (elapsed, result)
}

/// CPU time this thread has run (`/proc/thread-self/schedstat`, first field, nanoseconds).
fn thread_cpu() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

fn median(runs: usize, mut sample: impl FnMut() -> Duration) -> Duration {
    let mut samples: Vec<Duration> = (0..runs.max(1)).map(|_| sample()).collect();
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn row(
    label: &str,
    native: Option<Duration>,
    plugin: Duration,
    fuel: Option<u64>,
    memory: Option<usize>,
) {
    let ratio = native.map_or_else(
        || "".to_owned(),
        |native| format!("{:.2}x", plugin.as_secs_f64() / native.as_secs_f64()),
    );
    let native = native.map_or_else(|| "".to_owned(), show);
    let fuel = fuel.map_or_else(String::new, |fuel| fuel.to_string());
    let memory = memory
        .map_or_else(String::new, |bytes| format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20)));
    println!("| {label} | {native} | {} | {ratio} | {fuel} | {memory} |", show(plugin));
}

fn show(duration: Duration) -> String {
    let micros = duration.as_secs_f64() * 1e6;
    if micros < 1_000.0 {
        format!("{micros:.0} µs")
    } else {
        format!("{:.1} ms", micros / 1_000.0)
    }
}

/// `services` ClusterIP Services, each with an EndpointSlice of two ready endpoints.
fn scenario(services: usize) -> String {
    let mut text = String::from("apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nseed: 1\n");
    for i in 0..services {
        let (high, low) = (i / 250 % 250, i % 250 + 1);
        let _ = write!(
            text,
            "---\napiVersion: v1\nkind: Service\nmetadata: {{name: svc-{i}, namespace: ns-{ns}}}\n\
             spec:\n  selector: {{app: app-{i}}}\n  ports: [{{name: http, port: 80, targetPort: 8080}}]\n\
             ---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n\
             metadata:\n  name: svc-{i}-abcde\n  namespace: ns-{ns}\n  labels: {{kubernetes.io/service-name: svc-{i}}}\n\
             addressType: IPv4\nports: [{{name: http, port: 8080, protocol: TCP}}]\n\
             endpoints:\n- addresses: [10.244.{high}.{low}]\n  conditions: {{ready: true}}\n  nodeName: node-a\n\
             - addresses: [10.245.{high}.{low}]\n  conditions: {{ready: true}}\n  nodeName: node-b\n",
            ns = i % 10,
        );
    }
    text
}
