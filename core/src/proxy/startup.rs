//! What kube-proxy checks in its configuration before it starts, by release: its own
//! `featureGates` against the release's whole gate registry (`Options.Complete`: component-base
//! `SetFromMap`, [`gates`] read from upstream's binaries, returned as `failed complete: ...`),
//! then pkg/proxy/apis/config/validation/validation.go `Validate` field by field after
//! v1alpha1 defaulting and, from 1.28, `platformApplyDefaults` (the mode and its blocks, sync
//! periods, conntrack, bind addresses, `clusterCIDR`, `portRange`, `nodePortAddresses`, the
//! detect-local settings, the log format; `failed validate: ` and the aggregate of the
//! `field.Error`s), and in 1.24 to 1.27 `getDetectLocalMode`. A refusal is the text
//! cmd/kube-proxy's command returns, never rules; `svclab check` reports each field error on
//! the KubeProxyConfiguration field as written (`diagnostics`).

use super::release::{Behaviour, holds};
use super::{ProxyMode, RenderError};
use crate::diagnostic::{Diagnostic, ObjectRef};
use crate::field::{FieldError, GoValue};
use crate::model::{KubeProxyChecked, KubeProxyConfiguration, Located};
use crate::net::{parse_cidr_sloppy, parse_ip_sloppy};

mod gates;
mod go;
use crate::profile::{Gate, Stage};

/// The release rows only this module reads: they decide whether kube-proxy starts and what it
/// prints when it does not, never which rules a kube-proxy that starts writes (the test
/// `startup_only_rows_shape_no_rules` holds the other modules to it).
pub(crate) const STARTUP_ONLY: [Behaviour; 17] = [
    Behaviour::NftablesModeGa,
    Behaviour::NftablesModeGated,
    Behaviour::NftablesModeOnByDefault,
    Behaviour::DetectLocalModeStartupError,
    Behaviour::PlatformDefaultsBeforeValidate,
    Behaviour::ValidateLinuxBlock,
    Behaviour::ValidateLogging,
    Behaviour::ValidateIpvsScheduler,
    Behaviour::ValidateNftablesBlock,
    Behaviour::ValidateConntrackUdpTimeouts,
    Behaviour::ValidateUdpIdleTimeout,
    Behaviour::ValidatePortRange,
    Behaviour::ValidateDetectLocalMode,
    Behaviour::IpvsModeGated,
    Behaviour::UserspaceProxyMode,
    Behaviour::ModeListCommaSpace,
    Behaviour::ShowHiddenMetricsFieldError,
];

/// Whether the nftables mode is a valid `--proxy-mode` at a release, given kube-proxy's own
/// NFTablesProxyMode gate as its `featureGates` set it (`None`: the release default).
pub(crate) fn nftables_mode_valid(minor: u32, own_gate: Option<bool>) -> bool {
    holds(Behaviour::NftablesModeGa, minor)
        || (holds(Behaviour::NftablesModeGated, minor)
            && own_gate.unwrap_or_else(|| holds(Behaviour::NftablesModeOnByDefault, minor)))
}

/// What kube-proxy of `minor`, running in `mode`, says about its configuration before it
/// programs anything: `Options.Complete`'s feature gates (`failed complete:`), then
/// `Validate`'s field errors (`failed validate:` and their aggregate), then, in 1.24 to 1.27,
/// `newProxyServer`'s detect-local mode.
pub(crate) fn validate(
    kpc: &KubeProxyConfiguration,
    mode: ProxyMode,
    minor: u32,
    release: &str,
) -> Result<(), RenderError> {
    let refused = |message: String| {
        Err(RenderError::InvalidConfiguration { release: release.to_owned(), message })
    };
    if let Some((_, text)) = complete_error(kpc, minor) {
        return refused(format!("failed complete: {text}"));
    }
    let errors: Vec<FieldError> =
        refusals(kpc, mode.as_str(), minor).into_iter().map(|(_, error)| error).collect();
    if !errors.is_empty() {
        return refused(format!("failed validate: {}", aggregate(&errors, json_values(minor))));
    }
    if let Some(text) = detect_local_mode_error(kpc, minor) {
        return refused(text);
    }
    Ok(())
}

/// Whether `field.Error` prints a bad value that is not a string, number or bool with
/// `json.Marshal` (apimachinery v0.34.0, kubernetes/kubernetes#132314; the validation tables'
/// `JsonValues` row), else with Go's `fmt`.
fn json_values(minor: u32) -> bool {
    crate::profile::Profile::for_version(crate::profile::Version { minor, patch: None })
        .json_field_values()
}

/// cmd/kube-proxy/app/server_others.go `getDetectLocalMode` (1.24 to 1.27): a detect-local
/// mode it does not know stops `newProxyServer` ("cannot determine detect-local-mode: ...");
/// from 1.28 `Validate` refuses it (`validateDetectLocalMode`).
fn detect_local_mode_error(kpc: &KubeProxyConfiguration, minor: u32) -> Option<String> {
    let mode = kpc.detect_local_mode.as_str();
    let known =
        matches!(mode, "ClusterCIDR" | "NodeCIDR" | "BridgeInterface" | "InterfaceNamePrefix");
    (holds(Behaviour::DetectLocalModeStartupError, minor) && !known && !mode.trim().is_empty())
        .then(|| format!("cannot determine detect-local-mode: unknown detect-local-mode: {mode}"))
}

