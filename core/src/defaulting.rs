//! API defaulting of a Service as kube-apiserver applies it on create (`SetDefaults_Service` of
//! `pkg/apis/core/v1/defaults.go`): only the fields the v1 defaulter touches; family and IP defaults come from
//! the allocator.

use crate::model::{ClientIpConfig, IntOrString, Service, SessionAffinityConfig};
use crate::profile::{Feature, Profile};

/// `timeoutSeconds` default for ClientIP affinity (3 hours).
pub(crate) const DEFAULT_CLIENT_IP_TIMEOUT_SECONDS: i32 = 10800;

/// Applies `SetDefaults_Service` plus the request namespace default (`default`).
/// `etp_for_external_ips`: whether the release defaults `externalTrafficPolicy` for ClusterIP
/// Services with externalIPs too (1.29+, kubernetes/kubernetes#119150; the pipeline reads it
/// from the validation layer's release table).
pub(crate) fn default_service(
    service: &mut Service,
    profile: &Profile,
    etp_for_external_ips: bool,
) {
    if service.metadata.namespace.is_empty() {
        service.metadata.namespace = "default".to_owned();
    }
    let spec = &mut service.spec;
    if spec.session_affinity.is_empty() {
        spec.session_affinity = "None".to_owned();
    }
    if spec.session_affinity == "None" {
        spec.session_affinity_config = None;
    }
    if spec.session_affinity == "ClientIP" {
        let config =
            spec.session_affinity_config.get_or_insert_with(SessionAffinityConfig::default);
        let client = config.client_ip.get_or_insert_with(ClientIpConfig::default);
        if client.timeout_seconds.is_none() {
            client.timeout_seconds = Some(DEFAULT_CLIENT_IP_TIMEOUT_SECONDS);
        }
    }
    if spec.type_.is_empty() {
        spec.type_ = "ClusterIP".to_owned();
    }
    for port in &mut spec.ports {
        if port.protocol.is_empty() {
            port.protocol = "TCP".to_owned();
        }
        let unset = match &port.target_port {
            IntOrString::Int(0) => true,
            IntOrString::String(s) => s.is_empty(),
            IntOrString::Int(_) => false,
        };
        if unset {
            port.target_port = IntOrString::Int(port.port);
        }
    }
    let externally_accessible = spec.type_ == "LoadBalancer"
        || spec.type_ == "NodePort"
        || (etp_for_external_ips && spec.type_ == "ClusterIP" && !spec.external_ips.is_empty());
    if externally_accessible && spec.external_traffic_policy.is_empty() {
        spec.external_traffic_policy = "Cluster".to_owned();
    }
    // v1.24.0 and v1.25.0 default `internalTrafficPolicy` only with the
    // ServiceInternalTrafficPolicy gate on; from v1.26.1 (gate locked) always.
    if profile.gate(Feature::ServiceInternalTrafficPolicy)
        && spec.internal_traffic_policy.is_none()
        && matches!(spec.type_.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP")
    {
        spec.internal_traffic_policy = Some("Cluster".to_owned());
    }
    if spec.type_ == "LoadBalancer" && spec.allocate_load_balancer_node_ports.is_none() {
        spec.allocate_load_balancer_node_ports = Some(true);
    }
}
