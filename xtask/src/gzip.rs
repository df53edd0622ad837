//! gzip members (RFC 1952) for the static sites' precompressed files.

/// gzip (RFC 1952) around miniz_oxide's raw deflate.
pub(crate) fn gzip(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255];
    out.extend(miniz_oxide::deflate::compress_to_vec(data, 9));
    out.extend(crc32(data).to_le_bytes());
    out.extend(u32::try_from(data.len() % (1 << 32)).unwrap_or(0).to_le_bytes());
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for byte in data {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(data: &[u8], crc: u32) {
        assert_eq!(crc32(data), crc);
        let gz = gzip(data);
        assert_eq!(&gz[..3], &[0x1f, 0x8b, 8]);
        let inflated =
            miniz_oxide::inflate::decompress_to_vec(&gz[10..gz.len() - 8]).unwrap_or_default();
        assert_eq!(inflated, data);
    }

    #[test]
    fn gzip_members_are_valid() {
        check(b"123456789", 0xCBF4_3926);
        check(b"", 0);
    }
}
