//! Warnings kube-apiserver returns for accepted objects (`GetWarningsForService`, the
//! EndpointSlice strategy's `WarningsOnCreate`/`WarningsOnUpdate`), each only in the releases that emit it, and svclab's own
//! advisories for deprecations the apiserver never warns about.

mod netip;

use std::net::IpAddr;

use crate::field::go_quote;
use crate::model::well_known::{
    DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS, LABEL_MANAGED_BY,
    TOLERATE_UNREADY_ENDPOINTS_ANNOTATION,
};
use crate::model::{EndpointSlice, Service};
use crate::net::{go_ip_string, parse_cidr_sloppy, parse_ip_sloppy};
use crate::profile::Profile;
use crate::validation::releases::{Rule, in_force};

/// One warning line with the field it is about (for its source position).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Warning {
    /// Field path for the source position (empty: the object).
    pub(crate) path: String,
    /// The full text kubectl prints after `Warning: `.
    pub(crate) message: String,
}

fn warning(path: &str, message: String) -> Warning {
    Warning { path: path.to_owned(), message }
}

/// `getWarningsForIP` of 1.27 to 1.32 (`pkg/api/service/warnings.go`): any value `netip`
/// refuses (leading zeros, and any `loadBalancerIP` that is not an IP at all) and non-RFC-5952
/// IPv6.
fn netip_ip_warning(path: &str, value: &str) -> Option<String> {
    match netip::parse_addr(value) {
        Err(e) => Some(format!(
            "{path}: IP address was accepted, but will be invalid in a future Kubernetes release: {e}"
        )),
        Ok((ip, zone)) => {
            let canonical = netip::addr_string(ip, &zone);
            (ip.is_ipv6() && canonical != value).then(|| {
                format!(
                    "{path}: IPv6 address {} is not in RFC 5952 canonical format ({}), which may cause controller apply-loops",
                    go_quote(value),
                    go_quote(&canonical)
                )
            })
        }
    }
}

/// `getWarningsForCIDR` of 1.27 to 1.32: no ambiguous-CIDR warning yet.
fn netip_cidr_warning(path: &str, value: &str) -> Option<String> {
    match netip::parse_prefix(value) {
        Err(e) => Some(format!(
            "{path}: IP prefix was accepted, but will be invalid in a future Kubernetes release: {e}"
        )),
        Ok((ip, bits)) => {
            let canonical = format!("{ip}/{bits}");
            (ip.is_ipv6() && canonical != value).then(|| {
                format!(
                    "{path}: IPv6 prefix {} is not in RFC 5952 canonical format ({}), which may cause controller apply-loops",
                    go_quote(value),
                    go_quote(&canonical)
                )
            })
        }
    }
}

/// Go `netip.ParsePrefix` and `Prefix.String()`: the address, the length and the canonical
/// text, or the error text (for ServiceCIDR validation of 1.29 to 1.32).
pub(crate) fn parse_prefix_netip(text: &str) -> Result<(IpAddr, u8, String), String> {
    let (ip, bits) = netip::parse_prefix(text)?;
    let canonical = format!("{}/{bits}", netip::addr_string(ip, ""));
    Ok((ip, u8::try_from(bits).unwrap_or(u8::MAX), canonical))
}

/// The IP warning of the release, if it warns about IPs at all.
fn ip_warning_at(minor: u32, path: &str, value: &str) -> Option<String> {
    if in_force(Rule::IpWarningsKep4858, minor) {
        ip_warning(minor, path, value)
    } else if in_force(Rule::IpWarningsNetip, minor) {
        netip_ip_warning(path, value)
    } else {
        None
    }
}

/// The CIDR warnings of the release.
fn cidr_warnings_at(minor: u32, path: &str, value: &str) -> Vec<String> {
    if in_force(Rule::IpWarningsKep4858, minor) {
        cidr_warnings(minor, path, value)
    } else if in_force(Rule::IpWarningsNetip, minor) {
        netip_cidr_warning(path, value).into_iter().collect()
    } else {
        Vec::new()
    }
}
/// `GetWarningsForIP`: non-standard (leading zeros, IPv4-mapped) or non-RFC-5952 addresses.
pub(crate) fn ip_warning(minor: u32, path: &str, value: &str) -> Option<String> {
    let ip = parse_ip_sloppy(value)?;
    let strict: Option<IpAddr> = value.parse().ok();
    let mapped = matches!(strict, Some(IpAddr::V6(v6)) if v6.to_ipv4_mapped().is_some());
    match strict {
        None => Some(non_standard_ip(minor, path, value, ip)),
        Some(_) if mapped => Some(non_standard_ip(minor, path, value, ip)),
        Some(IpAddr::V6(v6)) if v6.to_string() != value => Some(format!(
            "{path}: IPv6 address {} should be in RFC 5952 canonical format ({})",
            go_quote(value),
            go_quote(&v6.to_string())
        )),
        Some(_) => None,
    }
}

