//! `cargo xtask oracle`: svclab against upstream's own code. For each release and area it builds
//! the oracle (cached), generates cases from a seed (plus the hand-made ones of
//! `oracle/apiserver/testdata/` and `oracle/testdata/proxy/`), runs them through upstream and
//! svclab, groups the differences, shrinks each group's first case to a minimal one, and with
//! `--write-regressions` records it (with upstream's answer) under `tests/data/oracle/`, where
//! `tests/oracle_regressions.rs` checks svclab against it without Go. It prints the coverage of
//! the generated cases and the cases per second, and fails when anything diverges.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};
use svclab_oracle::cluster::blackbox::{self, Proxy};
use svclab_oracle::cluster::{self, ControlPlane};
use svclab_oracle::upstream::{self, Area};
use svclab_oracle::{Divergence, apiserver, proxy, shrink};
use svclab_scenario_gen::variety::{self, ProxyRun};

use crate::workspace::{say, target_dir, workspace_root};

const USAGE: &str = "usage: cargo xtask oracle [--release X.Y.Z ... | --all] [--area apiserver|proxy|all|cluster|upgrade] \
                     [--cases N] [--seed S] [--no-shrink] [--write-regressions]";

/// Cases a batch (one oracle process) takes.
const BATCH: usize = 1000;

/// What to run.
struct Options {
    releases: Vec<String>,
    areas: Vec<Area>,
    /// `--area cluster`: the apiserver's cases through a real kube-apiserver (its own area: it
    /// builds and starts a whole control plane, so `all` leaves it out).
    cluster: bool,
    /// `--area upgrade`: `svclab upgrade`'s apiserver findings from each release given to the
    /// next, against the apiserver oracle at both.
    upgrade: bool,
    cases: u64,
    seed: u64,
    shrink: bool,
    write_regressions: bool,
}

impl Options {
    fn parse(args: &[String], known: &[String]) -> anyhow::Result<Options> {
        let mut options = Options {
            releases: Vec::new(),
            areas: vec![Area::Apiserver, Area::Proxy],
            cluster: false,
            upgrade: false,
            cases: 500,
            seed: 1,
            shrink: true,
            write_regressions: false,
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value =
                |name: &str| args.next().with_context(|| format!("{name} needs a value; {USAGE}"));
            match arg.as_str() {
                "--all" => options.releases = known.to_vec(),
                "--release" => {
                    let wanted = value("--release")?;
                    options.releases.push(resolve(wanted, known)?);
                }
                "--area" => {
                    options.cluster = false;
                    options.upgrade = false;
                    options.areas = match value("--area")?.as_str() {
                        "apiserver" => vec![Area::Apiserver],
                        "proxy" => vec![Area::Proxy],
                        "all" => vec![Area::Apiserver, Area::Proxy],
                        "cluster" => {
                            options.cluster = true;
                            Vec::new()
                        }
                        "upgrade" => {
                            options.upgrade = true;
                            Vec::new()
                        }
                        other => bail!("unknown area {other:?}; {USAGE}"),
                    }
                }
                "--cases" => options.cases = value("--cases")?.parse().context("--cases N")?,
                "--seed" => options.seed = value("--seed")?.parse().context("--seed S")?,
                "--no-shrink" => options.shrink = false,
                "--write-regressions" => options.write_regressions = true,
                other => bail!("unknown oracle argument {other:?}; {USAGE}"),
            }
        }
        if options.releases.is_empty() {
            options
                .releases
                .push(known.last().cloned().context("oracle/releases.txt lists no release")?);
        }
        Ok(options)
    }
}

/// `1.33`, `1.33.13` or `v1.33.13` as a release of `oracle/releases.txt`: a minor means its
/// newest patch there; a patch not listed is taken as given.
fn resolve(wanted: &str, known: &[String]) -> anyhow::Result<String> {
    let bare = wanted.trim_start_matches('v');
    let parts: Vec<&str> = bare.split('.').collect();
    match parts.as_slice() {
        [_, _] => known
            .iter()
            .rev()
            .find(|k| k.trim_start_matches('v').starts_with(&format!("{bare}.")))
            .cloned()
            .with_context(|| format!("no release of {bare} in oracle/releases.txt")),
        [_, _, _] => Ok(format!("v{bare}")),
        _ => bail!("a release looks like 1.33 or 1.33.13, not {wanted:?}"),
    }
}

