//! kube-proxy goldens (../shared/conformance/proxy and the in-repo copy in tests/data/proxy):
//! one test per case folder, compared byte for byte after the Go tests' canonical sorting,
//! plus packet traces over each rendered scenario.
//!
//! Each case's compact `config.yaml` is mapped onto the real objects the product reads
//! (KubeProxyConfiguration, Node, ClusterProfile host facts); only the mark string is
//! overridden afterwards, as the Go test fakes inject the literal `0x4000`.
//! `UPDATE_EXPECT=1` re-blesses the in-repo copies.
//!
//! The release goldens (tests/data/proxy-releases) go through the product path instead: one
//! scenario, a ClusterProfile `kubernetesVersion` and kube-proxy `mode` / `featureGates` per
//! case, `evaluate` then `render`, so every row of kube-proxy's release table that changes
//! the payload (or whether kube-proxy starts at all) changes a golden.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use svclab_core::testing::{
    ProxyConfig, render_objects, select_endpoints, trace_nft_text, trace_text,
};
use svclab_core::{
    EndpointSlice, Endpoints, Input, IpFamily, Node, Object, ProxyMode, Service, TraceRequest,
    parse,
};

fn main() {
    let args = Arguments::from_args();
    let mut cases: BTreeMap<String, PathBuf> = BTreeMap::new();
    // The conformance copy wins for a case present in both; held-out cases only exist there.
    for root in [
        Some(svclab_tests::data_dir().join("proxy")),
        svclab_tests::conformance_dir().map(|d| d.join("proxy")),
    ]
    .into_iter()
    .flatten()
    {
        let Ok(entries) = std::fs::read_dir(&root) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.join("config.yaml").is_file()
                && let Some(name) = path.file_name().and_then(|n| n.to_str())
            {
                cases.insert(name.to_owned(), path);
            }
        }
    }
    let mut trials = Vec::new();
    if cases.is_empty() {
        trials.push(Trial::test("proxy goldens present", || {
            Err("no proxy golden case found".into())
        }));
    }
    for (name, dir) in cases {
        let d = dir.clone();
        trials.push(Trial::test(format!("golden::{name}"), move || run_case(&d)));
        if dir.join("input.yaml").is_file() {
            let d = dir.clone();
            trials.push(Trial::test(format!("trace::{name}"), move || run_traces(&d)));
        }
    }
    match release_cases() {
        Ok(cases) => {
            for case in cases {
                let name = format!("release::{}", case.name);
                trials.push(Trial::test(name, move || run_release_case(&case)));
            }
        }
        Err(e) => trials.push(Trial::test("release cases present", move || Err(e))),
    }
    let dump_dir = svclab_tests::data_dir().join("proxy").join("trace-iptables-save");
    trials.push(Trial::test("trace::iptables-save-dump", move || run_dump_traces(&dump_dir)));
    libtest_mimic::run(&args, trials).exit();
}

