//! The guest's global allocator, in place of wasi-libc's dlmalloc (which the Rust standard library
//! uses on `wasm32-wasip2`).
//!
//! Every call runs in a fresh instance whose memory is thrown away afterwards, and the core
//! allocates millions of small strings and nodes for a large scenario: under dlmalloc,
//! `dlmalloc`/`dlfree` were about 14 % of a 10,000-Service `check` inside the plugin (a third of
//! that in dropping the world at the end of the call). A bump allocator would make freeing free,
//! but never reuses memory, and the core's YAML trees (freed document by document) would then
//! all stay: 100,000 Services would not fit in 4 GiB.
//!
//! So: blocks of up to [`SMALL_MAX`] bytes come from per-size-class free lists, refilled by
//! carving [`CHUNK_BYTES`] chunks (Rust hands `dealloc` the layout, so a block needs no header
//! and freeing is a push); larger blocks, and the chunks, come from talc, a general allocator
//! that coalesces what is freed.
//!
//! Where talc's memory comes from: first a static arena (in `.bss`, inside the linked initial
//! memory, so a typical admission review never grows the linear memory and a pooled instance
//! slot changes no page protection between calls); then `memory.grow` in steps of at least
//! [`GROW_STEP_PAGES`], each step extending the previous one. wasi-libc's C code allocates here
//! too, through this file's `malloc` and `free`.

#![allow(unsafe_code, reason = "a global allocator and its memory source are unsafe contracts")]

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

use talc::base::Talc;
use talc::base::binning::Binning;
use talc::cell::TalcSyncCell;
use talc::source::Source;
use talc::wasm::WasmBinning;

/// The allocator.
#[global_allocator]
static ALLOCATOR: SizeClasses = SizeClasses(UnsafeCell::new(Classes {
    free: [core::ptr::null_mut(); CLASSES],
    bump: core::ptr::null_mut(),
    end: core::ptr::null_mut(),
}));

/// Large blocks and the small classes' chunks.
static TALC: TalcSyncCell<LinearMemory, WasmBinning> =
    TalcSyncCell::new_wasm(LinearMemory { arena_claimed: false, end: None });

/// The largest block served from a size class.
const SMALL_MAX: usize = 4096;

/// Size classes: every multiple of 8 up to 512 bytes, then 1, 2 and 4 KiB.
const CLASSES: usize = 64 + 3;

/// What a size class's free list is refilled from, at a time.
const CHUNK_BYTES: usize = 256 << 10;

/// The small blocks' state. The guest is single-threaded (`wasm32-wasip2` has no threads), so
/// the allocator is never entered twice at once.
struct SizeClasses(UnsafeCell<Classes>);

struct Classes {
    /// Per class, the most recently freed block; each free block holds the next one's address.
    free: [*mut u8; CLASSES],
    /// The unused rest of the current chunk.
    bump: *mut u8,
    end: *mut u8,
}

// SAFETY: `wasm32-wasip2` without the `atomics` feature runs one thread per instance.
unsafe impl Sync for SizeClasses {}

#[cfg(target_feature = "atomics")]
compile_error!("the plugin's allocator assumes single-threaded WebAssembly");

/// The class of a small block of `size` bytes (alignment at most 8): its index and block size.
#[inline]
fn class_of(size: usize) -> (usize, usize) {
    if size <= 512 {
        let block = (size + 7) & !7;
        (block / 8 - 1, block)
    } else {
        let block = size.next_power_of_two();
        (64 + block.trailing_zeros() as usize - 10, block)
    }
}

#[inline]
fn is_small(layout: Layout) -> bool {
    layout.size() <= SMALL_MAX && layout.align() <= 8
}