fn non_standard_ip(minor: u32, path: &str, value: &str, ip: IpAddr) -> String {
    format!(
        "{path}: non-standard IP address {} {}: use {}",
        go_quote(value),
        non_standard_verdict(minor),
        go_quote(&go_ip_string(ip))
    )
}

/// What a non-standard IP or CIDR value is said to be: "will be considered invalid in a future
/// Kubernetes release" in 1.33 to 1.35, "is invalid" from 1.36 (`releases::Rule::
/// NonStandardIsInvalid`).
fn non_standard_verdict(minor: u32) -> &'static str {
    if in_force(Rule::NonStandardIsInvalid, minor) {
        "is invalid"
    } else {
        "will be considered invalid in a future Kubernetes release"
    }
}

/// `GetWarningsForCIDR`: host bits set, non-standard form, then (only if neither) non-canonical
/// IPv6.
pub(crate) fn cidr_warnings(minor: u32, path: &str, value: &str) -> Vec<String> {
    let Some((ip, net)) = parse_cidr_sloppy(value) else { return Vec::new() };
    let mut out = Vec::new();
    let unmapped = crate::net::unmap(ip);
    if unmapped != net.network() {
        let bits = if net.network().is_ipv4() { 32 } else { 128 };
        out.push(format!(
            "{path}: CIDR value {} is ambiguous in this context (should be {} or {}?)",
            go_quote(value),
            go_quote(&net.to_string()),
            go_quote(&format!("{}/{bits}", go_ip_string(ip)))
        ));
    }
    let strict = strict_prefix(value);
    let mapped = matches!(strict, Some((IpAddr::V6(v6), _)) if v6.to_ipv4_mapped().is_some());
    if strict.is_none() || mapped {
        out.push(format!(
            "{path}: non-standard CIDR value {} {}: use {}",
            go_quote(value),
            non_standard_verdict(minor),
            go_quote(&net.to_string())
        ));
    }
    if out.is_empty()
        && let Some((IpAddr::V6(v6), len)) = strict
    {
        let canonical = format!("{v6}/{len}");
        if canonical != value {
            out.push(format!(
                "{path}: IPv6 CIDR value {} should be in RFC 5952 canonical format ({})",
                go_quote(value),
                go_quote(&canonical)
            ));
        }
    }
    out
}

/// Go `netip.ParsePrefix`.
fn strict_prefix(value: &str) -> Option<(IpAddr, u8)> {
    let (addr, len) = value.split_once('/')?;
    let ip: IpAddr = addr.parse().ok()?;
    if len.is_empty()
        || !len.bytes().all(|b| b.is_ascii_digit())
        || (len.len() > 1 && len.starts_with('0'))
    {
        return None;
    }
    let len: u8 = len.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (len <= max).then_some((ip, len))
}

