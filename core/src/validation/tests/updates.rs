//! Updates: ratcheting, what an update repeats or drops, and the stored object it starts from.

use super::*;

#[test]
fn ip_families_flip_reports_index_zero_twice_and_kubectl_shows_it_once() {
    // validateIPFamilyUpdate uses `ipFamilies.Index(0)` for every differing index, so two flips
    // give two identical causes; kubectl de-duplicates the printed lines.
    let old = AS_WRITTEN.replace(
        "type: ClusterIP",
        "type: ClusterIP\n  clusterIP: 10.0.0.1\n  clusterIPs: [10.0.0.1, 'fd00::1']\n  ipFamilyPolicy: RequireDualStack\n  ipFamilies: [IPv4, IPv6]",
    );
    let new = AS_WRITTEN.replace(
        "type: ClusterIP",
        "type: ClusterIP\n  clusterIP: 'fd00::1'\n  clusterIPs: ['fd00::1', 10.0.0.1]\n  ipFamilyPolicy: RequireDualStack\n  ipFamilies: [IPv6, IPv4]",
    );
    check(
        true,
        &format!("{}{old}---\n{new}", profile("1.33")),
        expect![[r#"
        Error FieldValueInvalid spec.clusterIPs[0]: Invalid value: []string{"fd00::1", "10.0.0.1"}: may not change once set @25:16
        Error FieldValueInvalid spec.clusterIPs[1]: Invalid value: []string{"fd00::1", "10.0.0.1"}: may not change once set @25:27
        Error FieldValueInvalid spec.ipFamilies[0]: Invalid value: []core.IPFamily{"IPv6", "IPv4"}: may not change once set @27:16
        Error FieldValueInvalid spec.ipFamilies[0]: Invalid value: []core.IPFamily{"IPv6", "IPv4"}: may not change once set @27:16
        service s validated
        service s rejected
        --- text
        The Service "s" is invalid: 
        * spec.clusterIPs[0]: Invalid value: []string{"fd00::1", "10.0.0.1"}: may not change once set
        * spec.clusterIPs[1]: Invalid value: []string{"fd00::1", "10.0.0.1"}: may not change once set
        * spec.ipFamilies[0]: Invalid value: []core.IPFamily{"IPv6", "IPv4"}: may not change once set
    "#]],
    );
}

#[test]
fn strict_ip_validation_and_ratcheting_on_update() {
    // StrictIPCIDRValidation (beta in 1.36): leading zeros become errors, but a value the old
    // object already held is accepted again (ratcheting), so upgrading a cluster does not make
    // stored Services unwritable.
    let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {externalIPs: [010.1.2.3], ports: [{port: 80}]}\n";
    check(
        false,
        &format!("{}{svc}", profile("1.36")),
        expect![[r#"
        Error FieldValueInvalid spec.externalIPs[0]: Invalid value: "010.1.2.3": must not have leading 0s @8:22
        service s rejected
        --- text
        The Service "s" is invalid: spec.externalIPs[0]: Invalid value: "010.1.2.3": must not have leading 0s
    "#]],
    );
    let parsed = crate::parse(&[Input::new("s.yaml", svc)]);
    let Some(crate::Object::Service(old)) = parsed.objects.first() else { panic!("no service") };
    let mut new = old.value.clone();
    new.spec.external_ips.push("011.1.2.3".into());
    let profile = crate::Profile::for_version(crate::Version { minor: 36, patch: None });
    let errors: Vec<String> =
        crate::validation::validate_service_update(&new, &old.value, &profile)
            .iter()
            .map(|e| e.message(false))
            .filter(|m| m.starts_with("spec.externalIPs"))
            .collect();
    assert_eq!(
        errors,
        ["spec.externalIPs[1]: Invalid value: \"011.1.2.3\": must not have leading 0s"]
    );
}

#[test]
fn load_balancer_class_format_errors_repeat_on_update() {
    // ValidateServiceUpdate calls validateLoadBalancerClassField(old, new) and ValidateService(new)
    // calls it again with no old object: a bad class is a cause twice, kubectl prints it once.
    let lb = |class: &str| {
        AS_WRITTEN.replace(
            "type: ClusterIP",
            &format!("type: LoadBalancer\n  externalTrafficPolicy: Cluster\n  allocateLoadBalancerNodePorts: true\n  loadBalancerClass: {class}"),
        )
    };
    check(
        true,
        &format!("{}{}---\n{}", profile("1.33"), lb("example.com/a"), lb("Bad/Class")),
        expect![[r#"
        Error FieldValueInvalid spec.loadBalancerClass: Invalid value: "Bad/Class": may not change once set @25:3
        Error FieldValueInvalid spec.loadBalancerClass: Invalid value: "Bad/Class": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*') @25:3
        Error FieldValueInvalid spec.loadBalancerClass: Invalid value: "Bad/Class": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*') @25:3
        service s validated
        service s rejected
        --- text
        The Service "s" is invalid: 
        * spec.loadBalancerClass: Invalid value: "Bad/Class": may not change once set
        * spec.loadBalancerClass: Invalid value: "Bad/Class": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
    "#]],
    );
}

#[test]
fn updates_keep_the_stored_generation_and_add_the_common_metadata_causes() {
    // apiserver pkg/registry/rest/update.go BeforeUpdate (v0.24.0 to v0.36.0): the stored
    // generation is copied over before validation, and validateCommonFields' object-meta causes
    // come before ValidateServiceUpdate's (kubectl prints the repeated line once). From 1.37 the
    // registry keeps each identical cause once (Rule::IdenticalCausesOnce); 1.36 has three.
    let scenario = "apiVersion: v1
kind: Service
metadata: {name: g, generation: 5}
spec:
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: g, generation: 1}
spec:
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: g, labels: {app: 'bad value'}}
spec:
  ports: [{port: 80}]
";
    check(
        false,
        &format!("{}{scenario}", profile("1.36")),
        expect![[r#"
            Error FieldValueInvalid metadata.labels: Invalid value: "bad value": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?') @19:21
            Error FieldValueInvalid metadata.labels: Invalid value: "bad value": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?') @19:21
            Error FieldValueInvalid metadata.labels: Invalid value: "bad value": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?') @19:21
            service g created
            service g updated
            service g rejected
            --- text
            The Service "g" is invalid: metadata.labels: Invalid value: "bad value": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')
        "#]],
    );
}

#[test]
fn node_ports_dropped_on_a_type_change_when_they_are_a_subset() {
    // pkg/registry/core/service/strategy.go dropTypeDependentFields/sameNodePorts: every new
    // node port among the old ones, in any order, means the user did not change them.
    let scenario = "apiVersion: v1
kind: Service
metadata: {name: np}
spec:
  type: NodePort
  ports: [{name: a, port: 80, nodePort: 30080}, {name: b, port: 81, nodePort: 30081}]
---
apiVersion: v1
kind: Service
metadata: {name: np}
spec:
  type: ClusterIP
  ports: [{name: b, port: 81, nodePort: 30081}, {name: a, port: 80, nodePort: 30080}]
---
apiVersion: v1
kind: Service
metadata: {name: np}
spec:
  type: NodePort
  ports: [{name: a, port: 80, nodePort: 30080}]
---
apiVersion: v1
kind: Service
metadata: {name: np}
spec:
  type: ClusterIP
  ports: [{name: a, port: 80, nodePort: 30090}]
";
    check(
        false,
        scenario,
        expect![[r#"
        Error FieldValueForbidden spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP' @27:31
        service np created
        service np updated
        service np updated
        service np rejected
        --- text
        The Service "np" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'
    "#]],
    );
}

#[test]
fn r35_endpoint_slice_update_without_resource_version_is_unconditional() {
    // See: issue 35 (the apiserver oracle). The generic registry's Store.Update fills in the
    // stored resourceVersion when the request names none, because the EndpointSlice strategy
    // allows unconditional updates (pkg/registry/discovery/endpointslice/strategy.go
    // AllowUnconditionalUpdate, 1.24 to 1.37): the second slice is an update, and only the
    // changed addressType is refused.
    let slice = |address_type: &str| {
        format!(
            "apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: e}}
addressType: {address_type}
endpoints: [{{addresses: ['10.0.0.1']}}]
"
        )
    };
    let scenario = format!("{}---\n{}---\n{}", slice("IPv4"), slice("IPv4"), slice("IPv6"));
    let at = |version| format!("{}{scenario}", profile(version));
    check(
        false,
        &at("1.24"),
        expect![[r#"
        Error FieldValueInvalid endpoints[0].addresses[0]: Invalid value: "10.0.0.1": must be a valid IPv6 address @21:26
        Error FieldValueInvalid addressType: Invalid value: "IPv6": field is immutable @20:1
        --- text
        The EndpointSlice "e" is invalid: 
        * endpoints[0].addresses[0]: Invalid value: "10.0.0.1": must be a valid IPv6 address
        * addressType: Invalid value: "IPv6": field is immutable
    "#]],
    );
    check(
        false,
        &at("1.32"),
        expect![[r#"
        Error FieldValueInvalid endpoints[0].addresses[0]: Invalid value: "10.0.0.1": must be a valid IPv6 address @21:26
        Error FieldValueInvalid addressType: Invalid value: "IPv6": field is immutable @20:1
        --- text
        The EndpointSlice "e" is invalid: 
        * endpoints[0].addresses[0]: Invalid value: "10.0.0.1": must be a valid IPv6 address
        * addressType: Invalid value: "IPv6": field is immutable
    "#]],
    );
}

#[test]
fn r35_the_storage_refuses_versions_and_uids_a_request_cannot_know() {
    // See: issue 35 (the apiserver oracle). The etcd3 store refuses a create naming a non-zero
    // resourceVersion after validation and the strategy's warnings (a 500 with an empty reason);
    // on update a uid is a precondition against the stored uid, which the create drew at random
    // (FillObjectMetaSystemFields), and a non-zero resourceVersion must be the stored etcd
    // revision (a Conflict), one that does not parse a 500 with strconv's text; 0 is none.
    let scenario = "apiVersion: v1
kind: Service
metadata: {name: rv, resourceVersion: '5'}
spec: {ports: [{port: 80}], externalIPs: [192.0.2.1]}
---
apiVersion: v1
kind: Service
metadata: {name: s, uid: 11111111-2222-3333-4444-555555555555}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: s, uid: 11111111-2222-3333-4444-555555555555}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: s, resourceVersion: '7'}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: s, resourceVersion: 'x'}
spec: {ports: [{port: 70000}]}
---
apiVersion: v1
kind: Service
metadata: {name: s, resourceVersion: '0'}
spec: {ports: [{port: 81}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: e, resourceVersion: '3'}
addressType: IPv4
endpoints: [{addresses: [10.0.0.1]}]
";
    check(
        false,
        scenario,
        expect![[r#"
        Warning Warning spec.externalIPs is deprecated and may no longer be implemented in some clusters @4:29
        Error Unknown resourceVersion should not be set on objects to be created @1:1
        Error Conflict Operation cannot be fulfilled on services "s": StorageError: invalid object, Code: 4, Key: /registry/services/specs/default/s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 11111111-2222-3333-4444-555555555555, UID in object meta: da908fa9-77b5-4bb6-838a-f15c92a8f954 @11:1
        Error Conflict Operation cannot be fulfilled on services "s": the object has been modified; please apply your changes to the latest version and try again @16:1
        Error Unknown strconv.ParseUint: parsing "x": invalid syntax @21:1
        Error Unknown resourceVersion should not be set on objects to be created @31:1
        service rv rejected
        service s created
        service s rejected
        service s rejected
        service s rejected
        service s updated
        --- text
        Warning: spec.externalIPs is deprecated and may no longer be implemented in some clusters
        Error from server: error when creating "s.yaml": resourceVersion should not be set on objects to be created
        Error from server (Conflict): error when replacing "s.yaml": Operation cannot be fulfilled on services "s": StorageError: invalid object, Code: 4, Key: /registry/services/specs/default/s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 11111111-2222-3333-4444-555555555555, UID in object meta: da908fa9-77b5-4bb6-838a-f15c92a8f954
        Error from server (Conflict): error when replacing "s.yaml": Operation cannot be fulfilled on services "s": the object has been modified; please apply your changes to the latest version and try again
        Error from server: error when creating "s.yaml": strconv.ParseUint: parsing "x": invalid syntax
        Error from server: error when creating "s.yaml": resourceVersion should not be set on objects to be created
    "#]],
    );
}
