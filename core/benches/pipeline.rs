//! The whole pipeline at cluster scale, over the generated scenarios of `svclab-scenario-gen`
//! (two-port Services, three-endpoint EndpointSlices, two Nodes, a KubeProxyConfiguration):
//! `check` (which also renders both rulesets when the scenario has a dataplane) and `render`
//! (`evaluate` then the iptables payload), for 1,000 and 10,000 Services with and without
//! slices. 100,000 Services are in the scaling table of `cargo xtask bench`, which times whole
//! processes.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use svclab_core::{CheckOptions, Input, ProxyMode, RenderOptions, check, evaluate, render};
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

criterion_group!(benches, bench_pipeline);
criterion_main!(benches);