/// The refusal of a scenario's KubeProxyConfiguration (in the mode it writes) as `svclab
/// check` errors: one per field error, on the field as written, with kube-proxy's text.
pub(crate) fn diagnostics(
    located: &Located<KubeProxyConfiguration>,
    minor: u32,
) -> Vec<Diagnostic> {
    let error = |field: String, message: String| {
        let source = located.positions.source_of(&field);
        Diagnostic::error(
            Some(ObjectRef::kind("KubeProxyConfiguration")),
            field,
            "FieldValueInvalid",
            format!("kube-proxy refuses to start: {message}"),
        )
        .at(source)
    };
    if let Some((field, text)) = complete_error(&located.value, minor) {
        return vec![error(field, format!("failed complete: {text}"))];
    }
    let json = json_values(minor);
    let refused: Vec<Diagnostic> = refusals(&located.value, &located.value.mode, minor)
        .into_iter()
        .map(|(field, e)| error(field, format!("failed validate: {}", e.message(json))))
        .collect();
    if !refused.is_empty() {
        return refused;
    }
    detect_local_mode_error(&located.value, minor)
        .map(|text| vec![error("detectLocalMode".to_owned(), text)])
        .unwrap_or_default()
}

/// kube-proxy's own gates, beyond those of `profile.rs`.
/// Stages read in `pkg/features/kube_features.go` at the releases `profile.rs` names; before
/// 1.24 not listed.
const OWN_GATES: &[Gate] = &[
    // KEP-1669. Alpha in 1.22 to 1.25, beta in 1.26 and 1.27, GA and locked in 1.28 and 1.29,
    // gone in 1.30. Off: pkg/proxy/topology.go `CategorizeEndpoints` never falls back to
    // serving-and-terminating endpoints, for any traffic policy (the fallback covers cluster
    // and local policies since #108691, CHANGELOG-1.24).
    Gate {
        name: "ProxyTerminatingEndpoints",
        stages: &[(24, Stage::Alpha), (26, Stage::Beta), (28, Stage::Ga)],
        removed: Some(30),
    },
    // KEP-3836. Alpha in 1.28 and 1.29, beta in 1.30, locked in 1.31 and 1.32, gone in 1.33.
    // It changes kube-proxy's own /healthz on a node being deleted or tainted
    // `ToBeDeletedByClusterAutoscaler` (pkg/proxy/healthcheck/proxier_health.go); svclab
    // reports no node health, so only the name and the lock are modelled.
    Gate {
        name: "KubeProxyDrainingTerminatingNodes",
        stages: &[(28, Stage::Alpha), (30, Stage::Beta), (31, Stage::Ga)],
        removed: Some(33),
    },
    // KEP-3453. Alpha in 1.26, beta in 1.27, locked in 1.28 and 1.29, gone in 1.30. It only
    // lets the iptables proxier skip unchanged service chains in a partial sync
    // (pkg/proxy/iptables/proxier.go `syncProxyRules`, `tryPartialSync`); the full-sync payload
    // svclab renders is the same either way.
    Gate {
        name: "MinimizeIPTablesRestore",
        stages: &[(26, Stage::Alpha), (27, Stage::Beta), (28, Stage::Ga)],
        removed: Some(30),
    },
    // KEP-3178. Alpha in 1.25 and 1.26, beta in 1.27, locked in 1.28 and 1.29, gone in 1.30.
    // Read by kubelet (pkg/kubelet/kubelet_network_linux.go `syncIPTablesRules`: with it off,
    // `syncIPTablesRulesDeprecated` keeps creating KUBE-MARK-DROP, KUBE-MARK-MASQ and
    // KUBE-POSTROUTING); kube-proxy's payload does not depend on it (it stopped using
    // KUBE-MARK-DROP by release, `Behaviour::ProxyFirewallChain`, not by this gate). svclab's
    // standalone kubelet chains follow kubelet's release default; kube-proxy's own value is
    // only checked.
    Gate {
        name: "IPTablesOwnershipCleanup",
        stages: &[(25, Stage::Alpha), (27, Stage::Beta), (28, Stage::Ga)],
        removed: Some(30),
    },
    // KEP-3866: alpha in 1.29 and 1.30 (#121046), beta in 1.31 and 1.32 (#124383), GA and
    // locked from 1.33; no removal seen through the newest release. The mode check reads the
    // same releases from `Behaviour::NftablesMode*` (the tests hold the two together).
    Gate {
        name: "NFTablesProxyMode",
        stages: &[(29, Stage::Alpha), (31, Stage::Beta), (33, Stage::Ga)],
        removed: None,
    },
    // KEP-5495: in 1.37's registry (pkg/features/kube_features.go at v1.37.2: `{1.0, true, GA}`
    // then `{1.37, true, Deprecated}`), on by default and not locked: the first step to turning
    // the ipvs mode off. `validateProxyModeLinux` lists `ipvs` only while it is on
    // (`Behaviour::IpvsModeGated`); svclab renders no ipvs rules.
    Gate { name: "KubeProxyIPVS", stages: &[(37, Stage::GaOpen)], removed: None },
    // KEP-6032: alpha in 1.37 (`{1.37, false, Alpha}` at v1.37.2), off by default. On, the
    // nftables proxier rejects and counts NodePort traffic to loopback
    // (`localhostNodePortRejectProtocols`, nftables/fixed.rs) and, with loopback among
    // `nodePortAddresses`, serves TCP from a userspace proxy (no rules).
    Gate {
        name: "KubeProxyNFTablesLocalhostNodePorts",
        stages: &[(37, Stage::Alpha)],
        removed: None,
    },
];

/// kube-proxy's own gates ([`OWN_GATES`]), for `upgrade`'s gate findings.
pub(crate) fn own_gates() -> &'static [Gate] {
    OWN_GATES
}

