//! Unit tests of the gateway decisions: configuration, paths, admission, limits, the API.

use expect_test::{Expect, expect};

use super::{Decision, GatewayConfig, Interest, RequestHead, decide, interest, warning_header};

/// Runs one request through `interest` and, when the body is wanted, `decide`, under the
/// configuration `config` (Traefik-style strings when `stringly`), and renders the outcome.
fn check(config: &str, method: &str, path: &str, body: &str, expect: Expect) {
    let config = match GatewayConfig::parse(config.as_bytes(), true) {
        Ok(config) => config,
        Err(err) => {
            expect.assert_eq(&format!("config error: {err}\n"));
            return;
        }
    };
    let head = RequestHead { method, path, content_length: Some(body.len() as u64) };
    let decision = match interest(&config, &head) {
        Interest::Forward { warnings } => Decision::Forward { warnings },
        Interest::Respond(reply) => Decision::Respond(reply),
        Interest::Body => decide(&config, &head, body.as_bytes()),
    };
    let rendered = match decision {
        Decision::Forward { warnings } => {
            let mut out = "forward\n".to_owned();
            for warning in warnings {
                out.push_str(&format!("warning: {warning}\n"));
            }
            out
        }
        Decision::Respond(reply) => {
            let mut out = format!("{}\n", reply.status);
            for (name, value) in &reply.headers {
                out.push_str(&format!("{name}: {value}\n"));
            }
            let body = if reply.body.len() > 700 {
                format!("{}...\n", &reply.body[..700])
            } else {
                reply.body
            };
            out.push_str(&body);
            out
        }
    };
    expect.assert_eq(&rendered);
}

const INVALID: &str = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"ports":[{"port":0,"targetPort":8080}]}}"#;
const VALID: &str = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"ports":[{"port":80}]}}"#;

