//! The compiled-component cache: the first load compiles and stores, the next one reads the
//! file named by the component's SHA-256, and a damaged file is recompiled, never trusted.

use std::path::{Path, PathBuf};

use svclab_host::{CacheDir, EMBEDDED_PLUGIN, Limits, PluginRunner};

/// Loads the embedded plugin with a cache in `dir`; returns whether it came from the cache.
#[track_caller]
fn check(dir: &Path) -> bool {
    let runner =
        PluginRunner::load(EMBEDDED_PLUGIN, Limits::default(), &CacheDir::at(dir)).expect("loads");
    assert_eq!(runner.ping().expect("answers"), svclab_host::ABI_VERSION);
    runner.from_cache()
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn cached_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("cache dir")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .collect();
    files.sort();
    files
}

#[test]
fn second_load_comes_from_the_cache() {
    let dir = fresh_dir("cache-second-load");
    assert!(!check(&dir), "an empty cache cannot serve");
    assert!(check(&dir), "the second load reads the cache");
    let files = cached_files(&dir);
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().and_then(|name| name.to_str()).unwrap_or_default().to_owned();
    // `<sha256 hex>-<engine hash>.cwasm`.
    let (digest, rest) = name.split_once('-').expect("digest-hash.cwasm");
    assert_eq!(digest.len(), 64, "{name}");
    assert!(rest.ends_with(".cwasm"), "{name}");
}

#[test]
fn damaged_cache_file_is_recompiled() {
    let dir = fresh_dir("cache-damaged");
    assert!(!check(&dir));
    let file = cached_files(&dir).remove(0);
    std::fs::write(&file, b"not a compiled component").expect("overwrite");
    assert!(!check(&dir), "a damaged file is not trusted");
    assert!(check(&dir), "and is replaced by a good one");
}

#[test]
fn disabled_cache_writes_nothing() {
    let runner = PluginRunner::load(EMBEDDED_PLUGIN, Limits::default(), &CacheDir::disabled())
        .expect("loads");
    assert!(!runner.from_cache());
    assert_eq!(CacheDir::disabled().path(), None);
}
