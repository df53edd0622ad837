//! The quirks of kube-apiserver's texts and paths that svclab reproduces on purpose, in one release.

use super::*;

#[test]
fn load_balancer_source_ranges_error_path_has_a_capital_l() {
    // validation.go builds the error path from the Go field name `LoadBalancerSourceRanges`,
    // while the warning (warnings.go) uses the JSON name: both kept verbatim.
    check(
        false,
        &format!(
            "{}apiVersion: v1
kind: Service
metadata: {{name: lb}}
spec:
  type: ClusterIP
  loadBalancerSourceRanges: [' 10.0.0.0/8 ', 10.1.2.3/8, not-a-cidr]
  ports: [{{port: 80}}]
",
            profile("1.33")
        ),
        expect![[r#"
            Error FieldValueForbidden spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer' @10:3
            Error FieldValueInvalid spec.LoadBalancerSourceRanges[2]: Invalid value: "not-a-cidr": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64) @10:58
            service lb rejected
            --- text
            The Service "lb" is invalid: 
            * spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'
            * spec.LoadBalancerSourceRanges[2]: Invalid value: "not-a-cidr": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)
        "#]],
    );
}

#[test]
fn source_range_warnings_use_the_lower_case_path() {
    // Host bits set: a warning (not an error) on `spec.loadBalancerSourceRanges[i]`.
    check(
        false,
        &format!(
            "{}apiVersion: v1
kind: Service
metadata: {{name: lb}}
spec:
  type: LoadBalancer
  loadBalancerSourceRanges: [10.1.2.3/8, 010.0.0.0/8, '2001:db8:0::/64']
  ports: [{{port: 80}}]
",
            profile("1.33")
        ),
        expect![[r#"
            Warning Warning spec.loadBalancerSourceRanges[0]: CIDR value "10.1.2.3/8" is ambiguous in this context (should be "10.0.0.0/8" or "10.1.2.3/32"?) @10:30
            Warning Warning spec.loadBalancerSourceRanges[1]: non-standard CIDR value "010.0.0.0/8" will be considered invalid in a future Kubernetes release: use "10.0.0.0/8" @10:42
            Warning Warning spec.loadBalancerSourceRanges[2]: IPv6 CIDR value "2001:db8:0::/64" should be in RFC 5952 canonical format ("2001:db8::/64") @10:55
            service lb created
            --- text
            Warning: spec.loadBalancerSourceRanges[0]: CIDR value "10.1.2.3/8" is ambiguous in this context (should be "10.0.0.0/8" or "10.1.2.3/32"?)
            Warning: spec.loadBalancerSourceRanges[1]: non-standard CIDR value "010.0.0.0/8" will be considered invalid in a future Kubernetes release: use "10.0.0.0/8"
            Warning: spec.loadBalancerSourceRanges[2]: IPv6 CIDR value "2001:db8:0::/64" should be in RFC 5952 canonical format ("2001:db8::/64")
        "#]],
    );
}

#[test]
fn allocate_load_balancer_node_ports_path_has_no_spec_prefix() {
    // Upstream reports `field.Required(field.NewPath("allocateLoadBalancerNodePorts"))`; only
    // reachable as written, because defaulting sets the field for LoadBalancers.
    check(
        true,
        &AS_WRITTEN
            .replace("type: ClusterIP", "type: LoadBalancer\n  externalTrafficPolicy: Cluster"),
        expect![[r#"
            Error FieldValueRequired allocateLoadBalancerNodePorts: Required value @1:1
            service s rejected
            --- text
            The Service "s" is invalid: allocateLoadBalancerNodePorts: Required value
        "#]],
    );
}

#[test]
fn annotation_source_range_path_keeps_the_map_key_unquoted() {
    // `field.Path.Key` appends `[key]` without quoting; the entry itself has no index.
    check(
        false,
        "apiVersion: v1
kind: Service
metadata:
  name: a
  annotations: {service.beta.kubernetes.io/load-balancer-source-ranges: '10.0.0.0/8, bad'}
spec:
  type: LoadBalancer
  ports: [{port: 80}]
",
        expect![[r#"
            Error FieldValueInvalid metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Invalid value: "bad": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64) @5:17
            service a rejected
            --- text
            The Service "a" is invalid: metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Invalid value: "bad": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)
        "#]],
    );
}

#[test]
fn quoted_number_target_port_is_a_port_name() {
    // `targetPort: "8080"` decodes to an IntOrString string: IANA_SVC_NAME rules apply.
    check(
        false,
        "apiVersion: v1
kind: Service
metadata: {name: t}
spec:
  ports: [{port: 80, targetPort: '8080'}, {name: x, port: 81, targetPort: -bad--name-that-is-long}]
",
        expect![[r#"
            Error FieldValueRequired spec.ports[0].name: Required value @5:11
            Error FieldValueInvalid spec.ports[0].targetPort: Invalid value: "8080": must contain at least one letter (a-z) @5:22
            Error FieldValueInvalid spec.ports[1].targetPort: Invalid value: "-bad--name-that-is-long": must be no more than 15 characters @5:63
            Error FieldValueInvalid spec.ports[1].targetPort: Invalid value: "-bad--name-that-is-long": must not contain consecutive hyphens @5:63
            Error FieldValueInvalid spec.ports[1].targetPort: Invalid value: "-bad--name-that-is-long": must not begin or end with a hyphen @5:63
            service t rejected
            --- text
            The Service "t" is invalid: 
            * spec.ports[0].name: Required value
            * spec.ports[0].targetPort: Invalid value: "8080": must contain at least one letter (a-z)
            * spec.ports[1].targetPort: Invalid value: "-bad--name-that-is-long": must be no more than 15 characters
            * spec.ports[1].targetPort: Invalid value: "-bad--name-that-is-long": must not contain consecutive hyphens
            * spec.ports[1].targetPort: Invalid value: "-bad--name-that-is-long": must not begin or end with a hyphen
        "#]],
    );
}

#[test]
fn affinity_timeout_accepts_86400_despite_the_message() {
    // The check is `> 86400` but the message says "less than 86400".
    let svc = |t: u32, name: &str| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec:\n  sessionAffinity: ClientIP\n  sessionAffinityConfig: {{clientIP: {{timeoutSeconds: {t}}}}}\n  ports: [{{port: 80}}]\n---\n"
        )
    };
    check(
        false,
        &format!("{}{}", svc(86400, "ok"), svc(86401, "bad")),
        expect![[r#"
        Error FieldValueInvalid spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 86401: must be greater than 0 and less than 86400 @14:38
        service ok created
        service bad rejected
        --- text
        The Service "bad" is invalid: spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 86401: must be greater than 0 and less than 86400
    "#]],
    );
}

#[test]
fn special_addresses_on_external_ips() {
    // ValidateNonSpecialIP: the unspecified message echoes the input; IPv4-mapped addresses are
    // classified by their IPv4 part; IPv6 link-local multicast is scope 2 (ff?2::), whatever the
    // text says.
    check(
        false,
        &format!(
            "{}apiVersion: v1
kind: Service
metadata: {{name: e}}
spec:
  externalIPs: [0.0.0.0, '::', '::ffff:127.0.0.1', 169.254.1.1, 'ff12::1', 224.0.0.5, 1.2.3]
  ports: [{{port: 80}}]
",
            profile("1.33")
        ),
        expect![[r#"
            Error FieldValueInvalid spec.externalIPs[0]: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0) @9:17
            Error FieldValueInvalid spec.externalIPs[1]: Invalid value: "::": may not be unspecified (::) @9:26
            Error FieldValueInvalid spec.externalIPs[2]: Invalid value: "::ffff:127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128) @9:32
            Error FieldValueInvalid spec.externalIPs[3]: Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10) @9:52
            Error FieldValueInvalid spec.externalIPs[4]: Invalid value: "ff12::1": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10) @9:65
            Error FieldValueInvalid spec.externalIPs[5]: Invalid value: "224.0.0.5": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10) @9:76
            Error FieldValueInvalid spec.externalIPs[6]: Invalid value: "1.2.3": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff) @9:87
            service e rejected
            --- text
            The Service "e" is invalid: 
            * spec.externalIPs[0]: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)
            * spec.externalIPs[1]: Invalid value: "::": may not be unspecified (::)
            * spec.externalIPs[2]: Invalid value: "::ffff:127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)
            * spec.externalIPs[3]: Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)
            * spec.externalIPs[4]: Invalid value: "ff12::1": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)
            * spec.externalIPs[5]: Invalid value: "224.0.0.5": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)
            * spec.externalIPs[6]: Invalid value: "1.2.3": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)
        "#]],
    );
}

