//! Parity: every validation conformance vector sent through each gateway as the create or
//! update it describes gets the native core's verdict, status code and bytes.

use serde_json::{Value, json};
use svclab_tests::vectors;

use super::host::{Gateway, Kind};
use super::upstream::Upstream;

/// A path segment with everything but RFC 3986 unreserved characters percent-encoded.
fn segment(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// (id, method, path, body) of every Service and EndpointSlice vector.
pub(super) fn requests() -> Vec<(String, &'static str, String, Vec<u8>)> {
    let dir = svclab_tests::data_dir().join("validation");
    let mut files = vec![dir.join("vectors.yaml"), dir.join("svclab-vectors.yaml")];
    if let Some(shared) = svclab_tests::conformance_dir() {
        for name in ["validation.yaml", "vectors.yaml"] {
            let path = shared.join(name);
            if path.is_file() {
                files.push(path);
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut requests = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|err| panic!("{}: {err}", file.display()));
        let Ok(doc) = serde_norway::from_str::<Value>(&text) else { continue };
        for vector in doc["vectors"].as_array().cloned().unwrap_or_default() {
            let id = vector["id"].as_str().unwrap_or("?").to_owned();
            let Ok(vectors::Objects { object, .. }) = vectors::objects(&vector, &doc["bases"])
            else {
                continue;
            };
            if !seen.insert(id.clone()) {
                continue;
            }
            let namespace = object["metadata"]["namespace"].as_str().unwrap_or("default");
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            let collection = match object["kind"].as_str() {
                Some("Service") => format!("/api/v1/namespaces/{}/services", segment(namespace)),
                Some("EndpointSlice") => format!(
                    "/apis/discovery.k8s.io/v1/namespaces/{}/endpointslices",
                    segment(namespace)
                ),
                _ => continue,
            };
            let (method, path) = if vector["op"].as_str() == Some("update") {
                ("PUT", format!("{collection}/{}", segment(name)))
            } else {
                ("POST", collection)
            };
            requests.push((id, method, path, object.to_string().into_bytes()));
        }
    }
    requests
}

fn run(kind: Kind) {
    let requests = requests();
    assert!(requests.len() >= 90, "only {} vectors found", requests.len());
    let upstream = Upstream::start();
    let config = json!({});
    let gateway = Gateway::start(kind, upstream.port, &config.to_string());
    let (mut refused, mut passed) = (0, 0);
    for (id, method, path, body) in &requests {
        let response = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            super::check(&gateway, &upstream, &config, method, path, body)
        }))
        .unwrap_or_else(|_| panic!("vector {id} ({method} {path})"));
        if response.status >= 400 { refused += 1 } else { passed += 1 }
    }
    // Both outcomes are exercised.
    assert!(refused > 30 && passed > 10, "{refused} refused, {passed} passed");
}

/// An example file's name, its policy settings and its Service creates (path, body).
type PolicyExample = (String, Value, Vec<(String, Vec<u8>)>);

/// Every `examples/policy-*.yaml`.
fn policy_examples() -> Vec<PolicyExample> {
    let dir = crate::support::workspace().join("examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples/")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("policy-"))
        })
        .collect();
    files.sort();
    let mut examples = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("example");
        let (mut settings, mut creates) = (Value::Null, Vec::new());
        for document in serde_norway::Deserializer::from_str(&text) {
            let Ok(object) = <Value as serde::Deserialize>::deserialize(document) else { continue };
            match object["kind"].as_str() {
                Some("ServicePolicy") => settings = object["spec"].clone(),
                Some("Service") => {
                    let namespace = object["metadata"]["namespace"].as_str().unwrap_or("default");
                    let path = format!("/api/v1/namespaces/{}/services", segment(namespace));
                    creates.push((path, object.to_string().into_bytes()));
                }
                _ => {}
            }
        }
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        examples.push((name, settings, creates));
    }
    examples
}

/// Every policy example through the gateway with its settings as the plugin's `policy`.
fn run_policy_examples(kind: Kind) {
    let examples = policy_examples();
    assert!(examples.len() >= 3, "only {} policy examples", examples.len());
    let (mut refused, mut passed) = (0, 0);
    for (name, settings, creates) in examples {
        let upstream = Upstream::start();
        let config = json!({ "policy": settings });
        let gateway = Gateway::start(kind, upstream.port, &config.to_string());
        for (path, body) in &creates {
            let response = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                super::check(&gateway, &upstream, &config, "POST", path, body)
            }))
            .unwrap_or_else(|_| panic!("{name}: POST {path}"));
            if response.status == 403 { refused += 1 } else { passed += 1 }
        }
    }
    assert!(refused > 0 && passed > 0, "{refused} refused, {passed} passed");
}

#[test]
fn envoy_matches_native_on_the_policy_examples() {
    run_policy_examples(Kind::Envoy);
}

#[test]
fn traefik_matches_native_on_the_policy_examples() {
    run_policy_examples(Kind::Traefik);
}

#[test]
fn envoy_matches_native_on_every_validation_vector() {
    run(Kind::Envoy);
}

#[test]
fn traefik_matches_native_on_every_validation_vector() {
    run(Kind::Traefik);
}