/// The releases of `oracle/releases.txt`, oldest first.
fn known_releases(root: &Path) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(root.join("oracle/releases.txt"))
        .context("reading oracle/releases.txt")?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect())
}

/// The minor of `v1.33.13`.
fn minor_of(release: &str) -> u32 {
    release.trim_start_matches('v').split('.').nth(1).and_then(|m| m.parse().ok()).unwrap_or(0)
}

/// `cargo xtask oracle`.
pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let root = workspace_root();
    let known = known_releases(&root)?;
    let options = Options::parse(args, &known)?;
    let mut failed = Vec::new();
    for area in &options.areas {
        for release in &options.releases {
            let divergences = match area {
                Area::Apiserver => apiserver_release(&root, release, &options)?,
                Area::Proxy => proxy_release(&root, release, &options)?,
            };
            if divergences > 0 {
                failed.push(format!("{} {release}: {divergences} divergences", area.as_str()));
            }
        }
    }
    if options.upgrade {
        ensure!(
            options.releases.len() >= 2,
            "--area upgrade needs two releases or more (each to the next); {USAGE}"
        );
        for pair in options.releases.windows(2) {
            let divergences = upgrade_pair(&root, &pair[0], &pair[1], &options)?
                + upgrade_proxy_pair(&root, &pair[0], &pair[1], &options)?;
            if divergences > 0 {
                failed
                    .push(format!("upgrade {} to {}: {divergences} divergences", pair[0], pair[1]));
            }
        }
    }
    if options.cluster {
        for release in &options.releases {
            let divergences = cluster_release(&root, release, &options)?;
            if divergences > 0 {
                failed.push(format!("cluster {release}: {divergences} divergences"));
            }
        }
    }
    ensure!(failed.is_empty(), "svclab and upstream disagree:\n  {}", failed.join("\n  "));
    say("oracle: 0 divergences");
    Ok(())
}

/// A case ready for both sides.
struct Prepared {
    id: String,
    /// The oracle's input line.
    line: Value,
    /// The objects as both sides read them.
    objects: Vec<Value>,
}

/// The generated cases and the hand-made ones that apply to the release.
fn apiserver_cases(
    root: &Path,
    release: &str,
    options: &Options,
) -> anyhow::Result<(Vec<Prepared>, BTreeMap<&'static str, u64>)> {
    let minor = minor_of(release);
    let mut coverage: BTreeMap<&'static str, u64> =
        variety::FEATURES.iter().map(|f| (*f, 0)).collect();
    let mut out = Vec::new();
    for index in 0..options.cases {
        let case = variety::apiserver_case(options.seed, minor, index);
        for feature in &case.features {
            *coverage.entry(feature).or_default() += 1;
        }
        let (line, objects) = apiserver::oracle_case(&case.id, &case.objects, release);
        out.push(Prepared { id: case.id, line, objects });
    }
    for path in crate::files::find_files(&root.join("oracle/apiserver/testdata"), ".json") {
        let text = std::fs::read_to_string(&path)?;
        let scenario: Value =
            serde_json::from_str(&text).with_context(|| format!("{}", path.display()))?;
        let within = |key: &str, keep: fn(u64, u64) -> bool| {
            scenario[key].as_u64().is_none_or(|bound| keep(u64::from(minor), bound))
        };
        if !within("minMinor", |m, b| m >= b) || !within("maxMinor", |m, b| m <= b) {
            continue;
        }
        let id = format!("testdata/{}", scenario["id"].as_str().unwrap_or("?"));
        let objects: Vec<Value> = scenario["objects"].as_array().cloned().unwrap_or_default();
        let (line, objects) = apiserver::oracle_case(&id, &objects, release);
        out.push(Prepared { id, line, objects });
    }
    Ok((out, coverage))
}

/// The apiserver oracle's binary of `release` (built, or found cached).
fn apiserver_binary(root: &Path, release: &str) -> anyhow::Result<PathBuf> {
    let work = target_dir(root).join("oracle").join("apiserver").join(release);
    upstream::build(root, Area::Apiserver, release, &work.join("bin"))?
        .into_iter()
        .next()
        .context("the apiserver build printed no binary")
}

