//! The guard against quadratic paths, by counting: a global allocator that counts heap
//! allocations and bytes per thread, and `check` / `render` of generated scenarios (two-port
//! Services, three-endpoint EndpointSlices) at N, 2N and 4N Services. Doubling the input must
//! not more than double the work: the growth from 2N to 4N may be at most
//! [`MAX_GROWTH`] times the growth from N to 2N (differences cancel fixed costs, so a
//! linear pipeline gives exactly 2 and any N² term pushes the figure towards 4).
//!
//! Counting makes the test deterministic (no timing): the same build allocates the same way on
//! every run. Work that allocates nothing (a linear scan of string compares) is caught by the
//! fuel twin of this test in `integration/scaling.rs`, which counts WebAssembly instructions.

#![allow(unsafe_code, reason = "a GlobalAlloc that counts has to implement the unsafe trait")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use svclab_core::{CheckOptions, Input, ProxyMode, RenderOptions, evaluate, render, render_to};
use svclab_scenario_gen::{Shape, generate};

/// Largest accepted ratio of the growth from 2N to 4N to the growth from N to 2N. Ordered maps
/// make a few parts N log N (2.2 at this size for a pipeline that were all N log N); an N²
/// path of a few per cent of the work already passes 2.3.
const MAX_GROWTH: f64 = 2.25;

/// Services at the smallest size (the test runs N, 2N and 4N).
const N: usize = 500;

thread_local! {
    /// (allocations, bytes) of this thread; `const` so that reading it never allocates.
    static COUNTS: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

struct Counting;

// SAFETY: every call forwards to the system allocator unchanged; the counters are
// thread-local `Cell`s whose access never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

fn count(bytes: usize) {
    // `try_with`: during thread teardown the counter may be gone; that work is not ours.
    let _ = COUNTS.try_with(|c| {
        let (n, b) = c.get();
        c.set((n + 1, b + bytes as u64));
    });
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Allocations and bytes `f` makes on this thread.
fn counted(f: impl FnOnce()) -> (u64, u64) {
    let before = COUNTS.with(Cell::get);
    f();
    let after = COUNTS.with(Cell::get);
    (after.0 - before.0, after.1 - before.1)
}

/// The growth ratio of a figure over N, 2N, 4N.
fn growth(figures: [u64; 3]) -> f64 {
    let [a, b, c] = figures.map(|f| f as f64);
    (c - b) / (b - a)
}

/// Counts `call` over generated scenarios of N, 2N and 4N Services and checks the growth of
/// allocations and of allocated bytes.
fn check(what: &str, slices: bool, call: impl Fn(&[Input])) {
    let mut allocations = [0; 3];
    let mut bytes = [0; 3];
    for (i, services) in [N, 2 * N, 4 * N].into_iter().enumerate() {
        let inputs = [Input::new("scenario.yaml", generate(Shape { services, slices }))];
        (allocations[i], bytes[i]) = counted(|| call(&inputs));
    }
    for (figure, values) in [("allocations", allocations), ("allocated bytes", bytes)] {
        let g = growth(values);
        assert!(
            g <= MAX_GROWTH,
            "{what}: {figure} grow {g:.3}x from 2N to 4N for 2x from N to 2N (at most \
             {MAX_GROWTH}); figures at N = {N}, 2N, 4N: {values:?}"
        );
        assert!(g >= 1.5, "{what}: {figure} barely grow ({values:?}): is the work counted?");
    }
}

#[test]
fn check_allocates_linearly() {
    check("check, no slices", false, |inputs| {
        std::hint::black_box(svclab_core::check(inputs, &CheckOptions::default()));
    });
    check("check with slices", true, |inputs| {
        std::hint::black_box(svclab_core::check(inputs, &CheckOptions::default()));
    });
}

#[test]
fn render_allocates_linearly() {
    check("render with slices", true, |inputs| {
        let (world, _) = evaluate(inputs, &CheckOptions::default());
        std::hint::black_box(render(&world, &RenderOptions::new(ProxyMode::Iptables)).ok());
    });
    // The CLI's path: no report, the ruleset handed over in pieces (arena buffers, no string).
    check("render_to with slices", true, |inputs| {
        let mut bytes = 0;
        let options = RenderOptions::new(ProxyMode::Iptables);
        let rendered = render_to(inputs.to_vec(), &options, &mut |piece| bytes += piece.len());
        std::hint::black_box((rendered.ok(), bytes));
    });
}