/// The release default ([`Gate::default_at`]) of one of kube-proxy's own gates ([`OWN_GATES`]),
/// `None` for a gate of the apiserver's table or one svclab does not know.
pub(crate) fn own_gate_default(name: &str, minor: u32) -> Option<bool> {
    OWN_GATES.iter().find(|g| g.name == name).map(|g| g.default_at(minor))
}

/// What component-base `SetFromMap` says about one gate kube-proxy's `featureGates` sets:
/// a name the release's registry does not hold ("unrecognized feature gate"), or a locked gate
/// set the other way. The registry is every gate a kube-proxy binary of the release registers
/// (pkg/features, k8s.io/apiserver, component-base), read from upstream's own binaries
/// ([`gates::GATES`]).
fn own_gate_error(name: &str, value: bool, minor: u32) -> Option<String> {
    let state = gates::GATES
        .binary_search_by(|(gate, _)| (*gate).cmp(name))
        .ok()
        .and_then(|i| {
            gates::GATES[i].1.as_bytes().get(minor.checked_sub(gates::FIRST_MINOR)? as usize)
        })
        .copied()
        .filter(|c| *c != b'-');
    let Some(state) = state else {
        return Some(format!("unrecognized feature gate: {name}"));
    };
    let (default, locked) = match state {
        b'G' => (true, true),
        b'D' => (false, true),
        b'b' => (true, false),
        _ => (false, false),
    };
    (locked && value != default).then(|| {
        format!("cannot set feature gate {name} to {value}, feature is locked to {default}")
    })
}

/// What kube-proxy's `Options.Complete` refuses before validation runs (cmd/kube-proxy/app/
/// server.go: `utilfeature.DefaultMutableFeatureGate.SetFromMap(o.config.FeatureGates)`,
/// returned as `failed complete: %w`): the first gate `SetFromMap` refuses, with the
/// component-base featuregate texts (the same at v0.24.0, v0.29.0, v0.31.0, v0.33.0 and
/// v0.36.0). `SetFromMap` ranges over a Go map and stops at the first error, so with several
/// bad gates upstream names one at random; svclab names the first in name order. The field as
/// the document writes it, and the text.
fn complete_error(kpc: &KubeProxyConfiguration, minor: u32) -> Option<(String, String)> {
    kpc.feature_gates.iter().find_map(|(name, value)| {
        own_gate_error(name, *value, minor).map(|text| (format!("featureGates.{name}"), text))
    })
}

/// One setting of the configuration after v1alpha1 decoding and defaulting
/// (pkg/proxy/apis/config/v1alpha1/defaults.go `SetDefaults_KubeProxyConfiguration`): a
/// duration written as text, its default when not written (or, for the plain `metav1.Duration`
/// fields, written as zero).
struct Duration<'a> {
    /// The field as the document writes it (`iptables.syncPeriod`).
    field: &'static str,
    text: &'a str,
    default: i64,
    /// `*metav1.Duration` (conntrack's TCP timeouts): only a missing value takes the default.
    pointer: bool,
}

impl<'a> Duration<'a> {
    /// A `metav1.Duration` field: zero (or not written) takes the default.
    fn plain(field: &'static str, text: &'a str, default: i64) -> Duration<'a> {
        Duration { field, text, default, pointer: false }
    }

    /// A `*metav1.Duration` field: only a missing value takes the default.
    fn pointer(field: &'static str, text: &'a str, default: i64) -> Duration<'a> {
        Duration { field, text, default, pointer: true }
    }

    /// The value kube-proxy validates, in nanoseconds. A text `time.ParseDuration` refuses
    /// makes kube-proxy's decoder fail before validation; svclab takes the default (the
    /// document's own diagnostics say nothing of it either: not modelled).
    fn value(&self) -> i64 {
        match go::parse_duration(self.text) {
            Some(0) if !self.pointer => self.default,
            Some(v) => v,
            None => self.default,
        }
    }

    /// The bad value as `ErrorBody` prints a `metav1.Duration`: `%#v` before 1.34
    /// (`v1.Duration{Duration:-1000000000}`: the generated `(*Duration).String` hides the
    /// embedded `time.Duration`'s, so the value is no `fmt.Stringer`), `json.Marshal` from 1.34
    /// (`"-1s"`, `Duration.String` quoted).
    fn go_value(nanos: i64) -> GoValue {
        let text = go::format_duration(nanos);
        GoValue::Composite {
            json: format!("\"{text}\""),
            go: format!("v1.Duration{{Duration:{nanos}}}"),
        }
    }
}

const SECOND: i64 = 1_000_000_000;

/// The sync periods kube-proxy checks for one block or (1.31 on) for the mode: `SyncPeriod`
/// above zero, `MinSyncPeriod` at least zero and not above `SyncPeriod` (reported on
/// `SyncPeriod` with the value of `MinSyncPeriod`).
fn sync_periods(
    prefix: &str,
    sync: &Duration<'_>,
    min: &Duration<'_>,
    out: &mut Vec<(String, FieldError)>,
) {
    let (sync_value, min_value) = (sync.value(), min.value());
    if sync_value <= 0 {
        out.push((
            sync.field.to_owned(),
            FieldError::invalid(
                format!("{prefix}.SyncPeriod"),
                Duration::go_value(sync_value),
                "must be greater than 0",
            ),
        ));
    }
    if min_value < 0 {
        out.push((
            min.field.to_owned(),
            FieldError::invalid(
                format!("{prefix}.MinSyncPeriod"),
                Duration::go_value(min_value),
                "must be greater than or equal to 0",
            ),
        ));
    }
    if min_value > sync_value {
        out.push((
            sync.field.to_owned(),
            FieldError::invalid(
                format!("{prefix}.SyncPeriod"),
                Duration::go_value(min_value),
                format!("must be greater than or equal to {prefix}.MinSyncPeriod"),
            ),
        ));
    }
}

