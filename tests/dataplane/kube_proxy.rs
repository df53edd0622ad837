//! The real kube-proxy: etcd, kube-apiserver and kube-proxy of the newest release, built from
//! their Go modules (`svclab_oracle::cluster`), run in one network namespace of their own. The
//! objects of `kube-proxy/objects.yaml` are created through kube-apiserver (which picks their
//! addresses and node ports), kube-proxy programs its mode's rules in the namespace, and what it
//! handed `iptables-restore` or `nft -f` on its first full sync (captured by a wrapper in front
//! of the real program) must be exactly what svclab renders for the same objects, read back from
//! kube-apiserver. The rules kube-proxy left in the kernel (`iptables-save`, `nft list table`)
//! must be the rules svclab's text leaves in a fresh namespace.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use svclab_core::{CheckOptions, Input, ProxyMode, RenderOptions};
use svclab_oracle::cluster::{self, ControlPlane, Settings};

use crate::case::Mode;
use crate::netns::{self, Netns};

/// The node kube-proxy runs as, and its address on the namespace's dummy interface.
const NODE: &str = "kp-node";
const NODE_IP: &str = "10.88.0.10";

/// The trial names.
pub(crate) fn names() -> [(String, Mode); 2] {
    [Mode::Iptables, Mode::Nftables].map(|mode| (format!("kube-proxy/{}", mode.as_str()), mode))
}

fn workspace() -> PathBuf {
    svclab_tests::workspace_root()
}

/// A process in the namespace, killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The wrappers kube-proxy finds first on its PATH: each writes its standard input to
/// `captured/<n>-<program>` with its arguments, then runs the real program on it.
fn wrappers(dir: &Path) -> Result<PathBuf, String> {
    let bin = dir.join("wrappers");
    std::fs::create_dir_all(&bin).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir.join("captured")).map_err(|e| e.to_string())?;
    for program in ["iptables-restore", "ip6tables-restore", "nft"] {
        let real = which(program)?;
        // The restore programs always read the rules on stdin; nft when given `-f -`.
        let reads_stdin = if program == "nft" { "*' -f -'*" } else { "*" };
        let script = format!(
            "#!/bin/sh\n# kube-proxy's call of {program}, recorded (tests/dataplane/kube_proxy.rs)\nout={captured}/$(date +%s%N)-{program}\necho \"$*\" > \"$out.args\"\ncase \" $* \" in\n  {reads_stdin}) tee \"$out\" | exec {real} \"$@\" ;;\n  *) exec {real} \"$@\" ;;\nesac\n",
            captured = dir.join("captured").display(),
            real = real.display()
        );
        let path = bin.join(program);
        std::fs::write(&path, script).map_err(|e| e.to_string())?;
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| e.to_string())?;
    }
    Ok(bin)
}

fn which(program: &str) -> Result<PathBuf, String> {
    let out = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .map_err(|e| e.to_string())?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if path.is_empty() {
        return Err(format!("{program} is not installed (scripts/setup.d/40-dataplane.sh)"));
    }
    Ok(PathBuf::from(path))
}

/// kubectl with `args` and `stdin`; its output, or an error with it.
fn kubectl(plane: &ControlPlane, args: &[&str], stdin: &str) -> Result<String, String> {
    netns::run_with_input(plane.kubectl().args(args), stdin)
}

/// The KubeProxyConfiguration both kube-proxy and svclab read.
fn configuration(mode: Mode, kubeconfig: &Path) -> Value {
    json!({
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "mode": mode.as_str(),
        "hostnameOverride": NODE,
        "clusterCIDR": "10.244.0.0/16",
        "clientConnection": {"kubeconfig": kubeconfig.display().to_string()},
        // No conntrack sysctls: a namespace has its own, and nothing here needs them set.
        "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
        "metricsBindAddress": "127.0.0.1:10249",
        "healthzBindAddress": "127.0.0.1:10256",
    })
}

