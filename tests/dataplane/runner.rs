//! The cases of the suite, the environment check, and the run of one case: build the
//! topology, load the rules, probe, compare with the expectations, report the figures.

use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use svclab_core::{EndpointSlice, Input, Object, Service};

use crate::bootstrap;
use crate::case::{Expect, Mode, Model, Observed, Probe, Role, Target, parse_cidr_v4, parse_v4};
use crate::netns::{self, Netns};
use crate::topology::{Spec, Topology};

/// Connect timeout of one attempt; a dropped SYN shows up as a timeout after this long.
const ATTEMPT_TIMEOUT_MS: &str = "1000";

/// Where a case's rules come from.
#[derive(Debug, Clone)]
pub(crate) enum RulesFrom {
    /// The golden's own expected text (`expected.iptables`, or golden 17's transaction for
    /// nftables) plus the hand-written jump rules: proves the harness without svclab.
    GoldenText,
}

/// One case: a scenario in one proxy mode.
#[derive(Debug, Clone)]
pub(crate) struct CaseDef {
    /// Golden folder name or example file name.
    pub(crate) id: String,
    /// The golden folder or example file.
    pub(crate) path: PathBuf,
    pub(crate) mode: Mode,
    pub(crate) rules: RulesFrom,
}

impl CaseDef {
    pub(crate) fn name(&self) -> String {
        let kind = match self.rules {
            RulesFrom::GoldenText => "golden-text",
        };
        format!("{kind}/{}/{}", self.id, self.mode.as_str())
    }
}

/// Every case of the suite.
pub(crate) fn cases() -> Vec<CaseDef> {
    let mut out = Vec::new();
    let Some(conformance) = svclab_tests::conformance_dir() else { return out };
    let proxy = conformance.join("proxy");
    for id in [
        "01-overall-current",
        "04-clusterip-two-services",
        "05-itp-cluster-three-endpoints",
        "06-itp-local-with-local-endpoint",
    ] {
        let path = proxy.join(id);
        out.push(CaseDef {
            id: id.to_owned(),
            path: path.clone(),
            mode: Mode::Iptables,
            rules: RulesFrom::GoldenText,
        });
        if id == "01-overall-current" {
            // Golden 17 is the nftables rendering of the same objects.
            out.push(CaseDef {
                id: id.to_owned(),
                path,
                mode: Mode::Nftables,
                rules: RulesFrom::GoldenText,
            });
        }
    }
    out
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// The `iptables-restore` binary: the nft backend unless `SVCLAB_DATAPLANE_IPTABLES=legacy`.
pub(crate) fn iptables_restore() -> &'static str {
    match std::env::var("SVCLAB_DATAPLANE_IPTABLES").as_deref() {
        Ok("legacy") => "iptables-legacy-restore",
        _ => "iptables-nft-restore",
    }
}

/// Checks root, the tools and network-namespace support.
pub(crate) fn preflight() -> Result<(), String> {
    if !cfg!(target_os = "linux") {
        return Err("not Linux".into());
    }
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|err| format!("/proc/self/status: {err}"))?;
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|rest| rest.split_whitespace().nth(1))
        .unwrap_or("?");
    if euid != "0" {
        return Err(format!("not root (effective uid {euid})"));
    }
    let missing: Vec<&str> =
        ["ip", iptables_restore(), "nft", "nfacct"].into_iter().filter(|p| !which(p)).collect();
    if !missing.is_empty() {
        return Err(format!(
            "missing {} (run scripts/setup.d/40-dataplane.sh: apt-get install iproute2 iptables nftables nfacct)",
            missing.join(", ")
        ));
    }
    let probe = Netns::create(format!("{}{}-preflight", netns::PREFIX, std::process::id()))
        .map_err(|err| format!("no network namespace support: {err}"))?;
    drop(probe);
    if svclab_tests::conformance_dir().is_none() {
        return Err("the shared conformance directory (../shared/conformance or $SVCLAB_CONFORMANCE_DIR) is missing".into());
    }
    Ok(())
}

#[allow(clippy::print_stdout, reason = "the suite reports its figures on stdout")]
pub(crate) fn announce_cleanup(removed: Vec<String>) {
    if !removed.is_empty() {
        println!("dataplane: removed stale namespaces of an earlier run: {}", removed.join(", "));
    }
}