/// A duration that must not be negative (`must be greater than or equal to 0`).
fn not_negative(path: &str, duration: &Duration<'_>, out: &mut Vec<(String, FieldError)>) {
    let value = duration.value();
    if value < 0 {
        out.push((
            duration.field.to_owned(),
            FieldError::invalid(
                path,
                Duration::go_value(value),
                "must be greater than or equal to 0",
            ),
        ));
    }
}

/// An `int32` pointer that must not be negative.
fn count_not_negative(
    field: &str,
    path: &str,
    value: Option<i32>,
    out: &mut Vec<(String, FieldError)>,
) {
    if let Some(v) = value.filter(|v| *v < 0) {
        out.push((
            field.to_owned(),
            FieldError::invalid(
                path,
                GoValue::Int(i64::from(v)),
                "must be greater than or equal to 0",
            ),
        ));
    }
}

/// Every field error of pkg/proxy/apis/config/validation/validation.go `Validate` of the
/// release, in its order, each with the field as the document writes it (`mode`,
/// `iptables.masqueradeBit`, `nodePortAddresses[0]`), for a kube-proxy running in `mode` (the
/// rendered mode, or the document's own for `svclab check`) after cmd/kube-proxy's
/// `platformApplyDefaults` (1.28 on, in `Options.Complete`: a blank mode is iptables, a blank
/// detectLocalMode is ClusterCIDR). The `featureGates` check that opens `Validate` cannot fail
/// once `Complete` has applied the same gates (`complete_error`).
fn refusals(kpc: &KubeProxyConfiguration, mode: &str, minor: u32) -> Vec<(String, FieldError)> {
    let defaults_applied = holds(Behaviour::PlatformDefaultsBeforeValidate, minor);
    let v = Validate {
        kpc,
        checked: &kpc.checked,
        mode: if mode.is_empty() && defaults_applied { "iptables" } else { mode },
        detect_mode: if kpc.detect_local_mode.is_empty() && defaults_applied {
            "ClusterCIDR"
        } else {
            kpc.detect_local_mode.as_str()
        },
        minor,
        linux: holds(Behaviour::ValidateLinuxBlock, minor),
    };
    let mut out = Vec::new();
    let periods = v.proxier_blocks(&mut out);
    let oom = v.conntrack(&mut out);
    v.process(&periods, oom, &mut out);
    v.addresses(&mut out);
    v.detect_local(&mut out);
    if holds(Behaviour::ValidateLogging, minor)
        && !matches!(v.checked.logging_format.as_str(), "" | "text" | "json")
    {
        out.push((
            "logging.format".to_owned(),
            FieldError::invalid(
                format!("{ROOT}.logging.format"),
                GoValue::Str(v.checked.logging_format.clone()),
                "Unsupported log format",
            ),
        ));
    }
    out
}

/// The root of every path `Validate` reports.
const ROOT: &str = "KubeProxyConfiguration";

/// One run of `Validate`: the configuration and what the release and mode make of it. Its
/// methods are the parts of validation.go `Validate`, in its order.
struct Validate<'a> {
    kpc: &'a KubeProxyConfiguration,
    checked: &'a KubeProxyChecked,
    /// The mode kube-proxy runs in, after `platformApplyDefaults` where the release has it.
    mode: &'a str,
    /// `detectLocalMode`, likewise.
    detect_mode: &'a str,
    minor: u32,
    /// The configuration has a `KubeProxyLinuxConfiguration` block (1.31 on).
    linux: bool,
}

/// The sync periods of each mode's block, as written or defaulted.
struct SyncPeriods<'a> {
    iptables: (Duration<'a>, Duration<'a>),
    ipvs: (Duration<'a>, Duration<'a>),
    nftables: (Duration<'a>, Duration<'a>),
}

