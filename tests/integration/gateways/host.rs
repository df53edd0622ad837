//! The real gateways: Envoy and Traefik started from the files in `deploy/` on loopback
//! ports, the guests built from source, a plain HTTP client, and clean stops.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::upstream::{read_body, read_headers};
use crate::support::workspace;

/// Which gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Envoy,
    Traefik,
}

impl Kind {
    /// The guest this gateway loads, as `cargo xtask plugins` names it.
    fn guest(self) -> &'static str {
        match self {
            Kind::Envoy => "svclab_plugin_proxy_wasm.wasm",
            Kind::Traefik => "svclab_plugin_http_wasm.wasm",
        }
    }
}

/// A running gateway; stopped (killed and reaped) when dropped.
pub(crate) struct Gateway {
    pub(crate) kind: Kind,
    pub(crate) port: u16,
    pub(crate) admin_port: u16,
    child: Child,
    log: PathBuf,
}

impl Gateway {
    /// Starts `kind` with svclab's guest and `config` (the plugin configuration JSON) in front
    /// of the upstream on `upstream_port`; returns once it serves.
    pub(crate) fn start(kind: Kind, upstream_port: u16, config: &str) -> Gateway {
        let wasm = guests().join(kind.guest());
        Gateway::start_with(kind, upstream_port, config, &wasm)
    }

    /// Like [`Gateway::start`] with another guest module.
    pub(crate) fn start_with(kind: Kind, upstream_port: u16, config: &str, wasm: &Path) -> Gateway {
        static RUN: AtomicUsize = AtomicUsize::new(0);
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "gateways/{kind:?}-{}-{}",
            std::process::id(),
            RUN.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("gateway directory");
        let (port, admin_port) = (free_port(), free_port());
        let log = dir.join("gateway.log");
        let vars = [
            ("LISTEN_PORT", port.to_string()),
            ("ADMIN_PORT", admin_port.to_string()),
            ("UPSTREAM_PORT", upstream_port.to_string()),
        ];
        let mut command = match kind {
            Kind::Envoy => {
                let mut vars = vars.to_vec();
                vars.push(("PLUGIN_WASM", wasm.display().to_string()));
                // The configuration sits in a single-quoted YAML scalar.
                vars.push(("SVCLAB_CONFIG", config.replace('\'', "''")));
                let file = dir.join("envoy.yaml");
                write_template("deploy/envoy/envoy.yaml", &vars, &file);
                let mut command = Command::new(binary("envoy"));
                command.arg("-c").arg(&file).args([
                    "--concurrency",
                    "1",
                    "--disable-hot-restart",
                    "--log-level",
                    "warn",
                ]);
                command
            }
            Kind::Traefik => {
                let plugin = dir.join("plugins-local/src/svclab.dev/svclab");
                std::fs::create_dir_all(&plugin).expect("plugin layout");
                let manifest = "deploy/traefik/plugins-local/src/svclab.dev/svclab/.traefik.yml";
                std::fs::copy(workspace().join(manifest), plugin.join(".traefik.yml"))
                    .expect("copy .traefik.yml");
                std::fs::copy(wasm, plugin.join("plugin.wasm")).expect("copy plugin.wasm");
                let dynamic = dir.join("dynamic.yml");
                let mut dynamic_vars = vars.to_vec();
                dynamic_vars.push(("SVCLAB_CONFIG", config.to_owned()));
                write_template("deploy/traefik/dynamic.yml", &dynamic_vars, &dynamic);
                let mut static_vars = vars.to_vec();
                static_vars.push(("DYNAMIC_FILE", dynamic.display().to_string()));
                let file = dir.join("traefik.yml");
                write_template("deploy/traefik/traefik.yml", &static_vars, &file);
                let mut command = Command::new(binary("traefik"));
                command.arg(format!("--configFile={}", file.display())).current_dir(&dir);
                command
            }
        };
        let output = std::fs::File::create(&log).expect("gateway log");
        let child = command
            .stdin(Stdio::null())
            .stdout(output.try_clone().expect("gateway log"))
            .stderr(output)
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {kind:?}: {err}"));
        let mut gateway = Gateway { kind, port, admin_port, child, log };
        gateway.wait_ready();
        gateway
    }

