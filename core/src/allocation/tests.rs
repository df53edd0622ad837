//! Unit and property tests of the allocators: uniqueness, release, band preference, and the
//! Service-level family rules through the pipeline.

use std::collections::BTreeSet;

use expect_test::{Expect, expect};
use proptest::prelude::*;

use super::{Bitmap, IpAddressAllocator, IpRange, MetaAllocator, PortAllocator, Seeded};
use crate::net::{IpFamily, PortRange};
use crate::{CheckOptions, Input, check};

#[derive(Debug, Clone)]
enum Op {
    Next,
    Take(usize),
    Release(usize),
}

fn ops(max: usize) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        4 => Just(Op::Next),
        1 => (0..max + 2).prop_map(Op::Take),
        2 => (0..max + 2).prop_map(Op::Release),
    ];
    proptest::collection::vec(op, 0..400)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The bitmap never hands out a bit twice, release frees, and dynamic picks stay out of
    /// the static band while the dynamic band has room.
    #[test]
    fn bitmap_matches_a_set_model(max in 1usize..200, offset_pick in 0usize..64, seed in any::<u64>(), ops in ops(200)) {
        let offset = offset_pick.min(max - 1);
        let mut bitmap = Bitmap::new(max, offset);
        let mut rng = Seeded::new(seed, "prop");
        let mut model = BTreeSet::new();
        for op in ops {
            match op {
                Op::Next => {
                    let dynamic_free = (offset..max).any(|i| !model.contains(&i));
                    match bitmap.allocate_next(&mut rng) {
                        Ok(i) => {
                            prop_assert!(i < max);
                            prop_assert!(model.insert(i), "bit {} handed out twice", i);
                            if dynamic_free {
                                prop_assert!(i >= offset, "pick {} in the static band while the dynamic band had room", i);
                            }
                        }
                        Err(_) => prop_assert_eq!(model.len(), max),
                    }
                }
                Op::Take(i) => {
                    let ok = bitmap.allocate(i).is_ok();
                    prop_assert_eq!(ok, i < max && !model.contains(&i));
                    if ok { model.insert(i); }
                }
                Op::Release(i) => {
                    bitmap.release(i);
                    model.remove(&i);
                    prop_assert!(!bitmap.has(i));
                }
            }
            prop_assert_eq!(bitmap.used(), model.len());
        }
    }

    /// The run-length set behaves like a plain ordered set.
    #[test]
    fn interval_set_matches_a_set_model(ops in proptest::collection::vec((any::<bool>(), 0u128..64), 0..300), lo in 0u128..64, span in 0u128..64) {
        let mut set = super::interval_set::IntervalSet::default();
        let mut model = BTreeSet::new();
        for (add, v) in ops {
            if add { prop_assert_eq!(set.insert(v), model.insert(v)); } else { prop_assert_eq!(set.remove(v), model.remove(&v)); }
            prop_assert_eq!(set.len(), model.len() as u128);
            prop_assert!(set.is_merged(), "runs not merged after {} {}", if add { "insert" } else { "remove" }, v);
        }
        let hi = lo + span;
        prop_assert_eq!(set.count_in(lo, hi), model.range(lo..=hi).count() as u128);
        prop_assert_eq!(set.first_absent(lo, hi), (lo..hi).find(|v| !model.contains(v)));
        prop_assert_eq!(set.iter().collect::<Vec<_>>(), model.iter().copied().collect::<Vec<_>>());
    }

    /// Same properties for the IPAddress allocator on an uncapped IPv6 range.
    #[test]
    fn ip_address_allocator_never_duplicates(seed in any::<u64>(), n in 1usize..300) {
        let net = "fd00::/120".parse().unwrap_or_default();
        let mut a = IpAddressAllocator::new(net, 16, seed).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut seen = BTreeSet::new();
        for k in 0..n {
            match a.allocate_next() {
                Ok(ip) => {
                    prop_assert!(seen.insert(ip));
                    let static_band_end: std::net::IpAddr = "fd00::10".parse().unwrap_or(ip);
                    if k < 239 { prop_assert!(ip > static_band_end, "{} picked while the dynamic band had room", ip); }
                }
                Err(_) => prop_assert_eq!(seen.len(), 255),
            }
        }
        if let Some(ip) = seen.iter().next().copied() {
            a.release(ip);
            prop_assert!(!a.has(ip));
            prop_assert!(a.allocate(ip).is_ok());
        }
    }
}

/// Runs at both ends of `u128` merge without overflowing (the model test stays below 64).
#[test]
fn interval_set_merges_at_the_ends_of_the_range() {
    let mut set = super::interval_set::IntervalSet::default();
    for v in [u128::MAX, u128::MAX - 2, 0, 2, u128::MAX - 1, 1] {
        assert!(set.insert(v), "{v} was new");
        assert!(set.is_merged(), "after {v}");
    }
    assert!(!set.insert(u128::MAX) && !set.insert(0));
    assert_eq!(set.len(), 6);
    assert_eq!(set.count_in(0, 2), 3);
    assert_eq!(set.count_in(u128::MAX - 2, u128::MAX), 3);
    assert_eq!(set.first_absent(0, 10), Some(3));
}

#[test]
fn same_seed_same_picks_different_seed_different_picks() {
    let net = "10.96.0.0/12".parse().unwrap_or_default();
    let picks = |seed| {
        let mut r = IpRange::new(net, 256, seed);
        (0..5)
            .map(|_| r.allocate_next().map(|ip| ip.to_string()).unwrap_or_default())
            .collect::<Vec<_>>()
    };
    assert_eq!(picks(1), picks(1));
    assert_ne!(picks(1), picks(2));
}

