//! Finding line ends eight bytes at a time: one 64-bit word holds eight bytes, and a few
//! arithmetic steps flag the bytes of interest in all of them at once.
//!
//! A manifest is megabytes of short lines, and both the document splitter and the fast reader
//! walk every byte. A byte loop costs a compare and a branch per byte natively, and inside the
//! WebAssembly plugin also an epoch check per byte (wasmtime checks the call's deadline at every
//! loop header), which made these loops a fifth of a plugin `check`.

/// `0x01` in every byte.
const ONES: u64 = u64::from_le_bytes([0x01; 8]);
/// `0x80` in every byte.
const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);

/// The high bit of every byte of `word` below `n` (at most 128). A borrow can flag bytes above
/// a flagged one too, never below it, so the lowest flag is exact.
const fn below(word: u64, n: u8) -> u64 {
    word.wrapping_sub(ONES * n as u64) & !word & HIGHS
}

/// The high bit of every byte of `word` above `n` (at most 127). A carry can flag bytes above a
/// flagged one too, never below it, so the lowest flag is exact.
const fn above(word: u64, n: u8) -> u64 {
    (word.wrapping_add(ONES * (127 - n) as u64) | word) & HIGHS
}

/// The offset of the first byte at or after `at` for which `flags` (of a little-endian word)
/// flags, else the length.
#[inline]
fn first_flagged(bytes: &[u8], mut at: usize, flags: impl Fn(u64) -> u64) -> usize {
    while let Some(chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk::<8>) {
        let flagged = flags(u64::from_le_bytes(*chunk));
        if flagged != 0 {
            // Little-endian: the byte first in memory is the least significant.
            return at + (flagged.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    // The last few bytes, in a word padded with bytes that are never flagged.
    let tail = bytes.get(at..).unwrap_or_default();
    let mut word = [b' '; 8];
    for (slot, &b) in word.iter_mut().zip(tail) {
        *slot = b;
    }
    let flagged = flags(u64::from_le_bytes(word));
    if flagged != 0 { at + (flagged.trailing_zeros() / 8) as usize } else { bytes.len() }
}

/// The offset of the first line feed at or after `at`, else the length.
pub(super) fn line_feed(bytes: &[u8], at: usize) -> usize {
    first_flagged(bytes, at, |word| below(word ^ (ONES * u64::from(b'\n')), 1))
}

/// The offset of the first byte at or after `at` that is a line feed or anything else outside
/// printable ASCII (`' '..='~'`), else the length.
pub(super) fn line_feed_or_unprintable(bytes: &[u8], at: usize) -> usize {
    first_flagged(bytes, at, |word| below(word, b' ') | above(word, b'~'))
}
