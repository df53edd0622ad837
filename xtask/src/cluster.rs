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
    say(&plane.kubeconfig().display().to_string());
    say(&format!(
        "stop it with: cargo xtask cluster down{}",
        if dir.ends_with("cluster/control-plane") {
            String::new()
        } else {
            format!(" --dir {}", dir.display())
        }
    ));
    plane.detach();
    Ok(())
}
