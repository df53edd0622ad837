//! `check` of a generated 1,000-Service scenario end to end (parse → defaulting → allocation →
//! validation → warnings → report), plus a one-off table splitting the time by stage, and the
//! same scenario under a policy with every block set (what the policy layer adds).
//!
//! Stages are timed from outside the core with its public API: `parse` alone, validation of
//! every (already defaulted and allocated) Service alone, rendering of the report alone; the
//! rest of `check` (defaulting, allocation, storage) is the remainder.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use svclab_core::testing::validate_service_create;
use svclab_core::{
    CheckOptions, Input, Object, Profile, Service, UserInfo, check, evaluate, parse,
};

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

/// A policy with every block set, which most of the scenario passes (so every Service is
/// judged in full and stored).
const FULL_POLICY: &str = r#"
action: deny
exemptions: {namespaces: [kube-system], groups: [system:masters], services: [{namespace: ns-0, name: svc-0}]}
types: {allowed: [ClusterIP, NodePort, LoadBalancer, ExternalName]}
externalIPs: {mode: allowlist, allowedCIDRs: [192.0.2.0/24], alsoCheckAnnotations: [example.com/external-ips]}
nodePorts: {allowedRanges: ["30000-32767"], explicit: staticBandOnly, namespaceRanges: [{namespaces: [team-a-*], ranges: ["30100-30199"]}], reservations: [{port: 30443, namespace: ingress, name: nginx}]}
loadBalancer: {allowedSourceRangeCIDRs: [10.0.0.0/8], forbidOpenSourceRanges: true, loadBalancerIP: forbid, statusIngressAllowedCIDRs: [198.51.100.0/24]}
clusterIP: {explicit: staticBandOnly, namespaceCIDRs: [{namespaces: [kube-system], cidrs: [10.96.0.0/28]}], reservations: [{ip: 10.96.0.10, namespace: kube-system, name: kube-dns}]}
externalName: {deniedNames: [localhost, "*.svc.cluster.local"], forbidIPLiterals: true}
selector: {require: true, uniqueInNamespace: true}
ports: {allowedPorts: ["1-65535"], deniedPorts: [22], allowedProtocols: [TCP, UDP], requireNames: true}
endpointSlices: {manual: restrictAddresses, deniedAddressCIDRs: [127.0.0.0/8, 169.254.0.0/16]}
deprecations: {externalIPs: warn, loadBalancerIP: warn, topologyAwareHintsAnnotation: warn, tolerateUnreadyEndpointsAnnotation: warn}
nonCanonicalIPs: warn
"#;

fn with_policy() -> CheckOptions {
    CheckOptions {
        policy: Some(Input::new("policy.yaml", FULL_POLICY)),
        user_info: Some(UserInfo { username: "alice".into(), groups: vec!["dev".into()] }),
        ..CheckOptions::default()
    }
}

fn bench_check(c: &mut Criterion) {
    let inputs = [Input::new("scenario.yaml", scenario())];
    let options = CheckOptions::default();
    stage_table(&inputs, &options);
    let mut group = c.benchmark_group("check");
    group.sample_size(20);
    group.bench_function("1000 services", |b| b.iter(|| check(black_box(&inputs), &options)));
    let policy = with_policy();
    group.bench_function("1000 services with a full policy", |b| {
        b.iter(|| check(black_box(&inputs), &policy))
    });
    group.bench_function("parse", |b| b.iter(|| parse(black_box(&inputs))));
    let (world, report) = evaluate(&inputs, &options);
    let services: Vec<&Service> = world.services.values().map(|s| &*s.service).collect();
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
    let stored: Vec<&Service> = world.services.values().map(|s| &*s.service).collect();
    let validation = cost(RUNS, || {
        for s in &stored {
            black_box(validate_service_create(s, profile));
        }
    });
    let render = cost(RUNS, || {
        black_box((report.to_json(), report.to_text()));
    });
    // The policy's share is small next to `check` itself, so compare the fastest of many
    // alternating runs (the minimum is what a loaded machine disturbs least).
    let policy = with_policy();
    let (mut without_min, mut with_min) = (Duration::MAX, Duration::MAX);
    for _ in 0..3 * RUNS {
        without_min = without_min.min(cost(1, || {
            black_box(check(inputs, options));
        }));
        with_min = with_min.min(cost(1, || {
            black_box(check(inputs, &policy));
        }));
    }
    let judged = check(inputs, &policy);
    let kept = judged.services.iter().filter(|s| s.outcome == "created").count();
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
    println!(
        "  {:<46} {:>8.2} ms ({kept} created under it; fastest of {} runs each: {:.2} vs {:.2} ms)",
        "a full policy adds (check with - without)",
        ms(with_min.saturating_sub(without_min)),
        3 * RUNS,
        ms(with_min),
        ms(without_min)
    );
}

criterion_group!(benches, bench_check);
criterion_main!(benches);
