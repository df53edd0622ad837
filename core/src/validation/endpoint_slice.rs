//! `ValidateEndpointSlice{Create,Update}` (`pkg/apis/discovery/validation`): paths have no `spec.` prefix
//! because an EndpointSlice has no spec.

use crate::field::{ErrorType, FieldError, GoValue};
use crate::model::EndpointSlice;
use crate::net::{parse_ip_sloppy, push_decimal};
use crate::profile::{Feature, Profile};
use crate::validation::names::{
    NameRule, Texts, dns1123_label, dns1123_subdomain, label_value, push_invalid, qualified_name,
    validate_object_meta,
};
use crate::validation::releases::{Rule, in_force};
use crate::validation::{ip_messages, non_special_ip_errors};

const MAX_ENDPOINTS: usize = 1000;
const MAX_ADDRESSES: usize = 100;
const MAX_HINTS: usize = 8;

fn too_many(path: &str, actual: usize, max: usize) -> FieldError {
    FieldError {
        path: path.to_owned(),
        kind: ErrorType::TooMany,
        value: GoValue::Int(i64::try_from(actual).unwrap_or(i64::MAX)),
        detail: format!("must have at most {max} items"),
    }
}

/// Maximum number of ports (`maxPorts`): 20000 in every release svclab models (raised from 100
/// in 1.21; `releases::Rule::EndpointSlicePorts20000`).
fn max_ports(profile: &Profile) -> usize {
    if in_force(Rule::EndpointSlicePorts20000, profile.version.minor) { 20000 } else { 100 }
}

pub(super) fn validate(
    slice: &EndpointSlice,
    old: Option<&EndpointSlice>,
    profile: &Profile,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let t = Texts::of(profile);
    validate_object_meta(&mut errors, t, &slice.metadata, NameRule::Dns1123Subdomain);
    let address_type = slice.address_type.as_str();
    match address_type {
        "" => errors.push(FieldError::required("addressType", "")),
        // The deprecated `IP` type is rejected on create and update alike.
        "IPv4" | "IPv6" | "FQDN" => {}
        other => errors.push(FieldError::not_supported(
            "addressType",
            GoValue::Named(other.to_owned()),
            // `supportedAddressTypes.List()`: sorted.
            &["FQDN", "IPv4", "IPv6"],
        )),
    }
    let strict = profile.gate(Feature::StrictIPCIDRValidation);
    // Ratcheting: an unchanged `endpoints` list is not re-checked strictly.
    let endpoints_unchanged = old.is_some_and(|o| o.endpoints == slice.endpoints);
    if slice.endpoints.len() > MAX_ENDPOINTS {
        errors.push(too_many("endpoints", slice.endpoints.len(), MAX_ENDPOINTS));
    } else {
        // The paths are built in place, once per endpoint and address, without `format!`:
        // every endpoint of every slice passes here.
        let (mut path, mut addresses_path, mut apath) =
            (String::new(), String::new(), String::new());
        for (i, endpoint) in slice.endpoints.iter().enumerate() {
            indexed(&mut path, "endpoints", i);
            addresses_path.clear();
            addresses_path.push_str(&path);
            addresses_path.push_str(".addresses");
            if endpoint.addresses.is_empty() {
                errors.push(FieldError::required(
                    addresses_path.clone(),
                    "must contain at least 1 address",
                ));
            } else if endpoint.addresses.len() > MAX_ADDRESSES {
                errors.push(too_many(&addresses_path, endpoint.addresses.len(), MAX_ADDRESSES));
            }
            for (j, address) in endpoint.addresses.iter().enumerate() {
                indexed(&mut apath, &addresses_path, j);
                match address_type {
                    "IPv4" | "IPv6" => {
                        let want_v4 = address_type == "IPv4";
                        // Go's `ip.To4() != nil`: IPv4-mapped IPv6 counts as IPv4.
                        let ok = parse_ip_sloppy(address).is_some_and(|ip| {
                            crate::net::IpFamily::of(ip) == crate::net::IpFamily::V4
                        } == want_v4);
                        // 1.24 to 1.32 follow the family error with `ValidateNonSpecialIP`
                        // (later renamed `ValidateEndpointIP`, same texts), so "foo" also gets
                        // "must be a valid IP address"; 1.33 stops there.
                        let both =
                            in_force(Rule::EndpointSliceFamilyAndSpecial, profile.version.minor);
                        if !ok {
                            let msg = format!("must be a valid {address_type} address");
                            errors.push(FieldError::invalid(
                                apath.clone(),
                                GoValue::Str(address.clone()),
                                msg,
                            ));
                            if both {
                                errors.extend(non_special_ip_errors(&apath, address));
                            }
                            continue;
                        }
                        let strict_msgs = ip_messages(address, strict && !endpoints_unchanged);
                        for msg in &strict_msgs {
                            errors.push(FieldError::invalid(
                                apath.clone(),
                                GoValue::Str(address.clone()),
                                *msg,
                            ));
                        }
                        errors.extend(non_special_ip_errors(&apath, address));
                    }
                    "FQDN" => errors.extend(fully_qualified_domain_name(t, &apath, address)),
                    _ => {}
                }
            }
            if let Some(node_name) = &endpoint.node_name {
                let msgs = dns1123_subdomain(node_name);
                if !msgs.is_empty() {
                    push_invalid(&mut errors, &format!("{path}.nodeName"), node_name, msgs);
                }
            }
            if let Some(hostname) = &endpoint.hostname {
                let msgs = dns1123_label(t, hostname);
                if !msgs.is_empty() {
                    push_invalid(&mut errors, &format!("{path}.hostname"), hostname, msgs);
                }
            }
            if let Some(hints) = &endpoint.hints {
                hint_names(
                    &mut errors,
                    &format!("{path}.hints.forZones"),
                    &hints.for_zones,
                    &|name| label_value(t, name),
                );
                // forNodes rules (KEP-3015, PreferSameNode) are unconfirmed; modelled on forZones with
                // node-name checks.
                hint_names(
                    &mut errors,
                    &format!("{path}.hints.forNodes"),
                    &hints.for_nodes,
                    &dns1123_subdomain,
                );
            }
        }
    }
    let max = max_ports(profile);
    if slice.ports.len() > max {
        errors.push(too_many("ports", slice.ports.len(), max));
    } else {
        let mut names: Vec<&str> = Vec::new();
        let mut path = String::new();
        for (i, port) in slice.ports.iter().enumerate() {
            indexed(&mut path, "ports", i);
            let name = port.name.as_deref().unwrap_or("");
            if !name.is_empty() {
                let msgs = dns1123_label(t, name);
                if !msgs.is_empty() {
                    push_invalid(&mut errors, &format!("{path}.name"), name, msgs);
                }
            }
            // Names must be unique, the empty name included.
            if names.contains(&name) {
                errors.push(FieldError::duplicate(
                    format!("{path}.name"),
                    GoValue::Str(name.to_owned()),
                ));
            } else {
                names.push(name);
            }
            match port.protocol.as_deref() {
                None => errors.push(FieldError::required(format!("{path}.protocol"), "")),
                Some("TCP" | "UDP" | "SCTP") => {}
                Some(other) => errors.push(FieldError::not_supported(
                    format!("{path}.protocol"),
                    GoValue::Named(other.to_owned()),
                    // `supportedPortProtocols.List()`: sorted.
                    &["SCTP", "TCP", "UDP"],
                )),
            }
            if let Some(app) = &port.app_protocol {
                push_invalid(
                    &mut errors,
                    &format!("{path}.appProtocol"),
                    app,
                    qualified_name(t, app),
                );
            }
        }
    }
    if let Some(old) = old
        && old.address_type != slice.address_type
    {
        errors.push(FieldError::invalid(
            "addressType",
            GoValue::Str(slice.address_type.clone()),
            "field is immutable",
        ));
    }
    errors
}

