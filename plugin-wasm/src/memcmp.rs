//! `memcmp` eight bytes at a time, in place of wasi-libc's byte-by-byte loop.
//!
//! Every string comparison of the core (`==` on strings, the keys of its `BTreeMap`s of
//! `(namespace, name)`, selector indexes) ends in `memcmp`; wasi-libc's (musl's) compares one
//! byte per iteration, and was a tenth of a 10,000-Service `check` inside the plugin. Defined
//! here, the linker takes this one and never pulls wasi-libc's from its archive.

/// Compares `n` bytes at `left` and `right`: negative, zero or positive as the first differing
/// byte (unsigned) of `left` is less than, equal to or greater than that of `right`.
///
/// # Safety
///
/// Both ranges must be readable for `n` bytes (the C contract).
#[allow(unsafe_code, reason = "the C library's `memcmp`, called by the standard library")]
#[unsafe(no_mangle)]
#[inline(never)]
unsafe extern "C" fn memcmp(left: *const u8, right: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: `i + 8 <= n`, and both ranges are readable for `n` bytes.
        let (a, b) = unsafe {
            (
                left.add(i).cast::<u64>().read_unaligned(),
                right.add(i).cast::<u64>().read_unaligned(),
            )
        };
        if a != b {
            // Little-endian loads: the first byte in memory is the least significant, so
            // compare the byte-swapped words to order by the first differing byte.
            return if a.swap_bytes() < b.swap_bytes() { -1 } else { 1 };
        }
        i += 8;
    }
    while i < n {
        // SAFETY: `i < n`.
        let (a, b) = unsafe { (*left.add(i), *right.add(i)) };
        if a != b {
            return i32::from(a) - i32::from(b);
        }
        i += 1;
    }
    0
}
