//! SHA-256 of the texts kube-proxy hashes into chain names (iptables `KUBE-SVC-`/`KUBE-SEP-`
//! suffixes, nftables bases), many at a time. A render hashes one text per service port and
//! one per endpoint (80,000 at 10,000 two-port Services with three endpoints each), each a
//! single 64-byte block or two.
//!
//! Natively `sha2` computes each one (with the CPU's SHA extensions where it has them). The
//! WebAssembly component has no such instruction, and `sha2`'s simd128 backend vectorises only
//! the message schedule, leaving 64 scalar rounds per block (about 3,100 instructions once
//! wasmtime compiles them, a twelfth of a 10,000-Service render inside the plugin). There the
//! messages go four at a time through the rounds, one per 32-bit lane of a `v128`
//! ([`lanes`]), which does the same work for four blocks in about the instructions of one.

/// The SHA-256 digest of each message (the concatenation of its three parts), in order,
/// appended to `out`.
pub(crate) fn sha256_each<'a>(
    messages: impl IntoIterator<Item = [&'a [u8]; 3]>,
    out: &mut Vec<[u8; 32]>,
) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    lanes::sha256_each::<lanes::Simd>(messages, out);
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    out.extend(messages.into_iter().map(sha256));
}

/// One message's digest, by `sha2`.
fn sha256(parts: [&[u8]; 3]) -> [u8; 32] {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    let mut digest = [0; 32];
    digest.copy_from_slice(&hasher.finalize());
    digest
}

/// SHA-256 (FIPS 180-4, section 6.2) over four messages at once: word `t` of the four
/// messages' current blocks is one value of four lanes, and every step of the rounds is one
/// lane-wise operation. Written once over [`Lanes`]: `Simd` (a `v128`) in the component,
/// `Portable` (`[u32; 4]`) where the tests check the algorithm against `sha2`.
#[cfg(any(test, all(target_arch = "wasm32", target_feature = "simd128")))]
pub(crate) mod lanes {
    /// Four 32-bit words, one per message.
    pub(crate) trait Lanes: Copy {
        fn splat(word: u32) -> Self;
        fn from_words(words: [u32; 4]) -> Self;
        fn words(self) -> [u32; 4];
        fn add(self, other: Self) -> Self;
        fn xor(self, other: Self) -> Self;
        /// Lane-wise right rotation by `N` bits.
        fn rotr<const N: u32>(self) -> Self;
        /// Lane-wise right shift by `N` bits.
        fn shr<const N: u32>(self) -> Self;
        /// The bits of `self` where `mask` has ones, those of `other` elsewhere.
        fn select(self, other: Self, mask: Self) -> Self;
    }

    /// The lanes as a WebAssembly `v128`.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[derive(Clone, Copy)]
    pub(crate) struct Simd(core::arch::wasm32::v128);

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    impl Lanes for Simd {
        fn splat(word: u32) -> Self {
            Simd(core::arch::wasm32::u32x4_splat(word))
        }
        fn from_words([a, b, c, d]: [u32; 4]) -> Self {
            Simd(core::arch::wasm32::u32x4(a, b, c, d))
        }
        fn words(self) -> [u32; 4] {
            use core::arch::wasm32::u32x4_extract_lane as lane;
            [lane::<0>(self.0), lane::<1>(self.0), lane::<2>(self.0), lane::<3>(self.0)]
        }
        fn add(self, other: Self) -> Self {
            Simd(core::arch::wasm32::i32x4_add(self.0, other.0))
        }
        fn xor(self, other: Self) -> Self {
            Simd(core::arch::wasm32::v128_xor(self.0, other.0))
        }
        fn rotr<const N: u32>(self) -> Self {
            use core::arch::wasm32::{u32x4_shl, u32x4_shr, v128_or};
            Simd(v128_or(u32x4_shr(self.0, N), u32x4_shl(self.0, 32 - N)))
        }
        fn shr<const N: u32>(self) -> Self {
            Simd(core::arch::wasm32::u32x4_shr(self.0, N))
        }
        fn select(self, other: Self, mask: Self) -> Self {
            Simd(core::arch::wasm32::v128_bitselect(self.0, other.0, mask.0))
        }
    }

