//! The rehearsal's tests: generic ones over every release table (`tables.rs`).

mod answers;
mod citations;
mod tables;

use super::cause::Crossed;
use super::sides::Sides;
use crate::{Input, ProxyMode, UpgradeOptions, UpgradeReport, Version, upgrade};

/// A scenario at a release: `RELEASE` in its text is replaced by the release; a scenario with
/// no ClusterProfile gets one at the front.
fn at(scenario: &str, release: &str) -> String {
    if scenario.contains("kind: ClusterProfile") {
        scenario.replace("RELEASE", release)
    } else {
        format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"{release}\"\n---\n{scenario}"
        )
    }
}

/// What one rehearsal asks.
#[derive(Clone, Default)]
struct Rehearsal<'a> {
    scenario: &'a str,
    from: &'a str,
    to: &'a str,
    mode: Option<ProxyMode>,
    to_profile: Option<String>,
}

impl Rehearsal<'_> {
    /// The report, after checking that every finding names its causes and that each of them
    /// is something that differs between the two sides.
    #[track_caller]
    fn run(&self) -> UpgradeReport {
        let inputs = [Input::new("cluster.yaml", at(self.scenario, self.from))];
        let options = UpgradeOptions {
            to: Version::parse(self.to).expect("a release"),
            proxy_mode: self.mode,
            to_profile: self
                .to_profile
                .as_ref()
                .map(|t| Input::new("target.yaml", t.replace("RELEASE", self.to))),
            diff: false,
        };
        let report = upgrade(&inputs, &options).expect("a rehearsal");
        let sides = Sides::new(&inputs, &options).expect("sides");
        let crossed = known_causes(&sides);
        for finding in &report.findings {
            assert!(
                !finding.causes.is_empty(),
                "{} → {}: a finding without a cause: {}",
                self.from,
                self.to,
                finding.message
            );
            for cause in &finding.causes {
                assert!(
                    crossed.contains(cause),
                    "{} → {}: {cause} did not change, yet explains: {}",
                    self.from,
                    self.to,
                    finding.message
                );
            }
        }
        report
    }
}

/// Every cause id that differs between the sides (or between any two releases on the way, for
/// kube-proxy's step-by-step attribution).
fn known_causes(sides: &Sides) -> Vec<String> {
    let crossed = Crossed::between(sides);
    let mut ids: Vec<String> =
        crossed.validation.iter().map(|(t, r)| Crossed::validation_cause(t, r).id).collect();
    for cause in crossed
        .proxy
        .iter()
        .map(|(_, c)| c)
        .chain(&crossed.gates)
        .chain(&crossed.proxy_gates)
        .chain(&crossed.allocation)
        .chain(&crossed.profile)
    {
        ids.push(cause.id.clone());
    }
    // A gate whose stage changes (removed, locked) explains a refusal of its setting.
    for gate in crate::profile::gates().iter().chain(crate::proxy::own_gates()) {
        if gate.stage(sides.from.version.minor) != gate.stage(sides.to.version.minor) {
            ids.push(format!("gate:{}", gate.name));
            ids.push(format!("proxyGate:{}", gate.name));
        }
    }
    // A kube-proxy step may cross a gate that is back at its first value at the end (alpha
    // off, beta on, removed): every gate and row between the releases counts.
    let (a, b) = (
        sides.from.version.minor.min(sides.to.version.minor),
        sides.from.version.minor.max(sides.to.version.minor),
    );
    for minor in a..b {
        let from = Version { minor, patch: None };
        let to = Version { minor: minor + 1, patch: None };
        let (p, q) =
            (crate::profile::Profile::for_version(from), crate::profile::Profile::for_version(to));
        let kube_proxy = sides.to.kube_proxy.as_ref();
        let step = Crossed::releases(
            super::cause::Point { version: from, profile: &p, kube_proxy },
            super::cause::Point { version: to, profile: &q, kube_proxy },
        );
        for cause in step
            .proxy
            .iter()
            .map(|(_, c)| c)
            .chain(&step.gates)
            .chain(&step.proxy_gates)
            .chain(&step.allocation)
        {
            ids.push(cause.id.clone());
        }
    }
    ids
}

/// The findings of a report that cite a cause.
fn citing<'r>(report: &'r UpgradeReport, cause: &str) -> Vec<&'r crate::Finding> {
    report.findings.iter().filter(|f| f.causes.iter().any(|c| c == cause)).collect()
}
