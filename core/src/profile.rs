//! The cluster profile: Kubernetes version, feature gates, service ranges, seed and host facts.
//!
//! Every version-dependent behaviour of svclab reads this, never a hard-coded release.
//! Gate tables follow `pkg/features/kube_features.go` (and `versioned_kube_features.go` since
//! 1.31) of each release: when a gate became beta, GA and locked.

use std::collections::BTreeMap;

use ipnet::IpNet;
use serde::{Deserialize, Serialize};

use crate::diagnostic::{Diagnostic, ObjectRef};
use crate::model::{ClusterProfile, Located};
use crate::net::{IpFamily, PortRange, parse_cidr_sloppy};

/// Oldest minor release svclab models.
pub const OLDEST_MINOR: u32 = 24;
/// Newest Kubernetes minor release (1.37, August 2026).
pub const NEWEST_MINOR: u32 = 37;

/// The patch release a bare minor stands for: the newest of each minor that svclab was compared
/// with upstream at (`oracle/releases.txt`, which a test holds this table to). A profile that
/// names a patch (`1.33.7`) gets that patch's backports (`proxy/release.rs` rows with
/// `backports`); a bare `1.33` is 1.33.13.
pub const CHECKED_RELEASES: [(u32, u32); (NEWEST_MINOR - OLDEST_MINOR + 1) as usize] = [
    (24, 17),
    (25, 16),
    (26, 15),
    (27, 16),
    (28, 15),
    (29, 15),
    (30, 14),
    (31, 14),
    (32, 13),
    (33, 13),
    (34, 12),
    (35, 8),
    (36, 5),
    (37, 2),
];

/// Maturity of a feature gate in one release, with what `--feature-gates` may do to it
/// (component-base `featureGate.SetFromMap`: only a `LockToDefault` spec refuses a change).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Off by default, may be enabled.
    Alpha,
    /// On by default, may be disabled.
    Beta,
    /// Off by default although beta.
    BetaOff,
    /// GA but not yet `LockToDefault`: on by default, may still be disabled.
    GaOpen,
    /// On and locked.
    Ga,
    /// Deprecated, off by default, may be enabled.
    Deprecated,
    /// Deprecated, off and locked.
    DeprecatedLocked,
}

impl Stage {
    pub(crate) fn default(self) -> bool {
        matches!(self, Stage::Beta | Stage::GaOpen | Stage::Ga)
    }

    fn locked(self) -> bool {
        matches!(self, Stage::Ga | Stage::DeprecatedLocked)
    }
}

/// One feature gate's life by release: the apiserver's table here, kube-proxy's own gates in
/// `proxy/startup.rs`.
pub(crate) struct Gate {
    pub(crate) name: &'static str,
    /// (first minor, stage) in ascending order.
    pub(crate) stages: &'static [(u32, Stage)],
    /// First minor in which the gate no longer exists (the last stage's default stays).
    pub(crate) removed: Option<u32>,
}

impl Gate {
    /// The stage at `minor`; `None` before the gate exists and once it is removed.
    pub(crate) fn stage(&self, minor: u32) -> Option<Stage> {
        if self.removed.is_some_and(|r| minor >= r) {
            return None;
        }
        self.stages.iter().rev().find(|(since, _)| minor >= *since).map(|(_, s)| *s)
    }

    /// The gate's value at `minor` when nothing sets it: its stage's default; once removed, its
    /// last stage's default (on for a feature that went GA, off for a deprecated behaviour such
    /// as AllowServiceLBStatusOnNonLB); before its first release, off.
    pub(crate) fn default_at(&self, minor: u32) -> bool {
        match self.stage(minor) {
            Some(stage) => stage.default(),
            None => {
                self.removed.is_some_and(|r| minor >= r)
                    && self.stages.last().is_some_and(|(_, s)| s.default())
            }
        }
    }

