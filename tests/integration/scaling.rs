//! The guard against quadratic paths, by counting instructions: the embedded plugin runs
//! metered, and fuel (one unit per WebAssembly instruction, deterministic for a given build)
//! is the work of a call, including work that allocates nothing, such as a linear scan of
//! string compares per object. `check` and `render` of generated scenarios at N, 2N and 4N
//! Services: the growth from 2N to 4N may be at most [`MAX_GROWTH`] times the growth from N
//! to 2N (a linear pipeline gives 2, an N² path pushes it towards 4).

use svclab_core::{CheckOptions, Input, ProxyMode, RenderOptions};
use svclab_scenario_gen::{Shape, generate};

use crate::support::plugin;

/// Largest accepted ratio of the growth from 2N to 4N to the growth from N to 2N. Ordered maps
/// make a few parts N log N (2.2 at this size if the whole pipeline were N log N); an N² path
/// of a few per cent of the work already passes 2.3.
const MAX_GROWTH: f64 = 2.25;

/// Services at the smallest size.
const N: usize = 1_000;

fn check(what: &str, slices: bool, call: impl Fn(&[Input]) -> Option<u64>) {
    let mut fuel = [0u64; 3];
    for (i, services) in [N, 2 * N, 4 * N].into_iter().enumerate() {
        let inputs = [Input::new("scenario.yaml", generate(Shape { services, slices }))];
        fuel[i] = call(&inputs).unwrap_or_else(|| {
            panic!("{what}: the test plugin runs metered, yet reported no fuel")
        });
    }
    let [a, b, c] = fuel.map(|f| f as f64);
    let growth = (c - b) / (b - a);
    assert!(
        growth <= MAX_GROWTH,
        "{what}: fuel grows {growth:.3}x from 2N to 4N for 2x from N to 2N (at most \
         {MAX_GROWTH}); fuel at N = {N}, 2N, 4N: {fuel:?}"
    );
}

#[test]
fn check_fuel_grows_linearly() {
    for slices in [false, true] {
        check(&format!("check (slices: {slices})"), slices, |inputs| {
            let outcome = plugin().check(inputs, &CheckOptions::default());
            outcome.unwrap_or_else(|err| panic!("{err}")).fuel
        });
    }
}

#[test]
fn render_fuel_grows_linearly() {
    check("render with slices", true, |inputs| {
        let outcome = plugin().render(inputs, &RenderOptions::new(ProxyMode::Iptables));
        outcome.unwrap_or_else(|err| panic!("{err}")).fuel
    });
}

/// The guest grows its memory to whole multiples of 2 MiB (`plugin-wasm/src/heap.rs`): a
/// transparent huge page needs its whole range accessible before its first byte is touched
/// (`host-runner/src/linear_memory.rs`), and growth 1 MiB at a time, from an initial size that
/// is no multiple of 2 MiB, left no range of the grown memory whole.
#[test]
fn the_guest_grows_its_memory_in_whole_huge_pages() {
    let inputs = [Input::new("scenario.yaml", generate(Shape { services: 2 * N, slices: true }))];
    let outcome = plugin().render(&inputs, &RenderOptions::new(ProxyMode::Iptables));
    let peak = outcome.unwrap_or_else(|err| panic!("{err}")).peak_memory_bytes;
    let peak = peak.expect("the plugin reports its largest memory");
    assert!(peak > 8 << 20, "a render of {} Services grows past 8 MiB: {peak} bytes", 2 * N);
    assert_eq!(peak % (2 << 20), 0, "{peak} bytes is not a multiple of 2 MiB");
}
