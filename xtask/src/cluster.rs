//! `cargo xtask cluster up|down`: a real etcd and kube-apiserver on loopback, built from their Go
//! modules (`oracle/cluster/build.sh`, cached), for trying svclab's webhook and gateways by hand
//! against the real thing. The tests start their own (`tests/cluster.rs`).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::Value;
use svclab_oracle::cluster::{self, ControlPlane, Settings};

use crate::workspace::{say, target_dir, workspace_root};

const USAGE: &str = "usage: cargo xtask cluster up [--release 1.X[.Y]] [--profile FILE] [--dir DIR]
       cargo xtask cluster down [--dir DIR]";

/// Runs `cluster up` or `cluster down`.
pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let root = workspace_root();
    let mut dir = target_dir(&root).join("cluster/control-plane");
    let mut release = None;
    let mut profile = None;
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        let mut value =
            || rest.next().cloned().with_context(|| format!("{arg} needs a value\n{USAGE}"));
        match arg.as_str() {
            "--release" => release = Some(value()?),
            "--profile" => profile = Some(PathBuf::from(value()?)),
            "--dir" => dir = PathBuf::from(value()?),
            other => bail!("unknown argument {other:?}\n{USAGE}"),
        }
    }
    match args.first().map(String::as_str) {
        Some("up") => up(&root, &dir, release.as_deref(), profile.as_deref()),
        Some("down") => {
            let stopped = cluster::stop(&dir);
            say(&format!("cluster down: {stopped} processes stopped ({})", dir.display()));
            Ok(())
        }
        _ => bail!("{USAGE}"),
    }
}

fn up(
    root: &Path,
    dir: &Path,
    release: Option<&str>,
    profile: Option<&Path>,
) -> anyhow::Result<()> {
    let mut document = match profile {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            serde_norway::from_str::<Value>(&text)
                .with_context(|| format!("{} is not a ClusterProfile", path.display()))?
        }
        None => Value::Object(Default::default()),
    };
    if let Some(release) = release {
        document["kubernetesVersion"] = Value::String(release.trim_start_matches('v').to_owned());
    }
    let settings = Settings::from_profile(&document);
    say(&format!(
        "cluster up: building etcd, kube-apiserver and kube-proxy {} (cached)",
        settings.release
    ));
    let binaries =
        cluster::build(root, &settings.release, &target_dir(root).join("oracle/cluster"))?;
    let plane = ControlPlane::start(&binaries, &settings, dir)?;
    say(&format!(
        "cluster up: kube-apiserver {} on https://127.0.0.1:{} (ranges {}, node ports {}, gates {:?})",
        settings.release,
        plane.port,
        settings.service_cluster_ip_ranges.join(","),
        settings.service_node_port_range,
        settings.feature_gates
    ));
    say(&format!(
        "stop it with: cargo xtask cluster down{}",
        if dir.ends_with("cluster/control-plane") {
            String::new()
        } else {
            format!(" --dir {}", dir.display())
        }
    ));
    // The kubeconfig's path last: `export KUBECONFIG=$(cargo xtask cluster up | tail -1)`.
    say(&plane.kubeconfig().display().to_string());
    plane.detach();
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use crate::workspace::{cargo, target_dir, workspace_root};

    fn xtask(args: &[&str]) -> String {
        let output = Command::new(cargo())
            .current_dir(workspace_root())
            .arg("xtask")
            .args(args)
            .output()
            .expect("cargo runs");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "cargo xtask {args:?} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }

    /// `cluster up` leaves etcd and kube-apiserver of the newest release running on loopback
    /// only, with a kubeconfig kubectl can use; `cluster down` stops both.
    #[test]
    fn up_serves_on_loopback_and_down_stops_it() {
        let dir = target_dir(&workspace_root()).join("tmp/xtask-cluster");
        let dir_arg = dir.display().to_string();
        let up = xtask(&["cluster", "up", "--dir", &dir_arg]);
        let kubeconfig = up.lines().last().unwrap_or_default().to_owned();
        assert!(kubeconfig.ends_with("/kubeconfig"), "the last line is the kubeconfig:\n{up}");
        let pids: Vec<String> = std::fs::read_to_string(dir.join("pids"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect();
        assert_eq!(pids.len(), 2, "etcd and kube-apiserver");
        let version = Command::new("kubectl")
            .args(["--kubeconfig", &kubeconfig, "get", "--raw", "/version"])
            .env("HOME", &dir)
            .output()
            .expect("kubectl runs");
        let text = String::from_utf8_lossy(&version.stdout);
        let newest = format!("\"gitVersion\": \"v{}\"", svclab_core::Version::NEWEST.modelled());
        assert!(text.contains(&newest), "kube-apiserver's /version: {text}");
        // Every listening socket of the two processes is on 127.0.0.1.
        let listening = Command::new("ss").args(["-Htlnp"]).output().expect("ss runs");
        let listening = String::from_utf8_lossy(&listening.stdout);
        let theirs: Vec<&str> = listening
            .lines()
            .filter(|l| pids.iter().any(|pid| l.contains(&format!("pid={pid},"))))
            .collect();
        assert!(theirs.len() >= 3, "etcd's two ports and kube-apiserver's: {listening}");
        for line in &theirs {
            let local = line.split_whitespace().nth(3).unwrap_or_default();
            assert!(local.starts_with("127.0.0.1:"), "listens beyond loopback: {line}");
        }
        let down = xtask(&["cluster", "down", "--dir", &dir_arg]);
        assert!(down.contains("2 processes stopped"), "{down}");
        for pid in &pids {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            assert!(
                state.split_whitespace().nth(2).is_none_or(|s| s == "Z"),
                "process {pid} still runs after down"
            );
        }
    }
}
