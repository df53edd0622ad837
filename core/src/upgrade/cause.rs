//! What changes between the two sides, as the causes findings cite: the rows of the release
//! tables whose behaviour differs at the two releases (validation and warnings, kube-proxy), the
//! feature gates whose effective value differs (kube-apiserver's and kube-proxy's), the
//! allocator behaviours the profile decides, and what the target profile or `--proxy-mode`
//! change. A finding cites the causes its evidence points to among these, and only these: a
//! finding with none would be a difference svclab cannot explain.

use super::sides::{Side, Sides};
use crate::profile::{Gate, Profile, Stage};
use crate::proxy::{Behaviour, holds_at, own_gate_default, own_gates, release_rows};
use crate::validation::{self, Change};

/// One cause, as a finding cites it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cause {
    /// `validation:<Rule>`, `proxy:<Behaviour>`, `gate:<name>`, `proxyGate:<name>`,
    /// `allocation:<what>`, `mode`, `profile:<field>`.
    pub(crate) id: String,
    /// The upstream file, function and change behind it, in words.
    pub(crate) upstream: String,
}

/// Whether a profile has an allocator behaviour.
pub(crate) type Decides = fn(&Profile) -> bool;

/// The allocator behaviours a profile decides, by cause id: the static band of ClusterIP ranges
/// (KEP-3070), the static band of NodePorts (KEP-3668), the ServiceCIDR/IPAddress allocator
/// (KEP-1880), its dual write of the bitmap, the band offset of 16-address ranges.
pub(crate) const ALLOCATION: [(&str, Decides, &str); 5] = [
    (
        "allocation:ipStaticSubrange",
        Profile::ip_static_subrange,
        "KEP-3070: ClusterIP ranges have a static band (ServiceIPStaticSubrange; \
         pkg/registry/core/service/ipallocator calculateRangeOffset)",
    ),
    (
        "allocation:nodePortStaticSubrange",
        Profile::node_port_static_subrange,
        "KEP-3668: NodePort ranges have a static band (ServiceNodePortStaticSubrange; \
         pkg/registry/core/service/portallocator calculateRangeOffset)",
    ),
    (
        "allocation:ipAddressAllocator",
        Profile::multi_cidr,
        "KEP-1880: ClusterIPs come from ServiceCIDR and IPAddress objects \
         (MultiCIDRServiceAllocator; pkg/registry/core/service/ipallocator MetaAllocator, \
         ipallocator/controller/repairip.go)",
    ),
    (
        "allocation:dualWrite",
        Profile::allocator_dual_write,
        "KEP-1880: the IPAddress allocator also writes the flag range's bitmap \
         (DisableAllocatorDualWrite off; pkg/registry/core/service/ipallocator/cidrallocator.go)",
    ),
    (
        "allocation:smallRangeRule",
        small_range_fixed,
        "ipallocator calculateRangeOffset: a range of exactly 16 addresses has no band \
         (kubernetes/kubernetes#115322, backported to 1.25.7 and 1.26.2 as svclab takes them)",
    ),
];

fn small_range_fixed(profile: &Profile) -> bool {
    profile.small_range_rule() == crate::profile::SmallRangeRule::AtMost16
}

/// Everything that differs between the sides.
#[derive(Debug, Clone, Default)]
pub(crate) struct Crossed {
    /// Validation and warning rows in force at one release and not the other, with their
    /// table.
    pub(crate) validation: Vec<(&'static str, &'static Change)>,
    /// kube-proxy rows that hold at one release (its patch included) and not the other.
    pub(crate) proxy: Vec<(Behaviour, Cause)>,
    /// kube-apiserver gates whose effective value differs.
    pub(crate) gates: Vec<Cause>,
    /// kube-proxy's gates whose effective value differs.
    pub(crate) proxy_gates: Vec<Cause>,
    /// Allocator behaviours that differ ([`ALLOCATION`]).
    pub(crate) allocation: Vec<Cause>,
    /// The mode switch and the profile fields the target changes.
    pub(crate) profile: Vec<Cause>,
}

