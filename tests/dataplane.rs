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
//! - `control-no-rules/...`: the same topology without rules, where everything is refused.
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
#[path = "dataplane/netns.rs"]
mod netns;
#[path = "dataplane/runner.rs"]
mod runner;
#[path = "dataplane/svclab.rs"]
mod svclab;
#[path = "dataplane/topology.rs"]
mod topology;

use libtest_mimic::{Arguments, Trial};

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some(agent::AGENT_ARG) {
        std::process::exit(agent::main(&argv[2..]));
    }
    let args = Arguments::from_args();
    let cases = runner::cases();
    let skip = std::env::var_os("SVCLAB_SKIP_DATAPLANE").is_some_and(|v| v == "1");
    let preflight =
        if skip { Err("SVCLAB_SKIP_DATAPLANE=1".to_owned()) } else { runner::preflight() };
    if preflight.is_ok() {
        runner::announce_cleanup(netns::cleanup_stale());
    }
    let trials = cases
        .into_iter()
        .map(|case| {
            let name = case.name();
            match &preflight {
                Ok(()) => Trial::test(name, move || runner::run(&case).map_err(Into::into)),
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
        .collect::<Vec<_>>();
    if skip {
        runner::announce_skip();
    }
    libtest_mimic::run(&args, trials).exit();
}
