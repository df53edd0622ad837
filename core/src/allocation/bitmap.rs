//! The bitmap core shared by IP and port ranges (`allocator.AllocationBitmap`), with the
//! "random scan with offset" strategy of KEP-3070: dynamic picks start at a random bit of the
//! upper band and take the first free bit, wrapping inside the band; the lower band is used
//! only when the upper band is full.

use crate::allocation::{AllocationError, Seeded};

/// A fixed-size bit set with a band offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bitmap {
    /// Invariant: `words.len() == max.div_ceil(64)`, bits at or beyond `max` are zero.
    words: Vec<u64>,
    max: usize,
    offset: usize,
    count: usize,
}

impl Bitmap {
    /// A bitmap of `max` bits whose lower band is `[0, offset)`.
    pub fn new(max: usize, offset: usize) -> Bitmap {
        Bitmap { words: vec![0; max.div_ceil(64)], max, offset, count: 0 }
    }

    /// Number of bits.
    pub fn max(&self) -> usize {
        self.max
    }

    /// First bit of the upper (dynamic) band.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of set bits.
    pub fn used(&self) -> usize {
        self.count
    }

    /// Number of clear bits.
    pub fn free(&self) -> usize {
        self.max - self.count
    }

    /// Whether bit `i` is set (false when out of range).
    pub fn has(&self, i: usize) -> bool {
        i < self.max && self.words[i / 64] & (1 << (i % 64)) != 0
    }

    /// Sets bit `i`.
    pub fn allocate(&mut self, i: usize) -> Result<(), AllocationError> {
        if i >= self.max {
            return Err(AllocationError::OffsetOutOfRange {
                offset: i as u128,
                max: self.max as u128,
            });
        }
        if self.has(i) {
            return Err(AllocationError::Allocated);
        }
        self.words[i / 64] |= 1 << (i % 64);
        self.count += 1;
        Ok(())
    }

    /// Clears bit `i`; a no-op when it is clear or out of range.
    pub fn release(&mut self, i: usize) {
        if self.has(i) {
            self.words[i / 64] &= !(1 << (i % 64));
            self.count -= 1;
        }
    }

    /// Picks a free bit: upper band first from a random start, then the lower band.
    pub fn allocate_next(&mut self, rng: &mut Seeded) -> Result<usize, AllocationError> {
        if self.count >= self.max {
            return Err(AllocationError::Full);
        }
        if self.offset > self.max {
            // Go's `rand.Intn` panics on the negative upper-band size (kubernetes#115316).
            return Err(AllocationError::OffsetExceedsRange);
        }
        let (lo, hi) = (self.offset, self.max);
        if hi > lo {
            let start = lo + rng.below((hi - lo) as u128) as usize;
            if let Some(i) = self.first_free_wrapping(lo, hi, start) {
                self.set_unchecked(i);
                return Ok(i);
            }
        }
        if self.offset > 0 {
            let start = rng.below(self.offset as u128) as usize;
            if let Some(i) = self.first_free_wrapping(0, self.offset, start) {
                self.set_unchecked(i);
                return Ok(i);
            }
        }
        Err(AllocationError::Full)
    }

    fn set_unchecked(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
        self.count += 1;
    }

    /// First clear bit in `[start, hi)`, else in `[lo, start)`.
    fn first_free_wrapping(&self, lo: usize, hi: usize, start: usize) -> Option<usize> {
        self.first_free(start, hi).or_else(|| self.first_free(lo, start))
    }

    /// First clear bit in `[from, to)`, scanning a 64-bit word at a time.
    fn first_free(&self, from: usize, to: usize) -> Option<usize> {
        if from >= to {
            return None;
        }
        let mut word_idx = from / 64;
        // Bits below `from` in the first word count as taken.
        let mut taken = self.words[word_idx] | ((1u64 << (from % 64)) - 1);
        loop {
            if taken != u64::MAX {
                let i = word_idx * 64 + (!taken).trailing_zeros() as usize;
                return (i < to).then_some(i);
            }
            word_idx += 1;
            if word_idx * 64 >= to {
                return None;
            }
            taken = self.words[word_idx];
        }
    }

    /// Calls `f` for every set bit in ascending order.
    pub fn for_each(&self, mut f: impl FnMut(usize)) {
        for (w, &word) in self.words.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                f(w * 64 + b);
                bits &= bits - 1;
            }
        }
    }

    /// The set bits as a big-endian, minimal-length byte string (Go `big.Int.Bytes()`).
    pub fn snapshot_bytes(&self) -> Vec<u8> {
        let mut bytes: Vec<u8> = self.words.iter().rev().flat_map(|w| w.to_be_bytes()).collect();
        let first_nonzero = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
        bytes.drain(..first_nonzero);
        bytes
    }

    /// Loads bits from a snapshot byte string; bits beyond `max` are dropped.
    pub fn restore_bytes(&mut self, data: &[u8]) {
        self.words.iter_mut().for_each(|w| *w = 0);
        for (k, &byte) in data.iter().rev().enumerate() {
            for b in 0..8 {
                if byte & (1 << b) != 0 {
                    let i = k * 8 + b;
                    if i < self.max {
                        self.words[i / 64] |= 1 << (i % 64);
                    }
                }
            }
        }
        self.count = self.words.iter().map(|w| w.count_ones() as usize).sum();
    }
}
