//! The Kubewarden policy's package descriptions, all from its one source of truth,
//! `plugin-wasm/kubewarden/metadata.yml`: the Artifact Hub package (`artifacthub-pkg.yml`, what
//! `kwctl scaffold artifacthub` writes from the metadata and the questions) and the OCI
//! manifest annotations of the published image (the metadata's `io.kubewarden.policy.*` and
//! `io.artifacthub.*` annotations plus the version, as `kwctl annotate` puts the version into
//! the module; policy-evaluator's `constants.rs` names the keys).
//!
//! Shared by `cargo xtask dist` (the release's version, date and digest filled in) and the
//! `deploy::artifacthub_pkg` test of `tests/kubewarden` (which includes this file by path and
//! keeps `deploy/kubewarden/artifacthub-pkg.yml` equal to what it generates without a digest).

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// The policy's name on Artifact Hub and in the registry.
pub(crate) const POLICY_NAME: &str = "svclab-service-policy";

/// The annotation that carries the policy's version.
const VERSION_ANNOTATION: &str = "io.kubewarden.policy.version";

/// What one release fills into the package.
pub(crate) struct Release<'a> {
    pub(crate) version: &'a str,
    /// RFC 3339, what Artifact Hub's `createdAt` requires.
    pub(crate) created_at: &'a str,
    /// The image manifest's digest (`sha256:…`), once the image is built.
    pub(crate) digest: Option<&'a str>,
}

/// `metadata.yml` as JSON.
fn metadata(metadata_yaml: &str) -> Result<Value, String> {
    serde_norway::from_str(metadata_yaml).map_err(|err| format!("metadata.yml is not YAML: {err}"))
}

/// The image manifest's annotations: every string annotation of the metadata, and the version.
pub(crate) fn manifest_annotations(
    metadata_yaml: &str,
    version: &str,
) -> Result<BTreeMap<String, String>, String> {
    let metadata = metadata(metadata_yaml)?;
    let annotations =
        metadata["annotations"].as_object().ok_or("metadata.yml has no annotations")?;
    let mut out: BTreeMap<String, String> = annotations
        .iter()
        .filter_map(|(key, value)| Some((key.clone(), value.as_str()?.to_owned())))
        .collect();
    out.insert(VERSION_ANNOTATION.into(), version.into());
    Ok(out)
}

/// `artifacthub-pkg.yml` for `release`, from the metadata and the UI questions.
pub(crate) fn artifacthub_pkg(
    metadata_yaml: &str,
    questions: &str,
    release: &Release<'_>,
) -> Result<String, String> {
    let metadata = metadata(metadata_yaml)?;
    let annotations = &metadata["annotations"];
    let text = |key: &str| annotations[key].as_str().unwrap_or_default().to_owned();
    let yaml = |value: &Value| serde_norway::to_string(value).unwrap_or_default();
    let version = release.version;
    let image = format!("registry.example.invalid/svclab/service-policy:v{version}");
    let mut package = json!({
        "version": version,
        "name": POLICY_NAME,
        "displayName": text("io.artifacthub.displayName"),
        "createdAt": release.created_at,
        "description": text("io.kubewarden.policy.description"),
        "license": text("io.kubewarden.policy.license"),
        "homeURL": text("io.kubewarden.policy.url"),
        "containersImages": [{"name": "policy", "image": image}],
        "keywords": text("io.artifacthub.keywords").split(", ").collect::<Vec<_>>(),
        "links": [
            {"name": "policy", "url": format!("{}/releases/download/v{version}/svclab-kubewarden.wasm", text("io.kubewarden.policy.source"))},
            {"name": "source", "url": text("io.kubewarden.policy.source")},
        ],
        "install": format!("Apply deploy/kubewarden/cluster-admission-policy.yaml, or:\n\n```console\nkwctl pull registry://{image}\n```\n"),
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
    // Artifact Hub's `digest`: what identifies this version's content (the image's digest).
    if let (Some(digest), Some(map)) = (release.digest, package.as_object_mut()) {
        map.insert("digest".into(), digest.into());
    }
    let by = match release.digest {
        Some(_) => "cargo xtask dist, for the image of the digest below.",
        None => {
            "tests/kubewarden (UPDATE_EXPECT=1 cargo test -p svclab-kubewarden-tests rewrites it)."
        }
    };
    Ok(format!(
        "# Kubewarden Artifact Hub package of the svclab policy, generated from\n\
         # plugin-wasm/kubewarden/metadata.yml and deploy/kubewarden/questions-ui.yml by\n\
         # {by}\n{}",
        yaml(&package)
    ))
}
