//! A real control plane on loopback: etcd and kube-apiserver of one release, built from their Go
//! modules by `oracle/cluster/build.sh` (with kube-proxy), started with throwaway credentials and
//! the service ranges and feature gates of a ClusterProfile, and a kubeconfig for kubectl.
//!
//! Nothing listens beyond 127.0.0.1. A [`ControlPlane`] stops its processes when dropped;
//! [`ControlPlane::detach`] leaves them running for `cargo xtask cluster up`, and [`stop`] ends
//! them from the folder's `pids` file (`cargo xtask cluster down`).
//!
//! [`blackbox`] drives generated cases through a running kube-apiserver and compares its answers
//! with svclab's.

pub mod blackbox;
pub mod http;

use std::collections::BTreeMap;
use std::fmt;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The programs of one release, as `oracle/cluster/build.sh` leaves them.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// `v1.37.2`.
    pub release: String,
    /// The folder holding `etcd`, `kube-apiserver` and `kube-proxy`.
    pub dir: PathBuf,
}

impl Binaries {
    /// The path of one of the programs.
    pub fn program(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// Why the control plane could not be built, started or stopped.
#[derive(Debug)]
pub enum ClusterError {
    /// `build.sh` failed (the tail of its output).
    Build(String),
    /// A program did not start or did not become ready (what, and the tail of its log).
    Start(String),
    /// Files of the control plane's folder.
    Io(std::io::Error),
}

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClusterError::Build(output) => {
                write!(f, "building the control plane failed:\n{output}")
            }
            ClusterError::Start(what) => write!(f, "{what}"),
            ClusterError::Io(error) => write!(f, "control plane files: {error}"),
        }
    }
}

impl std::error::Error for ClusterError {}

impl From<std::io::Error> for ClusterError {
    fn from(error: std::io::Error) -> Self {
        ClusterError::Io(error)
    }
}

/// Builds (or finds, cached) etcd, kube-apiserver and kube-proxy of `release` (`v1.37.2`) under
/// `out/RELEASE`.
pub fn build(root: &Path, release: &str, out: &Path) -> Result<Binaries, ClusterError> {
    let script = root.join("oracle/cluster/build.sh");
    let dir = out.join(release);
    let output = Command::new("bash")
        .arg(&script)
        .arg(release)
        .arg(&dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|err| ClusterError::Build(format!("cannot run {}: {err}", script.display())))?;
    if !output.status.success() {
        let text = String::from_utf8_lossy(&output.stderr);
        let lines: Vec<&str> = text.lines().collect();
        return Err(ClusterError::Build(lines[lines.len().saturating_sub(40)..].join("\n")));
    }
    Ok(Binaries { release: release.to_owned(), dir })
}

/// The programs of the newest release svclab models, built (or found, cached) once per
/// process under `target/oracle/cluster`: what the tests run.
pub fn newest(root: &Path, target: &Path) -> Result<&'static Binaries, String> {
    static BUILT: std::sync::OnceLock<Result<Binaries, String>> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let release = format!("v{}", svclab_core::Version::NEWEST.modelled());
            build(root, &release, &target.join("oracle/cluster")).map_err(|err| err.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// What kube-apiserver is started with, from a ClusterProfile.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Settings {
    /// The release, `v1.37.2`.
    pub release: String,
    /// `--service-cluster-ip-range`, primary first.
    pub service_cluster_ip_ranges: Vec<String>,
    /// `--service-node-port-range`.
    pub service_node_port_range: String,
    /// `--feature-gates`: only what the profile sets.
    pub feature_gates: BTreeMap<String, bool>,
}

