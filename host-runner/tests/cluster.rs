//! `svclab serve` registered for real: a kube-apiserver and etcd of the newest release, built
//! from their Go modules (`oracle/cluster/`, svclab_oracle::cluster), on loopback; the webhook
//! from `deploy/webhook/validatingwebhookconfiguration.yaml` with a loopback URL and the test CA;
//! and Debian's kubectl creating the policy examples' Services. What kubectl prints, what is
//! stored and what the audit log holds must be what svclab's own admission decides
//! (`svclab_core::admit`), as kube-apiserver passes it on: a denial as
//! `admission webhook "services.svclab.dev" denied the request: <message>`, warnings as
//! `Warning:` lines, audit annotations under the webhook's name. Then `failurePolicy` with
//! svclab stopped: `Fail` refuses, `Ignore` lets the object through, and the control plane's
//! namespaces stay writable either way.
//!
//! Needs Go 1.26 and the module proxy (the first build takes minutes, later ones are cached),
//! openssl and kubectl (scripts/setup.d/); without them the test fails and says why.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use svclab_core::{AdmissionOptions, AdmissionRequest, Input, Verdict, admit};
use svclab_oracle::cluster::{self, ControlPlane, Settings};

const WEBHOOK: &str = "services.svclab.dev";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// A control plane of the newest release with kubeadm's ranges, in a folder of its own.
fn control_plane(name: &str) -> ControlPlane {
    let settings = Settings::from_profile(&json!({}));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cluster").join(name);
    // The target directory is the parent of the tests' temporary one.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().map(Path::to_path_buf);
    let binaries = cluster::newest(&workspace(), &target.unwrap_or_default())
        .unwrap_or_else(|err| panic!("{err}"));
    ControlPlane::start(binaries, &settings, &dir).unwrap_or_else(|err| panic!("{err}"))
}

/// `svclab serve` (this package's binary) as its own process, stopped when dropped.
struct Webhook {
    child: Child,
    port: u16,
}