/// The trial: kube-proxy in `mode` against svclab.
pub(crate) fn run(mode: Mode) -> Result<(), String> {
    let binaries = cluster::newest(&workspace(), &svclab_tests::node::target_dir())?;
    let ns =
        Netns::create(format!("{}{}-kp-{}", netns::PREFIX, std::process::id(), mode.as_str()))?;
    node_interfaces(&ns)?;
    let dir = svclab_tests::node::target_dir().join(format!("tmp/kube-proxy-{}", mode.as_str()));
    if dir.exists() {
        cluster::stop(&dir.join("control-plane"));
        std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let settings = Settings::from_profile(&json!({}));
    let plane =
        ControlPlane::start_in(binaries, &settings, &dir.join("control-plane"), Some(&ns.name))
            .map_err(|err| err.to_string())?;

    // The objects, through kube-apiserver; the Nodes' addresses through their status.
    let objects =
        std::fs::read_to_string(workspace().join("tests/dataplane/kube-proxy/objects.yaml"))
            .map_err(|e| e.to_string())?;
    kubectl(&plane, &["create", "-f", "-"], &objects)?;
    for (node, ip) in [(NODE, NODE_IP), ("kp-other", "10.88.0.11")] {
        let status = json!({"status": {"addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": node}]}});
        kubectl(
            &plane,
            &[
                "patch",
                "node",
                node,
                "--subresource=status",
                "--type=merge",
                "-p",
                &status.to_string(),
            ],
            "",
        )?;
    }

    // kube-proxy, once the objects are stored: its first full sync sees them all.
    let config = configuration(mode, &plane.kubeconfig());
    let config_file = dir.join("kube-proxy.json");
    std::fs::write(&config_file, config.to_string()).map_err(|e| e.to_string())?;
    let wrappers = wrappers(&dir)?;
    let log = std::fs::File::create(dir.join("kube-proxy.log")).map_err(|e| e.to_string())?;
    let path = format!("{}:{}", wrappers.display(), std::env::var("PATH").unwrap_or_default());
    let proxy = Running(
        ns.command(&binaries.program("kube-proxy"))
            .arg(format!("--config={}", config_file.display()))
            .arg("--v=2")
            .env("PATH", path)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|err| format!("cannot start kube-proxy: {err}"))?,
    );
    let captured = first_full_sync(&dir, mode)?;
    let programmed = match mode {
        Mode::Iptables => sort_iptables_rules(&captured),
        Mode::Nftables => nftables_state(&captured),
    };

    // svclab, for the objects as kube-apiserver stores them.
    let stored =
        kubectl(&plane, &["get", "nodes,services,endpointslices", "-A", "-o", "json"], "")?;
    // Written as creates: a resourceVersion would be refused ("should not be set on objects to
    // be created"), as kube-apiserver refuses it.
    let mut stored: Value = serde_json::from_str(&stored).map_err(|e| e.to_string())?;
    for item in stored["items"].as_array_mut().into_iter().flatten() {
        if let Some(meta) = item["metadata"].as_object_mut() {
            meta.remove("resourceVersion");
        }
    }
    let profile = json!({
        "apiVersion": "svclab.dev/v1alpha1",
        "kind": "ClusterProfile",
        "kubernetesVersion": settings.release.trim_start_matches('v'),
        "host": {"iptablesRandomFully": true, "nfacct": true, "interfaceAddresses": [format!("{NODE_IP}/24"), "127.0.0.1/8"]},
    });
    let scenario = format!("{profile}\n---\n{config}\n---\n{stored}\n");
    let (world, report) = svclab_core::evaluate(
        &[Input::new("stored.json", scenario.clone())],
        &CheckOptions::default(),
    );
    let refused: Vec<&svclab_core::Diagnostic> =
        report.diagnostics.iter().filter(|d| d.severity == svclab_core::Severity::Error).collect();
    if !refused.is_empty() {
        return Err(format!("svclab refuses objects kube-apiserver stored: {refused:?}"));
    }
    let proxy_mode = match mode {
        Mode::Iptables => ProxyMode::Iptables,
        Mode::Nftables => ProxyMode::Nftables,
    };
    let rendered = svclab_core::render(&world, &RenderOptions::new(proxy_mode))
        .map_err(|err| format!("svclab render: {err}"))?;
    let rendered = match mode {
        Mode::Iptables => rendered,
        Mode::Nftables => nftables_state(&rendered),
    };
    std::fs::write(dir.join("scenario.json"), &scenario).map_err(|e| e.to_string())?;
    same(
        &dir,
        ("kube-proxy.rules", &programmed),
        ("svclab.rules", &rendered),
        "kube-proxy's first full sync differs from svclab render",
    )?;
    // The kernels: what kube-proxy left in its namespace against svclab's standalone ruleset
    // in a fresh one, read back and probed alike.
    let standalone = svclab_core::render(
        &world,
        &RenderOptions { standalone: true, ..RenderOptions::new(proxy_mode) },
    )
    .map_err(|err| format!("svclab render --standalone: {err}"))?;
    let svclab_ns =
        Netns::create(format!("{}{}-sv-{}", netns::PREFIX, std::process::id(), mode.as_str()))?;
    node_interfaces(&svclab_ns)?;
    match mode {
        Mode::Iptables => {
            // kube-proxy writes a `--nfacct-name` match only for a counter it made.
            for name in crate::runner::nfacct_names(&standalone) {
                svclab_ns.exec("nfacct", &["add", &name])?;
            }
            svclab_ns.exec_with_input("iptables-restore", &[], &standalone)?
        }
        Mode::Nftables => svclab_ns.exec_with_input("nft", &["-f", "-"], &standalone)?,
    };
    let (theirs, ours) = (read_back(&ns, mode)?, read_back(&svclab_ns, mode)?);
    same(
        &dir,
        ("kube-proxy.kernel", &theirs),
        ("svclab.kernel", &ours),
        "the kernel's rules differ: kube-proxy's namespace against svclab's ruleset loaded in a fresh one",
    )?;
    let services = &stored["items"];
    let (theirs, ours) = (probe(&ns, services)?, probe(&svclab_ns, services)?);
    if theirs != ours {
        return Err(format!(
            "probes land differently: through kube-proxy's rules {theirs:#?}, through svclab's {ours:#?}"
        ));
    }
    let outcomes: Vec<&str> = theirs.iter().map(|(_, outcome)| outcome.as_str()).collect();
    // The external IP's one endpoint is on the other node: out through eth0, nowhere to go.
    let expected = ["ok ep-10.244.1.2", "ok ep-10.244.1.2", "refused", "timeout"];
    if outcomes != expected {
        return Err(format!("probes: {theirs:#?}, expected {expected:?}"));
    }
    drop(proxy);
    drop(plane);
    Ok(())
}