/// Runs one release of the apiserver area and returns how many divergences it found.
fn apiserver_release(root: &Path, release: &str, options: &Options) -> anyhow::Result<usize> {
    let work = target_dir(root).join("oracle").join("apiserver").join(release);
    let started = Instant::now();
    say(&format!("oracle apiserver {release}: building (cached)"));
    let binary = apiserver_binary(root, release)?;
    let built = started.elapsed();
    let (cases, coverage) = apiserver_cases(root, release, options)?;
    let started = Instant::now();
    let mut answers = BTreeMap::new();
    for (i, batch) in cases.chunks(BATCH).enumerate() {
        let lines: Vec<Value> = batch.iter().map(|c| c.line.clone()).collect();
        answers.extend(upstream::run(&binary, &lines, &work.join(format!("batch-{i}")))?);
    }
    let upstream_time = started.elapsed();
    let started = Instant::now();
    let mut divergences: Vec<Divergence> = Vec::new();
    for case in &cases {
        let answer = answers
            .get(&case.id)
            .cloned()
            .unwrap_or_else(|| json!({"id": case.id, "error": "oracle: no answer"}));
        divergences.extend(apiserver::compare(&case.id, &case.objects, &answer));
    }
    let svclab_time = started.elapsed();
    let generated = options.cases;
    say(&format!(
        "oracle apiserver {release}: {} cases ({generated} generated, seed {}), build {:.1} s, upstream {:.1} s ({:.0} cases/s), svclab {:.2} s, {} divergences",
        cases.len(),
        options.seed,
        built.as_secs_f64(),
        upstream_time.as_secs_f64(),
        cases.len() as f64 / upstream_time.as_secs_f64().max(1e-9),
        svclab_time.as_secs_f64(),
        divergences.len()
    ));
    print_coverage(&coverage, generated, Area::Apiserver);
    let groups = group(&divergences);
    for (group, members) in &groups {
        let first = say_group(group, members);
        if options.shrink {
            let case =
                cases.iter().find(|c| c.id == first.case).context("the case of a divergence")?;
            let minimal = shrink_case(case, group, &binary, &work.join("shrink"), release)?;
            say(&format!(
                "    minimal ({} objects): {}",
                minimal.len(),
                apiserver::scenario_text(&minimal).replace('\n', " ")
            ));
            if options.write_regressions {
                let path = write_regression(root, release, group, &minimal, &binary, &work)?;
                say(&format!("    written to {}", path.display()));
            }
        }
    }
    Ok(divergences.len())
}

/// `svclab upgrade --to TO` for the apiserver cases generated at `from`, against the apiserver
/// oracle's answers at both releases (`svclab_oracle::upgrade`); returns the divergences.
fn upgrade_pair(root: &Path, from: &str, to: &str, options: &Options) -> anyhow::Result<usize> {
    let (bin_from, bin_to) = (apiserver_binary(root, from)?, apiserver_binary(root, to)?);
    let to_version = svclab_core::Version::parse(to.trim_start_matches('v'))
        .with_context(|| format!("release {to}"))?;
    let (cases, _) = apiserver_cases(root, from, options)?;
    let work = target_dir(root).join("oracle").join("upgrade").join(format!("{from}-{to}"));
    let started = Instant::now();
    let mut answers_from = BTreeMap::new();
    let mut answers_to = BTreeMap::new();
    for (i, batch) in cases.chunks(BATCH).enumerate() {
        let lines: Vec<Value> = batch.iter().map(|c| c.line.clone()).collect();
        answers_from.extend(upstream::run(&bin_from, &lines, &work.join(format!("from-{i}")))?);
        let lines: Vec<Value> =
            batch.iter().map(|c| apiserver::oracle_case(&c.id, &c.objects, to).0).collect();
        answers_to.extend(upstream::run(&bin_to, &lines, &work.join(format!("to-{i}")))?);
    }
    let upstream_time = started.elapsed();
    let started = Instant::now();
    let (mut divergences, mut skipped, mut shown) = (Vec::new(), 0, 0);
    for case in &cases {
        let none = json!({"id": case.id, "error": "oracle: no answer"});
        let line_from = answers_from.get(&case.id).unwrap_or(&none);
        let line_to = answers_to.get(&case.id).unwrap_or(&none);
        if svclab_oracle::upgrade::not_comparable(line_from, line_to).is_some() {
            skipped += 1;
            continue;
        }
        let (found, documents) = svclab_oracle::upgrade::compare(
            &case.id,
            &case.objects,
            to_version,
            line_from,
            line_to,
        );
        shown += documents;
        divergences.extend(found);
    }
    say(&format!(
        "oracle upgrade {from} to {to}: {} cases ({} generated, seed {}; {skipped} not compared: a feature gate refused at one release), {shown} documents answered differently upstream, upstream {:.1} s, svclab {:.1} s, {} divergences",
        cases.len() - skipped,
        options.cases,
        options.seed,
        upstream_time.as_secs_f64(),
        started.elapsed().as_secs_f64(),
        divergences.len()
    ));
    Ok(say_groups(&divergences))
}

