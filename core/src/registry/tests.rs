//! The registry's dropping of fields whose gate is off (`dropServiceDisabledFields`, the
//! EndpointSlice and status strategies), through the whole pipeline and on its own for the
//! in-use rules a scenario cannot reach.

use expect_test::expect;

use crate::{CheckOptions, Input};

#[test]
fn internal_traffic_policy_gate_off_in_1_24_and_1_25_neither_defaults_nor_requires_it() {
    // ServiceInternalTrafficPolicy, beta in v1.24.0 and v1.25.0 (pkg/features/kube_features.go),
    // locked in v1.26.1 and v1.27.2, gone in v1.28.0. With it off:
    // - pkg/apis/core/v1/defaults.go SetDefaults_Service leaves `internalTrafficPolicy` nil;
    // - pkg/registry/core/service/strategy.go dropServiceDisabledFields clears it unless the old
    //   object has it (so even an unsupported value is gone before validation);
    // - pkg/apis/core/validation/validation.go validateServiceInternalTrafficFieldsValue does
    //   not require it (an unsupported value is still refused when kept from the old object).
    let scenario = |version: &str, gate: &str, itp: &str| {
        let gates = if gate.is_empty() {
            String::new()
        } else {
            format!("featureGates: {{ServiceInternalTrafficPolicy: {gate}}}\n")
        };
        format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: '{version}'\n{gates}---\napiVersion: v1\nkind: Service\nmetadata: {{name: s, namespace: ns}}\nspec:\n  type: ClusterIP\n  selector: {{app: s}}\n  ports: [{{port: 80}}]\n{itp}"
        )
    };
    let mut out = String::new();
    for (version, gate, itp) in [
        ("1.24", "", ""),
        ("1.24", "false", ""),
        ("1.24", "false", "  internalTrafficPolicy: Local\n"),
        ("1.25", "false", "  internalTrafficPolicy: Bogus\n"),
        ("1.25", "true", "  internalTrafficPolicy: Bogus\n"),
        ("1.26", "false", ""),
        ("1.28", "true", ""),
    ] {
        let (world, report) = crate::evaluate(
            &[Input::new("s.yaml", scenario(version, gate, itp))],
            &CheckOptions::default(),
        );
        let stored =
            world.services.values().next().map(|s| &s.service.spec.internal_traffic_policy);
        out.push_str(&format!("{version} gate={gate:?} {:?}: stored {stored:?}\n", itp.trim()));
        for d in &report.diagnostics {
            out.push_str(&format!("  {} {}\n", d.reason, d.message));
        }
    }
    // The in-use rule of dropServiceDisabledFields, which a scenario cannot reach with the gate
    // off from the start: an update keeps the field when the stored object has it.
    let mut profile = crate::Profile::for_version(crate::Version { minor: 25, patch: None });
    assert_eq!(profile.set_gate("ServiceInternalTrafficPolicy", false), Ok(()));
    let mut old = crate::model::Service::default();
    old.spec.internal_traffic_policy = Some("Local".to_owned());
    let mut new = old.clone();
    super::prepare_service(&mut new, Some(&old), &profile);
    out.push_str(&format!(
        "update with the stored field: {:?}\n",
        new.spec.internal_traffic_policy
    ));
    super::prepare_service(&mut new, None, &profile);
    out.push_str(&format!("create: {:?}\n", new.spec.internal_traffic_policy));
    expect![[r#"
        1.24 gate="" "": stored Some(Some("Cluster"))
        1.24 gate="false" "": stored Some(None)
        1.24 gate="false" "internalTrafficPolicy: Local": stored Some(None)
        1.25 gate="false" "internalTrafficPolicy: Bogus": stored Some(None)
        1.25 gate="true" "internalTrafficPolicy: Bogus": stored None
          FieldValueNotSupported spec.internalTrafficPolicy: Unsupported value: "Bogus": supported values: "Cluster", "Local"
        1.26 gate="false" "": stored Some(Some("Cluster"))
          FieldValueInvalid featureGates: cannot set feature gate ServiceInternalTrafficPolicy to false, feature is locked to true
        1.28 gate="true" "": stored Some(Some("Cluster"))
          FieldValueInvalid featureGates: unrecognized feature gate: ServiceInternalTrafficPolicy
        update with the stored field: Some("Local")
        create: None
    "#]].assert_eq(&out);
}

#[test]
fn terminating_condition_gate_off_in_1_24_and_1_25_drops_serving_and_terminating() {
    // EndpointSliceTerminatingCondition, beta in v1.24.0 and v1.25.0, locked in v1.26.1 and
    // v1.27.2, gone in v1.28.0 (pkg/features/kube_features.go). With it off,
    // pkg/registry/discovery/endpointslice/strategy.go dropDisabledFieldsOnCreate clears
    // `conditions.serving` and `conditions.terminating`, and dropDisabledFieldsOnUpdate does the
    // same unless an endpoint of the stored slice sets either.
    let scenario = |version: &str, gate: &str| {
        format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: '{version}'\nfeatureGates: {{EndpointSliceTerminatingCondition: {gate}}}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: s-1, namespace: ns, labels: {{kubernetes.io/service-name: s}}}}\naddressType: IPv4\nendpoints:\n- addresses: [10.0.0.1]\n  conditions: {{ready: false, serving: true, terminating: true}}\nports: [{{port: 80}}]\n"
        )
    };
    let mut out = String::new();
    for (version, gate) in
        [("1.24", "true"), ("1.24", "false"), ("1.25", "false"), ("1.26", "true")]
    {
        let (world, report) = crate::evaluate(
            &[Input::new("s.yaml", scenario(version, gate))],
            &CheckOptions::default(),
        );
        let conditions: Vec<String> = world
            .endpoint_slices
            .iter()
            .flat_map(|s| &s.value.endpoints)
            .map(|e| {
                format!(
                    "ready={:?} serving={:?} terminating={:?}",
                    e.ready, e.serving, e.terminating
                )
            })
            .collect();
        out.push_str(&format!("{version} gate={gate}: {}\n", conditions.join("; ")));
        for d in &report.diagnostics {
            out.push_str(&format!("  {} {}\n", d.reason, d.message));
        }
    }
    let mut profile = crate::Profile::for_version(crate::Version { minor: 24, patch: None });
    assert_eq!(profile.set_gate("EndpointSliceTerminatingCondition", false), Ok(()));
    let mut old = crate::model::EndpointSlice::default();
    old.endpoints.push(crate::model::Endpoint { serving: Some(true), ..Default::default() });
    let mut new = old.clone();
    new.endpoints[0].terminating = Some(true);
    super::drop_disabled_endpoint_conditions(&mut new, Some(&old), &profile);
    out.push_str(&format!(
        "update, stored slice sets serving: serving={:?} terminating={:?}\n",
        new.endpoints[0].serving, new.endpoints[0].terminating
    ));
    old.endpoints[0].serving = None;
    super::drop_disabled_endpoint_conditions(&mut new, Some(&old), &profile);
    out.push_str(&format!(
        "update, stored slice sets neither: serving={:?} terminating={:?}\n",
        new.endpoints[0].serving, new.endpoints[0].terminating
    ));
    expect![[r#"
        1.24 gate=true: ready=Some(false) serving=Some(true) terminating=Some(true)
        1.24 gate=false: ready=Some(false) serving=None terminating=None
        1.25 gate=false: ready=Some(false) serving=None terminating=None
        1.26 gate=true: ready=Some(false) serving=Some(true) terminating=Some(true)
        update, stored slice sets serving: serving=Some(true) terminating=Some(true)
        update, stored slice sets neither: serving=None terminating=None
    "#]]
    .assert_eq(&out);
}

#[test]
fn load_balancer_ip_mode_is_dropped_from_the_status_while_its_gate_is_off() {
    // pkg/registry/core/service/strategy.go dropServiceStatusDisabledFields (1.29 on): with
    // LoadBalancerIPMode off (the 1.29 default; settable in 1.30 and 1.31, locked from 1.32,
    // pkg/features/kube_features.go) a status write loses `ipMode` unless the stored status
    // has one. kube-proxy then never sees VIP or Proxy, whatever its own gate says.
    let scenario = |version: &str, gate: &str| {
        format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: '{version}'\n{gate}---\napiVersion: v1\nkind: Service\nmetadata: {{name: lb, namespace: ns}}\nspec:\n  type: LoadBalancer\n  selector: {{app: lb}}\n  ports: [{{port: 80}}]\nstatus:\n  loadBalancer:\n    ingress: [{{ip: 192.0.2.10, ipMode: Proxy}}]\n"
        )
    };
    let mut out = String::new();
    for (version, gate) in [
        ("1.29", ""),
        ("1.29", "featureGates: {LoadBalancerIPMode: true}\n"),
        ("1.30", ""),
        ("1.31", "featureGates: {LoadBalancerIPMode: false}\n"),
        ("1.32", ""),
    ] {
        let (world, report) = crate::evaluate(
            &[Input::new("s.yaml", scenario(version, gate))],
            &CheckOptions::default(),
        );
        let modes: Vec<Option<&str>> = world
            .service_status
            .values()
            .flat_map(|s| &s.load_balancer_ingress)
            .map(|i| i.ip_mode.as_deref())
            .collect();
        out.push_str(&format!("{version} {:?}: ipMode {modes:?}\n", gate.trim()));
        for d in &report.diagnostics {
            out.push_str(&format!("  {} {}\n", d.reason, d.message));
        }
    }
    let mut profile = crate::Profile::for_version(crate::Version { minor: 29, patch: None });
    let stored = crate::model::ServiceStatus {
        load_balancer_ingress: vec![crate::model::LoadBalancerIngress {
            ip: "192.0.2.10".to_owned(),
            ip_mode: Some("VIP".to_owned()),
            ..Default::default()
        }],
    };
    let mut new = stored.clone();
    super::drop_disabled_status_fields(&mut new, Some(&stored), &profile);
    out.push_str(&format!(
        "update, stored status has ipMode: {:?}\n",
        new.load_balancer_ingress[0].ip_mode
    ));
    assert_eq!(profile.set_gate("LoadBalancerIPMode", false), Ok(()));
    super::drop_disabled_status_fields(&mut new, None, &profile);
    out.push_str(&format!("first write: {:?}\n", new.load_balancer_ingress[0].ip_mode));
    expect![[r#"
        1.29 "": ipMode [None]
        1.29 "featureGates: {LoadBalancerIPMode: true}": ipMode [Some("Proxy")]
        1.30 "": ipMode [Some("Proxy")]
        1.31 "featureGates: {LoadBalancerIPMode: false}": ipMode [None]
        1.32 "": ipMode [Some("Proxy")]
        update, stored status has ipMode: Some("VIP")
        first write: None
    "#]]
    .assert_eq(&out);
}

/// A created object's uid: a version-4 UUID in kube-apiserver's text form (8-4-4-4-12 lowercase
/// hex digits), drawn from the seed and the document's position.
#[test]
fn a_created_object_gets_a_version_4_uid_from_the_seed_and_its_position() {
    let text = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports: [{port: 80}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: t}\nspec:\n  ports: [{port: 80}]\n";
    let (world, _) = crate::evaluate(&[Input::new("uid.yaml", text)], &CheckOptions::default());
    let uids: Vec<&str> =
        world.services.values().map(|s| s.service.metadata.uid.as_str()).collect();
    expect![[r#"
        [
            "baa32179-7c5e-47bb-8321-2fbbda4b407f",
            "93b81f3d-cc4e-4c35-8494-aa3db9bd75e9",
        ]
    "#]]
    .assert_debug_eq(&uids);
}
