//! The admission webhook's routes, driven in-process (no sockets) through both engines, with
//! and without a Service policy and a cluster profile. The server itself (connections, TLS,
//! HTTP/2, SIGTERM, `--policy` and `--profile` files) is tested over sockets in
//! `host-runner/tests/webhook.rs`.

use std::path::Path;

use serde_json::{Value, json};
use svclab_core::{AdmissionOptions, Input};
use svclab_host::{Engine, FailurePolicy, HttpResponse, route};

use crate::support::plugin;

/// Sends `method path body` to the webhook configured with `options` on both engines; checks
/// they answer byte for byte the same.
#[track_caller]
fn check(options: &AdmissionOptions, method: &str, path: &str, body: &str) -> HttpResponse {
    let native = route(&Engine::Native, FailurePolicy::Fail, options, method, path, body);
    let plugged = route(plugin(), FailurePolicy::Fail, options, method, path, body);
    assert_eq!(native, plugged, "{method} {path}: native and plugin answer differently");
    plugged
}

/// No policy, no profile: apiserver validation of the newest release only.
fn plain() -> AdmissionOptions {
    AdmissionOptions::default()
}

/// `svclab serve --policy <text>` (and `--profile <text>` when given).
fn with_policy(policy: &str, profile: Option<&str>) -> AdmissionOptions {
    AdmissionOptions {
        policy: Some(Input::new("policy.yaml", policy)),
        profile: profile.map(|text| Input::new("profile.yaml", text)),
        ..AdmissionOptions::default()
    }
}

fn review(operation: &str, object: Value) -> String {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": "", "version": "v1", "kind": "Service"},
            "resource": {"group": "", "version": "v1", "resource": "services"},
            "operation": operation,
            "namespace": "shop",
            "name": "web",
            "object": object,
        }
    })
    .to_string()
}

fn response(answer: &HttpResponse) -> Value {
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.content_type, "application/json");
    let review: Value = serde_json::from_str(&answer.body).expect("JSON body");
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["kind"], "AdmissionReview");
    assert_eq!(review["response"]["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
    review["response"].clone()
}

#[test]
fn healthz() {
    assert_eq!(
        check(&plain(), "GET", "/healthz", ""),
        HttpResponse {
            status: 200,
            content_type: "text/plain; charset=utf-8",
            body: "ok\n".into()
        }
    );
}

#[test]
fn valid_service_is_allowed() {
    let object = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}});
    let response = response(&check(&plain(), "POST", "/validate", &review("CREATE", object)));
    assert_eq!(response["allowed"], true);
    assert_eq!(response.get("status"), None);
}

#[test]
fn invalid_service_is_denied_like_the_apiserver() {
    let object = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 0}]}});
    let response = response(&check(&plain(), "POST", "/validate", &review("CREATE", object)));
    assert_eq!(response["allowed"], false);
    let status = &response["status"];
    assert_eq!(status["code"], 422);
    assert_eq!(status["reason"], "Invalid");
    let message = status["message"].as_str().expect("message");
    assert!(message.starts_with("Service \"web\" is invalid: "), "{message}");
    assert!(message.contains("spec.ports[0].port: Invalid value: 0"), "{message}");
    let cause = &status["details"]["causes"][0];
    assert_eq!(cause["field"], "spec.ports[0].port");
    assert_eq!(cause["reason"], "FieldValueInvalid");
    assert!(!cause["message"].as_str().expect("cause message").starts_with("spec."), "{cause}");
}

#[test]
fn other_kinds_and_deletes_are_allowed() {
    let mut body: Value = serde_json::from_str(&review("DELETE", json!({}))).expect("JSON");
    assert_eq!(response(&check(&plain(), "POST", "/validate", &body.to_string()))["allowed"], true);
    body["request"]["operation"] = json!("CREATE");
    body["request"]["kind"] = json!({"group": "apps", "version": "v1", "kind": "Deployment"});
    assert_eq!(response(&check(&plain(), "POST", "/validate", &body.to_string()))["allowed"], true);
}