/// Writes both texts into `dir` under their names and fails with `what` and the first 40
/// changed lines when they differ.
fn same(dir: &Path, theirs: (&str, &str), ours: (&str, &str), what: &str) -> Result<(), String> {
    for (name, text) in [theirs, ours] {
        std::fs::write(dir.join(name), text).map_err(|e| e.to_string())?;
    }
    if theirs.1 == ours.1 {
        return Ok(());
    }
    let diff: Vec<String> = svclab_core::diff_lines(theirs.1, ours.1)
        .into_iter()
        .filter(|l| l.tag != svclab_core::DiffTag::Same)
        .take(40)
        .map(|l| format!("{:?} {}", l.tag, l.text))
        .collect();
    Err(format!(
        "{what} ({} against {}):\n{}",
        dir.join(theirs.0).display(),
        dir.join(ours.0).display(),
        diff.join("\n")
    ))
}

/// The node's interface (one end of a veth pair, both ends inside: no dummy module here), with
/// the node's address; the other end holds the node's local endpoints.
fn node_interfaces(ns: &Netns) -> Result<(), String> {
    ns.ip(&["link", "add", "eth0", "type", "veth", "peer", "name", "eth1"])?;
    ns.ip(&["addr", "add", &format!("{NODE_IP}/24"), "dev", "eth0"])?;
    ns.ip(&["link", "set", "eth0", "up"])?;
    ns.ip(&["link", "set", "eth1", "up"])?;
    // A node has a default route: the route lookup before the OUTPUT hook must find one for
    // a ClusterIP to reach kube-proxy's rules at all.
    ns.ip(&["route", "add", "default", "dev", "eth0"])?;
    Ok(())
}

