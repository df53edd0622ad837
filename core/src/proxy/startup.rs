//! What kube-proxy checks in its configuration before it starts, by release: the proxy mode
//! (`--proxy-mode nftables` before the mode existed or with its gate off) and
//! `nodePortAddresses` (`primary` before the keyword existed, entries that are not CIDRs), and
//! before that, kube-proxy's own `featureGates` where a gate is unknown at the release or locked
//! ([`OWN_GATES`] for the gates only kube-proxy acts on, the profile's table for the rest).
//! A refusal is the text kube-proxy's command returns (cmd/kube-proxy/app/server.go
//! `NewProxyCommand`: `failed validate: ` and the aggregate of the `field.Error`s of
//! pkg/proxy/apis/config/validation/validation.go `Validate`), never rules; `svclab check`
//! reports each field error on the KubeProxyConfiguration (`diagnostics`).

use super::release::{Behaviour, holds, past};
use super::{ProxyMode, RenderError};
use crate::diagnostic::{Diagnostic, ObjectRef};
use crate::field::{FieldError, GoValue};
use crate::model::{KubeProxyConfiguration, Located};
use crate::net::parse_cidr_sloppy;
use crate::profile::{Gate, Stage};

/// Whether the nftables mode is a valid `--proxy-mode` at a release, given kube-proxy's own
/// NFTablesProxyMode gate as its `featureGates` set it (`None`: the release default).
pub(crate) fn nftables_mode_valid(minor: u32, own_gate: Option<bool>) -> bool {
    holds(Behaviour::NftablesModeGa, minor)
        || (holds(Behaviour::NftablesModeGated, minor)
            && own_gate.unwrap_or_else(|| holds(Behaviour::NftablesModeOnByDefault, minor)))
}

/// kube-proxy's validation of the settings svclab models, in `Validate`'s order (the mode,
/// then `nodePortAddresses`), for a kube-proxy of `minor` running in `mode`.
pub(crate) fn validate(
    kpc: &KubeProxyConfiguration,
    mode: ProxyMode,
    minor: u32,
    release: &str,
) -> Result<(), RenderError> {
    if let Some((_, text)) = complete_error(kpc, minor) {
        return Err(RenderError::InvalidConfiguration {
            release: release.to_owned(),
            message: format!("failed complete: {text}"),
        });
    }
    let errors: Vec<FieldError> =
        refusals(kpc, mode.as_str(), minor).into_iter().map(|(_, error)| error).collect();
    if errors.is_empty() {
        return Ok(());
    }
    Err(RenderError::InvalidConfiguration {
        release: release.to_owned(),
        message: format!("failed validate: {}", aggregate(&errors)),
    })
}

/// The refusal of a scenario's KubeProxyConfiguration (in the mode it writes, blank meaning
/// iptables) as `svclab check` errors: one per field error, on the field as written, with
/// kube-proxy's text.
pub(crate) fn diagnostics(
    located: &Located<KubeProxyConfiguration>,
    minor: u32,
) -> Vec<Diagnostic> {
    if let Some((field, text)) = complete_error(&located.value, minor) {
        let source = located.positions.source_of(&field);
        return vec![
            Diagnostic::error(
                Some(ObjectRef::kind("KubeProxyConfiguration")),
                field,
                "FieldValueInvalid",
                format!("kube-proxy refuses to start: failed complete: {text}"),
            )
            .at(source),
        ];
    }
    let refused: Vec<Diagnostic> = refusals(&located.value, &located.value.mode, minor)
        .into_iter()
        .map(|(field, error)| {
            let source = located.positions.source_of(&field);
            Diagnostic::error(
                Some(ObjectRef::kind("KubeProxyConfiguration")),
                field,
                "FieldValueInvalid",
                format!("kube-proxy refuses to start: failed validate: {}", error.message(false)),
            )
            .at(source)
        })
        .collect();
    if refused.is_empty()
        && located.value.mode == ProxyMode::Nftables.as_str()
        && past(Behaviour::NftablesMarkForMasqueradeChain, minor)
    {
        // svclab's own word (never an apiserver or kube-proxy message): the rules it renders
        // for this kube-proxy are not the release's (release.rs
        // `NftablesMarkForMasqueradeChain`).
        let source = located.positions.source_of("mode");
        return vec![
            Diagnostic::warning(
                Some(ObjectRef::kind("KubeProxyConfiguration")),
                "mode",
                "SvclabAdvisory",
                super::nftables::MASQUERADE_NOTICE,
            )
            .at(source),
        ];
    }
    refused
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
    }, // KEP-5495: added in 1.37 as GA, on by default and not locked (kubernetes/kubernetes#139397,
    // CHANGELOG-1.37 v1.37.0-alpha.1; its review shows `Default: true, PreRelease:
    // featuregate.GA` without `LockToDefault`), the first step to turning the ipvs mode off and
    // removing it. svclab renders no ipvs rules, so only the name is modelled: what
    // `validateProxyModeLinux` says about `mode: ipvs` with the gate off was not read.
    Gate { name: "KubeProxyIPVS", stages: &[(37, Stage::GaOpen)], removed: None },
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

