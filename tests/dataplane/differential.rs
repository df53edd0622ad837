//! The differential run: scenarios generated from seeds (`generate.rs`), rendered by svclab in
//! both proxy modes, loaded into the kernel and probed like every other case; each answer must
//! be one the trace predicts, and iptables and nftables must give the same verdict for the same
//! probe. A failing seed is shrunk to a smallest still-failing scenario, which is printed with
//! the seed and the command that replays it.
//!
//! Environment (all optional): `SVCLAB_DIFFERENTIAL_SEEDS=N` runs one `differential/campaign`
//! case over N seeds from `SVCLAB_DIFFERENTIAL_START` (default 1) instead of the fixed seeds,
//! stopping after `SVCLAB_DIFFERENTIAL_TIME` seconds (default no limit);
//! `SVCLAB_DIFFERENTIAL_SHRINK=0` reports a failure without shrinking it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::case::{Expect, Family, Mode, Probe, Role, SvcPort, Verdict};
use crate::generate::Scenario;
use crate::runner::{self, CaseDef, Execution, Kind, RulesFrom, describe_expect, same_expectation};

/// The seeds `scripts/test` runs (through `cargo test`): together they cover every Service type
/// (ClusterIP, NodePort, LoadBalancer, headless, ExternalName), both traffic policies, source
/// ranges (one holding the load-balancer IPs), ClientIP affinity, terminating and zoned
/// endpoints, remote and hostNetwork endpoints, UDP, a dual-stack Service (probed over IPv6
/// too), `ipMode: Proxy`, the node's address as an external IP, and masqueradeAll.
pub(crate) const DEFAULT_SEEDS: [u64; 5] = [29, 64, 69, 90, 93];

/// Most scenarios a shrink tries (each one is two kernel runs of a few seconds).
const SHRINK_ATTEMPTS: usize = 60;
/// Longest a shrink runs.
const SHRINK_TIME: Duration = Duration::from_secs(240);

/// A case name: `differential/seed-<seed>` or `differential/campaign`.
pub(crate) fn seed_case_name(seed: u64) -> String {
    format!("differential/seed-{seed}")
}

/// How a campaign is bounded, from the environment (`None`: the fixed seeds).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Campaign {
    pub(crate) start: u64,
    pub(crate) seeds: u64,
    pub(crate) time: Option<Duration>,
}

impl Campaign {
    pub(crate) fn from_env() -> Option<Campaign> {
        let number =
            |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<u64>().ok());
        let seeds = number("SVCLAB_DIFFERENTIAL_SEEDS")?;
        Some(Campaign {
            start: number("SVCLAB_DIFFERENTIAL_START").unwrap_or(1),
            seeds,
            time: number("SVCLAB_DIFFERENTIAL_TIME").map(Duration::from_secs),
        })
    }
}

fn case_def(scenario: &Scenario, mode: Mode, family: Family) -> CaseDef {
    CaseDef {
        id: format!("seed-{}", scenario.seed),
        path: std::path::PathBuf::from(format!("differential-seed-{}.yaml", scenario.seed)),
        kind: Kind::Generated,
        mode,
        rules: RulesFrom::Svclab,
        known_failure: None,
        text: Some(scenario.to_yaml()),
        light: true,
        family,
    }
}

/// Figures of one scenario's run.
#[derive(Debug, Default, Clone)]
pub(crate) struct Figures {
    pub(crate) probes: usize,
    pub(crate) connections: u64,
    /// Probes where the two modes differ as kube-proxy's two proxiers do (see
    /// [`mode_difference`]), with the reason.
    pub(crate) mode_differences: Vec<String>,
}