/// The kernel's rules of `mode` in `ns`: iptables-save's filter and nat tables, the KUBE-
/// chains (without the canaries kube-proxy keeps for kubelet) and the jumps to them from the
/// built-in chains, counters zeroed, in kube-proxy's test order; or `nft list table ip
/// kube-proxy` with each set's elements in one order (the kernel lists them by hash).
fn read_back(ns: &Netns, mode: Mode) -> Result<String, String> {
    match mode {
        Mode::Iptables => {
            let mut kept = String::new();
            for table in ["filter", "nat"] {
                kept.push_str(&format!("*{table}\n"));
                for line in ns.exec("iptables-save", &["-t", table])?.lines() {
                    let canary = line.contains("CANARY");
                    let chain = line.starts_with(":KUBE-");
                    let rule = line.starts_with("-A ") && line.contains("KUBE-");
                    if !canary && (chain || rule) {
                        let line = match line.split_once(" [") {
                            Some((head, _)) if chain => format!("{head} [0:0]"),
                            _ => line.to_owned(),
                        };
                        kept.push_str(&line);
                        kept.push('\n');
                    }
                }
                kept.push_str("COMMIT\n");
            }
            Ok(sort_iptables_rules(&kept))
        }
        Mode::Nftables => {
            let listed = ns.exec("nft", &["list", "table", "ip", "kube-proxy"])?;
            Ok(sorted_blocks(&sorted_elements(&listed)))
        }
    }
}

/// `nft list` output (as [`sorted_elements`] leaves it: one statement a line, unindented) with
/// its sets, maps and chains in one order: the kernel lists them in the order they were made,
/// and kube-proxy's transaction makes its chains first, svclab's its sets.
fn sorted_blocks(listed: &str) -> String {
    let mut head = Vec::new();
    let mut blocks: Vec<(String, Vec<&str>)> = Vec::new();
    let mut open: Option<(String, Vec<&str>)> = None;
    for line in listed.lines().filter(|l| !l.is_empty()) {
        match &mut open {
            Some((_, lines)) => {
                lines.push(line);
                if line == "}" {
                    blocks.extend(open.take());
                }
            }
            None if ["set ", "map ", "chain "].iter().any(|k| line.starts_with(k)) => {
                open = Some((line.to_owned(), vec![line]));
            }
            None => head.push(line),
        }
    }
    blocks.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out: Vec<&str> = head;
    for (_, lines) in &blocks {
        out.extend(lines.iter().copied());
    }
    out.join("\n") + "\n"
}

/// `nft list` output with the elements of every `elements = { ... }` block sorted.
fn sorted_elements(listed: &str) -> String {
    let mut out = String::new();
    let mut block: Option<Vec<String>> = None;
    for line in listed.lines() {
        let trimmed = line.trim();
        match &mut block {
            None if trimmed.starts_with("elements = {") => {
                let first = trimmed.trim_start_matches("elements = {").trim();
                let mut items = Vec::new();
                let closed = first.ends_with('}');
                let first = first.trim_end_matches('}').trim();
                items.extend(
                    first
                        .split(", ")
                        .filter(|i| !i.is_empty())
                        .map(|i| i.trim_end_matches(',').to_owned()),
                );
                if closed {
                    items.sort();
                    out.push_str(&format!("elements = {{ {} }}\n", items.join(", ")));
                } else {
                    block = Some(items);
                }
            }
            None => {
                out.push_str(trimmed);
                out.push('\n');
            }
            Some(items) => {
                let closed = trimmed.ends_with('}');
                let body = trimmed.trim_end_matches('}').trim();
                items.extend(
                    body.split(", ")
                        .filter(|i| !i.is_empty())
                        .map(|i| i.trim_end_matches(',').to_owned()),
                );
                if closed {
                    items.sort();
                    out.push_str(&format!("elements = {{ {} }}\n", items.join(", ")));
                    block = None;
                }
            }
        }
    }
    out
}

