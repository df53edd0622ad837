//! `check` of a generated 1,000-Service scenario end to end (parse → defaulting → allocation →
//! validation → warnings → report), plus a one-off table splitting the time by stage.
//!
//! Stages are timed from outside the core with its public API: `parse` alone, validation of
//! every (already defaulted and allocated) Service alone, rendering of the report alone; the
//! rest of `check` (defaulting, allocation, storage) is the remainder.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use svclab_core::testing::validate_service_create;
use svclab_core::{CheckOptions, Input, Object, Profile, Service, check, evaluate, parse};

/// 1,000 Services: 60 % ClusterIP, 25 % NodePort, 10 % LoadBalancer (half with
/// `externalTrafficPolicy: Local`), 5 % headless; one to three named ports each.
fn scenario() -> String {
    let mut out = String::new();
    for i in 0..1000 {
        let kind = match i % 20 {
            0 => "headless",
            1 | 2 => "LoadBalancer",
            3..=7 => "NodePort",
            _ => "ClusterIP",
        };
        out.push_str(&format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-{i}\n  namespace: ns-{}\n  labels: {{app: app-{i}, tier: backend}}\n  annotations: {{owner: team-{}}}\nspec:\n  selector: {{app: app-{i}}}\n",
            i % 7,
            i % 13
        ));
        match kind {
            "headless" => out.push_str("  clusterIP: None\n"),
            "LoadBalancer" if i % 40 == 1 => {
                out.push_str("  type: LoadBalancer\n  externalTrafficPolicy: Local\n")
            }
            "LoadBalancer" => {
                out.push_str("  type: LoadBalancer\n  loadBalancerSourceRanges: [10.0.0.0/8]\n")
            }
            "NodePort" => out.push_str("  type: NodePort\n"),
            _ => {}
        }
        out.push_str("  ports:\n");
        for p in 0..=(i % 3) {
            out.push_str(&format!(
                "  - name: p{p}\n    port: {}\n    targetPort: {}\n    protocol: {}\n",
                80 + p,
                8080 + p,
                if p == 2 { "UDP" } else { "TCP" }
            ));
        }
        out.push_str("---\n");
    }
    out
}

fn bench_check(c: &mut Criterion) {
    let inputs = [Input::new("scenario.yaml", scenario())];
    let options = CheckOptions::default();
    stage_table(&inputs, &options);
    let mut group = c.benchmark_group("check");
    group.sample_size(20);
    group.bench_function("1000 services", |b| b.iter(|| check(black_box(&inputs), &options)));
    group.bench_function("parse", |b| b.iter(|| parse(black_box(&inputs))));
    let (world, report) = evaluate(&inputs, &options);
    let services: Vec<&Service> = world.services.values().map(|s| &s.service).collect();
    group.bench_function("validate 1000 stored services", |b| {
        b.iter(|| {
            services
                .iter()
                .map(|s| validate_service_create(black_box(s), &world.profile).len())
                .sum::<usize>()
        })
    });
    group.bench_function("report json+text", |b| {
        b.iter(|| (report.to_json().len(), report.to_text().len()))
    });
    group.finish();
}

/// CPU time this thread has run, from `/proc/thread-self/schedstat` (nanoseconds), so the
/// table means the same on a loaded machine; `None` where that file does not exist.
fn thread_cpu() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Mean cost of `f` over `runs` runs: thread CPU time when available, else wall time.
fn cost(runs: u32, mut f: impl FnMut()) -> Duration {
    let wall = Instant::now();
    let cpu = thread_cpu();
    for _ in 0..runs {
        f();
    }
    match (cpu, thread_cpu()) {
        (Some(a), Some(b)) => (b - a) / runs,
        _ => wall.elapsed() / runs,
    }
}

#[allow(clippy::print_stdout, reason = "the bench prints its stage table for the report")]
fn stage_table(inputs: &[Input], options: &CheckOptions) {
    const RUNS: u32 = 20;
    let total = cost(RUNS, || {
        black_box(check(inputs, options));
    });
    let parse_time = cost(RUNS, || {
        black_box(parse(inputs));
    });
    let (world, report) = evaluate(inputs, options);
    let profile: &Profile = &world.profile;
    let stored: Vec<&Service> = world.services.values().map(|s| &s.service).collect();
    let validation = cost(RUNS, || {
        for s in &stored {
            black_box(validate_service_create(s, profile));
        }
    });
    let render = cost(RUNS, || {
        black_box((report.to_json(), report.to_text()));
    });
    let accepted = report.services.iter().filter(|s| s.outcome == "created").count();
    let services = parse(inputs).objects.iter().filter(|o| matches!(o, Object::Service(_))).count();
    let rest = total.saturating_sub(parse_time + validation);
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let clock = if thread_cpu().is_some() { "thread CPU time" } else { "wall time" };
    println!(
        "\nsvclab check, {services} Services ({accepted} created), mean {clock} of {RUNS} runs:"
    );
    println!("  {:<46} {:>8.2} ms", "parse (YAML, decode, positions)", ms(parse_time));
    println!("  {:<46} {:>8.2} ms", "defaulting, allocation, warnings, report (rest)", ms(rest));
    println!(
        "  {:<46} {:>8.2} ms",
        "validation (ValidateService x N, no warnings)",
        ms(validation)
    );
    println!("  {:<46} {:>8.2} ms", "check() total (core, no rendering)", ms(total));
    println!("  {:<46} {:>8.2} ms", "report rendering (to_json + to_text)", ms(render));
}

criterion_group!(benches, bench_check);
criterion_main!(benches);
