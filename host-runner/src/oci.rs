//! What a Wasm host would make of an artifact before it runs anything: an image pulled from a
//! registry (`oci/registry.rs`) or an OCI image layout (OCI image-spec `image-layout.md`: a
//! folder, or the same packed in a tar as `oci-archive`), read and verified blob by blob, or
//! Traefik's local plugin folder, judged by the rules of
//! Kubewarden, Istio, Envoy Gateway or Traefik (`oci/hosts.rs`), each refusal worded as the
//! host words it. `svclab oci check` (`commands/oci.rs`) prints the verdict.
//!
//! **Architecture Invariant:** this is the host side's; core (sans-I/O Service networking)
//! knows nothing of OCI.

mod archive;
mod hosts;
mod module;
mod registry;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest as _, Sha256};

pub(crate) use hosts::{Host, check};
pub(crate) use registry::{PullOptions, Reference, pull};

/// Why an artifact could not be read at all (as opposed to read and refused).
#[derive(Debug)]
#[non_exhaustive]
pub(crate) enum LayoutError {
    /// A file of the layout could not be read.
    Read { path: PathBuf, source: std::io::Error },
    /// The folder is neither an OCI image layout nor a Traefik plugin.
    Unknown(PathBuf),
    /// A part of the layout is malformed.
    Invalid(String),
    /// A registry did not give what was asked of it.
    Registry { url: String, reason: String },
}

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Read { path, .. } => write!(f, "cannot read {}", path.display()),
            Self::Unknown(path) => write!(
                f,
                "{} is neither an OCI image layout (index.json, oci-layout, blobs/) nor a \
                 Traefik plugin folder (.traefik.yml)",
                path.display()
            ),
            Self::Invalid(message) => f.write_str(message),
            Self::Registry { url, reason } => write!(f, "GET {url}: {reason}"),
        }
    }
}