    /// What component-base `SetFromMap` refuses when `--feature-gates` sets the gate to
    /// `value` at `minor`: a gate that does not exist, or a locked one set the other way.
    pub(crate) fn refusal(&self, value: bool, minor: u32) -> Option<String> {
        let Some(stage) = self.stage(minor) else {
            return Some(format!("unrecognized feature gate: {}", self.name));
        };
        let default = stage.default();
        (stage.locked() && value != default).then(|| {
            format!(
                "cannot set feature gate {} to {value}, feature is locked to {default}",
                self.name
            )
        })
    }
}

/// The apiserver feature gates svclab models, named as `--feature-gates` names them, in
/// [`GATES`] order (a variant is its row's index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(
    dead_code,
    reason = "every row of GATES has its variant; no behaviour keys on ServiceLBNodePortControl \
              and ServiceLoadBalancerClass (locked on wherever they exist from 1.24) or on \
              AllowServiceLBStatusOnNonLB, which `--feature-gates` must still know"
)]
pub(crate) enum Feature {
    ServiceIPStaticSubrange,
    ServiceNodePortStaticSubrange,
    MultiCIDRServiceAllocator,
    DisableAllocatorDualWrite,
    MixedProtocolLBService,
    ServiceInternalTrafficPolicy,
    ServiceLBNodePortControl,
    ServiceLoadBalancerClass,
    EndpointSliceTerminatingCondition,
    TopologyAwareHints,
    ServiceTrafficDistribution,
    PreferSameTrafficDistribution,
    StrictIPCIDRValidation,
    RelaxedServiceNameValidation,
    LoadBalancerIPMode,
    AllowServiceLBStatusOnNonLB,
    ServerSideFieldValidation,
    DeclarativeValidationBeta,
}

/// Every [`Feature`], in [`GATES`] order.
#[cfg(test)]
pub(crate) const FEATURES: [Feature; GATES.len()] = [
    Feature::ServiceIPStaticSubrange,
    Feature::ServiceNodePortStaticSubrange,
    Feature::MultiCIDRServiceAllocator,
    Feature::DisableAllocatorDualWrite,
    Feature::MixedProtocolLBService,
    Feature::ServiceInternalTrafficPolicy,
    Feature::ServiceLBNodePortControl,
    Feature::ServiceLoadBalancerClass,
    Feature::EndpointSliceTerminatingCondition,
    Feature::TopologyAwareHints,
    Feature::ServiceTrafficDistribution,
    Feature::PreferSameTrafficDistribution,
    Feature::StrictIPCIDRValidation,
    Feature::RelaxedServiceNameValidation,
    Feature::LoadBalancerIPMode,
    Feature::AllowServiceLBStatusOnNonLB,
    Feature::ServerSideFieldValidation,
    Feature::DeclarativeValidationBeta,
];