/// What `SetFromMap` says about one gate kube-proxy's `featureGates` sets: unknown at the
/// release, or locked and set to the other value. Gates of the apiserver's table get the
/// apiserver's answer (one featuregate registry, `pkg/features`, serves every component);
/// names neither table lists are not judged (svclab models the Service gates only, so an
/// unlisted name is not known to be wrong).
fn own_gate_error(name: &str, value: bool, minor: u32) -> Option<String> {
    if let Some(gate) = OWN_GATES.iter().find(|g| g.name == name) {
        return gate.refusal(value, minor);
    }
    if !crate::profile::lists_gate(name) {
        return None;
    }
    let mut profile =
        crate::profile::Profile::for_version(crate::profile::Version { minor, patch: None });
    profile.set_gate(name, value).err()
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

/// Every field error of `Validate` that svclab models, with the field as the document writes
/// it (`mode`, `nodePortAddresses[0]`).
fn refusals(kpc: &KubeProxyConfiguration, mode: &str, minor: u32) -> Vec<(String, FieldError)> {
    let own_gate = kpc.feature_gates.get("NFTablesProxyMode").copied();
    let mut errors = Vec::new();
    if let Some(error) = mode_error(mode, minor, own_gate) {
        errors.push(("mode".to_owned(), error));
    }
    errors.extend(node_port_address_errors(&kpc.node_port_addresses, minor));
    errors
}

/// `validateProxyModeLinux`: blank or one of the valid modes, else `field.Invalid` on
/// `KubeProxyConfiguration.Mode.ProxyMode` with the sorted valid modes (`sets.List`). 1.24
/// and 1.25 list `userspace` and join with `,`; from 1.26 the list is `iptables, ipvs`, with
/// `nftables` where the mode is valid (its gate on, or GA).
fn mode_error(mode: &str, minor: u32, own_gate: Option<bool>) -> Option<FieldError> {
    let userspace = holds(Behaviour::UserspaceProxyMode, minor);
    let mut valid = vec!["iptables", "ipvs"];
    if userspace {
        valid.push("userspace");
    }
    if nftables_mode_valid(minor, own_gate) {
        valid.push("nftables");
    }
    if mode.is_empty() || valid.contains(&mode) {
        return None;
    }
    valid.sort_unstable();
    let valid = valid.join(if userspace { "," } else { ", " });
    Some(FieldError::invalid(
        "KubeProxyConfiguration.Mode.ProxyMode",
        GoValue::Str(mode.to_owned()),
        format!(
            "must be {valid} or blank (blank means the best-available proxy [currently iptables])"
        ),
    ))
}

/// `validateKubeProxyNodePortAddress`: each entry must parse as a CIDR (`ParseCIDRSloppy`;
/// per index since kubernetes/kubernetes#95036, 1.20). From 1.31 (#123105) `primary` is
/// accepted as the only entry; anywhere else it is "can't use both 'primary' and CIDRs", and
/// the loop stops at the first `primary`.
fn node_port_address_errors(addresses: &[String], minor: u32) -> Vec<(String, FieldError)> {
    let keyword = holds(Behaviour::PrimaryKeyword, minor);
    let mut errors = Vec::new();
    for (i, address) in addresses.iter().enumerate() {
        let field = format!("nodePortAddresses[{i}]");
        let path = format!("KubeProxyConfiguration.NodePortAddresses[{i}]");
        if keyword && address == "primary" {
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
            errors.push((
                field,
                FieldError::invalid(path, GoValue::Str(address.clone()), "must be a valid CIDR"),
            ));
        }
    }
    errors
}

/// apimachinery util/errors `aggregate.Error`: one error as it is, several distinct ones as
/// `[a, b]` (duplicates dropped).
fn aggregate(errors: &[FieldError]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for error in errors {
        // String values render with `%q` in every release, so the JSON switch of 1.34 does
        // not change these texts.
        let text = error.message(false);
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    if errors.len() == 1 || seen.len() == 1 {
        return seen.concat();
    }
    format!("[{}]", seen.join(", "))
}