#[test]
fn malformed_reviews_are_bad_requests() {
    let answer = check(&plain(), "POST", "/validate", "not json");
    assert_eq!(answer.status, 400);
    assert!(answer.body.starts_with("the AdmissionReview is not JSON"), "{}", answer.body);
    let answer = check(&plain(), "POST", "/validate", r#"{"apiVersion":"v1","kind":"Status"}"#);
    assert_eq!(answer.status, 400);
}

#[test]
fn unknown_routes() {
    assert_eq!(check(&plain(), "GET", "/nope", "").status, 404);
    assert_eq!(check(&plain(), "GET", "/validate", "").status, 405);
}

#[test]
fn engine_failures_follow_the_failure_policy() {
    // Enough fuel to load (the ABI check) but not to validate a Service.
    let limits = svclab_host::Limits { fuel: Some(20_000), ..svclab_host::Limits::default() };
    let starved =
        Engine::embedded_plugin(limits, &svclab_host::CacheDir::at(crate::support::cache_dir()))
            .expect("loads on a small budget");
    let object = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 80}]}});
    let body = review("CREATE", object);

    let denied =
        response(&route(&starved, FailurePolicy::Fail, &plain(), "POST", "/validate", &body));
    assert_eq!(denied["allowed"], false);
    assert_eq!(denied["status"]["code"], 500);
    assert_eq!(
        denied["status"]["message"],
        "svclab policy failed: plugin ran out of fuel (budget 20000; raise it with --fuel)"
    );

    let allowed =
        response(&route(&starved, FailurePolicy::Ignore, &plain(), "POST", "/validate", &body));
    assert_eq!(allowed["allowed"], true);
    assert_eq!(allowed.get("status"), None);
    assert_eq!(
        allowed["warnings"][0],
        "svclab policy failed and was ignored: plugin ran out of fuel (budget 20000; raise it with --fuel)"
    );
}

/// The externalIPs allowlist (CVE-2020-8554) as a ServicePolicy document.
const EXTERNAL_IPS: &str = "\
apiVersion: svclab.dev/v1alpha1
kind: ServicePolicy
metadata: {name: external-ips}
spec:
  exemptions: {groups: [system:masters]}
  externalIPs:
    mode: allowlist
    allowedCIDRs: [192.0.2.0/24]
";

fn with_external_ips(ips: &[&str]) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}], "externalIPs": ips}})
}

/// The review of `object` sent by `username` in `groups`.
fn review_by(object: Value, username: &str, groups: &[&str]) -> String {
    let mut review: Value = serde_json::from_str(&review("CREATE", object)).expect("JSON");
    review["request"]["userInfo"] = json!({"username": username, "groups": groups});
    review.to_string()
}

#[test]
fn policy_denial_is_forbidden_with_one_cause_per_violation() {
    let options = with_policy(EXTERNAL_IPS, None);
    let inside = review("CREATE", with_external_ips(&["192.0.2.7"]));
    let answer = response(&check(&options, "POST", "/validate", &inside));
    assert_eq!(answer["allowed"], true, "{answer}");

    let one = review("CREATE", with_external_ips(&["192.0.2.7", "203.0.113.9"]));
    let answer = response(&check(&options, "POST", "/validate", &one));
    assert_eq!(answer["allowed"], false);
    let line = "spec.externalIPs[1]: Forbidden: \"203.0.113.9\" is outside the allowed ranges 192.0.2.0/24 (externalIPs.allowedCIDRs)";
    assert_eq!(
        answer["status"],
        json!({
            "metadata": {},
            "status": "Failure",
            "message": line,
            "reason": "Forbidden",
            "details": {
                "name": "web",
                "kind": "services",
                "causes": [{"reason": "FieldValueForbidden", "message": line, "field": "spec.externalIPs[1]"}],
            },
            "code": 403,
        })
    );

    let two = review("CREATE", with_external_ips(&["198.51.100.1", "203.0.113.9"]));
    let answer = response(&check(&options, "POST", "/validate", &two));
    let status = &answer["status"];
    let causes = status["details"]["causes"].as_array().expect("causes");
    let fields: Vec<&str> = causes.iter().filter_map(|cause| cause["field"].as_str()).collect();
    assert_eq!(fields, ["spec.externalIPs[0]", "spec.externalIPs[1]"]);
    let messages: Vec<&str> = causes.iter().filter_map(|cause| cause["message"].as_str()).collect();
    assert_eq!(status["message"], format!("[{}]", messages.join(", ")));
}

#[test]
fn policy_exemptions_and_users_come_from_the_request() {
    let options = with_policy(EXTERNAL_IPS, None);
    let outside = with_external_ips(&["203.0.113.9"]);
    let admin = review_by(outside.clone(), "kubernetes-admin", &["system:masters"]);
    assert_eq!(response(&check(&options, "POST", "/validate", &admin))["allowed"], true);
    let developer = review_by(outside, "dev", &["system:authenticated"]);
    assert_eq!(response(&check(&options, "POST", "/validate", &developer))["allowed"], false);
}

