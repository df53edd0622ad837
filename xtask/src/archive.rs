//! Reproducible tar archives (POSIX ustar) for `cargo xtask dist`: entries sorted by path, each
//! parent directory written once before its contents, owner 0:0 without names, one fixed
//! modification time (the commit's, as `SOURCE_DATE_EPOCH` gives it), modes 0644 or 0755 and
//! nothing of the builder's file system (no device numbers, no extended headers), so the same
//! files give the same bytes on any machine (reproducible-builds.org, "Archive metadata").

use std::collections::BTreeMap;

use anyhow::{bail, ensure};

/// The files of an archive to be, by path.
#[derive(Default)]
pub(crate) struct Tar {
    // Invariant: paths are relative, `/`-separated, without `.` or `..` components.
    files: BTreeMap<String, (Vec<u8>, u32)>,
    /// Directories with a mode of their own (`tmp/` 01777), by path with its trailing slash.
    dirs: BTreeMap<String, u32>,
}

impl Tar {
    /// Adds a regular file with mode 0644 (0755 when `executable`).
    pub(crate) fn file(
        &mut self,
        path: &str,
        bytes: Vec<u8>,
        executable: bool,
    ) -> anyhow::Result<()> {
        ensure!(
            !path.is_empty()
                && !path.starts_with('/')
                && path.split('/').all(|part| !matches!(part, "" | "." | "..")),
            "not a relative archive path: {path:?}"
        );
        let mode = if executable { 0o755 } else { 0o644 };
        if self.files.insert(path.to_owned(), (bytes, mode)).is_some() {
            bail!("{path} is twice in the archive");
        }
        Ok(())
    }

    /// Adds a directory with `mode` (others get 0755 when a file needs them).
    pub(crate) fn dir(&mut self, path: &str, mode: u32) -> anyhow::Result<()> {
        ensure!(
            !path.is_empty() && !path.starts_with('/') && path.ends_with('/'),
            "not a relative directory path ending in /: {path:?}"
        );
        self.dirs.insert(path.to_owned(), mode);
        Ok(())
    }

    /// Whether a file is at `path` already.
    pub(crate) fn contains(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    /// The archive: its entries sorted, every file's directories before it, all with `mtime`.
    pub(crate) fn finish(self, mtime: u64) -> anyhow::Result<Vec<u8>> {
        let mut entries: BTreeMap<String, Result<(Vec<u8>, u32), u32>> = BTreeMap::new();
        let paths = self.files.keys().chain(self.dirs.keys());
        for path in paths {
            let mut at = 0;
            while let Some(slash) = path[at..].find('/') {
                at += slash + 1;
                let dir = &path[..at];
                let mode = self.dirs.get(dir).copied().unwrap_or(0o755);
                entries.entry(dir.to_owned()).or_insert(Err(mode));
            }
        }
        for (path, file) in self.files {
            entries.insert(path, Ok(file));
        }
        let mut out = Vec::new();
        for (path, entry) in entries {
            match entry {
                Err(mode) => out.extend(header(&path, 0, mode, b'5', mtime)?),
                Ok((bytes, mode)) => {
                    out.extend(header(&path, bytes.len() as u64, mode, b'0', mtime)?);
                    out.extend_from_slice(&bytes);
                    out.resize(out.len().next_multiple_of(512), 0);
                }
            }
        }
        // Two zero blocks end the archive.
        out.resize(out.len() + 1024, 0);
        Ok(out)
    }
}

/// One ustar header block.
fn header(path: &str, size: u64, mode: u32, kind: u8, mtime: u64) -> anyhow::Result<[u8; 512]> {
    let mut block = [0u8; 512];
    // A name over 100 bytes is split at a slash into `prefix` (155) and `name` (100).
    let (prefix, name) = if path.len() <= 100 {
        ("", path)
    } else {
        // A directory's own trailing slash stays in `name`.
        let split = path[..(path.len() - 1).min(155)]
            .rfind('/')
            .filter(|&at| path.len() - at - 1 <= 100)
            .ok_or_else(|| anyhow::anyhow!("path too long for ustar: {path}"))?;
        (&path[..split], &path[split + 1..])
    };
    block[..name.len()].copy_from_slice(name.as_bytes());
    octal(&mut block[100..108], u64::from(mode));
    octal(&mut block[108..116], 0);
    octal(&mut block[116..124], 0);
    octal(&mut block[124..136], size);
    octal(&mut block[136..148], mtime);
    block[156] = kind;
    block[257..263].copy_from_slice(b"ustar\0");
    block[263..265].copy_from_slice(b"00");
    block[345..345 + prefix.len()].copy_from_slice(prefix.as_bytes());
    // The checksum counts its own field as eight spaces.
    block[148..156].fill(b' ');
    let sum: u64 = block.iter().map(|&b| u64::from(b)).sum();
    octal(&mut block[148..155], sum);
    block[155] = b' ';
    Ok(block)
}

/// `value` in octal, zero-padded, ending with a NUL.
fn octal(field: &mut [u8], value: u64) {
    let digits = format!("{value:0width$o}", width = field.len() - 1);
    field[..digits.len()].copy_from_slice(digits.as_bytes());
    field[field.len() - 1] = 0;
}

#[cfg(test)]
mod tests {
    use super::Tar;

