//! kube-apiserver validation of Services and EndpointSlices (validation.md §3–§6): field errors
//! in Kubernetes' emission order with its exact texts, warnings, and svclab advisories.
//!
//! The entry points take the object exactly as they should judge it: `--no-defaults` passes it
//! as written (the Go unit tests' view), the pipeline passes it defaulted and allocated.

mod endpoint_slice;
mod names;
mod service;
mod warnings;

use std::net::IpAddr;

use crate::field::{FieldError, GoValue};
use crate::model::{EndpointSlice, Service};
use crate::net::{parse_cidr_sloppy, parse_ip_sloppy, unmap};
use crate::profile::Profile;

pub(crate) use endpoint_slice::default_endpoint_slice;
pub(crate) use names::generate_name;
pub(crate) use service::{
    cluster_ips_related_fields, drop_type_dependent_fields, prepare_service_for_create,
};
pub(crate) use warnings::{endpoint_slice_warnings, service_advisories, service_warnings};

/// `M_IP`: the message of an unparseable IP.
pub(crate) const MSG_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
/// `M_CIDR`: the message of an unparseable CIDR.
pub(crate) const MSG_CIDR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
/// `M_PORT`: `IsValidPortNum`.
pub(crate) const MSG_PORT: &str = "must be between 1 and 65535, inclusive";

/// `ValidateServiceCreate` (= `ValidateService`), validation.md §3.
pub fn validate_service_create(service: &Service, profile: &Profile) -> Vec<FieldError> {
    service::validate_create(service, profile)
}

/// `ValidateServiceUpdate`: update-only errors first (§4.2), then `ValidateService(new)`.
pub fn validate_service_update(new: &Service, old: &Service, profile: &Profile) -> Vec<FieldError> {
    service::validate_update(new, old, profile)
}

/// `ValidateEndpointSliceCreate`, validation.md §5.2.
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

/// `ValidateNonSpecialIP` (validation.md §5.3) on an address that already parsed.
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

#[cfg(test)]
mod tests;
