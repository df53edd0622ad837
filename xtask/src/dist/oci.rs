//! OCI image layouts (OCI image-spec `image-layout.md`): `oci-layout`, `index.json` naming one
//! image manifest, and every blob under `blobs/sha256/`, all JSON written with sorted keys and
//! no whitespace so the same inputs give the same digests. Also packed into one tar file (the
//! `oci-archive:` form skopeo reads), through the reproducible [`Tar`].

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::archive::Tar;

pub(crate) const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";

/// A blob and its media type.
pub(crate) struct Blob {
    pub(crate) media_type: &'static str,
    pub(crate) bytes: Vec<u8>,
}

impl Blob {
    /// `sha256:<hex>`.
    pub(crate) fn digest(&self) -> String {
        sha256_digest(&self.bytes)
    }

    fn descriptor(&self) -> Value {
        json!({"mediaType": self.media_type, "digest": self.digest(), "size": self.bytes.len()})
    }
}

/// `sha256:<hex>` of `bytes`.
pub(crate) fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", data_encoding::HEXLOWER.encode(&Sha256::digest(bytes)))
}

/// One image: a config, its layers in order, and the manifest's annotations.
pub(crate) struct Image {
    pub(crate) config: Blob,
    pub(crate) layers: Vec<Blob>,
    pub(crate) annotations: BTreeMap<String, String>,
}

impl Image {
    /// An image of the container form: an OCI image config and one tar+gzip layer (the filter's
    /// "compat" variant and the webhook image).
    pub(crate) fn container(
        config: &Value,
        layer: Vec<u8>,
        annotations: BTreeMap<String, String>,
    ) -> Image {
        Image {
            config: Blob {
                media_type: "application/vnd.oci.image.config.v1+json",
                bytes: config.to_string().into_bytes(),
            },
            layers: vec![Blob {
                media_type: "application/vnd.oci.image.layer.v1.tar+gzip",
                bytes: layer,
            }],
            annotations,
        }
    }

    /// The image manifest.
    pub(crate) fn manifest(&self) -> Blob {
        let mut manifest = json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA_TYPE,
            "config": self.config.descriptor(),
            "layers": self.layers.iter().map(Blob::descriptor).collect::<Vec<_>>(),
        });
        if !self.annotations.is_empty() {
            manifest["annotations"] = json!(self.annotations);
        }
        Blob { media_type: MANIFEST_MEDIA_TYPE, bytes: manifest.to_string().into_bytes() }
    }

    /// The layout's files (path, bytes), with `tag` as the manifest's
    /// `org.opencontainers.image.ref.name` in `index.json`.
    fn layout_files(&self, tag: &str) -> Vec<(String, Vec<u8>)> {
        let manifest = self.manifest();
        let mut entry = manifest.descriptor();
        entry["annotations"] = json!({"org.opencontainers.image.ref.name": tag});
        let index = json!({
            "schemaVersion": 2,
            "mediaType": INDEX_MEDIA_TYPE,
            "manifests": [entry],
        });
        let mut files = vec![
            ("oci-layout".to_owned(), br#"{"imageLayoutVersion":"1.0.0"}"#.to_vec()),
            ("index.json".to_owned(), index.to_string().into_bytes()),
        ];
        for blob in [&manifest, &self.config].into_iter().chain(&self.layers) {
            let hex = blob.digest().trim_start_matches("sha256:").to_owned();
            files.push((format!("blobs/sha256/{hex}"), blob.bytes.clone()));
        }
        files
    }

    /// Writes the layout into `dir` (replaced) and its `oci-archive` tar beside it as
    /// `<dir>.tar`; the manifest's digest.
    pub(crate) fn write(&self, dir: &Path, tag: &str, mtime: u64) -> anyhow::Result<String> {
        if dir.exists() {
            std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
        }
        let mut tar = Tar::default();
        for (path, bytes) in self.layout_files(tag) {
            let file = dir.join(&path);
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&file, &bytes).with_context(|| format!("writing {}", file.display()))?;
            // A blob written twice (a config equal to a layer) is one file.
            if !tar.contains(&path) {
                tar.file(&path, bytes, false)?;
            }
        }
        let archive = dir.with_extension("oci.tar");
        std::fs::write(&archive, tar.finish(mtime)?)
            .with_context(|| format!("writing {}", archive.display()))?;
        Ok(self.manifest().digest())
    }
}

#[cfg(test)]
mod tests {
    use super::{Blob, Image};

    /// The layout files of an image of `layers` (media type, bytes), as `path size` lines, and
    /// the manifest JSON.
    fn check(layers: &[(&'static str, &[u8])]) -> (Vec<String>, String) {
        let image = Image {
            config: Blob { media_type: "application/vnd.wasm.config.v1+json", bytes: b"{}".into() },
            layers: layers
                .iter()
                .map(|(media_type, bytes)| Blob { media_type, bytes: bytes.to_vec() })
                .collect(),
            annotations: [("io.kubewarden.policy.version".into(), "0.1.0".into())].into(),
        };
        let files = image
            .layout_files("0.1.0")
            .iter()
            .map(|(path, bytes)| format!("{path} {}", bytes.len()))
            .collect();
        (files, String::from_utf8(image.manifest().bytes).unwrap_or_default())
    }

    #[test]
    fn one_wasm_layer() {
        let (files, manifest) = check(&[("application/vnd.wasm.content.layer.v1+wasm", b"\0asm")]);
        assert_eq!(
            files,
            [
                "oci-layout 30",
                "index.json 300",
                // The manifest, then the config (`{}`) and the layer (`\0asm`) by their SHA-256.
                "blobs/sha256/371e0653b01f0995f508d16288207941eaddd0185a5f2f3ed132a2d932258552 446",
                "blobs/sha256/44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a 2",
                "blobs/sha256/cd5d4935a48c0672cb06407bb443bc0087aff947c6b864bac886982c73b3027f 4",
            ]
        );
        assert_eq!(
            manifest,
            concat!(
                r#"{"annotations":{"io.kubewarden.policy.version":"0.1.0"},"#,
                r#""config":{"digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","mediaType":"application/vnd.wasm.config.v1+json","size":2},"#,
                r#""layers":[{"digest":"sha256:cd5d4935a48c0672cb06407bb443bc0087aff947c6b864bac886982c73b3027f","mediaType":"application/vnd.wasm.content.layer.v1+wasm","size":4}],"#,
                r#""mediaType":"application/vnd.oci.image.manifest.v1+json","schemaVersion":2}"#
            )
        );
    }
}