/// `svclab upgrade --to TO` for the kube-proxy cases generated at `from` (each run: its mode,
/// family and node), against kube-proxy's own rules at both releases: the oracle renders each
/// case at `from`, then at `to` with those rules handed in to be normalised alike, and the
/// rehearsal must report a kube-proxy finding on that node and family exactly where upstream's
/// rules differ (`svclab_oracle::upgrade::compare_proxy`); returns the divergences.
fn upgrade_proxy_pair(
    root: &Path,
    from: &str,
    to: &str,
    options: &Options,
) -> anyhow::Result<usize> {
    let to_version = svclab_core::Version::parse(to.trim_start_matches('v'))
        .with_context(|| format!("release {to}"))?;
    let work = target_dir(root).join("oracle").join("upgrade").join(format!("{from}-{to}-proxy"));
    let binaries = |release: &str| -> anyhow::Result<Vec<PathBuf>> {
        let dir = target_dir(root).join("oracle").join("proxy").join(release).join("bin");
        Ok(upstream::build(root, Area::Proxy, release, &dir)?)
    };
    let (bins_from, bins_to) = (binaries(from)?, binaries(to)?);
    let binary_of = |bins: &[PathBuf], mode: &str| {
        bins.iter().find(|b| b.to_string_lossy().contains(&format!("proxy-{mode}-"))).cloned()
    };
    let minor = minor_of(from);
    // (id, the objects at `from`, the run, svclab's rules at `from`)
    type Prepared = (String, Vec<Value>, ProxyRun, Result<String, String>);
    let mut cases: Vec<Prepared> = Vec::new();
    for index in 0..options.cases {
        let (case, runs) = variety::proxy_case(options.seed, minor, index);
        for run in runs {
            let id = format!("{}.{}.{}", case.id, run.mode, run.family);
            let objects = svclab_oracle::upgrade::proxy_objects(&case.objects, &run, from);
            let rules = proxy::svclab_rules(&objects, &run);
            cases.push((id, objects, run, rules));
        }
    }
    let started = Instant::now();
    let (mut answers_from, mut answers_to) = (BTreeMap::new(), BTreeMap::new());
    for mode in ["iptables", "nftables"] {
        let of_mode: Vec<&Prepared> = cases.iter().filter(|c| c.2.mode == mode).collect();
        // A release without the mode (nftables before 1.29) has no binary for it: no kube-proxy
        // of that mode runs today, or the target's refuses it (the rehearsal's own finding).
        let Some(bin_from) = binary_of(&bins_from, mode) else { continue };
        let bin_to = binary_of(&bins_to, mode);
        for (i, batch) in of_mode.chunks(BATCH).enumerate() {
            // At `from`, svclab's rules are compared with upstream's as the proxy area does; at
            // `to`, the same rules are normalised beside upstream's there.
            let lines: Vec<Value> = batch
                .iter()
                .map(|(id, objects, run, rules)| proxy::oracle_case(id, objects, run, rules))
                .collect();
            answers_from.extend(upstream::run(
                &bin_from,
                &lines,
                &work.join(format!("from-{mode}-{i}")),
            )?);
            let lines: Vec<Value> = batch
                .iter()
                .map(|(id, objects, run, rules)| {
                    let objects = svclab_oracle::upgrade::proxy_objects_at(objects, to);
                    proxy::oracle_case(id, &objects, run, rules)
                })
                .collect();
            if let Some(bin_to) = &bin_to {
                let work = work.join(format!("to-{mode}-{i}"));
                answers_to.extend(upstream::run(bin_to, &lines, &work)?);
            }
        }
    }
    let upstream_time = started.elapsed();
    let started = Instant::now();
    let (mut divergences, mut skipped, mut changed) = (Vec::new(), 0, 0);
    for (id, objects, run, rules) in &cases {
        let none = json!({"id": id, "error": "no kube-proxy of this mode at the release"});
        let Some(line_from) = answers_from.get(id) else {
            skipped += 1;
            continue;
        };
        let line_to = answers_to.get(id).unwrap_or(&none);
        let at_from = proxy::compare(id, run, rules, line_from);
        if !at_from.is_empty() {
            divergences.extend(at_from);
            continue;
        }
        if svclab_oracle::upgrade::proxy_not_comparable(line_from, line_to).is_some() {
            skipped += 1;
            continue;
        }
        if line_to["normalized"] != line_to["svclabNormalized"] {
            changed += 1;
        }
        divergences
            .extend(svclab_oracle::upgrade::compare_proxy(id, objects, run, to_version, line_to));
    }
    say(&format!(
        "oracle upgrade {from} to {to}, kube-proxy: {} runs ({} cases generated, seed {}; {skipped} not compared: kube-proxy refuses one side), {changed} with rules upstream changes, upstream {:.1} s, svclab {:.1} s, {} divergences",
        cases.len() - skipped,
        options.cases,
        options.seed,
        upstream_time.as_secs_f64(),
        started.elapsed().as_secs_f64(),
        divergences.len()
    ));
    Ok(say_groups(&divergences))
}