// SAFETY: small blocks are handed out once until freed (a free list holds only freed blocks,
// the bump range only unused bytes of a chunk talc gave us); blocks are 8-aligned (chunks are,
// and every class is a multiple of 8); everything else is talc's.
unsafe impl GlobalAlloc for SizeClasses {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !is_small(layout) {
            return large_alloc(layout);
        }
        let (class, block) = class_of(layout.size());
        // SAFETY: single-threaded, and no other reference to the state is alive.
        let classes = unsafe { &mut *self.0.get() };
        let head = classes.free[class];
        if !head.is_null() {
            // SAFETY: a free block holds the next free block's address.
            classes.free[class] = unsafe { head.cast::<*mut u8>().read() };
            return head;
        }
        if (classes.end as usize) - (classes.bump as usize) < block && !refill(classes) {
            return core::ptr::null_mut();
        }
        let block_start = classes.bump;
        classes.bump = block_start.wrapping_add(block);
        block_start
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !is_small(layout) {
            return large_dealloc(ptr, layout);
        }
        let (class, _) = class_of(layout.size());
        // SAFETY: single-threaded, and no other reference to the state is alive.
        let classes = unsafe { &mut *self.0.get() };
        // SAFETY: the block is at least 8 bytes and 8-aligned, and no longer the caller's.
        unsafe { ptr.cast::<*mut u8>().write(classes.free[class]) };
        classes.free[class] = ptr;
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract: `ptr` was allocated here with `layout`.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (is_small(layout), is_small(new_layout)) {
            (true, true) if class_of(layout.size()).0 == class_of(new_size).0 => ptr,
            (false, false) => large_realloc(ptr, layout, new_size),
            // SAFETY: as for `alloc` and `dealloc`.
            _ => unsafe { self.move_block(ptr, layout, new_layout) },
        }
    }
}

impl SizeClasses {
    /// `realloc` across the small/large boundary or between classes: allocate, copy, free.
    #[inline(never)]
    unsafe fn move_block(&self, ptr: *mut u8, layout: Layout, new_layout: Layout) -> *mut u8 {
        // SAFETY: `new_layout` has a non-zero size (`realloc`'s contract).
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are at least this long, and distinct.
            unsafe {
                core::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_layout.size()));
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

/// A new chunk for the small classes; the rest of the old one is left unused.
#[inline(never)]
fn refill(classes: &mut Classes) -> bool {
    // SAFETY: a valid, non-zero layout.
    let chunk = unsafe { TALC.alloc(Layout::from_size_align_unchecked(CHUNK_BYTES, 8)) };
    if chunk.is_null() {
        return false;
    }
    classes.bump = chunk;
    classes.end = chunk.wrapping_add(CHUNK_BYTES);
    true
}

#[inline(never)]
fn large_alloc(layout: Layout) -> *mut u8 {
    // SAFETY: `GlobalAlloc::alloc`'s contract, passed on.
    unsafe { TALC.alloc(layout) }
}

#[inline(never)]
fn large_dealloc(ptr: *mut u8, layout: Layout) {
    // SAFETY: `GlobalAlloc::dealloc`'s contract, passed on.
    unsafe { TALC.dealloc(ptr, layout) }
}

#[inline(never)]
fn large_realloc(ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
    // SAFETY: `GlobalAlloc::realloc`'s contract, passed on.
    unsafe { TALC.realloc(ptr, layout, new_size) }
}

/// What wasi-libc's own C code allocates (environment, preopens, `getcwd`) comes from here too:
/// defining `malloc`, `calloc`, `realloc` and `free` keeps the linker from pulling wasi-libc's
/// dlmalloc out of its archive, ~9 KB of the component that would only ever serve a few blocks.
/// C passes no size to `free`, so each block starts with a header holding it.
const C_HEADER_BYTES: usize = 16;

/// The layout of a C block of `size` bytes with its header, aligned like C's `max_align_t` (16 on
/// `wasm32`).
fn c_layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.checked_add(C_HEADER_BYTES)?, C_HEADER_BYTES).ok()
}

/// A C block of `size` bytes (zeroed when asked), or null.
fn c_alloc(size: usize, zeroed: bool) -> *mut u8 {
    let Some(layout) = c_layout(size) else {
        return core::ptr::null_mut();
    };
    // SAFETY: the layout's size is not zero (it holds the header).
    let block =
        unsafe { if zeroed { ALLOCATOR.alloc_zeroed(layout) } else { ALLOCATOR.alloc(layout) } };
    if block.is_null() {
        return block;
    }
    // SAFETY: the block is at least `C_HEADER_BYTES` long and aligned for a `usize`.
    unsafe {
        block.cast::<usize>().write(size);
        block.add(C_HEADER_BYTES)
    }
}

/// The header's start and the layout a C block was allocated with.
///
/// # Safety
///
/// `ptr` came from [`c_alloc`] and was not freed.
unsafe fn c_block(ptr: *mut u8) -> (*mut u8, Layout) {
    // SAFETY: the caller's contract: a header precedes `ptr`, and its size fitted a layout.
    unsafe {
        let block = ptr.sub(C_HEADER_BYTES);
        let size = block.cast::<usize>().read();
        (block, Layout::from_size_align_unchecked(size + C_HEADER_BYTES, C_HEADER_BYTES))
    }
}

#[unsafe(no_mangle)]
extern "C" fn malloc(size: usize) -> *mut u8 {
    c_alloc(size, false)
}

