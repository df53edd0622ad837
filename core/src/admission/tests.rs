//! The admission envelope: 422 for apiserver errors, 403 for policy denies, warnings, audit
//! annotations, settings errors, inventory and users.

use expect_test::{Expect, expect};

use crate::admission::{AdmissionOptions, AdmissionRequest, admit};
use crate::manifest::Input;
use crate::policy::UserInfo;

/// A CREATE (or UPDATE with `old`) of a Service in `default` with `spec` (JSON), under
/// `settings` (YAML) and `inventory`; prints the verdict or the error.
fn check(
    settings: Option<&str>,
    spec: &str,
    old: Option<&str>,
    inventory: Option<&[&str]>,
    user: Option<&str>,
    expect: Expect,
) {
    let service = |spec: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Service","metadata":{{"name":"web"}},"spec":{spec}}}"#
        )
    };
    let request = AdmissionRequest {
        kind: "Service".into(),
        operation: if old.is_some() { "UPDATE" } else { "CREATE" }.into(),
        subresource: String::new(),
        namespace: "default".into(),
        object: Some(service(spec)),
        old_object: old.map(service),
        user_info: user.map(|u| UserInfo { username: u.into(), groups: Vec::new() }),
    };
    let options = AdmissionOptions {
        policy: settings.map(|s| Input::new("settings", s)),
        inventory: inventory.map(|list| list.iter().map(|s| (*s).to_owned()).collect()),
        ..AdmissionOptions::default()
    };
    let text = match admit(&request, &options) {
        Ok(v) => format!(
            "allowed={} code={}\nstatus={}\nwarnings={:?}\naudit={:?}\n",
            v.allowed,
            v.code,
            v.status.unwrap_or_default(),
            v.warnings,
            v.audit_annotations
        ),
        Err(err) => format!("error: {err}\n"),
    };
    expect.assert_eq(&text);
}

#[test]
fn apiserver_errors_are_422_invalid() {
    check(
        Some("{}"),
        r#"{"ports":[{"port":0}]}"#,
        None,
        None,
        None,
        expect![[r#"
        allowed=false code=422
        status={"metadata":{},"status":"Failure","message":"Service \"web\" is invalid: [spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive]","reason":"Invalid","details":{"name":"web","kind":"Service","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: 0: must be between 1 and 65535, inclusive","field":"spec.ports[0].port"},{"reason":"FieldValueInvalid","message":"Invalid value: 0: must be between 1 and 65535, inclusive","field":"spec.ports[0].targetPort"}]},"code":422}
        warnings=[]
        audit={}
    "#]],
    );
}

