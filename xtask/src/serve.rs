//! `cargo xtask serve [PORT]`: the playground (`cargo xtask playground`, built first when
//! missing) on 127.0.0.1, and the guide (`cargo xtask docs`) at `/guide/`. What `scripts/run`
//! runs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::workspace::say;
use crate::{docs, playground};

/// `cargo xtask serve [PORT] [--for SECONDS] [--no-build]`: a static file server on 127.0.0.1 (builds the
/// site first when it is missing; `cargo xtask playground` rebuilds it).
pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
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
    let site = playground::site_dir();
    if build_missing && !site.join("index.html").exists() {
        say(&format!("{} has no index.html: building it first", site.display()));
        playground::build()?;
    }
    let listener = TcpListener::bind(("127.0.0.1", port))
        .with_context(|| format!("binding 127.0.0.1:{port}"))?;
    let address = listener.local_addr()?;
    // The URL is the first line: tests/e2e.rs reads it to find the port.
    say(&format!("svclab playground: http://{address}/"));
    if !docs::guide_dir().join("index.html").exists() {
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
            Some("" | "/") => (docs::guide_dir(), "index.html"),
            Some(rest) if rest.starts_with('/') => (docs::guide_dir(), &rest[1..]),
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