/// Runs the apiserver's cases of one release through a real kube-apiserver (one start per
/// distinct ClusterProfile, objects over HTTP in stream order) and returns how many
/// divergences it found (`svclab_oracle::cluster::blackbox` says what is compared how).
fn cluster_release(root: &Path, release: &str, options: &Options) -> anyhow::Result<usize> {
    let work = target_dir(root).join("oracle").join("cluster-run").join(release);
    let started = Instant::now();
    say(&format!(
        "oracle cluster {release}: building etcd, kube-apiserver and kube-proxy (cached)"
    ));
    let binaries = cluster::build(root, release, &target_dir(root).join("oracle/cluster"))?;
    let built = started.elapsed();
    let (cases, _) = apiserver_cases(root, release, options)?;
    let mut skipped: BTreeMap<&str, usize> = BTreeMap::new();
    let runnable: Vec<(String, Vec<Value>)> = cases
        .into_iter()
        .filter(|c| match blackbox::not_runnable(&c.objects) {
            Some(why) => {
                *skipped.entry(why).or_default() += 1;
                false
            }
            None => true,
        })
        .map(|c| (c.id, c.objects))
        .collect();
    let (count, groups) = (runnable.len(), blackbox::by_settings(runnable));
    let started = Instant::now();
    let (mut divergences, mut refused): (Vec<Divergence>, usize) = (Vec::new(), 0);
    for (settings, group) in &groups {
        let plane = match ControlPlane::start(&binaries, settings, &work.join("control-plane")) {
            Ok(plane) => plane,
            Err(error) => {
                // kube-apiserver refuses to start where svclab refuses a gate, and every gate it
                // names is one svclab refuses with the same words (it stops at the first refusal
                // of a kind, svclab lists them all).
                let (profile, _) = apiserver::svclab_answers(&group[0].1);
                let log = std::fs::read_to_string(work.join("control-plane/kube-apiserver.log"))
                    .unwrap_or_default();
                let said: Vec<&str> = profile
                    .iter()
                    .map(|p| p.strip_prefix("featureGates: ").unwrap_or(p))
                    .filter(|p| log.contains(p))
                    .collect();
                let named = log.split("feature gate").skip(1).filter_map(|rest| {
                    let rest = rest.trim_start_matches(':').trim_start();
                    rest.split(|c: char| !c.is_ascii_alphanumeric()).next()
                });
                let unexplained =
                    named.filter(|gate| !said.iter().any(|p| p.contains(gate))).count();
                if said.is_empty() || unexplained > 0 {
                    divergences.push(Divergence {
                        case: group[0].0.clone(),
                        index: None,
                        object: "ClusterProfile".into(),
                        kind: svclab_oracle::DivergenceKind::Profile,
                        svclab: json!(profile),
                        upstream: json!(error.to_string()),
                    });
                }
                refused += group.len();
                continue;
            }
        };
        let proxy = Proxy::start(&plane)?;
        let kubernetes = blackbox::kubernetes_service(&proxy)?;
        for (id, objects) in group {
            let (objects, skip) = blackbox::with_kubernetes(objects, &kubernetes);
            let line = blackbox::run(&proxy, id, &objects, skip);
            divergences.extend(blackbox::compare(id, &objects, skip, &line, settings));
            blackbox::clean(&proxy)?;
        }
    }
    say(&format!(
        "oracle cluster {release}: {count} cases ({} generated, seed {}; {}), {} kube-apiserver starts ({refused} cases refused at start as svclab refuses them), build {:.1} s, run {:.1} s, {} divergences",
        options.cases,
        options.seed,
        if skipped.is_empty() {
            "none skipped".to_owned()
        } else {
            skipped
                .iter()
                .map(|(why, n)| format!("{n} not run: {why}"))
                .collect::<Vec<_>>()
                .join(", ")
        },
        groups.len(),
        built.as_secs_f64(),
        started.elapsed().as_secs_f64(),
        divergences.len()
    ));
    Ok(say_groups(&divergences))
}

