//! svclab's examples in five docs stacks, run by `cargo test`: MkDocs (Material) and Sphinx with
//! MyST from PyPI, Hugo from Debian, Docusaurus from npm and mdBook from crates.io, each installed
//! by `scripts/setup.d/50-docs-stacks.sh` under svclab's cache directory. Builds the npm package
//! (`cargo xtask npm`), checks the shared page `tests/docs-stacks/examples.md` (the page every
//! site builds) and mdBook's page in the info-string form with `svclab doc test`, then runs `tests/docs-stacks/`, which builds
//! each site with its framework's own command and loads it in headless Chromium. Screenshots and
//! build times (`metrics.json`) land in `<target>/docs-stacks-e2e/`. A stack that is not
//! installed fails its test with the path that is missing and the set-up step that installs it.

use std::io::Write as _;
use std::path::PathBuf;

use svclab_tests::node;

fn cache_dir() -> PathBuf {
    match std::env::var_os("SVCLAB_CACHE_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/svclab"),
    }
}

#[test]
fn docs_stacks_build_live_examples_in_headless_chromium() {
    node::require(
        "the docs stacks' browser suite",
        &[
            node::chromium(),
            node::node(),
            node::npm_packages(&["playwright-core", "@bytecodealliance/jco"]),
        ],
    );
    let checked = node::cargo(&[
        "run",
        "--quiet",
        "-p",
        "svclab-host",
        "--bin",
        "svclab",
        "--",
        "doc",
        "test",
        "tests/docs-stacks/examples.md",
        "tests/docs-stacks/mdbook/src/info.md",
    ]);
    node::cargo(&["xtask", "npm"]);
    let target = node::target_dir();
    let package = target.join("npm/svclab");
    let work = target.join("docs-stacks");
    let shots = target.join("docs-stacks-e2e");
    let cache = cache_dir();
    let text = node::node_tests(
        "the docs stacks' browser suite",
        "tests/docs-stacks/",
        &[
            ("SVCLAB_NPM", package.as_os_str()),
            ("SVCLAB_CACHE", cache.as_os_str()),
            ("SVCLAB_WORK", work.as_os_str()),
            ("SVCLAB_SHOTS", shots.as_os_str()),
        ],
    );
    let _ = writeln!(
        std::io::stdout(),
        "{checked}{}\nscreenshots: {}",
        node::metrics(&text),
        shots.display()
    );
}