#[test]
fn valid_service_is_forwarded() {
    check(
        "",
        "POST",
        "/api/v1/namespaces/shop/services?fieldManager=x",
        VALID,
        expect![[r#"
        forward
    "#]],
    );
}

#[test]
fn invalid_service_gets_the_apiservers_status() {
    check(
        "",
        "POST",
        "/api/v1/namespaces/shop/services",
        INVALID,
        expect![[r#"
            422
            content-type: application/json
            {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Service \"web\" is invalid: spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive","reason":"Invalid","details":{"name":"web","kind":"Service","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: 0: must be between 1 and 65535, inclusive","field":"spec.ports[0].port"}]},"code":422}
        "#]],
    );
    check(
        "",
        "PUT",
        "/api/v1/namespaces/shop/services/web",
        INVALID,
        expect![[r#"
            422
            content-type: application/json
            {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Service \"web\" is invalid: spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive","reason":"Invalid","details":{"name":"web","kind":"Service","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: 0: must be between 1 and 65535, inclusive","field":"spec.ports[0].port"}]},"code":422}
        "#]],
    );
}

#[test]
fn yaml_bodies_are_judged_too() {
    let yaml = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 0, targetPort: 8080}]\n";
    check(
        "",
        "POST",
        "/api/v1/namespaces/shop/services",
        yaml,
        expect![[r#"
            422
            content-type: application/json
            {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Service \"web\" is invalid: spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive","reason":"Invalid","details":{"name":"web","kind":"Service","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: 0: must be between 1 and 65535, inclusive","field":"spec.ports[0].port"}]},"code":422}
        "#]],
    );
    check(
        "",
        "POST",
        "/api/v1/namespaces/shop/services",
        "[1, 2",
        expect![[r#"
        400
        content-type: application/json
        {"apiVersion":"v1","code":400,"kind":"Status","message":"the request body is neither a JSON nor a YAML object","metadata":{},"reason":"BadRequest","status":"Failure"}
    "#]],
    );
}

#[test]
fn warn_mode_forwards_refusals_with_a_warning() {
    check(
        r#"{"mode": "warn"}"#,
        "POST",
        "/api/v1/namespaces/shop/services",
        INVALID,
        expect![[r#"
        forward
        warning: 299 - "svclab (mode warn) would refuse: Service \"web\" is invalid: spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"
    "#]],
    );
}

#[test]
fn other_paths_and_reads_pass() {
    for (method, path) in [
        ("GET", "/api/v1/namespaces/shop/services/web"),
        ("DELETE", "/api/v1/namespaces/shop/services/web"),
        ("POST", "/api/v1/namespaces/shop/configmaps"),
        ("POST", "/api/v1/namespaces/shop/services/web/proxy"),
        ("POST", "/svclab/check"),
    ] {
        check(
            "",
            method,
            path,
            INVALID,
            expect![[r#"
            forward
        "#]],
        );
    }
    // Not guarded: services only.
    check(
        r#"{"guard": ["endpointslices"]}"#,
        "POST",
        "/api/v1/namespaces/shop/services",
        INVALID,
        expect![[r#"
            forward
        "#]],
    );
}

#[test]
fn patch_warns_or_is_refused() {
    check(
        "",
        "PATCH",
        "/api/v1/namespaces/shop/services/web",
        "{}",
        expect![[r#"
        forward
        warning: 299 - "svclab: PATCH of Service \"web\" was not validated at the gateway (a partial body cannot be judged without the stored object)"
    "#]],
    );
    check(
        r#"{"patch": "refuse"}"#,
        "PATCH",
        "/api/v1/namespaces/shop/services/web/status",
        "{}",
        expect![[r#"
        405
        content-type: application/json
        {"apiVersion":"v1","code":405,"kind":"Status","message":"PATCH of Service \"web/status\" is refused at this gateway: send the whole object with PUT","metadata":{},"reason":"MethodNotAllowed","status":"Failure"}
    "#]],
    );
}

#[test]
fn bodies_over_the_limit_get_413() {
    check(
        r#"{"limits": {"maxBodyBytes": "10"}}"#,
        "POST",
        "/api/v1/namespaces/shop/services",
        VALID,
        expect![[r#"
        413
        content-type: application/json
        {"apiVersion":"v1","code":413,"kind":"Status","message":"Request entity too large: limit is 10","metadata":{},"reason":"RequestEntityTooLarge","status":"Failure"}
    "#]],
    );
    check(
        r#"{"prefix": "/svclab", "limits": {"maxObjects": 1}}"#,
        "POST",
        "/svclab/check",
        "kind: Node\napiVersion: v1\nmetadata: {name: a}\n---\nkind: Node\napiVersion: v1\nmetadata: {name: b}\n",
        expect![[r#"
            413
            content-type: application/json
            {"apiVersion":"v1","code":413,"kind":"Status","message":"Request entity too large: 2 objects, limit is 1","metadata":{},"reason":"RequestEntityTooLarge","status":"Failure"}
        "#]],
    );
}

#[test]
fn api_under_the_prefix() {
    let scenario = "apiVersion: v1\nkind: Service\nmetadata: {name: dns}\nspec:\n  clusterIP: 10.96.0.10\n  ports: [{port: 53}]\n";
    check(
        r#"{"prefix": "/svclab/"}"#,
        "POST",
        "/svclab/check",
        scenario,
        expect![[r#"
            200
            content-type: application/json
            {
              "apiVersion": "svclab.dev/v1alpha1",
              "kind": "Report",
              "profile": {
                "kubernetesVersion": "1.37",
                "modelledRelease": "1.37.2",
                "featureGates": {
                  "DeclarativeValidationBeta": true,
                  "DisableAllocatorDualWrite": true,
                  "MultiCIDRServiceAllocator": true,
                  "PreferSameTrafficDistribution": true,
                  "RelaxedServiceNameValidation": true,
                  "StrictIPCIDRValidation": true
                },
                "serviceClusterIPRanges": [
                  "10.96.0.0/12"
                ],
                "serviceNodePortRange": "30000-32767",
                "seed": 0,
                "host": {
                  "iptablesRandomFully": false,
                  "nfacct": false,
                  "interfaceAddresses": []
                }
              },
              "services": [
                {
                  "namespace": "defau...
        "#]],
    );
    check(
        r#"{"prefix": "/svclab"}"#,
        "POST",
        "/svclab/render?proxyMode=bpf",
        scenario,
        expect![[r#"
        400
        content-type: application/json
        {"apiVersion":"v1","code":400,"kind":"Status","message":"proxyMode must be iptables or nftables","metadata":{},"reason":"BadRequest","status":"Failure"}
    "#]],
    );
    check(
        r#"{"prefix": "/svclab"}"#,
        "POST",
        "/svclab/trace?src=10.0.0.1",
        scenario,
        expect![[r#"
        400
        content-type: application/json
        {"apiVersion":"v1","code":400,"kind":"Status","message":"trace needs the query parameters src, dst and dport","metadata":{},"reason":"BadRequest","status":"Failure"}
    "#]],
    );
    check(
        r#"{"prefix": "/svclab"}"#,
        "GET",
        "/svclab/check",
        "",
        expect![[r#"
        405
        content-type: application/json
        {"apiVersion":"v1","code":405,"kind":"Status","message":"svclab's API answers POST only","metadata":{},"reason":"MethodNotAllowed","status":"Failure"}
    "#]],
    );
    check(
        r#"{"prefix": "/svclab"}"#,
        "POST",
        "/svclab/checks",
        "",
        expect![[r#"
        404
        content-type: application/json
        {"apiVersion":"v1","code":404,"kind":"Status","message":"\"/svclab/checks\" is not one of /svclab/check, /svclab/render, /svclab/trace","metadata":{},"reason":"NotFound","status":"Failure"}
    "#]],
    );
}

#[test]
fn configuration_errors_name_the_key() {
    check(
        r#"{"mdoe": "warn"}"#,
        "GET",
        "/",
        "",
        expect![[r#"
        config error: mdoe: unknown key
    "#]],
    );
    check(
        r#"{"limits": {"maxBodyBytes": "lots"}}"#,
        "GET",
        "/",
        "",
        expect![[r#"
        config error: limits.maxBodyBytes: must be a positive integer
    "#]],
    );
    check(
        r#"{"guard": ["pods"]}"#,
        "GET",
        "/",
        "",
        expect![[r#"
        config error: guard[0]: must be "services", "services/status" or "endpointslices"
    "#]],
    );
    check(
        r#"{"prefix": "svclab"}"#,
        "GET",
        "/",
        "",
        expect![[r#"
        config error: prefix: must start with "/"
    "#]],
    );
    check(
        "[]",
        "GET",
        "/",
        "",
        expect![[r#"
        config error: the gateway configuration is not a JSON object: expected an object
    "#]],
    );
    // JSON numbers are refused where Traefik's strings are expected only when not stringly.
    assert!(GatewayConfig::parse(br#"{"limits": {"maxObjects": "5"}}"#, false).is_err());
    let istio = GatewayConfig::parse(br#"{"limits": {"maxBodyBytes": 3145728.0}}"#, false);
    assert_eq!(istio.map(|c| c.max_body_bytes), Ok(3_145_728));
}

#[test]
fn policy_denies_with_403_and_warns() {
    let config = r#"{"policy": {"types": {"allowed": ["ClusterIP"]}, "externalIPs": {"mode": "forbid", "action": "warn"}}}"#;
    let node_port = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"np"},"spec":{"type":"NodePort","ports":[{"port":80}]}}"#;
    check(
        config,
        "POST",
        "/api/v1/namespaces/shop/services",
        node_port,
        expect![[r#"
        403
        content-type: application/json
        {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"spec.type: Unsupported value: \"NodePort\": supported values: \"ClusterIP\" (types.allowed)","reason":"Forbidden","details":{"name":"np","kind":"services","causes":[{"reason":"FieldValueNotSupported","message":"spec.type: Unsupported value: \"NodePort\": supported values: \"ClusterIP\" (types.allowed)","field":"spec.type"}]},"code":403}
    "#]],
    );
    let external = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"ext"},"spec":{"externalIPs":["192.0.2.1"],"ports":[{"port":80}]}}"#;
    check(
        config,
        "POST",
        "/api/v1/namespaces/shop/services",
        external,
        expect![[r#"
        forward
        warning: 299 - "spec.externalIPs is deprecated and may no longer be implemented in some clusters"
        warning: 299 - "spec.externalIPs[0]: Forbidden: external IPs are not allowed (externalIPs.mode)"
    "#]],
    );
    // Settings errors refuse the configuration.
    check(
        r#"{"policy": {"types": {"allowed": ["Nope"]}}}"#,
        "GET",
        "/",
        "",
        expect![[r#"
        config error: policy: types.allowed[0]: Unsupported value: "Nope": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"
    "#]],
    );
    check(
        r#"{"profile": {"kubernetesVersion": "0.1"}}"#,
        "GET",
        "/",
        "",
        expect![[r#"
        config error: profile: kubernetesVersion: Invalid value: "0.1": svclab models Kubernetes 1.24 to 1.37; using 1.37
    "#]],
    );
}

#[test]
fn warning_headers_quote_like_the_apiserver() {
    expect![[r#"299 - "a \"b\" \\ c d""#]].assert_eq(&warning_header("a \"b\" \\ c\nd"));
}

#[test]
fn rules_that_need_the_requester_warn_that_they_were_skipped() {
    check(
        r#"{"policy": {"externalIPs": {"mode": "forbid", "action": "warn", "allowedGroups": ["netops"]}}}"#,
        "POST",
        "/api/v1/namespaces/shop/services",
        r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"ports":[{"port":80}],"externalIPs":["192.0.2.10"]}}"#,
        expect![[r#"
            forward
            warning: 299 - "spec.externalIPs is deprecated and may no longer be implemented in some clusters"
            warning: 299 - "spec.externalIPs[0]: Forbidden: external IPs are not allowed (externalIPs.mode)"
            warning: 299 - "svclab: externalIPs.allowedGroups: skipped: needs userInfo"
        "#]],
    );
}