#[allow(clippy::print_stdout, reason = "the suite reports its figures on stdout")]
pub(crate) fn announce_skip() {
    println!(
        "dataplane: SKIPPED (SVCLAB_SKIP_DATAPLANE=1): no rules were loaded and no traffic was sent"
    );
}

#[allow(clippy::print_stdout, reason = "the suite reports its figures on stdout")]
fn report(text: &str) {
    println!("{text}");
    if let Ok(path) = std::env::var("SVCLAB_DATAPLANE_REPORT") {
        use std::io::Write;
        if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = file.write_all(text.as_bytes());
            let _ = file.write_all(b"\n");
        }
    }
}

/// Everything a case needs before touching the kernel.
struct Prepared {
    rules: String,
    /// iptables-restore input loaded after `rules` (the built-in jumps), if any.
    jumps: Option<String>,
    node_ip: Ipv4Addr,
    local_cidr: Option<(Ipv4Addr, u8)>,
    pod_if_prefix: String,
    model: Model,
    golden: String,
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))
}

/// Services and EndpointSlices as written in a scenario file.
fn objects(path: &Path) -> Result<(Vec<Service>, Vec<EndpointSlice>), String> {
    let text = read(path)?;
    let scenario = svclab_core::parse(&[Input::new(path.display().to_string(), &text)]);
    let mut services = Vec::new();
    let mut slices = Vec::new();
    for object in scenario.objects {
        match object {
            Object::Service(s) => services.push(s.value),
            Object::EndpointSlice(s) => slices.push(s.value),
            _ => {}
        }
    }
    Ok((services, slices))
}

fn prepare(case: &CaseDef) -> Result<Prepared, String> {
    let config: serde_json::Value = serde_norway::from_str(&read(&case.path.join("config.yaml"))?)
        .map_err(|err| format!("config.yaml: {err}"))?;
    let node_ip = config["nodeIP"].as_str().and_then(parse_v4).unwrap_or(bootstrap::GOLDEN_NODE_IP);
    let local_cidr = config["detectLocal"]["clusterCIDRs"][0]
        .as_str()
        .or_else(|| config["detectLocal"]["podCIDRs"][0].as_str())
        .and_then(parse_cidr_v4);
    let pod_if_prefix =
        config["detectLocal"]["interfaceNamePrefix"].as_str().unwrap_or("veth").to_owned();
    let (services, slices) = objects(&case.path.join("input.yaml"))?;
    let model =
        Model::new(&services.iter().collect::<Vec<_>>(), &slices.iter().collect::<Vec<_>>());
    let (rules, jumps) = match (&case.rules, case.mode) {
        (RulesFrom::GoldenText, Mode::Iptables) => {
            let rules = read(&case.path.join("expected.iptables"))?;
            let kube_firewall = rules.contains(":KUBE-FIREWALL ");
            (rules, Some(bootstrap::builtin_jumps(kube_firewall)))
        }
        (RulesFrom::GoldenText, Mode::Nftables) => {
            let dir = case.path.parent().map(|p| p.join("17-nftables-overall")).unwrap_or_default();
            (bootstrap::loadable_nft(&read(&dir.join("expected.nft"))?), None)
        }
    };
    Ok(Prepared {
        rules,
        jumps,
        node_ip,
        local_cidr,
        pod_if_prefix,
        model,
        golden: case.id.clone(),
    })
}

static NEXT_TAG: AtomicUsize = AtomicUsize::new(0);

/// `--nfacct-name X` counters a payload uses (kube-proxy only writes them when they exist).
fn nfacct_names(rules: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut words = rules.split_whitespace();
    while let Some(word) = words.next() {
        if word == "--nfacct-name"
            && let Some(name) = words.next()
            && !names.iter().any(|n| n == name)
        {
            names.push(name.to_owned());
        }
    }
    names
}

fn load(topo: &Topology, mode: Mode, prepared: &Prepared) -> Result<(), String> {
    let node = &topo.node;
    match mode {
        Mode::Iptables => {
            for name in nfacct_names(&prepared.rules) {
                node.exec("nfacct", &["add", &name])?;
            }
            let restore = iptables_restore();
            node.exec_with_input(restore, &["--noflush"], &prepared.rules)
                .map_err(|err| format!("loading the payload: {err}"))?;
            if let Some(jumps) = &prepared.jumps {
                node.exec_with_input(restore, &["--noflush"], jumps)
                    .map_err(|err| format!("loading the built-in jumps: {err}"))?;
            }
        }
        Mode::Nftables => {
            node.exec_with_input("nft", &["-f", "-"], &prepared.rules)
                .map_err(|err| format!("loading the nftables transaction: {err}"))?;
        }
    }
    Ok(())
}