    /// The gateway's own output so far (for failure messages).
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Whether the gateway process still runs and its readiness endpoint answers 200.
    pub(crate) fn is_ready(&mut self) -> bool {
        let path = match self.kind {
            Kind::Envoy => "/ready",
            Kind::Traefik => "/ping",
        };
        self.child.try_wait().ok().flatten().is_none()
            && send(self.admin_port, "GET", path, &[], b"").is_ok_and(|r| r.status == 200)
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("{:?} exited ({status}) while starting:\n{}", self.kind, self.log());
            }
            // Ready when the admin endpoint says so and a request through the route reaches
            // the upstream (Traefik loads the plugin after /ping answers).
            if self.is_ready()
                && send(self.port, "GET", "/healthz", &[], b"").is_ok_and(|r| r.status == 200)
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{:?} not ready after 60 s:\n{}",
                self.kind,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A gateway binary from the virtual environment scripts/setup.d/45-gateways.sh fills.
fn binary(name: &str) -> PathBuf {
    let cache = std::env::var_os("SVCLAB_CACHE_DIR").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/svclab")
    });
    let path = cache.join("venv/bin").join(name);
    assert!(
        path.is_file(),
        "{} is missing: the gateway tests need the real {name}; run scripts/setup.d/45-gateways.sh",
        path.display()
    );
    path
}

/// Copies a file of the repository with `${NAME}` placeholders filled in.
fn write_template(source: &str, vars: &[(&str, String)], out: &Path) {
    let mut text = std::fs::read_to_string(workspace().join(source))
        .unwrap_or_else(|err| panic!("{source}: {err}"));
    for (name, value) in vars {
        text = text.replace(&format!("${{{name}}}"), value);
    }
    let left: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim_start().starts_with('#') && line.contains("${"))
        .collect();
    assert!(left.is_empty(), "{source}: placeholders left: {left:?}");
    std::fs::write(out, text).expect("write the gateway configuration");
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("a free loopback port")
}

/// The folder with both gateway guests, built once per test process from source by
/// `cargo xtask plugins` (which also lowers the http-wasm guest for Traefik's wazero);
/// `$SVCLAB_GATEWAY_PLUGINS` points at a folder it filled instead.
pub(crate) fn guests() -> &'static Path {
    static GUESTS: OnceLock<PathBuf> = OnceLock::new();
    GUESTS.get_or_init(|| {
        if let Some(dir) = std::env::var_os("SVCLAB_GATEWAY_PLUGINS") {
            return PathBuf::from(dir);
        }
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gateway-plugins");
        xtask_plugins(&["--out".as_ref(), out.as_os_str()]);
        out
    })
}

/// `input` with the bulk-memory lowering `cargo xtask plugins` gives the Traefik guest.
pub(crate) fn lower_for_traefik(input: &Path, output: &Path) {
    xtask_plugins(&["--lower".as_ref(), input.as_os_str(), output.as_os_str()]);
}

/// Runs `cargo xtask plugins ARGS`.
fn xtask_plugins(args: &[&std::ffi::OsStr]) {
    let cargo = std::env::var("CARGO")
        .ok()
        .or_else(|| option_env!("CARGO").map(str::to_owned))
        .unwrap_or_else(|| "cargo".into());
    // xtask gets a target directory of its own: `cargo test` may still hold the lock of
    // the outer one. Its nested guest builds use `$CARGO_TARGET_DIR/plugin-wasm`, shared
    // with host-runner's build script.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace().join("target"), PathBuf::from);
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace())
        .args(["run", "--quiet", "--package", "xtask", "--target-dir"])
        .arg(target.join("xtask"))
        .args(["--", "plugins"])
        .args(args);
    // The outer build's flags and wrappers are for the test binary.
    for var in ["CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET", "RUSTC_WRAPPER"] {
        command.env_remove(var);
    }
    let status = command.status().expect("run `cargo xtask plugins`");
    assert!(status.success(), "`cargo xtask plugins {args:?}` failed ({status})");
}

/// One HTTP response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Response {
    /// Every value of a header (names compare case-insensitively).
    pub(crate) fn header_values(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends one request on a fresh connection and reads the response.
pub(crate) fn send(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<Response> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    // The gateway may answer (413) before it has read the whole body.
    let _ = stream.write_all(body);
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line)?;
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line {status_line:?}")))?;
    let headers =
        read_headers(&mut reader).ok_or_else(|| std::io::Error::other("truncated headers"))?;
    let has_length = headers.iter().any(|(n, _)| n == "content-length" || n == "transfer-encoding");
    let body = if has_length {
        read_body(&mut reader, &headers).ok_or_else(|| std::io::Error::other("truncated body"))?
    } else {
        let mut body = Vec::new();
        reader.read_to_end(&mut body)?;
        body
    };
    Ok(Response { status, headers, body })
}
