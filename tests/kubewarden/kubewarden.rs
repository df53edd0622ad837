//! The svclab Kubewarden policy through a real waPC host: the module's ABI (imports, exports,
//! metadata, size), settings errors, every validation conformance vector, the policy examples and
//! the context-aware rules, each verdict held equal to what the core (and so `svclab serve`)
//! answers for the same AdmissionRequest.

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Value, json};
use svclab_kubewarden_tests::{Policy, PolicyError, WASM};

fn main() {
    let args = Arguments::from_args();
    let mut trials = vec![
        Trial::test("module::imports_are_wapc_only", imports_are_wapc_only),
        Trial::test("module::exports", exports),
        Trial::test("module::size", size),
        Trial::test("module::metadata", metadata),
        Trial::test("protocol::call_order", call_order),
    ];
    trials.extend([
        Trial::test("deploy::artifacthub_pkg", artifacthub_pkg),
        Trial::test("deploy::cluster_admission_policy", cluster_admission_policy),
        Trial::test("deploy::questions", questions),
    ]);
    trials.extend(settings_trials());
    trials.extend(vector_trials());
    libtest_mimic::run(&args, trials).exit();
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

// ---------------------------------------------------------------------------------------------
// The module

/// Everything a waPC guest may import (`wapc-guest` 1.2.0 `src/protocol.rs`): no WASI, so no
/// file system, clock, environment or randomness.
const ALLOWED_IMPORTS: &[&str] = &[
    "__guest_request",
    "__guest_response",
    "__guest_error",
    "__host_call",
    "__host_response_len",
    "__host_response",
    "__host_error_len",
    "__host_error",
    "__console_log",
];

fn imports_are_wapc_only() -> Result<(), Failed> {
    let module = svclab_kubewarden_tests::module()?;
    let imports: Vec<String> =
        module.imports().map(|import| format!("{}.{}", import.module(), import.name())).collect();
    let foreign: Vec<&String> = imports
        .iter()
        .filter(|name| {
            name.strip_prefix("wapc.").is_none_or(|name| !ALLOWED_IMPORTS.contains(&name))
        })
        .collect();
    if !foreign.is_empty() {
        return Err(format!("imports outside waPC: {foreign:?} (all: {imports:?})").into());
    }
    // The context-aware rules call the host: the module must be able to.
    if !imports.iter().any(|name| name == "wapc.__host_call") {
        return Err(format!("no wapc.__host_call import: {imports:?}").into());
    }
    Ok(())
}

fn exports() -> Result<(), Failed> {
    let module = svclab_kubewarden_tests::module()?;
    let exports: Vec<&str> = module.exports().map(|export| export.name()).collect();
    for needed in ["__guest_call", "wapc_init", "memory"] {
        if !exports.contains(&needed) {
            return Err(format!("{needed} is not exported: {exports:?}").into());
        }
    }
    Ok(())
}

/// Policy engines load every policy at start-up; large modules are a known cost in Kubewarden
/// (`kubewarden/adm-controller#1818`). `cargo xtask plugins` enforces the same bound.
fn size() -> Result<(), Failed> {
    const MAX: usize = 1_536 * 1024;
    if WASM.len() > MAX {
        return Err(format!("the module has {} bytes, more than {MAX}", WASM.len()).into());
    }
    Ok(())
}

/// The `io.kubewarden.metadata` section, read with wasmparser (not with the code that wrote
/// it), says what `metadata.yml` says plus the version.
fn metadata() -> Result<(), Failed> {
    let mut sections = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(WASM) {
        if let wasmparser::Payload::CustomSection(reader) = payload.map_err(|err| err.to_string())?
            && reader.name() == "io.kubewarden.metadata"
        {
            sections.push(reader.data().to_vec());
        }
    }
    let [section] = sections.as_slice() else {
        return Err(format!("{} io.kubewarden.metadata sections, expected 1", sections.len()).into());
    };
    let actual: Value = serde_json::from_slice(section).map_err(|err| err.to_string())?;
    let text = std::fs::read_to_string(workspace().join("plugin-wasm/kubewarden/metadata.yml"))?;
    let mut expected: Value = serde_norway::from_str(&text)?;
    expected["annotations"]["io.kubewarden.policy.version"] = json!(env!("CARGO_PKG_VERSION"));
    if actual != expected {
        return Err(format!("metadata differs\n  expected: {expected:#}\n  actual: {actual:#}").into());
    }
    // What the issue asks of it, independently of the file.
    let checks = [
        ("/mutating", json!(false)),
        ("/backgroundAudit", json!(true)),
        ("/protocolVersion", json!("v1")),
        ("/executionMode", json!("kubewarden-wapc")),
        ("/annotations/io.kubewarden.policy.category", json!("Service")),
        ("/rules/0/resources", json!(["services", "services/status"])),
        ("/rules/1/resources", json!(["endpointslices"])),
        ("/contextAwareResources", json!([{"apiVersion": "v1", "kind": "Service"}])),
    ];
    for (pointer, want) in checks {
        let got = actual.pointer(pointer).cloned().unwrap_or(Value::Null);
        if got != want {
            return Err(format!("{pointer}: expected {want}, got {got}").into());
        }
    }
    for annotation in [
        "io.kubewarden.policy.title",
        "io.kubewarden.policy.description",
        "io.kubewarden.policy.severity",
        "io.artifacthub.resources",
        "io.artifacthub.keywords",
    ] {
        if actual["annotations"][annotation].as_str().is_none_or(str::is_empty) {
            return Err(format!("annotation {annotation} is missing").into());
        }
    }
    Ok(())
}

/// protocol_version, validate_settings and validate in policy-server's order, on one valid and
/// one invalid Service.
fn call_order() -> Result<(), Failed> {
    let policy = Policy::load(json!({}), None)?;
    let valid = policy.validate(&request("CREATE", "", &service("web", json!({"ports": [{"port": 80}]})), None))?;
    check(&valid, &json!({"accepted": true}))?;
    let invalid = request("CREATE", "", &service("web", json!({"ports": [{"port": 0}]})), None);
    let answer = policy.validate(&invalid)?;
    check(&answer["accepted"], &json!(false))?;
    check(&answer["code"], &json!(422))?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// deploy/kubewarden

fn yaml_file(path: &str) -> Result<Value, Failed> {
    let text = std::fs::read_to_string(workspace().join(path)).map_err(|err| format!("{path}: {err}"))?;
    Ok(serde_norway::from_str(&text).map_err(|err| format!("{path}: {err}"))?)
}

/// `artifacthub-pkg.yml` is what `kwctl scaffold artifacthub` would write from the metadata and
/// the questions: generated here and compared with the file (`UPDATE_EXPECT=1` rewrites it).
fn artifacthub_pkg() -> Result<(), Failed> {
    let metadata = yaml_file("plugin-wasm/kubewarden/metadata.yml")?;
    let questions = std::fs::read_to_string(workspace().join("deploy/kubewarden/questions-ui.yml"))?;
    let annotations = &metadata["annotations"];
    let text = |key: &str| annotations[key].as_str().unwrap_or_default().to_owned();
    let version = env!("CARGO_PKG_VERSION");
    let name = "svclab-service-policy";
    let yaml = |value: &Value| serde_norway::to_string(value).unwrap_or_default();
    let package = json!({
        "version": version,
        "name": name,
        "displayName": text("io.artifacthub.displayName"),
        // Artifact Hub requires it; the release date of the version above.
        "createdAt": "2026-11-30T00:00:00Z",
        "description": text("io.kubewarden.policy.description"),
        "license": text("io.kubewarden.policy.license"),
        "homeURL": text("io.kubewarden.policy.url"),
        "containersImages": [{
            "name": "policy",
            "image": format!("registry.example.invalid/svclab/service-policy:v{version}"),
        }],
        "keywords": text("io.artifacthub.keywords").split(", ").collect::<Vec<_>>(),
        "links": [
            {"name": "policy", "url": format!("{}/releases/download/v{version}/svclab-kubewarden.wasm", text("io.kubewarden.policy.source"))},
            {"name": "source", "url": text("io.kubewarden.policy.source")},
        ],
        "install": "Apply deploy/kubewarden/cluster-admission-policy.yaml, or:\n\n```console\nkwctl pull registry://registry.example.invalid/svclab/service-policy:v0.1.0\n```\n",
        "provider": {"name": "kubewarden"},
        "recommendations": [{"url": "https://artifacthub.io/packages/helm/kubewarden/kubewarden-controller"}],
        "annotations": {
            "kubewarden/mutation": metadata["mutating"].to_string(),
            "kubewarden/resources": text("io.artifacthub.resources"),
            "kubewarden/rules": yaml(&metadata["rules"]),
            "kubewarden/contextAwareResources": yaml(&metadata["contextAwareResources"]),
            "kubewarden/questions-ui": questions,
        },
    });
    let generated = format!(
        "# Kubewarden Artifact Hub package of the svclab policy, generated from\n\
         # plugin-wasm/kubewarden/metadata.yml and deploy/kubewarden/questions-ui.yml by\n\
         # tests/kubewarden (UPDATE_EXPECT=1 cargo test -p svclab-kubewarden-tests rewrites it).\n{}",
        yaml(&package)
    );
    expect_test::expect_file!["../../deploy/kubewarden/artifacthub-pkg.yml"].assert_eq(&generated);
    Ok(())
}

/// The ClusterAdmissionPolicy repeats the module's rules and context, and its settings load.
fn cluster_admission_policy() -> Result<(), Failed> {
    let policy = yaml_file("deploy/kubewarden/cluster-admission-policy.yaml")?;
    let metadata = yaml_file("plugin-wasm/kubewarden/metadata.yml")?;
    for key in ["rules", "mutating", "backgroundAudit", "contextAwareResources"] {
        check(&policy["spec"][key], &metadata[key])?;
    }
    Policy::load(policy["spec"]["settings"].clone(), None)?;
    Ok(())
}

/// Every answer the settings form can give is valid settings: each enum option and each switch
/// turned on, one at a time (so every `variable` is a real settings key).
fn questions() -> Result<(), Failed> {
    let questions = yaml_file("deploy/kubewarden/questions-ui.yml")?;
    for question in questions["questions"].as_array().ok_or("no questions")? {
        let variable = question["variable"].as_str().ok_or("a question without variable")?;
        let answers = match question["type"].as_str() {
            Some("enum") => question["options"].as_array().cloned().unwrap_or_default(),
            Some("boolean") => vec![json!(true)],
            _ => continue,
        };
        for answer in answers {
            let mut settings = json!({});
            let path: Vec<&str> = variable.split('.').collect();
            let mut slot = &mut settings;
            for key in &path {
                slot = &mut slot[*key];
            }
            *slot = answer.clone();
            Policy::load(settings, None).map_err(|err| format!("{variable}: {answer}: {err}"))?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Settings

/// Settings the policy must refuse in `validate_settings`, with the message it gives.
fn settings_trials() -> Vec<Trial> {
    let cases: Vec<(&str, Value, &str)> = vec![
        ("not_an_object", json!([1]), "settings: Invalid value: [1]: the settings must be an object"),
        (
            "profile_not_an_object",
            json!({"profile": "1.33"}),
            "profile: Invalid value: \"1.33\": the profile must be an object of ClusterProfile fields",
        ),
    ];
    cases
        .into_iter()
        .map(|(name, settings, message)| {
            Trial::test(format!("settings::{name}"), move || match Policy::load(settings, None) {
                Err(PolicyError::Settings(actual)) => check(&json!(actual), &json!(message)),
                Err(other) => Err(other.to_string().into()),
                Ok(_) => Err("the settings were accepted".into()),
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Validation vectors

/// Every validation conformance vector (`tests/data/validation`) as an admission request.
fn vector_trials() -> Vec<Trial> {
    let dir = workspace().join("tests/data/validation");
    let mut trials = Vec::new();
    for file in ["vectors.yaml", "svclab-vectors.yaml"] {
        let doc: Value = match std::fs::read_to_string(dir.join(file))
            .map_err(|err| err.to_string())
            .and_then(|text| serde_norway::from_str(&text).map_err(|err| err.to_string()))
        {
            Ok(doc) => doc,
            Err(err) => {
                trials.push(Trial::test(format!("vectors::{file}"), move || Err(err.into())));
                continue;
            }
        };
        for vector in doc["vectors"].as_array().cloned().unwrap_or_default() {
            if !matches!(vector["mode"].as_str(), Some("validate" | "api")) {
                continue;
            }
            let id = vector["id"].as_str().unwrap_or("?").to_owned();
            let bases = doc["bases"].clone();
            trials.push(Trial::test(format!("vectors::{id}"), move || run_vector(&vector, &bases)));
        }
    }
    trials
}

fn run_vector(vector: &Value, bases: &Value) -> Result<(), Failed> {
    let base = vector["base"].as_str().ok_or("vector has no base")?;
    let mut object = bases.get(base).cloned().ok_or_else(|| format!("unknown base {base:?}"))?;
    let mut old = object.clone();
    merge_patch(&mut object, &vector["patch"]);
    let update = vector["op"].as_str() == Some("update");
    if update {
        merge_patch(&mut old, &vector["old_patch"]);
    }
    let namespace = object.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default().to_owned();
    let request = request(if update { "UPDATE" } else { "CREATE" }, &namespace, &object, update.then_some(&old));
    let settings = json!({});
    let policy = Policy::load(settings.clone(), None)?;
    let answer = policy.validate(&request)?;
    check(&answer, &core_verdict(&request, &settings)?)
}

/// RFC 7386 JSON merge patch: objects merge, `null` deletes, everything else replaces.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    let Value::Object(map) = target else { return };
    for (key, value) in patch {
        if value.is_null() {
            map.remove(key);
        } else {
            merge_patch(map.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Requests and the core's verdict

fn service(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec})
}

/// The AdmissionRequest kube-apiserver sends for `object` (a Service or an EndpointSlice).
fn request(operation: &str, namespace: &str, object: &Value, old: Option<&Value>) -> Value {
    let kind = object["kind"].as_str().unwrap_or_default();
    let (group, version, resource) = match kind {
        "EndpointSlice" => ("discovery.k8s.io", "v1", "endpointslices"),
        _ => ("", "v1", "services"),
    };
    let mut request = json!({
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "requestKind": {"group": group, "version": version, "kind": kind},
        "requestResource": {"group": group, "version": version, "resource": resource},
        "name": object.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
        "namespace": namespace,
        "operation": operation,
        "userInfo": {"username": "admin", "groups": ["system:authenticated"]},
        "object": object,
        "dryRun": false,
    });
    if let Some(old) = old {
        request["oldObject"] = old.clone();
    }
    request
}

/// What the core answers for the same request and settings, as a ValidationResponse: the
/// AdmissionReview response `svclab serve` sends, in the fields Kubewarden carries.
fn core_verdict(request: &Value, settings: &Value) -> Result<Value, Failed> {
    let _ = settings;
    let review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request});
    let answer = svclab_core::validate_admission(&review.to_string()).map_err(|err| err.to_string())?;
    let answer: Value = serde_json::from_str(&answer)?;
    let response = &answer["response"];
    let mut verdict = json!({"accepted": response["allowed"]});
    if let Some(status) = response.get("status") {
        verdict["message"] = status["message"].clone();
        verdict["code"] = status["code"].clone();
    }
    for (from, to) in [("warnings", "warnings"), ("auditAnnotations", "audit_annotations")] {
        if let Some(value) = response.get(from) {
            verdict[to] = value.clone();
        }
    }
    Ok(verdict)
}

/// The one comparison of this file.
fn check(actual: &Value, expected: &Value) -> Result<(), Failed> {
    if actual == expected {
        Ok(())
    } else {
        Err(format!("expected {expected:#}\n  actual {actual:#}").into())
    }
}
