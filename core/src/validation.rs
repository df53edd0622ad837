//! kube-apiserver validation of Services and EndpointSlices (`pkg/apis/core/validation`,
//! `pkg/apis/discovery/validation`, the registry strategies' `WarningsOn*`): field errors
//! in Kubernetes' emission order with its exact texts, warnings, and svclab advisories.
//!
//! The entry points take the object exactly as they should judge it: `--no-defaults` passes it
//! as written (the Go unit tests' view), the pipeline passes it defaulted and allocated.

mod endpoint_slice;
mod names;
mod releases;
mod service;
mod warnings;

use std::net::IpAddr;

use crate::field::{FieldError, GoValue};
use crate::model::{EndpointSlice, Service, ServiceCidr};
use crate::net::{IpFamily, parse_cidr_sloppy, parse_ip_sloppy, unmap};
use crate::profile::Profile;

pub(crate) use names::Scope;
pub(crate) use releases::{Change, Rule, TABLES, governing, in_force};
pub(crate) use service::cluster_ips_related_fields;

/// The release-table rows whose texts appear in a message, as the report cites them.
pub(crate) fn release_changes(message: &str) -> Vec<crate::diagnostic::ReleaseChange> {
    releases::governing(message)
        .into_iter()
        .map(|(table, c)| crate::diagnostic::ReleaseChange {
            table: table.to_owned(),
            releases: c.releases(),
            change: c.what.to_owned(),
            upstream: c.upstream.to_owned(),
            pinned: c.pin != releases::Pin::Unpinned,
        })
        .collect()
}

/// Whether upstream behaves as `rule` says in the profile's release (the release tables).
pub(crate) fn rule_in_force(rule: Rule, profile: &Profile) -> bool {
    releases::in_force(rule, profile.version.minor)
}
pub(crate) use warnings::{endpoint_slice_warnings, service_advisories, service_warnings};

/// `M_IP`: the message of an unparseable IP.
pub(crate) const MSG_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
/// `M_CIDR`: the message of an unparseable CIDR.
pub(crate) const MSG_CIDR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
/// `M_PORT`: `IsValidPortNum`.
pub(crate) const MSG_PORT: &str = "must be between 1 and 65535, inclusive";

/// `ValidateServiceCreate` (= `ValidateService`).
pub fn validate_service_create(service: &Service, profile: &Profile) -> Vec<FieldError> {
    service::validate_create(service, profile)
}

/// `ValidateServiceUpdate`: update-only errors first (metadata, clusterIPs, ipFamilies, class,
/// healthCheckNodePort), then `ValidateService(new)`.
pub fn validate_service_update(new: &Service, old: &Service, profile: &Profile) -> Vec<FieldError> {
    service::validate_update(new, old, profile)
}

/// The causes the generic registry's `validateCommonFields` adds before the strategy's
/// `ValidateUpdate` (any kind; see `releases::Rule::CommonFieldsOnUpdate`).
pub(crate) fn validate_common_update_fields(
    new: &crate::model::ObjectMeta,
    old: &crate::model::ObjectMeta,
    scope: Scope,
    profile: &Profile,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if releases::in_force(Rule::CommonFieldsOnUpdate, profile.version.minor) {
        let t = names::Texts::of(profile);
        names::validate_common_update_fields(&mut errors, t, new, old, scope);
    }
    errors
}

/// What the generic registry does with the strategy's causes before they reach the client
/// (`releases::Rule::IdenticalCausesOnce`): from 1.37 each identical cause once, the first kept.
pub(crate) fn registry_causes(errors: &mut Vec<FieldError>, profile: &Profile) {
    if releases::in_force(Rule::IdenticalCausesOnce, profile.version.minor) {
        let mut seen: Vec<FieldError> = Vec::with_capacity(errors.len());
        errors.retain(|e| {
            let first = !seen.contains(e);
            if first {
                seen.push(e.clone());
            }
            first
        });
    }
}

