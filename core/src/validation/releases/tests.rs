//! The release tables' own invariants: one row per rule, ranges inside the modelled releases,
//! and agreement with the profile where a lower layer needs the same answer.

use expect_test::{Expect, expect};

use super::{Pin, TABLES, in_force};
use crate::profile::{NEWEST_MINOR, OLDEST_MINOR, Profile, Version};

/// Prints every row as `table | releases | pin | rule`, after checking its invariants.
fn check(expect: Expect) {
    let mut out = String::new();
    let mut ids = Vec::new();
    for (table, rows) in TABLES {
        for row in *rows {
            assert!(!ids.contains(&row.id), "{:?} has two rows", row.id);
            ids.push(row.id);
            assert!(row.since >= OLDEST_MINOR && row.since <= NEWEST_MINOR, "{:?}", row.id);
            assert!(row.until.is_none_or(|u| u >= row.since && u <= NEWEST_MINOR), "{:?}", row.id);
            // Each kind of pin names its evidence: the repository that vendors the release, the
            // pull request and its CHANGELOG, the copies, or what is missing.
            let evidence = match row.pin {
                Pin::Tag => "v0.",
                Pin::Vendored => "vendor",
                Pin::Pr => "CHANGELOG",
                Pin::Module => "k8s.io/kubernetes@v1.",
                Pin::Unpinned => "Unpinned",
            };
            assert!(row.upstream.contains(evidence), "{:?} must name its evidence", row.id);
            out.push_str(&format!("{table} | {} | {:?} | {:?}\n", row.releases(), row.pin, row.id));
        }
    }
    expect.assert_eq(&out);
}

#[test]
fn every_rule_has_one_row_within_the_modelled_releases() {
    check(expect![[r#"
        apimachinery texts | 1.24–1.33 | Tag | NilValueQuoted
        apimachinery texts | 1.34+ | Tag | JsonValues
        apimachinery texts | 1.27+ | Tag | LabelNoDots
        apimachinery texts | 1.25+ | Tag | PortNameLetterOnly
        apimachinery texts | 1.35+ | Tag | LabelKeyBytes
        apimachinery texts | 1.32+ | Tag | TooLongMayNot
        apimachinery texts | 1.24+ | Tag | NotSupportedCallerOrder
        Service rules | 1.24–1.32 | Vendored | KubeletPort
        Service rules | 1.24–1.29 | Vendored | SourceRangesWholeField
        Service rules | 1.29+ | Vendored | EtpForExternalIps
        Service rules | 1.24–1.25 | Vendored | MixedProtocolGate
        Service rules | 1.30+ | Vendored | TrafficDistributionOrder
        Service rules | 1.27+ | Vendored | TopologyModeMatch
        Service rules | 1.33+ | Vendored | SourceRangesAnnotationRatchet
        updates | 1.24+ | Tag | GenerationFromStore
        updates | 1.24+ | Tag | CommonFieldsOnUpdate
        updates | 1.37+ | Module | IdenticalCausesOnce
        updates | 1.24+ | Module | NodePortsSubset
        updates | 1.24–1.33 | Vendored | ServiceUpdateObjectMeta
        updates | 1.30+ | Module | PatchNodePortsOnlyWhenAllocated
        updates | 1.24 | Module | ClusterNameDropped
        warnings | 1.27–1.32 | Vendored | IpWarningsNetip
        warnings | 1.33+ | Tag | IpWarningsKep4858
        warnings | 1.36+ | Module | NonStandardIsInvalid
        warnings | 1.28+ | Vendored | ExternalNameIgnored
        warnings | 1.33+ | Module | EndpointSliceIpWarnings
        warnings | 1.27+ | Module | EndpointSliceFqdnDeprecated
        later warnings | 1.34+ | Vendored | HeadlessIgnored
        later warnings | 1.35+ | Pr | PreferCloseDeprecated
        later warnings | 1.36+ | Pr | ExternalIpsDeprecated
        allocation | 1.35+ | Module | ServiceIpNonFullInvalid
        allocation | 1.36+ | Module | ServiceIpFullNamesService
        ServiceCIDR | 1.33+ | Module | ServiceCidrStrictSpec
        EndpointSlice | 1.24–1.32 | Module | EndpointSliceFamilyAndSpecial
        EndpointSlice | 1.33+ | Module | EndpointSliceKep4858Addresses
        EndpointSlice | 1.33+ | Module | EndpointSlicePortsFirst
        EndpointSlice | 1.33+ | Module | EndpointSliceUnchangedEndpoints
        EndpointSlice | 1.37+ | Module | EndpointSliceDeclarativeBeta
        EndpointSlice | 1.24+ | Module | EndpointSlicePorts20000
    "#]]);
}

#[test]
fn the_profile_renders_json_values_exactly_when_the_table_says() {
    // apimachinery field/errors.go ErrorBody: v0.34.0 switched to json.Marshal; the profile
    // (below the validation layer) answers for the field-error rendering and must agree.
    for minor in OLDEST_MINOR..=NEWEST_MINOR {
        let profile = Profile::for_version(Version { minor, patch: None });
        assert_eq!(profile.json_field_values(), in_force(super::Rule::JsonValues, minor));
        assert_eq!(!profile.json_field_values(), in_force(super::Rule::NilValueQuoted, minor));
    }
}

#[test]
fn a_mark_ties_the_warnings_it_governs_and_no_error_about_the_same_object() {
    let rows = |message: &str| -> Vec<super::Rule> {
        super::governing(message).into_iter().map(|(_, row)| row.id).collect()
    };
    let address = "endpoints[12].addresses[0]: non-standard IP address \"010.1.2.3\" is invalid: use \"10.1.2.3\"";
    assert!(rows(address).contains(&super::Rule::EndpointSliceIpWarnings));
    let hostname = "endpoints[0].hostname: Invalid value: \"Bad_Host\": a lowercase RFC 1123 label";
    assert!(!rows(hostname).contains(&super::Rule::EndpointSliceIpWarnings));
    // `*` is an index, not any text.
    let service = "spec.externalIPs[0]: non-standard IP address \"010.1.2.3\" is invalid";
    assert!(!rows(service).contains(&super::Rule::EndpointSliceIpWarnings));
}
