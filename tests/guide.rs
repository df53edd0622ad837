//! The guide in headless Chromium, run by `cargo test`: builds the guide (`cargo xtask docs`,
//! which builds the npm package it embeds), serves it with `cargo xtask serve 0 --no-build` and
//! runs `tests/guide/guide.test.mjs` (playwright-core driving `/usr/bin/chromium`). Screenshots
//! and the measured figures (`metrics.json`) land in `<target>/guide-e2e/`. Missing tools fail
//! the test with the set-up command that installs them.

use std::io::Write as _;

use svclab_tests::node::{self, StaticServer};

#[test]
fn guide_examples_in_headless_chromium() {
    node::require(
        "the guide's browser suite",
        &[
            node::chromium(),
            node::node(),
            node::npm_packages(&["playwright-core", "@bytecodealliance/jco"]),
        ],
    );
    node::cargo(&["xtask", "docs"]);
    let server = StaticServer::start(&["--no-build"]);
    let shots = node::target_dir().join("guide-e2e");
    let text = node::node_tests(
        "the guide's browser suite",
        "tests/guide/",
        &[("SVCLAB_URL", server.url.as_ref()), ("SVCLAB_SHOTS", shots.as_os_str())],
    );
    drop(server);
    let _ =
        writeln!(std::io::stdout(), "{}\nscreenshots: {}", node::metrics(&text), shots.display());
}