/// Runs a scenario in both modes, for IPv4 and (on a dual-stack cluster) IPv6; the failures
/// (empty: it passed) and the figures.
fn check(scenario: &Scenario) -> (Vec<String>, Figures) {
    let mut failures = Vec::new();
    let mut figures = Figures::default();
    let dual = scenario.dual_stack_cluster && scenario.services.iter().any(|s| s.dual_stack);
    let families: &[Family] = if dual { &[Family::V4, Family::V6] } else { &[Family::V4] };
    for family in families.iter().copied() {
        let mut runs: BTreeMap<Mode, Execution> = BTreeMap::new();
        for mode in [Mode::Iptables, Mode::Nftables] {
            let label = match family {
                Family::V4 => mode.as_str().to_owned(),
                Family::V6 => format!("{} ipv6", mode.as_str()),
            };
            match runner::execute(&case_def(scenario, mode, family)) {
                Ok(done) => {
                    for rejected in &done.rejected {
                        failures.push(format!(
                            "{label}: the generator wrote an invalid Service: {rejected}"
                        ));
                    }
                    failures.extend(done.failures.iter().map(|f| format!("{label}: {f}")));
                    figures.probes += done.probes.len();
                    figures.connections +=
                        done.probes.iter().map(|(p, _)| u64::from(p.count())).sum::<u64>();
                    runs.insert(mode, done);
                }
                Err(err) => failures.push(format!("{label}: {err}")),
            }
        }
        if let (Some(ipt), Some(nft)) = (runs.get(&Mode::Iptables), runs.get(&Mode::Nftables)) {
            failures.extend(compare_modes(ipt, nft, &mut figures.mode_differences));
        }
    }
    (failures, figures)
}

/// The same probe must get the same verdict in both modes: the same trace expectation, and the
/// kernel answering the same way (refused, dropped, or answered by endpoints of the other
/// mode's trace with the same masquerade). The probes of service addresses no Service owns
/// differ by design (the nftables proxier rejects and drops them in its cluster-ips-check
/// chain, proxy-rules.md §4; `unassigned_probes` checks each mode on its own), and so do
/// NodePorts on 127.0.0.1, which only the iptables proxier accepts.
fn compare_modes(ipt: &Execution, nft: &Execution, known: &mut Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    let key = |p: &Probe| (p.what.clone(), p.role, p.src, p.dst);
    let by_key: BTreeMap<_, _> = nft.probes.iter().map(|(p, v)| (key(p), (p, v))).collect();
    for (probe, verdict) in &ipt.probes {
        if probe.what.contains("no Service defines") || probe.what.contains("unallocated") {
            continue;
        }
        let Some((other, other_verdict)) = by_key.get(&key(probe)) else { continue };
        let what =
            format!("{} from {} ({}) -> {}", probe.what, probe.role.as_str(), probe.src, probe.dst);
        let port = ipt.ports.iter().find(|p| probe.what.starts_with(&format!("{} ", p.name)));
        if let Some(reason) = mode_difference(probe, &other.expect, port) {
            known.push(format!("{what}: {reason}"));
            continue;
        }
        if !same_expectation(&probe.expect, &other.expect) {
            out.push(format!(
                "iptables and nftables traces differ for {what}: iptables {}, nftables {}",
                describe_expect(&probe.expect),
                describe_expect(&other.expect)
            ));
        }
        let same = match (verdict, other_verdict) {
            (Verdict::Landed(a), Verdict::Landed(b)) => {
                // Each mode reaches a sample of the endpoints: compare masquerade where both
                // reached the same endpoint, and each mode's endpoints against the other's trace.
                let in_trace = |eps: &BTreeMap<_, bool>, expect: &Expect| match expect {
                    Expect::Land { endpoints, .. } => {
                        eps.keys().all(|ep| endpoints.iter().any(|e| e.addr == *ep && e.p > 0.0))
                    }
                    _ => false,
                };
                a.iter().all(|(ep, m)| b.get(ep).is_none_or(|n| n == m))
                    && in_trace(a, &other.expect)
                    && in_trace(b, &probe.expect)
            }
            (a, b) => a == *b,
        };
        if !same {
            out.push(format!(
                "iptables and nftables answer differently for {what}: iptables {verdict}, nftables {other_verdict}"
            ));
        }
    }
    out
}