    /// The lanes as plain words (the tests' reference for the algorithm).
    #[cfg(test)]
    #[derive(Clone, Copy)]
    pub(crate) struct Portable([u32; 4]);

    #[cfg(test)]
    impl Lanes for Portable {
        fn splat(word: u32) -> Self {
            Portable([word; 4])
        }
        fn from_words(words: [u32; 4]) -> Self {
            Portable(words)
        }
        fn words(self) -> [u32; 4] {
            self.0
        }
        fn add(self, other: Self) -> Self {
            Portable(std::array::from_fn(|i| self.0[i].wrapping_add(other.0[i])))
        }
        fn xor(self, other: Self) -> Self {
            Portable(std::array::from_fn(|i| self.0[i] ^ other.0[i]))
        }
        fn rotr<const N: u32>(self) -> Self {
            Portable(self.0.map(|w| w.rotate_right(N)))
        }
        fn shr<const N: u32>(self) -> Self {
            Portable(self.0.map(|w| w >> N))
        }
        fn select(self, other: Self, mask: Self) -> Self {
            Portable(std::array::from_fn(|i| (self.0[i] & mask.0[i]) | (other.0[i] & !mask.0[i])))
        }
    }

    /// Blocks a message may take to be hashed in a lane: 247 bytes and their padding (a longer
    /// one, which names of up to 63-character namespaces and Services do not reach, goes to
    /// `sha2` alone).
    const MAX_BLOCKS: usize = 4;

    /// Up to four padded messages as the rounds read them: word `t` of every lane's message is
    /// one `[u32; 4]` (a single load of four lanes), written as each message is padded.
    struct Batch {
        words: [[u32; 4]; MAX_BLOCKS * 16],
        /// Each lane's block count (0 for a lane without a message).
        blocks: [usize; 4],
        /// Where each lane's digest goes in the output.
        at: [usize; 4],
        /// One message and its padding, as bytes, before it becomes words.
        padded: [u8; MAX_BLOCKS * 64],
    }

    /// [`super::sha256_each`] through lanes of type `L`.
    pub(crate) fn sha256_each<'a, L: Lanes>(
        messages: impl IntoIterator<Item = [&'a [u8]; 3]>,
        out: &mut Vec<[u8; 32]>,
    ) {
        let mut batch = Batch {
            words: [[0; 4]; MAX_BLOCKS * 16],
            blocks: [0; 4],
            at: [0; 4],
            padded: [0; MAX_BLOCKS * 64],
        };
        let mut used = 0;
        for parts in messages {
            let len: usize = parts.iter().map(|p| p.len()).sum();
            if len + 9 > MAX_BLOCKS * 64 {
                out.push(super::sha256(parts));
                continue;
            }
            batch.pad(used, parts, len);
            batch.at[used] = out.len();
            out.push([0; 32]);
            used += 1;
            if used == 4 {
                batch.run::<L>(out);
                used = 0;
            }
        }
        if used > 0 {
            batch.blocks[used..].fill(0);
            batch.run::<L>(out);
        }
    }

    impl Batch {
        /// Pads a message (a one bit, zeros, the bit length) into lane `lane`.
        fn pad(&mut self, lane: usize, parts: [&[u8]; 3], len: usize) {
            let blocks = (len + 9).div_ceil(64);
            let bytes = &mut self.padded[..blocks * 64];
            bytes.fill(0);
            let mut at = 0;
            for part in parts {
                bytes[at..at + part.len()].copy_from_slice(part);
                at += part.len();
            }
            bytes[len] = 0x80;
            let end = bytes.len();
            bytes[end - 8..].copy_from_slice(&((len as u64) * 8).to_be_bytes());
            for (word, bytes) in self.words.iter_mut().zip(bytes.chunks_exact(4)) {
                word[lane] = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
            }
            self.blocks[lane] = blocks;
        }