/// Runs one case; the error lists every probe that did not behave as expected.
pub(crate) fn run(case: &CaseDef) -> Result<(), String> {
    let prepared = prepare(case)?;
    let exe = std::env::current_exe().map_err(|err| format!("current_exe: {err}"))?;
    let model = &prepared.model;
    let node_ip = prepared.node_ip;
    let mut taken: Vec<Ipv4Addr> = model.pods.iter().map(|p| p.ip).collect();
    taken.push(node_ip);
    let pod_src = model.pod_source(prepared.local_cidr, &taken);
    taken.push(pod_src);
    let ext_src = model.external_source(&taken);
    taken.push(ext_src);
    let allowed_src = model.allowed_source(&taken);
    let source = |role: Role| match role {
        Role::Node => Some(node_ip),
        Role::Pod => Some(pod_src),
        Role::External => Some(ext_src),
        Role::Allowed => allowed_src,
    };

    let mut probes = Vec::new();
    for Target { what, role, dst } in model.targets(node_ip) {
        let Some(src) = source(role) else { continue };
        let expect = bootstrap::expect(&prepared.golden, role, dst)?;
        probes.push(Probe { what, role, src, dst, expect });
    }

    let mut clients = vec![pod_src, ext_src];
    clients.extend(allowed_src);
    let spec = Spec {
        tag: format!("{}-{}", std::process::id(), NEXT_TAG.fetch_add(1, Ordering::SeqCst)),
        node_ip,
        pods: model.pods.clone(),
        clients,
        pod_if_prefix: prepared.pod_if_prefix.clone(),
        route_localnet: prepared.rules.contains("block incoming localnet connections"),
    };
    let topo = Topology::build(&spec, &exe)?;
    load(&topo, case.mode, &prepared)?;

    let mut text =
        format!("dataplane {}: node {node_ip}, {} endpoint pods", case.name(), model.pods.len());
    let mut failures = Vec::new();
    let mut total = 0u32;
    for probe in &probes {
        let ns = match probe.role {
            Role::Node => Some(&topo.node),
            _ => topo.leaf(probe.src),
        };
        let Some(ns) = ns else { return Err(format!("no namespace for {}", probe.src)) };
        let output = netns::run(ns.command(&exe).args([
            crate::agent::AGENT_ARG,
            "probe",
            &probe.dst.to_string(),
            &probe.count().to_string(),
            ATTEMPT_TIMEOUT_MS,
        ]))?;
        let observed = Observed::parse(&output);
        total += observed.total;
        let verdict = observed.check(probe, node_ip);
        let _ = write!(
            text,
            "\n  {:<4} {} from {} ({}) -> {}: expect {}; {}",
            if verdict.is_ok() { "ok" } else { "FAIL" },
            probe.what,
            probe.role.as_str(),
            probe.src,
            probe.dst,
            describe_expect(&probe.expect),
            observed.describe(&probe.expect)
        );
        if let Err(err) = verdict {
            failures.push(format!(
                "{} from {} -> {}: {err}",
                probe.what,
                probe.role.as_str(),
                probe.dst
            ));
        }
    }
    let _ = write!(text, "\n  total {total} connections in {} probes", probes.len());
    if !model.skipped.is_empty() {
        let _ = write!(text, "\n  not probed (not TCP): {}", model.skipped.join(", "));
    }
    report(&text);
    drop(topo);
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n")) }
}

fn describe_expect(expect: &Expect) -> String {
    match expect {
        Expect::Refused => "refused (REJECT)".into(),
        Expect::Dropped => "dropped (timeout)".into(),
        Expect::Land { endpoints, masquerade, affinity } => {
            let eps: Vec<String> = endpoints.iter().map(|(e, p)| format!("{e}@{p:.3}")).collect();
            format!(
                "{}{}{}",
                eps.join(" "),
                if *masquerade { " masquerade" } else { "" },
                if *affinity { " affinity" } else { "" }
            )
        }
    }
}
