//! `ValidateService` / `ValidateServiceUpdate` (`pkg/apis/core/validation/validation.go`): every rule in the order
//! kube-apiserver appends its errors, with the historical quirks kept on purpose.

use crate::field::{FieldError, GoValue, service_port_go, service_port_json, service_port_value};
use crate::model::well_known::{
    ANNOTATION_LOAD_BALANCER_SOURCE_RANGES_KEY, ANNOTATION_TOPOLOGY_MODE,
    DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS,
};
use crate::model::{IntOrString, Service};
use crate::net::{IpFamily, parse_ip_sloppy};
use crate::profile::{Feature, Profile};
use crate::validation::names::{
    NameRule, Scope, Texts, dns1123_label, dns1123_subdomain, kube_finalizer_names, port_name,
    push_invalid, qualified_name, validate_labels, validate_object_meta,
    validate_object_meta_update,
};
use crate::validation::releases::{Rule, in_force};
use crate::validation::{MSG_PORT, cidr_messages, ip_messages, non_special_ip_errors};

/// `MaxClientIPServiceAffinitySeconds`.
const MAX_AFFINITY_SECONDS: i32 = 86400;

/// Headless as validation sees it: exactly `clusterIPs: [None]` (it reads `clusterIPs`, not
/// `clusterIP`).
fn is_headless(svc: &Service) -> bool {
    svc.spec.cluster_ips.len() == 1 && svc.spec.cluster_ips[0] == "None"
}

/// A pointer to a named string type (`*core.IPFamilyPolicy`): nil, or the named value.
fn opt_str(value: Option<&String>) -> GoValue {
    value.map_or(GoValue::Null, |v| GoValue::Named(v.clone()))
}

fn families(items: &[String]) -> GoValue {
    GoValue::StrSlice { type_name: "[]core.IPFamily", items: items.to_vec() }
}

pub(super) fn validate_create(svc: &Service, profile: &Profile) -> Vec<FieldError> {
    validate_service(svc, None, profile)
}

pub(super) fn validate_update(new: &Service, old: &Service, profile: &Profile) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let t = Texts::of(profile);
    validate_object_meta_update(&mut errors, t, &new.metadata, &old.metadata);
    kube_finalizer_names(&mut errors, &new.metadata);
    cluster_ips_update(&mut errors, new, old);
    ip_families_update(&mut errors, new, old);
    // validateLoadBalancerClassField(old, new): immutability and the format checks, which
    // ValidateService(new) repeats below (so a bad class is reported twice on update).
    load_balancer_class(&mut errors, t, new, Some(old));
    if new.needs_health_check()
        && old.needs_health_check()
        && new.spec.health_check_node_port != old.spec.health_check_node_port
    {
        errors.push(FieldError::forbidden("spec.healthCheckNodePort", "field is immutable"));
    }
    errors.extend(validate_service(new, Some(old), profile));
    errors
}

/// `ValidateService` (`pkg/apis/core/validation/validation.go`), with the old object for the
/// ratcheting of strict IP and CIDR parsing on update: each step appends its errors in the
/// order upstream does, which is the order kubectl prints them.
fn validate_service(svc: &Service, old: Option<&Service>, profile: &Profile) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let strict = profile.gate(Feature::StrictIPCIDRValidation);
    let rule = if profile.gate(Feature::RelaxedServiceNameValidation) {
        NameRule::Dns1123Label
    } else {
        NameRule::Dns1035
    };
    let t = Texts::of(profile);
    // 1.24 to 1.33: ValidateService opens with ValidateObjectMeta(new) on create and update
    // alike; from 1.34 ValidateServiceCreate does that and the update path has only
    // ValidateObjectMetaUpdate (`Rule::ServiceUpdateObjectMeta`).
    if old.is_none() || in_force(Rule::ServiceUpdateObjectMeta, profile.version.minor) {
        validate_object_meta(&mut errors, t, &svc.metadata, rule, Scope::Namespaced);
        kube_finalizer_names(&mut errors, &svc.metadata);
    }
    if in_force(Rule::TopologyModeMatch, profile.version.minor) {
        topology_annotations(&mut errors, svc);
    }
    ports_required(&mut errors, svc);
    type_specific_fields(&mut errors, svc, profile);
    ports(&mut errors, t, svc);
    if let Some(selector) = &svc.spec.selector {
        validate_labels(&mut errors, t, selector, "spec.selector");
    }
    session_affinity(&mut errors, svc);
    let old_cluster_ips: &[String] = old.map_or(&[], |o| o.spec.cluster_ips.as_slice());
    errors.extend(cluster_ips_related_fields(svc, strict, old_cluster_ips));
    external_ips(&mut errors, svc, old, strict);
    service_type(&mut errors, svc);
    node_ports(&mut errors, svc);
    if in_force(Rule::SourceRangesWholeField, profile.version.minor) {
        load_balancer_source_ranges_whole(&mut errors, svc);
    } else {
        let annotation_ratchet =
            in_force(Rule::SourceRangesAnnotationRatchet, profile.version.minor);
        load_balancer_source_ranges(&mut errors, svc, old, strict, annotation_ratchet);
    }
    allocate_load_balancer_node_ports(&mut errors, svc);
    load_balancer_class(&mut errors, t, svc, None);
    external_traffic_policy(&mut errors, svc, profile);
    health_check_node_port(&mut errors, svc);
    internal_traffic_policy(&mut errors, svc, profile);
    traffic_distribution(&mut errors, svc, profile);
    mixed_protocol_load_balancer(&mut errors, svc, old, profile);
    errors
}