    /// Builds an archive of `files` (path, content) twice in opposite orders, checks both give
    /// the same bytes, and returns each entry's (path, type, mode, size, mtime) as read back.
    fn check(files: &[(&str, &str)]) -> Vec<(String, u8, String, usize, String)> {
        let build = |files: &mut dyn Iterator<Item = &(&str, &str)>| {
            let mut tar = Tar::default();
            for (path, text) in files {
                tar.file(path, text.as_bytes().to_vec(), path.ends_with(".sh")).expect("adds");
            }
            tar.finish(1_700_000_000).expect("finishes")
        };
        let bytes = build(&mut files.iter());
        assert_eq!(bytes, build(&mut files.iter().rev()), "the order of adding does not matter");
        assert_eq!(bytes.len() % 512, 0);
        let mut out = Vec::new();
        let mut at = 0;
        while bytes[at] != 0 {
            let block = &bytes[at..at + 512];
            let field = |range: std::ops::Range<usize>| {
                String::from_utf8_lossy(&block[range]).trim_end_matches('\0').to_owned()
            };
            let size = usize::from_str_radix(&field(124..135), 8).expect("octal size");
            let sum: u32 = block
                .iter()
                .enumerate()
                .map(|(i, &b)| if (148..156).contains(&i) { 32 } else { u32::from(b) })
                .sum();
            assert_eq!(u32::from_str_radix(&field(148..154), 8).expect("octal sum"), sum);
            let prefix = field(345..500);
            let name = field(0..100);
            let path = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
            out.push((path, block[156], field(100..107), size, field(136..147)));
            at += 512 + size.next_multiple_of(512);
        }
        assert!(bytes[at..].iter().all(|&b| b == 0));
        out
    }

    #[test]
    fn entries_are_sorted_with_their_directories() {
        let long = format!("{}/{}/plugin.wasm", "d".repeat(60), "e".repeat(50));
        let entries = check(&[("b/run.sh", "#!/bin/sh\n"), ("a.txt", "a"), (&long, "wasm")]);
        let summary: Vec<String> = entries
            .iter()
            .map(|(path, kind, mode, size, mtime)| {
                format!("{} {} {mode} {size} {mtime}", path.len(), char::from(*kind))
            })
            .collect();
        assert_eq!(
            summary,
            [
                // a.txt, b/, b/run.sh, the two directories of the long path, its file; the
                // time is 1,700,000,000 in octal.
                "5 0 0000644 1 14524770400",
                "2 5 0000755 0 14524770400",
                "8 0 0000755 10 14524770400",
                "61 5 0000755 0 14524770400",
                "112 5 0000755 0 14524770400",
                "123 0 0000644 4 14524770400",
            ]
        );
    }

    #[test]
    fn refuses_absolute_and_dotted_paths() {
        for path in ["/etc/passwd", "a/../b", "./a", ""] {
            assert!(Tar::default().file(path, Vec::new(), false).is_err(), "{path}");
        }
    }
}
