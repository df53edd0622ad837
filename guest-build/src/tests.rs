//! Which workspace and target directory the build scripts of this workspace's packages find.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::{target_dir, workspace_of};

/// The nested build's target directory for the build script of `package` (a directory of this
/// workspace) under `CARGO_TARGET_DIR` = `configured`; `expected` is relative to the workspace
/// unless absolute.
fn check(package: &str, configured: Option<&str>, expected: &str) {
    // The directory cargo runs this test in, else the one it was built in.
    let this = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    let root = this.parent().expect("guest-build sits in the workspace");
    let workspace = workspace_of(&root.join(package)).expect("the workspace is found");
    assert_eq!(workspace, root, "{package}");
    let dir = target_dir(&workspace, configured.map(OsString::from));
    assert_eq!(dir, root.join(expected), "{package} with CARGO_TARGET_DIR={configured:?}");
}

#[test]
fn a_plain_clone_builds_under_its_own_target() {
    check("host-runner", None, "target/plugin-wasm");
    check("tests/kubewarden", None, "target/plugin-wasm");
    check("tests/kubewarden", Some(""), "target/plugin-wasm");
}

#[test]
fn cargo_target_dir_is_honoured() {
    check("host-runner", Some("/cache/svclab"), "/cache/svclab/plugin-wasm");
    check("tests/kubewarden", Some("/cache/svclab"), "/cache/svclab/plugin-wasm");
    check("host-runner", Some("out"), "out/plugin-wasm");
}