/// Prints every group of divergences ([`say_group`]) and returns how many there are.
fn say_groups(divergences: &[Divergence]) -> usize {
    for (group, members) in &group(divergences) {
        say_group(group, members);
    }
    divergences.len()
}

/// Prints a group of divergences and its first member's two sides; returns that member.
fn say_group<'d>(group: &str, members: &[&'d Divergence]) -> &'d Divergence {
    let first = members[0];
    say(&format!("  {} × {group}", members.len()));
    say(&format!("    e.g. {} #{:?} {}", first.case, first.index, first.object));
    say(&format!("    svclab:   {}", first.svclab));
    say(&format!("    upstream: {}", first.upstream));
    first
}

/// The divergences by group, each group's members in case order.
fn group(divergences: &[Divergence]) -> BTreeMap<String, Vec<&Divergence>> {
    let mut out: BTreeMap<String, Vec<&Divergence>> = BTreeMap::new();
    for d in divergences {
        out.entry(d.group()).or_default().push(d);
    }
    out
}

/// The smallest case, from `case`, in which `group` still diverges.
fn shrink_case(
    case: &Prepared,
    group: &str,
    binary: &Path,
    work: &Path,
    release: &str,
) -> anyhow::Result<Vec<Value>> {
    let mut failure = None;
    let minimal = shrink::shrink(
        case.objects.clone(),
        |o| o["kind"] == "ClusterProfile",
        |candidates| {
            let lines: Vec<Value> = candidates
                .iter()
                .enumerate()
                .map(|(i, objects)| json!({"id": format!("shrink-{i}"), "objects": objects}))
                .collect();
            let answers = match upstream::run(binary, &lines, work) {
                Ok(answers) => answers,
                Err(e) => {
                    failure = Some(e);
                    return vec![false; candidates.len()];
                }
            };
            candidates
                .iter()
                .enumerate()
                .map(|(i, objects)| {
                    let id = format!("shrink-{i}");
                    let answer = answers.get(&id).cloned().unwrap_or(Value::Null);
                    apiserver::compare(&id, objects, &answer).iter().any(|d| d.group() == group)
                })
                .collect()
        },
    );
    if let Some(error) = failure {
        return Err(error).with_context(|| format!("shrinking at {release}"));
    }
    Ok(minimal)
}

/// Records a minimal case with upstream's answer under `tests/data/oracle/apiserver/`.
fn write_regression(
    root: &Path,
    release: &str,
    group: &str,
    objects: &[Value],
    binary: &Path,
    work: &Path,
) -> anyhow::Result<PathBuf> {
    let line = json!({"id": "regression", "objects": objects});
    let answers = upstream::run(binary, &[line], &work.join("regression"))?;
    let answer = answers.get("regression").cloned().context("no answer for the regression case")?;
    let slug: String = svclab_oracle::divergence::mask(group)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|w| !w.is_empty())
        .take(8)
        .collect::<Vec<_>>()
        .join("-");
    let dir = root.join("tests/data/oracle/apiserver");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{release}-{slug}.json"));
    let record =
        json!({"release": release, "group": group, "objects": objects, "upstream": answer});
    std::fs::write(&path, serde_json::to_string_pretty(&record)? + "\n")?;
    Ok(path)
}

/// The generated cases' coverage: how many cases exercised each feature, and which of the
/// area's own features none did (`proxy: …` are kube-proxy's settings; the Service shapes the
/// proxy area draws are listed when drawn, since it draws only objects an apiserver stored).
fn print_coverage(coverage: &BTreeMap<&'static str, u64>, cases: u64, area: Area) {
    let own = |f: &str| f.starts_with("proxy: ") == matches!(area, Area::Proxy);
    let never: BTreeSet<&str> =
        coverage.iter().filter(|(f, n)| **n == 0 && own(f)).map(|(f, _)| *f).collect();
    let mut line = String::from("  coverage:");
    for feature in variety::FEATURES {
        let n = coverage.get(feature).copied().unwrap_or(0);
        if n > 0 {
            line.push_str(&format!(" {feature} {n};"));
        }
    }
    say(&line);
    if !never.is_empty() && cases > 0 {
        say(&format!("  not covered: {}", never.into_iter().collect::<Vec<_>>().join(", ")));
    }
}