impl Webhook {
    fn start(policy: &Path) -> Webhook {
        let tls = workspace().join("tests/data/tls");
        let mut child = Command::new(env!("CARGO_BIN_EXE_svclab"))
            .args(["serve", "--listen", "127.0.0.1:0", "--tls-cert"])
            .arg(tls.join("cert.pem"))
            .arg("--tls-key")
            .arg(tls.join("key.pem"))
            .arg("--policy")
            .arg(policy)
            .arg("--cache-dir")
            .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("svclab-plugin-cache"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("svclab starts");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = std::io::BufReader::new(stderr).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        let port = first
            .split_once("https://127.0.0.1:")
            .and_then(|(_, rest)| rest.split_once('/'))
            .and_then(|(port, _)| port.parse().ok())
            .unwrap_or_else(|| panic!("no address in svclab serve's first line: {first:?}"));
        std::thread::spawn(move || lines.map_while(Result::ok).for_each(drop));
        Webhook { child, port }
    }
}

impl Drop for Webhook {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// kubectl's result: success, and stdout and stderr together.
struct Kubectl {
    ok: bool,
    text: String,
}

fn kubectl(plane: &ControlPlane, args: &[&str], stdin: &str) -> Kubectl {
    let mut child = plane
        .kubectl()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl is on PATH (Debian's kubernetes-client; scripts/setup.d/45-gateways.sh)");
    use std::io::Write as _;
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("write stdin");
    let output = child.wait_with_output().expect("kubectl runs");
    Kubectl {
        ok: output.status.success(),
        text: format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

/// The ValidatingWebhookConfiguration of `deploy/webhook/`, pointed at `port` on loopback with
/// the test certificate as its CA bundle, with `failure_policy`.
fn registration(port: u16, failure_policy: &str) -> String {
    let path = workspace().join("deploy/webhook/validatingwebhookconfiguration.yaml");
    let text = std::fs::read_to_string(&path).expect("the webhook's registration");
    let mut config: Value = serde_norway::from_str(&text).expect("YAML");
    let cert = std::fs::read(workspace().join("tests/data/tls/cert.pem")).expect("test cert");
    config["metadata"] = json!({"name": "svclab-webhook"});
    let hook = &mut config["webhooks"][0];
    assert_eq!(hook["name"], WEBHOOK, "{}: the webhook's name", path.display());
    hook["clientConfig"] = json!({
        "url": format!("https://127.0.0.1:{port}/validate"),
        "caBundle": data_encoding::BASE64.encode(&cert),
    });
    hook["failurePolicy"] = json!(failure_policy);
    config.to_string()
}

/// Applies the registration and waits until kube-apiserver calls the webhook: a create of
/// `probe` (which the policy denies, or which must fail when svclab is stopped) is refused by
/// the webhook. A probe stored before the registration reached kube-apiserver's informers is
/// deleted and tried again. (Not a server-side dry run: at v1.37.2 one of a Service without a
/// clusterIP fails on its own, "failed to allocate IP 10.96.0.0: the provided network does not
/// match the current range".)
fn register(plane: &ControlPlane, port: u16, failure_policy: &str, probe: &Value) {
    let applied = kubectl(plane, &["apply", "-f", "-"], &registration(port, failure_policy));
    assert!(applied.ok, "registering the webhook: {}", applied.text);
    let name = probe["metadata"]["name"].as_str().unwrap_or_default();
    let namespace = probe["metadata"]["namespace"].as_str().unwrap_or("default");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let created = kubectl(plane, &["create", "-f", "-"], &probe.to_string());
        if !created.ok && created.text.contains(WEBHOOK) {
            return;
        }
        assert!(created.ok, "the probe is refused, not by the webhook: {}", created.text);
        kubectl(plane, &["delete", "service", "-n", namespace, name], "");
        assert!(Instant::now() < deadline, "the webhook is not called after 30 s");
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The documents of a multi-document YAML file as JSON values.
fn documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("example");
    text.split("\n---")
        .filter_map(|doc| serde_norway::from_str::<Value>(doc).ok())
        .filter(Value::is_object)
        .collect()
}

/// What svclab's admission decides for a create of `service` under `policy`.
fn verdict(policy: &str, service: &Value, namespace: &str) -> Verdict {
    let options = AdmissionOptions {
        policy: Some(Input::new("policy.yaml", policy.to_owned())),
        ..AdmissionOptions::default()
    };
    let request = AdmissionRequest {
        kind: "Service".into(),
        operation: "CREATE".into(),
        namespace: namespace.into(),
        object: Some(service.to_string()),
        ..AdmissionRequest::default()
    };
    admit(&request, &options).expect("svclab decides")
}

/// The audit events of the create of `namespace/name`, from kube-apiserver's audit log.
fn audit_annotations(plane: &ControlPlane, namespace: &str, name: &str) -> Vec<Value> {
    let log = std::fs::read_to_string(plane.dir.join("audit.log")).unwrap_or_default();
    log.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| {
            event["verb"] == "create"
                && event["stage"] == "ResponseComplete"
                && event["objectRef"]["namespace"] == namespace
                && event["objectRef"]["name"] == name
                && event["annotations"].is_object()
        })
        .map(|event| event["annotations"].clone())
        .collect()
}

/// Every policy example's Services through kube-apiserver with the webhook: each one denied,
/// stored, warned about and annotated exactly as svclab's admission decides.
#[test]
fn the_policy_examples_through_a_real_kube_apiserver() {
    let plane = control_plane("webhook-examples");
    let dir = plane.dir.clone();
    let mut examples: Vec<PathBuf> = std::fs::read_dir(workspace().join("examples"))
        .expect("examples")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("policy-")))
        .collect();
    examples.sort();
    assert!(examples.len() >= 5, "the policy examples: {examples:?}");
    let (mut denied, mut stored, mut warned, mut annotated) = (0, 0, 0, 0);
    for example in &examples {
        let docs = documents(example);
        let policies: Vec<String> =
            docs.iter().filter(|d| d["kind"] == "ServicePolicy").map(Value::to_string).collect();
        assert!(!policies.is_empty(), "{}: a ServicePolicy", example.display());
        let policy_text = policies.join("\n---\n");
        let policy_file = dir.join("policy.json");
        std::fs::write(&policy_file, &policy_text).expect("write the policy");
        let webhook = Webhook::start(&policy_file);
        // A probe every policy example denies or lets through, with a dry run: the webhook is
        // called once the registration has reached kube-apiserver's informers.
        let probe = json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "probe", "namespace": "default"},
            "spec": {"type": "LoadBalancer", "loadBalancerSourceRanges": ["0.0.0.0/0"],
                     "externalIPs": ["203.0.113.9"], "ports": [{"port": 22}]}});
        if verdict(&policy_text, &probe, "default").allowed {
            // selector.uniqueInNamespace alone: nothing a single object can do is denied at
            // admission (the rule needs the other Services and is skipped).
            kubectl(&plane, &["apply", "-f", "-"], &registration(webhook.port, "Fail"));
            std::thread::sleep(Duration::from_secs(2));
        } else {
            register(&plane, webhook.port, "Fail", &probe);
        }
        for service in docs.iter().filter(|d| d["kind"] == "Service") {
            let name = service["metadata"]["name"].as_str().unwrap_or_default();
            let namespace = service["metadata"]["namespace"].as_str().unwrap_or("default");
            kubectl(&plane, &["create", "namespace", namespace], "");
            let mut object = service.clone();
            object["metadata"]["namespace"] = json!(namespace);
            let expected = verdict(&policy_text, &object, namespace);
            let created = kubectl(&plane, &["create", "-f", "-"], &object.to_string());
            let what = format!("{}: Service {namespace}/{name}", example.display());
            let warnings: Vec<&str> =
                created.text.lines().filter_map(|l| l.strip_prefix("Warning: ")).collect();
            let policy_warnings: Vec<&str> =
                warnings.iter().copied().filter(|w| w.ends_with(')')).collect();
            let expected_warnings: Vec<&str> =
                expected.warnings.iter().map(String::as_str).filter(|w| w.ends_with(')')).collect();
            assert_eq!(policy_warnings, expected_warnings, "{what}: warnings\n{}", created.text);
            warned += expected_warnings.len();
            if expected.allowed {
                assert!(
                    created.ok,
                    "{what}: svclab allows it, kube-apiserver refused: {}",
                    created.text
                );
                let get =
                    kubectl(&plane, &["get", "service", "-n", namespace, name, "-o", "name"], "");
                assert_eq!(get.text.trim(), format!("service/{name}"), "{what}: stored");
                stored += 1;
                if !expected.audit_annotations.is_empty() {
                    let events = audit_annotations(&plane, namespace, name);
                    for (key, value) in &expected.audit_annotations {
                        // kube-apiserver prefixes a webhook's audit annotations with its name.
                        let key = format!("{WEBHOOK}/{key}");
                        assert!(
                            events.iter().any(|a| a[&key] == json!(value)),
                            "{what}: audit annotation {key}={value:?} not in {events:?}"
                        );
                        annotated += 1;
                    }
                }
            } else {
                let message = expected.message.clone().unwrap_or_default();
                let line = format!(
                    "Error from server (Forbidden): error when creating \"STDIN\": admission webhook \"{WEBHOOK}\" denied the request: {message}"
                );
                assert!(!created.ok, "{what}: svclab denies it, kube-apiserver stored it");
                assert!(
                    created.text.lines().any(|l| l == line),
                    "{what}: kubectl should print\n{line}\nit printed\n{}",
                    created.text
                );
                let get = kubectl(&plane, &["get", "service", "-n", namespace, name], "");
                assert!(!get.ok, "{what}: a denied Service is not stored");
                denied += 1;
            }
        }
        kubectl(&plane, &["delete", "validatingwebhookconfiguration", "svclab-webhook"], "");
        kubectl(
            &plane,
            &[
                "delete",
                "services",
                "--all",
                "--all-namespaces",
                "--field-selector=metadata.name!=kubernetes",
            ],
            "",
        );
    }
    assert!(
        denied >= 5 && stored >= 5 && warned >= 1 && annotated >= 1,
        "the examples exercise denials ({denied}), stored objects ({stored}), warnings ({warned}) and audit annotations ({annotated})"
    );
}

