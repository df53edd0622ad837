//! The whole pipeline at cluster scale, over the generated scenarios of `svclab-scenario-gen`
//! (two-port Services, three-endpoint EndpointSlices, two Nodes, a KubeProxyConfiguration):
//! `check` (which also renders both rulesets when the scenario has a dataplane) and `render`
//! (`evaluate` then the iptables payload), for 1,000 and 10,000 Services with and without
//! slices. 100,000 Services are in the scaling table of `cargo xtask bench`, which times whole
//! processes.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use svclab_core::{
    CheckOptions, Input, ProxyMode, RenderOptions, Session, check, evaluate, render,
};
use svclab_scenario_gen::{Shape, generate};

fn bench_pipeline(c: &mut Criterion) {
    let options = CheckOptions::default();
    let render_options = RenderOptions::new(ProxyMode::Iptables);
    let mut group = c.benchmark_group("pipeline");
    group.sample_size(10);
    for services in [1_000, 10_000] {
        for slices in [false, true] {
            let text = generate(Shape { services, slices });
            group.throughput(Throughput::Bytes(text.len() as u64));
            let inputs = [Input::new("scenario.yaml", text)];
            let label = format!("{services} services{}", if slices { " + slices" } else { "" });
            group.bench_with_input(BenchmarkId::new("check", &label), &inputs, |b, inputs| {
                b.iter(|| check(black_box(inputs), &options))
            });
            group.bench_with_input(BenchmarkId::new("render", &label), &inputs, |b, inputs| {
                b.iter(|| {
                    let (world, _) = evaluate(black_box(inputs), &options);
                    render(&world, &render_options)
                })
            });
        }
    }
    group.finish();
}

/// A keystroke in the middle of a cluster-sized scenario being edited (the playground's case,
/// issue 39): one character typed into the middle Service's `app:` label, then the session's
/// evaluation, without the rulesets (the playground renders them only for its Rules panel).
fn bench_session(c: &mut Criterion) {
    let mut group = c.benchmark_group("session");
    group.sample_size(10);
    for services in [1_000, 10_000] {
        let text = generate(Shape { services, slices: true });
        let middle = format!("app: app-{}\n", services / 2 - 1);
        let Some(at) = text.find(&middle).map(|at| at + middle.len() - 1) else {
            panic!("the generated scenario has no line {middle:?}");
        };
        let options = CheckOptions { omit_rules: true, ..CheckOptions::default() };
        let mut session = Session::new("scenario.yaml", text, options);
        session.evaluate();
        let mut typed = false;
        let label = format!("{services} services + slices");
        group.bench_function(BenchmarkId::new("keystroke", &label), |b| {
            b.iter(|| {
                // Type a character, then take it back: every evaluation sees one document changed.
                let edit = if typed { (at..at + 1, "") } else { (at..at, "x") };
                typed = !typed;
                let _ = session.edit(edit.0, edit.1);
                black_box(session.evaluate())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_pipeline, bench_session);
criterion_main!(benches);