// Read in `pkg/features/kube_features.go` and `versioned_kube_features.go` of the
// `k8s.io/kubernetes` module, and `pkg/features/kube_features.go` of `k8s.io/apiserver` for the
// generic gates the apiserver inherits (ServerSideFieldValidation, DeclarativeValidationBeta), at
// the newest patch of every release svclab models (v1.24.17, v1.25.16, v1.26.15, v1.27.16,
// v1.28.15, v1.29.15, v1.30.14, v1.31.14, v1.32.13, v1.33.13, v1.34.12, v1.35.8, v1.36.5,
// v1.37.2: the modules the apiserver oracle builds, which also replays the refusals); earlier
// reads of vendored copies (ceph/ceph-csi, kubeedge/kubeedge, openshift/openshift-apiserver), the
// 1.36-cycle feature list and the `--feature-gates` help agree with them wherever they overlap.
// Stages before 1.24 are not modelled and not listed.
const GATES: [Gate; 18] = [
    Gate {
        name: "ServiceIPStaticSubrange",
        stages: &[(24, Stage::Alpha), (25, Stage::Beta), (26, Stage::Ga)],
        // Still listed (locked) in v1.27.2, gone in v1.28.0.
        removed: Some(28),
    },
    Gate {
        name: "ServiceNodePortStaticSubrange",
        stages: &[(27, Stage::Alpha), (28, Stage::Beta), (29, Stage::Ga)],
        // Listed in v1.30.0, gone in v1.31.0.
        removed: Some(31),
    },
    Gate {
        name: "MultiCIDRServiceAllocator",
        // Beta but off in v1.31.14 and v1.32.13; GA with `LockToDefault: false` in v1.33.13 (it
        // may still be turned off there); locked from v1.34.12, and still listed, locked, in
        // v1.37.2 despite its "remove in 1.37" comment.
        stages: &[(27, Stage::Alpha), (31, Stage::BetaOff), (33, Stage::GaOpen), (34, Stage::Ga)],
        removed: None,
    },
    Gate {
        name: "DisableAllocatorDualWrite",
        // Beta and off in v1.33.3; GA without `LockToDefault` in v1.34.1; the 1.36-cycle feature
        // list locks it from 1.35.
        stages: &[(31, Stage::Alpha), (33, Stage::BetaOff), (34, Stage::GaOpen), (35, Stage::Ga)],
        removed: None,
    },
    Gate {
        name: "MixedProtocolLBService",
        stages: &[(24, Stage::Beta), (26, Stage::Ga)],
        // Listed in v1.27.2, gone in v1.28.0.
        removed: Some(28),
    },
    Gate {
        name: "ServiceInternalTrafficPolicy",
        // Beta in v1.24.0 and v1.25.0, locked in v1.26.1 and v1.27.2, gone in v1.28.0. With it off
        // the apiserver neither defaults nor requires `spec.internalTrafficPolicy` and drops it
        // unless the old object has it (`defaulting.rs`, `registry.rs`, `validation/service.rs`).
        stages: &[(24, Stage::Beta), (26, Stage::Ga)],
        removed: Some(28),
    },
    Gate {
        name: "ServiceLBNodePortControl",
        // GA and locked in v1.24.0 and v1.25.0 ("remove in 1.26"), gone in v1.26.1: it can only be
        // named `true`, which the apiserver accepts.
        stages: &[(24, Stage::Ga)],
        removed: Some(26),
    },
    Gate {
        name: "ServiceLoadBalancerClass",
        // As ServiceLBNodePortControl: locked in v1.24.0 and v1.25.0, gone in v1.26.1.
        stages: &[(24, Stage::Ga)],
        removed: Some(26),
    },
    Gate {
        name: "EndpointSliceTerminatingCondition",
        // Beta in v1.24.0 and v1.25.0, locked in v1.26.1 and v1.27.2 ("remove in v1.28"), gone in
        // v1.28.0. With it off the EndpointSlice strategy drops `conditions.serving` and
        // `conditions.terminating` (`registry.rs`).
        stages: &[(24, Stage::Beta), (26, Stage::Ga)],
        removed: Some(28),
    },
    Gate {
        name: "TopologyAwareHints",
        // Beta and on v1.24.0 to v1.32.10, locked from v1.33.3; still in the 1.36-cycle feature
        // list, so present in 1.35. Gone in 1.36: kube-proxy refuses the name there (deckhouse's
        // changelog, PR deckhouse/deckhouse#23336, "removed `TopologyAwareHints` feature gate").
        stages: &[(24, Stage::Beta), (33, Stage::Ga)],
        removed: Some(36),
    },
    Gate {
        name: "ServiceTrafficDistribution",
        // Locked from v1.33.3 with "remove in 1.36" (also in v1.34.1); still in the 1.36-cycle
        // feature list, so present in 1.35.
        stages: &[(30, Stage::Alpha), (31, Stage::Beta), (33, Stage::Ga)],
        removed: Some(36),
    },
    Gate {
        name: "PreferSameTrafficDistribution",
        // Alpha in v1.33.3, beta in v1.34.1; GA and locked from 1.35 in the 1.36-cycle list.
        stages: &[(33, Stage::Alpha), (34, Stage::Beta), (35, Stage::Ga)],
        removed: None,
    },
    Gate {
        name: "StrictIPCIDRValidation",
        // Alpha in v1.33.3 and v1.34.1; "(BETA - default=true)" in the `--feature-gates` help of
        // v1.36 (kubernetes/website's generated kube-scheduler reference, emulated versions
        // 1.33..1.36).
        stages: &[(33, Stage::Alpha), (36, Stage::Beta)],
        removed: None,
    },
    Gate {
        name: "RelaxedServiceNameValidation",
        // Alpha in v1.34.12 and v1.35.8, beta in v1.36.5, GA and locked in v1.37.2 ("remove in
        // 1.40").
        stages: &[(34, Stage::Alpha), (36, Stage::Beta), (37, Stage::Ga)],
        removed: None,
    },
    Gate {
        name: "LoadBalancerIPMode",
        // GA and locked from v1.32.10, still listed in v1.34.1; absent from the 1.36-cycle list.
        // 1.35 is not read: svclab takes the first release after the last one read.
        stages: &[(29, Stage::Alpha), (30, Stage::Beta), (32, Stage::Ga)],
        removed: Some(35),
    },
    Gate {
        name: "AllowServiceLBStatusOnNonLB",
        // Deprecated and off in v1.29.0 to v1.31.0; locked off from v1.32.10 ("remove in 1.35",
        // also in v1.34.1); absent from the 1.36-cycle list.
        stages: &[(29, Stage::Deprecated), (32, Stage::DeprecatedLocked)],
        removed: Some(35),
    },
    Gate {
        name: "ServerSideFieldValidation",
        // k8s.io/apiserver: alpha and off in v0.24.17, beta in v0.25.16 and v0.26.15, GA and
        // locked from v0.27.16 through v0.31.14, gone in v0.32.13. Off, the create and update
        // handlers decode with `fieldValidation=Ignore`: no unknown-field warnings
        // (`pkg/endpoints/handlers/rest.go` fieldValidation).
        stages: &[(24, Stage::Alpha), (25, Stage::Beta), (27, Stage::Ga)],
        removed: Some(32),
    },
    Gate {
        name: "DeclarativeValidationBeta",
        // k8s.io/apiserver, beta from v0.36.5 (v0.37.2 too): enforces declarative validation
        // rules marked `+k8s:beta` (the EndpointSlice's from 1.37) in place of the handwritten
        // errors they cover (`pkg/registry/rest/validate.go`).
        stages: &[(36, Stage::Beta)],
        removed: None,
    },
];