/// A real `iptables-save` dump (taken after loading the standalone payload of scenario.yaml
/// into a network namespace) traced as a pasted scenario document: the outcomes must match
/// the trace of the rendered payload and the expected fates.
fn run_dump_traces(dir: &Path) -> Result<(), Failed> {
    use svclab_core::{CheckOptions, evaluate, trace};
    let scenario = Input::new("scenario.yaml", read(&dir.join("scenario.yaml"))?);
    let dump = Input::new("iptables-save.txt", read(&dir.join("iptables-save.txt"))?);
    let (with_dump, _) = evaluate(&[scenario.clone(), dump], &CheckOptions::default());
    let (rendered, _) = evaluate(&[scenario], &CheckOptions::default());
    let cases: [(&str, &str, u16, Want); 6] = [
        (
            "10.0.0.2",
            "172.30.0.41",
            80,
            Want::Endpoints(vec!["10.180.0.1:8080".into(), "10.180.0.2:8080".into()], false),
        ),
        (
            "192.168.0.2",
            "172.30.0.41",
            80,
            Want::Endpoints(vec!["10.180.0.1:8080".into(), "10.180.0.2:8080".into()], true),
        ),
        (
            "203.0.113.5",
            "5.6.7.8",
            80,
            Want::Endpoints(vec!["10.180.0.1:8080".into(), "10.180.0.2:8080".into()], true),
        ),
        ("198.51.100.7", "5.6.7.8", 80, Want::Verdict("DROP")),
        (
            "198.51.100.7",
            "192.168.0.2",
            30080,
            Want::Endpoints(vec!["10.180.0.1:8080".into(), "10.180.0.2:8080".into()], true),
        ),
        ("10.0.0.2", "172.30.0.42", 80, Want::Verdict("REJECT")),
    ];
    let mut failures = Vec::new();
    for (src, dst, dport, want) in &cases {
        let request = req(src, dst, *dport);
        let a = trace(&with_dump, &request);
        let b = trace(&rendered, &request);
        if !a.ruleset.starts_with("iptables-save dump") || !a.warnings.is_empty() {
            failures
                .push(format!("{src}->{dst}: ruleset {:?}, warnings {:?}", a.ruleset, a.warnings));
        }
        expect(&mut failures, &format!("dump {src}->{dst}:{dport}"), &a, want);
        expect(&mut failures, &format!("rendered {src}->{dst}:{dport}"), &b, want);
        let fates = |r: &svclab_core::TraceReport| {
            r.outcomes
                .iter()
                .map(|o| {
                    (
                        o.verdict.clone(),
                        o.endpoint.clone(),
                        o.masquerade,
                        format!("{:.6}", o.probability),
                    )
                })
                .collect::<Vec<_>>()
        };
        if fates(&a) != fates(&b) {
            failures.push(format!(
                "{src}->{dst}: dump {:?} vs rendered {:?}",
                fates(&a),
                fates(&b)
            ));
        }
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n").into()) }
}

/// One kube-proxy of tests/data/proxy-releases/cases.yaml.
struct ReleaseCase {
    name: String,
    release: String,
    mode: ProxyMode,
    /// Fields set on the shared KubeProxyConfiguration (`featureGates`, `nodePortAddresses`).
    kube_proxy: Value,
    standalone: bool,
    /// The shared scenario file of the case (`scenario.yaml` unless it names another).
    scenario: String,
}

fn release_dir() -> PathBuf {
    svclab_tests::data_dir().join("proxy-releases")
}

fn release_cases() -> Result<Vec<ReleaseCase>, Failed> {
    let cases = yaml(&read(&release_dir().join("cases.yaml"))?)?;
    let mut out = Vec::new();
    for case in cases.as_array().cloned().unwrap_or_default() {
        let name = case["name"].as_str().ok_or("a release case without name")?.to_owned();
        let release = case["release"].as_str().ok_or(format!("{name}: no release"))?.to_owned();
        let mode = case["mode"]
            .as_str()
            .and_then(ProxyMode::parse)
            .ok_or(format!("{name}: mode must be iptables or nftables"))?;
        out.push(ReleaseCase {
            name,
            release,
            mode,
            kube_proxy: case["kubeProxyConfiguration"].clone(),
            standalone: case["standalone"].as_bool().unwrap_or(false),
            scenario: case["scenario"].as_str().unwrap_or("scenario.yaml").to_owned(),
        });
    }
    if out.is_empty() {
        return Err("tests/data/proxy-releases/cases.yaml lists no case".into());
    }
    Ok(out)
}

/// The shared scenario with the case's release on the ClusterProfile and its mode and gates
/// and settings on the KubeProxyConfiguration, as one multi-document input.
fn release_scenario(case: &ReleaseCase) -> Result<String, Failed> {
    use serde::Deserialize;
    let text = read(&release_dir().join(&case.scenario))?;
    let mut docs = Vec::new();
    for doc in serde_norway::Deserializer::from_str(&text) {
        let mut value = Value::deserialize(doc).map_err(|e| format!("{}: {e}", case.scenario))?;
        match value["kind"].as_str() {
            Some("ClusterProfile") => {
                value["kubernetesVersion"] = Value::String(case.release.clone());
            }
            Some("KubeProxyConfiguration") => {
                value["mode"] = Value::String(case.mode.as_str().to_owned());
                for (field, v) in case.kube_proxy.as_object().into_iter().flatten() {
                    value[field] = v.clone();
                }
            }
            _ => {}
        }
        docs.push(value.to_string());
    }
    Ok(docs.join("\n---\n"))
}

/// Renders the case through `evaluate` and `render`; the golden is the payload (iptables in
/// canonical order, nftables after the Go tests' sort) or kube-proxy's refusal followed by the
/// check's errors about it.
fn run_release_case(case: &ReleaseCase) -> Result<(), Failed> {
    use svclab_core::{CheckOptions, RenderOptions, evaluate, render};
    let scenario = release_scenario(case)?;
    let (world, report) =
        evaluate(&[Input::new("scenario.yaml", scenario)], &CheckOptions::default());
    if world.profile.version.to_string() != case.release {
        return Err(format!("profile is {}, not {}", world.profile.version, case.release).into());
    }
    let errors: Vec<String> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == svclab_core::Severity::Error)
        .map(|d| {
            let line = d.source.as_ref().map_or(0, |s| s.line);
            format!("check: {} line {line}: {}\n", d.field, d.message)
        })
        .collect();
    let options = RenderOptions { standalone: case.standalone, ..RenderOptions::new(case.mode) };
    let (file, got) = match render(&world, &options) {
        Ok(text) => {
            if !errors.is_empty() {
                return Err(format!("rendered, yet the check has errors: {errors:?}").into());
            }
            match case.mode {
                ProxyMode::Iptables => {
                    // A standalone payload appends the built-in chains' jumps (and 1.24's
                    // kubelet chain), outside the Go tests' canonical order.
                    if !case.standalone && sort_iptables(&text) != text {
                        return Err(format!(
                            "output is not in canonical order\n{}",
                            diff(&sort_iptables(&text), &text)
                        )
                        .into());
                    }
                    (format!("{}.iptables", case.name), text)
                }
                // `sortNFTablesTransaction` drops `#` lines; svclab's own notice (the 1.36+
                // masquerading it does not model) stays in the golden, first.
                ProxyMode::Nftables => {
                    let notes: String = text
                        .lines()
                        .take_while(|l| l.starts_with('#'))
                        .map(|l| format!("{l}\n"))
                        .collect();
                    (format!("{}.nft", case.name), notes + &sort_nft(&text))
                }
            }
        }
        // The refusal, then what `svclab check` says about the same configuration.
        Err(e) => (format!("{}.error", case.name), format!("{e}\n{}", errors.concat())),
    };
    let path = release_dir().join(&file);
    if svclab_tests::bless() {
        return std::fs::write(&path, &got).map_err(|e| format!("{}: {e}", path.display()).into());
    }
    let expected = read(&path)?;
    if got != expected {
        return Err(format!("{file}: {}", diff(&expected, &got)).into());
    }
    Ok(())
}

