//! What kube-proxy checks in its configuration before it starts, by release: the proxy mode
//! (`--proxy-mode nftables` before the mode existed or with its gate off) and
//! `nodePortAddresses` (`primary` before the keyword existed, entries that are not CIDRs), and
//! before that, kube-proxy's own NFTablesProxyMode gate where it is unknown or locked.
//! A refusal is the text kube-proxy's command returns (cmd/kube-proxy/app/server.go
//! `NewProxyCommand`: `failed validate: ` and the aggregate of the `field.Error`s of
//! pkg/proxy/apis/config/validation/validation.go `Validate`), never rules; `svclab check`
//! reports each field error on the KubeProxyConfiguration (`diagnostics`).

use super::release::{Behaviour, holds};
use super::{ProxyMode, RenderError};
use crate::diagnostic::{Diagnostic, ObjectRef};
use crate::field::{FieldError, GoValue};
use crate::model::{KubeProxyConfiguration, Located};
use crate::net::parse_cidr_sloppy;

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
    refusals(&located.value, &located.value.mode, minor)
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
        .collect()
}

/// What kube-proxy's `Options.Complete` refuses before validation runs (cmd/kube-proxy/app/
/// server.go: `utilfeature.DefaultMutableFeatureGate.SetFromMap(o.config.FeatureGates)`,
/// returned as `failed complete: %w`), for the one kube-proxy gate svclab models: with the
/// component-base featuregate `SetFromMap` texts (the same at v0.24.0, v0.31.0, v0.33.0 and
/// v0.36.0), NFTablesProxyMode is an unknown gate before 1.29 (it was added by
/// kubernetes/kubernetes#121046) and locked to true once GA (1.33, KEP-3866,
/// `LockToDefault`). The field as the document writes it, and the text.
fn complete_error(kpc: &KubeProxyConfiguration, minor: u32) -> Option<(String, String)> {
    const GATE: &str = "NFTablesProxyMode";
    let value = *kpc.feature_gates.get(GATE)?;
    let field = format!("featureGates.{GATE}");
    if !holds(Behaviour::NftablesModeGated, minor) && !holds(Behaviour::NftablesModeGa, minor) {
        return Some((field, format!("unrecognized feature gate: {GATE}")));
    }
    if holds(Behaviour::NftablesModeGa, minor) && !value {
        return Some((
            field,
            format!("cannot set feature gate {GATE} to false, feature is locked to true"),
        ));
    }
    None
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