/// Where kube-proxy's two proxiers really differ, the reason; `None` where they must agree.
/// `ipt` is the iptables probe (with its expectation), `nft` the nftables expectation.
fn mode_difference(ipt: &Probe, nft: &Expect, port: Option<&SvcPort>) -> Option<&'static str> {
    let external = ipt.what.ends_with("external IP") || ipt.what.ends_with("loadbalancer IP");
    let unhandled_or_refused = matches!(ipt.expect, Expect::Unhandled | Expect::Refused);
    let filtered = matches!(nft, Expect::Refused | Expect::Dropped);
    // pkg/proxy/iptables/proxier.go (syncProxyRules, v1.26 to v1.33): the REJECT/DROP of an
    // external IP or load-balancer IP without (external) endpoints sits in
    // KUBE-EXTERNAL-SERVICES, which only INPUT and FORWARD jump to (iptablesJumpChains), so the
    // node's own connections are not filtered and leave the node. The nftables proxier puts
    // the same addresses in its no-endpoint-services map, checked by service-endpoints-check,
    // which filter-output jumps to as well (pkg/proxy/nftables/proxier.go,
    // nftablesJumpChains).
    if external && ipt.role == Role::Node && ipt.expect == Expect::Unhandled && filtered {
        return Some(
            "the node's own connection to an address without endpoints: iptables leaves it unfiltered (KUBE-EXTERNAL-SERVICES is not jumped from OUTPUT), nftables filters it (service-endpoints-check is)",
        );
    }
    // The iptables proxier only uses a firewall chain when the Service has endpoints
    // (`usesFWChain := hasEndpoints && ...LoadBalancerVIPs... && ...SourceRanges`), the
    // nftables proxier always (`usesFWChain := len(LoadBalancerVIPs) > 0 &&
    // len(LoadBalancerSourceRanges) > 0`) and its firewall-check runs in filter-prerouting
    // (and filter-output), before the no-endpoints reject: a client outside the ranges is
    // refused by one and dropped by the other.
    if ipt.what.contains("loadbalancer IP")
        && unhandled_or_refused
        && *nft == Expect::Dropped
        && port.is_some_and(|p| !p.source_ranges.is_empty())
    {
        return Some(
            "load-balancer IP with source ranges and no endpoints: iptables has no firewall chain without endpoints, nftables drops sources outside the ranges first",
        );
    }
    None
}

/// Seeds the generator check walks.
const GENERATOR_SEEDS: u64 = 300;

/// The generator without the kernel: the same seed always gives the same text, and every
/// scenario of seeds 1..=300 (and every one-step shrink of the first 20) is accepted by the
/// cluster as a whole and renders in both modes for each of its families.
pub(crate) fn check_generator() -> Result<(), String> {
    let accepted = |scenario: &Scenario| -> Result<(), String> {
        let yaml = scenario.to_yaml();
        let name = format!("seed-{}", scenario.seed);
        let evaluated = crate::svclab::evaluate(&[(name.clone(), yaml)])
            .map_err(|err| format!("{name}: {err}"))?;
        if !evaluated.rejected.is_empty() {
            return Err(format!("{name}: the cluster refuses {:?}", evaluated.rejected));
        }
        let dual = scenario.dual_stack_cluster && scenario.services.iter().any(|s| s.dual_stack);
        let families: &[Family] = if dual { &[Family::V4, Family::V6] } else { &[Family::V4] };
        for family in families.iter().copied() {
            for mode in [Mode::Iptables, Mode::Nftables] {
                crate::svclab::render(&evaluated.world, mode, family)
                    .map_err(|err| format!("{name} ({family:?}, {}): {err}", mode.as_str()))?;
            }
        }
        Ok(())
    };
    for seed in 1..=GENERATOR_SEEDS {
        let scenario = Scenario::generate(seed);
        if scenario.to_yaml() != Scenario::generate(seed).to_yaml() {
            return Err(format!("seed {seed} gives two different scenarios"));
        }
        accepted(&scenario)?;
        if seed <= 20 {
            for smaller in scenario.shrink() {
                accepted(&smaller).map_err(|err| format!("a shrink of {err}"))?;
            }
        }
    }
    Ok(())
}

/// How to replay a seed.
fn replay_command(seed: u64) -> String {
    format!(
        "cargo xtask differential --start {seed} --seeds 1   (or: SVCLAB_DIFFERENTIAL_SEEDS=1 SVCLAB_DIFFERENTIAL_START={seed} cargo test -p svclab-tests --no-default-features --test dataplane -- differential/)"
    )
}