/// `GetWarningsForService`, in emission order, for the profile's release.
pub(crate) fn service_warnings(svc: &Service, profile: &Profile) -> Vec<Warning> {
    let minor = profile.version.minor;
    let spec = &svc.spec;
    let mut out = Vec::new();
    if in_force(Rule::TopologyModeMatch, minor)
        && svc.metadata.annotations.contains_key(DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS)
    {
        out.push(warning(
            "metadata.annotations",
            format!(
                "annotation {DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS} is deprecated, please use service.kubernetes.io/topology-mode instead"
            ),
        ));
    }
    if !spec.cluster_ip.is_empty() && spec.cluster_ip != "None" {
        for (i, ip) in spec.cluster_ips.iter().enumerate() {
            let path = format!("spec.clusterIPs[{i}]");
            out.extend(ip_warning_at(minor, &path, ip).map(|m| warning(&path, m)));
        }
    }
    // Headless as the warnings see it: type ClusterIP and clusterIP None.
    let headless = spec.type_ == "ClusterIP" && spec.cluster_ip == "None";
    if in_force(Rule::HeadlessIgnored, minor) && headless {
        if !spec.load_balancer_ip.is_empty() {
            out.push(warning(
                "spec.loadBalancerIP",
                "spec.loadBalancerIP is ignored for headless services".into(),
            ));
        }
        if !spec.external_ips.is_empty() {
            out.push(warning(
                "spec.externalIPs",
                "spec.externalIPs is ignored for headless services".into(),
            ));
        }
        // 1.34.0 and 1.34.1 warned for every headless Service (#134040); the fix (#134054) was
        // cherry-picked to release-1.34 as #134133, which we take to ship in 1.34.2.
        let always = minor == 34 && profile.version.patch.is_some_and(|p| p < 2);
        if always || spec.session_affinity != "None" {
            out.push(warning(
                "spec.sessionAffinity",
                "spec.SessionAffinity is ignored for headless services".into(),
            ));
        }
    }
    for (i, ip) in spec.external_ips.iter().enumerate() {
        let path = format!("spec.externalIPs[{i}]");
        out.extend(ip_warning_at(minor, &path, ip).map(|m| warning(&path, m)));
    }
    if in_force(Rule::ExternalIpsDeprecated, minor)
        && !spec.external_ips.is_empty()
        && !headless
        && spec.type_ != "ExternalName"
    {
        out.push(warning(
            "spec.externalIPs",
            "spec.externalIPs is deprecated and may no longer be implemented in some clusters"
                .into(),
        ));
    }
    if !spec.load_balancer_ip.is_empty() {
        out.extend(
            ip_warning_at(minor, "spec.loadBalancerIP", &spec.load_balancer_ip)
                .map(|m| warning("spec.loadBalancerIP", m)),
        );
    }
    for (i, cidr) in spec.load_balancer_source_ranges.iter().enumerate() {
        // The warning path is lower-case, unlike the error path.
        let path = format!("spec.loadBalancerSourceRanges[{i}]");
        out.extend(cidr_warnings_at(minor, &path, cidr).into_iter().map(|m| warning(&path, m)));
    }
    if in_force(Rule::ExternalNameIgnored, minor) {
        if spec.type_ == "ExternalName" && !spec.external_ips.is_empty() {
            out.push(warning(
                "spec.externalIPs",
                "spec.externalIPs is ignored when spec.type is \"ExternalName\"".into(),
            ));
        }
        if spec.type_ != "ExternalName" && !spec.external_name.is_empty() {
            out.push(warning(
                "spec.externalName",
                "spec.externalName is ignored when spec.type is not \"ExternalName\"".into(),
            ));
        }
    }
    if in_force(Rule::PreferCloseDeprecated, minor)
        && spec.traffic_distribution.as_deref() == Some("PreferClose")
    {
        out.push(warning(
            "spec.trafficDistribution",
            "spec.trafficDistribution: \"PreferClose\" is deprecated; use \"PreferSameZone\""
                .into(),
        ));
    }
    out
}

/// svclab advisories (never apiserver warnings): deprecations Kubernetes only documented.
pub(crate) fn service_advisories(svc: &Service) -> Vec<Warning> {
    let mut out = Vec::new();
    if svc.metadata.annotations.contains_key(TOLERATE_UNREADY_ENDPOINTS_ANNOTATION) {
        out.push(warning(
            &format!("metadata.annotations[{TOLERATE_UNREADY_ENDPOINTS_ANNOTATION}]"),
            format!(
                "annotation {TOLERATE_UNREADY_ENDPOINTS_ANNOTATION} was deprecated in Kubernetes 1.11 and is no longer honoured; set spec.publishNotReadyAddresses: true instead"
            ),
        ));
    }
    if !svc.spec.load_balancer_ip.is_empty() {
        out.push(warning(
            "spec.loadBalancerIP",
            "spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs)".into(),
        ));
    }
    out
}

/// EndpointSlice warnings (the strategy's `WarningsOnCreate`/`WarningsOnUpdate`): FQDN
/// deprecation on create (1.27+), and IP format warnings for slices not managed by the in-tree
/// controllers (1.33+).
pub(crate) fn endpoint_slice_warnings(
    slice: &EndpointSlice,
    create: bool,
    profile: &Profile,
) -> Vec<Warning> {
    let mut out = Vec::new();
    if create
        && slice.address_type == "FQDN"
        && in_force(Rule::EndpointSliceFqdnDeprecated, profile.version.minor)
    {
        // Quirk kept on purpose: upstream writes a `spec.` prefix an EndpointSlice does not have.
        out.push(warning("addressType", "spec.addressType: FQDN endpoints are deprecated".into()));
    }
    let managed = slice.metadata.labels.get(LABEL_MANAGED_BY).is_some_and(|v| {
        v == "endpointslice-controller.k8s.io" || v == "endpointslicemirroring-controller.k8s.io"
    });
    if !managed && in_force(Rule::EndpointSliceIpWarnings, profile.version.minor) {
        for (i, endpoint) in slice.endpoints.iter().enumerate() {
            for (j, address) in endpoint.addresses.iter().enumerate() {
                let path = format!("endpoints[{i}].addresses[{j}]");
                out.extend(
                    ip_warning(profile.version.minor, &path, address).map(|m| warning(&path, m)),
                );
            }
        }
    }
    out
}
