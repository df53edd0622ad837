//! End-to-end tests of the browser playground in real headless Chromium, run by `cargo test`.
//!
//! This harness builds the static site (`cargo xtask playground`), serves it on 127.0.0.1 with
//! `cargo xtask serve 0` and runs `tests/e2e/playground.test.mjs` with node's test runner
//! (playwright-core driving `/usr/bin/chromium`). Missing tools fail the test with the set-up
//! command that installs them; nothing is skipped silently. Screenshots and the measured figures
//! (`metrics.json`) land in `<target>/e2e/`.

use std::io::Write as _;

use svclab_tests::node::{self, StaticServer};

#[test]
fn playground_in_headless_chromium() {
    node::require(
        "the playground's browser suite",
        &[
            node::chromium(),
            node::node(),
            node::npm_packages(&["playwright-core"]),
            node::wasm_bindgen(),
        ],
    );
    node::cargo(&["xtask", "playground"]);
    let server = StaticServer::start(&[]);
    let shots = node::target_dir().join("e2e");
    let text = node::node_tests(
        "the playground's browser suite",
        "tests/e2e/",
        &[("SVCLAB_URL", server.url.as_ref()), ("SVCLAB_SHOTS", shots.as_os_str())],
    );
    drop(server);
    // Shown with `--nocapture`: the figures and where the screenshots are.
    let _ =
        writeln!(std::io::stdout(), "{}\nscreenshots: {}", node::metrics(&text), shots.display());
}
