//! The plugin's linear memory for a one-shot command on Linux: wasmtime's reservation (the
//! memory's largest size plus its guard), but starting on a 2 MiB boundary, with its first
//! [`HUGE_PAGE_ADVICE_BYTES`] (256 MiB) advised `MADV_HUGEPAGE`, so the kernel backs them with
//! transparent huge pages where it has them.
//!
//! Why: a render of 10,000 Services grows the guest's memory to some 100 MiB. In 4 KiB pages that
//! is some 20,000 page faults, each allocating, charging and zeroing its page (measured: a
//! 10,000-Service render inside the plugin 9 to 14 % faster with huge pages, its kernel time down
//! from some 40 ms to 10). A machine whose transparent huge pages are `always` gave them to
//! native `svclab` already, whose mimalloc regions are 2 MiB-aligned (84 of its 92 MiB in a
//! 10,000-Service render), but to less than half of the plugin's process (42 of 101 MiB):
//! wasmtime's reservation is not aligned, and the guest grew its memory 1 MiB at a time.
//! `madvise` mode (this machine's) gives them to neither unless asked.
//!
//! A huge page needs its whole 2 MiB range accessible before its first byte is touched, so the
//! guest grows its memory to multiples of 2 MiB (`plugin-wasm/src/heap.rs`). The memory past its
//! size stays inaccessible, as WebAssembly requires: accessible and inaccessible bytes are never
//! in one huge page.
//!
//! Why only the first 256 MiB: on a virtual machine that hands its free memory back to the
//! hypervisor (virtio-balloon free page reporting, as on the Firecracker VMs svclab's benchmarks
//! run on, which report free blocks of 8 MiB and more), a huge page taken from reported memory
//! has to be mapped anew by the hypervisor, and zeroing it then costs milliseconds where 4 KiB
//! pages mostly come from memory in use moments ago. The kernel has some hundreds of MiB of
//! unreported free blocks big enough for huge pages, varying from run to run. Measured over a
//! 100,000-Service render (some 800 MiB): advised whole, 16 % slower than in 4 KiB pages after a
//! few seconds idle. Alternating with native runs as the benchmark does, plugin ÷ native was
//! 1.29 to 1.43 advised up to 512 MiB, 1.22 to 1.27 up to 256 MiB, 1.26 to 1.30 up to 128 MiB,
//! and 1.29 to 1.34 in 4 KiB pages. (Runs each after 6 s idle put 512 MiB ahead instead, 0.92
//! of 4 KiB pages' time against 0.97 for 256 MiB: the bound trades a little of that for
//! runs in a busy machine's pattern.) 256 MiB holds a render of some 20,000 Services whole.
//!
//! `svclab serve` keeps wasmtime's pooling allocator, whose slots are reused between calls.

#![allow(unsafe_code, reason = "mapping and protecting the guest's memory are system calls")]

use std::ffi::c_void;
use std::ptr::null_mut;

use rustix::mm::{
    Advice, MapFlags, MprotectFlags, ProtFlags, madvise, mmap_anonymous, mprotect, munmap,
};
use wasmtime::{LinearMemory, MemoryCreator, MemoryType};

/// A transparent huge page on x86-64 and aarch64 (with 4 KiB base pages).
const HUGE_PAGE_BYTES: usize = 2 << 20;

/// How much of a memory, from its start, is advised `MADV_HUGEPAGE` (see the module's comment).
const HUGE_PAGE_ADVICE_BYTES: usize = 256 << 20;

/// Creates [`HugePageMemory`]s (the on-demand allocator's memories, once set with
/// `Config::with_host_memory`).
pub(crate) struct HugePageMemories;