/// Sets `out` to `list[index]`.
fn indexed(out: &mut String, list: &str, index: usize) {
    out.clear();
    out.push_str(list);
    out.push('[');
    push_decimal(out, index as u64);
    out.push(']');
}

/// `hints.forZones` / `hints.forNodes`: at most 8 (then stop), unique, each name checked.
fn hint_names(
    errors: &mut Vec<FieldError>,
    path: &str,
    names: &[String],
    check: &dyn Fn(&str) -> Vec<String>,
) {
    if names.len() > MAX_HINTS {
        errors.push(too_many(path, names.len(), MAX_HINTS));
        return;
    }
    let mut seen: Vec<&str> = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let npath = format!("{path}[{k}].name");
        if seen.contains(&name.as_str()) {
            errors.push(FieldError::duplicate(npath.clone(), GoValue::Str(name.clone())));
        } else {
            seen.push(name);
        }
        push_invalid(errors, &npath, name, check(name));
    }
}

/// `IsFullyQualifiedDomainName`: the first failure only, on the value without its trailing dot.
fn fully_qualified_domain_name(t: Texts, path: &str, name: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let msgs = dns1123_subdomain(name);
    if !msgs.is_empty() {
        return vec![FieldError::invalid(path, GoValue::Str(name.to_owned()), msgs.join(","))];
    }
    if name.split('.').count() < 2 {
        return vec![FieldError::invalid(
            path,
            GoValue::Str(name.to_owned()),
            "should be a domain with at least two segments separated by dots",
        )];
    }
    for label in name.split('.') {
        let msgs = dns1123_label(t, label);
        if !msgs.is_empty() {
            return vec![FieldError::invalid(path, GoValue::Str(label.to_owned()), msgs.join(","))];
        }
    }
    Vec::new()
}
