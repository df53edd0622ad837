//! Unit tests of profiles: version parsing, gate defaults by release, locked gates.

use expect_test::{Expect, expect};

use super::{FEATURES, Feature, GATES, Profile, SmallRangeRule, Version};

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
            EndpointSliceTerminatingCondition=true MixedProtocolLBService=true ServerSideFieldValidation=false ServiceIPStaticSubrange=false ServiceInternalTrafficPolicy=true ServiceLBNodePortControl=true ServiceLoadBalancerClass=true TopologyAwareHints=true
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

#[test]
fn gates_lock_and_disappear_in_the_releases_read() {
    // pkg/features/kube_features.go: MultiCIDRServiceAllocator GA without LockToDefault in
    // v1.33.3, locked in v1.34.1; DisableAllocatorDualWrite GA unlocked in v1.34.1, locked from
    // 1.35; AllowServiceLBStatusOnNonLB deprecated (settable) in v1.29.0 to v1.31.0, locked off
    // from v1.32.10, gone from 1.35; LoadBalancerIPMode still listed in v1.34.1;
    // TopologyAwareHints present through 1.35, gone in 1.36; ServiceLBNodePortControl locked in
    // v1.24.0 and v1.25.0, gone in v1.26.1.
    let mut out = String::new();
    for (minor, gate, value) in [
        (33, "MultiCIDRServiceAllocator", false),
        (34, "MultiCIDRServiceAllocator", false),
        (34, "DisableAllocatorDualWrite", false),
        (35, "DisableAllocatorDualWrite", false),
        (31, "AllowServiceLBStatusOnNonLB", true),
        (32, "AllowServiceLBStatusOnNonLB", true),
        (35, "AllowServiceLBStatusOnNonLB", false),
        (34, "LoadBalancerIPMode", true),
        (35, "TopologyAwareHints", true),
        (36, "TopologyAwareHints", true),
        (25, "ServiceLBNodePortControl", true),
        (25, "ServiceLBNodePortControl", false),
        (26, "ServiceLBNodePortControl", true),
        // Issue 35 (the apiserver oracle), read in the k8s.io/kubernetes and k8s.io/apiserver
        // modules of each release: MultiCIDRServiceAllocator is still there, locked, in 1.37;
        // RelaxedServiceNameValidation is locked in 1.37; the generic ServerSideFieldValidation
        // is alpha in 1.24, locked from 1.27, gone in 1.32; DeclarativeValidationBeta is beta
        // from 1.36.
        (37, "MultiCIDRServiceAllocator", false),
        (37, "RelaxedServiceNameValidation", false),
        (24, "ServerSideFieldValidation", true),
        (27, "ServerSideFieldValidation", false),
        (32, "ServerSideFieldValidation", true),
        (35, "DeclarativeValidationBeta", false),
        (37, "DeclarativeValidationBeta", false),
    ] {
        let mut p = Profile::for_version(Version { minor, patch: None });
        let result = p.set_gate(gate, value).map(|()| format!("ok, now {}", p.gate_named(gate)));
        let result = result.unwrap_or_else(|e| format!("{e}; in effect {}", p.gate_named(gate)));
        out.push_str(&format!("1.{minor} {gate}={value}: {result}\n"));
    }
    expect![[r#"
        1.33 MultiCIDRServiceAllocator=false: ok, now false
        1.34 MultiCIDRServiceAllocator=false: cannot set feature gate MultiCIDRServiceAllocator to false, feature is locked to true; in effect true
        1.34 DisableAllocatorDualWrite=false: ok, now false
        1.35 DisableAllocatorDualWrite=false: cannot set feature gate DisableAllocatorDualWrite to false, feature is locked to true; in effect true
        1.31 AllowServiceLBStatusOnNonLB=true: ok, now true
        1.32 AllowServiceLBStatusOnNonLB=true: cannot set feature gate AllowServiceLBStatusOnNonLB to true, feature is locked to false; in effect false
        1.35 AllowServiceLBStatusOnNonLB=false: unrecognized feature gate: AllowServiceLBStatusOnNonLB; in effect false
        1.34 LoadBalancerIPMode=true: ok, now true
        1.35 TopologyAwareHints=true: ok, now true
        1.36 TopologyAwareHints=true: unrecognized feature gate: TopologyAwareHints; in effect true
        1.25 ServiceLBNodePortControl=true: ok, now true
        1.25 ServiceLBNodePortControl=false: cannot set feature gate ServiceLBNodePortControl to false, feature is locked to true; in effect true
        1.26 ServiceLBNodePortControl=true: unrecognized feature gate: ServiceLBNodePortControl; in effect true
        1.37 MultiCIDRServiceAllocator=false: cannot set feature gate MultiCIDRServiceAllocator to false, feature is locked to true; in effect true
        1.37 RelaxedServiceNameValidation=false: cannot set feature gate RelaxedServiceNameValidation to false, feature is locked to true; in effect true
        1.24 ServerSideFieldValidation=true: ok, now true
        1.27 ServerSideFieldValidation=false: cannot set feature gate ServerSideFieldValidation to false, feature is locked to true; in effect true
        1.32 ServerSideFieldValidation=true: unrecognized feature gate: ServerSideFieldValidation; in effect true
        1.35 DeclarativeValidationBeta=false: unrecognized feature gate: DeclarativeValidationBeta; in effect false
        1.37 DeclarativeValidationBeta=false: ok, now false
    "#]].assert_eq(&out);
}

#[test]
fn relaxed_service_names_and_strict_cidrs_are_on_by_default_from_1_36() {
    // Both are "(ALPHA - default=false)" in the `--feature-gates` help of v1.35 and
    // "(BETA - default=true)" in that of v1.36 (kubernetes/website's generated references).
    let defaults = |minor| {
        let p = Profile::for_version(Version { minor, patch: None });
        (p.gate(Feature::RelaxedServiceNameValidation), p.gate(Feature::StrictIPCIDRValidation))
    };
    assert_eq!(defaults(35), (false, false));
    assert_eq!(defaults(36), (true, true));
    assert_eq!(defaults(37), (true, true));
}

#[test]
fn every_feature_names_its_row_of_the_gate_table() {
    // `Profile::gate` reads a gate by its variant's index into GATES.
    for (i, feature) in FEATURES.iter().enumerate() {
        assert_eq!(*feature as usize, i, "{feature:?}");
        assert_eq!(format!("{feature:?}"), GATES[i].name, "row {i}");
    }
    // A gate before its first release is off; by name, one the table does not list is off.
    let p = Profile::for_version(Version { minor: 30, patch: None });
    assert!(!p.gate(Feature::DisableAllocatorDualWrite));
    assert!(!p.gate_named("NoSuchGate"));
    assert!(p.gate_named("ServiceInternalTrafficPolicy"));
}
