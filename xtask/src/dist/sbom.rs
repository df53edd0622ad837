//! Software bills of materials: one CycloneDX 1.5 JSON document per artifact, listing the
//! crates linked into it. The crates are the normal (not build or dev) dependencies reachable
//! from the artifact's packages in `cargo metadata --filter-platform <target>`'s resolve graph,
//! which unifies features over the workspace, so a crate another member turns on may be listed
//! though the artifact's own build leaves it out: the list errs on the side of more. Each
//! registry crate carries Cargo.lock's SHA-256 of its `.crate` file, which is what cargo
//! verifies on download. The webhook image also lists the Debian packages whose files it
//! carries (glibc, libgcc_s, the CA certificates) as `pkg:deb` components.
//!
//! Written by hand rather than with cargo-cyclonedx: the document is small, and that tool would
//! pull in a large tree for one JSON file (CycloneDX 1.5, `bom-1.5.schema.json`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use anyhow::{Context, ensure};
use serde_json::{Value, json};

use crate::workspace::cargo;

/// The resolve graph of one target platform.
pub(crate) struct Graph {
    /// package id -> (name, version, license, registry crate's checksum)
    packages: BTreeMap<String, (String, String, Option<String>, Option<String>)>,
    /// package id -> the ids of its normal dependencies
    normal_deps: BTreeMap<String, Vec<String>>,
}

impl Graph {
    /// `cargo metadata` of the workspace at `root` for `target`.
    pub(crate) fn load(root: &Path, target: &str) -> anyhow::Result<Self> {
        let output = Command::new(cargo())
            .current_dir(root)
            .args(["metadata", "--format-version", "1", "--locked", "--filter-platform", target])
            .output()
            .context("cannot run cargo metadata")?;
        ensure!(output.status.success(), "cargo metadata failed ({})", output.status);
        let metadata: Value = serde_json::from_slice(&output.stdout)?;
        let checksums = lock_checksums(&std::fs::read_to_string(root.join("Cargo.lock"))?);
        let mut packages = BTreeMap::new();
        for package in metadata["packages"].as_array().into_iter().flatten() {
            let text = |key: &str| package[key].as_str().map(str::to_owned);
            let (Some(id), Some(name), Some(version)) = (text("id"), text("name"), text("version"))
            else {
                continue;
            };
            let checksum = checksums.get(&(name.clone(), version.clone())).cloned();
            packages.insert(id, (name, version, text("license"), checksum));
        }
        let mut normal_deps = BTreeMap::new();
        for node in metadata["resolve"]["nodes"].as_array().into_iter().flatten() {
            let Some(id) = node["id"].as_str() else { continue };
            let deps = node["deps"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|dep| {
                    dep["dep_kinds"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|kind| kind["kind"].is_null())
                })
                .filter_map(|dep| dep["pkg"].as_str().map(str::to_owned))
                .collect();
            normal_deps.insert(id.to_owned(), deps);
        }
        Ok(Self { packages, normal_deps })
    }

    /// The ids of the named packages and everything they link, sorted.
    fn closure(&self, roots: &[&str]) -> anyhow::Result<BTreeSet<String>> {
        let mut stack = Vec::new();
        for root in roots {
            let id = self
                .packages
                .iter()
                .find(|(id, (name, ..))| name == root && !id.starts_with("registry+"))
                .map(|(id, _)| id.clone())
                .with_context(|| format!("{root} is not a workspace package"))?;
            stack.push(id);
        }
        let mut seen = BTreeSet::new();
        while let Some(id) = stack.pop() {
            if seen.insert(id.clone()) {
                stack.extend(self.normal_deps.get(&id).into_iter().flatten().cloned());
            }
        }
        Ok(seen)
    }

    /// The CycloneDX document of `artifact` (its file name and bytes) made of `roots`' closure,
    /// dated `timestamp` (RFC 3339).
    pub(crate) fn cyclonedx(
        &self,
        artifact: &str,
        bytes: &[u8],
        version: &str,
        roots: &[&str],
        debian: &[(String, String, String)],
        timestamp: &str,
    ) -> anyhow::Result<Vec<u8>> {
        let sha256 = super::oci::sha256_digest(bytes);
        let hex = sha256.trim_start_matches("sha256:");
        let mut components = Vec::new();
        for id in self.closure(roots)? {
            let Some((name, version, license, checksum)) = self.packages.get(&id) else { continue };
            let purl = format!("pkg:cargo/{name}@{version}");
            let mut component = json!({
                "type": "library",
                "bom-ref": purl,
                "name": name,
                "version": version,
                "purl": purl,
            });
            if let Some(license) = license {
                component["licenses"] = json!([{"expression": license}]);
            }
            if let Some(checksum) = checksum {
                component["hashes"] = json!([{"alg": "SHA-256", "content": checksum}]);
            }
            components.push(component);
        }
        for (name, version, architecture) in debian {
            let purl = format!("pkg:deb/debian/{name}@{version}?arch={architecture}");
            components.push(json!({
                "type": "library",
                "bom-ref": purl,
                "name": name,
                "version": version,
                "purl": purl,
            }));
        }
        let document = json!({
            "bomFormat": "CycloneDX",
            "specVersion": "1.5",
            // A version-4-shaped UUID taken from the artifact's digest: the same artifact, the
            // same serial number, so the document is reproducible too.
            "serialNumber": format!(
                "urn:uuid:{}-{}-4{}-8{}-{}",
                &hex[0..8], &hex[8..12], &hex[13..16], &hex[17..20], &hex[20..32]
            ),
            "version": 1,
            "metadata": {
                "timestamp": timestamp,
                "tools": {"components": [{"type": "application", "name": "cargo xtask dist"}]},
                "component": {
                    "type": "application",
                    "bom-ref": artifact,
                    "name": artifact,
                    "version": version,
                    "hashes": [{"alg": "SHA-256", "content": hex}],
                },
            },
            "components": components,
        });
        let mut text = serde_json::to_vec_pretty(&document)?;
        text.push(b'\n');
        Ok(text)
    }
}

/// Cargo.lock's `checksum` of every registry package, by (name, version).
fn lock_checksums(lock: &str) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    for package in lock.split("[[package]]") {
        let field = |key: &str| {
            package.lines().find_map(|line| {
                line.strip_prefix(key)?.strip_prefix(" = \"")?.strip_suffix('"').map(str::to_owned)
            })
        };
        if let (Some(name), Some(version), Some(checksum)) =
            (field("name"), field("version"), field("checksum"))
        {
            out.insert((name, version), checksum);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::lock_checksums;

    #[test]
    fn reads_lock_checksums() {
        let lock = "version = 4\n\n[[package]]\nname = \"a\"\nversion = \"1.0.0\"\nsource = \"registry+x\"\nchecksum = \"ab12\"\n\n[[package]]\nname = \"svclab-core\"\nversion = \"0.1.0\"\n";
        let checksums = lock_checksums(lock);
        assert_eq!(checksums.len(), 1);
        assert_eq!(checksums[&("a".into(), "1.0.0".into())], "ab12");
    }
}
