//! Reading the archives hosts unpack: tar (POSIX ustar and GNU, regular files only) and gzip
//! members (RFC 1952), enough for an `oci-archive` and a compat image's layer.

use std::collections::BTreeMap;

/// The regular files of a tar archive by path (a leading `./` dropped), in archive order
/// when a path repeats (the last wins, as extraction does).
pub(super) fn files(tar: &[u8]) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut out = BTreeMap::new();
    let mut at = 0;
    while at + 512 <= tar.len() {
        let header = &tar[at..at + 512];
        if header.iter().all(|&b| b == 0) {
            break;
        }
        let field = |range: std::ops::Range<usize>| {
            let bytes = &header[range];
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            String::from_utf8_lossy(&bytes[..end]).into_owned()
        };
        let size = u64::from_str_radix(field(124..136).trim(), 8)
            .map_err(|_| format!("a tar header at byte {at} has no octal size"))?;
        let size = usize::try_from(size).map_err(|_| "a tar entry too large".to_owned())?;
        let prefix = if &header[257..262] == b"ustar" { field(345..500) } else { String::new() };
        let name = field(0..100);
        let path = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        let body = tar
            .get(at + 512..at + 512 + size)
            .ok_or_else(|| format!("tar entry {path} runs past the end of the archive"))?;
        if matches!(header[156], b'0' | 0) {
            out.insert(path.trim_start_matches("./").to_owned(), body.to_vec());
        }
        at += 512 + size.next_multiple_of(512);
    }
    Ok(out)
}

/// The content of a gzip member: its header skipped (RFC 1952 2.3), the deflate stream
/// inflated.
pub(super) fn gunzip(data: &[u8]) -> Result<Vec<u8>, String> {
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    if data.len() < 18 || data[..3] != [0x1f, 0x8b, 8] {
        return Err("gzip: invalid header".into());
    }
    let flags = data[3];
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let len = usize::from(u16::from_le_bytes([data[at], data[at + 1]]));
        at += 2 + len;
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let end = data.get(at..).and_then(|rest| rest.iter().position(|&b| b == 0));
            at += end.ok_or("gzip: unterminated header field")? + 1;
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    let deflated = data.get(at..data.len() - 8).ok_or("gzip: truncated")?;
    miniz_oxide::inflate::decompress_to_vec(deflated).map_err(|err| format!("gzip: {err}"))
}