/// Probe packets from the node itself through `ns`'s rules, with the node's local endpoints
/// serving (the test binary's agent): kube-dns's ClusterIP over TCP and UDP (its one endpoint
/// is local), a Service without endpoints (rejected), and an external IP whose one endpoint is
/// on the other node (nothing answers). Each outcome: `ok <endpoint>`, `refused`,
/// `timeout`, `unreachable`.
fn probe(ns: &Netns, services: &Value) -> Result<Vec<(String, String)>, String> {
    let exe = std::env::current_exe().map_err(|err| format!("current_exe: {err}"))?;
    let _ = ns.ip(&["addr", "add", "10.244.1.2/32", "dev", "eth1"]);
    let server = crate::topology::Server::start(
        ns,
        &exe,
        "ep-10.244.1.2",
        &["10.244.1.2:53".to_owned(), "udp:10.244.1.2:53".to_owned()],
    )?;
    let cluster_ip = |namespace: &str, name: &str| -> String {
        services
            .as_array()
            .into_iter()
            .flatten()
            .find(|o| {
                o["kind"] == "Service"
                    && o["metadata"]["namespace"] == namespace
                    && o["metadata"]["name"] == name
            })
            .and_then(|o| o["spec"]["clusterIP"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    let probes = [
        (format!("{}:53", cluster_ip("kube-system", "kube-dns")), "tcp"),
        (format!("{}:53", cluster_ip("kube-system", "kube-dns")), "udp"),
        (format!("{}:9000", cluster_ip("shop", "idle")), "tcp"),
        ("192.0.2.10:80".to_owned(), "tcp"),
    ];
    let mut out = Vec::new();
    for (addr, protocol) in probes {
        let line = netns::run(ns.command(&exe).args([
            crate::agent::AGENT_ARG,
            "probe",
            &addr,
            "1",
            "1500",
            protocol,
        ]))?;
        // `ok <name> <local> <peer>`: the endpoint that answered is what is compared.
        let words: Vec<&str> = line.split_whitespace().collect();
        let outcome = match words.as_slice() {
            ["ok", name, ..] => format!("ok {name}"),
            [other, ..] => (*other).to_owned(),
            [] => "nothing".to_owned(),
        };
        out.push((format!("{protocol} {addr}"), outcome));
    }
    drop(server);
    Ok(out)
}

/// kube-proxy's first restore input (iptables: the one with a `*nat` table) or transaction
/// (nftables: the one that adds its table), waited for at most 60 s.
fn first_full_sync(dir: &Path, mode: Mode) -> Result<String, String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("captured"))
            .map_err(|e| e.to_string())?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_none())
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let full = match mode {
                Mode::Iptables => text.contains("*nat\n") && text.contains("COMMIT"),
                Mode::Nftables => text.contains("comment \"rules for kube-proxy\""),
            };
            if full {
                return Ok(text);
            }
        }
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(dir.join("kube-proxy.log")).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            return Err(format!(
                "kube-proxy made no full sync in 60 s; its log ends:\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// An `iptables-restore` input in the order kube-proxy's own tests compare it in
/// (`sortIPTablesRules`, pkg/proxy/iptables/proxier_test.go at v1.37.2: kube-proxy writes
/// Services in Go map order): tables by name; chains with KUBE-NODEPORTS first, KUBE-SERVICES
/// next, then KUBE-* chains before others, each group by name; the rules of KUBE-NODEPORTS and
/// KUBE-SERVICES stably by the Service in their comment, the nat KUBE-SERVICES rule that "must
/// be the last rule" last; then the oracle's tie-break (`oracleTieBreak`,
/// oracle/proxy/zz_oracle_test.go.in): two ports of one Service, or two Services in
/// KUBE-EXTERNAL-SERVICES and KUBE-PROXY-FIREWALL, come out of kube-proxy in map order, so
/// those chains' rules are stably sorted by service port name, the "must be the last rule"
/// jumps last by their text. Every other line keeps its place in its chain.
fn sort_iptables_rules(text: &str) -> String {
    struct Table<'a> {
        name: &'a str,
        chains: Vec<(&'a str, &'a str)>,
        rules: Vec<(&'a str, &'a str)>,
    }
    let mut tables: Vec<Table<'_>> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix('*') {
            tables.push(Table { name, chains: Vec::new(), rules: Vec::new() });
        } else if let Some(table) = tables.last_mut() {
            if let Some(rest) = line.strip_prefix(':') {
                table.chains.push((rest.split(' ').next().unwrap_or(""), line));
            } else if let Some(rest) = line.strip_prefix("-A ") {
                table.rules.push((rest.split(' ').next().unwrap_or(""), line));
            }
        }
    }
    tables.sort_by(|a, b| a.name.cmp(b.name));
    let rank = |chain: &str| match chain {
        "KUBE-NODEPORTS" => 0,
        "KUBE-SERVICES" => 1,
        c if c.starts_with("KUBE-") => 2,
        _ => 3,
    };
    // The Service a rule's comment names: the comment up to its first space or colon.
    let service = |rule: &str| -> Option<String> {
        let rest = rule.split_once("--comment ")?.1;
        let comment = match rest.strip_prefix('"') {
            Some(quoted) => quoted.split('"').next().unwrap_or(""),
            None => rest.split(' ').next().unwrap_or(""),
        };
        Some(comment.split([' ', ':']).next().unwrap_or("").to_owned())
    };
    let mut out = String::new();
    for table in &mut tables {
        table.chains.sort_by(|a, b| rank(a.0).cmp(&rank(b.0)).then(a.0.cmp(b.0)));
        out.push_str(&format!("*{}\n", table.name));
        for (_, line) in &table.chains {
            out.push_str(line);
            out.push('\n');
        }
        for (chain, _) in &table.chains {
            let mut rules: Vec<&str> =
                table.rules.iter().filter(|(c, _)| c == chain).map(|(_, l)| *l).collect();
            if matches!(*chain, "KUBE-NODEPORTS" | "KUBE-SERVICES") {
                // Stable, like sort.SliceStable; a rule without a comment keeps its place among
                // its neighbours (the Go comparison is false either way).
                let last = |r: &str| table.name == "nat" && r.contains("must be the last rule");
                rules.sort_by(|a, b| match (last(a), last(b)) {
                    (true, false) => std::cmp::Ordering::Greater,
                    (false, true) => std::cmp::Ordering::Less,
                    _ => match (service(a), service(b)) {
                        (Some(x), Some(y)) => x.cmp(&y),
                        _ => std::cmp::Ordering::Equal,
                    },
                });
            }
            if matches!(
                *chain,
                "KUBE-SERVICES"
                    | "KUBE-NODEPORTS"
                    | "KUBE-EXTERNAL-SERVICES"
                    | "KUBE-PROXY-FIREWALL"
            ) {
                rules.sort_by_key(|rule| tie_break_key(rule));
            }
            for rule in rules {
                out.push_str(rule);
                out.push('\n');
            }
        }
        out.push_str("COMMIT\n");
    }
    out
}