fn read(path: &Path) -> Result<String, Failed> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()).into())
}

fn yaml(text: &str) -> Result<Value, Failed> {
    serde_norway::from_str(text).map_err(|e| format!("yaml: {e}").into())
}

/// Objects of a scenario text, as written (no defaulting, no allocation).
struct Objects {
    services: Vec<Service>,
    slices: Vec<EndpointSlice>,
    endpoints: Vec<Endpoints>,
    nodes: Vec<Node>,
}

fn objects(text: &str) -> Result<(Objects, svclab_core::Scenario), Failed> {
    let scenario = parse(&[Input::new("input.yaml", text)]);
    let mut out = Objects {
        services: Vec::new(),
        slices: Vec::new(),
        endpoints: Vec::new(),
        nodes: Vec::new(),
    };
    for object in &scenario.objects {
        match object {
            Object::Service(s) => out.services.push(s.value.clone()),
            Object::EndpointSlice(s) => out.slices.push(s.value.clone()),
            Object::Endpoints(e) => out.endpoints.push(e.value.clone()),
            Object::Node(n) => out.nodes.push(n.value.clone()),
            _ => {}
        }
    }
    Ok((out, scenario))
}

fn json_list(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// Maps the compact config.yaml onto real objects and builds the proxier configuration.
fn config_of(cfg: &Value, labels: Option<&Value>) -> Result<(ProxyConfig, ProxyMode), Failed> {
    let mode = match cfg["mode"].as_str().unwrap_or("iptables") {
        "nftables" => ProxyMode::Nftables,
        _ => ProxyMode::Iptables,
    };
    let family = if cfg["ipFamily"].as_str() == Some("IPv6") { IpFamily::V6 } else { IpFamily::V4 };
    let node_name = cfg["nodeName"].as_str().unwrap_or("test-node");
    let detect = &cfg["detectLocal"];
    let detect_mode = detect["mode"].as_str().unwrap_or("None");
    let cluster_cidrs = json_list(&detect["clusterCIDRs"]).join(",");
    let pod_cidrs = json_list(&detect["podCIDRs"]);
    let node_ip = cfg["nodeIP"].as_str().unwrap_or("");
    let kpc = serde_json::json!({
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "mode": cfg["mode"].as_str().unwrap_or("iptables"),
        "hostnameOverride": node_name,
        "clusterCIDR": cluster_cidrs,
        "detectLocalMode": if detect_mode == "None" { "None" } else { detect_mode },
        "detectLocal": {
            "bridgeInterface": detect["bridgeInterface"].as_str().unwrap_or(""),
            "interfaceNamePrefix": detect["interfaceNamePrefix"].as_str().unwrap_or(""),
        },
        "iptables": {
            "masqueradeAll": cfg["masqueradeAll"].as_bool().unwrap_or(false),
            "masqueradeBit": 14,
            "localhostNodePorts": cfg["localhostNodePorts"].as_bool().unwrap_or(true),
        },
        // The nftables proxier reads its own block (conversion.go, server_linux.go).
        "nftables": {
            "masqueradeAll": cfg["masqueradeAll"].as_bool().unwrap_or(false),
            "masqueradeBit": 14,
        },
        "nodePortAddresses": json_list(&cfg["nodePortAddresses"]),
        "conntrack": {"tcpBeLiberal": cfg["conntrackTCPBeLiberal"].as_bool().unwrap_or(false)},
    });
    let node_labels =
        labels.cloned().or_else(|| Some(cfg["topologyLabels"].clone())).filter(|v| v.is_object());
    let mut node = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node_name, "labels": node_labels.unwrap_or(serde_json::json!({}))},
        "spec": {"podCIDRs": pod_cidrs},
    });
    if !node_ip.is_empty() {
        node["status"] =
            serde_json::json!({"addresses": [{"type": "InternalIP", "address": node_ip}]});
    }
    let nfacct = &cfg["nfacctCounters"];
    let invalid = nfacct["ct_state_invalid_dropped_pkts"].as_bool().unwrap_or(false);
    let localhost = nfacct["localhost_nps_accepted_pkts"].as_bool().unwrap_or(false);
    let profile = serde_json::json!({
        "apiVersion": "svclab.dev/v1alpha1",
        "kind": "ClusterProfile",
        "host": {
            "iptablesRandomFully": cfg["iptablesHasRandomFully"].as_bool().unwrap_or(false),
            "nfacct": invalid && localhost,
            "interfaceAddresses": json_list(&cfg["nodeInterfaceAddresses"]),
        },
    });
    let docs = format!("{kpc}\n---\n{node}\n---\n{profile}\n");
    let scenario = parse(&[Input::new("config", docs)]);
    if !scenario.diagnostics.is_empty() {
        return Err(format!("config objects: {:?}", scenario.diagnostics).into());
    }
    let (mut kpc_obj, mut nodes, mut host) = (None, Vec::new(), None);
    for object in &scenario.objects {
        match object {
            Object::KubeProxyConfiguration(k) => kpc_obj = Some(k.value.clone()),
            Object::Node(n) => nodes.push(n.value.clone()),
            Object::ClusterProfile(p) => host = Some(p.value.clone()),
            _ => {}
        }
    }
    let host = host.ok_or("no profile")?;
    let facts = svclab_core::HostFacts {
        iptables_random_fully: host.iptables_random_fully.unwrap_or(false),
        nfacct: host.nfacct.unwrap_or(false),
        interface_addresses: host.interface_addresses.clone(),
    };
    let service_cidrs: Vec<ipnet::IpNet> =
        json_list(&cfg["serviceCIDRs"]).iter().filter_map(|c| c.parse().ok()).collect();
    let node_refs: Vec<&Node> = nodes.iter().collect();
    let mut config = ProxyConfig::from_objects(
        family,
        mode,
        kpc_obj.as_ref(),
        &node_refs,
        None,
        &facts,
        &service_cidrs,
    )
    .map_err(|e| e.to_string())?;
    // A golden taken from kube-proxy's tests of an older release names it (`release: "1.35"`):
    // the behaviours of kube-proxy's release table are those of that release.
    if let Some(release) = cfg["release"].as_str() {
        let version = svclab_core::Version::parse(release)
            .ok_or_else(|| format!("config.yaml: bad release {release:?}"))?;
        svclab_core::testing::configure_proxy_release(&mut config, version);
    }
    // The Go fakes inject the mark string and the two nfacct counters separately.
    if let Some(mark) = cfg["masqueradeMark"].as_str() {
        config.masquerade_mark = mark.to_owned();
    }
    config.nfacct_invalid = invalid;
    config.nfacct_localhost = localhost;
    if let Some(t) = cfg["largeClusterEndpointsThreshold"].as_u64() {
        config.large_cluster_threshold = usize::try_from(t).unwrap_or(1000);
    }
    if let Some(gate) = cfg["featureGates"]["PreferSameTrafficDistribution"].as_bool() {
        config.prefer_same_node = gate;
    }
    Ok((config, mode))
}

