//! Rendering cost of kube-proxy rules at scale: 10,000 Services × 10 endpoints, in iptables
//! and nftables mode (target: under 150 ms per mode, native). Throughput is in payload bytes.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use svclab_core::testing::{DetectLocal, ProxyConfig, render_objects};
use svclab_core::{
    Endpoint, EndpointPort, EndpointSlice, IpFamily, ObjectMeta, ProxyMode, Service, ServicePort,
    StringMap,
};

const SERVICES: u32 = 10_000;
const ENDPOINTS: u32 = 10;

/// Services of mixed kinds (every 4th a NodePort, every 10th eTP Local LoadBalancer) with
/// ten endpoints each, a third of them on this node.
fn objects() -> (Vec<Service>, Vec<EndpointSlice>) {
    let mut services = Vec::new();
    let mut slices = Vec::new();
    for i in 0..SERVICES {
        let name = format!("svc{i}");
        let namespace = format!("ns{}", i % 50);
        let mut service = Service {
            metadata: ObjectMeta {
                name: name.clone(),
                namespace: namespace.clone(),
                ..ObjectMeta::default()
            },
            ..Service::default()
        };
        service.spec.cluster_ip = format!("172.30.{}.{}", i / 250, i % 250 + 1);
        service.spec.type_ = if i % 10 == 0 {
            "LoadBalancer".into()
        } else if i % 4 == 0 {
            "NodePort".into()
        } else {
            "ClusterIP".into()
        };
        if i % 10 == 0 {
            service.spec.external_traffic_policy = "Local".into();
            service.spec.health_check_node_port = 30000 + i32::try_from(i % 2000).unwrap_or(0);
        }
        let node_port = if service.spec.type_ == "ClusterIP" {
            0
        } else {
            30000 + i32::try_from(i % 2700).unwrap_or(0)
        };
        service.spec.ports = vec![ServicePort {
            name: "http".into(),
            protocol: "TCP".into(),
            port: 80,
            node_port,
            ..ServicePort::default()
        }];
        let mut labels = StringMap::new();
        labels.insert("kubernetes.io/service-name".to_owned(), name.clone());
        let endpoints = (0..ENDPOINTS)
            .map(|e| Endpoint {
                addresses: vec![format!("10.{}.{}.{}", (i / 250) % 250, i % 250, e + 1)],
                node_name: Some(if e % 3 == 0 { "test-node".into() } else { format!("node-{e}") }),
                ..Endpoint::default()
            })
            .collect();
        slices.push(EndpointSlice {
            metadata: ObjectMeta {
                name: format!("{name}-1"),
                namespace,
                labels,
                ..ObjectMeta::default()
            },
            address_type: "IPv4".into(),
            endpoints,
            ports: vec![EndpointPort {
                name: Some("http".into()),
                protocol: Some("TCP".into()),
                port: Some(8080),
                app_protocol: None,
            }],
        });
        services.push(service);
    }
    (services, slices)
}

fn render(c: &mut Criterion) {
    let (services, slices) = objects();
    let services: Vec<&Service> = services.iter().collect();
    let slices: Vec<&EndpointSlice> = slices.iter().collect();
    let mut config = ProxyConfig::new(IpFamily::V4);
    config.node_name = "test-node".into();
    config.detect_local =
        DetectLocal::Cidr("10.0.0.0/8".parse().unwrap_or_else(|_| unreachable!()));
    let mut group = c.benchmark_group("render_10000x10");
    group.sample_size(10);
    for mode in [ProxyMode::Iptables, ProxyMode::Nftables] {
        let size = render_objects(&services, &slices, &[], &config, mode, false).text.len();
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_function(mode.as_str(), |b| {
            b.iter(|| {
                black_box(render_objects(black_box(&services), &slices, &[], &config, mode, false))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, render);
criterion_main!(benches);