#[test]
fn the_1_24_offset_on_a_slash_28_is_the_upstream_panic() {
    let net = "10.0.0.0/28".parse().unwrap_or_default();
    let mut r = IpRange::new(net, 16, 0);
    assert_eq!(r.allocate_next().map_err(|e| e.kind()), Err("Internal"));
    assert!(r.allocate("10.0.0.5".parse().unwrap_or(net.network())).is_ok());
}

#[test]
fn port_bands_follow_kep_3668() {
    let range = PortRange { base: 30000, size: 2768 };
    let p = PortAllocator::new(range, true, 0);
    assert_eq!((p.static_band(), p.dynamic_band()), (Some((30000, 30085)), Some((30086, 32767))));
}

#[test]
fn meta_allocator_reports_mismatched_network_outside_every_cidr() {
    let nets = [("10.0.0.0/24".parse().unwrap_or_default(), 16)];
    let mut m = MetaAllocator::new(IpFamily::V4, &nets, 0).unwrap_or_else(|e| panic!("{e}"));
    let outside = "10.0.1.5".parse().unwrap_or(nets[0].0.network());
    assert_eq!(
        m.allocate(outside).map_err(|e| e.to_string()),
        Err("the provided network does not match the current range".into())
    );
    let network = "10.0.0.0".parse().unwrap_or(outside);
    assert_eq!(m.allocate(network).map_err(|e| e.kind()), Err("MismatchedNetwork"));
}

/// Runs a scenario and prints each Service's outcome, IPs with bands, and the errors.
#[track_caller]
fn check_scenario(input: &str, expect: Expect) {
    let report = check(&[Input::new("s.yaml", input)], &CheckOptions::default());
    let mut out = String::new();
    for s in &report.services {
        let ips: Vec<String> =
            s.allocations.iter().map(|a| format!("{}({})", a.ip, a.band)).collect();
        let ports: Vec<String> = s.ports.iter().map(|p| p.node_port.to_string()).collect();
        out.push_str(&format!(
            "{} {} {} {:?} {:?} [{}] ports={}",
            s.name,
            s.outcome,
            s.ip_family_policy,
            s.ip_families,
            s.cluster_ips,
            ips.join(" "),
            ports.join(",")
        ));
        if s.health_check_node_port != 0 {
            out.push_str(&format!(" hc={}", s.health_check_node_port));
        }
        out.push('\n');
    }
    for d in &report.diagnostics {
        out.push_str(&format!("{} {}\n", d.reason, d.message));
    }
    expect.assert_eq(&out);
}