fn run_case(dir: &Path) -> Result<(), Failed> {
    let cfg = yaml(&read(&dir.join("config.yaml"))?)?;
    if dir.join("cases.yaml").is_file() {
        return run_topology(dir, &cfg);
    }
    let (config, mode) = config_of(&cfg, None)?;
    let (objs, scenario) = objects(&read(&dir.join("input.yaml"))?)?;
    if !scenario.diagnostics.is_empty() {
        return Err(format!("input diagnostics: {:?}", scenario.diagnostics).into());
    }
    let services: Vec<&Service> = objs.services.iter().collect();
    let slices: Vec<&EndpointSlice> = objs.slices.iter().collect();
    let endpoints: Vec<&Endpoints> = objs.endpoints.iter().collect();
    let rendered = render_objects(&services, &slices, &endpoints, &config, mode, false);
    let (file, got, expected) = match mode {
        ProxyMode::Iptables => {
            let expected = read(&dir.join("expected.iptables"))?;
            let sorted = sort_iptables(&rendered.text);
            // svclab writes the canonical order itself: sorting must not change anything.
            if sorted != rendered.text {
                return Err(format!(
                    "output is not in canonical order\n{}",
                    diff(&sorted, &rendered.text)
                )
                .into());
            }
            ("expected.iptables", sorted, expected)
        }
        ProxyMode::Nftables => {
            let expected = sort_nft(&read(&dir.join("expected.nft"))?);
            // The shipped pre-sorted text must agree with our reading of the sort.
            if let Ok(sorted) = std::fs::read_to_string(dir.join("expected.sorted.nft"))
                && sorted != expected
                && !svclab_tests::bless()
            {
                return Err(format!(
                    "expected.sorted.nft disagrees with sorted expected.nft\n{}",
                    diff(&sorted, &expected)
                )
                .into());
            }
            ("expected.sorted.nft", sort_nft(&rendered.text), expected)
        }
    };
    if svclab_tests::bless() {
        let target = svclab_tests::data_dir().join("proxy").join(dir.file_name().ok_or("name")?);
        std::fs::create_dir_all(&target).map_err(|e| e.to_string())?;
        // A case that only exists in the conformance directory is copied in whole first.
        if target != dir {
            for entry in std::fs::read_dir(dir).map_err(|e| e.to_string())?.filter_map(Result::ok) {
                let to = target.join(entry.file_name());
                if !to.exists() {
                    std::fs::copy(entry.path(), to).map_err(|e| e.to_string())?;
                }
            }
        }
        std::fs::write(target.join(file), &got).map_err(|e| e.to_string())?;
        return Ok(());
    }
    if got != expected {
        return Err(diff(&expected, &got).into());
    }
    Ok(())
}

