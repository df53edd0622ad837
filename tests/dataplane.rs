//! Proves rendered kube-proxy rules on the real kernel: loads them into iptables or nftables
//! inside network namespaces, sends real TCP connections, and checks they land where the trace
//! says (issue 7). Needs root, iproute2, iptables, nftables and nfacct on Linux; without them
//! every case fails with the reason, unless `SVCLAB_SKIP_DATAPLANE=1` (then they are skipped).
//!
//! Cases (one trial each, both proxy modes where they apply):
//! - `golden-text/<golden>/<mode>`: the golden's own expected rules plus hand-written built-in
//!   jump rules, checked against hand-worked expectations (proves the harness on its own);
//! - `svclab-golden/<golden>/<mode>` and `svclab-example/<file>/<mode>`: `svclab render
//!   --standalone` loaded as it is, every probe checked against `svclab trace`;
//! - `differential/seed-<n>`: a scenario generated from a seed, in both modes, every probe
//!   checked against the trace and the two modes against each other (`dataplane/differential.rs`);
//! - `control-no-rules/...`: the same topology without rules, where everything is refused;
//! - `kube-proxy/<mode>`: the real kube-proxy against `svclab render`, its rules in the kernel
//!   against svclab's, probes through both (`dataplane/kube_proxy.rs`).
//!
//! Environment: `SVCLAB_SKIP_DATAPLANE=1` skips (reported as ignored);
//! `SVCLAB_DATAPLANE_IPTABLES=legacy` loads iptables payloads with `iptables-legacy-restore`
//! instead of the default `iptables-nft-restore` (see `scripts/setup.d/40-dataplane.sh`);
//! `SVCLAB_DATAPLANE_REPORT=<file>` appends the per-probe figures to a file.

#[path = "dataplane/agent.rs"]
mod agent;
#[path = "dataplane/bootstrap.rs"]
mod bootstrap;
#[path = "dataplane/case.rs"]
mod case;
#[path = "dataplane/differential.rs"]
mod differential;
#[path = "dataplane/generate.rs"]
mod generate;
#[path = "dataplane/kube_proxy.rs"]
mod kube_proxy;
#[path = "dataplane/netns.rs"]
mod netns;
#[path = "dataplane/runner.rs"]
mod runner;
#[path = "dataplane/svclab.rs"]
mod svclab;
#[path = "dataplane/topology.rs"]
mod topology;

use libtest_mimic::{Arguments, Trial};

#[allow(clippy::print_stdout, reason = "prints a generated scenario on request")]
fn print_scenario(seed: u64) {
    print!("{}", generate::Scenario::generate(seed).to_yaml());
}

/// One trial of the suite.
enum Job {
    Case(Box<runner::CaseDef>),
    Seed(u64),
    Campaign(differential::Campaign),
    KubeProxy(case::Mode),
}

impl Job {
    fn run(&self) -> Result<(), String> {
        match self {
            Job::Case(case) => runner::run(case),
            Job::Seed(seed) => differential::run_seed(*seed).map(drop),
            Job::Campaign(campaign) => differential::run_campaign(*campaign),
            Job::KubeProxy(mode) => kube_proxy::run(*mode),
        }
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some(agent::AGENT_ARG) {
        std::process::exit(agent::main(&argv[2..]));
    }
    if argv.get(1).map(String::as_str) == Some("__differential-scenario") {
        // `dataplane __differential-scenario <seed>`: prints the scenario of a seed.
        let seed = argv.get(2).and_then(|s| s.parse::<u64>().ok()).unwrap_or(1);
        print_scenario(seed);
        return;
    }
    let args = Arguments::from_args();
    let cases = runner::cases();
    let skip = std::env::var_os("SVCLAB_SKIP_DATAPLANE").is_some_and(|v| v == "1");
    let preflight =
        if skip { Err("SVCLAB_SKIP_DATAPLANE=1".to_owned()) } else { runner::preflight() };
    if preflight.is_ok() {
        runner::announce_cleanup(netns::cleanup_stale());
    }
    // The differential run: fixed seeds, or one campaign when SVCLAB_DIFFERENTIAL_SEEDS asks.
    let mut jobs: Vec<(String, Job)> =
        cases.into_iter().map(|case| (case.name(), Job::Case(Box::new(case)))).collect();
    match differential::Campaign::from_env() {
        Some(campaign) => jobs.push(("differential/campaign".to_owned(), Job::Campaign(campaign))),
        None => jobs.extend(
            differential::DEFAULT_SEEDS
                .iter()
                .map(|seed| (differential::seed_case_name(*seed), Job::Seed(*seed))),
        ),
    }
    jobs.extend(kube_proxy::names().map(|(name, mode)| (name, Job::KubeProxy(mode))));
    // The generator's own check needs no kernel: it runs wherever the suite runs.
    let generator = Trial::test("differential/generator", || {
        differential::check_generator().map_err(Into::into)
    });
    let trials = jobs
        .into_iter()
        .map(|(name, job)| {
            match &preflight {
                Ok(()) => Trial::test(name, move || job.run().map_err(Into::into)),
                Err(why) if skip => {
                    let _ = why;
                    Trial::test(name, || Ok(())).with_ignored_flag(true)
                }
                Err(why) => {
                    let msg = format!("the dataplane suite cannot run here: {why} (set SVCLAB_SKIP_DATAPLANE=1 to skip it)");
                    Trial::test(name, move || Err(msg.into()))
                }
            }
        })
        .chain(std::iter::once(generator))
        .collect::<Vec<_>>();
    if skip {
        runner::announce_skip();
    }
    libtest_mimic::run(&args, trials).exit();
}