impl Settings {
    /// A ClusterProfile's settings: its `kubernetesVersion` (a bare minor is the patch svclab
    /// was compared with upstream at, `oracle/releases.txt`), ranges (kubeadm's defaults when
    /// absent, as svclab's) and gates.
    pub fn from_profile(profile: &Value) -> Settings {
        let version = profile["kubernetesVersion"]
            .as_str()
            .and_then(svclab_core::Version::parse)
            .unwrap_or(svclab_core::Version::NEWEST)
            .modelled();
        let ranges = match &profile["serviceClusterIPRanges"] {
            Value::Array(list) => {
                list.iter().filter_map(Value::as_str).map(str::to_owned).collect()
            }
            Value::String(flag) => flag.split(',').map(|r| r.trim().to_owned()).collect(),
            _ => vec!["10.96.0.0/12".to_owned()],
        };
        let feature_gates = profile["featureGates"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(name, value)| Some((name.clone(), value.as_bool()?)))
            .collect();
        Settings {
            release: format!("v{version}"),
            service_cluster_ip_ranges: ranges,
            service_node_port_range: profile["serviceNodePortRange"]
                .as_str()
                .unwrap_or("30000-32767")
                .to_owned(),
            feature_gates,
        }
    }

    /// The release's minor.
    pub fn minor(&self) -> u32 {
        self.release.split('.').nth(1).and_then(|m| m.parse().ok()).unwrap_or(0)
    }

    /// kube-apiserver's flags for these settings, beside the ones every start has.
    fn flags(&self) -> Vec<String> {
        let mut flags = vec![
            format!("--service-cluster-ip-range={}", self.service_cluster_ip_ranges.join(",")),
            format!("--service-node-port-range={}", self.service_node_port_range),
        ];
        if !self.feature_gates.is_empty() {
            let gates: Vec<String> =
                self.feature_gates.iter().map(|(name, on)| format!("{name}={on}")).collect();
            flags.push(format!("--feature-gates={}", gates.join(",")));
        }
        // ServiceCIDR and IPAddress are served only with their API version enabled while
        // MultiCIDRServiceAllocator is not GA: networking.k8s.io/v1alpha1 in 1.27 to 1.30,
        // v1beta1 in 1.31 and 1.32 (pkg/controlplane/apiserver/options, the gate's KEP-1880
        // graduation; kube-apiserver refuses to start with the gate on and the API off).
        if self.feature_gates.get("MultiCIDRServiceAllocator") == Some(&true) {
            match self.minor() {
                27..=30 => flags.push("--runtime-config=networking.k8s.io/v1alpha1=true".into()),
                31 | 32 => flags.push("--runtime-config=networking.k8s.io/v1beta1=true".into()),
                _ => {}
            }
        }
        flags
    }
}

/// A running etcd and kube-apiserver, stopped when dropped.
#[derive(Debug)]
pub struct ControlPlane {
    /// The folder with the kubeconfig, logs, credentials and etcd's data.
    pub dir: PathBuf,
    /// kube-apiserver's secure port on 127.0.0.1.
    pub port: u16,
    /// What it runs with.
    pub settings: Settings,
    /// The network namespace it runs in (`ip netns exec`), `None` for the caller's.
    netns: Option<String>,
    children: Vec<Child>,
}

impl ControlPlane {
    /// Starts etcd and kube-apiserver of `binaries` with `settings`, their files under `dir`
    /// (emptied first), and returns once kube-apiserver answers `/readyz`.
    pub fn start(
        binaries: &Binaries,
        settings: &Settings,
        dir: &Path,
    ) -> Result<ControlPlane, ClusterError> {
        ControlPlane::start_in(binaries, settings, dir, None)
    }