/// Whether a Namespace of this name can exist (`ValidateNamespaceName`: a DNS-1123 label).
pub(crate) fn namespace_can_exist(namespace: &str, profile: &Profile) -> bool {
    names::dns1123_label(names::Texts::of(profile), namespace).is_empty()
}

/// `path.IsValidPathSegmentName`: why a name cannot be a URL path segment (none when it can).
pub(crate) fn path_segment_name(name: &str) -> Vec<String> {
    names::path_segment_name(name, false)
}

/// `ValidateEndpointSliceCreate`.
pub fn validate_endpoint_slice_create(slice: &EndpointSlice, profile: &Profile) -> Vec<FieldError> {
    endpoint_slice::validate(slice, None, profile)
}

/// `ValidateEndpointSliceUpdate`: every create rule, then `addressType` immutability.
pub fn validate_endpoint_slice_update(
    new: &EndpointSlice,
    old: &EndpointSlice,
    profile: &Profile,
) -> Vec<FieldError> {
    endpoint_slice::validate(new, Some(old), profile)
}

/// The declarative validation the generic registry runs after the EndpointSlice strategy's
/// (from 1.37, DeclarativeValidationBeta): replaces the handwritten errors it covers and appends
/// its own to `errors`.
pub(crate) fn endpoint_slice_declarative(
    errors: &mut Vec<FieldError>,
    new: &EndpointSlice,
    old: Option<&EndpointSlice>,
    profile: &Profile,
) {
    endpoint_slice::declarative(errors, new, old, profile);
}

/// Whether a text is an IP for the strict (KEP-4858) parser: Go `netip.ParseAddr` accepts it
/// and it is not IPv4-mapped IPv6.
fn strict_ip(text: &str) -> Option<IpAddr> {
    // Rust's parser, like `netip`, rejects leading zeros in IPv4 octets and zones.
    text.parse::<IpAddr>().ok()
}

/// Whether an address is an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`).
fn is_4in6(ip: IpAddr) -> bool {
    matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some())
}

/// `IsValidIP` (with the strict KEP-4858 checks when `strict`): one message per failing check.
pub(crate) fn ip_messages(text: &str, strict: bool) -> Vec<&'static str> {
    let Some(_) = parse_ip_sloppy(text) else { return vec![MSG_IP] };
    let mut msgs = Vec::new();
    if strict {
        match strict_ip(text) {
            None => msgs.push("must not have leading 0s"),
            Some(ip) if is_4in6(ip) => msgs.push("must not be an IPv4-mapped IPv6 address"),
            Some(_) => {}
        }
    }
    msgs
}

/// `IsValidCIDR` (with the strict checks when `strict`; the first strict failure only).
pub(crate) fn cidr_messages(text: &str, strict: bool) -> Vec<&'static str> {
    let Some((ip, net)) = parse_cidr_sloppy(text) else { return vec![MSG_CIDR] };
    if !strict {
        return Vec::new();
    }
    let strict_ok = strict_prefix(text);
    if !strict_ok {
        return vec!["must not have leading 0s in IP or prefix length"];
    }
    if is_4in6(ip) {
        return vec!["must not have an IPv4-mapped IPv6 address"];
    }
    if unmap(ip) != net.network() {
        return vec!["must not have bits set beyond the prefix length"];
    }
    Vec::new()
}

/// Go `netip.ParsePrefix`: strict address, prefix length without leading zeros.
fn strict_prefix(text: &str) -> bool {
    let Some((addr, len)) = text.split_once('/') else { return false };
    let Some(ip) = strict_ip(addr) else { return false };
    if len.is_empty()
        || !len.bytes().all(|b| b.is_ascii_digit())
        || (len.len() > 1 && len.starts_with('0'))
    {
        return false;
    }
    let max = if ip.is_ipv4() { 32 } else { 128 };
    len.parse::<u32>().is_ok_and(|l| l <= max)
}

