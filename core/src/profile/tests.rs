//! Unit tests of profiles: version parsing, gate defaults by release, locked gates.

use expect_test::{Expect, expect};

use super::{Profile, SmallRangeRule, Version};

/// Prints the modelled gates and allocator switches of a release.
#[track_caller]
fn check(version: &str, expect: Expect) {
    let Some(v) = Version::parse(version) else { panic!("bad version {version}") };
    let p = Profile::for_version(v);
    let gates: Vec<String> =
        p.summary().feature_gates.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let out = format!(
        "{}\nbands: ip={} port={} multiCIDR={} rule={:?}\n",
        gates.join(" "),
        p.ip_static_subrange(),
        p.node_port_static_subrange(),
        p.multi_cidr(),
        p.small_range_rule()
    );
    expect.assert_eq(&out);
}

#[test]
fn kubernetes_1_24_has_no_bands_by_default() {
    check(
        "1.24",
        expect![[r#"
        MixedProtocolLBService=true ServiceIPStaticSubrange=false TopologyAwareHints=true
        bands: ip=false port=false multiCIDR=false rule=LessThan16
    "#]],
    );
}

#[test]
fn kubernetes_1_33_turns_on_the_ipaddress_allocator() {
    check(
        "v1.33.2",
        expect![[r#"
        AllowServiceLBStatusOnNonLB=false DisableAllocatorDualWrite=false LoadBalancerIPMode=true MultiCIDRServiceAllocator=true PreferSameTrafficDistribution=false ServiceTrafficDistribution=true StrictIPCIDRValidation=false TopologyAwareHints=true
        bands: ip=true port=true multiCIDR=true rule=AtMost16
    "#]],
    );
}

#[test]
fn newest_release_is_the_default() {
    assert_eq!(Profile::default().version, Version { minor: 37, patch: None });
}

#[test]
fn locked_and_unknown_gates_are_refused_like_the_apiserver() {
    let mut p = Profile::for_version(Version { minor: 26, patch: None });
    assert_eq!(
        p.set_gate("ServiceIPStaticSubrange", false),
        Err("cannot set feature gate ServiceIPStaticSubrange to false, feature is locked to true"
            .into())
    );
    assert_eq!(p.set_gate("NoSuchGate", true), Err("unrecognized feature gate: NoSuchGate".into()));
    let mut p = Profile::for_version(Version { minor: 24, patch: None });
    assert_eq!(p.set_gate("ServiceIPStaticSubrange", true), Ok(()));
    assert!(p.ip_static_subrange());
}

#[test]
fn unpatched_releases_keep_the_less_than_16_rule() {
    let rule = |v: &str| Version::parse(v).map(|v| Profile::for_version(v).small_range_rule());
    assert_eq!(rule("1.25.6"), Some(SmallRangeRule::LessThan16));
    assert_eq!(rule("1.25.7"), Some(SmallRangeRule::AtMost16));
    assert_eq!(rule("1.26"), Some(SmallRangeRule::AtMost16));
    assert_eq!(rule("1.24.17"), Some(SmallRangeRule::LessThan16));
}