/// A Kubernetes release: minor and, when given, patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Version {
    /// Minor version (`24` for 1.24).
    pub minor: u32,
    /// Patch version, `None` for "the latest patch of that minor".
    pub patch: Option<u32>,
}

impl Version {
    /// The newest release svclab models.
    pub const NEWEST: Version = Version { minor: NEWEST_MINOR, patch: None };

    /// Parses `1.24`, `v1.24`, `1.26.3`, `v1.33.0-rc.1`.
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim().trim_start_matches('v');
        let text = text.split(['-', '+']).next()?;
        let mut parts = text.split('.');
        if parts.next()? != "1" {
            return None;
        }
        let minor: u32 = parts.next()?.parse().ok()?;
        let patch = match parts.next() {
            Some(p) => Some(p.parse().ok()?),
            None => None,
        };
        if parts.next().is_some() {
            return None;
        }
        Some(Version { minor, patch })
    }
}

impl Version {
    /// The release this version is modelled as: its own patch, else the patch of
    /// [`CHECKED_RELEASES`] for its minor.
    pub fn modelled(self) -> Version {
        let checked = CHECKED_RELEASES.iter().find(|(minor, _)| *minor == self.minor);
        Version { minor: self.minor, patch: self.patch.or(checked.map(|(_, patch)| *patch)) }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.patch {
            Some(p) => write!(f, "1.{}.{p}", self.minor),
            None => write!(f, "1.{}", self.minor),
        }
    }
}

/// How the static band offset treats a range of exactly 16 addresses (`calculateRangeOffset`
/// of `pkg/registry/core/service/ipallocator`, which changed between releases).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SmallRangeRule {
    /// `cidrSize < 16` → 0: 1.24 and unpatched 1.25/1.26. A /28 gets offset 16 and panics.
    LessThan16,
    /// `cidrSize <= 16` → 0: the fixed rule (#115322).
    AtMost16,
}