#[test]
fn policy_deny_is_403_forbidden_with_causes() {
    check(
        Some(
            "externalIPs: {mode: allowlist, allowedCIDRs: [192.0.2.0/24]}\ntypes: {allowed: [ClusterIP]}",
        ),
        r#"{"type":"NodePort","externalIPs":["203.0.113.9"],"ports":[{"port":80}]}"#,
        None,
        None,
        None,
        expect![[r#"
            allowed=false code=403
            status={"metadata":{},"status":"Failure","message":"[spec.type: Unsupported value: \"NodePort\": supported values: \"ClusterIP\" (types.allowed), spec.externalIPs[0]: Forbidden: \"203.0.113.9\" is outside the allowed ranges 192.0.2.0/24 (externalIPs.allowedCIDRs)]","reason":"Forbidden","details":{"name":"web","kind":"services","causes":[{"reason":"FieldValueNotSupported","message":"spec.type: Unsupported value: \"NodePort\": supported values: \"ClusterIP\" (types.allowed)","field":"spec.type"},{"reason":"FieldValueForbidden","message":"spec.externalIPs[0]: Forbidden: \"203.0.113.9\" is outside the allowed ranges 192.0.2.0/24 (externalIPs.allowedCIDRs)","field":"spec.externalIPs[0]"}]},"code":403}
            warnings=[]
            audit={}
        "#]],
    );
}

#[test]
fn warn_and_audit_allow_with_warnings_and_annotations() {
    check(
        Some(
            "ports: {deniedPorts: [22], action: warn}\ntypes: {allowed: [ClusterIP], action: audit}\nselector: {uniqueInNamespace: true}",
        ),
        r#"{"type":"NodePort","selector":{"app":"web"},"ports":[{"port":22}]}"#,
        None,
        None,
        None,
        expect![[r#"
            allowed=true code=200
            status=
            warnings=["spec.ports[0].port: Forbidden: port 22 is denied (ports.deniedPorts)"]
            audit={"skipped": "selector.uniqueInNamespace: skipped: needs inventory", "types.allowed": "spec.type: Unsupported value: \"NodePort\": supported values: \"ClusterIP\" (types.allowed)"}
        "#]],
    );
}

#[test]
fn inventory_feeds_selector_uniqueness() {
    let other = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"other","namespace":"default"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}}"#;
    check(
        Some("selector: {uniqueInNamespace: true}"),
        r#"{"selector":{"app":"web"},"ports":[{"port":80}]}"#,
        None,
        Some(&[other]),
        None,
        expect![[r#"
            allowed=false code=403
            status={"metadata":{},"status":"Failure","message":"spec.selector: Forbidden: Service \"other\" in namespace \"default\" has the same selector (selector.uniqueInNamespace)","reason":"Forbidden","details":{"name":"web","kind":"services","causes":[{"reason":"FieldValueForbidden","message":"spec.selector: Forbidden: Service \"other\" in namespace \"default\" has the same selector (selector.uniqueInNamespace)","field":"spec.selector"}]},"code":403}
            warnings=[]
            audit={}
        "#]],
    );
}

#[test]
fn update_without_new_external_ips_passes_forbid_new() {
    check(
        Some("externalIPs: {mode: forbidNew, allowedUsernames: [admin]}"),
        r#"{"externalIPs":["192.0.2.1"],"ports":[{"port":80}]}"#,
        Some(r#"{"externalIPs":["192.0.2.1"],"ports":[{"port":80}],"clusterIP":"10.96.0.20"}"#),
        None,
        Some("alice"),
        expect![[r#"
            allowed=true code=200
            status=
            warnings=["spec.externalIPs is deprecated and may no longer be implemented in some clusters"]
            audit={}
        "#]],
    );
}

#[test]
fn settings_errors_refuse_the_configuration() {
    check(
        Some("externalIPs:\n  mode: allowlist\n  allowedCIDRs: [10.0.0.0/33]\nnodeports: {}\n"),
        r#"{"ports":[{"port":80}]}"#,
        None,
        None,
        None,
        expect![[r#"
            error: invalid policy settings: [nodeports: Unsupported value: "nodeports": supported values: "action", "clusterIP", "deprecations", "endpointSlices", "exemptions", "externalIPs", "externalName", "loadBalancer", "nodePorts", "nonCanonicalIPs", "ports", "profile", "selector", "types", externalIPs.allowedCIDRs[0]: Invalid value: "10.0.0.0/33": must be a valid CIDR value or IP address, (e.g. 10.9.8.0/24 or 2001:db8::/64)]
        "#]],
    );
}

#[test]
fn kubewarden_settings_carry_the_profile() {
    check(
        Some("profile: {kubernetesVersion: '1.24'}\nclusterIP: {explicit: staticBandOnly}\n"),
        r#"{"ports":[{"port":80}]}"#,
        None,
        None,
        None,
        expect![[r#"
            error: invalid policy settings: clusterIP.explicit: Invalid value: "staticBandOnly": Kubernetes 1.24 with ServiceIPStaticSubrange off has no static band for cluster IPs
        "#]],
    );
}

#[test]
fn stringly_typed_settings_and_profile_read_as_traefik_sends_them() {
    let request = AdmissionRequest {
        kind: "Service".into(),
        operation: "CREATE".into(),
        namespace: "default".into(),
        object: Some(
            r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":30010}]}}"#
                .into(),
        ),
        ..AdmissionRequest::default()
    };
    let options = AdmissionOptions {
        policy: Some(Input::new(
            "settings",
            r#"{"nodePorts":{"forbid":"false","explicit":"staticBandOnly","reservations":[{"port":"30010","namespace":"ingress","name":"nginx"}]}}"#,
        )),
        profile: Some(Input::new(
            "profile",
            r#"{"kubernetesVersion":"1.300000","featureGates":{"ServiceNodePortStaticSubrange":"true"}}"#,
        )),
        stringly_typed: true,
        ..AdmissionOptions::default()
    };
    let verdict = admit(&request, &options);
    expect![[r#"
        Ok(
            (
                403,
                Some(
                    "{\"metadata\":{},\"status\":\"Failure\",\"message\":\"spec.ports[0].nodePort: Forbidden: 30010/TCP is reserved for ingress/nginx (nodePorts.reservations)\",\"reason\":\"Forbidden\",\"details\":{\"name\":\"web\",\"kind\":\"services\",\"causes\":[{\"reason\":\"FieldValueForbidden\",\"message\":\"spec.ports[0].nodePort: Forbidden: 30010/TCP is reserved for ingress/nginx (nodePorts.reservations)\",\"field\":\"spec.ports[0].nodePort\"}]},\"code\":403}",
                ),
            ),
        )
    "#]].assert_debug_eq(&verdict.map(|v| (v.code, v.status)));
    let strict = AdmissionOptions { stringly_typed: false, ..options };
    expect![[r#"
        Err(
            Profile(
                "ClusterProfile in version \"v1alpha1\" cannot be handled as a ClusterProfile: json: cannot unmarshal string into Go struct field ClusterProfile.featureGates of type bool",
            ),
        )
    "#]].assert_debug_eq(&admit(&request, &strict).map(|v| v.code));
}

#[test]
fn update_without_old_object_skips_forbid_new() {
    let request = AdmissionRequest {
        kind: "Service".into(),
        operation: "UPDATE".into(),
        namespace: "default".into(),
        object: Some(
            r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"externalIPs":["192.0.2.1"],"ports":[{"port":80}]}}"#
                .into(),
        ),
        ..AdmissionRequest::default()
    };
    let options = AdmissionOptions {
        policy: Some(Input::new("settings", "externalIPs: {mode: forbidNew}")),
        ..AdmissionOptions::default()
    };
    expect![[r#"
        Ok(
            (
                true,
                {
                    "skipped": "externalIPs.mode: skipped: needs oldObject",
                },
            ),
        )
    "#]]
    .assert_debug_eq(&admit(&request, &options).map(|v| (v.allowed, v.audit_annotations)));
}
