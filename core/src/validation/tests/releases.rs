//! What changes from one release to the next: apimachinery's texts, rules that start or end, gates that are off in old releases, and `--explain-release`.

use super::*;

#[test]
fn composite_values_render_as_go_syntax_before_1_34_and_json_after() {
    // kubernetes/kubernetes#132314 (1.34) renders composite bad values with json.Marshal; the
    // duplicate-port key is a `core.ServicePort` with only Protocol and Port set.
    let svc = "apiVersion: v1
kind: Service
metadata: {name: dup}
spec:
  ports: [{name: a, port: 80}, {name: b, port: 80, targetPort: 8080}]
";
    check(
        false,
        &format!("{}{svc}", profile("1.33")),
        expect![[r#"
        Error FieldValueDuplicate spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0} @9:32
        service dup rejected
        --- text
        The Service "dup" is invalid: spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}
    "#]],
    );
    check(
        false,
        &format!("{}{svc}", profile("1.34")),
        expect![[r#"
        Error FieldValueDuplicate spec.ports[1]: Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,"Port":80,"TargetPort":0,"NodePort":0} @9:32
        service dup rejected
        --- text
        The Service "dup" is invalid: spec.ports[1]: Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,"Port":80,"TargetPort":0,"NodePort":0}
    "#]],
    );
}