impl<'a> Validate<'a> {
    /// validateKubeProxyIPTablesConfiguration (its sync periods until 1.30), then the block of
    /// the mode kube-proxy runs in.
    fn proxier_blocks(&self, out: &mut Vec<(String, FieldError)>) -> SyncPeriods<'a> {
        let (checked, kpc, d) = (self.checked, self.kpc, Duration::plain);
        let periods = SyncPeriods {
            iptables: (
                d("iptables.syncPeriod", &checked.iptables_sync_period, 30 * SECOND),
                d("iptables.minSyncPeriod", &checked.iptables_min_sync_period, SECOND),
            ),
            ipvs: (
                d("ipvs.syncPeriod", &checked.ipvs_sync_period, 30 * SECOND),
                d("ipvs.minSyncPeriod", &checked.ipvs_min_sync_period, 0),
            ),
            nftables: (
                d("nftables.syncPeriod", &checked.nftables_sync_period, 30 * SECOND),
                d("nftables.minSyncPeriod", &checked.nftables_min_sync_period, SECOND),
            ),
        };
        let ipt = format!("{ROOT}.KubeProxyIPTablesConfiguration");
        masquerade_bit("iptables.masqueradeBit", &ipt, kpc.masquerade_bit, out);
        if !self.linux {
            sync_periods(&ipt, &periods.iptables.0, &periods.iptables.1, out);
        }
        if self.mode == "ipvs" {
            let ipvs = format!("{ROOT}.KubeProxyIPVSConfiguration");
            if !self.linux {
                sync_periods(&ipvs, &periods.ipvs.0, &periods.ipvs.1, out);
            }
            for (field, name, text) in [
                ("ipvs.tcpTimeout", "TCPTimeout", &checked.ipvs_tcp_timeout),
                ("ipvs.tcpFinTimeout", "TCPFinTimeout", &checked.ipvs_tcp_fin_timeout),
                ("ipvs.udpTimeout", "UDPTimeout", &checked.ipvs_udp_timeout),
            ] {
                not_negative(&format!("{ipvs}.{name}"), &d(field, text, 0), out);
            }
            if holds(Behaviour::ValidateIpvsScheduler, self.minor) {
                out.extend(ipvs_scheduler_error(&ipvs, &checked.ipvs_scheduler));
            }
            for (i, cidr) in checked.ipvs_exclude_cidrs.iter().enumerate() {
                if parse_cidr_sloppy(cidr).is_none() {
                    out.push((
                        format!("ipvs.excludeCIDRs[{i}]"),
                        FieldError::invalid(
                            format!("{ipvs}.ExcludeCidrs[{i}]"),
                            GoValue::Str(cidr.to_string()),
                            "must be a valid CIDR",
                        ),
                    ));
                }
            }
        } else if self.mode == "nftables" && holds(Behaviour::ValidateNftablesBlock, self.minor) {
            let nft = format!("{ROOT}.KubeProxyNFTablesConfiguration");
            masquerade_bit("nftables.masqueradeBit", &nft, kpc.nftables_masquerade_bit, out);
            if !self.linux {
                sync_periods(&nft, &periods.nftables.0, &periods.nftables.1, out);
            }
        }
        periods
    }

    /// validateKubeProxyConntrackConfiguration (in validateKubeProxyLinuxConfiguration from
    /// 1.31, with oomScoreAdj after it). Returns the oomScoreAdj error that comes later before
    /// 1.31.
    fn conntrack(&self, out: &mut Vec<(String, FieldError)>) -> Option<(String, FieldError)> {
        let checked = self.checked;
        let conntrack = if self.linux {
            format!("{ROOT}.KubeProxyLinuxConfiguration.KubeProxyConntrackConfiguration")
        } else {
            format!("{ROOT}.KubeProxyConntrackConfiguration")
        };
        let per_core = format!("{conntrack}.MaxPerCore");
        count_not_negative("conntrack.maxPerCore", &per_core, checked.conntrack_max_per_core, out);
        let min = format!("{conntrack}.Min");
        count_not_negative("conntrack.min", &min, checked.conntrack_min, out);
        let (d, pointer) = (Duration::plain, Duration::pointer);
        for (name, field, text, default) in [
            (
                "TCPEstablishedTimeout",
                "conntrack.tcpEstablishedTimeout",
                &checked.conntrack_tcp_established_timeout,
                24 * 3600 * SECOND,
            ),
            (
                "TCPCloseWaitTimeout",
                "conntrack.tcpCloseWaitTimeout",
                &checked.conntrack_tcp_close_wait_timeout,
                3600 * SECOND,
            ),
        ] {
            not_negative(&format!("{conntrack}.{name}"), &pointer(field, text, default), out);
        }
        if holds(Behaviour::ValidateConntrackUdpTimeouts, self.minor) {
            for (name, field, text) in [
                ("UDPTimeout", "conntrack.udpTimeout", &checked.conntrack_udp_timeout),
                (
                    "UDPStreamTimeout",
                    "conntrack.udpStreamTimeout",
                    &checked.conntrack_udp_stream_timeout,
                ),
            ] {
                not_negative(&format!("{conntrack}.{name}"), &d(field, text, 0), out);
            }
        }
        let oom = checked.oom_score_adj.filter(|v| !(-1000..=1000).contains(v));
        let oom_error = oom.map(|v| {
            let path = if self.linux {
                format!("{ROOT}.KubeProxyLinuxConfiguration.OOMScoreAdj")
            } else {
                format!("{ROOT}.OOMScoreAdj")
            };
            (
                "oomScoreAdj".to_owned(),
                FieldError::invalid(
                    path,
                    GoValue::Int(i64::from(v)),
                    "must be within the range [-1000, 1000]",
                ),
            )
        });
        if self.linux {
            out.extend(oom_error);
            return None;
        }
        oom_error
    }

    /// validateProxyMode, validateClientConnectionConfiguration, then the process's timing:
    /// oomScoreAdj before 1.31 (`oom`), udpIdleTimeout, configSyncPeriod and, from 1.31, the
    /// top-level sync periods conversion.go takes from the mode's block.
    fn process(
        &self,
        periods: &SyncPeriods<'_>,
        oom: Option<(String, FieldError)>,
        out: &mut Vec<(String, FieldError)>,
    ) {
        let (checked, kpc, d) = (self.checked, self.kpc, Duration::plain);
        let own_gate = kpc.feature_gates.get("NFTablesProxyMode").copied();
        let ipvs_gate = kpc.feature_gates.get("KubeProxyIPVS").copied();
        if let Some(error) = mode_error(self.mode, self.minor, own_gate, ipvs_gate) {
            out.push(("mode".to_owned(), error));
        }
        let burst = format!("{ROOT}.ClientConnection.Burst");
        count_not_negative("clientConnection.burst", &burst, checked.client_connection_burst, out);
        out.extend(oom);
        let positive =
            |field: &str, path: &str, nanos: i64, out: &mut Vec<(String, FieldError)>| {
                if nanos <= 0 {
                    out.push((
                        field.to_owned(),
                        FieldError::invalid(
                            format!("{ROOT}.{path}"),
                            Duration::go_value(nanos),
                            "must be greater than 0",
                        ),
                    ));
                }
            };
        if holds(Behaviour::ValidateUdpIdleTimeout, self.minor) {
            let udp = d("udpIdleTimeout", &checked.udp_idle_timeout, 250_000_000).value();
            positive("udpIdleTimeout", "UDPIdleTimeout", udp, out);
        }
        let config_sync =
            d("configSyncPeriod", &checked.config_sync_period, 15 * 60 * SECOND).value();
        positive("configSyncPeriod", "ConfigSyncPeriod", config_sync, out);
        if self.linux {
            // conversion.go: the mode's block gives the top-level sync periods.
            let (sync, min) = match self.mode {
                "ipvs" => &periods.ipvs,
                "nftables" => &periods.nftables,
                _ => &periods.iptables,
            };
            sync_periods(ROOT, sync, min, out);
        }
    }

    /// BindAddress, HealthzBindAddress, MetricsBindAddress (defaulted: the port appended),
    /// ClusterCIDR before 1.31, PortRange, NodePortAddresses, ShowHiddenMetricsForVersion.
    fn addresses(&self, out: &mut Vec<(String, FieldError)>) {
        let (checked, kpc) = (self.checked, self.kpc);
        let bind = if kpc.bind_address.is_empty() { "0.0.0.0" } else { kpc.bind_address.as_str() };
        if parse_ip_sloppy(bind).is_none() {
            out.push((
                "bindAddress".to_owned(),
                FieldError::invalid(
                    format!("{ROOT}.BindAddress"),
                    GoValue::Str(bind.to_owned()),
                    "not a valid textual representation of an IP address",
                ),
            ));
        }
        let (healthz, metrics) = default_addresses(bind, checked);
        let healthz_path = format!("{ROOT}.HealthzBindAddress");
        out.extend(host_port_errors("healthzBindAddress", &healthz_path, &healthz));
        let metrics_path = format!("{ROOT}.MetricsBindAddress");
        out.extend(host_port_errors("metricsBindAddress", &metrics_path, &metrics));
        if !self.linux && !kpc.cluster_cidr.is_empty() {
            out.extend(cluster_cidr_error(&format!("{ROOT}.ClusterCIDR"), &kpc.cluster_cidr));
        }
        if holds(Behaviour::ValidatePortRange, self.minor)
            && !go::port_range_valid(&checked.port_range)
        {
            out.push((
                "portRange".to_owned(),
                FieldError::invalid(
                    format!("{ROOT}.PortRange"),
                    GoValue::Str(checked.port_range.clone()),
                    "must be a valid port range (e.g. 300-2000)",
                ),
            ));
        }
        out.extend(node_port_address_errors(&kpc.node_port_addresses, self.minor));
        out.extend(show_hidden_metrics_error(
            &format!("{ROOT}.ShowHiddenMetricsForVersion"),
            &checked.show_hidden_metrics_for_version,
            self.minor,
        ));
    }

    /// DetectLocalMode, the interface names (validateInterface) and, from 1.31, the cluster
    /// CIDRs (validateDetectLocalConfiguration, for the ClusterCIDR mode only).
    fn detect_local(&self, out: &mut Vec<(String, FieldError)>) {
        let kpc = self.kpc;
        if holds(Behaviour::ValidateDetectLocalMode, self.minor) {
            const MODES: &[&str] =
                &["ClusterCIDR", "NodeCIDR", "BridgeInterface", "InterfaceNamePrefix", ""];
            if !MODES.contains(&self.detect_mode) {
                out.push((
                    "detectLocalMode".to_owned(),
                    FieldError::not_supported(
                        format!("{ROOT}.DetectLocalMode"),
                        GoValue::Str(self.detect_mode.to_owned()),
                        MODES,
                    ),
                ));
            }
        }
        let detect =
            if self.linux { format!("{ROOT}.DetectLocalConfiguration") } else { ROOT.to_owned() };
        let empty = |field: &str, name: &str| {
            (
                field.to_owned(),
                FieldError::invalid(
                    format!("{detect}.{name}"),
                    GoValue::Str(String::new()),
                    "must not be empty",
                ),
            )
        };
        match self.detect_mode {
            "BridgeInterface" if kpc.bridge_interface.is_empty() => {
                out.push(empty("detectLocal.bridgeInterface", "InterfaceName"));
            }
            "InterfaceNamePrefix" if kpc.interface_name_prefix.is_empty() => {
                out.push(empty("detectLocal.interfaceNamePrefix", "InterfacePrefix"));
            }
            "ClusterCIDR" if self.linux && !kpc.cluster_cidr.is_empty() => {
                out.extend(cluster_cidrs_errors(
                    &format!("{detect}.ClusterCIDRs"),
                    &kpc.cluster_cidr,
                ));
            }
            _ => {}
        }
    }
}

