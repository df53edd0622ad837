//! Each host's acceptance rules, from the code that pulls and loads the module, with the
//! refusal in the host's own words where the host has them; a rule that is svclab's (a size
//! budget, annotations Artifact Hub reads) says so.
//!
//! - Kubewarden: policy-fetcher pulls `registry://` policies with oci-client's `pull` and the
//!   single accepted layer type `application/vnd.wasm.content.layer.v1+wasm`; oci-client refuses
//!   any other layer (`OciDistributionError::IncompatibleLayerMediaTypeError`, "Incompatible
//!   layer media type: …") and policy-fetcher keeps the first layer only
//!   (`kubewarden/policy-fetcher:src/registry/mod.rs`, `fetch` and `do_push`). policy-server reads
//!   the policy's metadata from the `io.kubewarden.metadata` custom section
//!   (`policy-evaluator:src/constants.rs`).
//! - Istio: `istio/istio:pkg/wasm/imagefetcher.go` `PrepareFetch`: a Docker schema-2 manifest
//!   must end in a `application/vnd.docker.image.rootfs.diff.tar.gzip` layer; otherwise the
//!   "compat" variant (last layer `application/vnd.oci.image.layer.v1.tar+gzip`, holding
//!   `plugin.wasm`) is tried, then the "oci" variant (exactly two layers, one
//!   `application/vnd.module.wasm.content.layer.v1+wasm`), and both failures are reported
//!   together. Envoy then loads a proxy-wasm module, found by its `proxy_abi_version_*` export.
//! - Envoy Gateway: `envoyproxy/gateway:internal/wasm/imagefetcher.go` is Istio's fetcher,
//!   adapted: the same variants, the two failures joined by `errors.Join` (one per line), and
//!   the layer's tar stream read through `io.LimitReader(gr, maxWasmSize)`, 256 MiB.
//! - Traefik: a local plugin is a folder `plugins-local/src/<moduleName>/` with `.traefik.yml`
//!   (the manifest checks of Traefik's plugin loader and catalogue: "unsupported type",
//!   "missing import", "missing DisplayName", "missing Summary", "missing TestData") and, for
//!   `runtime: wasm`, the module at `wasmPath` (default `plugin.wasm`), an http-wasm guest
//!   exporting `handle_request`. Traefik does not pull plugins from OCI registries.

use std::fmt::Write as _;

use serde_json::Value;

use super::{Artifact, Image, archive, module};

/// A host that loads svclab's guests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Host {
    Kubewarden,
    Istio,
    EnvoyGateway,
    Traefik,
}

/// What the host would do with the artifact.
pub(crate) struct Verdict {
    /// Every reason the host would refuse it; empty when it would accept it.
    pub(crate) refusals: Vec<String>,
    /// What was accepted (the module's size and where it came from), for the report.
    pub(crate) summary: String,
}

/// The size svclab keeps every policy-engine and gateway guest under (`MAX_SIZE` of
/// `xtask/src/plugins.rs`, which fails the build past it): not a host's limit, svclab's budget,
/// because policy engines load every policy at start-up (`kubewarden/adm-controller#1818`).
const SIZE_BUDGET: usize = 1_600 * 1024;

const KUBEWARDEN_LAYER: &str = "application/vnd.wasm.content.layer.v1+wasm";
const KUBEWARDEN_CONFIG: &str = "application/vnd.wasm.config.v1+json";
const KUBEWARDEN_METADATA: &str = "io.kubewarden.metadata";
/// The annotations `kwctl scaffold artifacthub` and Artifact Hub read from a policy.
const KUBEWARDEN_ANNOTATIONS: &[&str] = &[
    "io.kubewarden.policy.title",
    "io.kubewarden.policy.version",
    "io.kubewarden.policy.description",
    "io.kubewarden.policy.author",
    "io.kubewarden.policy.url",
    "io.kubewarden.policy.source",
    "io.kubewarden.policy.license",
];
const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
const DOCKER_LAYER: &str = "application/vnd.docker.image.rootfs.diff.tar.gzip";
const OCI_LAYER: &str = "application/vnd.oci.image.layer.v1.tar+gzip";
const MODULE_WASM_LAYER: &str = "application/vnd.module.wasm.content.layer.v1+wasm";

/// Judges `artifact` as `host` would.
pub(crate) fn check(host: Host, artifact: &Artifact) -> Verdict {
    match (host, artifact) {
        (Host::Kubewarden, Artifact::Image(image)) => kubewarden(image),
        (Host::Istio | Host::EnvoyGateway, Artifact::Image(image)) => proxy_wasm(host, image),
        (Host::Traefik, Artifact::TraefikPlugin { manifest, dir }) => traefik(manifest, dir),
        (Host::Traefik, Artifact::Image(_)) => refused(
            "Traefik loads a plugin from its local folder (plugins-local/src/<moduleName>/ with \
             .traefik.yml and the module) or its plugin catalogue, not from an OCI image",
        ),
        (_, Artifact::TraefikPlugin { .. }) => {
            refused("a Traefik plugin folder is not an OCI image: the host pulls images")
        }
    }
}