fn diff(expected: &str, got: &str) -> String {
    let e: BTreeSet<&str> = expected.lines().collect();
    let g: BTreeSet<&str> = got.lines().collect();
    let mut out = String::from("output differs\n");
    for l in e.difference(&g) {
        out.push_str(&format!("- {l}\n"));
    }
    for l in g.difference(&e) {
        out.push_str(&format!("+ {l}\n"));
    }
    if e == g {
        out.push_str("(same lines, different order)\n--- got:\n");
        out.push_str(got);
    }
    out
}

/// `sortIPTablesRules`: tables by name; chains KUBE-NODEPORTS, KUBE-SERVICES, other KUBE-*,
/// the rest; rules grouped by chain in generation order, KUBE-NODEPORTS / KUBE-SERVICES rules
/// stable-sorted by the service name in their comment, "must be the last rule" last.
fn sort_iptables(text: &str) -> String {
    let mut tables: BTreeMap<String, (Vec<String>, Vec<String>)> = BTreeMap::new();
    let mut current = String::new();
    for line in text.lines() {
        if let Some(t) = line.strip_prefix('*') {
            current = t.to_owned();
            tables.entry(current.clone()).or_default();
        } else if line.starts_with(':') {
            tables.entry(current.clone()).or_default().0.push(line.to_owned());
        } else if line.starts_with("-A ") || line.starts_with("-X ") {
            tables.entry(current.clone()).or_default().1.push(line.to_owned());
        }
    }
    let rank = |name: &str| -> (u8, String) {
        match name {
            "KUBE-NODEPORTS" => (0, String::new()),
            "KUBE-SERVICES" => (1, String::new()),
            n if n.starts_with("KUBE-") => (2, n.to_owned()),
            n => (3, n.to_owned()),
        }
    };
    let service_of = |rule: &str| -> String {
        let Some(i) = rule.find("--comment ") else { return String::new() };
        let rest = rule[i + 10..].trim_start_matches('"');
        rest.split([' ', ':', '"']).next().unwrap_or("").to_owned()
    };
    let mut out = String::new();
    for (table, (decls, rules)) in &tables {
        out.push_str(&format!("*{table}\n"));
        let mut chains: Vec<(String, String)> = decls
            .iter()
            .map(|d| (d[1..].split(' ').next().unwrap_or("").to_owned(), d.clone()))
            .collect();
        chains.sort_by_key(|(name, _)| rank(name));
        for (_, d) in &chains {
            out.push_str(d);
            out.push('\n');
        }
        for (chain, _) in &chains {
            let prefix = format!("-A {chain} ");
            let mut mine: Vec<&String> = rules.iter().filter(|r| r.starts_with(&prefix)).collect();
            if chain == "KUBE-NODEPORTS" || chain == "KUBE-SERVICES" {
                mine.sort_by_key(|r| (r.contains("must be the last rule"), service_of(r)));
            }
            for r in mine {
                out.push_str(r);
                out.push('\n');
            }
        }
        out.push_str("COMMIT\n");
    }
    out
}