/// Host facts kube-proxy sees but no Kubernetes object carries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostFacts {
    /// iptables supports `--random-fully`.
    pub iptables_random_fully: bool,
    /// nfacct counters exist.
    pub nfacct: bool,
    /// Addresses on the node's interfaces (CIDR notation).
    pub interface_addresses: Vec<String>,
}

/// The resolved profile every stage reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// Kubernetes release.
    pub version: Version,
    /// The effective value of every gate of [`GATES`], by index: the value `--feature-gates`
    /// set, else [`Gate::default_at`] the release.
    gates: [bool; GATES.len()],
    /// `--service-cluster-ip-range` (primary first), or the ServiceCIDR objects' ranges.
    pub service_cluster_ip_ranges: Vec<IpNet>,
    /// `--service-node-port-range`.
    pub service_node_port_range: PortRange,
    /// Seed of every dynamic pick.
    pub seed: u64,
    /// How dynamic picks are drawn (`dynamicPicks`).
    pub dynamic_picks: DynamicPicks,
    /// Host facts for proxy rendering.
    pub host: HostFacts,
}

/// How the allocators draw dynamic picks (a ClusterProfile's `dynamicPicks`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DynamicPicks {
    /// From the profile's seed: what looks like a real cluster's random picks, the same on
    /// every run.
    #[default]
    Seeded,
    /// The lowest free address or port, upper band first: upstream's random scan with every
    /// draw 0, which is what the upstream oracle runs kube-apiserver's allocators with, so that
    /// svclab's picks compare exactly (`cargo xtask oracle`).
    FirstFit,
}

impl Default for Profile {
    fn default() -> Self {
        Profile::for_version(Version::NEWEST)
    }
}

/// The profile as the report shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileSummary {
    /// `1.37`, as the profile gives it.
    pub kubernetes_version: String,
    /// The patch release modelled: the profile's, else the newest one svclab was compared with
    /// upstream at (`1.37.2`).
    pub modelled_release: String,
    /// Effective value of every gate svclab models.
    pub feature_gates: BTreeMap<String, bool>,
    /// Service ranges, primary first.
    #[serde(rename = "serviceClusterIPRanges")]
    pub service_cluster_ip_ranges: Vec<String>,
    /// Node port range.
    pub service_node_port_range: String,
    /// RNG seed.
    pub seed: u64,
    /// Host facts.
    pub host: HostFacts,
}

impl Profile {
    /// Defaults of a release: kubeadm's 10.96.0.0/12, 30000-32767, seed 0, default gates.
    pub fn for_version(version: Version) -> Profile {
        let gates = GATES.each_ref().map(|gate| gate.default_at(version.minor));
        Profile {
            version,
            gates,
            service_cluster_ip_ranges: vec![IpNet::V4(
                ipnet::Ipv4Net::new(std::net::Ipv4Addr::new(10, 96, 0, 0), 12).unwrap_or_default(),
            )],
            service_node_port_range: PortRange { base: 30000, size: 2768 },
            seed: 0,
            dynamic_picks: DynamicPicks::Seeded,
            host: HostFacts::default(),
        }
    }

    /// Effective value of a gate: as `--feature-gates` set it, else [`Gate::default_at`] the
    /// release.
    pub(crate) fn gate(&self, feature: Feature) -> bool {
        self.gates.get(feature as usize).copied().unwrap_or(false)
    }

    /// [`Profile::gate`] by name, for names read from input (kube-proxy's `featureGates`);
    /// off for a name [`GATES`] does not list.
    pub(crate) fn gate_named(&self, name: &str) -> bool {
        GATES.iter().position(|g| g.name == name).is_some_and(|i| self.gates[i])
    }

    /// Sets a gate the way `--feature-gates` does, with kube-apiserver's errors.
    pub fn set_gate(&mut self, name: &str, value: bool) -> Result<(), String> {
        let Some(i) = GATES.iter().position(|g| g.name == name) else {
            return Err(format!("unrecognized feature gate: {name}"));
        };
        if let Some(refusal) = GATES[i].refusal(value, self.version.minor) {
            return Err(refusal);
        }
        self.gates[i] = value;
        Ok(())
    }