#[test]
fn annotation_keys_are_checked_lower_cased_but_label_keys_are_not() {
    // ValidateAnnotations lower-cases the key before IsQualifiedName; ValidateLabels does not.
    check(
        false,
        "apiVersion: v1
kind: Service
metadata:
  name: k
  labels: {Example.COM/x: v}
  annotations: {Example.COM/x: v}
spec:
  ports: [{port: 80}]
",
        expect![[r#"
            Error FieldValueInvalid metadata.labels: Invalid value: "Example.COM/x": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*') @5:3
            service k rejected
            --- text
            The Service "k" is invalid: metadata.labels: Invalid value: "Example.COM/x": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
        "#]],
    );
}

#[test]
fn endpoint_slice_rules_and_the_fqdn_warning_with_its_bogus_spec_prefix() {
    // The FQDN deprecation warning says `spec.addressType` although EndpointSlices have no
    // spec; errors use bare paths and kubectl's header the bare kind.
    check(
        false,
        "apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: fqdn}
addressType: FQDN
endpoints: [{addresses: [db.example.com]}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: bad}
addressType: IPv4
endpoints: [{addresses: ['::1', 0.0.0.0, 010.1.2.3]}, {addresses: []}]
ports: [{port: 80}, {port: 81}, {name: x, protocol: HTTP}]
",
        expect![[r#"
            Warning Warning spec.addressType: FQDN endpoints are deprecated @4:1
            Error FieldValueDuplicate ports[1].name: Duplicate value: "" @12:21
            Error FieldValueNotSupported ports[2].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP" @12:43
            Error FieldValueInvalid endpoints[0].addresses: Invalid value: "::1": must be an IPv4 address @11:14
            Error FieldValueInvalid endpoints[0].addresses[0]: Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128) @11:26
            Error FieldValueInvalid endpoints[0].addresses[1]: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0) @11:33
            Error FieldValueInvalid endpoints[0].addresses[2]: Invalid value: "010.1.2.3": must not have leading 0s @11:42
            Error FieldValueRequired endpoints[1].addresses: Required value @11:56
            --- text
            Warning: spec.addressType: FQDN endpoints are deprecated
            The EndpointSlice "bad" is invalid: 
            * ports[1].name: Duplicate value: ""
            * ports[2].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"
            * endpoints[0].addresses: Invalid value: "::1": must be an IPv4 address
            * endpoints[0].addresses[0]: Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128)
            * endpoints[0].addresses[1]: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)
            * endpoints[0].addresses[2]: Invalid value: "010.1.2.3": must not have leading 0s
            * endpoints[1].addresses: Required value
        "#]],
    );
}