impl std::error::Error for LayoutError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Read { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// An artifact as a host sees it.
pub(crate) enum Artifact {
    Image(Image),
    /// Traefik's local plugin folder: its `.traefik.yml` (as JSON) and folder.
    TraefikPlugin {
        manifest: Value,
        dir: PathBuf,
    },
}

/// A descriptor of a manifest (OCI image-spec `descriptor.md`).
#[derive(Debug, Clone)]
pub(crate) struct Descriptor {
    pub(crate) media_type: String,
    pub(crate) digest: String,
    pub(crate) size: u64,
}

/// One image of a layout: its manifest and the blobs it names, each verified against its
/// descriptor's digest and size.
pub(crate) struct Image {
    pub(crate) manifest_digest: String,
    /// The manifest's own `mediaType` (empty when absent, as OCI allows and Docker never does).
    pub(crate) media_type: String,
    pub(crate) config: Descriptor,
    pub(crate) layers: Vec<Descriptor>,
    pub(crate) annotations: BTreeMap<String, String>,
    blobs: BTreeMap<String, Vec<u8>>,
}

impl Image {
    /// The bytes of a blob the manifest names.
    pub(crate) fn blob(&self, descriptor: &Descriptor) -> &[u8] {
        self.blobs.get(&descriptor.digest).map_or(&[], Vec::as_slice)
    }
}

/// Reads the artifact at `path`: a layout folder, an `oci-archive` tar, or a Traefik plugin.
pub(crate) fn read(path: &Path) -> Result<Artifact, LayoutError> {
    let read_file = |file: &Path| {
        std::fs::read(file).map_err(|source| LayoutError::Read { path: file.to_owned(), source })
    };
    if path.is_file() {
        let tar = read_file(path)?;
        let files = archive::files(&tar).map_err(LayoutError::Invalid)?;
        return image(|name| {
            files.get(name).cloned().ok_or_else(|| {
                LayoutError::Invalid(format!("{name} is missing from {}", path.display()))
            })
        });
    }
    if path.join(".traefik.yml").is_file() {
        let text = read_file(&path.join(".traefik.yml"))?;
        let manifest = serde_norway::from_slice(&text)
            .map_err(|err| LayoutError::Invalid(format!(".traefik.yml is not YAML: {err}")))?;
        return Ok(Artifact::TraefikPlugin { manifest, dir: path.to_owned() });
    }
    if !path.join("index.json").is_file() {
        return Err(LayoutError::Unknown(path.to_owned()));
    }
    image(|name| read_file(&path.join(name)))
}

/// The image the layout's `index.json` names, its files read through `file`.
fn image(file: impl Fn(&str) -> Result<Vec<u8>, LayoutError>) -> Result<Artifact, LayoutError> {
    let layout = json("oci-layout", &file("oci-layout")?)?;
    if layout["imageLayoutVersion"] != "1.0.0" {
        return Err(LayoutError::Invalid(
            "oci-layout has no imageLayoutVersion 1.0.0 (image-spec image-layout.md)".into(),
        ));
    }
    let index = json("index.json", &file("index.json")?)?;
    let manifests = index["manifests"].as_array().map_or(&[][..], Vec::as_slice);
    let [entry] = manifests else {
        return Err(LayoutError::Invalid(format!(
            "index.json names {} manifests; svclab checks a layout of one image",
            manifests.len()
        )));
    };
    let entry = descriptor(entry, "index.json's manifest")?;
    manifest_image(entry, |descriptor| {
        let hex = descriptor.digest.strip_prefix("sha256:").unwrap_or_default();
        file(&format!("blobs/sha256/{hex}"))
    })
}

/// The image whose manifest `entry` describes, each blob (the manifest's too) got by `blob`
/// and checked against its descriptor.
fn manifest_image(
    entry: Descriptor,
    mut blob: impl FnMut(&Descriptor) -> Result<Vec<u8>, LayoutError>,
) -> Result<Artifact, LayoutError> {
    let mut blobs = BTreeMap::new();
    let mut load = |descriptor: &Descriptor| -> Result<Vec<u8>, LayoutError> {
        // Checked before the digest names a file or a URL.
        let hex = descriptor.digest.strip_prefix("sha256:").unwrap_or_default();
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(LayoutError::Invalid(format!(
                "{}: only sha256 digests (64 lowercase hex digits) are read",
                descriptor.digest
            )));
        }
        let bytes = blob(descriptor)?;
        let actual = sha256_digest(&bytes);
        if actual != descriptor.digest || bytes.len() as u64 != descriptor.size {
            return Err(LayoutError::Invalid(format!(
                "blob {} holds {} bytes of digest {actual}, not the {} bytes its descriptor says: \
                 every registry client refuses it",
                descriptor.digest,
                bytes.len(),
                descriptor.size
            )));
        }
        blobs.insert(descriptor.digest.clone(), bytes.clone());
        Ok(bytes)
    };
    let manifest = json("the manifest", &load(&entry)?)?;
    let config = descriptor(&manifest["config"], "the manifest's config")?;
    load(&config)?;
    let mut layers = Vec::new();
    for (at, layer) in manifest["layers"].as_array().into_iter().flatten().enumerate() {
        let layer = descriptor(layer, &format!("layer {at}"))?;
        load(&layer)?;
        layers.push(layer);
    }
    let annotations = manifest["annotations"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(key, value)| Some((key.clone(), value.as_str()?.to_owned())))
        .collect();
    Ok(Artifact::Image(Image {
        manifest_digest: entry.digest,
        media_type: manifest["mediaType"].as_str().unwrap_or_default().to_owned(),
        config,
        layers,
        annotations,
        blobs,
    }))
}

/// `sha256:<hex>` of `bytes`, as descriptors name blobs.
fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", data_encoding::HEXLOWER.encode(&Sha256::digest(bytes)))
}

fn json(name: &str, bytes: &[u8]) -> Result<Value, LayoutError> {
    serde_json::from_slice(bytes)
        .map_err(|err| LayoutError::Invalid(format!("{name} is not JSON: {err}")))
}

fn descriptor(value: &Value, what: &str) -> Result<Descriptor, LayoutError> {
    let text = |key: &str| value[key].as_str().map(str::to_owned);
    match (text("mediaType"), text("digest"), value["size"].as_u64()) {
        (Some(media_type), Some(digest), Some(size)) => Ok(Descriptor { media_type, digest, size }),
        _ => Err(LayoutError::Invalid(format!("{what} lacks a mediaType, digest or size"))),
    }
}