    /// The band-offset rule for ranges of 16 addresses.
    pub fn small_range_rule(&self) -> SmallRangeRule {
        // Fixed in 1.27 and backported to 1.25.x / 1.26.x (#115334, #115333); the exact patch
        // releases are unconfirmed, we take the first patches cut after the merge (1.25.7, 1.26.2).
        match (self.version.minor, self.version.patch) {
            (..=24, _) => SmallRangeRule::LessThan16,
            (25, Some(p)) if p < 7 => SmallRangeRule::LessThan16,
            (26, Some(p)) if p < 2 => SmallRangeRule::LessThan16,
            _ => SmallRangeRule::AtMost16,
        }
    }

    /// Whether ClusterIP ranges have a static band (ServiceIPStaticSubrange).
    pub fn ip_static_subrange(&self) -> bool {
        self.gate(Feature::ServiceIPStaticSubrange)
    }

    /// Whether NodePort ranges have a static band (ServiceNodePortStaticSubrange, from 1.27).
    pub fn node_port_static_subrange(&self) -> bool {
        self.version.minor >= 27 && self.gate(Feature::ServiceNodePortStaticSubrange)
    }

    /// Whether ClusterIPs come from ServiceCIDR/IPAddress objects (KEP-1880).
    pub fn multi_cidr(&self) -> bool {
        self.version.minor >= 27 && self.gate(Feature::MultiCIDRServiceAllocator)
    }

    /// Whether the ServiceCIDR allocator also writes the legacy bitmap of the flag-configured
    /// range: MultiCIDRServiceAllocator on and DisableAllocatorDualWrite off, from 1.31 (where
    /// kubernetes/kubernetes#122047 added the gate) until the bitmap is no longer written.
    pub fn allocator_dual_write(&self) -> bool {
        self.multi_cidr()
            && self.version.minor >= 31
            && !self.gate(Feature::DisableAllocatorDualWrite)
    }

    /// Whether field-error values render as JSON (`["a"]`) rather than Go syntax
    /// (`[]string{"a"}`) in `field.Error` texts.
    ///
    /// kubernetes/kubernetes#132314 ("Nicer value rendering in API errors", opened 2025-06-15,
    /// merged for 1.34) switched the `%#v` fallback of `field.Error.ErrorBody` to `json.Marshal`;
    /// plain strings and integers keep their `%q` / `%v` branches. Real 1.34+ messages read
    /// `spec.clusterIPs: Invalid value: ["10.43.0.10"]: failed to allocate IP ...`.
    pub fn json_field_values(&self) -> bool {
        self.version.minor >= 34
    }

    /// The report's view of the profile.
    pub fn summary(&self) -> ProfileSummary {
        let mut feature_gates = BTreeMap::new();
        for (gate, value) in GATES.iter().zip(self.gates) {
            // The gates the release lists.
            if gate.stage(self.version.minor).is_some() {
                feature_gates.insert(gate.name.to_owned(), value);
            }
        }
        ProfileSummary {
            kubernetes_version: self.version.to_string(),
            modelled_release: self.version.modelled().to_string(),
            feature_gates,
            service_cluster_ip_ranges: self
                .service_cluster_ip_ranges
                .iter()
                .map(ToString::to_string)
                .collect(),
            service_node_port_range: self.service_node_port_range.to_string(),
            seed: self.seed,
            host: self.host.clone(),
        }
    }