/// `ValidateNonSpecialIP` (`k8s.io/apimachinery/pkg/api/validation/ip.go`) on an address that
/// already parsed.
pub(crate) fn non_special_ip_errors(path: &str, text: &str) -> Vec<FieldError> {
    let Some(parsed) = parse_ip_sloppy(text) else {
        return vec![FieldError::invalid(
            path,
            GoValue::Str(text.to_owned()),
            "must be a valid IP address",
        )];
    };
    let ip = unmap(parsed);
    let mut errors = Vec::new();
    let value = || GoValue::Str(text.to_owned());
    if ip.is_unspecified() {
        errors.push(FieldError::invalid(path, value(), format!("may not be unspecified ({text})")));
    }
    if ip.is_loopback() {
        errors.push(FieldError::invalid(
            path,
            value(),
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    let link_local_unicast = match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
    };
    if link_local_unicast {
        errors.push(FieldError::invalid(
            path,
            value(),
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    // Go's IsLinkLocalMulticast: 224.0.0.0/24, or ff?2::/16 (scope 2), despite the text.
    let link_local_multicast = match ip {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => {
            let o = v6.octets();
            o[0] == 0xff && (o[1] & 0x0f) == 0x02
        }
    };
    if link_local_multicast {
        errors.push(FieldError::invalid(
            path,
            value(),
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
    errors
}

/// `ValidateServiceCIDR` (`pkg/apis/networking/validation/validation.go`): the metadata of a
/// cluster-scoped object named as a DNS subdomain, then `spec.cidrs` as the release checks it
/// (`releases::Rule::ServiceCidrStrictSpec`).
pub(crate) fn validate_service_cidr_create(
    cidr: &ServiceCidr,
    profile: &Profile,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let t = names::Texts::of(profile);
    names::validate_object_meta(
        &mut errors,
        t,
        &cidr.metadata,
        names::NameRule::Dns1123Subdomain,
        Scope::Cluster,
    );
    names::kube_finalizer_names(&mut errors, &cidr.metadata);
    if rule_in_force(Rule::ServiceCidrStrictSpec, profile) {
        service_cidr_spec(&mut errors, &cidr.cidrs);
    } else {
        service_cidr_spec_netip(&mut errors, &cidr.cidrs);
    }
    errors
}

/// `ValidateServiceCIDRUpdate`: the metadata update, then `spec.cidrs` unchanged; from 1.33 one
/// CIDR may become two (the first unchanged, the pair checked as on create; issues.k8s.io/131261).
pub(crate) fn validate_service_cidr_update(
    new: &ServiceCidr,
    old: &ServiceCidr,
    profile: &Profile,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    names::validate_object_meta_update(
        &mut errors,
        names::Texts::of(profile),
        &new.metadata,
        &old.metadata,
    );
    names::kube_finalizer_names(&mut errors, &new.metadata);
    let immutable =
        |path: String, value: GoValue| FieldError::invalid(path, value, "field is immutable");
    if !rule_in_force(Rule::ServiceCidrStrictSpec, profile) {
        if new.cidrs != old.cidrs {
            errors.push(immutable("spec.cidrs".to_owned(), GoValue::strings(&new.cidrs)));
        }
        return errors;
    }
    match (old.cidrs.len(), new.cidrs.len()) {
        (before, after) if before == after => {
            for (i, (was, now)) in old.cidrs.iter().zip(&new.cidrs).enumerate() {
                if was != now {
                    errors.push(immutable(format!("spec.cidrs[{i}]"), GoValue::Str(now.clone())));
                }
            }
        }
        (1, 2) => {
            if new.cidrs[0] != old.cidrs[0] {
                let first = GoValue::Str(new.cidrs[0].clone());
                errors.push(immutable("spec.cidrs[0]".to_owned(), first));
            }
            service_cidr_spec(&mut errors, &new.cidrs);
        }
        _ => errors.push(immutable("spec.cidrs".to_owned(), GoValue::strings(&new.cidrs))),
    }
    errors
}

/// The networks of a ServiceCIDR the storage accepted.
pub(crate) fn service_cidr_networks(cidrs: &[String]) -> Vec<ipnet::IpNet> {
    cidrs.iter().filter_map(|c| parse_cidr_sloppy(c).map(|(_, net)| net)).collect()
}

/// The spec value `field.Invalid` is given when it names `ServiceCIDRSpec` whole.
fn service_cidr_spec_value(cidrs: &[String]) -> GoValue {
    let quoted: Vec<String> = cidrs.iter().map(|c| crate::field::go_quote(c)).collect();
    let json: Vec<String> = cidrs.iter().map(|c| crate::field::go_json_quote(c)).collect();
    GoValue::Composite {
        go: format!("networking.ServiceCIDRSpec{{CIDRs:[]string{{{}}}}}", quoted.join(", ")),
        json: format!("{{\"CIDRs\":[{}]}}", json.join(",")),
    }
}

/// `validateServiceCIDRSpec` of 1.33 on: one or two CIDRs, each apimachinery `IsValidCIDR`
/// (strict), at most one per family.
fn service_cidr_spec(errors: &mut Vec<FieldError>, cidrs: &[String]) {
    if cidrs.is_empty() {
        errors.push(FieldError::required("spec.cidrs", "at least one CIDR required"));
        return;
    }
    if cidrs.len() > 2 {
        let value = service_cidr_spec_value(cidrs);
        errors.push(FieldError::invalid("spec.cidrs", value, "may only hold up to 2 values"));
        return;
    }
    for (i, text) in cidrs.iter().enumerate() {
        for msg in cidr_messages(text, true) {
            errors.push(FieldError::invalid(
                format!("spec.cidrs[{i}]"),
                GoValue::Str(text.clone()),
                msg,
            ));
        }
    }
    let family = |text: &String| parse_cidr_sloppy(text).map(|(_, net)| IpFamily::of_net(&net));
    if cidrs.len() == 2 && family(&cidrs[0]).is_some() && family(&cidrs[0]) == family(&cidrs[1]) {
        errors.push(FieldError::invalid(
            "spec.cidrs",
            GoValue::strings(cidrs),
            "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64",
        ));
    }
}

/// `ValidateServiceCIDR`'s spec checks of 1.29 to 1.32: one or two CIDRs, a pair of both
/// families (`IsDualStackCIDRStrings`), then each through Go `netip.ParsePrefix`, its network
/// address and its canonical form.
fn service_cidr_spec_netip(errors: &mut Vec<FieldError>, cidrs: &[String]) {
    if cidrs.is_empty() {
        errors.push(FieldError::required("spec.cidrs", "at least one CIDR required"));
        return;
    }
    if cidrs.len() > 2 {
        let value = service_cidr_spec_value(cidrs);
        errors.push(FieldError::invalid("spec.cidrs", value, "may only hold up to 2 values"));
        return;
    }
    if cidrs.len() == 2 {
        let family = |text: &String| parse_cidr_sloppy(text).map(|(_, net)| IpFamily::of_net(&net));
        let dual = matches!((family(&cidrs[0]), family(&cidrs[1])), (Some(a), Some(b)) if a != b);
        if !dual {
            errors.push(FieldError::invalid(
                "spec.cidrs",
                service_cidr_spec_value(cidrs),
                "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64",
            ));
            return;
        }
    }
    for (i, text) in cidrs.iter().enumerate() {
        let path = format!("spec.cidrs[{i}]");
        let value = || GoValue::Str(text.clone());
        match warnings::parse_prefix_netip(text) {
            Err(message) => errors.push(FieldError::invalid(&path, value(), message)),
            Ok((ip, bits, canonical)) => {
                let net = ipnet::IpNet::new(ip, bits).map(|n| n.trunc());
                if net.is_ok_and(|n| n.addr() != ip) {
                    errors.push(FieldError::invalid(
                        &path,
                        value(),
                        "wrong CIDR format, IP doesn't match network IP address",
                    ));
                }
                if canonical != *text {
                    errors.push(FieldError::invalid(
                        &path,
                        value(),
                        "CIDR not in RFC 5952 canonical format",
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