/// svclab stopped: with `failurePolicy: Fail` kube-apiserver refuses every Service it would
/// have sent (and says why), with `Ignore` it stores them and notes the failed-open call in
/// the audit log; `kube-system` is outside the webhook's namespaceSelector either way.
#[test]
fn failure_policy_with_svclab_stopped() {
    let plane = control_plane("webhook-stopped");
    let policy = plane.dir.join("policy.json");
    std::fs::write(&policy, r#"{"nodePorts": {"forbid": true}}"#).expect("policy");
    let webhook = Webhook::start(&policy);
    let port = webhook.port;
    let nodeport = |name: &str, namespace: &str| {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace},
               "spec": {"type": "NodePort", "ports": [{"port": 80}]}})
    };
    register(&plane, port, "Fail", &nodeport("probe", "default"));
    drop(webhook);

    let refused = kubectl(&plane, &["create", "-f", "-"], &nodeport("web", "default").to_string());
    assert!(!refused.ok, "Fail with svclab stopped stores nothing: {}", refused.text);
    let calling = format!("failed calling webhook \"{WEBHOOK}\"");
    assert!(
        refused.text.contains(&calling) && refused.text.contains("connection refused"),
        "kube-apiserver says the webhook could not be called: {}",
        refused.text
    );
    let system =
        kubectl(&plane, &["create", "-f", "-"], &nodeport("web", "kube-system").to_string());
    assert!(system.ok, "kube-system is outside the namespaceSelector: {}", system.text);

    kubectl(&plane, &["apply", "-f", "-"], &registration(port, "Ignore"));
    let deadline = Instant::now() + Duration::from_secs(30);
    let stored = loop {
        let attempt =
            kubectl(&plane, &["create", "-f", "-"], &nodeport("web", "default").to_string());
        if attempt.ok || Instant::now() > deadline {
            break attempt;
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    assert!(stored.ok, "Ignore with svclab stopped stores the object: {}", stored.text);
    let events = audit_annotations(&plane, "default", "web");
    assert!(
        events.iter().any(|a| {
            a.as_object().is_some_and(|m| {
                m.iter().any(|(k, v)| {
                    k.starts_with("failed-open.validating.webhook.admission.k8s.io/")
                        && v.as_str().is_some_and(|v| v.contains(WEBHOOK))
                })
            })
        }),
        "the audit log notes the failed-open call: {events:?}"
    );
}
