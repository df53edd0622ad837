//! The `svclab` npm package in Node, run by `cargo test`: builds the native `svclab` command and
//! the package (`cargo xtask npm`, jco over the plugin component), then runs
//! `npm/test/` with node's test runner: `parity.test.mjs` compares the package's answers with the
//! command's bytes on the examples, the guide, the validation vectors and the kube-proxy golden
//! inputs; `suites.test.mjs` holds `runTests` to `svclab test --output json` on the example suites;
//! `types.test.mjs` type-checks a consumer against the package's TypeScript types. Missing tools fail the test with the set-up command that installs them.

use std::io::Write as _;

use svclab_tests::node;

#[test]
fn npm_package_matches_the_command_in_node() {
    node::require(
        "the npm package's suite",
        &[node::node(), node::npm_packages(&["@bytecodealliance/jco", "yaml"])],
    );
    node::cargo(&["build", "--quiet", "-p", "svclab-host", "--bin", "svclab"]);
    let built = node::cargo(&["xtask", "npm"]);
    let target = node::target_dir();
    let package = target.join("npm/svclab");
    let bin = target.join("debug/svclab");
    node::node_tests(
        "the npm package's suite",
        "npm/test/",
        &[("SVCLAB_NPM", package.as_os_str()), ("SVCLAB_BIN", bin.as_os_str())],
    );
    // Shown with `--nocapture`: the package's files and sizes.
    let sizes: Vec<&str> =
        built.lines().filter(|l| l.starts_with("npm: ") || l.starts_with("  ")).collect();
    let _ = writeln!(std::io::stdout(), "{}", sizes.join("\n"));
}