/// Shrinks a failing scenario: greedily takes the first smaller scenario that still fails,
/// until none does or the budget is spent. Returns it, its failures, and the attempts made.
fn shrink(scenario: &Scenario, failures: Vec<String>) -> (Scenario, Vec<String>, usize) {
    let start = Instant::now();
    let mut current = scenario.clone();
    let mut current_failures = failures;
    let mut attempts = 0;
    'outer: loop {
        for candidate in current.shrink() {
            if attempts >= SHRINK_ATTEMPTS || start.elapsed() > SHRINK_TIME {
                break 'outer;
            }
            attempts += 1;
            let (failures, _) = check(&candidate);
            if !failures.is_empty() {
                current = candidate;
                current_failures = failures;
                continue 'outer;
            }
        }
        break;
    }
    (current, current_failures, attempts)
}

#[allow(clippy::print_stdout, reason = "the run reports its figures on stdout")]
fn say(text: &str) {
    println!("{text}");
}

/// Runs one seed; on failure the error holds the seed, the replay command and the shrunk
/// scenario (also written to a file in the temporary directory).
pub(crate) fn run_seed(seed: u64) -> Result<Figures, String> {
    let scenario = Scenario::generate(seed);
    let started = Instant::now();
    let (failures, figures) = check(&scenario);
    let mut text = format!(
        "differential seed {seed}: {}; {} probes, {} connections, both modes, {:.1}s",
        scenario.summary(),
        figures.probes,
        figures.connections,
        started.elapsed().as_secs_f64()
    );
    for known in &figures.mode_differences {
        let _ = write!(text, "\n  kube-proxy mode difference (as expected): {known}");
    }
    say(&text);
    if failures.is_empty() {
        return Ok(figures);
    }
    let no_shrink = std::env::var("SVCLAB_DIFFERENTIAL_SHRINK").is_ok_and(|v| v == "0");
    let (small, small_failures, attempts) = if no_shrink {
        (scenario.clone(), failures.clone(), 0)
    } else {
        shrink(&scenario, failures.clone())
    };
    let path = std::env::temp_dir().join(format!("svclab-differential-seed-{seed}.yaml"));
    let yaml = small.to_yaml();
    let saved = match std::fs::write(&path, &yaml) {
        Ok(()) => format!("written to {}", path.display()),
        Err(err) => format!("not written to {}: {err}", path.display()),
    };
    let mut text = format!(
        "differential seed {seed} fails ({} failures); replay: {}\n",
        failures.len(),
        replay_command(seed)
    );
    let _ = writeln!(
        text,
        "shrunk in {attempts} attempts to {} ({saved}); its failures:",
        small.summary()
    );
    for f in &small_failures {
        let _ = writeln!(text, "  {f}");
    }
    let _ = write!(text, "the shrunk scenario:\n{yaml}");
    Err(text)
}

/// A campaign over many seeds (`cargo xtask differential`): every failing seed is reported.
pub(crate) fn run_campaign(campaign: Campaign) -> Result<(), String> {
    let started = Instant::now();
    let mut total = Figures::default();
    let mut ran = 0u64;
    let mut failed = Vec::new();
    for seed in campaign.start..campaign.start.saturating_add(campaign.seeds) {
        if campaign.time.is_some_and(|t| started.elapsed() >= t) {
            break;
        }
        ran += 1;
        match run_seed(seed) {
            Ok(figures) => {
                total.probes += figures.probes;
                total.connections += figures.connections;
                total.mode_differences.extend(figures.mode_differences);
            }
            Err(err) => failed.push(err),
        }
    }
    say(&format!(
        "differential campaign: {ran} scenarios (seeds {}..={}), {} probes, {} connections, {} documented mode differences in the passing ones, {} failing, {:.0}s",
        campaign.start,
        campaign.start + ran.saturating_sub(1),
        total.probes,
        total.connections,
        total.mode_differences.len(),
        failed.len(),
        started.elapsed().as_secs_f64()
    ));
    if failed.is_empty() { Ok(()) } else { Err(failed.join("\n")) }
}
