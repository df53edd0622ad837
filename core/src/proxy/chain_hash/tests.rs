//! The four-lane SHA-256 against `sha2`, for every message length up to past the lanes' limit
//! and every batch size around the lane count.

use super::lanes::{Portable, sha256_each as lanes_sha256_each};
use super::{sha256, sha256_each};

/// Hashes `messages` through the lanes and checks every digest against `sha2`'s.
#[track_caller]
fn check(messages: &[[&[u8]; 3]]) {
    let mut out = Vec::new();
    lanes_sha256_each::<Portable>(messages.iter().copied(), &mut out);
    assert_eq!(out.len(), messages.len());
    for (i, (parts, digest)) in messages.iter().zip(&out).enumerate() {
        assert_eq!(*digest, sha256(*parts), "message {i} of {} bytes", parts.concat().len());
    }
}

#[test]
fn lanes_match_sha2_for_every_length_and_batch() {
    let text: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
    for len in 0..=text.len() {
        // The message split over the three parts at two places.
        let (a, rest) = text[..len].split_at(len / 3);
        let (b, c) = rest.split_at(rest.len() / 2);
        check(&[[a, b, c]]);
    }
    for batch in 1..=9 {
        // Lengths that pad to one, two, four and five blocks, mixed in one batch.
        let messages: Vec<[&[u8]; 3]> = (0..batch)
            .map(|i| {
                let len = [0, 55, 56, 119, 120, 247, 248, 300][(i * 5) % 8];
                [&text[..len], b"", b""]
            })
            .collect();
        check(&messages);
    }
}

#[test]
fn digests_of_known_texts() {
    let mut out = Vec::new();
    sha256_each([[&b"ab"[..], b"c", b""], [b"", b"", b""]], &mut out);
    let hex: Vec<String> =
        out.iter().map(|d| d.iter().map(|b| format!("{b:02x}")).collect()).collect();
    assert_eq!(
        hex,
        [
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ]
    );
}
