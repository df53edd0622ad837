//! `cargo xtask playground` builds the browser playground into a self-contained static site
//! (`<target>/playground/`); `cargo xtask serve [PORT]` serves it on 127.0.0.1, and the guide
//! (`cargo xtask docs`, `<target>/guide/`) at `/guide/`.
//!
//! The build does without trunk: cargo builds `svclab-playground` for `wasm32-unknown-unknown`
//! in release, the `wasm-bindgen` CLI (the exact version of the crate in Cargo.lock) writes the
//! JS glue, and esbuild bundles the CodeMirror editor into the snippet wasm-bindgen copied, so
//! the page imports nothing from outside its own origin.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use crate::{say, target_dir, workspace_root};

const PACKAGE: &str = "svclab-playground";
const WASM_NAME: &str = "svclab-playground.wasm";
const OUT_NAME: &str = "svclab_playground";

/// Where the static site goes.
pub(crate) fn site_dir() -> PathBuf {
    target_dir(&workspace_root()).join("playground")
}

/// The `wasm-bindgen` version in Cargo.lock.
fn locked_wasm_bindgen(root: &Path) -> anyhow::Result<String> {
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).context("reading Cargo.lock")?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == "name = \"wasm-bindgen\""
            && let Some(version) = lines.next().and_then(|l| l.strip_prefix("version = \""))
        {
            return Ok(version.trim_end_matches('"').to_owned());
        }
    }
    bail!("wasm-bindgen is not in Cargo.lock")
}

fn run(command: &mut Command, what: &str) -> anyhow::Result<()> {
    let status = command.status().with_context(|| format!("could not start {what}"))?;
    ensure!(status.success(), "{what} failed ({status})");
    Ok(())
}

/// `cargo xtask playground`.
pub(crate) fn build() -> anyhow::Result<()> {
    let root = workspace_root();
    let target = target_dir(&root);
    let js_dir = root.join("playground-web/js");
    let esbuild = js_dir.join("node_modules/.bin/esbuild");
    ensure!(
        esbuild.exists(),
        "{} is missing: run `bash scripts/setup.d/31-npm.sh` (npm ci in playground-web/js) first",
        esbuild.display()
    );
    let wanted = locked_wasm_bindgen(&root)?;
    let found =
        Command::new("wasm-bindgen").arg("--version").output().ok().filter(|o| o.status.success());
    let found =
        found.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned()).unwrap_or_default();
    ensure!(
        found == format!("wasm-bindgen {wanted}"),
        "the wasm-bindgen CLI must be version {wanted} (Cargo.lock), found {:?}: run `bash scripts/setup.d/30-wasm-bindgen.sh`",
        if found.is_empty() { "none" } else { found.as_str() }
    );

    say("playground: cargo build (wasm32-unknown-unknown, release)");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    run(
        Command::new(cargo)
            .current_dir(&root)
            .args(["build", "--release", "--target", "wasm32-unknown-unknown", "-p", PACKAGE])
            // Speed over size: the core runs on every edit. Measured 2026-12-02 (1,000
            // Services, headless Chromium, median of 11 pastes, 4-5 runs each): re-evaluation
            // 39 ms at opt-level "s", 33 ms at 3, for 838 KB gzipped instead of 689 KB.
            // simd128 (sha2's vector backend) measured no faster here and is left off.
            .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "3")
            .env("CARGO_PROFILE_RELEASE_LTO", "true")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
            .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
            .env("CARGO_PROFILE_RELEASE_PANIC", "abort"),
        "cargo build of the playground",
    )?;
    let wasm = target.join("wasm32-unknown-unknown/release").join(WASM_NAME);

    let staging = target.join("playground-staging");
    if staging.exists() {
        std::fs::remove_dir_all(&staging)
            .with_context(|| format!("removing {}", staging.display()))?;
    }
    say("playground: wasm-bindgen");
    run(
        Command::new("wasm-bindgen")
            .args(["--target", "web", "--no-typescript", "--out-name", OUT_NAME, "--out-dir"])
            .arg(&staging)
            .arg(&wasm),
        "wasm-bindgen",
    )?;

    // wasm-bindgen copied js/editor.js verbatim; replace the copy by its esbuild bundle.
    let snippets = find_files(&staging.join("snippets"), "editor.js");
    ensure!(snippets.len() == 1, "expected one editor.js snippet, found {}", snippets.len());
    say("playground: esbuild (CodeMirror bundle)");
    run(
        Command::new(&esbuild)
            .current_dir(&js_dir)
            .args([
                "editor.js",
                "--bundle",
                "--format=esm",
                "--minify",
                "--target=es2020",
                "--log-level=warning",
            ])
            .arg(format!("--outfile={}", snippets[0].display())),
        "esbuild",
    )?;

    let static_dir = root.join("playground-web/static");
    for entry in std::fs::read_dir(&static_dir)
        .with_context(|| format!("reading {}", static_dir.display()))?
    {
        let entry = entry?;
        std::fs::copy(entry.path(), staging.join(entry.file_name()))?;
    }
    let mut total = 0;
    let mut total_gzip = 0;
    for file in find_files(&staging, "") {
        let bytes = std::fs::read(&file)?;
        let gzip = gzip(&bytes);
        total += bytes.len();
        total_gzip += gzip.len();
        let mut name = file.clone().into_os_string();
        name.push(".gz");
        std::fs::write(PathBuf::from(name), gzip)?;
    }
    let site = target.join("playground");
    if site.exists() {
        std::fs::remove_dir_all(&site).with_context(|| format!("removing {}", site.display()))?;
    }
    std::fs::rename(&staging, &site)?;
    say(&format!("playground: wrote {} ({total} bytes, {total_gzip} gzipped)", site.display()));
    Ok(())
}