/// The message of fields only a LoadBalancer may set.
const LB_ONLY: &str = "may only be used when `type` is 'LoadBalancer'";

/// The legacy `topology-aware-hints` annotation and its successor `topology-mode` must agree.
fn topology_annotations(errors: &mut Vec<FieldError>, svc: &Service) {
    let annotations = &svc.metadata.annotations;
    if let (Some(hints), Some(mode)) = (
        annotations.get(DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS),
        annotations.get(ANNOTATION_TOPOLOGY_MODE),
    ) && hints != mode
    {
        errors.push(FieldError::invalid(
            format!("metadata.annotations[{ANNOTATION_TOPOLOGY_MODE}]"),
            GoValue::Str(mode.clone()),
            format!("must match annotations[{DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS}] when both are specified"),
        ));
    }
}

/// Every Service but a headless or ExternalName one needs ports.
fn ports_required(errors: &mut Vec<FieldError>, svc: &Service) {
    let spec = &svc.spec;
    if spec.ports.is_empty() && !is_headless(svc) && spec.type_ != "ExternalName" {
        errors.push(FieldError::required("spec.ports", ""));
    }
}

/// `ports.KubeletPort`.
const KUBELET_PORT: i32 = 10250;

/// Type-specific rules: a LoadBalancer may not expose the kubelet port (1.24 to 1.32);
/// NodePort and LoadBalancer cannot be headless; ExternalName holds no cluster IPs or families
/// and needs a DNS name.
fn type_specific_fields(errors: &mut Vec<FieldError>, svc: &Service, profile: &Profile) {
    let spec = &svc.spec;
    let headless = is_headless(svc);
    // `ValidateService`'s LoadBalancer case, before its headless check (1.24 to 1.32): the whole
    // port is the field, its number the value ("a workaround for broken cloud environments that
    // over-open firewalls").
    if spec.type_ == "LoadBalancer" && in_force(Rule::KubeletPort, profile.version.minor) {
        for (i, port) in spec.ports.iter().enumerate() {
            if port.port == KUBELET_PORT {
                errors.push(FieldError::invalid(
                    format!("spec.ports[{i}]"),
                    GoValue::Int(i64::from(KUBELET_PORT)),
                    format!(
                        "may not expose port {KUBELET_PORT} externally since it is used by kubelet"
                    ),
                ));
            }
        }
    }
    match spec.type_.as_str() {
        "LoadBalancer" | "NodePort" if headless => {
            errors.push(FieldError::invalid(
                "spec.clusterIPs[0]",
                GoValue::Str("None".into()),
                format!("may not be set to 'None' for {} services", spec.type_),
            ));
        }
        "ExternalName" => {
            let forbidden = "may not be set for ExternalName services";
            if !spec.cluster_ips.is_empty() {
                errors.push(FieldError::forbidden("spec.clusterIPs", forbidden));
            }
            if !spec.ip_families.is_empty() {
                errors.push(FieldError::forbidden("spec.ipFamilies", forbidden));
            }
            if spec.ip_family_policy.is_some() {
                errors.push(FieldError::forbidden("spec.ipFamilyPolicy", forbidden));
            }
            // One trailing dot is allowed (a fully qualified name); the rest is checked trimmed.
            let trimmed = spec.external_name.strip_suffix('.').unwrap_or(&spec.external_name);
            if trimmed.is_empty() {
                errors.push(FieldError::required("spec.externalName", ""));
            } else {
                push_invalid(errors, "spec.externalName", trimmed, dns1123_subdomain(trimmed));
            }
        }
        _ => {}
    }
}

