//! The deployment manifests of `deploy/` pinned to the images of one build, written to
//! `<dist>/deploy/`: the Kubewarden ClusterAdmissionPolicy's `module` by the policy image's
//! digest, Istio's WasmPlugin and Envoy Gateway's EnvoyExtensionPolicy pulling the proxy-wasm
//! image with its `sha256` (the manifest's digest, which both compare with the image they
//! pull). The checked-in files cannot carry the digests: every commit changes them (the
//! images' annotations name the commit), so each build writes its own copies.

use std::path::Path;

use anyhow::{Context, ensure};

use super::VERSION;

/// Where `cargo xtask dist` says the images are pushed (the registry of `artifacthub-pkg.yml`).
const REGISTRY: &str = "registry.example.invalid/svclab";

/// Writes the pinned copies; `kubewarden` and `proxy_wasm` are manifest digests (`sha256:…`).
pub(super) fn write(
    root: &Path,
    out: &Path,
    kubewarden: &str,
    proxy_wasm: &str,
) -> anyhow::Result<()> {
    let proxy_hex = proxy_wasm.trim_start_matches("sha256:");
    let files: [(&str, Vec<(String, String)>); 3] = [
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
