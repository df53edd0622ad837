//! The deployment manifests of `deploy/` pinned to the images of one build, written to
//! `<dist>/deploy/`: the webhook Deployment's image and the Kubewarden ClusterAdmissionPolicy's
//! `module` by their images' digests, Istio's WasmPlugin and Envoy Gateway's
//! EnvoyExtensionPolicy pulling the proxy-wasm image with its `sha256` (the manifest's digest,
//! which both compare with the image they pull). The checked-in files cannot carry the digests: every commit changes them (the
//! images' annotations name the commit), so each build writes its own copies.

use std::path::Path;

use anyhow::{Context, ensure};

use super::VERSION;

/// Where `cargo xtask dist` says the images are pushed (the registry of `artifacthub-pkg.yml`).
const REGISTRY: &str = "registry.example.invalid/svclab";

/// The manifest digests (`sha256:…`) of the images one build wrote.
pub(super) struct Digests {
    pub(super) kubewarden: String,
    pub(super) proxy_wasm: String,
    pub(super) webhook: String,
}

/// Writes the pinned copies.
pub(super) fn write(root: &Path, out: &Path, digests: &Digests) -> anyhow::Result<()> {
    let Digests { kubewarden, proxy_wasm, webhook } = digests;
    let proxy_hex = proxy_wasm.trim_start_matches("sha256:");
    let files: [(&str, Vec<(String, String)>); 4] = [
        (
            "webhook/deployment.yaml",
            vec![(
                "# Build the `svclab` binary (cargo build --release -p svclab-host) into an image of\n          # your registry; it needs nothing but libc.\n          image: svclab:0.1.0".to_owned(),
                format!("# The image `cargo xtask dist` built (target/dist/webhook), by its digest.\n          image: {REGISTRY}/webhook@{webhook}\n          imagePullPolicy: IfNotPresent"),
            )],
        ),
        (
            "kubewarden/cluster-admission-policy.yaml",
            vec![(
                format!("module: registry://{REGISTRY}/service-policy:v{VERSION}"),
                format!("module: registry://{REGISTRY}/service-policy@{kubewarden}"),
            )],
        ),
        (
            "istio/wasmplugin.yaml",
            vec![(
                "# The module as `cargo xtask plugins` builds it, served over HTTPS or pushed as an OCI\n  # image (oci://registry.example/svclab/proxy-wasm:0.1.0). Pin its digest:\n  # sha256sum svclab_plugin_proxy_wasm.wasm\n  url: https://artifacts.example/svclab/svclab_plugin_proxy_wasm.wasm\n  # sha256: <digest of the file above>".to_owned(),
                format!("# The image `cargo xtask dist` built (target/dist/proxy-wasm); Istio compares the\n  # digest of the image it pulls with sha256.\n  url: oci://{REGISTRY}/proxy-wasm:{VERSION}\n  sha256: {proxy_hex}"),
            )],
        ),
        (
            "envoy-gateway/envoyextensionpolicy.yaml",
            vec![(
                "type: HTTP\n        http:\n          # The module as `cargo xtask plugins` builds it; pin its digest\n          # (sha256sum svclab_plugin_proxy_wasm.wasm).\n          url: https://artifacts.example/svclab/svclab_plugin_proxy_wasm.wasm\n          # sha256: <digest of the file above>".to_owned(),
                format!("type: Image\n        image:\n          # The image `cargo xtask dist` built (target/dist/proxy-wasm), by its digest.\n          url: {REGISTRY}/proxy-wasm:{VERSION}\n          sha256: {proxy_hex}"),
            )],
        ),
    ];
    for (file, edits) in files {
        let from = root.join("deploy").join(file);
        let mut text = std::fs::read_to_string(&from)
            .with_context(|| format!("reading {}", from.display()))?;
        for (old, new) in edits {
            ensure!(text.contains(&old), "deploy/{file} no longer has {old:?} to pin");
            text = text.replace(&old, &new);
        }
        let to = out.join("deploy").join(file);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let header =
            "# Pinned by `cargo xtask dist` to the images of this build (see SHA256SUMS).\n";
        std::fs::write(&to, format!("{header}{text}"))
            .with_context(|| format!("writing {}", to.display()))?;
    }
    Ok(())
}