/// A kube-proxy case: one scenario rendered in one run.
struct ProxyPrepared {
    id: String,
    run: ProxyRun,
    /// The objects at the release.
    objects: Vec<Value>,
    /// svclab's rules, or kube-proxy's refusal as svclab words it.
    svclab: Result<String, String>,
}

impl ProxyPrepared {
    fn new(id: String, objects: &[Value], run: ProxyRun, release: &str) -> ProxyPrepared {
        let objects = proxy::at_release(objects, release, &run);
        let svclab = proxy::svclab_rules(&objects, &run);
        ProxyPrepared { id, run, objects, svclab }
    }

    fn line(&self) -> Value {
        proxy::oracle_case(&self.id, &self.objects, &self.run, &self.svclab)
    }
}

/// A hand-made kube-proxy scenario: its id, its objects and the runs it asks for.
type HandMade = (String, Vec<Value>, Vec<ProxyRun>);

/// The hand-made kube-proxy scenarios (`oracle/testdata/proxy/*.yaml`): their objects and the
/// runs their first `# oracle: node=N families=F1,F2 modes=M1,M2 minors=L-H` line asks for.
fn hand_made_proxy(root: &Path, minor: u32) -> anyhow::Result<Vec<HandMade>> {
    let mut out = Vec::new();
    for path in crate::files::find_files(&root.join("oracle/testdata/proxy"), ".yaml") {
        let text = std::fs::read_to_string(&path)?;
        let mut objects = Vec::new();
        for document in serde_norway::Deserializer::from_str(&text) {
            let value = <Value as serde::Deserialize>::deserialize(document)
                .with_context(|| format!("{}", path.display()))?;
            if !value.is_null() {
                objects.push(value);
            }
        }
        let header = text.lines().find_map(|l| l.strip_prefix("# oracle: ")).unwrap_or("");
        let (mut node, mut families, mut modes) = ("", "IPv4", "iptables,nftables");
        let mut minors = 0..=u32::MAX;
        for word in header.split_whitespace() {
            match word.split_once('=') {
                Some(("node", v)) => node = v,
                Some(("families", v)) => families = v,
                Some(("modes", v)) => modes = v,
                Some(("minors", v)) => {
                    let (low, high) = v.split_once('-').unwrap_or((v, v));
                    let bound = |b: &str| {
                        b.parse::<u32>().with_context(|| format!("{}: minors={v}", path.display()))
                    };
                    minors = bound(low)?..=bound(high)?;
                }
                _ => {}
            }
        }
        // `minors=24-33`: the releases at which svclab's apiserver stores the scenario's objects
        // as kube-proxy is fed them (oracle/proxy/compare.sh reads the same header).
        if !minors.contains(&minor) {
            continue;
        }
        let mut runs = Vec::new();
        for mode in modes.split(',') {
            let mode = match mode {
                "iptables" => "iptables",
                "nftables" if minor >= 29 => "nftables",
                _ => continue,
            };
            for family in families.split(',') {
                let family = if family == "IPv6" { "IPv6" } else { "IPv4" };
                let node = if node.is_empty() { "node-a" } else { node }.to_owned();
                runs.push(ProxyRun { mode, family, node });
            }
        }
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        out.push((format!("testdata/{stem}"), objects, runs));
    }
    Ok(out)
}