#[unsafe(no_mangle)]
extern "C" fn calloc(count: usize, size: usize) -> *mut u8 {
    match count.checked_mul(size) {
        Some(bytes) => c_alloc(bytes, true),
        None => core::ptr::null_mut(),
    }
}

/// # Safety
///
/// C's contract: `ptr` is null or a live block from these functions.
#[unsafe(no_mangle)]
unsafe extern "C" fn free(ptr: *mut u8) {
    if !ptr.is_null() {
        // SAFETY: the caller's contract.
        let (block, layout) = unsafe { c_block(ptr) };
        // SAFETY: the block was allocated with this layout.
        unsafe { ALLOCATOR.dealloc(block, layout) };
    }
}

/// # Safety
///
/// C's contract: `ptr` is null or a live block from these functions.
#[unsafe(no_mangle)]
unsafe extern "C" fn realloc(ptr: *mut u8, size: usize) -> *mut u8 {
    if ptr.is_null() {
        return c_alloc(size, false);
    }
    let new = c_alloc(size, false);
    if !new.is_null() {
        // SAFETY: the caller's contract; both blocks hold at least the copied bytes.
        unsafe {
            let (block, layout) = c_block(ptr);
            let old_size = layout.size() - C_HEADER_BYTES;
            core::ptr::copy_nonoverlapping(ptr, new, old_size.min(size));
            ALLOCATOR.dealloc(block, layout);
        }
    }
    new
}

/// The static arena: what a review or a small scenario needs (a review's heap is ~0.2 MiB).
const ARENA_BYTES: usize = 2 << 20;

static mut ARENA: [MaybeUninit<u8>; ARENA_BYTES] = [MaybeUninit::uninit(); ARENA_BYTES];

/// WebAssembly's page.
const PAGE_BYTES: usize = 64 << 10;

/// Memory grows to a multiple of 2 MiB, by at least that much: one `memory.grow` (a host call,
/// and an `mprotect`) per 2 MiB rather than per page, and every 2 MiB range of the memory is
/// accessible whole before its first byte is touched, which a transparent huge page needs (the
/// host advises them: `host-runner/src/linear_memory.rs`). A step may take the memory up to
/// 4 MiB past what the call needs, so a call that near its memory limit may stop a little
/// earlier.
const GROW_STEP_PAGES: usize = 32;

/// Talc's source of memory: the arena, then the linear memory's growth.
#[derive(Debug)]
struct LinearMemory {
    arena_claimed: bool,
    /// The end of the heap made of grown memory, while it is the end of the linear memory.
    end: Option<NonNull<u8>>,
}

// SAFETY: `acquire` only hands talc memory nothing else uses (the arena, which nothing else
// names, and pages it has just grown), and never allocates.
unsafe impl Source for LinearMemory {
    fn acquire<B: Binning>(talc: &mut Talc<Self, B>, layout: Layout) -> Result<(), ()> {
        if !talc.source.arena_claimed {
            talc.source.arena_claimed = true;
            // SAFETY: the arena is claimed once, here, and used by nothing else.
            let claimed = unsafe { talc.claim((&raw mut ARENA).cast(), ARENA_BYTES) };
            if claimed.is_some() {
                return Ok(());
            }
        }
        // Enough for the allocation with talc's per-chunk and per-heap overhead and alignment.
        let needed = layout.size() + layout.align() + 4 * talc::base::CHUNK_UNIT;
        let current_pages = core::arch::wasm32::memory_size::<0>();
        let pages = (current_pages + needed.div_ceil(PAGE_BYTES).max(GROW_STEP_PAGES))
            .next_multiple_of(GROW_STEP_PAGES)
            - current_pages;
        let previous_pages = core::arch::wasm32::memory_grow::<0>(pages);
        if previous_pages == usize::MAX {
            return Err(());
        }
        let base = (previous_pages * PAGE_BYTES) as *mut u8;
        let bytes = pages * PAGE_BYTES;
        let new_end = base.wrapping_add(bytes);
        if let Some(end) = talc.source.end.take()
            && end.as_ptr() == base
        {
            // SAFETY: `end` is the end of the heap talc was given last, and the pages from
            // there to `new_end` were just grown for it.
            talc.source.end = Some(unsafe { talc.extend(end, new_end) });
            return Ok(());
        }
        // SAFETY: the pages were just grown, for talc alone.
        talc.source.end = unsafe { talc.claim(base, bytes) };
        if talc.source.end.is_some() { Ok(()) } else { Err(()) }
    }
}