/// `validateServicePort` for each port, plus the unique names a multi-port Service needs.
fn ports(errors: &mut Vec<FieldError>, t: Texts, svc: &Service) {
    let spec = &svc.spec;
    let mut names: Vec<&str> = Vec::new();
    let multi = spec.ports.len() > 1;
    for (i, port) in spec.ports.iter().enumerate() {
        // Paths are written for errors only: most ports have none.
        let path = |field: &str| format!("spec.ports[{i}].{field}");
        let invalid =
            |errors: &mut Vec<FieldError>, field: &str, value: &str, msgs: Vec<String>| {
                if !msgs.is_empty() {
                    push_invalid(errors, &path(field), value, msgs);
                }
            };
        if multi && port.name.is_empty() {
            errors.push(FieldError::required(path("name"), ""));
        } else if !port.name.is_empty() {
            invalid(errors, "name", &port.name, dns1123_label(t, &port.name));
            if names.contains(&port.name.as_str()) {
                errors.push(FieldError::duplicate(path("name"), GoValue::Str(port.name.clone())));
            } else {
                names.push(&port.name);
            }
        }
        if !(1..=65535).contains(&port.port) {
            errors.push(FieldError::invalid(
                path("port"),
                GoValue::Int(i64::from(port.port)),
                MSG_PORT,
            ));
        }
        if port.protocol.is_empty() {
            errors.push(FieldError::required(path("protocol"), ""));
        } else if !matches!(port.protocol.as_str(), "TCP" | "UDP" | "SCTP") {
            errors.push(FieldError::not_supported(
                path("protocol"),
                GoValue::Named(port.protocol.clone()),
                // `sets.List(supportedPortProtocols)`: sorted.
                &["SCTP", "TCP", "UDP"],
            ));
        }
        match &port.target_port {
            IntOrString::Int(n) => {
                if !(1..=65535).contains(n) {
                    errors.push(FieldError::invalid(
                        path("targetPort"),
                        GoValue::Int(i64::from(*n)),
                        MSG_PORT,
                    ));
                }
            }
            IntOrString::String(s) => invalid(errors, "targetPort", s, port_name(t, s)),
        }
        if let Some(app) = &port.app_protocol {
            invalid(errors, "appProtocol", app, qualified_name(t, app));
        }
    }
}

/// `sessionAffinity` and, for ClientIP, its timeout.
fn session_affinity(errors: &mut Vec<FieldError>, svc: &Service) {
    let spec = &svc.spec;
    match spec.session_affinity.as_str() {
        "" => errors.push(FieldError::required("spec.sessionAffinity", "")),
        "ClientIP" | "None" => {}
        other => errors.push(FieldError::not_supported(
            "spec.sessionAffinity",
            GoValue::Named(other.to_owned()),
            &["ClientIP", "None"],
        )),
    }
    if spec.session_affinity == "ClientIP" {
        let when = "when session affinity type is ClientIP";
        match &spec.session_affinity_config {
            None => errors.push(FieldError::required("spec.sessionAffinityConfig", when)),
            Some(config) => match &config.client_ip {
                None => {
                    errors.push(FieldError::required("spec.sessionAffinityConfig.clientIP", when))
                }
                Some(client) => match client.timeout_seconds {
                    None => errors.push(FieldError::required(
                        "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                        when,
                    )),
                    // 86400 itself passes although the message says "less than".
                    Some(t) if t <= 0 || t > MAX_AFFINITY_SECONDS => {
                        errors.push(FieldError::invalid(
                            "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                            GoValue::Int(i64::from(t)),
                            format!("must be greater than 0 and less than {MAX_AFFINITY_SECONDS}"),
                        ))
                    }
                    Some(_) => {}
                },
            },
        }
    } else if spec.session_affinity == "None" && spec.session_affinity_config.is_some() {
        errors.push(FieldError::forbidden(
            "spec.sessionAffinityConfig",
            "must not be set when session affinity is None",
        ));
    }
}

/// `externalIPs`: valid (strictly, unless the old object held the same value) and not special.
fn external_ips(errors: &mut Vec<FieldError>, svc: &Service, old: Option<&Service>, strict: bool) {
    let spec = &svc.spec;
    let old_external: &[String] = old.map_or(&[], |o| o.spec.external_ips.as_slice());
    for (i, ip) in spec.external_ips.iter().enumerate() {
        let path = format!("spec.externalIPs[{i}]");
        let ratcheted = old_external.contains(ip);
        let msgs = ip_messages(ip, strict && !ratcheted);
        if msgs.is_empty() {
            errors.extend(non_special_ip_errors(&path, ip));
        } else {
            for msg in msgs {
                errors.push(FieldError::invalid(path.clone(), GoValue::Str(ip.clone()), msg));
            }
        }
    }
}

