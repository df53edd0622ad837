//! The gateways in their real place: kubectl → Envoy or Traefik with svclab's guest →
//! `kubectl proxy` (the plain-HTTP upstream `deploy/envoy` and `deploy/traefik` are written
//! for) → a real kube-apiserver and etcd of the newest release, built from their Go modules
//! (`svclab_oracle::cluster`). A refusal reaches kubectl as svclab words it and nothing is
//! stored; an allowed write is stored (read back past the gateway); other API traffic passes
//! untouched.

use std::path::{Path, PathBuf};

use svclab_oracle::cluster::blackbox::Proxy;
use svclab_oracle::cluster::{self, ControlPlane, Settings};

use super::config;
use super::host::{Gateway, Kind};
use super::kubectl::{FORBIDDEN, INVALID, VALID, kubectl, svclab_lines};
use crate::support::workspace;

fn run(kind: Kind) {
    let dir: PathBuf =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("gateway-cluster-{kind:?}"));
    let binaries = cluster::newest(&workspace(), &svclab_tests::node::target_dir())
        .unwrap_or_else(|err| panic!("{err}"));
    let plane = ControlPlane::start(
        binaries,
        &Settings::from_profile(&serde_json::json!({})),
        &dir.join("control-plane"),
    )
    .unwrap_or_else(|err| panic!("{err}"));
    let proxy = Proxy::start(&plane).unwrap_or_else(|err| panic!("{err}"));
    let gateway = Gateway::start(kind, proxy.port, &config().to_string());
    let server = format!("http://127.0.0.1:{}", gateway.port);
    let home = dir.join("home");
    std::fs::create_dir_all(&home).expect("kubectl home");
    let stored = |name: &str| {
        plane
            .kubectl()
            .args(["get", "service", name, "-o", "name"])
            .output()
            .is_ok_and(|o| o.status.success())
    };

    // Refused by kube-apiserver's validation, judged by the gateway: kubectl prints what
    // svclab check prints, and nothing is stored.
    let (ok, printed) = kubectl(&server, &home, &["create"], Some(("invalid.yaml", INVALID)));
    assert!(!ok, "{kind:?}: an invalid Service was created: {printed:?}\n{}", gateway.log());
    assert_eq!(printed, svclab_lines(INVALID), "{kind:?}: kubectl and svclab check differ");
    assert!(!stored("web"), "{kind:?}: the refused Service is stored");

    // Allowed: stored in etcd, read back past the gateway.
    let (ok, printed) = kubectl(&server, &home, &["create"], Some(("valid.yaml", VALID)));
    assert!(ok, "{kind:?}: {printed:?}\n{}", gateway.log());
    assert_eq!(printed, svclab_lines(VALID), "{kind:?}: kubectl and svclab check differ");
    assert!(stored("web"), "{kind:?}: the created Service is not stored");

    // Refused by the policy: the 403 reaches kubectl, nothing is stored.
    let (ok, printed) = kubectl(&server, &home, &["create"], Some(("forbidden.yaml", FORBIDDEN)));
    let printed = printed.join("\n");
    assert!(
        !ok && printed.contains("Forbidden") && printed.contains("types.allowed"),
        "{kind:?}: {printed}"
    );
    assert!(!stored("lb"), "{kind:?}: the forbidden Service is stored");

    // Other API traffic passes untouched: reads, and writes of other kinds.
    let (ok, printed) = kubectl(&server, &home, &["get", "services", "-o", "name"], None);
    let printed = printed.join("\n");
    assert!(
        ok && printed.contains("service/web") && printed.contains("service/kubernetes"),
        "{kind:?}: {printed}"
    );
    let (ok, printed) =
        kubectl(&server, &home, &["create", "configmap", "untouched", "--from-literal=a=b"], None);
    assert!(ok, "{kind:?}: a ConfigMap through the gateway: {printed:?}");
    let direct = plane
        .kubectl()
        .args(["get", "configmap", "untouched", "-o", "jsonpath={.data.a}"])
        .output()
        .expect("kubectl");
    assert_eq!(String::from_utf8_lossy(&direct.stdout), "b", "{kind:?}: the ConfigMap as stored");
}

#[test]
fn kubectl_through_envoy_to_a_real_kube_apiserver() {
    run(Kind::Envoy);
}

#[test]
fn kubectl_through_traefik_to_a_real_kube_apiserver() {
    run(Kind::Traefik);
}