/// Runs one release of the proxy area and returns how many divergences it found.
fn proxy_release(root: &Path, release: &str, options: &Options) -> anyhow::Result<usize> {
    let minor = minor_of(release);
    let work = target_dir(root).join("oracle").join("proxy").join(release);
    let started = Instant::now();
    say(&format!("oracle proxy {release}: building (cached)"));
    let binaries = upstream::build(root, Area::Proxy, release, &work.join("bin"))?;
    let binary_of = |mode: &str| {
        binaries.iter().find(|b| b.to_string_lossy().contains(&format!("proxy-{mode}-"))).cloned()
    };
    let built = started.elapsed();
    let started = Instant::now();
    let mut coverage: BTreeMap<&'static str, u64> =
        variety::FEATURES.iter().map(|f| (*f, 0)).collect();
    let mut cases = Vec::new();
    for index in 0..options.cases {
        let (case, runs) = variety::proxy_case(options.seed, minor, index);
        for feature in &case.features {
            *coverage.entry(feature).or_default() += 1;
        }
        for run in runs {
            let id = format!("{}.{}.{}", case.id, run.mode, run.family);
            cases.push(ProxyPrepared::new(id, &case.objects, run, release));
        }
    }
    for (name, objects, runs) in hand_made_proxy(root, minor)? {
        for run in runs {
            let id = format!("{name}.{}.{}", run.mode, run.family);
            cases.push(ProxyPrepared::new(id, &objects, run, release));
        }
    }
    let svclab_time = started.elapsed();
    let started = Instant::now();
    let mut answers = BTreeMap::new();
    for mode in ["iptables", "nftables"] {
        let of_mode: Vec<&ProxyPrepared> = cases.iter().filter(|c| c.run.mode == mode).collect();
        if of_mode.is_empty() {
            continue;
        }
        let binary =
            binary_of(mode).with_context(|| format!("the proxy build printed no {mode} binary"))?;
        for (i, batch) in of_mode.chunks(BATCH).enumerate() {
            let lines: Vec<Value> = batch.iter().map(|c| c.line()).collect();
            answers.extend(upstream::run(
                &binary,
                &lines,
                &work.join(format!("{mode}-batch-{i}")),
            )?);
        }
    }
    let upstream_time = started.elapsed();
    let mut divergences = Vec::new();
    for case in &cases {
        let answer = answers.get(&case.id).cloned().unwrap_or(Value::Null);
        divergences.extend(proxy::compare(&case.id, &case.run, &case.svclab, &answer));
    }
    say(&format!(
        "oracle proxy {release}: {} renders ({} cases generated, seed {}), build {:.1} s, svclab {:.2} s, upstream {:.1} s ({:.0} renders/s), {} divergences",
        cases.len(),
        options.cases,
        options.seed,
        built.as_secs_f64(),
        svclab_time.as_secs_f64(),
        upstream_time.as_secs_f64(),
        cases.len() as f64 / upstream_time.as_secs_f64().max(1e-9),
        divergences.len()
    ));
    print_coverage(&coverage, options.cases, Area::Proxy);
    for (group, members) in &group(&divergences) {
        let first = members[0];
        say(&format!("  {} × {group}", members.len()));
        say(&format!("    e.g. {} {}", first.case, first.object));
        say(&format!("    svclab:   {}", first.svclab));
        say(&format!("    upstream: {}", first.upstream));
        if options.shrink {
            let case =
                cases.iter().find(|c| c.id == first.case).context("the case of a divergence")?;
            let Some(binary) = binary_of(case.run.mode) else { continue };
            let minimal = shrink_proxy(case, group, &binary, &work.join("shrink"), release)?;
            say(&format!(
                "    minimal ({} objects): {}",
                minimal.len(),
                apiserver::scenario_text(&minimal).replace('\n', " ")
            ));
        }
    }
    Ok(divergences.len())
}

/// The smallest kube-proxy case, from `case`, in which `group` still diverges.
fn shrink_proxy(
    case: &ProxyPrepared,
    group: &str,
    binary: &Path,
    work: &Path,
    release: &str,
) -> anyhow::Result<Vec<Value>> {
    let mut failure = None;
    let minimal = shrink::shrink(
        case.objects.clone(),
        |o| o["kind"] == "ClusterProfile",
        |candidates| {
            let prepared: Vec<ProxyPrepared> = candidates
                .iter()
                .enumerate()
                .map(|(i, objects)| {
                    ProxyPrepared::new(format!("shrink-{i}"), objects, case.run.clone(), release)
                })
                .collect();
            let lines: Vec<Value> = prepared.iter().map(ProxyPrepared::line).collect();
            let answers = match upstream::run(binary, &lines, work) {
                Ok(answers) => answers,
                Err(e) => {
                    failure = Some(e);
                    return vec![false; candidates.len()];
                }
            };
            prepared
                .iter()
                .map(|p| {
                    let answer = answers.get(&p.id).cloned().unwrap_or(Value::Null);
                    proxy::compare(&p.id, &p.run, &p.svclab, &answer)
                        .iter()
                        .any(|d| d.group() == group)
                })
                .collect()
        },
    );
    if let Some(error) = failure {
        return Err(error).with_context(|| format!("shrinking at {release}"));
    }
    Ok(minimal)
}