/// Files under `dir` whose name ends with `suffix`, sorted.
pub(crate) fn find_files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(suffix) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// gzip (RFC 1952) around miniz_oxide's raw deflate.
pub(crate) fn gzip(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255];
    out.extend(miniz_oxide::deflate::compress_to_vec(data, 9));
    out.extend(crc32(data).to_le_bytes());
    out.extend(u32::try_from(data.len() % (1 << 32)).unwrap_or(0).to_le_bytes());
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for byte in data {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// `cargo xtask serve [PORT] [--for SECONDS] [--no-build]`: a static file server on 127.0.0.1 (builds the
/// site first when it is missing; `cargo xtask playground` rebuilds it).
pub(crate) fn serve(args: &[String]) -> anyhow::Result<()> {
    let mut port: u16 = 8080;
    let mut lifetime: Option<Duration> = None;
    // `--no-build` serves what exists (the guide's tests need no playground).
    let mut build_missing = true;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--for" => {
                let seconds: u64 =
                    rest.next().context("--for needs seconds")?.parse().context("--for SECONDS")?;
                lifetime = Some(Duration::from_secs(seconds));
            }
            "--no-build" => build_missing = false,
            "--port" => {
                port = rest.next().context("--port needs a number")?.parse().context("--port N")?
            }
            other => {
                port = other.parse().with_context(|| format!("unknown serve argument {other:?}"))?
            }
        }
    }
    let site = site_dir();
    if build_missing && !site.join("index.html").exists() {
        say(&format!("{} has no index.html: building it first", site.display()));
        build()?;
    }
    let listener = TcpListener::bind(("127.0.0.1", port))
        .with_context(|| format!("binding 127.0.0.1:{port}"))?;
    let address = listener.local_addr()?;
    // The URL is the first line: tests/e2e.rs reads it to find the port.
    say(&format!("svclab playground: http://{address}/"));
    if !crate::docs::guide_dir().join("index.html").exists() {
        say("the guide is not built: `cargo xtask docs` builds it (served at /guide/)");
    }
    let started = Instant::now();
    if lifetime.is_some() {
        listener.set_nonblocking(true)?;
    }
    loop {
        if lifetime.is_some_and(|l| started.elapsed() > l) {
            say("svclab playground: server lifetime over, stopping");
            return Ok(());
        }
        match listener.accept() {
            Ok((stream, _)) => {
                let site = site.clone();
                std::thread::spawn(move || {
                    let _ = stream.set_nonblocking(false);
                    let _ = handle(stream, &site);
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) => return Err(e.into()),
        }
    }
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("json") => "application/json",
        Some("yaml") => "text/yaml; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

/// One connection: keep-alive GET/HEAD of files under `site`.
fn handle(stream: TcpStream, site: &Path) -> anyhow::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line)? == 0 {
            return Ok(());
        }
        let mut accepts_gzip = false;
        let mut content_length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
                break;
            }
            let lower = header.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("accept-encoding:") {
                accepts_gzip = value.contains("gzip");
            } else if let Some(value) = lower.strip_prefix("content-length:") {
                content_length = value.trim().parse().unwrap_or(0);
            }
        }
        if content_length > 0 {
            let mut body = vec![0; content_length.min(1 << 20)];
            reader.read_exact(&mut body)?;
        }
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_owned();
        let target = parts.next().unwrap_or("/");
        let path = target.split(['?', '#']).next().unwrap_or("/");
        let relative = path.trim_start_matches('/');
        // The guide (`cargo xtask docs`) is served beside the playground, under /guide/.
        let (base, relative) = match relative.strip_prefix("guide") {
            Some("" | "/") => (crate::docs::guide_dir(), "index.html"),
            Some(rest) if rest.starts_with('/') => (crate::docs::guide_dir(), &rest[1..]),
            _ => (site.to_path_buf(), relative),
        };
        let relative = if relative.is_empty() { "index.html" } else { relative };
        let safe = !relative.split('/').any(|c| c == ".." || c.is_empty() || c.starts_with('.'));
        let file = base.join(relative);
        let (status, body, encoding, kind) =
            if (method != "GET" && method != "HEAD") || !safe || !file.is_file() {
                let status = if method == "GET" || method == "HEAD" {
                    "404 Not Found"
                } else {
                    "405 Method Not Allowed"
                };
                (status, b"not found\n".to_vec(), None, "text/plain; charset=utf-8")
            } else {
                let mut gz = file.clone().into_os_string();
                gz.push(".gz");
                let gz = PathBuf::from(gz);
                if accepts_gzip && gz.is_file() {
                    ("200 OK", std::fs::read(&gz)?, Some("gzip"), content_type(&file))
                } else {
                    ("200 OK", std::fs::read(&file)?, None, content_type(&file))
                }
            };
        let mut head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\nVary: Accept-Encoding\r\n",
            body.len()
        );
        if let Some(encoding) = encoding {
            head.push_str(&format!("Content-Encoding: {encoding}\r\n"));
        }
        head.push_str("\r\n");
        writer.write_all(head.as_bytes())?;
        if method != "HEAD" {
            writer.write_all(&body)?;
        }
        writer.flush()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(data: &[u8], crc: u32) {
        assert_eq!(crc32(data), crc);
        let gz = gzip(data);
        assert_eq!(&gz[..3], &[0x1f, 0x8b, 8]);
        let inflated =
            miniz_oxide::inflate::decompress_to_vec(&gz[10..gz.len() - 8]).unwrap_or_default();
        assert_eq!(inflated, data);
    }

    #[test]
    fn gzip_members_are_valid() {
        check(b"123456789", 0xCBF4_3926);
        check(b"", 0);
    }
}