// SAFETY: every memory it creates is a fresh mapping of `reserved + guard` bytes (zeroed, its
// accessible prefix exactly `minimum` bytes, the rest inaccessible until grown), owned by the
// memory and unmapped only when the memory is dropped.
unsafe impl MemoryCreator for HugePageMemories {
    fn new_memory(
        &self,
        ty: MemoryType,
        minimum: usize,
        _maximum: Option<usize>,
        reserved_size_in_bytes: Option<usize>,
        guard_size_in_bytes: usize,
    ) -> Result<Box<dyn LinearMemory>, String> {
        if ty.is_shared() {
            return Err("a shared memory cannot be created here".into());
        }
        // wasmtime always names the reservation (`Config::memory_reservation`): the compiled
        // code elides bounds checks against it and the guard after it.
        let reserved = reserved_size_in_bytes
            .ok_or_else(|| "a linear memory needs a reservation size".to_string())?;
        let mut memory = HugePageMemory::reserve(reserved, guard_size_in_bytes)
            .map_err(|err| format!("cannot reserve the plugin's memory: {err}"))?;
        memory.grow_to(minimum).map_err(|err| format!("{err:#}"))?;
        Ok(Box::new(memory))
    }
}

/// One linear memory: `size` accessible bytes at `base`, inside a mapping of its reservation,
/// its guard and the slack that aligned `base`.
struct HugePageMemory {
    mapped: *mut c_void,
    mapped_len: usize,
    base: *mut u8,
    size: usize,
    reserved: usize,
}

// SAFETY: the memory is plain bytes; wasmtime serialises access to it through its store.
unsafe impl Send for HugePageMemory {}
// SAFETY: as for `Send`.
unsafe impl Sync for HugePageMemory {}

impl HugePageMemory {
    /// An inaccessible reservation of `reserved` bytes and a guard, on a 2 MiB boundary.
    fn reserve(reserved: usize, guard: usize) -> std::io::Result<HugePageMemory> {
        let mapped_len = reserved
            .checked_add(guard)
            .and_then(|len| len.checked_add(HUGE_PAGE_BYTES))
            .ok_or(std::io::ErrorKind::InvalidInput)?;
        // SAFETY: a new anonymous mapping, at an address the kernel picks.
        let mapped = unsafe {
            mmap_anonymous(
                null_mut(),
                mapped_len,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE,
            )
        }?;
        let offset = (mapped as usize).next_multiple_of(HUGE_PAGE_BYTES) - mapped as usize;
        let memory = HugePageMemory {
            mapped,
            mapped_len,
            base: mapped.cast::<u8>().wrapping_add(offset),
            size: 0,
            reserved,
        };
        // SAFETY: the range lies inside the mapping just made, which nothing else uses. Advice
        // only: a kernel without transparent huge pages refuses it, and the memory works the
        // same in 4 KiB pages.
        let _ = unsafe {
            madvise(memory.base.cast(), reserved.min(HUGE_PAGE_ADVICE_BYTES), Advice::LinuxHugepage)
        };
        Ok(memory)
    }
}

// SAFETY: `base` never moves; `[base, base + size)` is readable and writable, and the rest of
// the reservation and the guard after it fault on access.
unsafe impl LinearMemory for HugePageMemory {
    fn byte_size(&self) -> usize {
        self.size
    }

    fn byte_capacity(&self) -> usize {
        self.reserved
    }

    fn grow_to(&mut self, new_size: usize) -> wasmtime::Result<()> {
        if new_size > self.reserved {
            wasmtime::bail!("{new_size} bytes exceed the {}-byte reservation", self.reserved);
        }
        if new_size > self.size {
            // SAFETY: the range lies inside the reservation, which this memory owns.
            unsafe {
                mprotect(
                    self.base.wrapping_add(self.size).cast(),
                    new_size - self.size,
                    MprotectFlags::READ | MprotectFlags::WRITE,
                )
            }?;
            self.size = new_size;
        }
        Ok(())
    }

    fn as_ptr(&self) -> *mut u8 {
        self.base
    }
}

impl Drop for HugePageMemory {
    fn drop(&mut self) {
        // SAFETY: the mapping is this memory's, and wasmtime drops the memory only once the
        // instance that used it is gone.
        let _ = unsafe { munmap(self.mapped, self.mapped_len) };
    }
}

#[cfg(test)]
mod tests;