/// `validateProxyModeLinux`: blank or one of the valid modes, else `field.Invalid` on
/// `KubeProxyConfiguration.Mode.ProxyMode` with the sorted valid modes (`sets.List`), joined
/// with `,` until 1.27 and `, ` from 1.28 (`strings.Join(sets.List(validModes), ", ")`, read in
/// v1.28.15; v1.27.16 has `validModes.List(), ","`). 1.24 and 1.25 list `userspace`; the
/// nftables mode where it is valid (its gate on, or GA); from 1.37 `ipvs` only while
/// kube-proxy's KubeProxyIPVS gate is on (GA, on by default).
fn mode_error(
    mode: &str,
    minor: u32,
    own_gate: Option<bool>,
    ipvs_gate: Option<bool>,
) -> Option<FieldError> {
    let mut valid = vec!["iptables"];
    if !holds(Behaviour::IpvsModeGated, minor) || ipvs_gate.unwrap_or(true) {
        valid.push("ipvs");
    }
    if holds(Behaviour::UserspaceProxyMode, minor) {
        valid.push("userspace");
    }
    if nftables_mode_valid(minor, own_gate) {
        valid.push("nftables");
    }
    if mode.is_empty() || valid.contains(&mode) {
        return None;
    }
    valid.sort_unstable();
    let separator = if holds(Behaviour::ModeListCommaSpace, minor) { ", " } else { "," };
    let valid = valid.join(separator);
    Some(FieldError::invalid(
        "KubeProxyConfiguration.Mode.ProxyMode",
        GoValue::Str(mode.to_owned()),
        format!(
            "must be {valid} or blank (blank means the best-available proxy [currently iptables])"
        ),
    ))
}