fn refused(reason: &str) -> Verdict {
    Verdict { refusals: vec![reason.to_owned()], summary: String::new() }
}

fn kubewarden(image: &Image) -> Verdict {
    let mut refusals = Vec::new();
    if image.layers.is_empty() {
        refusals.push("the manifest has no layers: there is no policy to pull".to_owned());
    }
    for layer in &image.layers {
        if layer.media_type != KUBEWARDEN_LAYER {
            refusals.push(format!(
                "Incompatible layer media type: {} (oci-client's pull, which policy-fetcher \
                 calls accepting only {KUBEWARDEN_LAYER})",
                layer.media_type
            ));
        }
    }
    if image.layers.len() > 1 {
        refusals.push(format!(
            "{} layers: policy-fetcher keeps only the first, Kubewarden's format has one",
            image.layers.len()
        ));
    }
    if image.config.media_type != KUBEWARDEN_CONFIG {
        refusals.push(format!(
            "config media type {}: Kubewarden's format (kwctl push) has {KUBEWARDEN_CONFIG}",
            image.config.media_type
        ));
    }
    let mut summary = String::new();
    if let [layer] = image.layers.as_slice()
        && layer.media_type == KUBEWARDEN_LAYER
    {
        let wasm = image.blob(layer);
        summary = format!("{} bytes of WebAssembly in the one layer", wasm.len());
        module_checks(wasm, &mut refusals);
        match module::parse(wasm) {
            Err(err) => refusals.push(format!("the policy is not a waPC core module: {err}")),
            Ok(module) => {
                match module.custom.iter().find(|(name, _)| name == KUBEWARDEN_METADATA) {
                    None => refusals.push(format!(
                        "the module has no {KUBEWARDEN_METADATA} section (kwctl annotate writes \
                         it; policy-server reads the policy's rules and execution mode from it)"
                    )),
                    Some((_, payload)) => metadata_checks(payload, image, &mut refusals),
                }
            }
        }
    }
    for key in KUBEWARDEN_ANNOTATIONS {
        if !image.annotations.contains_key(*key) {
            refusals.push(format!(
                "the manifest lacks the annotation {key} (svclab's rule: Artifact Hub and \
                 kwctl scaffold artifacthub read it)"
            ));
        }
    }
    Verdict { refusals, summary }
}

/// The embedded metadata is JSON with a protocol version, and agrees with the manifest.
fn metadata_checks(payload: &[u8], image: &Image, refusals: &mut Vec<String>) {
    let Ok(metadata) = serde_json::from_slice::<Value>(payload) else {
        refusals.push(format!("the {KUBEWARDEN_METADATA} section is not JSON"));
        return;
    };
    if metadata["protocolVersion"].as_str().is_none() {
        refusals.push(format!("the {KUBEWARDEN_METADATA} section has no protocolVersion"));
    }
    for (key, value) in metadata["annotations"].as_object().into_iter().flatten() {
        if let (Some(module_value), Some(manifest_value)) =
            (value.as_str(), image.annotations.get(key))
            && module_value != manifest_value
        {
            refusals.push(format!(
                "the annotation {key} is {manifest_value:?} on the manifest but \
                 {module_value:?} in the module's metadata"
            ));
        }
    }
}

/// The size budget, common to every guest.
fn module_checks(wasm: &[u8], refusals: &mut Vec<String>) {
    if wasm.len() > SIZE_BUDGET {
        refusals.push(format!(
            "the module is {} bytes, over svclab's budget of {SIZE_BUDGET} for a guest",
            wasm.len()
        ));
    }
}

/// Envoy Gateway's `maxWasmSize`: the most of a compat layer's tar stream it reads.
const ENVOY_GATEWAY_MAX_WASM_SIZE: usize = 256 * 1024 * 1024;