#[test]
fn svclab_advisories_are_not_apiserver_warnings() {
    // The apiserver never warns about spec.loadBalancerIP or tolerate-unready-endpoints; svclab
    // says so under its own reason.
    check(
        false,
        "apiVersion: v1
kind: Service
metadata:
  name: lb
  annotations: {service.alpha.kubernetes.io/tolerate-unready-endpoints: 'true'}
spec:
  type: LoadBalancer
  loadBalancerIP: 203.0.113.10
  ports: [{port: 80}]
",
        expect![[r#"
            Warning SvclabAdvisory annotation service.alpha.kubernetes.io/tolerate-unready-endpoints was deprecated in Kubernetes 1.11 and is no longer honoured; set spec.publishNotReadyAddresses: true instead @5:17
            Warning SvclabAdvisory spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs) @8:3
            service lb created
            --- text
            svclab: annotation service.alpha.kubernetes.io/tolerate-unready-endpoints was deprecated in Kubernetes 1.11 and is no longer honoured; set spec.publishNotReadyAddresses: true instead
            svclab: spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs)
        "#]],
    );
}

#[test]
fn mixed_protocol_load_balancer_without_the_gate() {
    // MixedProtocolLBService could still be disabled in 1.24/1.25; the registry then rejects a
    // new LoadBalancer mixing protocols, with the whole port slice as `%#v`.
    check(
        false,
        "apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: '1.24'
featureGates: {MixedProtocolLBService: false}
---
apiVersion: v1
kind: Service
metadata: {name: dns}
spec:
  type: LoadBalancer
  ports: [{name: u, port: 53, protocol: UDP}, {name: t, port: 53, protocol: TCP}]
",
        expect![[r#"
            Error FieldValueInvalid spec.ports: Invalid value: []core.ServicePort{core.ServicePort{Name:"u", Protocol:"UDP", AppProtocol:(*string)(nil), Port:53, TargetPort:intstr.IntOrString{Type:0, IntVal:53, StrVal:""}, NodePort:30124}, core.ServicePort{Name:"t", Protocol:"TCP", AppProtocol:(*string)(nil), Port:53, TargetPort:intstr.IntOrString{Type:0, IntVal:53, StrVal:""}, NodePort:30124}}: may not contain more than 1 protocol when type is 'LoadBalancer' @11:3
            service dns rejected
            --- text
            The Service "dns" is invalid: spec.ports: Invalid value: []core.ServicePort{core.ServicePort{Name:"u", Protocol:"UDP", AppProtocol:(*string)(nil), Port:53, TargetPort:intstr.IntOrString{Type:0, IntVal:53, StrVal:""}, NodePort:30124}, core.ServicePort{Name:"t", Protocol:"TCP", AppProtocol:(*string)(nil), Port:53, TargetPort:intstr.IntOrString{Type:0, IntVal:53, StrVal:""}, NodePort:30124}}: may not contain more than 1 protocol when type is 'LoadBalancer'
        "#]],
    );
}

#[test]
fn wrong_json_type_is_reported_like_the_decoder_and_the_rest_is_checked() {
    // `port: "80"` fails decoding (400 BadRequest, Go encoding/json text); the next document is
    // still applied.
    check(
        false,
        "apiVersion: v1
kind: Service
metadata: {name: a}
spec: {ports: [{port: '80'}]}
---
apiVersion: v1
kind: Service
metadata: {name: b}
spec: {ports: [{port: 80}]}
",
        expect![[r#"
            Error FieldValueTypeInvalid Service in version "v1" cannot be handled as a Service: json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32 @4:23
            service b created
            --- text
            Error from server (BadRequest): error when creating "s.yaml": Service in version "v1" cannot be handled as a Service: json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32
        "#]],
    );
}

#[test]
fn three_cluster_ips_only_say_up_to_two() {
    // IsDualStackIPStrings only asks for one IP of each family, so [v4, v6, v4] passes it and the
    // only complaint is the length.
    check(
        true,
        &AS_WRITTEN.replace(
            "type: ClusterIP",
            "type: ClusterIP\n  clusterIP: 10.0.0.1\n  clusterIPs: [10.0.0.1, 'fd00::1', 10.0.0.2]\n  ipFamilyPolicy: RequireDualStack",
        ),
        expect![[r#"
            Error FieldValueInvalid spec.clusterIPs: Invalid value: ["10.0.0.1","fd00::1","10.0.0.2"]: may only hold up to 2 values @7:3
            service s rejected
            --- text
            The Service "s" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.1","fd00::1","10.0.0.2"]: may only hold up to 2 values
        "#]],
    );
}

#[test]
fn generate_name_gets_five_seeded_characters_in_api_mode() {
    // The registry names the object before validation (`generateName` + 5 random characters);
    // as written, validation still requires a name, exactly like the Go unit tests.
    let svc = "apiVersion: v1\nkind: Service\nmetadata: {generateName: web-}\nspec: {ports: [{port: 80}]}\n";
    check(
        false,
        svc,
        expect![[r#"
        service web-n6tnp created
        --- text
    "#]],
    );
    check(
        true,
        svc,
        expect![[r#"
        Error FieldValueRequired metadata.name: Required value: name or generateName is required @3:1
        Error FieldValueRequired metadata.namespace: Required value @3:1
        Error FieldValueRequired spec.ports[0].protocol: Required value @4:16
        Error FieldValueInvalid spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive @4:16
        Error FieldValueRequired spec.sessionAffinity: Required value @4:1
        Error FieldValueRequired spec.type: Required value @4:1
        service  rejected
        --- text
        The Service "" is invalid: 
        * metadata.name: Required value: name or generateName is required
        * metadata.namespace: Required value
        * spec.ports[0].protocol: Required value
        * spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive
        * spec.sessionAffinity: Required value
        * spec.type: Required value
    "#]],
    );
}

#[test]
fn traffic_distribution_values_keep_upstreams_literal_order() {
    // validation.go validateServiceTrafficDistribution: field.NotSupported with a literal slice,
    // never sorted. v1.30.0 to v1.32.10 list PreferClose alone; v1.33.3 and v1.34.1, with
    // PreferSameTrafficDistribution (alpha 1.33, beta 1.34), PreferClose, PreferSameZone,
    // PreferSameNode.
    let scenario = |version: &str| {
        format!(
            "{}apiVersion: v1
kind: Service
metadata: {{name: td}}
spec:
  trafficDistribution: Nearby
  ports: [{{port: 80}}]
",
            profile(version)
        )
    };
    check(
        false,
        &scenario("1.31"),
        expect![[r#"
            Error FieldValueNotSupported spec.trafficDistribution: Unsupported value: "Nearby": supported values: "PreferClose" @9:3
            service td rejected
            --- text
            The Service "td" is invalid: spec.trafficDistribution: Unsupported value: "Nearby": supported values: "PreferClose"
        "#]],
    );
    check(
        false,
        &scenario("1.34"),
        expect![[r#"
            Error FieldValueNotSupported spec.trafficDistribution: Unsupported value: "Nearby": supported values: "PreferClose", "PreferSameZone", "PreferSameNode" @9:3
            service td rejected
            --- text
            The Service "td" is invalid: spec.trafficDistribution: Unsupported value: "Nearby": supported values: "PreferClose", "PreferSameZone", "PreferSameNode"
        "#]],
    );
}

#[test]
fn a_create_in_a_namespace_that_cannot_exist_is_not_found() {
    // NamespaceLifecycle admission runs before the registry: no Namespace can be named
    // `Bad_NS`, so the create is a 404, not a validation error (found on a real kube-apiserver
    // by the black-box oracle). An EndpointSlice is refused the same way; `--no-defaults`
    // (the Go unit tests' view) still validates the field.
    let objects = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: Bad_NS}\nspec: {ports: [{port: 80}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web-1, namespace: Bad_NS}\naddressType: IPv4\nendpoints: []\n";
    check(
        false,
        objects,
        expect![[r#"
        Error NotFound namespaces "Bad_NS" not found @1:1
        Error NotFound namespaces "Bad_NS" not found @6:1
        service web rejected
        --- text
        Error from server (NotFound): error when creating "s.yaml": namespaces "Bad_NS" not found
        Error from server (NotFound): error when creating "s.yaml": namespaces "Bad_NS" not found
    "#]],
    );
}

#[test]
fn a_nameless_service_is_refused_by_its_ipaddress_object() {
    // The IPAddress allocator (1.33 on) picks in BeginCreate, before validation; the IPAddress
    // storage refuses an object whose parentRef has no name. At 1.37 the refusal is the
    // answer (422); at 1.34 allocateFromRange tried every address and says the range is full
    // (500); at 1.33 dual write creates the bitmap's pick as a requested address (500 with the
    // refusal). A requested address is refused the same way at every release.
    let nameless = "apiVersion: v1\nkind: Service\nmetadata: {namespace: shop}\nspec: {ports: [{port: 80}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {namespace: shop}\nspec: {clusterIP: 10.96.0.20, ports: [{port: 80}]}\n";
    check(
        false,
        &format!("{}{nameless}", super::profile("1.37")),
        expect![[r#"
        Error FieldValueInvalid spec.clusterIPs: Invalid value: [""]: failed to allocate IP: IPAddress.networking.k8s.io "10.101.39.219" is invalid: spec.parentRef.name: Required value @8:1
        Error FieldValueInvalid spec.clusterIPs: Invalid value: ["10.96.0.20"]: failed to allocate IP 10.96.0.20: IPAddress.networking.k8s.io "10.96.0.20" is invalid: spec.parentRef.name: Required value @13:8
        service  rejected
        service  rejected
        --- text
        The Service "" is invalid: spec.clusterIPs: Invalid value: [""]: failed to allocate IP: IPAddress.networking.k8s.io "10.101.39.219" is invalid: spec.parentRef.name: Required value
        The Service "" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.20"]: failed to allocate IP 10.96.0.20: IPAddress.networking.k8s.io "10.96.0.20" is invalid: spec.parentRef.name: Required value
    "#]],
    );
    check(
        false,
        &format!("{}{nameless}", super::profile("1.34")),
        expect![[r#"
        Error InternalError Internal error occurred: failed to allocate a serviceIP: range is full @5:1
        Error FieldValueInvalid spec.clusterIPs: Invalid value: ["10.96.0.20"]: failed to allocate IP 10.96.0.20: IPAddress.networking.k8s.io "10.96.0.20" is invalid: spec.parentRef.name: Required value @13:8
        service  rejected
        service  rejected
        --- text
        Error from server (InternalError): error when creating "s.yaml": Internal error occurred: failed to allocate a serviceIP: range is full
        The Service "" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.20"]: failed to allocate IP 10.96.0.20: IPAddress.networking.k8s.io "10.96.0.20" is invalid: spec.parentRef.name: Required value
    "#]],
    );
    check(
        false,
        &format!("{}{nameless}", super::profile("1.33")),
        expect![[r#"
        Error InternalError Internal error occurred: failed to allocate a serviceIP: IPAddress.networking.k8s.io "10.105.69.182" is invalid: spec.parentRef.name: Required value @5:1
        Error FieldValueInvalid spec.clusterIPs: Invalid value: []string{"10.96.0.20"}: failed to allocate IP 10.96.0.20: IPAddress.networking.k8s.io "10.96.0.20" is invalid: spec.parentRef.name: Required value @13:8
        service  rejected
        service  rejected
        --- text
        Error from server (InternalError): error when creating "s.yaml": Internal error occurred: failed to allocate a serviceIP: IPAddress.networking.k8s.io "10.105.69.182" is invalid: spec.parentRef.name: Required value
        The Service "" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.20"}: failed to allocate IP 10.96.0.20: IPAddress.networking.k8s.io "10.96.0.20" is invalid: spec.parentRef.name: Required value
    "#]],
    );
}