#[test]
fn first_fit_picks_take_the_lowest_free_value_upper_band_first() {
    // What the upstream oracle makes kube-apiserver's allocators do (every random draw 0):
    // the dynamic band starts at offset 256 of 10.96.0.0/12 (min(max(16, size/16), 256)) and
    // at 86 of 30000-32767 (min(max(16, size/32), 128)); a requested address in the dynamic
    // band is skipped by the next pick.
    let profile = |version: &str| {
        format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: '{version}'\ndynamicPicks: FirstFit\n---\n"
        )
    };
    let svc = |name: &str, spec: &str| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec: {{ports: [{{port: 80}}]{spec}}}\n---\n"
        )
    };
    let scenario = [
        svc("a", ", type: NodePort"),
        svc("taken", ", clusterIP: 10.96.1.2"),
        svc("b", ""),
        svc("c", ""),
    ]
    .concat();
    check_scenario(
        &format!("{}{scenario}", profile("1.37")),
        expect![[r#"
            a created SingleStack ["IPv4"] ["10.96.1.1"] [10.96.1.1(dynamic)] ports=30086
            taken created SingleStack ["IPv4"] ["10.96.1.2"] [10.96.1.2(dynamic)] ports=0
            b created SingleStack ["IPv4"] ["10.96.1.3"] [10.96.1.3(dynamic)] ports=0
            c created SingleStack ["IPv4"] ["10.96.1.4"] [10.96.1.4(dynamic)] ports=0
        "#]],
    );
    // 1.24 with ServiceIPStaticSubrange off (its default): no band, the first address.
    check_scenario(
        &format!("{}{}", profile("1.24"), svc("a", "")),
        expect![[r#"
            a created SingleStack ["IPv4"] ["10.96.0.1"] [10.96.0.1(none)] ports=0
        "#]],
    );
}

const DUAL: &str = "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: '1.32'\nserviceClusterIPRanges: [10.96.0.0/16, fd00::/112]\n";

#[test]
fn dual_stack_policies_and_families() {
    check_scenario(
        &format!(
            "{DUAL}---
apiVersion: v1
kind: Service
metadata: {{name: prefer}}
spec: {{selector: {{a: b}}, ipFamilyPolicy: PreferDualStack, ipFamilies: [IPv6], ports: [{{port: 80}}]}}
---
apiVersion: v1
kind: Service
metadata: {{name: require}}
spec: {{selector: {{a: b}}, ipFamilyPolicy: RequireDualStack, clusterIPs: [10.96.0.20, 'fd00::20'], clusterIP: 10.96.0.20, ports: [{{port: 80}}]}}
---
apiVersion: v1
kind: Service
metadata: {{name: headless}}
spec: {{clusterIP: None, ports: [{{port: 80}}]}}
"
        ),
        expect![[r#"
            prefer created PreferDualStack ["IPv6", "IPv4"] ["fd00::a537", "10.96.243.213"] [fd00::a537(dynamic) 10.96.243.213(dynamic)] ports=0
            require created RequireDualStack ["IPv4", "IPv6"] ["10.96.0.20", "fd00::20"] [10.96.0.20(static) fd00::20(static)] ports=0
            headless created RequireDualStack ["IPv4", "IPv6"] ["None"] [] ports=0
        "#]],
    );
}

#[test]
fn delete_releases_and_updates_keep_their_addresses() {
    check_scenario(
        "apiVersion: v1
kind: Service
metadata: {name: a}
spec: {type: NodePort, clusterIP: 10.96.0.10, ports: [{name: u, port: 53, protocol: UDP, nodePort: 30053}, {name: t, port: 53, protocol: TCP}]}
---
apiVersion: v1
kind: Service
metadata: {name: a}
spec: {type: NodePort, ports: [{name: u, port: 53, protocol: UDP}, {name: t, port: 53, protocol: TCP}]}
---
apiVersion: v1
kind: Service
metadata: {name: a, annotations: {svclab.dev/operation: delete}}
---
apiVersion: v1
kind: Service
metadata: {name: b}
spec: {type: NodePort, clusterIP: 10.96.0.10, ports: [{port: 53, nodePort: 30053}]}
",
        expect![[r#"
            a created SingleStack ["IPv4"] ["10.96.0.10"] [10.96.0.10(static)] ports=30053,30053
            a updated SingleStack ["IPv4"] ["10.96.0.10"] [10.96.0.10(static)] ports=30053,30053
            a deleted SingleStack ["IPv4"] ["10.96.0.10"] [] ports=30053,30053
            b created SingleStack ["IPv4"] ["10.96.0.10"] [10.96.0.10(static)] ports=30053
        "#]],
    );
}

#[test]
fn multi_cidr_profiles_use_service_cidr_objects() {
    check_scenario(
        "apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: '1.33'
serviceClusterIPRanges: [10.96.0.0/28]
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: extra}
spec: {cidrs: [10.100.0.0/24]}
---
apiVersion: v1
kind: Service
metadata: {name: out}
spec: {clusterIP: 10.200.0.1, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: in-extra}
spec: {clusterIP: 10.100.0.5, ports: [{port: 80}]}
",
        expect![[r#"
            out rejected SingleStack ["IPv4"] ["10.200.0.1"] [] ports=0
            in-extra created SingleStack ["IPv4"] ["10.100.0.5"] [10.100.0.5(static)] ports=0
            FieldValueInvalid spec.clusterIPs: Invalid value: []string{"10.200.0.1"}: failed to allocate IP 10.200.0.1: the provided network does not match the current range
        "#]],
    );
}

#[test]
fn r35_a_service_cidr_of_a_family_the_flags_lack_allocates_nothing() {
    // See: issue 35 (the apiserver oracle). kube-apiserver makes a MetaAllocator per family of
    // --service-cluster-ip-range (storage_core.go, 1.29 to 1.37), each taking the ServiceCIDRs
    // of its family only: an IPv6 ServiceCIDR on an IPv4 cluster is stored, IPv6 stays
    // unconfigured, and only the IPv4 one adds addresses.
    check_scenario(
        "apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: '1.33'
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: v6}
spec: {cidrs: ['fd00:98::/112']}
---
apiVersion: v1
kind: Service
metadata: {name: v6-single}
spec: {ipFamilies: [IPv6], ports: [{port: 80}]}
",
        expect![[r#"
            v6-single rejected SingleStack ["IPv6"] [] [] ports=0
            FieldValueInvalid spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster
        "#]],
    );
}

#[test]
fn r35_service_cidrs_are_created_and_updated_as_their_storage_validates_them() {
    // See: issue 35 (the apiserver oracle). pkg/apis/networking/validation/validation.go: from
    // k8s.io/kubernetes@v1.33.13 each CIDR through IsValidCIDR (host bits refused), the name a
    // DNS subdomain of a cluster-scoped object, and an update may only add a second CIDR; in
    // @v1.29.15 to @v1.32.13 netip.ParsePrefix's checks and spec.cidrs immutable whole. A
    // refused update leaves the stored ranges as they were.
    let scenario = |version: &str| {
        format!(
            "apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: '{version}'
featureGates: {{MultiCIDRServiceAllocator: true}}
serviceClusterIPRanges: [10.96.0.0/16, 'fd00:10::/108']
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {{name: hostbits}}
spec: {{cidrs: [10.213.0.5/24]}}
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {{name: Bad_Name, namespace: default}}
spec: {{cidrs: [10.214.0.0/24]}}
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {{name: grow}}
spec: {{cidrs: [10.220.0.0/24]}}
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {{name: grow}}
spec: {{cidrs: [10.220.0.0/24, 'fd00:220::/112']}}
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {{name: grow}}
spec: {{cidrs: [10.221.0.0/24]}}
---
apiVersion: v1
kind: Service
metadata: {{name: in-grown}}
spec: {{ipFamilies: [IPv6], clusterIP: 'fd00:220::5', ports: [{{port: 80}}]}}
"
        )
    };
    check_scenario(
        &scenario("1.32"),
        expect![[r#"
        in-grown rejected SingleStack ["IPv6"] ["fd00:220::5"] [] ports=0
        FieldValueInvalid spec.cidrs[0]: Invalid value: "10.213.0.5/24": wrong CIDR format, IP doesn't match network IP address
        FieldValueInvalid metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
        FieldValueInvalid spec.cidrs: Invalid value: []string{"10.220.0.0/24", "fd00:220::/112"}: field is immutable
        FieldValueInvalid spec.cidrs: Invalid value: []string{"10.221.0.0/24"}: field is immutable
        FieldValueInvalid spec.clusterIPs: Invalid value: []string{"fd00:220::5"}: failed to allocate IP fd00:220::5: the provided network does not match the current range
    "#]],
    );
    check_scenario(
        &scenario("1.33"),
        expect![[r#"
        in-grown created SingleStack ["IPv6"] ["fd00:220::5"] [fd00:220::5(static)] ports=0
        FieldValueInvalid spec.cidrs[0]: Invalid value: "10.213.0.5/24": must not have bits set beyond the prefix length
        FieldValueInvalid metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
        FieldValueInvalid spec.cidrs: Invalid value: []string{"10.221.0.0/24"}: field is immutable
    "#]],
    );
}

#[test]
fn service_cidr_objects_are_validated_and_short_ipv6_prefixes_skipped() {
    check_scenario(
        "apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: '1.34'
serviceClusterIPRanges: [10.96.0.0/24]
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: two-v4}
spec: {cidrs: [10.100.0.0/24, 10.101.0.0/24]}
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: wide-v6}
spec: {cidrs: ['fd00::/48']}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {clusterIP: 10.100.0.7, ports: [{port: 80}]}
",
        expect![[r#"
            web rejected SingleStack ["IPv4"] ["10.100.0.7"] [] ports=0
            FieldValueInvalid spec.cidrs: Invalid value: ["10.100.0.0/24","10.101.0.0/24"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64
            AllocatorNotReady ServiceCIDR "wide-v6" has no allocator: shortest allowed prefix length for service CIDR is 64, got 48
            FieldValueInvalid spec.clusterIPs: Invalid value: ["10.100.0.7"]: failed to allocate IP 10.100.0.7: the provided network does not match the current range
        "#]],
    );
}

#[test]
fn a_full_range_is_an_internal_error() {
    let mut input = String::from(
        "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: '1.32'\nserviceClusterIPRanges: [10.0.0.0/30]\n",
    );
    for name in ["a", "b", "c"] {
        input.push_str(&format!("---\napiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec: {{ports: [{{port: 80}}]}}\n"));
    }
    let report = check(&[Input::new("s.yaml", input)], &CheckOptions::default());
    let outcomes: Vec<&str> = report.services.iter().map(|s| s.outcome.as_str()).collect();
    assert_eq!(outcomes, ["created", "created", "rejected"]);
    assert_eq!(
        report.diagnostics[0].message,
        "Internal error occurred: failed to allocate a serviceIP: range is full"
    );
}

#[test]
fn r35_a_full_range_names_the_service_from_1_36() {
    // See: issue 35 (the apiserver oracle). alloc.go allocIPs: "failed to allocate a serviceIP:
    // %v" in k8s.io/kubernetes@v1.24.17 to @v1.35.8, "failed to allocate a serviceIP for Service
    // %q: %w" in @v1.36.5 and @v1.37.2.
    let scenario = |version: &str| {
        let mut input = format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: '{version}'\nserviceClusterIPRanges: [10.0.0.0/30]\n"
        );
        for name in ["a", "b", "web"] {
            input.push_str(&format!("---\napiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec: {{ports: [{{port: 80}}]}}\n"));
        }
        input
    };
    check_scenario(
        &scenario("1.35"),
        expect![[r#"
        a created SingleStack ["IPv4"] ["10.0.0.1"] [10.0.0.1(none)] ports=0
        b created SingleStack ["IPv4"] ["10.0.0.2"] [10.0.0.2(none)] ports=0
        web rejected SingleStack ["IPv4"] [""] [] ports=0
        InternalError Internal error occurred: failed to allocate a serviceIP: range is full
    "#]],
    );
    check_scenario(
        &scenario("1.36"),
        expect![[r#"
        a created SingleStack ["IPv4"] ["10.0.0.1"] [10.0.0.1(none)] ports=0
        b created SingleStack ["IPv4"] ["10.0.0.2"] [10.0.0.2(none)] ports=0
        web rejected SingleStack ["IPv4"] [""] [] ports=0
        InternalError Internal error occurred: failed to allocate a serviceIP for Service "web": range is full
    "#]],
    );
}

#[test]
fn r35_the_1_24_band_panic_is_the_500_a_client_gets() {
    // See: issue 35. With ServiceIPStaticSubrange on, 1.24's band offset of a /28 (16) exceeds
    // its 14 addresses and rand.Intn panics (kubernetes#115316): the client gets the panic
    // filter's 500 (apiserver pkg/server/filters/wrap.go WithPanicRecovery); svclab's advisory
    // says why. A requested address is allocated without a draw.
    check_scenario(
        "apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: '1.24'
featureGates: {ServiceIPStaticSubrange: true}
serviceClusterIPRanges: [10.96.0.0/28]
---
apiVersion: v1
kind: Service
metadata: {name: dyn}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: static}
spec: {clusterIP: 10.96.0.10, ports: [{port: 80}]}
",
        expect![[r#"
            dyn rejected SingleStack ["IPv4"] [""] [] ports=0
            static created SingleStack ["IPv4"] ["10.96.0.10"] [10.96.0.10(static)] ports=0
            InternalError This request caused apiserver to panic. Look in the logs for details.
            SvclabAdvisory kube-apiserver panics here: the static band offset exceeds the range (rand.Intn with a negative argument, kubernetes#115316)
        "#]],
    );
}

/// A single-stack cluster with a two-port NodePort range, so dynamic picks are forced.
const TINY_PORTS: &str = "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: '1.32'\nserviceClusterIPRanges: [10.96.0.0/16]\nserviceNodePortRange: 30000-30001\n";

/// One Service document in flow style.
fn svc(name: &str, spec: &str) -> String {
    format!("---\napiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec: {{{spec}}}\n")
}

// See: alloc.go initNodePorts — the first failing port returns; later ports are not tried.
#[test]
fn the_first_node_port_error_ends_the_create() {
    check_scenario(
        &svc(
            "a",
            "type: NodePort, ports: [{name: web, port: 80, nodePort: 29999}, {name: alt, port: 81, nodePort: 40000}]",
        ),
        expect![[r#"
            a rejected SingleStack ["IPv4"] ["10.101.39.219"] [] ports=29999,40000
            FieldValueInvalid spec.ports[0].nodePort: Invalid value: 29999: provided port is not in the valid range. The range of valid ports is 30000-32767
        "#]],
    );
}

// See: alloc.go initNodePorts/findRequestedNodePort — the first entry of a port number takes
// the nodePort a later entry of that number names, so the error names the first entry.
#[test]
fn a_shared_port_number_takes_the_later_named_node_port_at_the_first_entry() {
    check_scenario(
        &format!(
            "{}{}",
            svc("a", "type: NodePort, ports: [{port: 80, nodePort: 30053}]"),
            svc(
                "b",
                "type: NodePort, ports: [{name: u, port: 53, protocol: UDP}, {name: t, port: 53, protocol: TCP, nodePort: 30053}]"
            ),
        ),
        expect![[r#"
            a created SingleStack ["IPv4"] ["10.101.39.219"] [10.101.39.219(dynamic)] ports=30053
            b rejected SingleStack ["IPv4"] ["10.103.224.41"] [] ports=0,30053
            FieldValueInvalid spec.ports[0].nodePort: Invalid value: 30053: provided port is already allocated
        "#]],
    );
}

// See: alloc.go initNodePorts — different port numbers naming one nodePort are not shared: the
// second take hits the allocator and fails before validation could say Duplicate.
#[test]
fn two_port_numbers_naming_one_node_port_fail_at_allocation() {
    check_scenario(
        &svc(
            "a",
            "type: NodePort, ports: [{name: web, port: 80, nodePort: 30080}, {name: alt, port: 81, protocol: UDP, nodePort: 30080}]",
        ),
        expect![[r#"
            a rejected SingleStack ["IPv4"] ["10.101.39.219"] [] ports=30080,30080
            FieldValueInvalid spec.ports[1].nodePort: Invalid value: 30080: provided port is already allocated
        "#]],
    );
}

// See: alloc.go shouldAllocateNodePorts — allocateLoadBalancerNodePorts: false takes named
// nodePorts and leaves the others at 0.
#[test]
fn load_balancer_without_node_port_allocation_keeps_named_ones() {
    check_scenario(
        &svc(
            "lb",
            "type: LoadBalancer, allocateLoadBalancerNodePorts: false, ports: [{name: web, port: 80, nodePort: 30080}, {name: alt, port: 81}]",
        ),
        expect![[r#"
            lb created SingleStack ["IPv4"] ["10.101.39.219"] [10.101.39.219(dynamic)] ports=30080,0
        "#]],
    );
}

// See: alloc.go allocHealthCheckNodePort — both failures are InternalError; the dynamic text
// prints the port the failed pick returned (0).
#[test]
fn health_check_node_port_failures_are_internal_errors() {
    check_scenario(
        &format!(
            "{TINY_PORTS}{}{}{}",
            svc("a", "type: NodePort, ports: [{port: 80, nodePort: 30000}]"),
            svc(
                "b",
                "type: LoadBalancer, externalTrafficPolicy: Local, healthCheckNodePort: 30000, ports: [{port: 80, nodePort: 30001}]"
            ),
            svc(
                "c",
                "type: LoadBalancer, externalTrafficPolicy: Local, allocateLoadBalancerNodePorts: false, ports: [{port: 80, nodePort: 30001}]"
            ),
        ),
        expect![[r#"
            a created SingleStack ["IPv4"] ["10.96.243.213"] [10.96.243.213(dynamic)] ports=30000
            b rejected SingleStack ["IPv4"] ["10.96.74.38"] [] ports=30001 hc=30000
            c rejected SingleStack ["IPv4"] ["10.96.17.83"] [] ports=30001
            InternalError Internal error occurred: failed to allocate requested HealthCheck NodePort 30000: provided port is already allocated
            InternalError Internal error occurred: failed to allocate a HealthCheck NodePort 0: range is full
        "#]],
    );
}

// See: alloc.go updateNodePorts — an update does not share by port number: TCP and UDP 53
// turned NodePort get one dynamic nodePort each.
#[test]
fn an_update_to_node_port_gives_each_entry_its_own_port() {
    let ports = "ports: [{name: u, port: 53, protocol: UDP}, {name: t, port: 53, protocol: TCP}]";
    check_scenario(
        &format!(
            "{}{}",
            svc("dns", &format!("type: ClusterIP, {ports}")),
            svc("dns", &format!("type: NodePort, {ports}"))
        ),
        expect![[r#"
            dns created SingleStack ["IPv4"] ["10.101.39.219"] [10.101.39.219(dynamic)] ports=0,0
            dns updated SingleStack ["IPv4"] ["10.101.39.219"] [10.101.39.219(dynamic)] ports=30206,32688
        "#]],
    );
}

// See: alloc.go updateNodePorts — the same protocol and nodePort twice is a plain error.
#[test]
fn an_update_naming_one_node_port_twice_is_a_plain_error() {
    check_scenario(
        &format!(
            "{}{}",
            svc("a", "type: NodePort, ports: [{name: web, port: 80, nodePort: 30080}]"),
            svc(
                "a",
                "type: NodePort, ports: [{name: web, port: 80, nodePort: 30080}, {name: alt, port: 81, nodePort: 30080}]"
            ),
        ),
        expect![[r#"
            a created SingleStack ["IPv4"] ["10.101.39.219"] [10.101.39.219(dynamic)] ports=30080
            a rejected SingleStack ["IPv4"] ["10.101.39.219"] [] ports=30080,30080
            Unknown duplicate nodePort: {TCP 30080}
        "#]],
    );
}

// See: alloc.go txnUpdateNodePorts and portallocator operation.go ReleaseDeferred — ports the
// old object gives up are released only after the write, so the update cannot pick them.
#[test]
fn an_update_never_reuses_the_ports_it_gives_up() {
    check_scenario(
        &format!(
            "{TINY_PORTS}{}{}{}{}",
            svc("a", "type: NodePort, ports: [{name: web, port: 80, nodePort: 30000}]"),
            svc("b", "type: NodePort, ports: [{name: web, port: 80, nodePort: 30001}]"),
            svc("a", "type: NodePort, ports: [{name: alt, port: 80}]"),
            svc("c", "type: NodePort, ports: [{port: 80, nodePort: 30000}]"),
        ),
        expect![[r#"
            a created SingleStack ["IPv4"] ["10.96.243.213"] [10.96.243.213(dynamic)] ports=30000
            b created SingleStack ["IPv4"] ["10.96.74.38"] [10.96.74.38(dynamic)] ports=30001
            a rejected SingleStack ["IPv4"] ["10.96.243.213"] [] ports=0
            c rejected SingleStack ["IPv4"] ["10.96.17.83"] [] ports=30000
            InternalError Internal error occurred: failed to allocate a nodePort: range is full
            FieldValueInvalid spec.ports[0].nodePort: Invalid value: 30000: provided port is already allocated
        "#]],
    );
}

// See: alloc.go initIPFamilyFields (update) and updateClusterIPs — SingleStack with the lists
// unchanged trims to the primary and releases the secondary; a reduction without SingleStack
// is refused; an upgrade allocates only the secondary.
#[test]
fn dual_stack_upgrade_and_downgrade_on_update() {
    check_scenario(
        &format!(
            "{DUAL}{}{}{}{}{}",
            svc("a", "ipFamilyPolicy: SingleStack, clusterIP: 10.96.0.20, ports: [{port: 80}]"),
            svc(
                "a",
                "ipFamilyPolicy: RequireDualStack, ipFamilies: [IPv4, IPv6], ports: [{port: 80}]"
            ),
            svc(
                "a",
                "ipFamilyPolicy: PreferDualStack, clusterIPs: [10.96.0.20], clusterIP: 10.96.0.20, ports: [{port: 80}]"
            ),
            svc("a", "ipFamilyPolicy: SingleStack, ports: [{port: 80}]"),
            svc(
                "b",
                "ipFamilyPolicy: SingleStack, ipFamilies: [IPv6], clusterIP: 'fd00::a537', ports: [{port: 80}]"
            ),
        ),
        expect![[r#"
            a created SingleStack ["IPv4"] ["10.96.0.20"] [10.96.0.20(static)] ports=0
            a updated RequireDualStack ["IPv4", "IPv6"] ["10.96.0.20", "fd00::a537"] [10.96.0.20(static) fd00::a537(dynamic)] ports=0
            a rejected PreferDualStack ["IPv4"] ["10.96.0.20"] [] ports=0
            a updated SingleStack ["IPv4"] ["10.96.0.20"] [10.96.0.20(static)] ports=0
            b created SingleStack ["IPv6"] ["fd00::a537"] [fd00::a537(dynamic)] ports=0
            FieldValueInvalid spec.ipFamilyPolicy: Invalid value: "PreferDualStack": must be 'SingleStack' to release the secondary cluster IP
        "#]],
    );
}

// See: alloc.go updateHealthCheckNodePort — Cluster->Local allocates, Local->Cluster releases
// (on commit), Local->Local allocates nothing even when the value changed.
#[test]
fn external_traffic_policy_flips_move_the_health_check_port() {
    let lb = |etp: &str, extra: &str| {
        format!(
            "type: LoadBalancer, externalTrafficPolicy: {etp}, ports: [{{name: web, port: 80, nodePort: 30080}}]{extra}"
        )
    };
    check_scenario(
        &format!(
            "{}{}{}{}{}",
            svc("lb", &lb("Cluster", "")),
            svc("lb", &lb("Local", ", healthCheckNodePort: 30100")),
            svc("lb", &lb("Local", ", healthCheckNodePort: 30101")),
            svc("lb", &lb("Cluster", "")),
            svc("other", "type: NodePort, ports: [{port: 80, nodePort: 30100}]"),
        ),
        expect![[r#"
            lb created SingleStack ["IPv4"] ["10.101.39.219"] [10.101.39.219(dynamic)] ports=30080
            lb updated SingleStack ["IPv4"] ["10.101.39.219"] [10.101.39.219(dynamic)] ports=30080 hc=30100
            lb rejected SingleStack ["IPv4"] ["10.101.39.219"] [] ports=30080 hc=30101
            lb updated SingleStack ["IPv4"] ["10.101.39.219"] [10.101.39.219(dynamic)] ports=30080
            other created SingleStack ["IPv4"] ["10.103.224.41"] [10.103.224.41(dynamic)] ports=30100
            FieldValueForbidden spec.healthCheckNodePort: Forbidden: field is immutable
        "#]],
    );
}

// See: alloc.go txnUpdateNodePorts, updateClusterIPs cases A and B — leaving NodePort releases
// the node ports, going to ExternalName releases the IPs, leaving ExternalName allocates.
#[test]
fn type_changes_release_and_allocate() {
    check_scenario(
        &format!(
            "{}{}{}{}{}",
            svc("a", "type: NodePort, clusterIP: 10.96.0.30, ports: [{port: 80, nodePort: 30080}]"),
            svc("a", "type: ClusterIP, ports: [{port: 80}]"),
            svc("b", "type: NodePort, ports: [{port: 80, nodePort: 30080}]"),
            svc("a", "type: ExternalName, externalName: example.com, ports: [{port: 80}]"),
            svc("c", "clusterIP: 10.96.0.30, ports: [{port: 80}]"),
        ),
        expect![[r#"
            a created SingleStack ["IPv4"] ["10.96.0.30"] [10.96.0.30(static)] ports=30080
            a updated SingleStack ["IPv4"] ["10.96.0.30"] [10.96.0.30(static)] ports=0
            b created SingleStack ["IPv4"] ["10.101.39.219"] [10.101.39.219(dynamic)] ports=30080
            a updated  [] [] [] ports=0
            c created SingleStack ["IPv4"] ["10.96.0.30"] [10.96.0.30(static)] ports=0
        "#]],
    );
}

// See: storage.go beginUpdate (finish with success=false) — an update that fails validation
// gives back only what it took; the stored Service keeps its ports.
#[test]
fn a_rejected_update_keeps_the_old_allocation() {
    check_scenario(
        &format!(
            "{}{}{}",
            svc("a", "type: NodePort, ports: [{name: web, port: 80, nodePort: 30080}]"),
            svc(
                "a",
                "type: NodePort, sessionAffinity: Bogus, ports: [{name: web, port: 80, nodePort: 30080}, {name: alt, port: 81, nodePort: 30081}]"
            ),
            svc(
                "b",
                "type: NodePort, ports: [{port: 80, nodePort: 30081}, {port: 81, nodePort: 30080}]"
            ),
        ),
        expect![[r#"
            a created SingleStack ["IPv4"] ["10.101.39.219"] [10.101.39.219(dynamic)] ports=30080
            a rejected SingleStack ["IPv4"] ["10.101.39.219"] [] ports=30080,30081
            b rejected SingleStack ["IPv4"] ["10.103.224.41"] [] ports=30081,30080
            FieldValueNotSupported spec.sessionAffinity: Unsupported value: "Bogus": supported values: "ClientIP", "None"
            FieldValueInvalid spec.ports[1].nodePort: Invalid value: 30080: provided port is already allocated
        "#]],
    );
}

// See: alloc.go allocateCreate — ClusterIPs are allocated before node ports and the first
// error returns; storage runs BeginCreate before validation, so neither the port conflict nor
// the invalid field is reported.
#[test]
fn an_ip_error_hides_port_and_validation_errors() {
    check_scenario(
        &format!(
            "{}{}",
            svc("a", "type: NodePort, clusterIP: 10.96.0.10, ports: [{port: 80, nodePort: 30080}]"),
            svc(
                "b",
                "type: NodePort, sessionAffinity: Bogus, clusterIP: 10.96.0.10, ports: [{port: 80, nodePort: 30080}]"
            ),
        ),
        expect![[r#"
            a created SingleStack ["IPv4"] ["10.96.0.10"] [10.96.0.10(static)] ports=30080
            b rejected SingleStack ["IPv4"] ["10.96.0.10"] [] ports=30080
            FieldValueInvalid spec.clusterIPs: Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: provided IP is already allocated
        "#]],
    );
}

// See: storage.go patchAllocatedValues — only clusterIP(s), nodePorts and the health-check
// port are patched; ipFamilies are re-inferred, so a headless IPv6 Service re-applied without
// them becomes the primary family (ValidateServiceUpdate skips ipFamilies when headless).
#[test]
fn families_are_not_patched_on_update() {
    let spec = "clusterIP: None, selector: {app: web}, ports: [{port: 80}]";
    check_scenario(
        &format!("{DUAL}{}{}", svc("h", &format!("ipFamilies: [IPv6], {spec}")), svc("h", spec)),
        expect![[r#"
            h created SingleStack ["IPv6"] ["None"] [] ports=0
            h updated SingleStack ["IPv4"] ["None"] [] ports=0
        "#]],
    );
}

// See: alloc.go updateNodePorts and storage.go patchAllocatedValues — on update a nodePort
// named by two entries of different protocols is taken once (a create refuses it), and
// turning allocateLoadBalancerNodePorts off keeps the ports already held.
#[test]
fn update_node_port_rules_differ_from_create() {
    check_scenario(
        &format!(
            "{}{}{}{}",
            svc("a", "type: NodePort, ports: [{name: web, port: 80}]"),
            svc(
                "a",
                "type: NodePort, ports: [{name: web, port: 80, nodePort: 30080}, {name: alt, port: 81, protocol: UDP, nodePort: 30080}]"
            ),
            svc("lb", "type: LoadBalancer, ports: [{name: web, port: 80}]"),
            svc(
                "lb",
                "type: LoadBalancer, allocateLoadBalancerNodePorts: false, ports: [{name: web, port: 80}, {name: alt, port: 81}]"
            ),
        ),
        expect![[r#"
            a created SingleStack ["IPv4"] ["10.101.39.219"] [10.101.39.219(dynamic)] ports=30206
            a updated SingleStack ["IPv4"] ["10.101.39.219"] [10.101.39.219(dynamic)] ports=30080,30080
            lb created SingleStack ["IPv4"] ["10.103.224.41"] [10.103.224.41(dynamic)] ports=32688
            lb updated SingleStack ["IPv4"] ["10.103.224.41"] [10.103.224.41(dynamic)] ports=0,0
        "#]],
    );
}

#[test]
fn r35_turning_load_balancer_node_ports_off_drops_them_from_1_30() {
    // See: issue 35 (the apiserver oracle). patchAllocatedValues copies the old node ports into
    // ports that name none while storage.go's needsNodePort holds for both objects; from
    // k8s.io/kubernetes@v1.30.14 a LoadBalancer with allocateLoadBalancerNodePorts: false does
    // not need them, so the update gives its port up (to 1.29 it kept 30086).
    let scenario = |version: &str| {
        format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: '{version}'\ndynamicPicks: FirstFit\n---\n{}{}",
            svc("lb", "type: LoadBalancer, ports: [{name: web, port: 80}]"),
            svc(
                "lb",
                "type: LoadBalancer, allocateLoadBalancerNodePorts: false, ports: [{name: web, port: 80}]"
            ),
        )
    };
    check_scenario(
        &scenario("1.29"),
        expect![[r#"
        lb created SingleStack ["IPv4"] ["10.96.1.1"] [10.96.1.1(dynamic)] ports=30086
        lb updated SingleStack ["IPv4"] ["10.96.1.1"] [10.96.1.1(dynamic)] ports=30086
    "#]],
    );
    check_scenario(
        &scenario("1.30"),
        expect![[r#"
        lb created SingleStack ["IPv4"] ["10.96.1.1"] [10.96.1.1(dynamic)] ports=30086
        lb updated SingleStack ["IPv4"] ["10.96.1.1"] [10.96.1.1(dynamic)] ports=0
    "#]],
    );
}

/// pkg/registry/core/service/ipallocator/cidrallocator.go `MetaAllocator.AllocateService` /
/// `AllocateNextService` with `DisableAllocatorDualWrite` off (1.31 to 1.33 by default once
/// MultiCIDRServiceAllocator is on, after kubernetes/kubernetes#129798): the flag range's
/// bitmap covers only the first 2^16 addresses of an IPv6 /108, so every pick lands there and a
/// request beyond it fails with the bitmap's error. With dual write off (1.34 on) the whole
/// /108 is allocatable.
#[test]
fn dual_write_bounds_ipv6_to_the_bitmap_window() {
    let net: ipnet::IpNet = "fd00::/108".parse().unwrap_or_else(|e| panic!("{e}"));
    let mut dual = MetaAllocator::new(IpFamily::V6, &[(net, 0)], 7)
        .unwrap_or_else(|e| panic!("{e}"))
        .with_dual_write(IpRange::new(net, 0, 7));
    let window_end: std::net::IpAddr = "fd00::ffff".parse().unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..200 {
        let ip = dual.allocate_next().unwrap_or_else(|e| panic!("{e}"));
        assert!(ip <= window_end, "{ip} is outside the bitmap window");
    }
    let beyond: std::net::IpAddr = "fd00::1:5".parse().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        dual.allocate(beyond).map_err(|e| e.to_string()),
        Err("the provided IP (fd00::1:5) is not in the valid range. The range of valid IPs is fd00::/108".to_owned())
    );
    let mut objects =
        MetaAllocator::new(IpFamily::V6, &[(net, 0)], 7).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(objects.allocate(beyond), Ok(()));
    let picks: Vec<_> = (0..50).filter_map(|_| objects.allocate_next().ok()).collect();
    assert!(
        picks.iter().any(|ip| *ip > window_end),
        "the IPAddress allocator picks across the /108"
    );
}

/// The same through the Service create path, at 1.33 (dual write on by default) and 1.34
/// (`DisableAllocatorDualWrite` beta, on): a requested address past the window, and a dynamic
/// pick that with an extra ServiceCIDR still comes from the flag range while its bitmap has room.
#[test]
fn dual_write_by_release() {
    let scenario = |version: &str| {
        format!(
            "apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: '{version}'
serviceClusterIPRanges: ['fd00::/108']
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {{name: extra}}
spec: {{cidrs: ['fd01::/112']}}
---
apiVersion: v1
kind: Service
metadata: {{name: far}}
spec: {{clusterIP: 'fd00::1:5', ports: [{{port: 80}}]}}
---
apiVersion: v1
kind: Service
metadata: {{name: picked}}
spec: {{ports: [{{port: 80}}]}}
"
        )
    };
    check_scenario(
        &scenario("1.33"),
        expect![[r#"
            far rejected SingleStack ["IPv6"] ["fd00::1:5"] [] ports=0
            picked created SingleStack ["IPv6"] ["fd00::d47b"] [fd00::d47b(dynamic)] ports=0
            FieldValueInvalid spec.clusterIPs: Invalid value: []string{"fd00::1:5"}: failed to allocate IP fd00::1:5: the provided IP (fd00::1:5) is not in the valid range. The range of valid IPs is fd00::/108
        "#]],
    );
    check_scenario(
        &scenario("1.34"),
        expect![[r#"
            far created SingleStack ["IPv6"] ["fd00::1:5"] [fd00::1:5(dynamic)] ports=0
            picked created SingleStack ["IPv6"] ["fd00::2:f85"] [fd00::2:f85(dynamic)] ports=0
        "#]],
    );
}

#[test]
fn r35_a_delete_keys_the_name_first() {
    // See: issue 35 (the apiserver oracle). Store.Delete calls NamespaceKeyFunc before it
    // looks: an empty name or one a URL path cannot carry is a 400, anything else not stored a
    // 404 (apiserver pkg/registry/generic/registry/store.go, v0.24.17 to v0.37.2).
    let delete = |name: &str| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: '{name}', annotations: {{svclab.dev/operation: delete}}}}\n"
        )
    };
    check_scenario(
        &[delete(""), delete(".."), delete("a/b"), delete("absent")].join("---\n"),
        expect![[r#"
             rejected  [] [] [] ports=
            .. rejected  [] [] [] ports=
            a/b rejected  [] [] [] ports=
            absent rejected  [] [] [] ports=
            BadRequest Name parameter required.
            BadRequest Name parameter invalid: "..": may not be '..'
            BadRequest Name parameter invalid: "a/b": may not contain '/'
            NotFound services "absent" not found
        "#]],
    );
}

#[test]
fn r35_external_name_reads_back_a_changed_cluster_ip() {
    // See: issue 35 (the apiserver oracle, every release). An update to ExternalName that writes
    // another clusterIP keeps it (dropTypeDependentFields clears only unchanged ones; validation
    // forbids clusterIPs, not clusterIP), and defaultOnReadService gives it back as clusterIPs.
    check_scenario(
        "apiVersion: v1
kind: Service
metadata: {name: web}
spec: {clusterIP: 10.96.0.5, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {type: ExternalName, externalName: db.example.com, clusterIP: 10.96.1.1, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {clusterIP: 10.96.0.5, ports: [{port: 80}]}
",
        expect![[r#"
            web created SingleStack ["IPv4"] ["10.96.0.5"] [10.96.0.5(static)] ports=0
            web updated  [] ["10.96.1.1"] [] ports=0
            web rejected SingleStack [] [] [] ports=0
            FieldValueRequired spec.clusterIPs: Required value
        "#]],
    );
}