    /// [`ControlPlane::start`] inside the network namespace `netns` (`ip netns exec`, root):
    /// its loopback is the namespace's, and [`ControlPlane::kubectl`] runs there too, so a
    /// kube-proxy in that namespace reads it on 127.0.0.1.
    pub fn start_in(
        binaries: &Binaries,
        settings: &Settings,
        dir: &Path,
        netns: Option<&str>,
    ) -> Result<ControlPlane, ClusterError> {
        if dir.exists() {
            stop(dir);
            std::fs::remove_dir_all(dir)?;
        }
        std::fs::create_dir_all(dir.join("pki"))?;
        let dir = dir.canonicalize()?;
        let mut plane = ControlPlane {
            dir: dir.clone(),
            port: 0,
            settings: settings.clone(),
            netns: netns.map(str::to_owned),
            children: vec![],
        };

        // Throwaway credentials: a service-account signing key and one static token for an
        // administrator (group system:masters, which RBAC's bootstrap policy binds to
        // cluster-admin). kube-apiserver makes its own serving certificate and CA in --cert-dir.
        let key = dir.join("pki/sa.key");
        let status = Command::new("openssl")
            .args(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out"])
            .arg(&key)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|err| ClusterError::Start(format!("cannot run openssl: {err}")))?;
        if !status.success() {
            return Err(ClusterError::Start(format!("openssl could not make {}", key.display())));
        }
        let token = random_hex()?;
        std::fs::write(
            dir.join("pki/tokens.csv"),
            format!("{token},svclab-admin,svclab-admin,\"system:masters\"\n"),
        )?;

        // An audit log of Services and EndpointSlices at the Metadata level: what the webhook's
        // audit annotations reach (`<webhook>/<key>`, and `failed-open.validating.webhook...`).
        std::fs::write(
            dir.join("audit-policy.yaml"),
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n  resources:\n  - group: \"\"\n    resources: [services]\n  - group: discovery.k8s.io\n    resources: [endpointslices]\n- level: None\n",
        )?;

        let (client, peer, port) = (free_port()?, free_port()?, free_port()?);
        plane.port = port;
        let etcd_url = format!("http://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        plane.spawn(
            &binaries.program("etcd"),
            &[
                "--name=svclab".into(),
                format!("--data-dir={}", dir.join("etcd").display()),
                format!("--listen-client-urls={etcd_url}"),
                format!("--advertise-client-urls={etcd_url}"),
                format!("--listen-peer-urls={peer_url}"),
                format!("--initial-advertise-peer-urls={peer_url}"),
                format!("--initial-cluster=svclab={peer_url}"),
                // A throwaway store: no fsync, as upstream's integration tests run it.
                "--unsafe-no-fsync=true".into(),
                "--log-level=warn".into(),
            ],
            "etcd",
        )?;
        // In another namespace kube-apiserver's readiness (which includes etcd's) is the wait.
        plane.wait("etcd", Duration::from_secs(30), || {
            netns.is_some() || http::get(client, "/health").is_ok_and(|r| r.status == 200)
        })?;

        let mut flags = vec![
            format!("--etcd-servers={etcd_url}"),
            "--bind-address=127.0.0.1".into(),
            "--advertise-address=127.0.0.1".into(),
            // The master endpoint reconciler refuses a loopback address ("may not be in the
            // loopback range", pkg/controlplane/reconcilers): the `kubernetes` Service is kept,
            // its EndpointSlice is not.
            "--endpoint-reconciler-type=none".into(),
            format!("--secure-port={port}"),
            format!("--cert-dir={}", dir.join("pki").display()),
            format!("--token-auth-file={}", dir.join("pki/tokens.csv").display()),
            "--authorization-mode=RBAC".into(),
            "--service-account-issuer=https://kubernetes.default.svc".into(),
            format!("--service-account-key-file={}", key.display()),
            format!("--service-account-signing-key-file={}", key.display()),
            format!("--audit-policy-file={}", dir.join("audit-policy.yaml").display()),
            format!("--audit-log-path={}", dir.join("audit.log").display()),
        ];
        flags.extend(settings.flags());
        plane.spawn(&binaries.program("kube-apiserver"), &flags, "kube-apiserver")?;
        let kubeconfig = plane.kubeconfig();
        let ca = dir.join("pki/apiserver.crt");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: svclab\n  cluster:\n    server: https://127.0.0.1:{port}\n    certificate-authority: {}\nusers:\n- name: svclab-admin\n  user:\n    token: {token}\ncontexts:\n- name: svclab\n  context:\n    cluster: svclab\n    user: svclab-admin\ncurrent-context: svclab\n",
                ca.display()
            ),
        )?;
        plane.wait("kube-apiserver", Duration::from_secs(120), || {
            ca.is_file()
                && kubectl(&dir, netns)
                    .args(["get", "--raw=/readyz"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
        })?;
        Ok(plane)
    }

    /// The kubeconfig (a file named `kubeconfig` in the folder).
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }

    /// `kubectl` with this control plane's kubeconfig and a HOME of its own (its discovery
    /// cache stays in the folder).
    pub fn kubectl(&self) -> Command {
        kubectl(&self.dir, self.netns.as_deref())
    }

    /// A program's log so far (`etcd` or `kube-apiserver`), its last `lines`.
    pub fn log(&self, program: &str, lines: usize) -> String {
        let text =
            std::fs::read_to_string(self.dir.join(format!("{program}.log"))).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Leaves the processes running (their ids are in the folder's `pids`); [`stop`] ends them.
    pub fn detach(mut self) {
        self.children.clear();
    }

    fn spawn(&mut self, program: &Path, args: &[String], name: &str) -> Result<(), ClusterError> {
        let log = std::fs::File::create(self.dir.join(format!("{name}.log")))?;
        let child = in_netns(self.netns.as_deref(), program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .map_err(|err| {
                ClusterError::Start(format!("cannot start {}: {err}", program.display()))
            })?;
        use std::io::Write as _;
        let mut pids =
            std::fs::OpenOptions::new().create(true).append(true).open(self.dir.join("pids"))?;
        writeln!(pids, "{}", child.id())?;
        self.children.push(child);
        Ok(())
    }

    fn wait(
        &mut self,
        name: &str,
        limit: Duration,
        ready: impl Fn() -> bool,
    ) -> Result<(), ClusterError> {
        let deadline = Instant::now() + limit;
        loop {
            for child in &mut self.children {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(ClusterError::Start(format!(
                        "{name} exited ({status}) while starting:\n{}",
                        self.log(name, 30)
                    )));
                }
            }
            if ready() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(ClusterError::Start(format!(
                    "{name} not ready after {} s:\n{}",
                    limit.as_secs(),
                    self.log(name, 30)
                )));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        // kube-apiserver first: it writes to etcd until it stops.
        for child in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if !self.children.is_empty() {
            let _ = std::fs::remove_file(self.dir.join("pids"));
        }
    }
}

/// Stops the processes a detached control plane left in `dir` (its `pids`, newest first: TERM,
/// then KILL after 3 s). Returns how many were running.
pub fn stop(dir: &Path) -> usize {
    let pids: Vec<u32> = std::fs::read_to_string(dir.join("pids"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    let alive = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| stat.split_whitespace().nth(2).is_none_or(|state| state != "Z"))
    };
    let running: Vec<u32> = pids.iter().rev().copied().filter(|&pid| alive(pid)).collect();
    for (signal, wait) in [("-TERM", 3), ("-KILL", 5)] {
        for pid in running.iter().filter(|&&pid| alive(pid)) {
            let _ = Command::new("kill").arg(signal).arg(pid.to_string()).status();
        }
        let deadline = Instant::now() + Duration::from_secs(wait);
        while running.iter().any(|&pid| alive(pid)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let _ = std::fs::remove_file(dir.join("pids"));
    running.len()
}

/// `program`, run in the network namespace `netns` when given.
fn in_netns(netns: Option<&str>, program: &Path) -> Command {
    match netns {
        Some(netns) => {
            let mut command = Command::new("ip");
            command.args(["netns", "exec", netns]).arg(program);
            command
        }
        None => Command::new(program),
    }
}

/// `kubectl` with the kubeconfig in `dir`, and `dir` as HOME (in `netns` when given).
fn kubectl(dir: &Path, netns: Option<&str>) -> Command {
    let mut command = in_netns(netns, Path::new("kubectl"));
    command.arg(format!("--kubeconfig={}", dir.join("kubeconfig").display()));
    command.env("HOME", dir).env_remove("KUBECONFIG");
    command
}

/// A free port on 127.0.0.1.
pub fn free_port() -> Result<u16, ClusterError> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// 16 random bytes as hex, for the throwaway token.
fn random_hex() -> Result<String, ClusterError> {
    use std::io::Read as _;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