/// The oracle's tie-break key of a rule: the "must be the last rule" jumps after all others
/// (by their text), the rest by (Service, service port) of their comment, none for no comment.
fn tie_break_key(rule: &str) -> (bool, String, String, String) {
    if rule.contains("must be the last rule") {
        return (true, String::new(), String::new(), rule.to_owned());
    }
    let Some((_, rest)) = rule.split_once("--comment ") else {
        return (false, String::new(), String::new(), String::new());
    };
    let comment = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next().unwrap_or(""),
        None => rest.split(' ').next().unwrap_or(""),
    };
    let port = comment.split(' ').next().unwrap_or("");
    let service = port.split([' ', ':']).next().unwrap_or("");
    (false, service.to_owned(), port.to_owned(), String::new())
}

/// What an nftables transaction leaves, in the form kube-proxy's own tests compare
/// (`assertNFTablesTransactionEqual`, pkg/proxy/nftables/helpers_test.go at v1.37.2: the
/// transaction run against knftables' Fake, its `Dump`, then `sortNFTablesTransaction`). The
/// Fake's bookkeeping: an `add` of an object that exists keeps it, `delete` removes it, `flush`
/// empties a chain's rules or a set's elements, an element added twice is kept once. The sort:
/// by object type (table, chain, rule, set, map, element), then by object name, rules in the
/// order added, every other line by its text.
fn nftables_state(transaction: &str) -> String {
    use std::collections::BTreeMap;
    #[derive(Default)]
    struct Object {
        declaration: String,
        contents: Vec<String>,
    }
    let mut table = String::new();
    // Chains, sets and maps by (type, name).
    let mut objects: BTreeMap<(String, String), Object> = BTreeMap::new();
    for line in
        transaction.lines().map(str::trim_end).filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let words: Vec<&str> = line.split(' ').collect();
        let (verb, kind, name) =
            (words[0], words.get(1).copied().unwrap_or(""), words.get(4).copied().unwrap_or(""));
        match (verb, kind) {
            ("add", "table") => table = line.to_owned(),
            ("add", "chain" | "set" | "map") => {
                objects.entry((kind.to_owned(), name.to_owned())).or_insert_with(|| Object {
                    declaration: line.to_owned(),
                    contents: Vec::new(),
                });
            }
            ("delete", "chain" | "set" | "map") => {
                objects.remove(&(kind.to_owned(), name.to_owned()));
            }
            ("flush", "chain" | "set" | "map") => {
                if let Some(object) = objects.get_mut(&(kind.to_owned(), name.to_owned())) {
                    object.contents.clear();
                }
            }
            ("add", "rule") => {
                if let Some(chain) = objects.get_mut(&("chain".to_owned(), name.to_owned())) {
                    chain.contents.push(line.to_owned());
                }
            }
            ("add" | "delete", "element") => {
                let key = |kind: &str| (kind.to_owned(), name.to_owned());
                let target =
                    if objects.contains_key(&key("set")) { key("set") } else { key("map") };
                let added = format!("add{}", &line[verb.len()..]);
                if let Some(object) = objects.get_mut(&target) {
                    object.contents.retain(|e| *e != added);
                    if verb == "add" {
                        object.contents.push(added);
                    }
                }
            }
            _ => {}
        }
    }
    let rank = |kind: &str| match kind {
        "table" => 10,
        "chain" => 9,
        "rule" => 8,
        "set" => 7,
        "map" => 6,
        "element" => 5,
        _ => 0,
    };
    let mut lines: Vec<String> = vec![table];
    for ((kind, _), object) in &objects {
        let _ = kind;
        lines.push(object.declaration.clone());
        lines.extend(object.contents.iter().cloned());
    }
    // sortNFTablesTransaction: a stable sort.
    lines.sort_by(|a, b| {
        let (wa, wb): (Vec<&str>, Vec<&str>) = (a.split(' ').collect(), b.split(' ').collect());
        if wa.len() < 5 || wb.len() < 5 {
            return std::cmp::Ordering::Equal;
        }
        rank(wb[1])
            .cmp(&rank(wa[1]))
            .then(wa[4].cmp(wb[4]))
            .then_with(|| if wa[1] == "rule" { std::cmp::Ordering::Equal } else { a.cmp(b) })
    });
    lines.join("\n") + "\n"
}