/// `spec.type`: required and one of the four types.
fn service_type(errors: &mut Vec<FieldError>, svc: &Service) {
    let spec = &svc.spec;
    match spec.type_.as_str() {
        "" => errors.push(FieldError::required("spec.type", "")),
        "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName" => {}
        other => errors.push(FieldError::not_supported(
            "spec.type",
            GoValue::Named(other.to_owned()),
            &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
        )),
    }
}

/// NodePorts: forbidden on ClusterIP, unique per protocol; ports unique per protocol.
fn node_ports(errors: &mut Vec<FieldError>, svc: &Service) {
    let spec = &svc.spec;
    if spec.type_ == "ClusterIP" {
        for (i, port) in spec.ports.iter().enumerate() {
            if port.node_port != 0 {
                errors.push(FieldError::forbidden(
                    format!("spec.ports[{i}].nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let mut node_ports: Vec<(&str, i32)> = Vec::new();
    for (i, port) in spec.ports.iter().enumerate() {
        if port.node_port == 0 {
            continue;
        }
        let key = (port.protocol.as_str(), port.node_port);
        if node_ports.contains(&key) {
            errors.push(FieldError::duplicate(
                format!("spec.ports[{i}].nodePort"),
                GoValue::Int(i64::from(port.node_port)),
            ));
        }
        node_ports.push(key);
    }
    let mut port_keys: Vec<(&str, i32)> = Vec::new();
    for (i, port) in spec.ports.iter().enumerate() {
        let key = (port.protocol.as_str(), port.port);
        if port_keys.contains(&key) {
            // The bad value is the map key: a ServicePort with only Protocol and Port set.
            let key_port = crate::model::ServicePort {
                protocol: port.protocol.clone(),
                port: port.port,
                ..crate::model::ServicePort::default()
            };
            errors.push(FieldError::duplicate(
                format!("spec.ports[{i}]"),
                service_port_value(&key_port),
            ));
        }
        port_keys.push(key);
    }
}

/// `loadBalancerSourceRanges`, else the legacy source-ranges annotation: LoadBalancer only,
/// valid CIDRs (strictly, unless the old object held the same range).
fn load_balancer_source_ranges(
    errors: &mut Vec<FieldError>,
    svc: &Service,
    old: Option<&Service>,
    strict: bool,
    annotation_ratchet: bool,
) {
    let spec = &svc.spec;
    let annotations = &svc.metadata.annotations;
    if !spec.load_balancer_source_ranges.is_empty() {
        // Quirk kept on purpose: the error path uses the Go field name with a capital L.
        let path = "spec.LoadBalancerSourceRanges";
        if spec.type_ != "LoadBalancer" {
            errors.push(FieldError::forbidden(path, LB_ONLY));
        }
        let old_ranges: &[String] =
            old.map_or(&[], |o| o.spec.load_balancer_source_ranges.as_slice());
        for (i, range) in spec.load_balancer_source_ranges.iter().enumerate() {
            let trimmed = range.trim();
            let ratcheted = old_ranges.iter().any(|r| r.trim() == trimmed);
            for msg in cidr_messages(trimmed, strict && !ratcheted) {
                errors.push(FieldError::invalid(
                    format!("{path}[{i}]"),
                    GoValue::Str(trimmed.to_owned()),
                    msg,
                ));
            }
        }
    } else if let Some(value) = annotations.get(ANNOTATION_LOAD_BALANCER_SOURCE_RANGES_KEY) {
        let path = format!("metadata.annotations[{ANNOTATION_LOAD_BALANCER_SOURCE_RANGES_KEY}]");
        if spec.type_ != "LoadBalancer" {
            errors.push(FieldError::forbidden(path.clone(), LB_ONLY));
        }
        // From 1.33 an annotation the update leaves as it was is not checked again
        // (`Rule::SourceRangesAnnotationRatchet`); each entry goes through
        // IsValidCIDRForLegacyField with no old values, so the strict checks apply to every
        // entry when StrictIPCIDRValidation is on (1.30 to 1.32: IsValidCIDR, the sloppy parse).
        let ratcheted = annotation_ratchet
            && old.is_some_and(|o| {
                o.metadata.annotations.get(ANNOTATION_LOAD_BALANCER_SOURCE_RANGES_KEY)
                    == Some(value)
            });
        let value = value.trim();
        if !value.is_empty() && !ratcheted {
            for entry in value.split(',') {
                let entry = entry.trim();
                for msg in cidr_messages(entry, strict) {
                    errors.push(FieldError::invalid(
                        path.clone(),
                        GoValue::Str(entry.to_owned()),
                        msg,
                    ));
                }
            }
        }
    }
}

/// `loadBalancerSourceRanges`, else the legacy annotation, as 1.24 to 1.29 check them
/// (`ValidateService` through `apiservice.GetLoadBalancerSourceRanges`): the whole list is one
/// value, printed with `fmt.Sprintf("%v", ranges)` (`[a b]`) and quoted as a string, and one
/// error covers every bad entry; the message keeps upstream's trailing space.
fn load_balancer_source_ranges_whole(errors: &mut Vec<FieldError>, svc: &Service) {
    let spec = &svc.spec;
    let annotation = svc.metadata.annotations.get(ANNOTATION_LOAD_BALANCER_SOURCE_RANGES_KEY);
    let (path, value, entries): (String, String, Vec<&str>) =
        if !spec.load_balancer_source_ranges.is_empty() {
            let ranges = &spec.load_balancer_source_ranges;
            (
                "spec.LoadBalancerSourceRanges".to_owned(),
                format!("[{}]", ranges.join(" ")),
                ranges.iter().map(String::as_str).collect(),
            )
        } else if let Some(value) = annotation {
            // An empty annotation means the default `0.0.0.0/0`.
            let trimmed = value.trim();
            let entries =
                if trimmed.is_empty() { Vec::new() } else { trimmed.split(',').collect() };
            (
                format!("metadata.annotations[{ANNOTATION_LOAD_BALANCER_SOURCE_RANGES_KEY}]"),
                value.clone(),
                entries,
            )
        } else {
            return;
        };
    if spec.type_ != "LoadBalancer" {
        errors.push(FieldError::forbidden(path.clone(), LB_ONLY));
    }
    // `utilnet.ParseIPNets` trims each entry and parses it sloppily.
    if entries.iter().any(|e| crate::net::parse_cidr_sloppy(e.trim()).is_none()) {
        errors.push(FieldError::invalid(
            path,
            GoValue::Str(value),
            "must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24 ",
        ));
    }
}

/// `allocateLoadBalancerNodePorts`: required on LoadBalancer (defaulted), forbidden elsewhere.
fn allocate_load_balancer_node_ports(errors: &mut Vec<FieldError>, svc: &Service) {
    let spec = &svc.spec;
    if spec.type_ == "LoadBalancer" {
        if spec.allocate_load_balancer_node_ports.is_none() {
            // Quirk kept on purpose: upstream builds this path without the `spec.` prefix.
            errors.push(FieldError::required("allocateLoadBalancerNodePorts", ""));
        }
    } else if spec.allocate_load_balancer_node_ports.is_some() {
        errors.push(FieldError::forbidden("spec.allocateLoadBalancerNodePorts", LB_ONLY));
    }
}

/// `validateServiceExternalTrafficPolicy`, first half: only externally accessible Services set
/// `externalTrafficPolicy`, and they must.
///
/// "Externally accessible" includes ClusterIP Services with externalIPs from 1.29
/// (kubernetes/kubernetes#119150); before, only NodePort and LoadBalancer, with their own
/// message.
fn external_traffic_policy(errors: &mut Vec<FieldError>, svc: &Service, profile: &Profile) {
    let spec = &svc.spec;
    let etp = spec.external_traffic_policy.as_str();
    let with_external_ips = in_force(Rule::EtpForExternalIps, profile.version.minor);
    let accessible =
        if with_external_ips { svc.is_externally_accessible() } else { svc.needs_node_port() };
    if !accessible {
        if !etp.is_empty() {
            errors.push(FieldError::invalid(
                "spec.externalTrafficPolicy",
                GoValue::Named(etp.to_owned()),
                if with_external_ips {
                    "may only be set for externally-accessible services"
                } else {
                    "may only be set when `type` is 'NodePort' or 'LoadBalancer'"
                },
            ));
        }
    } else if etp.is_empty() {
        errors.push(FieldError::required("spec.externalTrafficPolicy", ""));
    } else if etp != "Cluster" && etp != "Local" {
        errors.push(FieldError::not_supported(
            "spec.externalTrafficPolicy",
            GoValue::Named(etp.to_owned()),
            &["Cluster", "Local"],
        ));
    }
}

/// `validateServiceExternalTrafficPolicy`, second half: `healthCheckNodePort` exactly when a
/// health check is needed.
fn health_check_node_port(errors: &mut Vec<FieldError>, svc: &Service) {
    let spec = &svc.spec;
    let hcnp = spec.health_check_node_port;
    if !svc.needs_health_check() {
        if hcnp != 0 {
            errors.push(FieldError::invalid(
                "spec.healthCheckNodePort",
                GoValue::Int(i64::from(hcnp)),
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            ));
        }
    } else if hcnp == 0 {
        errors.push(FieldError::required("spec.healthCheckNodePort", ""));
    } else if !(1..=65535).contains(&hcnp) {
        errors.push(FieldError::invalid(
            "spec.healthCheckNodePort",
            GoValue::Int(i64::from(hcnp)),
            MSG_PORT,
        ));
    }
}

/// `validateServiceInternalTrafficFieldsValue`: required on the types that route traffic, in
/// v1.24.0 and v1.25.0 only while the ServiceInternalTrafficPolicy gate is on (always from
/// v1.26.1); a value, when present, is checked either way.
fn internal_traffic_policy(errors: &mut Vec<FieldError>, svc: &Service, profile: &Profile) {
    let spec = &svc.spec;
    match &spec.internal_traffic_policy {
        None if profile.gate(Feature::ServiceInternalTrafficPolicy)
            && matches!(spec.type_.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") =>
        {
            errors.push(FieldError::required("spec.internalTrafficPolicy", ""));
        }
        Some(p) if p != "Cluster" && p != "Local" => errors.push(FieldError::not_supported(
            "spec.internalTrafficPolicy",
            GoValue::Named(p.clone()),
            &["Cluster", "Local"],
        )),
        _ => {}
    }
}

/// `validateServiceTrafficDistribution`: PreferClose, and the PreferSame* values with their
/// gate (`Rule::TrafficDistributionOrder`).
fn traffic_distribution(errors: &mut Vec<FieldError>, svc: &Service, profile: &Profile) {
    let spec = &svc.spec;
    if let Some(td) = &spec.traffic_distribution {
        // Upstream passes a literal slice to `field.NotSupported`, which keeps its order:
        // PreferClose, PreferSameZone, PreferSameNode (not sorted).
        let supported: &[&str] = if profile.gate(Feature::PreferSameTrafficDistribution) {
            &["PreferClose", "PreferSameZone", "PreferSameNode"]
        } else {
            &["PreferClose"]
        };
        if !supported.contains(&td.as_str()) {
            errors.push(FieldError::not_supported(
                "spec.trafficDistribution",
                GoValue::Str(td.clone()),
                supported,
            ));
        }
    }
}

/// Without MixedProtocolLBService (1.24 and 1.25 with the gate off), a LoadBalancer may not
/// mix protocols unless the old object already did, whatever its type
/// (`conditional_validation.go` `validateMixedProtocolLBService`: `serviceHasMixedProtocols(old)`
/// looks at the ports only, despite its comment about type=LoadBalancer).
fn mixed_protocol_load_balancer(
    errors: &mut Vec<FieldError>,
    svc: &Service,
    old: Option<&Service>,
    profile: &Profile,
) {
    let spec = &svc.spec;
    if !profile.gate(Feature::MixedProtocolLBService) && spec.type_ == "LoadBalancer" {
        let protocols = |s: &Service| {
            let mut p: Vec<&str> = s.spec.ports.iter().map(|p| p.protocol.as_str()).collect();
            p.sort_unstable();
            p.dedup();
            p.len()
        };
        let was_mixed_lb = old.is_some_and(|o| protocols(o) > 1);
        if protocols(svc) > 1 && !was_mixed_lb {
            let go: Vec<String> = spec.ports.iter().map(service_port_go).collect();
            let json: Vec<String> = spec.ports.iter().map(service_port_json).collect();
            errors.push(FieldError::invalid(
                "spec.ports",
                GoValue::Composite {
                    go: format!("[]core.ServicePort{{{}}}", go.join(", ")),
                    json: format!("[{}]", json.join(",")),
                },
                "may not contain more than 1 protocol when type is 'LoadBalancer'",
            ));
        }
    }
}

/// `validateLoadBalancerClassField`: on update a LoadBalancer may not change its class; a class
/// must be a qualified name on LoadBalancers and is forbidden on other types.
fn load_balancer_class(
    errors: &mut Vec<FieldError>,
    t: Texts,
    svc: &Service,
    old: Option<&Service>,
) {
    if let Some(old) = old
        && old.spec.type_ == "LoadBalancer"
        && svc.spec.type_ == "LoadBalancer"
        && old.spec.load_balancer_class != svc.spec.load_balancer_class
    {
        errors.push(FieldError::invalid(
            "spec.loadBalancerClass",
            opt_str(svc.spec.load_balancer_class.as_ref()),
            "may not change once set",
        ));
    }
    if let Some(class) = &svc.spec.load_balancer_class {
        if svc.spec.type_ == "LoadBalancer" {
            push_invalid(errors, "spec.loadBalancerClass", class, qualified_name(t, class));
        } else {
            errors.push(FieldError::forbidden(
                "spec.loadBalancerClass",
                "may only be used when `type` is 'LoadBalancer'",
            ));
        }
    }
}

/// `ValidateServiceClusterIPsRelatedFields`, skipped for ExternalName.
/// With `strict` (StrictIPCIDRValidation), IPs also fail on leading zeros and IPv4-mapped
/// forms, except values the old object already held (ratcheting).
pub(crate) fn cluster_ips_related_fields(
    svc: &Service,
    strict: bool,
    old_ips: &[String],
) -> Vec<FieldError> {
    let spec = &svc.spec;
    let mut errors = Vec::new();
    if spec.type_ == "ExternalName" {
        return errors;
    }
    let ips = || GoValue::strings(&spec.cluster_ips);
    if !spec.cluster_ip.is_empty() {
        if spec.cluster_ips.is_empty() {
            errors.push(FieldError::required("spec.clusterIPs", ""));
        } else if spec.cluster_ips[0] != spec.cluster_ip {
            errors.push(FieldError::invalid(
                "spec.clusterIPs",
                ips(),
                "first value must match `clusterIP`",
            ));
        }
    } else if !spec.cluster_ips.is_empty() {
        errors.push(FieldError::invalid(
            "spec.clusterIPs",
            ips(),
            "must be empty when `clusterIP` is not specified",
        ));
    }
    let mut seen: Vec<&str> = Vec::new();
    for (i, family) in spec.ip_families.iter().enumerate() {
        if family != "IPv4" && family != "IPv6" {
            errors.push(FieldError::not_supported(
                format!("spec.ipFamilies[{i}]"),
                GoValue::Named(family.clone()),
                &["IPv4", "IPv6"],
            ));
        }
        if seen.contains(&family.as_str()) {
            errors.push(FieldError::duplicate(
                format!("spec.ipFamilies[{i}]"),
                GoValue::Named(family.clone()),
            ));
        }
        seen.push(family);
    }
    if let Some(policy) = &spec.ip_family_policy
        && !matches!(policy.as_str(), "SingleStack" | "PreferDualStack" | "RequireDualStack")
    {
        errors.push(FieldError::not_supported(
            "spec.ipFamilyPolicy",
            GoValue::Named(policy.clone()),
            // `sets.List(supportedServiceIPFamilyPolicy)`: sorted.
            &["PreferDualStack", "RequireDualStack", "SingleStack"],
        ));
    }
    let mut has_invalid_ips = false;
    for (i, ip) in spec.cluster_ips.iter().enumerate() {
        if i == 0 && ip == "None" {
            if spec.cluster_ips.len() > 1 {
                errors.push(FieldError::invalid(
                    "spec.clusterIPs",
                    ips(),
                    "'None' must be the first and only value",
                ));
                has_invalid_ips = true;
            }
            continue;
        }
        let msgs = ip_messages(ip, strict && !old_ips.contains(ip));
        if !msgs.is_empty() {
            has_invalid_ips = true;
        }
        for msg in msgs {
            errors.push(FieldError::invalid(
                format!("spec.clusterIPs[{i}]"),
                GoValue::Str(ip.clone()),
                msg,
            ));
        }
    }
    if spec.cluster_ips.len() > 2 {
        errors.push(FieldError::invalid("spec.clusterIPs", ips(), "may only hold up to 2 values"));
    }
    if has_invalid_ips {
        return errors;
    }
    if spec.cluster_ips.len() >= 2 {
        let fams: Vec<Option<IpFamily>> =
            spec.cluster_ips.iter().map(|ip| parse_ip_sloppy(ip).map(IpFamily::of)).collect();
        // `IsDualStackIPStrings`: at least one of each family (a third IP is caught above).
        let dual = fams.contains(&Some(IpFamily::V4)) && fams.contains(&Some(IpFamily::V6));
        if !dual {
            errors.push(FieldError::invalid(
                "spec.clusterIPs",
                ips(),
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    let headless = is_headless(svc);
    if !headless && !spec.cluster_ips.is_empty() && !spec.ip_families.is_empty() {
        for (i, family) in spec.ip_families.iter().enumerate() {
            let Some(ip) = spec.cluster_ips.get(i) else { break };
            let Some(addr) = parse_ip_sloppy(ip) else { continue };
            let expected = match family.as_str() {
                "IPv4" => IpFamily::V4,
                "IPv6" => IpFamily::V6,
                _ => continue,
            };
            if IpFamily::of(addr) != expected {
                errors.push(FieldError::invalid(
                    format!("spec.clusterIPs[{i}]"),
                    GoValue::Str(ip.clone()),
                    format!(
                        "expected an {} value as indicated by `ipFamilies[{i}]`",
                        expected.as_str()
                    ),
                ));
            }
        }
    }
    errors
}

/// The clusterIPs rules of `ValidateServiceUpdate`: clusterIPs may not change, be unset, or
/// shrink without SingleStack.
fn cluster_ips_update(errors: &mut Vec<FieldError>, new: &Service, old: &Service) {
    if new.spec.type_ == "ExternalName" || old.spec.type_ == "ExternalName" {
        return;
    }
    if is_headless(new) && is_headless(old) {
        return;
    }
    let (n, o) = (&new.spec.cluster_ips, &old.spec.cluster_ips);
    let value = || GoValue::strings(n);
    let changed = "may not change once set";
    if n.len() == o.len() {
        for i in 0..o.len() {
            if n[i] != o[i] {
                errors.push(FieldError::invalid(format!("spec.clusterIPs[{i}]"), value(), changed));
            }
        }
        return;
    }
    if o.len() > n.len() {
        if n.is_empty() {
            errors.push(FieldError::invalid(
                "spec.clusterIPs[0]",
                value(),
                "primary clusterIP can not be unset",
            ));
            return;
        }
        if n[0] != o[0] {
            errors.push(FieldError::invalid("spec.clusterIPs[0]", value(), changed));
        }
        if n.len() == 1 && new.spec.ip_family_policy.as_deref() != Some("SingleStack") {
            errors.push(FieldError::invalid(
                "spec.ipFamilyPolicy",
                opt_str(new.spec.ip_family_policy.as_ref()),
                "must be set to 'SingleStack' when releasing the secondary clusterIP",
            ));
        }
        return;
    }
    // Upgrade: the primary stays.
    if !o.is_empty() && n[0] != o[0] {
        errors.push(FieldError::invalid("spec.clusterIPs[0]", value(), changed));
    }
}

/// The ipFamilies rules of `ValidateServiceUpdate`, quirks included: the path is always
/// `ipFamilies[0]`, and some errors carry the
/// clusterIPs slice as the bad value.
fn ip_families_update(errors: &mut Vec<FieldError>, new: &Service, old: &Service) {
    if new.spec.type_ == "ExternalName" || old.spec.type_ == "ExternalName" {
        return;
    }
    if is_headless(new) != is_headless(old) || is_headless(new) {
        return;
    }
    let (n, o) = (&new.spec.ip_families, &old.spec.ip_families);
    let changed = "may not change once set";
    if n.len() == o.len() {
        for i in 0..o.len() {
            if n[i] != o[i] {
                // Quirk kept on purpose: upstream reports every flipped index at [0].
                errors.push(FieldError::invalid("spec.ipFamilies[0]", families(n), changed));
            }
        }
        return;
    }
    let clusters = || GoValue::strings(&new.spec.cluster_ips);
    if o.len() > n.len() {
        // Quirk kept on purpose: upstream tests the new clusterIPs here, not the families.
        if new.spec.cluster_ips.is_empty() {
            errors.push(FieldError::invalid(
                "spec.ipFamilies[0]",
                families(n),
                "primary ipFamily can not be unset",
            ));
        }
        if !n.is_empty() && n.first() != o.first() {
            errors.push(FieldError::invalid("spec.ipFamilies[0]", clusters(), changed));
        }
        if n.len() == 1 && new.spec.ip_family_policy.as_deref() != Some("SingleStack") {
            errors.push(FieldError::invalid(
                "spec.ipFamilyPolicy",
                opt_str(new.spec.ip_family_policy.as_ref()),
                "must be set to 'SingleStack' when releasing the secondary ipFamily",
            ));
        }
        return;
    }
    if !o.is_empty() && n.first() != o.first() {
        errors.push(FieldError::invalid("spec.ipFamilies[0]", clusters(), changed));
    }
}