/// `masqueradeBit` of a mode block within `[0, 31]` (the value printed as the int32 it points
/// to).
fn masquerade_bit(field: &str, block: &str, bit: Option<i32>, out: &mut Vec<(String, FieldError)>) {
    if let Some(bit) = bit.filter(|b| !(0..=31).contains(b)) {
        out.push((
            field.to_owned(),
            FieldError::invalid(
                format!("{block}.MasqueradeBit"),
                GoValue::Int(i64::from(bit)),
                "must be within the range [0, 31]",
            ),
        ));
    }
}

/// `validateIPVSSchedulerMethod` (1.24 to 1.26): one of the scheduler names, printed with `%v`
/// of the `[]IPVSSchedulerMethod` (`[rr wrr ... nq ]`).
fn ipvs_scheduler_error(block: &str, scheduler: &str) -> Option<(String, FieldError)> {
    const METHODS: &[&str] =
        &["rr", "wrr", "lc", "wlc", "lblc", "lblcr", "sh", "dh", "sed", "nq", ""];
    if METHODS.contains(&scheduler) {
        return None;
    }
    Some((
        "ipvs.scheduler".to_owned(),
        FieldError::invalid(
            format!("{block}.Scheduler.Scheduler"),
            GoValue::Str(scheduler.to_owned()),
            format!(
                "must be in [{}], blank means the default algorithm method (currently rr)",
                METHODS.join(" ")
            ),
        ),
    ))
}

/// `healthzBindAddress` and `metricsBindAddress` after `SetDefaults_KubeProxyConfiguration`:
/// unset, `0.0.0.0:10256` and `127.0.0.1:10249` (`[::]` and `[::1]` for an IPv6
/// `bindAddress`, `getDefaultAddresses`); set, `proxyutil.AppendPortIfNeeded` adds the port to
/// a bare IP.
fn default_addresses(bind: &str, checked: &crate::model::KubeProxyChecked) -> (String, String) {
    let ipv6 = parse_ip_sloppy(bind).is_some_and(|ip| ip.is_ipv6());
    let (healthz_host, metrics_host) =
        if ipv6 { ("[::]", "[::1]") } else { ("0.0.0.0", "127.0.0.1") };
    let with_port = |address: &str, host: &str, port: u16| {
        if address.is_empty() {
            return format!("{host}:{port}");
        }
        if go::split_host_port(address).is_some() {
            return address.to_owned();
        }
        match parse_ip_sloppy(address) {
            Some(ip) if ip.is_ipv4() => format!("{address}:{port}"),
            Some(_) => format!("[{address}]:{port}"),
            None => address.to_owned(),
        }
    };
    (
        with_port(&checked.healthz_bind_address, healthz_host, 10256),
        with_port(&checked.metrics_bind_address, metrics_host, 10249),
    )
}

/// `validateHostPort`: `IP:port` with a valid IP and a port in 1 to 65535.
fn host_port_errors(field: &str, path: &str, input: &str) -> Vec<(String, FieldError)> {
    let Some((host, port)) = go::split_host_port(input) else {
        return vec![(
            field.to_owned(),
            FieldError::invalid(path, GoValue::Str(input.to_owned()), "must be IP:port"),
        )];
    };
    let mut out = Vec::new();
    if parse_ip_sloppy(host).is_none() {
        out.push((
            field.to_owned(),
            FieldError::invalid(path, GoValue::Str(host.to_owned()), "must be a valid IP"),
        ));
    }
    if !go::atoi(port).is_some_and(|p| (1..=65535).contains(&p)) {
        out.push((
            field.to_owned(),
            FieldError::invalid(path, GoValue::Str(port.to_owned()), "must be a valid port"),
        ));
    }
    out
}

/// `netutils.IsDualStackCIDRStrings`: `None` when an entry does not parse, else whether the
/// list holds both families.
fn dual_stack(cidrs: &[&str]) -> Option<bool> {
    let nets: Option<Vec<_>> = cidrs.iter().map(|c| parse_cidr_sloppy(c)).collect();
    let nets = nets?;
    let v4 = nets.iter().any(|(_, n)| n.addr().is_ipv4());
    let v6 = nets.iter().any(|(_, n)| n.addr().is_ipv6());
    Some(v4 && v6)
}

/// `clusterCIDR` as one string (1.24 to 1.30): at most two CIDRs, two of different families.
fn cluster_cidr_error(path: &str, text: &str) -> Option<(String, FieldError)> {
    let cidrs: Vec<&str> = text.split(',').collect();
    let detail = match cidrs.len() {
        n if n > 2 => {
            "only one CIDR allowed or a valid DualStack CIDR (e.g. 10.100.0.0/16,fde4:8dba:82e1::/48)"
        }
        2 if dual_stack(&cidrs) != Some(true) => {
            "must be a valid DualStack CIDR (e.g. 10.100.0.0/16,fde4:8dba:82e1::/48)"
        }
        1 if parse_cidr_sloppy(text).is_none() => {
            "must be a valid CIDR block (e.g. 10.100.0.0/16 or fde4:8dba:82e1::/48)"
        }
        _ => return None,
    };
    Some((
        "clusterCIDR".to_owned(),
        FieldError::invalid(path, GoValue::Str(text.to_owned()), detail),
    ))
}