/// What one side runs, as far as causes go.
#[derive(Clone, Copy)]
pub(crate) struct Point<'a> {
    pub(crate) version: crate::profile::Version,
    pub(crate) profile: &'a Profile,
    pub(crate) kube_proxy: Option<&'a crate::model::KubeProxyConfiguration>,
}

impl<'a> Point<'a> {
    /// The point of a side.
    pub(crate) fn of(side: &'a Side) -> Point<'a> {
        Point {
            version: side.version,
            profile: &side.profile,
            kube_proxy: side.kube_proxy.as_ref(),
        }
    }
}

impl Crossed {
    /// What differs between the two sides.
    pub(crate) fn between(sides: &Sides) -> Crossed {
        let mut crossed = Crossed::releases(Point::of(&sides.from), Point::of(&sides.to));
        crossed.profile = profile_causes(sides);
        crossed
    }

    /// What differs between two points from their releases and gates alone (rows, gates,
    /// allocator behaviours; no profile causes).
    pub(crate) fn releases(from: Point<'_>, to: Point<'_>) -> Crossed {
        let (a, b) = (from.version.minor, to.version.minor);
        let validation = validation::TABLES
            .iter()
            .flat_map(|(table, rows)| rows.iter().map(move |row| (*table, row)))
            .filter(|(_, row)| {
                validation::in_force(row.id, a) != validation::in_force(row.id, b)
                    || changes_within(row, from.version, to.version)
            })
            .collect();
        let proxy = release_rows()
            .filter(|(behaviour, ..)| {
                holds_at(*behaviour, from.version) != holds_at(*behaviour, to.version)
            })
            .map(|(behaviour, first, last, upstream)| {
                (behaviour, proxy_cause(behaviour, first, last, upstream))
            })
            .collect();
        let gates = crate::profile::gates()
            .iter()
            .filter_map(|g| {
                let (x, y) = (from.profile.gate_named(g.name), to.profile.gate_named(g.name));
                (x != y).then(|| gate_cause("gate", g, from.version, to.version, x, y))
            })
            .collect();
        let proxy_gates = own_gates()
            .iter()
            .chain(crate::profile::gates())
            .filter_map(|g| {
                let (x, y) = (proxy_gate(from, g.name), proxy_gate(to, g.name));
                (x != y).then(|| gate_cause("proxyGate", g, from.version, to.version, x, y))
            })
            .collect();
        let allocation = ALLOCATION
            .iter()
            .filter(|(_, decides, _)| decides(from.profile) != decides(to.profile))
            .map(|(id, _, upstream)| Cause {
                id: (*id).to_owned(),
                upstream: (*upstream).to_owned(),
            })
            .collect();
        Crossed { validation, proxy, gates, proxy_gates, allocation, profile: Vec::new() }
    }

    /// The cause of a validation or warning row.
    pub(crate) fn validation_cause(table: &str, row: &Change) -> Cause {
        Cause {
            id: format!("validation:{:?}", row.id),
            upstream: format!(
                "kube-apiserver release table \"{table}\" ({}): {}; {}",
                row.releases(),
                row.what,
                row.upstream
            ),
        }
    }

    /// The causes of what kube-apiserver answers for `object` (`Service ns/name`,
    /// `EndpointSlice ns/name`, `ServiceCIDR name`): the crossed validation rows whose texts
    /// appear in `message`; else the crossed rows that carry no text of their own (update
    /// ratcheting, the shape of an update's causes) of the tables that validate the object's
    /// kind; else the crossed rows of its kind's own table (a change of how a value is printed,
    /// which no mark names); else the crossed gates, allocator behaviours and profile changes,
    /// which reach validation through the profile.
    pub(crate) fn for_apiserver_message(&self, object: &str, message: &str) -> Vec<Cause> {
        let governing = validation::governing(message);
        let marked: Vec<Cause> = self
            .validation
            .iter()
            .filter(|(_, row)| governing.iter().any(|(_, g)| g.id == row.id))
            .map(|(table, row)| Self::validation_cause(table, row))
            .collect();
        if !marked.is_empty() {
            return marked;
        }
        let kind = object.split(' ').next().unwrap_or_default();
        let applies = |table: &str| kind_of_table(table).is_none_or(|k| k == kind);
        let unmarked: Vec<Cause> = self
            .validation
            .iter()
            .filter(|(table, row)| row.marks.is_empty() && applies(table))
            .map(|(table, row)| Self::validation_cause(table, row))
            .collect();
        if !unmarked.is_empty() {
            return unmarked;
        }
        let own: Vec<Cause> = self
            .validation
            .iter()
            .filter(|(table, _)| kind_of_table(table) == Some(kind))
            .map(|(table, row)| Self::validation_cause(table, row))
            .collect();
        if !own.is_empty() {
            return own;
        }
        self.apiserver_profile()
    }

