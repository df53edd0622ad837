//! `memcmp` a word at a time, in place of wasi-libc's byte-by-byte loop.
//!
//! Every string comparison of the core whose length is not known at compile time (the keys of
//! its `BTreeMap`s of `(namespace, name)`, field names against lists of known ones) ends here.
//! wasi-libc's (musl's) compares one byte per iteration, and every iteration also pays
//! wasmtime's epoch check. Most of the core's comparisons are of a few dozen bytes or fewer, so
//! up to 32 bytes take no loop at all (words, the last one overlapping). Defined here, the linker
//! takes this one and never pulls wasi-libc's from its archive.
//!
//! `memcpy` and `memset` are left alone. LLVM writes the core's copies as `memory.copy`, which
//! wasmtime runs as a host call; a guest built without `bulk-memory` calls `memcpy` instead, but
//! fat LTO gives every function the standard library's features back, and under thin LTO a call
//! into a guest `memcpy` cost as much as the host call (measured: more instructions in all).

#![allow(unsafe_code, reason = "the C library's `memcmp`, called by the standard library")]

/// Compares `n` bytes at `left` and `right`: negative, zero or positive as the first differing
/// byte (unsigned) of `left` is less than, equal to or greater than that of `right`.
///
/// # Safety
///
/// Both ranges must be readable for `n` bytes (the C contract).
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
#[inline(never)]
unsafe extern "C" fn memcmp(left: *const u8, right: *const u8, n: usize) -> i32 {
    // SAFETY: the caller's contract, passed on.
    unsafe { compare(left, right, n) }
}

/// [`memcmp`]'s comparison (a function of its own, so the host's tests can call it without
/// replacing the host's `memcmp`).
///
/// Up to [`SHORT_MAX`] bytes take no loop, so no epoch check but the one on entry. Longer texts
/// go on in [`compare_long`], out of line. (`memcmp` still saves callee-saved registers: its
/// arguments live across the epoch check's call into wasmtime.)
///
/// # Safety
///
/// As [`memcmp`].
#[inline(always)]
unsafe fn compare(left: *const u8, right: *const u8, n: usize) -> i32 {
    if n > SHORT_MAX {
        // SAFETY: the caller's contract, passed on.
        return unsafe { compare_long(left, right, n) };
    }
    // SAFETY (every read below): each reads bytes inside `[0, n)` of both ranges, which the
    // caller guarantees are readable.
    let word = |at: usize| unsafe { words(left, right, at) };
    if n >= 8 {
        // The whole words before the last one (at most three, unrolled), then the last eight
        // bytes (overlapping words already found equal, so the first difference in them is
        // the first difference).
        for at in [0, 8, 16] {
            if at + 8 >= n {
                break;
            }
            let (a, b) = word(at);
            if a != b {
                return order(a, b);
            }
        }
        let (a, b) = word(n - 8);
        return if a == b { 0 } else { order(a, b) };
    }
    if n >= 4 {
        let half = |at: usize| unsafe {
            (
                u64::from(left.add(at).cast::<u32>().read_unaligned()),
                u64::from(right.add(at).cast::<u32>().read_unaligned()),
            )
        };
        let (a, b) = half(0);
        if a != b {
            return order(a, b);
        }
        let (a, b) = half(n - 4);
        return if a == b { 0 } else { order(a, b) };
    }
    if n == 0 {
        return 0;
    }
    // One to three bytes: the first, middle and last byte, in order of significance.
    let small = |p: *const u8| unsafe {
        (u32::from(*p) << 16) | (u32::from(*p.add(n / 2)) << 8) | u32::from(*p.add(n - 1))
    };
    let (a, b) = (small(left), small(right));
    a.cmp(&b) as i32
}

/// The longest comparison [`compare`] makes without a loop: four words.
const SHORT_MAX: usize = 32;

/// A comparison of more than [`SHORT_MAX`] bytes: whole words up to the last one, then the last
/// eight bytes.
///
/// # Safety
///
/// As [`memcmp`], with `n >= 8`.
#[inline(never)]
unsafe fn compare_long(left: *const u8, right: *const u8, n: usize) -> i32 {
    // SAFETY (every read below): each reads bytes inside `[0, n)` of both ranges, which the
    // caller guarantees are readable.
    let word = |at: usize| unsafe { words(left, right, at) };
    let mut at = 0;
    while at + 8 < n {
        let (a, b) = word(at);
        if a != b {
            return order(a, b);
        }
        at += 8;
    }
    let (a, b) = word(n - 8);
    if a == b { 0 } else { order(a, b) }
}

/// The eight bytes at `at` of both ranges, as little-endian words.
///
/// # Safety
///
/// Both ranges must be readable for `at + 8` bytes.
#[inline(always)]
unsafe fn words(left: *const u8, right: *const u8, at: usize) -> (u64, u64) {
    // SAFETY: the caller's contract.
    unsafe {
        (left.add(at).cast::<u64>().read_unaligned(), right.add(at).cast::<u64>().read_unaligned())
    }
}

/// The order of two unequal little-endian words by their first differing byte in memory.
fn order(a: u64, b: u64) -> i32 {
    // The first byte in memory is the least significant, so the first difference is the lowest
    // set bit of `a ^ b`, rounded down to its byte. WebAssembly has `ctz` but no byte swap (LLVM
    // spells `swap_bytes` as some twenty shifts and masks), and most calls end here: a key
    // looked up in a `BTreeMap` differs from all but one of the keys it meets.
    let shift = (a ^ b).trailing_zeros() & !7;
    if (a >> shift) & 0xff < (b >> shift) & 0xff { -1 } else { 1 }
}

#[cfg(test)]
mod tests;
