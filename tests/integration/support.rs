//! Shared fixtures: paths, an in-process `svclab` runner with captured streams, and one plugin
//! engine per test process.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use svclab_host::{CacheDir, Engine, Io, Limits};

/// The workspace root (as [`svclab_tests::workspace_root`] finds it).
pub(crate) fn workspace() -> PathBuf {
    svclab_tests::workspace_root()
}

/// The compiled-plugin cache the tests share (inside the target directory).
pub(crate) fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("svclab-plugin-cache")
}

/// What one in-process run of `svclab` produced.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: u8,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `svclab ARGS` in-process with `stdin`, from the workspace root, using the test cache.
pub(crate) fn svclab(args: &[&str], stdin: &str) -> Run {
    let cache = cache_dir();
    let mut argv: Vec<String> = vec!["svclab".into()];
    argv.extend(args.iter().map(|arg| (*arg).to_owned()));
    argv.push("--cache-dir".into());
    argv.push(cache.display().to_string());
    let mut input = stdin.as_bytes();
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let mut io = Io { stdin: &mut input, stdout: &mut stdout, stderr: &mut stderr };
    let code = svclab_host::run_args(argv, &mut io);
    Run {
        code,
        stdout: String::from_utf8(stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(stderr).expect("stderr is UTF-8"),
    }
}

/// The embedded plugin, loaded once per test process.
pub(crate) fn plugin() -> &'static Engine {
    static PLUGIN: OnceLock<Engine> = OnceLock::new();
    PLUGIN.get_or_init(|| {
        Engine::embedded_plugin(Limits::default(), &CacheDir::at(cache_dir()))
            .expect("the embedded plugin loads")
    })
}

/// Every `*.yaml` / `*.json` file directly in `dir`, sorted.
pub(crate) fn scenario_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json"))
        })
        .collect();
    files.sort();
    files
}