    /// Builds the profile from the scenario's `ClusterProfile` (the last one wins).
    pub fn from_scenario(
        object: Option<&Located<ClusterProfile>>,
        diags: &mut Vec<Diagnostic>,
    ) -> Profile {
        let Some(located) = object else { return Profile::default() };
        let spec = &located.value;
        let diag = |field: &str, message: String| {
            let object = Some(ObjectRef::kind("ClusterProfile"));
            Diagnostic::error(object, field, "FieldValueInvalid", message)
                .at(located.positions.source_of(field))
        };
        let version = match &spec.kubernetes_version {
            None => Version::NEWEST,
            Some(text) => match Version::parse(text) {
                Some(v) if (OLDEST_MINOR..=NEWEST_MINOR).contains(&v.minor) => v,
                _ => {
                    diags.push(diag(
                        "kubernetesVersion",
                        format!(
                            "kubernetesVersion: Invalid value: {text:?}: svclab models Kubernetes 1.{OLDEST_MINOR} to 1.{NEWEST_MINOR}; using 1.{NEWEST_MINOR}"
                        ),
                    ));
                    Version::NEWEST
                }
            },
        };
        let mut profile = Profile::for_version(version);
        for (name, value) in &spec.feature_gates {
            if let Err(message) = profile.set_gate(name, *value) {
                diags.push(diag(
                    &format!("featureGates[{name}]"),
                    format!("featureGates: {message}"),
                ));
            }
        }
        if let Some(seed) = spec.seed {
            profile.seed = seed;
        }
        match spec.dynamic_picks.as_deref() {
            None | Some("Seeded") => {}
            Some("FirstFit") => profile.dynamic_picks = DynamicPicks::FirstFit,
            Some(other) => diags.push(diag(
                "dynamicPicks",
                format!(
                    "dynamicPicks: Unsupported value: {other:?}: supported values: \"FirstFit\", \"Seeded\""
                ),
            )),
        }
        if !spec.service_cluster_ip_ranges.is_empty() {
            match parse_service_ranges(&spec.service_cluster_ip_ranges, &profile) {
                Ok(ranges) => profile.service_cluster_ip_ranges = ranges,
                Err(message) => diags.push(diag("serviceClusterIPRanges", message)),
            }
        }
        if let Some(text) = &spec.service_node_port_range {
            match PortRange::parse(text) {
                Some(range) => profile.service_node_port_range = range,
                None => diags.push(diag(
                    "serviceNodePortRange",
                    format!(
                        "invalid argument {text:?} for \"--service-node-port-range\" flag: invalid port range"
                    ),
                )),
            }
        }
        profile.host = HostFacts {
            iptables_random_fully: spec.iptables_random_fully.unwrap_or(false),
            nfacct: spec.nfacct.unwrap_or(false),
            interface_addresses: spec.interface_addresses.clone(),
        };
        profile
    }
}

/// kube-apiserver's gates ([`GATES`]), for `upgrade`'s gate findings.
pub(crate) fn gates() -> &'static [Gate] {
    &GATES
}

/// Parses and checks `--service-cluster-ip-range` like kube-apiserver's option validation.
pub(crate) fn parse_service_ranges(
    texts: &[String],
    profile: &Profile,
) -> Result<Vec<IpNet>, String> {
    if texts.is_empty() {
        return Err("--service-cluster-ip-range must contain at least one valid cidr".into());
    }
    if texts.len() > 2 {
        return Err("--service-cluster-ip-range must not contain more than two entries".into());
    }
    let mut nets = Vec::new();
    for text in texts {
        let Some((_, net)) = parse_cidr_sloppy(text.trim()) else {
            return Err(format!("invalid CIDR address: {text}"));
        };
        nets.push(net);
    }
    if nets.len() == 2 && IpFamily::of_net(&nets[0]) == IpFamily::of_net(&nets[1]) {
        return Err(
            "--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family"
                .into(),
        );
    }
    // The bitmap allocator caps ranges at 20 host bits, unless it is no longer written at all.
    let bitmap_unused = profile.multi_cidr() && profile.gate(Feature::DisableAllocatorDualWrite);
    if !bitmap_unused {
        for (i, net) in nets.iter().enumerate() {
            let bits = u32::from(net.max_prefix_len() - net.prefix_len());
            if bits > 20 {
                let suffix = if i == 0 { String::new() } else { format!("[{i}]") };
                let (width, min) = match net {
                    IpNet::V4(_) => (32, 12),
                    IpNet::V6(_) => (128, 108),
                };
                return Err(format!(
                    "specified --service-cluster-ip-range{suffix} is too large; for {width}-bit addresses, the mask must be >= {min}"
                ));
            }
        }
    }
    Ok(nets)
}

#[cfg(test)]
mod tests;