    /// The crossed gates, allocator behaviours and profile changes whose ids start with one of
    /// `prefixes`; all of them when none does (a finding is never left without its causes).
    pub(crate) fn only(&self, prefixes: &[&str]) -> Vec<Cause> {
        let all = self.apiserver_profile();
        let some: Vec<Cause> =
            all.iter().filter(|c| prefixes.iter().any(|p| c.id.starts_with(p))).cloned().collect();
        if some.is_empty() { all } else { some }
    }

    /// The crossed gates, allocator behaviours and profile changes (what reaches kube-apiserver
    /// through its flags rather than its release's code).
    pub(crate) fn apiserver_profile(&self) -> Vec<Cause> {
        self.gates
            .iter()
            .chain(&self.allocation)
            .chain(
                self.profile
                    .iter()
                    .filter(|c| c.id != "mode" && c.id != "profile:kubeProxyConfiguration"),
            )
            .cloned()
            .collect()
    }

    /// The crossed causes of kube-proxy's rules: the mode switch, the configuration, kube-proxy's
    /// gates, its release rows, and the profile (ranges, ServiceCIDRs) where it reaches the rules.
    pub(crate) fn for_rules(&self) -> Vec<Cause> {
        let profile = self.profile.iter();
        let rows = self.proxy.iter().map(|(_, c)| c);
        profile.chain(&self.proxy_gates).chain(rows).chain(&self.allocation).cloned().collect()
    }
}

/// The one kind whose validation a release table holds (`validation/releases.rs` `TABLES`):
/// `ValidateService` and the Service REST storage's, `ValidateEndpointSlice`'s,
/// `ValidateServiceCIDR`'s; `None` for the tables every kind meets (apimachinery's texts, the
/// generic update path, the warnings of Services and EndpointSlices alike).
fn kind_of_table(table: &str) -> Option<&'static str> {
    match table {
        "Service rules" | "allocation" => Some("Service"),
        "EndpointSlice" => Some("EndpointSlice"),
        "ServiceCIDR" => Some("ServiceCIDR"),
        _ => None,
    }
}

/// Whether a validation row in force on both sides changes at a patch release between them:
/// the tables count minors, and a row whose text names a patch of a minor (`fixed in 1.34.2`)
/// says its behaviour changed inside that minor. Such a row is crossed when a side is at a patch
/// of that minor older than the newest svclab checked (a bare minor is the newest).
fn changes_within(row: &Change, a: crate::profile::Version, b: crate::profile::Version) -> bool {
    if !(validation::in_force(row.id, a.minor) && validation::in_force(row.id, b.minor)) || a == b {
        return false;
    }
    let older_patch = |v: crate::profile::Version| {
        v.patch.is_some()
            && v.modelled() != crate::profile::Version { minor: v.minor, patch: None }.modelled()
    };
    [a, b].iter().any(|v| {
        older_patch(*v)
            && (row.what.contains(&format!("1.{}.", v.minor))
                || row.upstream.contains(&format!("1.{}.", v.minor)))
    })
}

/// The cause of a kube-proxy row.
fn proxy_cause(behaviour: Behaviour, first: u32, last: Option<u32>, upstream: &str) -> Cause {
    let releases = match last {
        Some(l) if l == first => format!("1.{first}"),
        Some(l) => format!("1.{first}–1.{l}"),
        None => format!("1.{first}+"),
    };
    Cause {
        id: format!("proxy:{behaviour:?}"),
        upstream: format!("kube-proxy release table {behaviour:?} ({releases}): {upstream}"),
    }
}

