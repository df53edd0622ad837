//! A real client: `kubectl create` through each gateway against the recording upstream, and
//! what kubectl prints compared with what `svclab check` prints for the same file.

use std::path::Path;
use std::process::Command;

use super::config;
use super::host::{Gateway, Kind};
use super::upstream::Upstream;
use crate::support::svclab;

pub(super) const INVALID: &str = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n  ports:\n  - port: 0\n    targetPort: 8080\n";
pub(super) const VALID: &str = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n  ports:\n  - port: 80\n    targetPort: 8080\n";
pub(super) const FORBIDDEN: &str = "apiVersion: v1\nkind: Service\nmetadata:\n  name: lb\nspec:\n  type: LoadBalancer\n  ports:\n  - port: 443\n";

/// `kubectl ARGS` against `server` (a gateway, plain HTTP), with `manifest` (file name, text)
/// written into `dir` and given as `-f`: (exit status, stdout + stderr lines).
pub(super) fn kubectl(
    server: &str,
    dir: &Path,
    args: &[&str],
    manifest: Option<(&str, &str)>,
) -> (bool, Vec<String>) {
    let mut command = Command::new("kubectl");
    command.args(args);
    if let Some((name, text)) = manifest {
        let file = dir.join(name);
        std::fs::write(&file, text).expect("write the manifest");
        command.arg("-f").arg(&file);
    }
    command.arg(format!("--server={server}"));
    if manifest.is_some() {
        command.arg("--validate=false");
    }
    let output = command
        .args(["--namespace=default", "--request-timeout=20s"])
        // A fresh HOME: no kubeconfig, and the discovery cache stays in the test directory.
        .env("HOME", dir)
        .env_remove("KUBECONFIG")
        .output()
        .expect("kubectl is on PATH (Debian's kubernetes-client; scripts/setup.d/45-gateways.sh)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text.lines().map(str::to_owned).collect())
}

/// `kubectl create -f FILE` against the gateway: (exit status, stdout + stderr lines).
fn kubectl_create(
    gateway: &Gateway,
    dir: &Path,
    name: &str,
    manifest: &str,
) -> (bool, Vec<String>) {
    let server = format!("http://127.0.0.1:{}", gateway.port);
    kubectl(&server, dir, &["create"], Some((name, manifest)))
}

/// The lines `svclab check` prints about the object (its outcome, warnings and errors),
/// without the allocation tables and compiler-style locations.
pub(super) fn svclab_lines(manifest: &str) -> Vec<String> {
    let run = svclab(&["check", "-"], manifest);
    run.stdout
        .lines()
        .take_while(|line| !line.is_empty())
        .filter(|line| !line.trim_start().starts_with("-->") && !line.starts_with(' '))
        .map(str::to_owned)
        .collect()
}

fn run(kind: Kind) {
    let upstream = Upstream::start();
    let gateway = Gateway::start(kind, upstream.port, &config().to_string());
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("kubectl-{kind:?}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("kubectl directory");

    // Refused by apiserver validation: kubectl prints the Status message as `svclab check`.
    let (ok, printed) = kubectl_create(&gateway, &dir, "invalid.yaml", INVALID);
    assert!(!ok, "{kind:?}: kubectl create of an invalid Service succeeded: {printed:?}");
    let expected = svclab_lines(INVALID);
    assert_eq!(
        expected,
        [
            "The Service \"web\" is invalid: spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"
        ]
    );
    assert_eq!(printed, expected, "{kind:?}: kubectl and svclab check differ\n{}", gateway.log());
    assert!(
        upstream.take().iter().all(|r| r.method == "GET"),
        "{kind:?}: the refused create reached the upstream"
    );

    // Accepted: kubectl reports the creation, like svclab check.
    let (ok, printed) = kubectl_create(&gateway, &dir, "valid.yaml", VALID);
    assert!(ok, "{kind:?}: {printed:?}\n{}", gateway.log());
    assert_eq!(printed, svclab_lines(VALID), "{kind:?}: kubectl and svclab check differ");
    let creates: Vec<_> = upstream.take().into_iter().filter(|r| r.method == "POST").collect();
    assert_eq!(creates.len(), 1, "{kind:?}: {creates:?}");
    assert!(creates[0].path.starts_with("/api/v1/namespaces/default/services"));

    // Refused by the policy: kubectl prints the 403 Status.
    let (ok, printed) = kubectl_create(&gateway, &dir, "forbidden.yaml", FORBIDDEN);
    assert!(!ok, "{kind:?}: {printed:?}");
    assert!(
        printed.iter().any(|line| line.contains("Forbidden") && line.contains("types.allowed")),
        "{kind:?}: {printed:?}"
    );
}

#[test]
fn kubectl_through_envoy_prints_what_svclab_check_prints() {
    run(Kind::Envoy);
}

#[test]
fn kubectl_through_traefik_prints_what_svclab_check_prints() {
    run(Kind::Traefik);
}