#[test]
fn policy_warn_and_audit_allow_with_warnings_and_annotations() {
    let options = with_policy(
        "{nodePorts: {forbid: true, action: warn}, loadBalancer: {forbid: true, action: audit}}",
        None,
    );
    let object = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"type": "LoadBalancer", "selector": {"app": "web"}, "ports": [{"port": 80}]}});
    let answer = response(&check(&options, "POST", "/validate", &review("CREATE", object)));
    assert_eq!(answer["allowed"], true, "{answer}");
    assert_eq!(answer.get("status"), None);
    let warnings = answer["warnings"].as_array().expect("warnings");
    assert!(
        warnings.iter().any(|warning| warning
            == "spec.ports[0].nodePort: Forbidden: a LoadBalancer Service allocates node ports; set allocateLoadBalancerNodePorts: false (nodePorts.forbid)"),
        "{answer}"
    );
    let annotations = answer["auditAnnotations"].as_object().expect("auditAnnotations");
    let keys: Vec<&String> = annotations.keys().collect();
    assert_eq!(keys, ["loadBalancer.forbid"], "{answer}");
    assert!(
        annotations["loadBalancer.forbid"]
            .as_str()
            .is_some_and(|message| message.starts_with("spec.type: ")
                && message.ends_with("(loadBalancer.forbid)")),
        "{answer}"
    );
}

#[test]
fn apiserver_errors_come_before_the_policy() {
    // Invalid for the apiserver (port 0) and outside the allowlist: only the 422 is answered.
    let object = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 0}], "externalIPs": ["203.0.113.9"]}});
    let options = with_policy(EXTERNAL_IPS, None);
    let answer = response(&check(&options, "POST", "/validate", &review("CREATE", object)));
    assert_eq!(answer["status"]["code"], 422);
    assert_eq!(answer["status"]["reason"], "Invalid");
    let causes = answer["status"]["details"]["causes"].as_array().expect("causes");
    assert!(causes.iter().all(|cause| cause["field"] != "spec.externalIPs[0]"), "{answer}");
}

#[test]
fn the_profile_sets_the_ranges_validation_and_the_static_band_use() {
    let profile = "\
apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: \"1.33\"
serviceClusterIPRanges: [10.200.0.0/16]
";
    let service = |ip: &str| {
        review(
            "CREATE",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                "spec": {"clusterIP": ip, "selector": {"app": "web"}, "ports": [{"port": 80}]}}),
        )
    };
    let options = with_policy("clusterIP: {explicit: staticBandOnly}", Some(profile));
    let in_band = response(&check(&options, "POST", "/validate", &service("10.200.0.10")));
    assert_eq!(in_band["allowed"], true, "{in_band}");
    let outside = response(&check(&options, "POST", "/validate", &service("10.200.40.7")));
    assert_eq!(outside["status"]["code"], 403, "{outside}");
    assert_eq!(
        outside["status"]["message"],
        "spec.clusterIP: Invalid value: \"10.200.40.7\": explicit cluster IPs must lie in the static band 10.200.0.1-10.200.1.0 (clusterIP.explicit)"
    );
    assert_eq!(outside["status"]["details"]["causes"][0]["reason"], "FieldValueInvalid");
    // Without the profile the newest release's 10.96.0.0/12 is modelled: not in range at all.
    let default_range = response(&check(&plain(), "POST", "/validate", &service("10.200.0.10")));
    assert_eq!(default_range["status"]["code"], 422, "{default_range}");
}

/// What `svclab check` said about one object of a scenario: refused or not, and by what.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Allowed,
    /// The apiserver's 422.
    Invalid,
    /// The policy's 403, with its violation lines.
    Forbidden(Vec<String>),
}

/// The verdict of `svclab check` on the object `(kind, namespace, name)` of a scenario.
fn check_verdict(report: &svclab_core::Report, kind: &str, namespace: &str, name: &str) -> Verdict {
    let errors: Vec<&svclab_core::Diagnostic> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == svclab_core::Severity::Error)
        .filter(|d| {
            d.object
                .as_ref()
                .is_some_and(|o| o.kind == kind && o.namespace == namespace && o.name == name)
        })
        .collect();
    match errors.as_slice() {
        [] => Verdict::Allowed,
        errors if errors.iter().all(|d| d.reason.starts_with("policy:")) => {
            Verdict::Forbidden(errors.iter().map(|d| d.message.clone()).collect())
        }
        _ => Verdict::Invalid,
    }
}

