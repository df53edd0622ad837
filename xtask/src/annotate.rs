//! Kubewarden metadata for a built policy module: `metadata.yml` as JSON in the
//! `io.kubewarden.metadata` custom section, what `kwctl annotate` writes
//! (`policy-evaluator:src/constants.rs` names the section; policy-server reads it as JSON).
//!
//! Shared by `cargo xtask plugins` and the build script of `tests/kubewarden` (which includes
//! this file by path), so the module under test carries the metadata that ships.

/// The custom section policy-evaluator reads.
pub(crate) const SECTION: &str = "io.kubewarden.metadata";

/// The annotation that carries the policy's version.
const VERSION_ANNOTATION: &str = "io.kubewarden.policy.version";

/// `wasm` with `metadata_yaml` (plus `version` as `io.kubewarden.policy.version`) as its
/// `io.kubewarden.metadata` section; an earlier copy of the section is dropped, so annotating
/// twice gives the same bytes.
pub(crate) fn annotate(wasm: &[u8], metadata_yaml: &str, version: &str) -> Result<Vec<u8>, String> {
    let mut metadata: serde_json::Value = serde_norway::from_str(metadata_yaml)
        .map_err(|err| format!("metadata.yml is not YAML: {err}"))?;
    let annotations = metadata
        .get_mut("annotations")
        .and_then(serde_json::Value::as_object_mut)
        .ok_or("metadata.yml has no annotations map")?;
    annotations.insert(VERSION_ANNOTATION.into(), version.into());
    let payload = serde_json::to_vec(&metadata).map_err(|err| err.to_string())?;

    let mut out = Vec::with_capacity(wasm.len() + payload.len() + 64);
    out.extend_from_slice(header(wasm)?);
    let mut rest = &wasm[HEADER.len()..];
    while !rest.is_empty() {
        let id = rest[0];
        let (size, size_len) = read_u32(&rest[1..])?;
        let end = 1 + size_len + size as usize;
        let section = rest.get(..end).ok_or("a section runs past the end of the module")?;
        if id != 0 || custom_name(&section[1 + size_len..])? != SECTION {
            out.extend_from_slice(section);
        }
        rest = &rest[end..];
    }
    let name_len = leb128(SECTION.len() as u32);
    let body_len = name_len.len() + SECTION.len() + payload.len();
    out.push(0);
    out.extend(leb128(u32::try_from(body_len).map_err(|_| "metadata too large")?));
    out.extend(name_len);
    out.extend_from_slice(SECTION.as_bytes());
    out.extend(payload);
    Ok(out)
}

/// `\0asm` and binary format version 1: a core module, not a component.
const HEADER: [u8; 8] = [0, b'a', b's', b'm', 1, 0, 0, 0];

fn header(wasm: &[u8]) -> Result<&[u8], String> {
    match wasm.get(..HEADER.len()) {
        Some(header) if header == HEADER => Ok(header),
        _ => Err("not a WebAssembly core module (version 1)".into()),
    }
}

/// The name of a custom section from its body.
fn custom_name(body: &[u8]) -> Result<&str, String> {
    let (len, len_len) = read_u32(body)?;
    let name = body
        .get(len_len..len_len + len as usize)
        .ok_or("a custom section name runs past its section")?;
    std::str::from_utf8(name).map_err(|_| "a custom section name is not UTF-8".into())
}

/// An unsigned LEB128 `u32` and how many bytes it took.
fn read_u32(bytes: &[u8]) -> Result<(u32, usize), String> {
    let mut value: u32 = 0;
    for (i, byte) in bytes.iter().take(5).enumerate() {
        value |= u32::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err("a truncated or oversized LEB128 number".into())
}

fn leb128(mut value: u32) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::{HEADER, SECTION, annotate};

    /// Annotates `module`, checks the section is last and well formed, and that annotating the
    /// result again gives the same bytes.
    fn check(module: &[u8], metadata: &str) -> Vec<u8> {
        let once = annotate(module, metadata, "9.9.9").expect("annotates");
        assert_eq!(annotate(&once, metadata, "9.9.9").expect("annotates again"), once);
        assert!(once.starts_with(module));
        let section = &once[module.len()..];
        assert_eq!(section[0], 0, "a custom section");
        let body = &section[2..];
        assert_eq!(usize::from(section[1]), body.len(), "the size covers the body");
        assert_eq!(usize::from(body[0]), SECTION.len());
        assert_eq!(&body[1..=SECTION.len()], SECTION.as_bytes());
        once[module.len() + 3 + SECTION.len()..].to_vec()
    }

    #[test]
    fn appends_metadata_with_version() {
        let payload = check(&HEADER, "rules: []\nannotations: {a: b}\n");
        assert_eq!(
            String::from_utf8(payload).expect("UTF-8"),
            r#"{"annotations":{"a":"b","io.kubewarden.policy.version":"9.9.9"},"rules":[]}"#
        );
    }

    #[test]
    fn keeps_other_sections() {
        // A custom section "name" with a one-byte body, before the metadata.
        let mut module = HEADER.to_vec();
        module.extend([0, 6, 4, b'n', b'a', b'm', b'e', 7]);
        check(&module, "annotations: {}\n");
    }

    #[test]
    fn refuses_components_and_missing_annotations() {
        let component = [0, b'a', b's', b'm', 0x0d, 0, 1, 0];
        assert!(annotate(&component, "annotations: {}", "1").is_err());
        assert!(annotate(&HEADER, "rules: []", "1").is_err());
    }
}