/// `sortNFTablesTransaction`.
fn sort_nft(text: &str) -> String {
    let order = ["table", "chain", "rule", "set", "map", "element"];
    let mut lines: Vec<&str> =
        text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).collect();
    lines.sort_by_key(|l| {
        let words: Vec<&str> = l.split(' ').collect();
        let kind = words.get(1).copied().unwrap_or("");
        let rank = order.iter().position(|o| *o == kind).unwrap_or(order.len());
        let name = words.get(4).copied().unwrap_or("").to_owned();
        let tie = if kind == "rule" { String::new() } else { (*l).to_owned() };
        (rank, name, tie)
    });
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// Topology sub-cases: endpoint sets compared as sets; `null` differs from `[]`.
fn run_topology(dir: &Path, cfg: &Value) -> Result<(), Failed> {
    let cases = yaml(&read(&dir.join("cases.yaml"))?)?;
    let mut failures = Vec::new();
    for case in cases.as_array().cloned().unwrap_or_default() {
        let name = case["name"].as_str().unwrap_or("?").to_owned();
        let (config, _) = config_of(cfg, Some(&case["node"]["labels"]))?;
        let text = format!(
            "{}\n---\n{}\n",
            serde_json::to_string(&case["service"]).map_err(|e| e.to_string())?,
            serde_json::to_string(&case["endpointSlice"]).map_err(|e| e.to_string())?
        );
        let (objs, _) = objects(&text)?;
        let services: Vec<&Service> = objs.services.iter().collect();
        let slices: Vec<&EndpointSlice> = objs.slices.iter().collect();
        let selection = select_endpoints(&services, &slices, &[], &config);
        let Some(sel) = selection.first() else {
            failures.push(format!("{name}: no service port"));
            continue;
        };
        let exp = &case["expected"];
        let as_set = |v: &Value| -> Option<BTreeSet<String>> {
            v.as_array().map(|_| json_list(v).into_iter().collect())
        };
        let got_set = |v: &Option<Vec<String>>| {
            v.as_ref().map(|l| l.iter().cloned().collect::<BTreeSet<_>>())
        };
        let checks = [
            ("clusterEndpoints", as_set(&exp["clusterEndpoints"]), got_set(&sel.cluster_endpoints)),
            ("localEndpoints", as_set(&exp["localEndpoints"]), got_set(&sel.local_endpoints)),
            (
                "allReachableEndpoints",
                as_set(&exp["allReachableEndpoints"]),
                Some(sel.all_reachable_endpoints.iter().cloned().collect()),
            ),
        ];
        for (field, want, got) in checks {
            if want != got {
                failures.push(format!("{name}: {field}: want {want:?}, got {got:?}"));
            }
        }
        if exp["hasAnyEndpoints"].as_bool() != Some(sel.has_any_endpoints) {
            failures.push(format!("{name}: hasAnyEndpoints: got {}", sel.has_any_endpoints));
        }
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n").into()) }
}

/// Traces over a golden scenario: every Service's cluster IP from a pod, its external IPs,
/// LB IPs (from an allowed and a disallowed source) and NodePort from off-node, checked
/// against the endpoint selection.
fn run_traces(dir: &Path) -> Result<(), Failed> {
    let cfg = yaml(&read(&dir.join("config.yaml"))?)?;
    let (config, _) = config_of(&cfg, None)?;
    let (objs, _) = objects(&read(&dir.join("input.yaml"))?)?;
    let services: Vec<&Service> = objs.services.iter().collect();
    let slices: Vec<&EndpointSlice> = objs.slices.iter().collect();
    let ipt = render_objects(&services, &slices, &[], &config, ProxyMode::Iptables, false).text;
    let nft = render_objects(&services, &slices, &[], &config, ProxyMode::Nftables, false).text;
    // Every expectation is checked in both modes: same fates, different machinery.
    let traces = |src: &str, dst: &str, dport: u16| {
        let request = req(src, dst, dport);
        [
            ("iptables", trace_text(&ipt, &config, &request)),
            ("nftables", trace_nft_text(&nft, &config, &request)),
        ]
    };
    let selection = select_endpoints(&services, &slices, &[], &config);
    let mut failures = Vec::new();
    let pod = "10.0.0.2";
    let outside = "198.51.100.7";
    let node_ip = config.node_ip.map(|i| i.to_string()).unwrap_or_else(|| "192.168.0.2".into());
    for service in &objs.services {
        for (i, port) in service.spec.ports.iter().enumerate() {
            let name = if port.name.is_empty() {
                format!("{}/{}", service.metadata.namespace, service.metadata.name)
            } else {
                format!("{}/{}:{}", service.metadata.namespace, service.metadata.name, port.name)
            };
            let Some(sel) = selection.iter().find(|s| s.service_port == name) else { continue };
            let dport = u16::try_from(port.port).unwrap_or(0);
            // apihelpers ExternallyAccessible + ExternalPolicyLocal.
            let spec = &service.spec;
            let accessible = spec.type_ == "LoadBalancer"
                || spec.type_ == "NodePort"
                || (spec.type_ == "ClusterIP" && !spec.external_ips.is_empty());
            let local_only = accessible && spec.external_traffic_policy == "Local";
            let itp_local = service.spec.internal_traffic_policy.as_deref() == Some("Local");
            // Cluster IP from a pod.
            let internal_eps = if itp_local {
                sel.local_endpoints.clone().unwrap_or_default()
            } else {
                sel.cluster_endpoints.clone().unwrap_or_default()
            };
            let want_internal = if !sel.has_any_endpoints {
                Want::Verdict("REJECT")
            } else if internal_eps.is_empty() {
                Want::Verdict("DROP")
            } else {
                Want::Endpoints(internal_eps.clone(), false)
            };
            for (mode, t) in traces(pod, &service.spec.cluster_ip, dport) {
                expect(
                    &mut failures,
                    &format!("{mode} {}", &format!("{name} cluster IP from pod")),
                    &t,
                    &want_internal,
                );
            }
            let external_eps = if local_only {
                sel.local_endpoints.clone().unwrap_or_default()
            } else {
                sel.cluster_endpoints.clone().unwrap_or_default()
            };
            let want_external = if !sel.has_any_endpoints {
                Want::Verdict("REJECT")
            } else if external_eps.is_empty() {
                Want::Verdict("DROP")
            } else {
                Want::Endpoints(external_eps.clone(), !local_only)
            };
            for eip in &service.spec.external_ips {
                for (mode, t) in traces(outside, eip, dport) {
                    expect(
                        &mut failures,
                        &format!("{mode} {}", &format!("{name} external IP {eip}")),
                        &t,
                        &want_external,
                    );
                }
            }
            let ranges: Vec<String> = service
                .spec
                .load_balancer_source_ranges
                .iter()
                .map(|r| r.trim().to_owned())
                .collect();
            for ingress in &service.status.load_balancer_ingress {
                let vip = &ingress.ip;
                if ranges.is_empty() {
                    for (mode, t) in traces(outside, vip, dport) {
                        expect(
                            &mut failures,
                            &format!("{mode} {name} LB {vip} open"),
                            &t,
                            &want_external,
                        );
                    }
                } else {
                    // An allowed source inside the first range, and a source outside all ranges.
                    let allowed = first_host(&ranges[0]);
                    for (mode, t) in traces(&allowed, vip, dport) {
                        let what = format!("{mode} {name} LB {vip} allowed source");
                        expect(&mut failures, &what, &t, &want_external);
                    }
                    let want = if sel.has_any_endpoints {
                        Want::Verdict("DROP")
                    } else {
                        Want::Verdict("REJECT")
                    };
                    for (mode, t) in traces(outside, vip, dport) {
                        expect(
                            &mut failures,
                            &format!("{mode} {name} LB {vip} other source"),
                            &t,
                            &want,
                        );
                    }
                }
            }
            if port.node_port != 0 {
                let np = u16::try_from(port.node_port).unwrap_or(0);
                for (mode, t) in traces(outside, &node_ip, np) {
                    expect(
                        &mut failures,
                        &format!("{mode} {}", &format!("{name} NodePort {np}")),
                        &t,
                        &want_external,
                    );
                }
            }
            let _ = i;
        }
    }
    // A destination no Service owns.
    for (mode, t) in traces(pod, "172.31.255.254", 80) {
        expect(
            &mut failures,
            &format!("{mode} {}", "no service"),
            &t,
            &Want::Verdict("no service"),
        );
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n").into()) }
}

fn first_host(cidr: &str) -> String {
    // Sloppy parsing: goldens write ranges with leading zeros (`203.0.113.000/025`).
    match svclab_core::testing::parse_cidr_sloppy(cidr) {
        Some((_, net)) => {
            net.hosts().next().map(|h| h.to_string()).unwrap_or_else(|| net.network().to_string())
        }
        None => cidr.to_owned(),
    }
}

fn req(src: &str, dst: &str, dport: u16) -> TraceRequest {
    TraceRequest { src: src.to_owned(), dst: dst.to_owned(), dport, ..TraceRequest::default() }
}

enum Want {
    Verdict(&'static str),
    /// The endpoints reached (as a set) and whether every path masquerades.
    Endpoints(Vec<String>, bool),
}

fn expect(failures: &mut Vec<String>, what: &str, report: &svclab_core::TraceReport, want: &Want) {
    match want {
        Want::Verdict(v) => {
            if report.outcomes.iter().any(|o| o.verdict != *v) || report.outcomes.is_empty() {
                failures.push(format!("{what}: want {v}, got {:?}", report.outcomes));
            }
        }
        Want::Endpoints(eps, masq) => {
            let got: BTreeSet<String> =
                report.outcomes.iter().filter_map(|o| o.endpoint.clone()).collect();
            let want: BTreeSet<String> = eps.iter().cloned().collect();
            let total: f64 = report.outcomes.iter().map(|o| o.probability).sum();
            if got != want
                || report.outcomes.iter().any(|o| o.verdict != "endpoint")
                || (total - 1.0).abs() > 1e-6
            {
                failures
                    .push(format!("{what}: want endpoints {want:?}, got {:?}", report.outcomes));
            } else if *masq && report.outcomes.iter().any(|o| !o.masquerade) {
                failures.push(format!("{what}: expected masquerade, got {:?}", report.outcomes));
            }
        }
    }
}
