//! `ValidateEndpointSlice{Create,Update}` (`pkg/apis/discovery/validation`): paths have no `spec.` prefix
//! because an EndpointSlice has no spec.

use crate::field::{ErrorType, FieldError, GoValue, go_quote};
use crate::model::{Endpoint, EndpointPort, EndpointSlice};
use crate::net::{IpFamily, go_ip_string, parse_ip_sloppy, push_decimal};
use crate::profile::{Feature, Profile};
use crate::validation::names::{
    NameRule, Scope, Texts, dns1123_label, dns1123_subdomain, kube_finalizer_names, label_value,
    push_invalid, qualified_name, validate_object_meta,
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

/// `ValidateEndpointSlice` (and, given `old`, `ValidateEndpointSliceUpdate`'s own check), field
/// by field in upstream's order: the endpoints before the ports to 1.32, after them from 1.33
/// (`releases::Rule::EndpointSlicePortsFirst`).
pub(super) fn validate(
    slice: &EndpointSlice,
    old: Option<&EndpointSlice>,
    profile: &Profile,
) -> Vec<FieldError> {
    let minor = profile.version.minor;
    let mut errors = Vec::new();
    let t = Texts::of(profile);
    validate_object_meta(
        &mut errors,
        t,
        &slice.metadata,
        NameRule::Dns1123Subdomain,
        Scope::Namespaced,
    );
    kube_finalizer_names(&mut errors, &slice.metadata);
    address_type(&mut errors, &slice.address_type);
    let addresses = Addresses {
        address_type: &slice.address_type,
        form: if in_force(Rule::EndpointSliceFamilyAndSpecial, minor) {
            AddressForm::FamilyAndSpecial
        } else {
            AddressForm::Kep4858 { strict: profile.gate(Feature::StrictIPCIDRValidation) }
        },
        texts: t,
    };
    let mut endpoint_errors = Vec::new();
    endpoints(&mut endpoint_errors, &slice.endpoints, &addresses);
    // From 1.33 an update whose endpoints did not change drops their errors: older releases
    // accepted them (`apiequality.Semantic.DeepEqual(old.Endpoints, new.Endpoints)`).
    if in_force(Rule::EndpointSliceUnchangedEndpoints, minor)
        && old.is_some_and(|o| o.endpoints == slice.endpoints)
    {
        endpoint_errors.clear();
    }
    if in_force(Rule::EndpointSlicePortsFirst, minor) {
        ports(&mut errors, &slice.ports, t, max_ports(profile));
        errors.append(&mut endpoint_errors);
    } else {
        errors.append(&mut endpoint_errors);
        ports(&mut errors, &slice.ports, t, max_ports(profile));
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

/// Declarative validation (KEP-5073) as the generic registry runs it after the handwritten
/// checks (apiserver `pkg/registry/rest/create.go` `ValidateCreate`, `update.go`
/// `ValidateUpdate`, `validate.go` `ValidateDeclarativelyWithMigrationChecks`): from 1.37 the
/// EndpointSlice's `+k8s:beta` rules are enforced while DeclarativeValidationBeta is on (1.36
/// has them as `+k8s:alpha`, shadowed). A handwritten error marked `MarkCoveredByDeclarative`
/// is removed when a declarative error of the same type, origin and field is enforced, and the
/// declarative errors are appended after all others (`releases::Rule::
/// EndpointSliceDeclarativeBeta`). `errors` are every cause so far, the common update fields'
/// included.
pub(super) fn declarative(
    errors: &mut Vec<FieldError>,
    slice: &EndpointSlice,
    old: Option<&EndpointSlice>,
    profile: &Profile,
) {
    if !in_force(Rule::EndpointSliceDeclarativeBeta, profile.version.minor)
        || !profile.gate(Feature::DeclarativeValidationBeta)
    {
        return;
    }
    let enforced = declarative_errors(slice, old);
    if enforced.is_empty() {
        return;
    }
    // validate.FilterCoveredHandwrittenErrors: type, origin and field (the origins of a covered
    // error and its declarative twin agree: "immutable", "maxItems" or none).
    errors.retain(|e| {
        !(covered_by_declarative(e)
            && enforced.iter().any(|d| d.kind == e.kind && d.path == e.path))
    });
    errors.extend(enforced);
}

/// `Validate_EndpointSlice` of `pkg/apis/discovery/v1/zz_generated.validations.go`
/// (k8s.io/kubernetes@v1.37.2), its beta rules: `addressType` required, immutable (each a short
/// circuit), else one of the enum's values; each endpoint's `addresses` required and at most
/// 100. Unchanged fields are not validated again on update; the metadata's rules are alpha.
fn declarative_errors(slice: &EndpointSlice, old: Option<&EndpointSlice>) -> Vec<FieldError> {
    let mut out = Vec::new();
    if old.is_none_or(|o| o.address_type != slice.address_type) {
        let mut short_circuit = false;
        if slice.address_type.is_empty() {
            out.push(FieldError::required("addressType", ""));
            short_circuit = true;
        }
        if old.is_some() {
            // validate.Immutable: `field.Invalid(fldPath, nil, "field is immutable")`.
            out.push(FieldError::invalid("addressType", GoValue::Null, "field is immutable"));
            short_circuit = true;
        }
        if !short_circuit && !matches!(slice.address_type.as_str(), "IPv4" | "IPv6" | "FQDN") {
            out.push(FieldError::not_supported(
                "addressType",
                GoValue::Named(slice.address_type.clone()),
                &["FQDN", "IPv4", "IPv6"],
            ));
        }
    }
    // `OptionalSlice` ends an empty list's checks; `EachValSliceVal` without a match function
    // checks every endpoint, even past the handwritten limit of 1000.
    if old.is_none_or(|o| o.endpoints != slice.endpoints) {
        let mut path = String::new();
        for (i, endpoint) in slice.endpoints.iter().enumerate() {
            indexed(&mut path, "endpoints", i);
            path.push_str(".addresses");
            if endpoint.addresses.is_empty() {
                out.push(FieldError::required(path.clone(), ""));
            }
            if endpoint.addresses.len() > MAX_ADDRESSES {
                out.push(too_many(&path, endpoint.addresses.len(), MAX_ADDRESSES));
            }
        }
    }
    out
}

/// The handwritten errors `ValidateEndpointSlice{,Update}` marks `MarkCoveredByDeclarative`
/// (k8s.io/kubernetes@v1.36.5 and @v1.37.2): `addressType` required, unsupported or changed,
/// and an endpoint's `addresses` empty or too long.
fn covered_by_declarative(error: &FieldError) -> bool {
    match error.path.as_str() {
        "addressType" => match error.kind {
            ErrorType::Required | ErrorType::NotSupported => true,
            ErrorType::Invalid => error.detail == "field is immutable",
            _ => false,
        },
        path => {
            path.starts_with("endpoints[")
                && path.ends_with("].addresses")
                && matches!(error.kind, ErrorType::Required | ErrorType::TooMany)
        }
    }
}

/// `addressType`: required, one of the supported types. The deprecated `IP` type is rejected on
/// create and update alike.
fn address_type(errors: &mut Vec<FieldError>, address_type: &str) {
    match address_type {
        "" => errors.push(FieldError::required("addressType", "")),
        "IPv4" | "IPv6" | "FQDN" => {}
        other => errors.push(FieldError::not_supported(
            "addressType",
            GoValue::Named(other.to_owned()),
            // `supportedAddressTypes.List()`: sorted.
            &["FQDN", "IPv4", "IPv6"],
        )),
    }
}

/// How the addresses of a slice are checked.
struct Addresses<'a> {
    address_type: &'a str,
    form: AddressForm,
    texts: Texts,
}

/// The two ways upstream has checked an IP address of a slice.
#[derive(Clone, Copy)]
enum AddressForm {
    /// 1.24 to 1.32: `IsValidIPv4Address`/`IsValidIPv6Address` ("must be a valid IPv4
    /// address"), then `ValidateNonSpecialIP` on every address, so a bad one gets both.
    FamilyAndSpecial,
    /// 1.33 on (KEP-4858): `IsValidIPForLegacyField` (IPv4 slices, `strict` with
    /// StrictIPCIDRValidation) or `IsValidIP` (IPv6 slices, always strict and canonical);
    /// only an address that passes is checked for its family, at the list's path ("must be an
    /// IPv4 address"), and by `ValidateEndpointIP`.
    Kep4858 { strict: bool },
}

/// `endpoints`: at most 1000, each endpoint checked. The paths are built in place, once per
/// endpoint and address, without `format!`: every endpoint of every slice passes here.
fn endpoints(errors: &mut Vec<FieldError>, endpoints: &[Endpoint], addresses: &Addresses<'_>) {
    if endpoints.len() > MAX_ENDPOINTS {
        errors.push(too_many("endpoints", endpoints.len(), MAX_ENDPOINTS));
        return;
    }
    let (mut path, mut addresses_path, mut address_path) =
        (String::new(), String::new(), String::new());
    for (i, endpoint) in endpoints.iter().enumerate() {
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
            indexed(&mut address_path, &addresses_path, j);
            addresses.check(errors, &address_path, address);
        }
        endpoint_names(errors, &path, endpoint, addresses.texts);
    }
}

impl Addresses<'_> {
    /// One address of an endpoint, by the slice's address type.
    fn check(&self, errors: &mut Vec<FieldError>, path: &str, address: &str) {
        match self.address_type {
            "IPv4" | "IPv6" => self.ip(errors, path, address),
            "FQDN" => errors.extend(fully_qualified_domain_name(self.texts, path, address)),
            _ => {}
        }
    }

    /// An IP address of the slice's family, `path` being `endpoints[i].addresses[j]`.
    fn ip(&self, errors: &mut Vec<FieldError>, path: &str, address: &str) {
        let want_v4 = self.address_type == "IPv4";
        // Go's `ip.To4() != nil`: IPv4-mapped IPv6 counts as IPv4 (`netutils.IsIPv4String`).
        let of_family = parse_ip_sloppy(address)
            .is_some_and(|ip| (IpFamily::of(ip) == IpFamily::V4) == want_v4);
        let value = || GoValue::Str(address.to_owned());
        match self.form {
            AddressForm::FamilyAndSpecial => {
                if !of_family {
                    let msg = format!("must be a valid {} address", self.address_type);
                    errors.push(FieldError::invalid(path, value(), msg));
                }
                errors.extend(non_special_ip_errors(path, address));
            }
            AddressForm::Kep4858 { strict } => {
                // pkg/apis/discovery/validation/validation.go validateEndpoints (v1.33.13 to
                // v1.37.2): IPv4 slices keep the legacy parser, IPv6 slices get `IsValidIP`.
                let msgs = if want_v4 {
                    ip_messages(address, strict).into_iter().map(str::to_owned).collect()
                } else {
                    valid_ip(address)
                };
                if !msgs.is_empty() {
                    errors.extend(msgs.into_iter().map(|m| FieldError::invalid(path, value(), m)));
                    return;
                }
                if !of_family {
                    // The list's path, not the address's: upstream passes `addressPath`.
                    let list = path.rsplit_once('[').map_or(path, |(list, _)| list);
                    let msg = format!("must be an {} address", self.address_type);
                    errors.push(FieldError::invalid(list, value(), msg));
                }
                errors.extend(non_special_ip_errors(path, address));
            }
        }
    }
}