/// `validateDualStackCIDRStrings` of `DetectLocal.ClusterCIDRs` (1.31 on: conversion.go splits
/// `clusterCIDR` on `,`).
fn cluster_cidrs_errors(path: &str, text: &str) -> Vec<(String, FieldError)> {
    let cidrs: Vec<&str> = text.split(',').collect();
    let items: Vec<String> = cidrs.iter().map(|c| (*c).to_owned()).collect();
    let pair = "must be a either a single CIDR or dual-stack pair of CIDRs (e.g. [10.100.0.0/16, fde4:8dba:82e1::/48]";
    let whole =
        || ("clusterCIDR".to_owned(), FieldError::invalid(path, GoValue::strings(&items), pair));
    if cidrs.len() > 2 {
        return vec![whole()];
    }
    let mut out = Vec::new();
    for (i, cidr) in cidrs.iter().enumerate() {
        if parse_cidr_sloppy(cidr).is_none() {
            out.push((
                "clusterCIDR".to_owned(),
                FieldError::invalid(
                    format!("{path}[{i}]"),
                    GoValue::Str((*cidr).to_owned()),
                    "must be a valid CIDR block (e.g. 10.100.0.0/16 or fde4:8dba:82e1::/48)",
                ),
            ));
        }
    }
    if cidrs.len() == 2 && dual_stack(&cidrs) == Some(false) {
        out.push(whole());
    }
    out
}

/// `metrics.ValidateShowHiddenMetricsVersion` against the binary's own version: only the
/// previous minor (`1.36` for kube-proxy 1.37) or nothing. Its text changed in 1.36, when
/// component-base moved the check into metrics/api/v1
/// (`ValidateShowHiddenMetricsVersionForKubeletBackwardCompatOnly`, which nests a
/// `field.Error`).
fn show_hidden_metrics_error(
    path: &str,
    version: &str,
    minor: u32,
) -> Option<(String, FieldError)> {
    let previous = format!("1.{}", minor.saturating_sub(1));
    if version.is_empty() || version == previous {
        return None;
    }
    let quoted = crate::field::go_quote(version);
    let detail = if holds(Behaviour::ShowHiddenMetricsFieldError, minor) {
        format!(
            "invalid showHiddenMetricsForVersion: showHiddenMetricsForVersion: Invalid value: {quoted}: must be omitted or have the value '{previous}'; only the previous minor version is allowed"
        )
    } else {
        format!(
            "--show-hidden-metrics-for-version must be omitted or have the value '{previous}'. Only the previous minor version is allowed"
        )
    };
    Some((
        "showHiddenMetricsForVersion".to_owned(),
        FieldError::invalid(path, GoValue::Str(version.to_owned()), detail),
    ))
}

/// `validateKubeProxyNodePortAddress`: each entry must parse as a CIDR (`ParseCIDRSloppy`;
/// per index since kubernetes/kubernetes#95036, 1.20). 1.31 to 1.36 (#123105) accept
/// `primary` as the only entry; anywhere else it is "can't use both 'primary' and CIDRs", and
/// the loop stops at the first `primary`. 1.37 accepts the keywords `primary`, `localhost` and
/// `all` anywhere, each once (`field.Duplicate` for a repeated keyword), and names them in
/// the error of an entry that is neither.
fn node_port_address_errors(addresses: &[String], minor: u32) -> Vec<(String, FieldError)> {
    let primary = holds(Behaviour::PrimaryKeyword, minor);
    let keywords = holds(Behaviour::NodePortAddressKeywords, minor);
    let mut errors = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, address) in addresses.iter().enumerate() {
        let field = format!("nodePortAddresses[{i}]");
        let path = format!("KubeProxyConfiguration.NodePortAddresses[{i}]");
        if keywords && matches!(address.as_str(), "primary" | "localhost" | "all") {
            if seen.contains(&address.as_str()) {
                errors.push((field, FieldError::duplicate(path, GoValue::Str(address.clone()))));
            }
            seen.push(address);
            continue;
        }
        if primary && !keywords && address == "primary" {
            if i != 0 || addresses.len() != 1 {
                errors.push((
                    field,
                    FieldError::invalid(
                        path,
                        GoValue::Str(address.clone()),
                        "can't use both 'primary' and CIDRs",
                    ),
                ));
            }
            break;
        }
        if parse_cidr_sloppy(address).is_none() {
            let detail = if keywords {
                "must be a valid CIDR or one of the keywords 'primary', 'localhost', 'all'"
            } else {
                "must be a valid CIDR"
            };
            errors.push((field, FieldError::invalid(path, GoValue::Str(address.clone()), detail)));
        }
    }
    errors
}

/// apimachinery util/errors `aggregate.Error`: one error as it is, several distinct ones as
/// `[a, b]` (duplicates dropped).
fn aggregate(errors: &[FieldError], json: bool) -> String {
    let mut seen: Vec<String> = Vec::new();
    for error in errors {
        let text = error.message(json);
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    if errors.len() == 1 || seen.len() == 1 {
        return seen.concat();
    }
    format!("[{}]", seen.join(", "))
}

#[cfg(test)]
mod tests;
