//! The admission webhook's routes, driven in-process (no sockets) through both engines. The
//! server itself (connections, TLS, HTTP/2, SIGTERM) is tested over sockets in
//! `host-runner/tests/webhook.rs`.

use std::path::Path;

use serde_json::{Value, json};
use svclab_host::{Engine, FailurePolicy, HttpResponse, route};

use crate::support::plugin;

/// Sends `method path body` to the webhook on both engines; checks they answer identically.
#[track_caller]
fn check(method: &str, path: &str, body: &str) -> HttpResponse {
    let native = route(&Engine::Native, FailurePolicy::Fail, method, path, body);
    let plugged = route(plugin(), FailurePolicy::Fail, method, path, body);
    assert_eq!(native, plugged, "{method} {path}: native and plugin answer differently");
    plugged
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
        check("GET", "/healthz", ""),
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
    let response = response(&check("POST", "/validate", &review("CREATE", object)));
    assert_eq!(response["allowed"], true);
    assert_eq!(response.get("status"), None);
}

#[test]
fn invalid_service_is_denied_like_the_apiserver() {
    let object = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 0}]}});
    let response = response(&check("POST", "/validate", &review("CREATE", object)));
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
    assert_eq!(response(&check("POST", "/validate", &body.to_string()))["allowed"], true);
    body["request"]["operation"] = json!("CREATE");
    body["request"]["kind"] = json!({"group": "apps", "version": "v1", "kind": "Deployment"});
    assert_eq!(response(&check("POST", "/validate", &body.to_string()))["allowed"], true);
}

#[test]
fn malformed_reviews_are_bad_requests() {
    let answer = check("POST", "/validate", "not json");
    assert_eq!(answer.status, 400);
    assert!(answer.body.starts_with("the AdmissionReview is not JSON"), "{}", answer.body);
    let answer = check("POST", "/validate", r#"{"apiVersion":"v1","kind":"Status"}"#);
    assert_eq!(answer.status, 400);
}

#[test]
fn unknown_routes() {
    assert_eq!(check("GET", "/nope", "").status, 404);
    assert_eq!(check("GET", "/validate", "").status, 405);
}

#[test]
fn engine_failures_follow_the_failure_policy() {
    // Enough fuel to load (the ABI check) but not to validate a Service.
    let limits = svclab_host::Limits { fuel: 20_000, ..svclab_host::Limits::default() };
    let starved =
        Engine::embedded_plugin(limits, &svclab_host::CacheDir::at(crate::support::cache_dir()))
            .expect("loads on a small budget");
    let object = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 80}]}});
    let body = review("CREATE", object);

    let denied = response(&route(&starved, FailurePolicy::Fail, "POST", "/validate", &body));
    assert_eq!(denied["allowed"], false);
    assert_eq!(denied["status"]["code"], 500);
    assert_eq!(
        denied["status"]["message"],
        "svclab policy failed: plugin ran out of fuel (budget 20000; raise it with --fuel)"
    );

    let allowed = response(&route(&starved, FailurePolicy::Ignore, "POST", "/validate", &body));
    assert_eq!(allowed["allowed"], true);
    assert_eq!(allowed.get("status"), None);
    assert_eq!(
        allowed["warnings"][0],
        "svclab policy failed and was ignored: plugin ran out of fuel (budget 20000; raise it with --fuel)"
    );
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
