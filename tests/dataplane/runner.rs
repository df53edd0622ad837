//! The cases of the suite, the environment check, and the run of one case: build the
//! topology, load the rules, probe, compare with the expectations, report the figures.

#[path = "runner/plan.rs"]
mod plan;
#[path = "runner/probing.rs"]
mod probing;

use std::fmt::Write as _;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use svclab_core::{EndpointSlice, Input, Object, Service, World};

use crate::bootstrap;
use crate::case::{Expect, Family, Mode, Model, Probe, Verdict, parse_cidr_v4, parse_v4};
use crate::netns::{self, Netns};
use crate::svclab::{self, read};
use crate::topology::{Spec, Topology};
use plan::{Plan, Sources};
use probing::{Judged, judge, run_probes};

/// Where a case's rules and expectations come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RulesFrom {
    /// The golden's own expected text (`expected.iptables`, or golden 17's transaction for
    /// nftables) plus the hand-written jump rules, checked against hand-worked expectations:
    /// proves the harness without svclab.
    GoldenText,
    /// `svclab render --standalone`, checked against `svclab trace`.
    Svclab,
    /// Negative control: the golden's topology with no rules at all. Every probe must be
    /// refused (nothing listens on service addresses), which shows that the traffic of the
    /// other cases is carried by the loaded rules and by nothing else in the topology.
    Nothing,
}

/// What a case is built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A folder of the shared proxy goldens (input.yaml + config.yaml).
    Golden,
    /// A scenario file of `examples/` (or of the suite's own scenarios).
    Example,
    /// A scenario the differential run generated from a seed (`CaseDef::text`).
    Generated,
}

/// One case: a scenario in one proxy mode.
#[derive(Debug, Clone)]
pub(crate) struct CaseDef {
    /// Golden folder name or example file name.
    pub(crate) id: String,
    /// The golden folder or example file.
    pub(crate) path: PathBuf,
    pub(crate) kind: Kind,
    pub(crate) mode: Mode,
    pub(crate) rules: RulesFrom,
    /// Today's known failure in this mode (text the error must contain), from a
    /// `# dataplane-known-failure <mode>: <text>` line of the scenario: asserted, not hidden.
    pub(crate) known_failure: Option<String>,
    /// The scenario text of a generated case (`Kind::Generated`).
    pub(crate) text: Option<String>,
    /// Differential run: fewer connections per probe, a shorter timeout, and more probes
    /// (NodePorts from the pod and the node too).
    pub(crate) light: bool,
    /// The family rendered and probed (the examples and goldens: IPv4).
    pub(crate) family: Family,
}

impl CaseDef {
    pub(crate) fn name(&self) -> String {
        let source = match (self.rules, self.kind) {
            (RulesFrom::GoldenText, _) => "golden-text",
            (RulesFrom::Nothing, _) => "control-no-rules",
            (RulesFrom::Svclab, Kind::Golden) => "svclab-golden",
            (RulesFrom::Svclab, Kind::Example) => "svclab-example",
            (RulesFrom::Svclab, Kind::Generated) => "differential",
        };
        match self.family {
            Family::V4 => format!("{source}/{}/{}", self.id, self.mode.as_str()),
            Family::V6 => format!("{source}/{}/ipv6/{}", self.id, self.mode.as_str()),
        }
    }
}

/// Golden cases the suite runs (the issue names 04, 05 and 06; 01 exercises every kind of
/// rule: NodePorts, external and load-balancer IPs, source ranges, REJECT and DROP).
const GOLDENS: [&str; 4] = [
    "01-overall-current",
    "04-clusterip-two-services",
    "05-itp-cluster-three-endpoints",
    "06-itp-local-with-local-endpoint",
];

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"));
    files.sort();
    files
}