#[test]
fn headless_session_affinity_warning_in_1_34_0_is_unconditional() {
    // kubernetes/kubernetes#134040: 1.34.0/1.34.1 warned for every headless Service, later
    // patches (#134133) only when sessionAffinity is not None.
    let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: h}\nspec: {clusterIP: None, selector: {app: h}, ports: [{port: 80}]}\n";
    check(
        false,
        &format!("{}{svc}", profile("1.34.0")),
        expect![[r#"
        Warning Warning spec.SessionAffinity is ignored for headless services @8:1
        service h created
        --- text
        Warning: spec.SessionAffinity is ignored for headless services
    "#]],
    );
    check(
        false,
        &format!("{}{svc}", profile("1.34.2")),
        expect![[r#"
        service h created
        --- text
    "#]],
    );
}

#[test]
fn load_balancer_kubelet_port_until_1_32() {
    // pkg/apis/core/validation/validation.go `ValidateService`, LoadBalancer case, before the
    // headless check: `field.Invalid(spec.ports[i], port.Port, "may not expose port 10250
    // externally since it is used by kubelet")` in 1.24 to 1.32; removed by
    // kubernetes/kubernetes#129174 (1.33 release notes).
    let lb = "apiVersion: v1
kind: Service
metadata: {name: s, namespace: ns}
spec:
  type: LoadBalancer
  selector: {app: s}
  ports: [{name: a, port: 80}, {name: k, port: 10250}]
";
    check(
        false,
        &format!("{}{lb}", profile("1.32")),
        expect![[r#"
            Error FieldValueInvalid spec.ports[1]: Invalid value: 10250: may not expose port 10250 externally since it is used by kubelet @11:32
            service s rejected
            --- text
            The Service "s" is invalid: spec.ports[1]: Invalid value: 10250: may not expose port 10250 externally since it is used by kubelet
        "#]],
    );
    check(
        false,
        &format!("{}{lb}", profile("1.33")),
        expect![[r#"
            service s created
            --- text
        "#]],
    );
}

#[test]
fn apimachinery_texts_v0_24() {
    check(
        false,
        &texts_scenario("1.24"),
        expect![[r#"
            Error FieldValueInvalid metadata.labels: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName') @10:3
            Error FieldValueInvalid metadata.labels: Invalid value: "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": must be no more than 63 characters @10:3
            Error FieldValueInvalid metadata.labels: Invalid value: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": prefix part must be no more than 253 characters @10:3
            Error FieldValueInvalid metadata.labels: Invalid value: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": name part must be no more than 63 characters @10:3
            Error FieldValueInvalid spec.ports[0].name: Invalid value: "a.b": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?') @13:12
            Error FieldValueInvalid spec.ports[0].targetPort: Invalid value: "1-2": must contain at least one letter or number (a-z, 0-9) @13:33
            service s rejected
            --- text
            The Service "s" is invalid: 
            * metadata.labels: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')
            * metadata.labels: Invalid value: "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": must be no more than 63 characters
            * metadata.labels: Invalid value: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": prefix part must be no more than 253 characters
            * metadata.labels: Invalid value: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": name part must be no more than 63 characters
            * spec.ports[0].name: Invalid value: "a.b": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')
            * spec.ports[0].targetPort: Invalid value: "1-2": must contain at least one letter or number (a-z, 0-9)
        "#]],
    );
}

#[test]
fn apimachinery_texts_v0_27_to_v0_34() {
    check(
        false,
        &texts_scenario("1.34"),
        expect![[r#"
            Error FieldValueInvalid metadata.labels: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName') @10:3
            Error FieldValueInvalid metadata.labels: Invalid value: "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": must be no more than 63 characters @10:3
            Error FieldValueInvalid metadata.labels: Invalid value: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": prefix part must be no more than 253 characters @10:3
            Error FieldValueInvalid metadata.labels: Invalid value: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": name part must be no more than 63 characters @10:3
            Error FieldValueInvalid spec.ports[0].name: Invalid value: "a.b": must not contain dots @13:12
            Error FieldValueInvalid spec.ports[0].targetPort: Invalid value: "1-2": must contain at least one letter (a-z) @13:33
            service s rejected
            --- text
            The Service "s" is invalid: 
            * metadata.labels: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')
            * metadata.labels: Invalid value: "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": must be no more than 63 characters
            * metadata.labels: Invalid value: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": prefix part must be no more than 253 characters
            * metadata.labels: Invalid value: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": name part must be no more than 63 characters
            * spec.ports[0].name: Invalid value: "a.b": must not contain dots
            * spec.ports[0].targetPort: Invalid value: "1-2": must contain at least one letter (a-z)
        "#]],
    );
}

#[test]
fn apimachinery_texts_v0_35_on() {
    check(
        false,
        &texts_scenario("1.35"),
        expect![[r#"
            Error FieldValueInvalid metadata.labels: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName') @10:3
            Error FieldValueInvalid metadata.labels: Invalid value: "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": must be no more than 63 bytes @10:3
            Error FieldValueInvalid metadata.labels: Invalid value: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": prefix part must be no more than 253 bytes @10:3
            Error FieldValueInvalid metadata.labels: Invalid value: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": name part must be no more than 63 bytes @10:3
            Error FieldValueInvalid spec.ports[0].name: Invalid value: "a.b": must not contain dots @13:12
            Error FieldValueInvalid spec.ports[0].targetPort: Invalid value: "1-2": must contain at least one letter (a-z) @13:33
            service s rejected
            --- text
            The Service "s" is invalid: 
            * metadata.labels: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')
            * metadata.labels: Invalid value: "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": must be no more than 63 bytes
            * metadata.labels: Invalid value: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": prefix part must be no more than 253 bytes
            * metadata.labels: Invalid value: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv": name part must be no more than 63 bytes
            * spec.ports[0].name: Invalid value: "a.b": must not contain dots
            * spec.ports[0].targetPort: Invalid value: "1-2": must contain at least one letter (a-z)
        "#]],
    );
}

#[test]
fn oversized_annotations_by_release() {
    // apimachinery `pkg/api/validation/objectmeta.go` `ValidateAnnotations` calls
    // `field.TooLong(fldPath, "", TotalAnnotationSizeLimitB)`, whose text changed in v0.32.
    let scenario = |version: &str| {
        format!(
            "{}apiVersion: v1\nkind: Service\nmetadata: {{name: s, namespace: ns, annotations: {{a: {}}}}}\nspec:\n  ports: [{{port: 80}}]\n",
            profile(version),
            "x".repeat(256 * 1024)
        )
    };
    check(
        false,
        &scenario("1.31"),
        expect![[r#"
            Error FieldValueTooLong metadata.annotations: Too long: must have at most 262144 bytes @7:36
            service s rejected
            --- text
            The Service "s" is invalid: metadata.annotations: Too long: must have at most 262144 bytes
        "#]],
    );
    check(
        false,
        &scenario("1.32"),
        expect![[r#"
            Error FieldValueTooLong metadata.annotations: Too long: may not be more than 262144 bytes @7:36
            service s rejected
            --- text
            The Service "s" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes
        "#]],
    );
}

#[test]
fn nil_value_prints_quoted_before_1_34_and_bare_after() {
    // apimachinery field/errors.go ErrorBody, v0.24.0 to v0.33.0: a nil pointer becomes the
    // string "null" and takes the %q branch; v0.34.0+: json.Marshal(nil) is a bare null.
    // ValidateServiceUpdate (validation.go) passes the nil *IPFamilyPolicy itself.
    let scenario = |version: &str| {
        format!(
            "{}apiVersion: v1
kind: Service
metadata: {{name: s, namespace: ns, resourceVersion: '1'}}
spec:
  type: ClusterIP
  sessionAffinity: None
  internalTrafficPolicy: Cluster
  clusterIP: 10.96.0.10
  clusterIPs: [10.96.0.10, 'fd00::10']
  ipFamilyPolicy: RequireDualStack
  ipFamilies: [IPv4, IPv6]
  ports: [{{name: p, protocol: TCP, port: 80, targetPort: 80}}]
---
apiVersion: v1
kind: Service
metadata: {{name: s, namespace: ns, resourceVersion: '1'}}
spec:
  type: ClusterIP
  sessionAffinity: None
  internalTrafficPolicy: Cluster
  clusterIP: 10.96.0.10
  clusterIPs: [10.96.0.10]
  ipFamilies: [IPv4]
  ports: [{{name: p, protocol: TCP, port: 80, targetPort: 80}}]
",
            profile(version)
        )
    };
    check(
        true,
        &scenario("1.33"),
        expect![[r#"
        Error FieldValueInvalid spec.ipFamilyPolicy: Invalid value: "null": must be set to 'SingleStack' when releasing the secondary clusterIP @21:1
        Error FieldValueInvalid spec.ipFamilyPolicy: Invalid value: "null": must be set to 'SingleStack' when releasing the secondary ipFamily @21:1
        service s validated
        service s rejected
        --- text
        The Service "s" is invalid: 
        * spec.ipFamilyPolicy: Invalid value: "null": must be set to 'SingleStack' when releasing the secondary clusterIP
        * spec.ipFamilyPolicy: Invalid value: "null": must be set to 'SingleStack' when releasing the secondary ipFamily
    "#]],
    );
    check(
        true,
        &scenario("1.34"),
        expect![[r#"
        Error FieldValueInvalid spec.ipFamilyPolicy: Invalid value: null: must be set to 'SingleStack' when releasing the secondary clusterIP @21:1
        Error FieldValueInvalid spec.ipFamilyPolicy: Invalid value: null: must be set to 'SingleStack' when releasing the secondary ipFamily @21:1
        service s validated
        service s rejected
        --- text
        The Service "s" is invalid: 
        * spec.ipFamilyPolicy: Invalid value: null: must be set to 'SingleStack' when releasing the secondary clusterIP
        * spec.ipFamilyPolicy: Invalid value: null: must be set to 'SingleStack' when releasing the secondary ipFamily
    "#]],
    );
}

#[test]
fn named_string_values_are_json_escaped_from_1_34() {
    // field/errors.go ErrorBody: only the exact type `string` keeps %q; core.ServiceType went
    // through %#v (same text) to v0.33.0 and through json.Marshal (`&` as \u0026) from v0.34.0.
    let scenario = |version: &str| {
        format!("{}{}", profile(version), AS_WRITTEN.replace("type: ClusterIP", "type: 'A&B'"))
    };
    check(
        true,
        &scenario("1.33"),
        expect![[r#"
        Error FieldValueNotSupported spec.type: Unsupported value: "A&B": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort" @9:3
        service s rejected
        --- text
        The Service "s" is invalid: spec.type: Unsupported value: "A&B": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"
    "#]],
    );
    check(
        true,
        &scenario("1.34"),
        expect![[r#"
        Error FieldValueNotSupported spec.type: Unsupported value: "A\u0026B": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort" @9:3
        service s rejected
        --- text
        The Service "s" is invalid: spec.type: Unsupported value: "A\u0026B": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"
    "#]],
    );
}

#[test]
fn source_ranges_are_one_whole_field_error_until_1_29() {
    // validation.go ValidateService, v1.24.0 to v1.29.0: apiservice.GetLoadBalancerSourceRanges
    // on the whole list; the value is fmt %v of the list, the message keeps a trailing space.
    // v1.30.0 on: one IsValidCIDR error per bad entry.
    let scenario = |version: &str| {
        format!(
            "{}apiVersion: v1
kind: Service
metadata: {{name: lb}}
spec:
  type: LoadBalancer
  loadBalancerSourceRanges: [10.0.0.0/8, ' foo', 1.2.3.4]
  ports: [{{port: 80}}]
---
apiVersion: v1
kind: Service
metadata:
  name: ann
  annotations: {{service.beta.kubernetes.io/load-balancer-source-ranges: '10.0.0.0/8,bad'}}
spec:
  ports: [{{port: 80}}]
",
            profile(version)
        )
    };
    check(
        false,
        &scenario("1.29"),
        expect![[r#"
        Error FieldValueInvalid spec.LoadBalancerSourceRanges: Invalid value: "[10.0.0.0/8  foo 1.2.3.4]": must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24  @10:3
        Error FieldValueForbidden metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Forbidden: may only be used when `type` is 'LoadBalancer' @17:17
        Error FieldValueInvalid metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Invalid value: "10.0.0.0/8,bad": must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24  @17:17
        service lb rejected
        service ann rejected
        --- text
        The Service "lb" is invalid: spec.LoadBalancerSourceRanges: Invalid value: "[10.0.0.0/8  foo 1.2.3.4]": must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24 
        The Service "ann" is invalid: 
        * metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Forbidden: may only be used when `type` is 'LoadBalancer'
        * metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Invalid value: "10.0.0.0/8,bad": must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24 
    "#]],
    );
    check(
        false,
        &scenario("1.30"),
        expect![[r#"
        Error FieldValueInvalid spec.LoadBalancerSourceRanges[1]: Invalid value: "foo": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64) @10:42
        Error FieldValueInvalid spec.LoadBalancerSourceRanges[2]: Invalid value: "1.2.3.4": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64) @10:50
        Error FieldValueForbidden metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Forbidden: may only be used when `type` is 'LoadBalancer' @17:17
        Error FieldValueInvalid metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Invalid value: "bad": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64) @17:17
        service lb rejected
        service ann rejected
        --- text
        The Service "lb" is invalid: 
        * spec.LoadBalancerSourceRanges[1]: Invalid value: "foo": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)
        * spec.LoadBalancerSourceRanges[2]: Invalid value: "1.2.3.4": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)
        The Service "ann" is invalid: 
        * metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Forbidden: may only be used when `type` is 'LoadBalancer'
        * metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Invalid value: "bad": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)
    "#]],
    );
}

#[test]
fn external_traffic_policy_with_external_ips_from_1_29() {
    // kubernetes/kubernetes#119150 (1.29): validateServiceExternalTrafficPolicy and
    // SetDefaults_Service count ClusterIP Services with externalIPs as externally accessible;
    // 1.24 to 1.28 only NodePort and LoadBalancer, with the older message.
    let scenario = |version: &str| {
        format!(
            "{}apiVersion: v1
kind: Service
metadata: {{name: local}}
spec:
  externalIPs: [192.0.2.10]
  externalTrafficPolicy: Local
  ports: [{{port: 80}}]
---
apiVersion: v1
kind: Service
metadata: {{name: defaulted}}
spec:
  externalIPs: [192.0.2.11]
  ports: [{{port: 80}}]
",
            profile(version)
        )
    };
    check(
        false,
        &scenario("1.28"),
        expect![[r#"
        Error FieldValueInvalid spec.externalTrafficPolicy: Invalid value: "Local": may only be set when `type` is 'NodePort' or 'LoadBalancer' @10:3
        service local rejected
        service defaulted created
        --- text
        The Service "local" is invalid: spec.externalTrafficPolicy: Invalid value: "Local": may only be set when `type` is 'NodePort' or 'LoadBalancer'
    "#]],
    );
    check(
        false,
        &scenario("1.29"),
        expect![[r#"
        service local created
        service defaulted created
        --- text
    "#]],
    );
}

#[test]
fn mixed_protocol_gate_off_lets_any_mixed_old_service_become_a_load_balancer() {
    // conditional_validation.go validateMixedProtocolLBService (1.24, 1.25 with the gate off):
    // serviceHasMixedProtocols(old) looks at the old ports only, whatever the old type.
    let scenario = "apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: '1.24'
featureGates: {MixedProtocolLBService: false}
---
apiVersion: v1
kind: Service
metadata: {name: dns}
spec:
  ports: [{name: u, port: 53, protocol: UDP}, {name: t, port: 53, protocol: TCP}]
---
apiVersion: v1
kind: Service
metadata: {name: dns}
spec:
  type: LoadBalancer
  ports: [{name: u, port: 53, protocol: UDP}, {name: t, port: 53, protocol: TCP}]
---
apiVersion: v1
kind: Service
metadata: {name: fresh}
spec:
  type: LoadBalancer
  ports: [{name: u, port: 53, protocol: UDP}, {name: t, port: 53, protocol: TCP}]
";
    check(
        false,
        scenario,
        expect![[r#"
        Error FieldValueInvalid spec.ports: Invalid value: []core.ServicePort{core.ServicePort{Name:"u", Protocol:"UDP", AppProtocol:(*string)(nil), Port:53, TargetPort:intstr.IntOrString{Type:0, IntVal:53, StrVal:""}, NodePort:30986}, core.ServicePort{Name:"t", Protocol:"TCP", AppProtocol:(*string)(nil), Port:53, TargetPort:intstr.IntOrString{Type:0, IntVal:53, StrVal:""}, NodePort:30986}}: may not contain more than 1 protocol when type is 'LoadBalancer' @24:3
        service dns created
        service dns updated
        service fresh rejected
        --- text
        The Service "fresh" is invalid: spec.ports: Invalid value: []core.ServicePort{core.ServicePort{Name:"u", Protocol:"UDP", AppProtocol:(*string)(nil), Port:53, TargetPort:intstr.IntOrString{Type:0, IntVal:53, StrVal:""}, NodePort:30986}, core.ServicePort{Name:"t", Protocol:"TCP", AppProtocol:(*string)(nil), Port:53, TargetPort:intstr.IntOrString{Type:0, IntVal:53, StrVal:""}, NodePort:30986}}: may not contain more than 1 protocol when type is 'LoadBalancer'
    "#]],
    );
}

#[test]
fn topology_mode_check_and_warning_start_in_1_27() {
    // validation.go ValidateService and warnings.go GetWarningsForService: the topology-mode
    // annotation (KEP-2433's rename) and its agreement check are absent in v1.26.1 and present
    // in v1.27.2 (the releases' own copies).
    let scenario = |version: &str| {
        format!(
            "{}apiVersion: v1
kind: Service
metadata:
  name: t
  annotations:
    service.kubernetes.io/topology-aware-hints: Auto
    service.kubernetes.io/topology-mode: Disabled
spec:
  ports: [{{port: 80}}]
",
            profile(version)
        )
    };
    check(
        false,
        &scenario("1.26"),
        expect![[r#"
        service t created
        --- text
    "#]],
    );
    check(
        false,
        &scenario("1.27"),
        expect![[r#"
        Error FieldValueInvalid metadata.annotations[service.kubernetes.io/topology-mode]: Invalid value: "Disabled": must match annotations[service.kubernetes.io/topology-aware-hints] when both are specified @11:5
        service t rejected
        --- text
        The Service "t" is invalid: metadata.annotations[service.kubernetes.io/topology-mode]: Invalid value: "Disabled": must match annotations[service.kubernetes.io/topology-aware-hints] when both are specified
    "#]],
    );
}

#[test]
fn ip_warnings_of_1_27_to_1_32_use_netip_texts() {
    // pkg/api/service/warnings.go getWarningsForIP/getWarningsForCIDR (1.27 to 1.32; the file
    // is not in v1.26.1's pkg/api/service): Go netip's error text for what it refuses (a
    // loadBalancerIP that is no IP included), the RFC 5952 wording, and no ambiguous-CIDR
    // warning; 1.33 has KEP-4858's texts.
    let scenario = |version: &str| {
        format!(
            "{}apiVersion: v1
kind: Service
metadata: {{name: w}}
spec:
  type: LoadBalancer
  externalIPs: [192.0.2.010, '2001:db8:0::10', '::ffff:192.0.2.1']
  loadBalancerIP: lb.example.com
  loadBalancerSourceRanges: [10.0.0.1/8, '2001:db8:0::/48', 010.0.0.0/8]
  ports: [{{port: 80}}]
",
            profile(version)
        )
    };
    check(
        false,
        &scenario("1.26"),
        expect![[r#"
        Warning SvclabAdvisory spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs) @11:3
        service w created
        --- text
        svclab: spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs)
    "#]],
    );
    check(
        false,
        &scenario("1.32"),
        expect![[r#"
        Warning Warning spec.externalIPs[0]: IP address was accepted, but will be invalid in a future Kubernetes release: ParseAddr("192.0.2.010"): IPv4 field has octet with leading zero @10:17
        Warning Warning spec.externalIPs[1]: IPv6 address "2001:db8:0::10" is not in RFC 5952 canonical format ("2001:db8::10"), which may cause controller apply-loops @10:30
        Warning Warning spec.loadBalancerIP: IP address was accepted, but will be invalid in a future Kubernetes release: ParseAddr("lb.example.com"): unexpected character (at "lb.example.com") @11:3
        Warning Warning spec.loadBalancerSourceRanges[1]: IPv6 prefix "2001:db8:0::/48" is not in RFC 5952 canonical format ("2001:db8::/48"), which may cause controller apply-loops @12:42
        Warning Warning spec.loadBalancerSourceRanges[2]: IP prefix was accepted, but will be invalid in a future Kubernetes release: netip.ParsePrefix("010.0.0.0/8"): ParseAddr("010.0.0.0"): IPv4 field has octet with leading zero @12:61
        Warning SvclabAdvisory spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs) @11:3
        service w created
        --- text
        Warning: spec.externalIPs[0]: IP address was accepted, but will be invalid in a future Kubernetes release: ParseAddr("192.0.2.010"): IPv4 field has octet with leading zero
        Warning: spec.externalIPs[1]: IPv6 address "2001:db8:0::10" is not in RFC 5952 canonical format ("2001:db8::10"), which may cause controller apply-loops
        Warning: spec.loadBalancerIP: IP address was accepted, but will be invalid in a future Kubernetes release: ParseAddr("lb.example.com"): unexpected character (at "lb.example.com")
        Warning: spec.loadBalancerSourceRanges[1]: IPv6 prefix "2001:db8:0::/48" is not in RFC 5952 canonical format ("2001:db8::/48"), which may cause controller apply-loops
        Warning: spec.loadBalancerSourceRanges[2]: IP prefix was accepted, but will be invalid in a future Kubernetes release: netip.ParsePrefix("010.0.0.0/8"): ParseAddr("010.0.0.0"): IPv4 field has octet with leading zero
        svclab: spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs)
    "#]],
    );
    check(
        false,
        &scenario("1.33"),
        expect![[r#"
        Warning Warning spec.externalIPs[0]: non-standard IP address "192.0.2.010" will be considered invalid in a future Kubernetes release: use "192.0.2.10" @10:17
        Warning Warning spec.externalIPs[1]: IPv6 address "2001:db8:0::10" should be in RFC 5952 canonical format ("2001:db8::10") @10:30
        Warning Warning spec.externalIPs[2]: non-standard IP address "::ffff:192.0.2.1" will be considered invalid in a future Kubernetes release: use "192.0.2.1" @10:48
        Warning Warning spec.loadBalancerSourceRanges[0]: CIDR value "10.0.0.1/8" is ambiguous in this context (should be "10.0.0.0/8" or "10.0.0.1/32"?) @12:30
        Warning Warning spec.loadBalancerSourceRanges[1]: IPv6 CIDR value "2001:db8:0::/48" should be in RFC 5952 canonical format ("2001:db8::/48") @12:42
        Warning Warning spec.loadBalancerSourceRanges[2]: non-standard CIDR value "010.0.0.0/8" will be considered invalid in a future Kubernetes release: use "10.0.0.0/8" @12:61
        Warning SvclabAdvisory spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs) @11:3
        service w created
        --- text
        Warning: spec.externalIPs[0]: non-standard IP address "192.0.2.010" will be considered invalid in a future Kubernetes release: use "192.0.2.10"
        Warning: spec.externalIPs[1]: IPv6 address "2001:db8:0::10" should be in RFC 5952 canonical format ("2001:db8::10")
        Warning: spec.externalIPs[2]: non-standard IP address "::ffff:192.0.2.1" will be considered invalid in a future Kubernetes release: use "192.0.2.1"
        Warning: spec.loadBalancerSourceRanges[0]: CIDR value "10.0.0.1/8" is ambiguous in this context (should be "10.0.0.0/8" or "10.0.0.1/32"?)
        Warning: spec.loadBalancerSourceRanges[1]: IPv6 CIDR value "2001:db8:0::/48" should be in RFC 5952 canonical format ("2001:db8::/48")
        Warning: spec.loadBalancerSourceRanges[2]: non-standard CIDR value "010.0.0.0/8" will be considered invalid in a future Kubernetes release: use "10.0.0.0/8"
        svclab: spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs)
    "#]],
    );
}

#[test]
fn external_name_ignored_field_warnings_from_1_28() {
    // pkg/api/service/warnings.go GetWarningsForService: the "is ignored when spec.type is"
    // warnings are absent in v1.27.2 and present from v1.28.0 (the releases' own copies).
    let scenario = |version: &str| {
        format!(
            "{}apiVersion: v1
kind: Service
metadata: {{name: en}}
spec:
  type: ExternalName
  externalName: db.example.com
  externalIPs: [192.0.2.10]
---
apiVersion: v1
kind: Service
metadata: {{name: cip}}
spec:
  externalName: db.example.com
  ports: [{{port: 80}}]
",
            profile(version)
        )
    };
    check(
        false,
        &scenario("1.27"),
        expect![[r#"
        service en created
        service cip created
        --- text
    "#]],
    );
    check(
        false,
        &scenario("1.28"),
        expect![[r#"
        Warning Warning spec.externalIPs is ignored when spec.type is "ExternalName" @11:3
        Warning Warning spec.externalName is ignored when spec.type is not "ExternalName" @17:3
        service en created
        service cip created
        --- text
        Warning: spec.externalIPs is ignored when spec.type is "ExternalName"
        Warning: spec.externalName is ignored when spec.type is not "ExternalName"
    "#]],
    );
}

#[test]
fn r35_endpoint_slice_addresses_until_1_32_and_with_kep_4858_from_1_33() {
    // See: issue 35 (the apiserver oracle). discovery validation.go validateEndpoints, read in
    // k8s.io/kubernetes@v1.24.17 to @v1.37.2: to 1.32 the family error, then ValidateNonSpecialIP
    // on the same address, endpoints before ports. From 1.33 (KEP-4858) an IPv4 slice's address
    // goes through IsValidIPForLegacyField and an IPv6 slice's through the strict IsValidIP
    // (canonical form, no IPv4-mapped addresses); only an address that parses is checked for
    // its family, at the list's path, then by ValidateEndpointIP; ports come first.
    let scenario = |version: &str| {
        format!(
            "{}apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: e, namespace: ns}}
addressType: IPv4
endpoints:
- addresses: [foo, '::1']
ports: [{{name: p, protocol: ICMP, port: 80}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: e6, namespace: ns}}
addressType: IPv6
endpoints:
- addresses: ['FD00::1', '::ffff:10.0.0.1', 10.0.0.1]
",
            profile(version)
        )
    };
    check(
        false,
        &scenario("1.32"),
        expect![[r#"
            Error FieldValueInvalid endpoints[0].addresses[0]: Invalid value: "foo": must be a valid IPv4 address @10:15
            Error FieldValueInvalid endpoints[0].addresses[0]: Invalid value: "foo": must be a valid IP address @10:15
            Error FieldValueInvalid endpoints[0].addresses[1]: Invalid value: "::1": must be a valid IPv4 address @10:20
            Error FieldValueInvalid endpoints[0].addresses[1]: Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128) @10:20
            Error FieldValueNotSupported ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP" @11:19
            Error FieldValueInvalid endpoints[0].addresses[1]: Invalid value: "::ffff:10.0.0.1": must be a valid IPv6 address @18:26
            Error FieldValueInvalid endpoints[0].addresses[2]: Invalid value: "10.0.0.1": must be a valid IPv6 address @18:45
            --- text
            The EndpointSlice "e" is invalid: 
            * endpoints[0].addresses[0]: Invalid value: "foo": must be a valid IPv4 address
            * endpoints[0].addresses[0]: Invalid value: "foo": must be a valid IP address
            * endpoints[0].addresses[1]: Invalid value: "::1": must be a valid IPv4 address
            * endpoints[0].addresses[1]: Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128)
            * ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"
            The EndpointSlice "e6" is invalid: 
            * endpoints[0].addresses[1]: Invalid value: "::ffff:10.0.0.1": must be a valid IPv6 address
            * endpoints[0].addresses[2]: Invalid value: "10.0.0.1": must be a valid IPv6 address
        "#]],
    );
    check(
        false,
        &scenario("1.33"),
        expect![[r#"
            Error FieldValueNotSupported ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP" @11:19
            Error FieldValueInvalid endpoints[0].addresses[0]: Invalid value: "foo": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff) @10:15
            Error FieldValueInvalid endpoints[0].addresses: Invalid value: "::1": must be an IPv4 address @10:3
            Error FieldValueInvalid endpoints[0].addresses[1]: Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128) @10:20
            Error FieldValueInvalid endpoints[0].addresses[0]: Invalid value: "FD00::1": must be in canonical form ("fd00::1") @18:15
            Error FieldValueInvalid endpoints[0].addresses[1]: Invalid value: "::ffff:10.0.0.1": must not be an IPv4-mapped IPv6 address @18:26
            Error FieldValueInvalid endpoints[0].addresses: Invalid value: "10.0.0.1": must be an IPv6 address @18:3
            --- text
            The EndpointSlice "e" is invalid: 
            * ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"
            * endpoints[0].addresses[0]: Invalid value: "foo": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)
            * endpoints[0].addresses: Invalid value: "::1": must be an IPv4 address
            * endpoints[0].addresses[1]: Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128)
            The EndpointSlice "e6" is invalid: 
            * endpoints[0].addresses[0]: Invalid value: "FD00::1": must be in canonical form ("fd00::1")
            * endpoints[0].addresses[1]: Invalid value: "::ffff:10.0.0.1": must not be an IPv4-mapped IPv6 address
            * endpoints[0].addresses: Invalid value: "10.0.0.1": must be an IPv6 address
        "#]],
    );
}

#[test]
fn r35_endpoint_slice_update_with_unchanged_endpoints_drops_their_errors_from_1_33() {
    // See: issue 35. ValidateEndpointSlice(new, old) from k8s.io/kubernetes@v1.33.13: when the
    // endpoints are semantically equal to the stored ones, their errors are dropped (a stored
    // slice with leading zeros stays writable once StrictIPCIDRValidation is on); to 1.32 every
    // update checks them again.
    let slice = "apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: e, namespace: ns, resourceVersion: '1'}
addressType: IPv4
endpoints: [{addresses: [010.0.0.1]}]
ports: [{name: p, protocol: TCP, port: 80}]
";
    let parsed = crate::parse(&[Input::new("s.yaml", slice)]);
    let Some(crate::Object::EndpointSlice(old)) = parsed.objects.first() else {
        panic!("no slice")
    };
    let mut relabelled = old.value.clone();
    relabelled.metadata.labels.insert("a".into(), "b".into());
    let errors = |minor: u32, new: &crate::EndpointSlice| -> Vec<String> {
        let mut profile = crate::Profile::for_version(crate::Version { minor, patch: None });
        profile.set_gate("StrictIPCIDRValidation", true).unwrap();
        crate::validation::validate_endpoint_slice_update(new, &old.value, &profile)
            .iter()
            .map(|e| e.message(false))
            .collect()
    };
    assert_eq!(errors(33, &relabelled), Vec::<String>::new());
    let mut moved = relabelled.clone();
    moved.endpoints[0].addresses.push("10.0.0.2".into());
    assert_eq!(
        errors(33, &moved),
        ["endpoints[0].addresses[0]: Invalid value: \"010.0.0.1\": must not have leading 0s"]
    );
}

#[test]
fn r35_endpoint_slice_declarative_rules_replace_the_handwritten_ones_from_1_37() {
    // See: issue 35. k8s.io/api@v0.37.2 discovery/v1 types.go marks addressType required and
    // immutable and addresses required with at most 100 items `+k8s:beta(since: "1.37")`
    // (`+k8s:alpha` in 1.36, shadowed): with DeclarativeValidationBeta on, the handwritten errors
    // they cover are removed and the declarative ones (bare "Required value", the immutable
    // field's value `null`) come after every other cause.
    let scenario = |version: &str, gates: &str| {
        format!(
            "apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: '{version}'
featureGates: {{{gates}}}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: e, namespace: ns}}
addressType: IPv4
endpoints: [{{addresses: []}}, {{addresses: [foo]}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: ok, namespace: ns}}
addressType: IPv4
endpoints: [{{addresses: [10.0.0.1]}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: ok, namespace: ns}}
addressType: IPv6
endpoints: [{{addresses: []}}]
"
        )
    };
    check(
        false,
        &scenario("1.36", ""),
        expect![[r#"
        Error FieldValueRequired endpoints[0].addresses: Required value: must contain at least 1 address @10:14
        Error FieldValueInvalid endpoints[1].addresses[0]: Invalid value: "foo": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff) @10:43
        Error FieldValueRequired endpoints[0].addresses: Required value: must contain at least 1 address @22:14
        Error FieldValueInvalid addressType: Invalid value: "IPv6": field is immutable @21:1
        --- text
        The EndpointSlice "e" is invalid: 
        * endpoints[0].addresses: Required value: must contain at least 1 address
        * endpoints[1].addresses[0]: Invalid value: "foo": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)
        The EndpointSlice "ok" is invalid: 
        * endpoints[0].addresses: Required value: must contain at least 1 address
        * addressType: Invalid value: "IPv6": field is immutable
    "#]],
    );
    check(
        false,
        &scenario("1.37", ""),
        expect![[r#"
        Error FieldValueInvalid endpoints[1].addresses[0]: Invalid value: "foo": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff) @10:43
        Error FieldValueRequired endpoints[0].addresses: Required value @10:14
        Error FieldValueInvalid addressType: Invalid value: null: field is immutable @21:1
        Error FieldValueRequired endpoints[0].addresses: Required value @22:14
        --- text
        The EndpointSlice "e" is invalid: 
        * endpoints[1].addresses[0]: Invalid value: "foo": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)
        * endpoints[0].addresses: Required value
        The EndpointSlice "ok" is invalid: 
        * addressType: Invalid value: null: field is immutable
        * endpoints[0].addresses: Required value
    "#]],
    );
    check(
        false,
        &scenario("1.37", "DeclarativeValidationBeta: false"),
        expect![[r#"
        Error FieldValueRequired endpoints[0].addresses: Required value: must contain at least 1 address @10:14
        Error FieldValueInvalid endpoints[1].addresses[0]: Invalid value: "foo": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff) @10:43
        Error FieldValueRequired endpoints[0].addresses: Required value: must contain at least 1 address @22:14
        Error FieldValueInvalid addressType: Invalid value: "IPv6": field is immutable @21:1
        --- text
        The EndpointSlice "e" is invalid: 
        * endpoints[0].addresses: Required value: must contain at least 1 address
        * endpoints[1].addresses[0]: Invalid value: "foo": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)
        The EndpointSlice "ok" is invalid: 
        * endpoints[0].addresses: Required value: must contain at least 1 address
        * addressType: Invalid value: "IPv6": field is immutable
    "#]],
    );
}

#[test]
fn r35_non_standard_ips_are_invalid_from_1_36_in_the_warning_text() {
    // See: issue 35. apimachinery pkg/util/validation/ip.go GetWarningsForIP/GetWarningsForCIDR:
    // "will be considered invalid in a future Kubernetes release" in v0.33.13 to v0.35.8, "is
    // invalid" in v0.36.5 and v0.37.2 (loadBalancerIP is not validated strictly, so it still
    // warns with StrictIPCIDRValidation on; the source range only warns with it off).
    let scenario = |version: &str| {
        format!(
            "apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: '{version}'
featureGates: {{StrictIPCIDRValidation: false}}
---
apiVersion: v1
kind: Service
metadata: {{name: lb}}
spec:
  type: LoadBalancer
  loadBalancerIP: 1.2.3.004
  loadBalancerSourceRanges: [010.0.0.0/8]
  ports: [{{port: 80}}]
"
        )
    };
    check(
        false,
        &scenario("1.35"),
        expect![[r#"
        Warning Warning spec.loadBalancerIP: non-standard IP address "1.2.3.004" will be considered invalid in a future Kubernetes release: use "1.2.3.4" @11:3
        Warning Warning spec.loadBalancerSourceRanges[0]: non-standard CIDR value "010.0.0.0/8" will be considered invalid in a future Kubernetes release: use "10.0.0.0/8" @12:30
        Warning SvclabAdvisory spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs) @11:3
        service lb created
        --- text
        Warning: spec.loadBalancerIP: non-standard IP address "1.2.3.004" will be considered invalid in a future Kubernetes release: use "1.2.3.4"
        Warning: spec.loadBalancerSourceRanges[0]: non-standard CIDR value "010.0.0.0/8" will be considered invalid in a future Kubernetes release: use "10.0.0.0/8"
        svclab: spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs)
    "#]],
    );
    check(
        false,
        &scenario("1.36"),
        expect![[r#"
        Warning Warning spec.loadBalancerIP: non-standard IP address "1.2.3.004" is invalid: use "1.2.3.4" @11:3
        Warning Warning spec.loadBalancerSourceRanges[0]: non-standard CIDR value "010.0.0.0/8" is invalid: use "10.0.0.0/8" @12:30
        Warning SvclabAdvisory spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs) @11:3
        service lb created
        --- text
        Warning: spec.loadBalancerIP: non-standard IP address "1.2.3.004" is invalid: use "1.2.3.4"
        Warning: spec.loadBalancerSourceRanges[0]: non-standard CIDR value "010.0.0.0/8" is invalid: use "10.0.0.0/8"
        svclab: spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs)
    "#]],
    );
}

#[test]
fn r35_the_fqdn_deprecation_warning_starts_in_1_27() {
    // See: issue 35. The EndpointSlice strategy's WarningsOnCreate returns nil in
    // k8s.io/kubernetes@v1.24.17 to @v1.26.15 and calls warnOnDeprecatedAddressType from
    // @v1.27.16; an update never warns about it.
    let scenario = |version: &str| {
        format!(
            "{}apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: db}}
addressType: FQDN
endpoints: [{{addresses: [db.example.com]}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: db}}
addressType: FQDN
endpoints: [{{addresses: [db2.example.com]}}]
",
            profile(version)
        )
    };
    check(
        false,
        &scenario("1.26"),
        expect![[r#"
        --- text
    "#]],
    );
    check(
        false,
        &scenario("1.27"),
        expect![[r#"
        Warning Warning spec.addressType: FQDN endpoints are deprecated @8:1
        --- text
        Warning: spec.addressType: FQDN endpoints are deprecated
    "#]],
    );
}

#[test]
fn r35_cluster_name_is_dropped_with_a_warning_in_1_24_and_unknown_after() {
    // See: issue 35. apiserver v0.24.17 BeforeCreate/BeforeUpdate clear ObjectMeta's
    // ZZZ_DeprecatedClusterName and warn, after the Service's allocation and before validation
    // (so a refused slice gets the warning too); from 1.25 ObjectMeta has no such field.
    let scenario = |version: &str| {
        format!(
            "apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: '{version}'
featureGates: {{ServerSideFieldValidation: true}}
---
apiVersion: v1
kind: Service
metadata: {{name: s, clusterName: c}}
spec: {{ports: [{{port: 80}}]}}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: e, clusterName: c}}
addressType: IPv4
endpoints: [{{addresses: []}}]
"
        )
    };
    check(
        false,
        &scenario("1.24"),
        expect![[r#"
        Warning Warning metadata.clusterName was specified. This field is not preserved and will be removed from the schema in 1.25 @8:21
        Warning Warning metadata.clusterName was specified. This field is not preserved and will be removed from the schema in 1.25 @13:21
        Error FieldValueRequired endpoints[0].addresses: Required value: must contain at least 1 address @15:14
        service s created
        --- text
        Warning: metadata.clusterName was specified. This field is not preserved and will be removed from the schema in 1.25
        Warning: metadata.clusterName was specified. This field is not preserved and will be removed from the schema in 1.25
        The EndpointSlice "e" is invalid: endpoints[0].addresses: Required value: must contain at least 1 address
    "#]],
    );
    check(
        false,
        &scenario("1.25"),
        expect![[r#"
        Warning UnknownField unknown field "metadata.clusterName" @8:21
        Warning UnknownField unknown field "metadata.clusterName" @13:21
        Error FieldValueRequired endpoints[0].addresses: Required value: must contain at least 1 address @15:14
        service s created
        --- text
        Warning: unknown field "metadata.clusterName"
        Warning: unknown field "metadata.clusterName"
        The EndpointSlice "e" is invalid: endpoints[0].addresses: Required value: must contain at least 1 address
    "#]],
    );
}

#[test]
fn r35_finalizers_are_qualified_names_and_standard_or_fully_qualified() {
    // See: issue 35. apimachinery ValidateFinalizers (a qualified name each, at the list's
    // path; not both orphan and foregroundDeletion) inside ValidateObjectMeta, then the core
    // group's validateKubeFinalizerName per index; unchanged v1.24.17 to v1.37.2.
    check(
        false,
        &format!(
            "{}apiVersion: v1
kind: Service
metadata: {{name: s, finalizers: [example.com/x, kubernetes, 'bad finalizer', custom]}}
spec: {{ports: [{{port: 80}}]}}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: e, finalizers: [orphan, foregroundDeletion]}}
addressType: IPv4
endpoints: [{{addresses: [10.0.0.1]}}]
",
            profile("1.30")
        ),
        expect![[r#"
            Error FieldValueInvalid metadata.finalizers: Invalid value: "bad finalizer": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') @7:21
            Error FieldValueInvalid metadata.finalizers[2]: Invalid value: "bad finalizer": name is neither a standard finalizer name nor is it fully qualified @7:61
            Error FieldValueInvalid metadata.finalizers[3]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified @7:78
            Error FieldValueInvalid metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set @12:21
            service s rejected
            --- text
            The Service "s" is invalid: 
            * metadata.finalizers: Invalid value: "bad finalizer": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')
            * metadata.finalizers[2]: Invalid value: "bad finalizer": name is neither a standard finalizer name nor is it fully qualified
            * metadata.finalizers[3]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified
            The EndpointSlice "e" is invalid: metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set
        "#]],
    );
}

#[test]
fn service_update_repeats_the_object_meta_causes_until_1_33() {
    // validation.go ValidateServiceUpdate: to v1.33.3 it ends with ValidateService(new), which
    // opens with ValidateObjectMeta(new); from v1.34.1 validateService leaves ObjectMeta to
    // ValidateServiceCreate, so on update a bad label has one cause fewer (validateCommonFields'
    // two and ValidateObjectMetaUpdate's); from 1.37 the generic registry keeps each identical
    // cause once (Rule::IdenticalCausesOnce, checked with the apiserver oracle at 1.36.5 and
    // 1.37.2). kubectl prints the repeated line once either way.
    let scenario = |version: &str| {
        format!(
            "{}apiVersion: v1
kind: Service
metadata: {{name: g}}
spec:
  ports: [{{port: 80}}]
---
apiVersion: v1
kind: Service
metadata: {{name: g, labels: {{app: 'bad value'}}}}
spec:
  ports: [{{port: 80}}]
",
            profile(version)
        )
    };
    let causes = |version: &str| {
        let input = scenario(version);
        let report = run(&[Input::new("s.yaml", &input)], &CheckOptions::default());
        let labels = report.diagnostics.iter().filter(|d| d.message.starts_with("metadata.labels"));
        format!("{version}: {} causes\n", labels.count())
    };
    let out = [causes("1.33"), causes("1.34"), causes("1.36"), causes("1.37")].concat();
    expect![[r#"
        1.33: 4 causes
        1.34: 3 causes
        1.36: 3 causes
        1.37: 1 causes
    "#]]
    .assert_eq(&out);
}

#[test]
fn an_unchanged_source_ranges_annotation_is_not_checked_again_from_1_33() {
    // validation.go ValidateService, v1.33.3 on: the annotation is checked only when the update
    // changes it (`oldService.Annotations[...] != val`), each entry through
    // IsValidCIDRForLegacyField, strict with StrictIPCIDRValidation; v1.32.10 checks it on every
    // update. The old object is taken as stored (validated under older rules), as the
    // validation functions receive it.
    let service = |ranges: &str| {
        let text = format!(
            "apiVersion: v1
kind: Service
metadata:
  name: lb
  namespace: ns
  resourceVersion: '1'
  annotations: {{service.beta.kubernetes.io/load-balancer-source-ranges: '{ranges}'}}
spec:
  type: LoadBalancer
  allocateLoadBalancerNodePorts: true
  externalTrafficPolicy: Cluster
  internalTrafficPolicy: Cluster
  sessionAffinity: None
  ports: [{{port: 80, protocol: TCP, targetPort: 80, nodePort: 30080}}]
"
        );
        let parsed = crate::parse(&[Input::new("s.yaml", &text)]);
        let Some(crate::Object::Service(svc)) = parsed.objects.first() else {
            panic!("the test's Service does not decode")
        };
        svc.value.clone()
    };
    let mut out = String::new();
    for minor in [32, 33] {
        let mut profile = crate::Profile::for_version(crate::Version { minor, patch: None });
        if minor == 33 {
            assert_eq!(profile.set_gate("StrictIPCIDRValidation", true), Ok(()));
        }
        let old = service("10.0.0.0/8,bad");
        for ranges in ["10.0.0.0/8,bad", "10.0.0.1/8, bad"] {
            let errors =
                crate::validation::validate_service_update(&service(ranges), &old, &profile);
            out.push_str(&format!("1.{minor} {ranges:?}:\n"));
            for e in errors.iter().filter(|e| e.path.starts_with("metadata.annotations")) {
                out.push_str(&format!("  {}\n", e.message(false)));
            }
        }
    }
    expect![[r#"
        1.32 "10.0.0.0/8,bad":
          metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Invalid value: "bad": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)
        1.32 "10.0.0.1/8, bad":
          metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Invalid value: "bad": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)
        1.33 "10.0.0.0/8,bad":
        1.33 "10.0.0.1/8, bad":
          metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Invalid value: "10.0.0.1/8": must not have bits set beyond the prefix length
          metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Invalid value: "bad": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)
    "#]]
    .assert_eq(&out);
}

#[test]
fn explain_release_gives_each_diagnostic_its_releases_and_table_rows() {
    // `svclab check --explain-release`: the scenario again at every release; the ranges come
    // from the same release tables the validation reads.
    let input = format!(
        "{}apiVersion: v1
kind: Service
metadata: {{name: lb}}
spec:
  type: LoadBalancer
  loadBalancerSourceRanges: [foo]
  ports: [{{port: 10250}}]
",
        profile("1.29")
    );
    let report = run(
        &[Input::new("s.yaml", &input)],
        &CheckOptions { explain_release: true, ..CheckOptions::default() },
    );
    let mut out = String::new();
    for line in report.to_text().lines().skip_while(|l| !l.starts_with("Releases")) {
        if line.is_empty() {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    expect![[r#"
        Releases in which upstream gives exactly these texts:
          1.24–1.32: spec.ports[0]: Invalid value: 10250: may not expose port 10250 externally since it is used by kubelet
              1.24–1.32 (Service rules): a LoadBalancer may not expose port 10250; pkg/apis/core/validation/validation.go ValidateService (present in v1.24.0 to v1.31.0 as vendored by ceph/ceph-csi and in v1.32.10 as vendored by kubeedge/kubeedge; absent in v1.33.3 as vendored by openshift/openshift-apiserver); removed by kubernetes/kubernetes#129174, listed in CHANGELOG-1.33 ("Remove the limitation on exposing port 10250 externally in service")
          1.24–1.29: spec.LoadBalancerSourceRanges: Invalid value: "[foo]": must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24 
              1.24–1.29 (Service rules): spec.LoadBalancerSourceRanges (or the annotation) checked whole: one Invalid with the list as fmt %v and "must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24 "; pkg/apis/core/validation/validation.go ValidateService via pkg/api/service/util.go GetLoadBalancerSourceRanges in v1.24.0 to v1.29.0; per-entry apimachinery IsValidCIDR (space-trimmed) in v1.30.0, v1.31.0 (read as vendored by ceph/ceph-csi) and v1.32.10 (kubeedge/kubeedge)
    "#]].assert_eq(&out);
}