        /// Hashes the lanes' messages and writes their digests (a lane with no blocks idles).
        fn run<L: Lanes>(&self, out: &mut [[u8; 32]]) {
            let blocks = self.blocks.iter().copied().max().unwrap_or(0);
            let mut state = H.map(L::splat);
            for block in 0..blocks {
                let words: &[[u32; 4]; 16] = match self.words[block * 16..].first_chunk() {
                    Some(words) => words,
                    None => break,
                };
                let next = compress(&state, words.map(L::from_words));
                // A lane whose message has no more blocks keeps its state.
                let active =
                    L::from_words(self.blocks.map(|n| if block < n { u32::MAX } else { 0 }));
                for (word, next) in state.iter_mut().zip(next) {
                    *word = next.select(*word, active);
                }
            }
            let words: [[u32; 4]; 8] = state.map(L::words);
            for (lane, &at) in self.at.iter().enumerate() {
                if self.blocks[lane] == 0 {
                    continue;
                }
                let Some(digest) = out.get_mut(at) else { continue };
                for (chunk, word) in digest.chunks_exact_mut(4).zip(&words) {
                    chunk.copy_from_slice(&word[lane].to_be_bytes());
                }
            }
        }
    }

    /// One block into the state of each lane (FIPS 180-4, 6.2.2), the message schedule kept
    /// as a window of its last 16 words. Eight rounds per iteration, each naming the state
    /// words in the order the previous one left them (the usual unrolling of SHA-256), so the
    /// state stays in registers between rounds instead of being shuffled through the stack.
    fn compress<L: Lanes>(state: &[L; 8], mut w: [L; 16]) -> [L; 8] {
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
        for t in (0..64).step_by(8) {
            let mut kw = |i: usize| {
                let t = t + i;
                if t >= 16 {
                    let (w15, w2) = (w[(t + 1) & 15], w[(t + 14) & 15]);
                    let s0 = w15.rotr::<7>().xor(w15.rotr::<18>()).xor(w15.shr::<3>());
                    let s1 = w2.rotr::<17>().xor(w2.rotr::<19>()).xor(w2.shr::<10>());
                    w[t & 15] = w[t & 15].add(s0).add(w[(t + 9) & 15]).add(s1);
                }
                w[t & 15].add(L::splat(K[t & 63]))
            };
            round(a, b, c, &mut d, e, f, g, &mut h, kw(0));
            round(h, a, b, &mut c, d, e, f, &mut g, kw(1));
            round(g, h, a, &mut b, c, d, e, &mut f, kw(2));
            round(f, g, h, &mut a, b, c, d, &mut e, kw(3));
            round(e, f, g, &mut h, a, b, c, &mut d, kw(4));
            round(d, e, f, &mut g, h, a, b, &mut c, kw(5));
            round(c, d, e, &mut f, g, h, a, &mut b, kw(6));
            round(b, c, d, &mut e, f, g, h, &mut a, kw(7));
        }
        let mut next = [a, b, c, d, e, f, g, h];
        for (word, start) in next.iter_mut().zip(state) {
            *word = word.add(*start);
        }
        next
    }

    /// One round: `d` and `h` take the values that become the next round's `e` and `a` (the
    /// other words only move, which the caller's naming does).
    #[allow(clippy::too_many_arguments, reason = "the eight state words of SHA-256")]
    #[inline(always)]
    fn round<L: Lanes>(a: L, b: L, c: L, d: &mut L, e: L, f: L, g: L, h: &mut L, kw: L) {
        let s1 = e.rotr::<6>().xor(e.rotr::<11>()).xor(e.rotr::<25>());
        // Ch(e, f, g): f where e has ones, g elsewhere.
        let ch = f.select(g, e);
        let t1 = h.add(s1).add(ch).add(kw);
        let s0 = a.rotr::<2>().xor(a.rotr::<13>()).xor(a.rotr::<22>());
        // Maj(a, b, c): where a and b differ c decides, elsewhere they agree.
        let maj = c.select(a, a.xor(b));
        *d = d.add(t1);
        *h = t1.add(s0.add(maj));
    }

    /// The initial hash value (FIPS 180-4, 5.3.3).
    const H: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];

    /// The round constants (FIPS 180-4, 4.2.2).
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
}

#[cfg(test)]
mod tests;
