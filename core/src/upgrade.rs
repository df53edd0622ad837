//! `svclab upgrade`: what a cluster's Services meet when kube-apiserver or kube-proxy moves to
//! another release (newer, or older for a rollback), kube-proxy switches mode, or the service
//! ranges change, rehearsed offline for a pasted cluster dump.
//!
//! The scenario is the cluster today: its objects, its ClusterProfile and its
//! KubeProxyConfiguration (`from`). The target (`to`) is the release of
//! [`UpgradeOptions::to`], the mode of [`UpgradeOptions::proxy_mode`] and the ClusterProfile,
//! ServiceCIDRs and KubeProxyConfiguration of [`UpgradeOptions::to_profile`] where given, else
//! today's carried over. Both sides are evaluated by the pipeline itself, and every difference
//! between them that the upgrade causes becomes a [`Finding`] in one of five areas:
//!
//! - `featureGates` ([`gates`]): gates the target refuses, with the error kube-apiserver or
//!   kube-proxy exits with; gates whose default changes.
//! - `apiserver` ([`apiserver`]): every stored object written again at the target as its next
//!   write would be (an update of itself, with upstream's ratcheting of unchanged fields), and
//!   every document created afresh, against the same at today's release: new refusals,
//!   warnings that appear or disappear, fields the target's defaulting or preparation changes.
//! - `allocation` ([`allocation`]): the stored addresses and node ports under the target's
//!   allocators and ranges, as its repair loops see them; the move to (or from) the IPAddress
//!   allocator; how the static bands move.
//! - `kubeProxy` ([`kube_proxy`]): per Service port, what changes in the rules kube-proxy
//!   programs, and probe packets traced through both rulesets; a configuration the target
//!   kube-proxy refuses.
//! - `ranges` ([`ranges`]): a change of `serviceClusterIPRanges`, the NodePort range or the
//!   ServiceCIDR objects, rehearsed as the documented migration, step by step.
//!
//! A finding names the release-table rows (or gates, or profile changes) behind it; every
//! finding has at least one, so a finding nothing explains is a bug the tests catch.
//!
//! ```
//! use svclab_core::{Input, UpgradeOptions, Version, upgrade};
//! let scenario = "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"1.27\"\nfeatureGates: {ServiceIPStaticSubrange: true}\n";
//! let options = UpgradeOptions::new(Version::parse("1.28").unwrap());
//! let report = upgrade(&[Input::new("cluster.yaml", scenario)], &options).unwrap();
//! assert!(report.breaks());
//! assert!(report.findings[0].message.contains("unrecognized feature gate: ServiceIPStaticSubrange"));
//! let too_new = UpgradeOptions::new(Version::parse("1.99").unwrap());
//! assert!(upgrade(&[Input::new("cluster.yaml", scenario)], &too_new).is_err());
//! ```

mod allocation;
mod apiserver;
mod cause;
mod diff;
mod gates;
mod kube_proxy;
mod probes;
mod ranges;
mod report;
mod rules;
mod sides;

use crate::manifest::Input;
use crate::pipeline::evaluate_objects;
use crate::profile::Version;
use crate::proxy::ProxyMode;

pub use diff::{DiffLine, DiffTag, diff_lines};
pub use report::{Area, Finding, Impact, RulesComparison, UpgradeReport, UpgradeSide};

/// What to rehearse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpgradeOptions {
    /// The target release (`--to`): a minor (its newest checked patch) or a patch.
    pub to: Version,
    /// The target kube-proxy mode (`--proxy-mode`); `None`: the mode of the target
    /// KubeProxyConfiguration, else today's.
    pub proxy_mode: Option<ProxyMode>,
    /// The target's ClusterProfile, ServiceCIDRs and KubeProxyConfiguration (`--to-profile`):
    /// a scenario text whose documents of those kinds replace today's.
    pub to_profile: Option<Input>,
    /// Also return both rulesets and their line diff (`--diff`).
    pub diff: bool,
}

impl UpgradeOptions {
    /// A rehearsal of moving to `to`, nothing else changed, without the rule diff.
    pub fn new(to: Version) -> UpgradeOptions {
        UpgradeOptions { to, proxy_mode: None, to_profile: None, diff: false }
    }
}

/// Why no rehearsal was made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpgradeError {
    /// The target release is outside what svclab models.
    UnsupportedRelease(String),
    /// `--to` and the target profile's `kubernetesVersion` name different releases.
    ConflictingRelease {
        /// What `--to` says.
        to: String,
        /// What the target profile says.
        profile: String,
    },
    /// The target profile (`--to-profile`) cannot be read.
    TargetProfile(String),
    /// `--to` is not a release.
    BadRelease(String),
}

impl std::fmt::Display for UpgradeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpgradeError::UnsupportedRelease(release) => write!(
                f,
                "svclab models Kubernetes 1.{} to 1.{}, not {release}",
                crate::profile::OLDEST_MINOR,
                crate::profile::NEWEST_MINOR
            ),
            UpgradeError::ConflictingRelease { to, profile } => write!(
                f,
                "--to {to} and the target profile's kubernetesVersion {profile:?} name different releases"
            ),
            UpgradeError::TargetProfile(message) => {
                write!(f, "the target profile cannot be read: {message}")
            }
            UpgradeError::BadRelease(text) => {
                write!(f, "--to {text:?} is not a Kubernetes release (1.33 or 1.33.5)")
            }
        }
    }
}

impl std::error::Error for UpgradeError {}

/// The release `--to` names (`1.33`, `v1.33.5`), as every host reads it.
pub fn target_release(text: &str) -> Result<Version, UpgradeError> {
    Version::parse(text).ok_or_else(|| UpgradeError::BadRelease(text.to_owned()))
}

/// Rehearses the upgrade of [`UpgradeOptions`] for the scenario: the findings of all five
/// areas, and with [`UpgradeOptions::diff`] both rulesets and their diff.
pub fn upgrade(inputs: &[Input], options: &UpgradeOptions) -> Result<UpgradeReport, UpgradeError> {
    let sides = sides::Sides::new(inputs, options)?;
    let (today, today_report) = evaluate_objects(
        sides.from.objects.clone(),
        sides.from.profile.clone(),
        sides.from.decoded.clone(),
    );
    let (_, fresh_report) = evaluate_objects(
        sides.to.objects.clone(),
        sides.to.profile.clone(),
        sides.to.decoded.clone(),
    );
    let mut findings = Vec::new();
    gates::findings(&sides, &mut findings);
    let migrated = allocation::migrate(&sides, &today, &mut findings);
    apiserver::findings(&sides, &today, &today_report, &fresh_report, &migrated, &mut findings);
    let rules = kube_proxy::findings(&sides, &today, &migrated, options.diff, &mut findings);
    ranges::findings(&sides, &today, &migrated, &mut findings);
    Ok(UpgradeReport::new(&sides, findings, rules))
}

#[cfg(test)]
mod tests;