/// Istio's `PrepareFetch` (and Envoy Gateway's copy), then what Envoy needs of the module.
fn proxy_wasm(host: Host, image: &Image) -> Verdict {
    let wasm = if image.media_type == DOCKER_MANIFEST {
        compat(image, DOCKER_LAYER).map_err(|err| {
            format!("could not extract Wasm file from the image as Docker container {err}")
        })
    } else {
        compat(image, OCI_LAYER).or_else(|compat_err| {
            oci_variant(image).map_err(|oci_err| {
                let compat = format!("could not parse as compat variant: {compat_err}");
                let oci = format!("could not parse as oci variant: {oci_err}");
                let prefix = "the given image is in invalid format as an OCI image";
                if host == Host::EnvoyGateway {
                    // errors.Join: one error per line.
                    format!("{prefix}: {compat}\n{oci}")
                } else {
                    // hashicorp/go-multierror's list format, as Istio wraps the two errors.
                    format!("{prefix}: 2 errors occurred:\n\t* {compat}\n\t* {oci}\n\n")
                }
            })
        })
    };
    match wasm {
        Err(reason) => Verdict { refusals: vec![reason], summary: String::new() },
        Ok(wasm) => {
            let mut refusals = Vec::new();
            if host == Host::EnvoyGateway && wasm.len() > ENVOY_GATEWAY_MAX_WASM_SIZE {
                refusals.push(format!(
                    "plugin.wasm is {} bytes: Envoy Gateway reads at most maxWasmSize ({} bytes) \
                     of the layer",
                    wasm.len(),
                    ENVOY_GATEWAY_MAX_WASM_SIZE
                ));
            }
            module_checks(&wasm, &mut refusals);
            match module::parse(&wasm) {
                Err(err) => refusals.push(format!("Envoy cannot load it: {err}")),
                Ok(module) => {
                    if !module.exports.iter().any(|name| name.starts_with("proxy_abi_version_")) {
                        refusals.push(
                            "Envoy cannot load it: the module exports no proxy_abi_version_* \
                             marker (proxy-wasm spec, \"Integration\")"
                                .into(),
                        );
                    }
                }
            }
            Verdict { refusals, summary: format!("{} bytes of proxy-wasm module", wasm.len()) }
        }
    }
}

/// `extractDockerImage` / `extractOCIStandardImage`: the last layer, of `media_type`, a
/// tar+gzip holding `plugin.wasm`.
fn compat(image: &Image, media_type: &str) -> Result<Vec<u8>, String> {
    let layer = image.layers.last().ok_or("number of layers must be greater than zero")?;
    if layer.media_type != media_type {
        return Err(format!("invalid media type {} (expect {media_type})", layer.media_type));
    }
    let tar = archive::gunzip(image.blob(layer)).map_err(|err| {
        format!("could not extract wasm binary: failed to parse layer as tar.gz: {err}")
    })?;
    let files =
        archive::files(&tar).map_err(|err| format!("could not extract wasm binary: {err}"))?;
    // `filepath.Base(h.Name) == "plugin.wasm"`: the first such entry, in any folder.
    files
        .into_iter()
        .find(|(path, _)| path.rsplit('/').next() == Some("plugin.wasm"))
        .map(|(_, bytes)| bytes)
        .ok_or_else(|| "could not extract wasm binary: plugin.wasm not found in the archive".into())
}

/// `extractOCIArtifactImage`: exactly two layers, one of them the raw module.
fn oci_variant(image: &Image) -> Result<Vec<u8>, String> {
    if image.layers.len() != 2 {
        return Err(format!("number of layers must be 2 but got {}", image.layers.len()));
    }
    let layer = image
        .layers
        .iter()
        .find(|layer| layer.media_type == MODULE_WASM_LAYER)
        .ok_or_else(|| format!("could not find the layer of type {MODULE_WASM_LAYER}"))?;
    Ok(image.blob(layer).to_vec())
}

fn traefik(manifest: &Value, dir: &std::path::Path) -> Verdict {
    let text = |key: &str| manifest[key].as_str().unwrap_or_default();
    let mut refusals = Vec::new();
    let wasm_runtime = text("runtime") == "wasm";
    match text("type") {
        "middleware" => {}
        other => refusals.push(format!("unsupported type: {other}")),
    }
    if !wasm_runtime && text("import").is_empty() {
        refusals.push("missing import".into());
    }
    for (key, reason) in [("displayName", "missing DisplayName"), ("summary", "missing Summary")] {
        if text(key).is_empty() {
            refusals.push(reason.into());
        }
    }
    if manifest["testData"].is_null() {
        refusals.push("missing TestData".into());
    }
    let mut summary = String::new();
    if wasm_runtime {
        let wasm_path = match text("wasmPath") {
            "" => "plugin.wasm",
            path => path,
        };
        match std::fs::read(dir.join(wasm_path)) {
            Err(err) => refusals.push(format!("loading binary: {wasm_path}: {err}")),
            Ok(wasm) => {
                module_checks(&wasm, &mut refusals);
                match module::parse(&wasm) {
                    Err(err) => refusals.push(format!("{wasm_path}: {err}")),
                    Ok(module) if !module.exports.iter().any(|name| name == "handle_request") => {
                        refusals.push(format!(
                            "{wasm_path} is not an http-wasm guest: it does not export \
                             handle_request (http-wasm handler ABI)"
                        ));
                    }
                    Ok(_) => {}
                }
                let _ = write!(summary, "{} bytes of http-wasm module at {wasm_path}", wasm.len());
            }
        }
    }
    Verdict { refusals, summary }
}