/// A gate's value as kube-proxy sees it: its KubeProxyConfiguration's `featureGates`, else
/// kube-proxy's own default, else the apiserver table's default for the release.
pub(crate) fn proxy_gate(point: Point<'_>, name: &str) -> bool {
    let minor = point.version.minor;
    point
        .kube_proxy
        .and_then(|k| k.feature_gates.get(name).copied())
        .or_else(|| own_gate_default(name, minor))
        .unwrap_or_else(|| {
            crate::profile::gates()
                .iter()
                .find(|g| g.name == name)
                .is_some_and(|g| g.default_at(minor))
        })
}

/// The cause of a gate whose value differs (`from_value` at `from`, `to_value` at `to`).
fn gate_cause(
    kind: &str,
    gate: &Gate,
    from: crate::profile::Version,
    to: crate::profile::Version,
    from_value: bool,
    to_value: bool,
) -> Cause {
    let component = if kind == "gate" { "kube-apiserver" } else { "kube-proxy" };
    Cause {
        id: format!("{kind}:{}", gate.name),
        upstream: format!(
            "{component} feature gate {} ({} in {from}, {} in {to}): {from_value} → {to_value} \
             (pkg/features/kube_features.go)",
            gate.name,
            stage_words(gate, from.minor),
            stage_words(gate, to.minor),
        ),
    }
}

/// The mode switch and what the target profile changes.
fn profile_causes(sides: &Sides) -> Vec<Cause> {
    let (from, to) = (&sides.from, &sides.to);
    let mut causes = Vec::new();
    let mut cause = |id: &str, upstream: String| {
        causes.push(Cause { id: id.to_owned(), upstream });
    };
    if from.mode != to.mode {
        cause(
            "mode",
            format!(
                "kube-proxy --proxy-mode {} → {} (pkg/proxy/{}/proxier.go)",
                from.mode.as_str(),
                to.mode.as_str(),
                to.mode.as_str()
            ),
        );
    }
    let (p, q) = (&from.profile, &to.profile);
    if p.service_cluster_ip_ranges != q.service_cluster_ip_ranges {
        cause(
            "profile:serviceClusterIPRanges",
            "kube-apiserver --service-cluster-ip-range (the target profile's serviceClusterIPRanges)"
                .to_owned(),
        );
    }
    if p.service_node_port_range != q.service_node_port_range {
        cause(
            "profile:serviceNodePortRange",
            "kube-apiserver --service-node-port-range (the target profile's serviceNodePortRange)"
                .to_owned(),
        );
    }
    if from.service_cidrs != to.service_cidrs {
        cause(
            "profile:serviceCIDRs",
            "the ServiceCIDR objects of the target profile (networking.k8s.io/v1 ServiceCIDR, \
             KEP-1880)"
                .to_owned(),
        );
    }
    let mut from_kpc = from.kube_proxy.clone().unwrap_or_default();
    let mut to_kpc = to.kube_proxy.clone().unwrap_or_default();
    from_kpc.mode.clear();
    to_kpc.mode.clear();
    if from_kpc != to_kpc {
        cause(
            "profile:kubeProxyConfiguration",
            "the target profile's KubeProxyConfiguration".to_owned(),
        );
    }
    if p.host != q.host || p.seed != q.seed || p.dynamic_picks != q.dynamic_picks {
        cause("profile:host", "the target profile's host facts, seed or dynamicPicks".to_owned());
    }
    causes
}

/// A gate's stage at a release, in words: `beta, on by default`, `GA, locked on`, `removed`.
pub(crate) fn stage_words(gate: &Gate, minor: u32) -> &'static str {
    match gate.stage(minor) {
        None if gate.removed.is_some_and(|r| minor >= r) => "removed",
        None => "not yet added",
        Some(Stage::Alpha) => "alpha, off by default",
        Some(Stage::Beta) => "beta, on by default",
        Some(Stage::BetaOff) => "beta, off by default",
        Some(Stage::GaOpen) => "GA, on by default",
        Some(Stage::Ga) => "GA, locked on",
        Some(Stage::Deprecated) => "deprecated, off by default",
        Some(Stage::DeprecatedLocked) => "deprecated, locked off",
    }
}