/// The verdict of the webhook's answer.
fn review_verdict(answer: &Value) -> Verdict {
    match (answer["allowed"].as_bool(), answer["status"]["code"].as_u64()) {
        (Some(true), _) => Verdict::Allowed,
        (_, Some(403)) => Verdict::Forbidden(
            answer["status"]["details"]["causes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|cause| cause["message"].as_str().map(str::to_owned))
                .collect(),
        ),
        _ => Verdict::Invalid,
    }
}

#[test]
fn every_policy_example_gets_the_same_verdicts_from_the_webhook_as_from_check() {
    // Each object of the example is sent as its own CREATE review, with the ServicePolicy
    // documents before it as `--policy`, its ClusterProfile as `--profile` and the Services
    // check accepted before it as the inventory.
    let mut files = crate::support::scenario_files(&crate::support::workspace().join("examples"));
    files.extend(crate::support::scenario_files(
        &crate::support::workspace().join("playground-web/examples"),
    ));
    files.retain(|path| {
        path.file_name().is_some_and(|name| name.to_string_lossy().starts_with("policy-"))
    });
    assert!(files.len() >= 11, "policy examples: {files:?}");
    let (mut reviews, mut forbidden) = (0, 0);
    for path in files {
        let text = std::fs::read_to_string(&path).expect("example");
        let report = svclab_core::check(
            &[Input::new("example.yaml", text.as_str())],
            &svclab_core::CheckOptions::default(),
        );
        let mut policies: Vec<String> = Vec::new();
        let mut options =
            AdmissionOptions { inventory: Some(Vec::new()), ..AdmissionOptions::default() };
        for document in serde_norway::Deserializer::from_str(&text) {
            let object: Value = serde::Deserialize::deserialize(document).expect("YAML document");
            let kind = object["kind"].as_str().unwrap_or_default();
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            let namespace = object["metadata"]["namespace"].as_str().unwrap_or("default");
            let group = match kind {
                "ServicePolicy" => {
                    policies.push(object.to_string());
                    options.policy = Some(Input::new("policy.yaml", policies.join("\n---\n")));
                    continue;
                }
                "ClusterProfile" => {
                    options.profile = Some(Input::new("profile.yaml", object.to_string()));
                    continue;
                }
                "Service" => "",
                "EndpointSlice" => "discovery.k8s.io",
                _ => continue,
            };
            let review = json!({
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "request": {
                    "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                    "kind": {"group": group, "version": "v1", "kind": kind},
                    "operation": "CREATE",
                    "namespace": namespace,
                    "name": name,
                    "object": object,
                }
            });
            let answer = response(&check(&options, "POST", "/validate", &review.to_string()));
            let expected = check_verdict(&report, kind, namespace, name);
            assert_eq!(
                review_verdict(&answer),
                expected,
                "{}: {kind} {namespace}/{name}: {answer}",
                path.display()
            );
            if matches!(expected, Verdict::Forbidden(_)) {
                forbidden += 1;
            }
            if kind == "Service" && expected == Verdict::Allowed {
                options.inventory.get_or_insert_default().push(object.to_string());
            }
            reviews += 1;
        }
    }
    assert!(reviews >= 30 && forbidden >= 12, "{reviews} reviews, {forbidden} forbidden");
}

#[test]
fn tls_certificates() {
    use svclab_host::{TlsConfig, TlsError};
    let (cert, key) = (Path::new("data/tls/cert.pem"), Path::new("data/tls/key.pem"));
    TlsConfig::load(cert, key).expect("the test pair loads");
    let err = TlsConfig::load(cert, cert).expect_err("a certificate is not a key");
    assert!(matches!(err, TlsError::Pem { .. }), "{err:?}");
    let err = TlsConfig::load(key, key).expect_err("a key is not a certificate");
    assert_eq!(err, TlsError::NoCertificate(key.to_path_buf()));
    let err = TlsConfig::load(Path::new("data/tls/missing.pem"), key).expect_err("missing");
    assert!(err.to_string().starts_with("cannot read \"data/tls/missing.pem\": "), "{err}");
}
