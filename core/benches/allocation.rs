//! Allocate-next cost at several fill levels: 10.96.0.0/12 at 0/50/90/99 % and fd00::/108
//! (bitmap, capped at 2^16, and the uncapped IPAddress allocator). Each iteration allocates
//! one address and releases it again, so the fill level stays constant.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use svclab_core::testing::allocation::{IpAddressAllocator, IpRange};

fn filled_range(cidr: &str, offset: u128, fill: f64) -> IpRange {
    let net = cidr.parse().unwrap_or_default();
    let mut range = IpRange::new(net, offset, 1);
    let target = (range.size() as f64 * fill) as u128;
    while range.used() < target {
        if range.allocate_next().is_err() {
            break;
        }
    }
    range
}

fn allocate_next(c: &mut Criterion) {
    let mut group = c.benchmark_group("allocate_next");
    for (cidr, fill) in [
        ("10.96.0.0/12", 0.0),
        ("10.96.0.0/12", 0.5),
        ("10.96.0.0/12", 0.9),
        ("10.96.0.0/12", 0.99),
        ("fd00::/108", 0.0),
        ("fd00::/108", 0.9),
    ] {
        let mut range = filled_range(cidr, 256, fill);
        group.bench_function(
            BenchmarkId::new(format!("bitmap {cidr}"), format!("{:.0}%", fill * 100.0)),
            |b| {
                b.iter(|| {
                    if let Ok(ip) = range.allocate_next() {
                        range.release(black_box(ip));
                    }
                });
            },
        );
    }
    for fill in [0.0, 0.9] {
        let net = "fd00::/108".parse().unwrap_or_default();
        let mut a = IpAddressAllocator::new(net, 256, 1).unwrap_or_else(|e| panic!("{e}"));
        let target = (a.size() as f64 * fill) as u128;
        while a.used() < target {
            if a.allocate_next().is_err() {
                break;
            }
        }
        group.bench_function(
            BenchmarkId::new("ipaddress fd00::/108", format!("{:.0}%", fill * 100.0)),
            |b| {
                b.iter(|| {
                    if let Ok(ip) = a.allocate_next() {
                        a.release(black_box(ip));
                    }
                });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, allocate_next);
criterion_main!(benches);