/// apimachinery `IsValidIP` (`pkg/util/validation/ip.go`, v0.33 on): the strict checks, then
/// the canonical form, `net.IP.String()` of the parsed address.
fn valid_ip(address: &str) -> Vec<String> {
    let strict = ip_messages(address, true);
    if !strict.is_empty() {
        return strict.into_iter().map(str::to_owned).collect();
    }
    let canonical = parse_ip_sloppy(address).map(go_ip_string).unwrap_or_default();
    if canonical == address {
        Vec::new()
    } else {
        vec![format!("must be in canonical form ({})", go_quote(&canonical))]
    }
}

/// An endpoint's `nodeName`, `hostname` and topology hints.
fn endpoint_names(errors: &mut Vec<FieldError>, path: &str, endpoint: &Endpoint, t: Texts) {
    if let Some(node_name) = &endpoint.node_name {
        let msgs = dns1123_subdomain(node_name);
        if !msgs.is_empty() {
            push_invalid(errors, &format!("{path}.nodeName"), node_name, msgs);
        }
    }
    if let Some(hostname) = &endpoint.hostname {
        let msgs = dns1123_label(t, hostname);
        if !msgs.is_empty() {
            push_invalid(errors, &format!("{path}.hostname"), hostname, msgs);
        }
    }
    if let Some(hints) = &endpoint.hints {
        let zones = format!("{path}.hints.forZones");
        hint_names(errors, &zones, &hints.for_zones, &|name| label_value(t, name));
        // forNodes rules (KEP-3015, PreferSameNode) are unconfirmed; modelled on forZones with
        // node-name checks.
        let nodes = format!("{path}.hints.forNodes");
        hint_names(errors, &nodes, &hints.for_nodes, &dns1123_subdomain);
    }
}

/// `ports`: at most `max`, each with a valid and unique name (the empty name included), a
/// supported protocol and a qualified `appProtocol`.
fn ports(errors: &mut Vec<FieldError>, ports: &[EndpointPort], t: Texts, max: usize) {
    if ports.len() > max {
        errors.push(too_many("ports", ports.len(), max));
        return;
    }
    let mut names: Vec<&str> = Vec::new();
    let mut path = String::new();
    for (i, port) in ports.iter().enumerate() {
        indexed(&mut path, "ports", i);
        let name = port.name.as_deref().unwrap_or("");
        if !name.is_empty() {
            let msgs = dns1123_label(t, name);
            if !msgs.is_empty() {
                push_invalid(errors, &format!("{path}.name"), name, msgs);
            }
        }
        if names.contains(&name) {
            errors
                .push(FieldError::duplicate(format!("{path}.name"), GoValue::Str(name.to_owned())));
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
            push_invalid(errors, &format!("{path}.appProtocol"), app, qualified_name(t, app));
        }
    }
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
