//! The plugin artifact itself: a component, small, importing only `wasi:*`, exporting exactly
//! `svclab:policy`'s `editing` world (the `policy` world hosts bind, and the sessions jco's
//! module keeps), so "it doesn't load in a host" can never ship.

use svclab_host::{ComponentInterface, EMBEDDED_PLUGIN, component_interface};

/// The largest component we accept: issue 5's target was 1,500,000 bytes, which the component
/// met by 13 kB until `svclab test` ran suites in it (issue 38: the suite reader, the
/// comparisons and the nftables tracer suites reach, about 0.22 MB at opt-level 3); the guard
/// against accidental growth stays, with that added, with the upstream oracle's fixes
/// (issue 35: about 60 kB), and with `svclab upgrade`'s rehearsal (issue 36: both sides'
/// evaluations, the rule layouts, probes and diff, the findings' texts: 377,939 bytes, the
/// component 2,261,647 with it), and with the real control plane's fixes (issue 43), each side
/// decoded at its release, the kube-proxy rows' attribution and the trace's destination index
/// (issue 36 again: 2,311,482 bytes), and with the `editing` world's sessions (issue 39: the
/// reading cache, the pipeline's checkpoints and the UTF-16 edits, 2,358,899 bytes, 2.7% under
/// this budget; xtask/src/plugins.rs holds the same).
const MAX_COMPONENT_BYTES: usize = 2_368 * 1024;

/// The `policy` world's functions: what a host binds.
const POLICY: [&str; 16] = [
    "abi-version",
    "check",
    "check-settings",
    "check-text",
    "diagnose",
    "render",
    "render-begin",
    "render-next",
    "run-tests",
    "settings-schema",
    "test-files",
    "test-schema",
    "trace",
    "upgrade",
    "upgrade-text",
    "validate-admission",
];

/// What the `editing` world adds: the sessions jco's module keeps.
const SESSIONS: [&str; 5] =
    ["session-check", "session-close", "session-edit", "session-open", "session-text"];

/// Lists a component's imports and exports and checks them against the allow-list: imports of
/// `wasi:*` only, and exactly the functions `world` names.
#[track_caller]
fn check(interface: &ComponentInterface, world: &[&str]) {
    let forbidden: Vec<&String> =
        interface.imports.iter().filter(|import| !import.starts_with("instance wasi:")).collect();
    assert!(forbidden.is_empty(), "imports outside the wasi:* allow-list: {forbidden:?}");
    let mut functions: Vec<&str> =
        interface.exports.iter().filter_map(|export| export.strip_prefix("func ")).collect();
    functions.sort_unstable();
    let mut expected = world.to_vec();
    expected.sort_unstable();
    assert_eq!(functions, expected);
    let other: Vec<&String> = interface
        .exports
        .iter()
        .filter(|export| !export.starts_with("func ") && !export.starts_with("type "))
        .collect();
    assert!(other.is_empty(), "unexpected exports: {other:?}");
}

#[test]
fn embedded_plugin_imports_only_wasi_and_exports_the_world() {
    let interface =
        component_interface(EMBEDDED_PLUGIN).expect("the embedded plugin is a component");
    check(&interface, &[&POLICY[..], &SESSIONS[..]].concat());
    // The standard library's WASI needs are real imports; make sure the list is not empty by
    // accident (which would mean we inspected the wrong thing).
    assert!(
        interface.imports.iter().any(|import| import.starts_with("instance wasi:cli/")),
        "{interface:?}"
    );
}

#[test]
fn embedded_plugin_is_a_small_component() {
    // A component's preamble: magic, then version 0x0d and layer 1.
    assert_eq!(EMBEDDED_PLUGIN[..8], [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00]);
    assert!(
        EMBEDDED_PLUGIN.len() < MAX_COMPONENT_BYTES,
        "component is {} bytes (limit {MAX_COMPONENT_BYTES})",
        EMBEDDED_PLUGIN.len()
    );
}

#[test]
fn hostile_guests_pass_the_allow_list_but_not_the_abi_check() {
    // The hostile guests export the `policy` world, as a plugin a host binds may; the allow-list
    // alone cannot tell them apart, which is why the host also checks `abi-version` and limits
    // every call.
    for guest in ["endless-loop", "memory-growth", "trap", "wrong-abi"] {
        let path = format!("data/wasm/{guest}.wat");
        let text = std::fs::read(&path).expect("hostile guest fixture");
        let interface = component_interface(&text).unwrap_or_else(|err| panic!("{path}: {err}"));
        check(&interface, &POLICY);
    }
}
