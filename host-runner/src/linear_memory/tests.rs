//! The memory's mapping as the kernel sees it (`/proc/self/smaps`): what is accessible, and
//! what is advised huge pages.

#![allow(unsafe_code, reason = "the tests write and read the memory through its raw pointer")]

use wasmtime::LinearMemory as _;

use super::{HUGE_PAGE_ADVICE_BYTES, HUGE_PAGE_BYTES, HugePageMemory};

/// Holds the mapping at `offset` bytes into `memory` to its permissions (`rw-p`, `---p`) and to
/// whether it is advised huge pages (the `hg` of its `VmFlags`).
fn check(memory: &HugePageMemory, offset: usize, perms: &str, advised: bool) {
    let address = memory.as_ptr() as usize + offset;
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps is readable");
    let mut entries = smaps.split_inclusive('\n').peekable();
    let mut found = None;
    while let Some(line) = entries.next() {
        let mut fields = line.split_whitespace();
        let (Some(range), Some(entry_perms)) = (fields.next(), fields.next()) else { continue };
        let Some((start, end)) = range.split_once('-') else { continue };
        let (Ok(start), Ok(end)) =
            (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16))
        else {
            continue;
        };
        if !(start..end).contains(&address) {
            continue;
        }
        let flags = entries
            .by_ref()
            .find_map(|l| l.strip_prefix("VmFlags:").map(str::to_owned))
            .unwrap_or_default();
        found = Some((entry_perms.to_owned(), flags.split_whitespace().any(|f| f == "hg")));
        break;
    }
    let (entry_perms, entry_advised) =
        found.unwrap_or_else(|| panic!("no mapping holds offset {offset:#x}"));
    assert_eq!(entry_perms, perms, "permissions at offset {offset:#x}");
    assert_eq!(entry_advised, advised, "huge page advice at offset {offset:#x}");
}

#[test]
fn grown_bytes_are_zeroed_and_writable_and_the_rest_is_not_accessible() {
    let mut memory = HugePageMemory::reserve(64 << 20, 64 << 10).expect("reserves");
    assert_eq!(memory.as_ptr() as usize % HUGE_PAGE_BYTES, 0, "the base is 2 MiB-aligned");
    assert_eq!(memory.byte_size(), 0);
    assert_eq!(memory.byte_capacity(), 64 << 20);
    check(&memory, 0, "---p", true);

    memory.grow_to(128 << 10).expect("grows");
    assert_eq!(memory.byte_size(), 128 << 10);
    let last = (128 << 10) - 1;
    // SAFETY: both offsets are inside the accessible 128 KiB.
    unsafe {
        assert_eq!((*memory.as_ptr(), *memory.as_ptr().add(last)), (0, 0));
        memory.as_ptr().add(last).write(7);
        assert_eq!(*memory.as_ptr().add(last), 7);
    }
    check(&memory, 0, "rw-p", true);
    check(&memory, last, "rw-p", true);
    check(&memory, 128 << 10, "---p", true);

    memory.grow_to(4 << 20).expect("grows");
    check(&memory, (4 << 20) - 1, "rw-p", true);
    check(&memory, 4 << 20, "---p", true);
    // SAFETY: inside the accessible 4 MiB; the earlier write is still there.
    unsafe { assert_eq!(*memory.as_ptr().add(last), 7) };

    assert!(memory.grow_to((64 << 20) + 1).is_err(), "past the reservation");
    assert_eq!(memory.byte_size(), 4 << 20);
}

#[test]
fn only_the_first_256_mib_are_advised_huge_pages() {
    let memory = HugePageMemory::reserve(1 << 30, 0).expect("reserves");
    check(&memory, 0, "---p", true);
    check(&memory, HUGE_PAGE_ADVICE_BYTES - 1, "---p", true);
    check(&memory, HUGE_PAGE_ADVICE_BYTES, "---p", false);
}
