//! `SVCLAB_PERFMAP`, the profiling aid of CONTRIBUTING.md: set, the plugin engine writes the
//! perf map that names its compiled code for `perf` (`/tmp/perf-PID.map`); unset, it writes none.

use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `svclab --engine plugin check` on an example, with `SVCLAB_PERFMAP` set or not, and
/// returns the perf map the process left (and removes it).
fn check(perfmap: bool) -> Option<String> {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/dns-static-band.yaml");
    let mut command = Command::new(env!("CARGO_BIN_EXE_svclab"));
    command
        .args(["--engine", "plugin", "check"])
        .arg(&example)
        .arg("--cache-dir")
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("svclab-plugin-cache"))
        .env_remove("SVCLAB_PERFMAP")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if perfmap {
        command.env("SVCLAB_PERFMAP", "1");
    }
    let child = command.spawn().expect("svclab starts");
    let map = Path::new("/tmp").join(format!("perf-{}.map", child.id()));
    let output = child.wait_with_output().expect("svclab runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = std::fs::read_to_string(&map).ok();
    let _ = std::fs::remove_file(&map);
    text
}

#[test]
fn perfmap_names_the_plugins_code_only_when_asked() {
    let map = check(true).expect("SVCLAB_PERFMAP=1 writes /tmp/perf-PID.map");
    // One line per compiled function: `START SIZE NAME`, in hex.
    let functions = map.lines().filter(|line| line.contains("wasm[0]::function[")).count();
    assert!(functions > 100, "{functions} plugin functions in the map:\n{map}");
    assert_eq!(check(false), None, "no perf map without SVCLAB_PERFMAP");
}