/// Every case of the suite: the goldens from their own text and through svclab, and every
/// example (and suite scenario) that has endpoints, in both modes.
pub(crate) fn cases() -> Vec<CaseDef> {
    let mut out = Vec::new();
    let modes = [Mode::Iptables, Mode::Nftables];
    let mut add = |id: &str, path: &Path, kind: Kind, mode: Mode, rules: RulesFrom| {
        out.push(CaseDef {
            id: id.to_owned(),
            path: path.to_path_buf(),
            kind,
            mode,
            rules,
            known_failure: None,
            text: None,
            light: false,
            family: Family::V4,
        });
    };
    // The goldens come from the shared conformance directory when it is there, else from the
    // in-repo copies under tests/data/proxy, so the suite is hermetic.
    let shared =
        svclab_tests::conformance_dir().map(|dir| dir.join("proxy")).filter(|p| p.is_dir());
    {
        let proxy = shared.unwrap_or_else(|| svclab_tests::data_dir().join("proxy"));
        for id in GOLDENS {
            let path = proxy.join(id);
            let overall = id == "01-overall-current";
            add(id, &path, Kind::Golden, Mode::Iptables, RulesFrom::GoldenText);
            if overall {
                // Golden 17 is the nftables rendering of the same objects.
                add(id, &path, Kind::Golden, Mode::Nftables, RulesFrom::GoldenText);
                add(id, &path, Kind::Golden, Mode::Iptables, RulesFrom::Nothing);
            }
            for mode in modes {
                add(id, &path, Kind::Golden, mode, RulesFrom::Svclab);
            }
        }
    }
    let root = svclab_tests::workspace_root();
    let mut files = yaml_files(&root.join("examples"));
    files.extend(yaml_files(&root.join("tests").join("dataplane").join("scenarios")));
    files.extend(yaml_files(&root.join("tests").join("dataplane").join("pending")));
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let Ok(evaluated) = svclab::evaluate(&[(path.display().to_string(), text.clone())]) else {
            continue;
        };
        if !svclab::has_endpoints(&evaluated.world) {
            continue;
        }
        let dir = path
            .parent()
            .and_then(|d| d.file_name())
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        for mode in modes {
            // No nftables mode before 1.29: kube-proxy refuses it (core/src/proxy/startup.rs),
            // so there are no rules to load.
            if mode == Mode::Nftables && evaluated.world.profile.version.minor < 29 {
                continue;
            }
            let marker = format!("# dataplane-known-failure {}:", mode.as_str());
            let known_failure = text
                .lines()
                .find_map(|l| l.strip_prefix(marker.as_str()))
                .map(|t| t.trim().to_owned());
            out.push(CaseDef {
                id: format!("{dir}/{file}"),
                path: path.clone(),
                kind: Kind::Example,
                mode,
                rules: RulesFrom::Svclab,
                known_failure,
                text: None,
                light: false,
                family: Family::V4,
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

/// `iptables_restore()` for the family of `ip` (`ip6tables-...` for IPv6).
fn restore_for(ip: IpAddr) -> String {
    if ip.is_ipv6() {
        iptables_restore().replacen("iptables", "ip6tables", 1)
    } else {
        iptables_restore().to_owned()
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
    let restore6 = restore_for(IpAddr::from([0u16; 8]));
    let missing: Vec<&str> = ["ip", iptables_restore(), &restore6, "nft", "nfacct"]
        .into_iter()
        .filter(|p| !which(p))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "missing {} (run scripts/setup.d/40-dataplane.sh: apt-get install iproute2 iptables nftables nfacct)",
            missing.join(", ")
        ));
    }
    let probe = Netns::create(format!("{}{}-preflight", netns::PREFIX, std::process::id()))
        .map_err(|err| format!("no network namespace support: {err}"))?;
    drop(probe);
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

/// Where expectations come from.
enum Oracle {
    /// The hand-worked table of a golden.
    Table(String),
    /// `svclab trace` on the scenario; for a golden, also cross-checked with its hand table.
    Trace(Box<World>, Option<String>),
    /// No rules: nothing is handled.
    Control,
}

/// Everything a case needs before touching the kernel.
struct Prepared {
    rules: String,
    /// iptables-restore input loaded after `rules` (the built-in jumps), if any.
    jumps: Option<String>,
    node_ip: IpAddr,
    /// The scenario names the node's address; without it the node's own connections and
    /// NodePorts cannot be traced (the tracer would not know the address is local).
    node_known: bool,
    node_addresses: Vec<IpAddr>,
    service_cidr: Option<(IpAddr, u8)>,
    local_cidr: Option<(IpAddr, u8)>,
    pod_if_prefix: String,
    /// BridgeInterface detector: the non-endpoint pod's node-side interface carries the
    /// bridge's name, so `-i <bridge>` / `iifname <bridge>` matches its traffic.
    bridge: Option<String>,
    model: Model,
    oracle: Oracle,
}

impl Prepared {
    /// The rules let the node accept NodePorts on 127.0.0.1 (kube-proxy does so only in
    /// iptables mode, with route_localnet).
    fn route_localnet(&self) -> bool {
        self.rules.contains("block incoming localnet connections")
    }
}

/// Services and EndpointSlices as written in a scenario file.
fn objects(path: &Path) -> Result<(Vec<Service>, Vec<EndpointSlice>), String> {
    let text = read(path)?;
    let scenario = svclab_core::parse(&[Input::new(path.display().to_string(), &text)]);
    let mut services = Vec::new();
    let mut slices = Vec::new();
    for object in scenario.objects {
        match object {
            Object::Service(s) => services.push(s.value.clone()),
            Object::EndpointSlice(s) => slices.push(s.value.clone()),
            _ => {}
        }
    }
    Ok((services, slices))
}

fn golden_config(case: &CaseDef) -> Result<serde_json::Value, String> {
    serde_norway::from_str(&read(&case.path.join("config.yaml"))?)
        .map_err(|err| format!("config.yaml: {err}"))
}

fn prepare_golden_text(case: &CaseDef) -> Result<Prepared, String> {
    let config = golden_config(case)?;
    let node_ip = config["nodeIP"].as_str().and_then(parse_v4).unwrap_or(bootstrap::GOLDEN_NODE_IP);
    let local_cidr = config["detectLocal"]["clusterCIDRs"][0]
        .as_str()
        .or_else(|| config["detectLocal"]["podCIDRs"][0].as_str())
        .and_then(parse_cidr_v4);
    let pod_if_prefix =
        config["detectLocal"]["interfaceNamePrefix"].as_str().unwrap_or("veth").to_owned();
    let (services, slices) = objects(&case.path.join("input.yaml"))?;
    let model = Model::new(
        &services.iter().collect::<Vec<_>>(),
        &slices.iter().collect::<Vec<_>>(),
        Family::V4,
    );
    let (rules, jumps) = match case.mode {
        Mode::Iptables => {
            let rules = read(&case.path.join("expected.iptables"))?;
            let kube_firewall = rules.contains(":KUBE-FIREWALL ");
            (rules, Some(bootstrap::builtin_jumps(kube_firewall)))
        }
        Mode::Nftables => {
            let dir = case.path.parent().map(|p| p.join("17-nftables-overall")).unwrap_or_default();
            (bootstrap::loadable_nft(&read(&dir.join("expected.nft"))?), None)
        }
    };
    Ok(Prepared {
        rules,
        jumps,
        node_ip,
        node_known: true,
        node_addresses: Vec::new(),
        service_cidr: None,
        local_cidr,
        pod_if_prefix,
        bridge: None,
        model,
        oracle: Oracle::Table(case.id.clone()),
    })
}

fn prepare_svclab(case: &CaseDef) -> Result<Prepared, String> {
    let inputs = match case.kind {
        Kind::Golden => {
            let config = golden_config(case)?;
            vec![
                ("input.yaml".to_owned(), read(&case.path.join("input.yaml"))?),
                ("config.yaml (as objects)".to_owned(), svclab::golden_config_docs(&config)),
            ]
        }
        Kind::Example => vec![(case.path.display().to_string(), read(&case.path)?)],
        Kind::Generated => vec![(case.id.clone(), case.text.clone().unwrap_or_default())],
    };
    let svclab::Evaluated { world, ingress, rejected } = svclab::evaluate(&inputs)?;
    let facts = svclab::node_facts(&world, case.mode, case.family)?;
    let rules = svclab::render(&world, case.mode, case.family)?;
    let services: Vec<&Service> = world.services.values().map(|s| &*s.service).collect();
    let slices: Vec<&EndpointSlice> = world.endpoint_slices.iter().map(|s| &s.value).collect();
    let mut model = Model::new(&services, &slices, case.family);
    for port in &mut model.ports {
        if port.lb_ips.is_empty()
            && let Some(ips) = ingress.get(&port.service)
        {
            port.lb_ips = ips.iter().copied().filter(|ip| Family::of(*ip) == case.family).collect();
        }
    }
    model.skipped.extend(rejected.into_iter().map(|r| format!("rejected by the cluster: {r}")));
    let table = (case.kind == Kind::Golden).then(|| case.id.clone());
    Ok(Prepared {
        rules,
        jumps: None,
        node_ip: facts.node_ip.unwrap_or(bootstrap::GOLDEN_NODE_IP),
        node_known: facts.node_ip.is_some(),
        node_addresses: facts.other_addresses,
        service_cidr: facts.service_cidr,
        local_cidr: facts.local_cidr,
        pod_if_prefix: facts.interface_prefix.unwrap_or_else(|| "veth".to_owned()),
        bridge: facts.bridge,
        model,
        oracle: Oracle::Trace(Box::new(world), table),
    })
}

fn prepare(case: &CaseDef) -> Result<Prepared, String> {
    match case.rules {
        RulesFrom::GoldenText => prepare_golden_text(case),
        RulesFrom::Svclab => prepare_svclab(case),
        RulesFrom::Nothing => Ok(Prepared {
            rules: String::new(),
            jumps: None,
            oracle: Oracle::Control,
            ..prepare_golden_text(case)?
        }),
    }
}

/// Whether two expectations agree (probabilities to 1e-6).
pub(crate) fn same_expectation(a: &Expect, b: &Expect) -> bool {
    match (a, b) {
        (
            Expect::Land { endpoints: ea, affinity: aa },
            Expect::Land { endpoints: eb, affinity: ab },
        ) => {
            aa == ab
                && ea.len() == eb.len()
                && ea.iter().zip(eb).all(|(x, y)| {
                    x.addr == y.addr && x.masquerade == y.masquerade && (x.p - y.p).abs() < 1e-6
                })
        }
        _ => a == b,
    }
}

static NEXT_TAG: AtomicUsize = AtomicUsize::new(0);

/// `--nfacct-name X` counters a payload uses (kube-proxy only writes them when they exist).
pub(crate) fn nfacct_names(rules: &str) -> Vec<String> {
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
    if prepared.rules.is_empty() {
        return Ok(());
    }
    match mode {
        Mode::Iptables => {
            for name in nfacct_names(&prepared.rules) {
                node.exec("nfacct", &["add", &name])?;
            }
            let restore = restore_for(prepared.node_ip);
            node.exec_with_input(&restore, &["--noflush"], &prepared.rules)
                .map_err(|err| format!("loading the payload: {err}"))?;
            if let Some(jumps) = &prepared.jumps {
                node.exec_with_input(&restore, &["--noflush"], jumps)
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

/// Runs one case; the error lists every probe that did not behave as expected. A known
/// failure must happen as recorded (FIXME), and its disappearance is reported too.
pub(crate) fn run(case: &CaseDef) -> Result<(), String> {
    let result = execute(case).and_then(|done| {
        if done.failures.is_empty() { Ok(()) } else { Err(done.failures.join("\n")) }
    });
    let Some(known) = &case.known_failure else { return result };
    match result {
        Err(err) if err.contains(known.as_str()) => {
            report(&format!(
                "dataplane {}: FIXME known failure reproduced ({known}): {}",
                case.name(),
                err.lines().next().unwrap_or_default()
            ));
            Ok(())
        }
        Err(err) => Err(format!("expected the known failure {known:?}, got: {err}")),
        Ok(()) => Err(format!(
            "the known failure {known:?} is fixed: move {} to tests/dataplane/scenarios/ and drop its marker line",
            case.path.display()
        )),
    }
}

/// What one case did: every probe with its trace expectation and what the kernel did, and the
/// failures (probes against their expectation, and trace disagreements).
pub(crate) struct Execution {
    pub(crate) probes: Vec<(Probe, Verdict)>,
    pub(crate) failures: Vec<String>,
    /// Services the cluster refused (a generated scenario must have none).
    pub(crate) rejected: Vec<String>,
    /// The Service ports probed.
    pub(crate) ports: Vec<crate::case::SvcPort>,
}

/// Builds the topology, loads the rules, probes; `Err` when the case cannot run at all.
pub(crate) fn execute(case: &CaseDef) -> Result<Execution, String> {
    let prepared = prepare(case)?;
    let exe = std::env::current_exe().map_err(|err| format!("current_exe: {err}"))?;
    let sources = Sources::pick(case, &prepared);
    let mut plan = Plan::for_case(case, &prepared, &sources)?;
    let spec = spec(&prepared, &sources);
    keep_rules(case, &prepared);
    let topo = Topology::build(&spec, &exe)?;
    load(&topo, case.mode, &prepared)?;
    let dump_traced = trace_kernel_dump(case, &prepared, &topo, &mut plan)?;
    let outputs = run_probes(case, &topo, &exe, &plan.probes)?;
    let judged = judge(case, &plan.probes, &outputs, prepared.node_ip);
    report(&summary(case, &prepared, &plan, &judged, dump_traced));
    drop(topo);
    let model = &prepared.model;
    let mut failures = judged.failures;
    failures.extend(plan.disagreements);
    let rejected = model.skipped.iter().filter(|s| s.starts_with("rejected")).cloned().collect();
    Ok(Execution {
        probes: plan.probes.into_iter().zip(judged.verdicts).collect(),
        failures,
        rejected,
        ports: model.ports.clone(),
    })
}

/// The topology of a case: the node, its endpoint pods, the probing pod and clients.
fn spec(prepared: &Prepared, sources: &Sources) -> Spec {
    Spec {
        tag: format!("{}-{}", std::process::id(), NEXT_TAG.fetch_add(1, Ordering::SeqCst)),
        node_ip: prepared.node_ip,
        node_addresses: prepared.node_addresses.clone(),
        pods: prepared.model.pods.clone(),
        pod_clients: vec![sources.pod],
        pod_client_if: prepared.bridge.clone(),
        clients: sources.clients(),
        pod_if_prefix: prepared.pod_if_prefix.clone(),
        route_localnet: prepared.route_localnet(),
    }
}

/// The loaded rules next to the report (`SVCLAB_DATAPLANE_REPORT`), for reading a failure.
fn keep_rules(case: &CaseDef, prepared: &Prepared) {
    if let Ok(path) = std::env::var("SVCLAB_DATAPLANE_REPORT") {
        let name: String =
            case.name().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        let _ = std::fs::write(format!("{path}.{name}.rules"), &prepared.rules);
    }
}

/// The kernel's own `iptables-save` of what was loaded, traced again: the tracer must read a
/// real dump (normalised rule syntax, builtin chains) exactly like the rendered text. Whether it
/// ran (iptables mode, rules from svclab).
fn trace_kernel_dump(
    case: &CaseDef,
    prepared: &Prepared,
    topo: &Topology,
    plan: &mut Plan,
) -> Result<bool, String> {
    let Oracle::Trace(world, _) = &prepared.oracle else { return Ok(false) };
    if case.mode != Mode::Iptables {
        return Ok(false);
    }
    let save = restore_for(prepared.node_ip).replace("-restore", "-save");
    let dump = topo.node.exec(&save, &[])?;
    for (probe, iface) in plan.probes.iter().zip(&plan.interfaces) {
        let report =
            svclab::trace_dump(world, &dump, probe.src, probe.dst, probe.udp, iface.as_deref())?;
        let affinity = matches!(&probe.expect, Expect::Land { affinity: true, .. });
        let (what, from) = (&probe.what, probe.role.as_str());
        match svclab::expectation(&report, affinity) {
            Ok(e) if same_expectation(&e, &probe.expect) => {}
            Ok(e) => plan.disagreements.push(format!(
                "{what} from {from}: the trace of the kernel's {save} dump says {}, of the rendered rules {}",
                describe_expect(&e),
                describe_expect(&probe.expect)
            )),
            Err(err) => plan.disagreements.push(format!(
                "{what} from {from}: the trace of the kernel's {save} dump fails: {err}"
            )),
        }
    }
    Ok(true)
}

/// The case's figures as the suite reports them.
fn summary(
    case: &CaseDef,
    prepared: &Prepared,
    plan: &Plan,
    judged: &Judged,
    dump_traced: bool,
) -> String {
    let model = &prepared.model;
    let mut text = format!(
        "dataplane {}: node {}, {} endpoint pods",
        case.name(),
        prepared.node_ip,
        model.pods.len()
    );
    text.push_str(&judged.lines);
    let probes = plan.probes.len();
    let _ = write!(text, "\n  total {} connections in {probes} probes", judged.total);
    if dump_traced {
        let _ = write!(
            text,
            "\n  iptables-save dump of the loaded rules traced again: {probes} probes"
        );
    }
    for note in model.skipped.iter().chain(&plan.skipped) {
        let _ = write!(text, "\n  not probed: {note}");
    }
    for note in &plan.notes {
        let _ = write!(text, "\n  NOTE {note}");
    }
    for d in &plan.disagreements {
        let _ = write!(text, "\n  DISAGREE {d}");
    }
    text
}

pub(crate) fn describe_expect(expect: &Expect) -> String {
    match expect {
        Expect::Refused => "refused (REJECT)".into(),
        Expect::Unhandled => "not handled (reset by node or sink)".into(),
        Expect::Dropped => "dropped (timeout)".into(),
        Expect::Land { endpoints, affinity } => {
            let eps: Vec<String> = endpoints
                .iter()
                .map(|e| {
                    format!("{}@{:.3}{}", e.addr, e.p, if e.masquerade { "+masq" } else { "" })
                })
                .collect();
            format!("{}{}", eps.join(" "), if *affinity { " affinity" } else { "" })
        }
    }
}
