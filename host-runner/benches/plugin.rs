//! `cargo bench -p svclab-host --bench plugin` (or `cargo xtask bench`): the plugin's costs next
//! to the native core's, as a table of medians: compile, load from the disk cache, per-call
//! instantiation, a 1-Service and a 1,000-Service check, a 10,000-Service render.
//!
//! Native and plugin calls are timed in this thread's CPU time (`/proc/thread-self/schedstat`)
//! when available, so other processes on a shared machine do not skew the ratio (the plugin runs
//! on the calling thread, so its time is all there). That clock moves in scheduler ticks, so
//! each sample repeats the call until it spans at least 200 ms and reports the time per call.
//! Loading, instantiation and compilation (which uses worker threads) are timed on the wall.

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

    let clock = if thread_cpu().is_some() { "calls in thread CPU time" } else { "wall time" };
    println!(
        "svclab plugin benchmark (median of {runs} runs, {clock}; component {} bytes)",
        EMBEDDED_PLUGIN.len()
    );
    let compile = median(runs.min(3), || {
        let (elapsed, runner) =
            timed(|| PluginRunner::load(EMBEDDED_PLUGIN, Limits::default(), &CacheDir::disabled()));
        drop(runner.unwrap_or_else(|err| panic!("load: {err}")));
        elapsed
    });
    println!("compile the component (no cache): {}", show(compile));
    // Fill the cache once; every load below reads it.
    let _ = PluginRunner::load(EMBEDDED_PLUGIN, Limits::default(), &cache)
        .unwrap_or_else(|err| panic!("{err}"));

    let sizes = Sizes { runs, large_check, large_render };
    for (title, pooling) in [
        ("as `svclab check` runs it: one call per process, on-demand instances", false),
        ("as `svclab serve` runs it: many calls, pooled instances", true),
    ] {
        println!();
        println!("Plugin {title}:");
        println!();
        table(Limits { pooling, ..Limits::default() }, &cache, &sizes);
    }

    let _ = std::fs::remove_dir_all(&cache_dir);
}

/// Scenario sizes and repetitions.
struct Sizes {
    runs: usize,
    large_check: usize,
    large_render: usize,
}

/// One table: loading from the cache, instantiation, then the calls next to native.
fn table(limits: Limits, cache: &CacheDir, sizes: &Sizes) {
    let runs = sizes.runs;
    println!("| what | native | plugin | plugin / native | plugin fuel | plugin memory |");
    println!("|---|---:|---:|---:|---:|---:|");
    let load = median(runs, || {
        let (elapsed, runner) =
            timed(|| PluginRunner::load(EMBEDDED_PLUGIN, limits.clone(), cache));
        assert!(runner.unwrap_or_else(|err| panic!("load: {err}")).from_cache());
        elapsed
    });
    row("load from the disk cache (deserialize, link, ABI check)", None, load, None, None);
    let engine =
        Engine::plugin(EMBEDDED_PLUGIN, limits, cache).unwrap_or_else(|err| panic!("{err}"));
    let Engine::Plugin(runner) = &engine else { unreachable!("a plugin engine") };
    let instantiate = median(runs.max(20), || {
        let (elapsed, answer) = timed(|| runner.ping());
        answer.unwrap_or_else(|err| panic!("ping: {err}"));
        elapsed
    });
    row("instantiate (fresh store and instance, abi-version call)", None, instantiate, None, None);
    let large_check = sizes.large_check;
    for (label, services) in
        [("check, 1 Service", 1), (&*format!("check, {large_check} Services"), large_check)]
    {
        let inputs = [Input::new("bench.yaml", scenario(services))];
        let options = CheckOptions::default();
        compare(label, runs, &engine, |engine| engine.check(&inputs, &options));
    }
    let large_render = sizes.large_render;
    let inputs = [Input::new("bench.yaml", scenario(large_render))];
    for mode in [ProxyMode::Iptables, ProxyMode::Nftables] {
        let options = RenderOptions::new(mode);
        compare(
            &format!("render {}, {large_render} Services", mode.as_str()),
            runs.min(3),
            &engine,
            |engine| engine.render(&inputs, &options),
        );
    }
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
    let native = per_call(runs, || drop(call(&native_engine)));
    let plugged = per_call(runs, || drop(call(plugin)));
    row(label, Some(native), plugged, plugin_output.fuel, plugin_output.peak_memory_bytes);
}

/// The shortest sample: long enough for the tick-resolution CPU clock to be precise.
const MIN_SAMPLE: Duration = Duration::from_millis(200);

/// Median time per call of `call`, each sample repeating it to span [`MIN_SAMPLE`]; thread CPU
/// time when available, else wall time.
fn per_call(runs: usize, mut call: impl FnMut()) -> Duration {
    let (once, ()) = timed(&mut call);
    let repeats =
        u32::try_from(MIN_SAMPLE.as_nanos() / once.as_nanos().max(1)).unwrap_or(u32::MAX).max(1);
    median(runs, || {
        let cpu = thread_cpu();
        let started = Instant::now();
        for _ in 0..repeats {
            call();
        }
        let elapsed = match (cpu, thread_cpu()) {
            (Some(before), Some(after)) => after.saturating_sub(before),
            _ => started.elapsed(),
        };
        elapsed / repeats
    })
}

/// Runs `f` once on the wall clock; its duration and its result.
fn timed<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let started = Instant::now();
    let result = f();
    (started.elapsed(), result)
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
