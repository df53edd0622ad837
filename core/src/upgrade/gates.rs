//! `featureGates`: the gates today's ClusterProfile and KubeProxyConfiguration set that the
//! target refuses (the component does not start, and says so in its own words), gates whose
//! value changes (a new default, or the target profile), and settings that become the locked
//! default (the step before the gate is removed and the setting refused).
//!
//! How each component prints the refusal, by release (read in the module cache at every
//! release svclab models):
//!
//! - kube-apiserver 1.24 to 1.30 parses `--feature-gates` as a flag (component-base
//!   `featureGate.Set`, `SetFromMap` returning its first error), so pflag wraps the error
//!   (`invalid argument "<value>" for "--feature-gates" flag: <error>`) and component-base
//!   `cli.Run` prints it as `Error: <text>` before logging starts.
//! - From 1.31 the flag only collects the value (apiserver `pkg/util/version/registry.go`,
//!   component-base `compatibility/registry.go` from 1.33); `ComponentGlobalsRegistry.Set` in
//!   `PersistentPreRunE` applies it, after logging started, so `cli.Run` logs
//!   `"command failed" err="<error>"` through klog. `unsafeSetFromMap` collects locked gates and
//!   stops at the first unknown one; several errors print as an aggregate `[a, b]`.
//! - kube-proxy's `Options.Complete` applies its configuration's `featureGates` and returns
//!   `failed complete: <error>`, logged the same way (`proxy/startup.rs`).
//!
//! Go ranges over a map, so which gate upstream names first is random; svclab takes name order.

use super::cause::{Cause, Point, proxy_gate, stage_words};
use super::report::{Area, Finding, Impact};
use super::sides::{Side, Sides};
use crate::profile::{Gate, Stage};
use crate::proxy::own_gates;

/// The first release whose kube-apiserver applies `--feature-gates` after logging starts.
const GATES_AFTER_LOGGING: u32 = 31;

/// The featureGates findings.
pub(crate) fn findings(sides: &Sides, out: &mut Vec<Finding>) {
    let (from, to) = (&sides.from, &sides.to);
    apiserver_refusals(from, to, out);
    proxy_refusals(from, to, out);
    for gate in crate::profile::gates() {
        let (x, y) = (from.profile.gate_named(gate.name), to.profile.gate_named(gate.name));
        value_change(gate, "feature gate", from, to, (x, y), &from.gates, &to.gates, out);
    }
    let proxy_set =
        |side: &Side| side.kube_proxy.as_ref().map(|k| k.feature_gates.clone()).unwrap_or_default();
    let (from_set, to_set) = (proxy_set(from), proxy_set(to));
    for gate in own_gates() {
        let (x, y) = (proxy_gate(Point::of(from), gate.name), proxy_gate(Point::of(to), gate.name));
        value_change(gate, "kube-proxy feature gate", from, to, (x, y), &from_set, &to_set, out);
    }
}

/// The cause of a gate at both releases.
fn gate_cause(kind: &str, gate: &Gate, from: &Side, to: &Side) -> Cause {
    Cause {
        id: format!("{kind}:{}", gate.name),
        upstream: format!(
            "feature gate {}: {} in {}, {} in {} (pkg/features/kube_features.go; component-base \
             featuregate SetFromMap)",
            gate.name,
            stage_words(gate, from.version.minor),
            from.version,
            stage_words(gate, to.version.minor),
            to.version
        ),
    }
}

/// What `SetFromMap` refuses of `gates` at `minor`, in name order: kube-apiserver's gates of the
/// profile table, with the causes. Names the table does not list are not judged (svclab models
/// the Service gates; an unlisted name is not known to be wrong).
fn refusals<'g>(
    gates: impl Iterator<Item = (&'g String, &'g bool)>,
    table: &dyn Fn(&str) -> Option<&'static Gate>,
    minor: u32,
) -> Vec<(&'static Gate, String)> {
    gates
        .filter_map(|(name, value)| {
            let gate = table(name)?;
            gate.refusal(*value, minor).map(|text| (gate, text))
        })
        .collect()
}

fn apiserver_gate(name: &str) -> Option<&'static Gate> {
    crate::profile::gates().iter().find(|g| g.name == name)
}

fn proxy_table_gate(name: &str) -> Option<&'static Gate> {
    own_gates().iter().chain(crate::profile::gates()).find(|g| g.name == name)
}

/// kube-apiserver exits on a gate its release refuses that today's accepts.
fn apiserver_refusals(from: &Side, to: &Side, out: &mut Vec<Finding>) {
    let today = refusals(from.gates.iter(), &apiserver_gate, from.version.minor);
    let refused: Vec<(&Gate, String)> =
        refusals(to.gates.iter(), &apiserver_gate, to.version.minor)
            .into_iter()
            .filter(|(gate, _)| !today.iter().any(|(g, _)| g.name == gate.name))
            .collect();
    if refused.is_empty() {
        return;
    }
    let minor = to.version.minor;
    let printed = if minor < GATES_AFTER_LOGGING {
        // `SetFromMap` returns its first error; pflag names the whole flag value.
        let value: Vec<String> = to.gates.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!(
            "Error: invalid argument \"{}\" for \"--feature-gates\" flag: {}",
            value.join(","),
            refused[0].1
        )
    } else {
        format!("\"command failed\" err=\"{}\"", aggregate_from_map(&refused))
    };
    let causes: Vec<Cause> =
        refused.iter().map(|(gate, _)| gate_cause("gate", gate, from, to)).collect();
    let message = format!("kube-apiserver {} does not start: {printed}", to.version);
    out.push(
        Finding::new(Area::FeatureGates, Impact::Breaks, message)
            .about("ClusterProfile")
            .caused_by(&causes),
    );
}

/// `unsafeSetFromMap` from 1.31: locked gates collected, the first unknown one ends the walk;
/// `NewAggregate` prints one error as it is and several as `[a, b]`.
fn aggregate_from_map(refused: &[(&Gate, String)]) -> String {
    let mut errors: Vec<&str> = Vec::new();
    for (_, text) in refused {
        errors.push(text);
        if text.starts_with("unrecognized feature gate") {
            break;
        }
    }
    if errors.len() == 1 { errors[0].to_owned() } else { format!("[{}]", errors.join(", ")) }
}

/// kube-proxy exits on a gate of its configuration that its release refuses and today's
/// accepts (`failed complete: ...`, as `proxy/startup.rs` words it).
fn proxy_refusals(from: &Side, to: &Side, out: &mut Vec<Finding>) {
    let gates =
        |side: &Side| side.kube_proxy.as_ref().map(|k| k.feature_gates.clone()).unwrap_or_default();
    let (from_gates, to_gates) = (gates(from), gates(to));
    let today = refusals(from_gates.iter(), &proxy_table_gate, from.version.minor);
    let refused: Vec<(&Gate, String)> =
        refusals(to_gates.iter(), &proxy_table_gate, to.version.minor)
            .into_iter()
            .filter(|(gate, _)| !today.iter().any(|(g, _)| g.name == gate.name))
            .collect();
    let Some((_, first)) = refused.first() else { return };
    let causes: Vec<Cause> =
        refused.iter().map(|(gate, _)| gate_cause("proxyGate", gate, from, to)).collect();
    let message = format!(
        "kube-proxy {} does not start: \"command failed\" err=\"failed complete: {first}\"",
        to.version
    );
    out.push(
        Finding::new(Area::FeatureGates, Impact::Breaks, message)
            .about("KubeProxyConfiguration")
            .caused_by(&causes),
    );
}

/// A gate whose value differs between the sides (`values`), or that the target profile sets to
/// what is now its locked default.
#[allow(clippy::too_many_arguments, reason = "one gate, seen from both sides")]
fn value_change(
    gate: &Gate,
    what: &str,
    from: &Side,
    to: &Side,
    values: (bool, bool),
    from_set: &std::collections::BTreeMap<String, bool>,
    to_set: &std::collections::BTreeMap<String, bool>,
    out: &mut Vec<Finding>,
) {
    let kind = if what == "feature gate" { "gate" } else { "proxyGate" };
    let (x, y) = values;
    let on = |v: bool| if v { "on" } else { "off" };
    let set_at = |set: &std::collections::BTreeMap<String, bool>, side: &Side| {
        // A setting the release refuses leaves the default.
        set.get(gate.name).copied().filter(|v| gate.refusal(*v, side.version.minor).is_none())
    };
    let (set_from, set_to) = (set_at(from_set, from), set_at(to_set, to));
    if x != y {
        let why = match (set_from, set_to) {
            (None, None) => format!(
                "its default changes ({} in {}, {} in {})",
                stage_words(gate, from.version.minor),
                from.version,
                stage_words(gate, to.version.minor),
                to.version
            ),
            (_, Some(_)) => "the target profile sets it".to_owned(),
            (Some(_), None) => format!(
                "today's setting no longer applies ({} in {})",
                stage_words(gate, to.version.minor),
                to.version
            ),
        };
        let message =
            format!("{what} {} is {} in {} ({} today): {why}", gate.name, on(y), to.version, on(x));
        out.push(
            Finding::new(Area::FeatureGates, Impact::Changes, message)
                .caused_by(&[gate_cause(kind, gate, from, to)]),
        );
        return;
    }
    // Set explicitly to what is now locked: accepted, but the gate goes next.
    if let Some(value) = set_to
        && matches!(gate.stage(to.version.minor), Some(Stage::Ga | Stage::DeprecatedLocked))
        && !matches!(gate.stage(from.version.minor), Some(Stage::Ga | Stage::DeprecatedLocked))
    {
        let removal = gate
            .removed
            .map(|r| {
                format!(
                    "; kube-{} 1.{r} refuses the setting",
                    if kind == "gate" { "apiserver" } else { "proxy" }
                )
            })
            .unwrap_or_default();
        let message = format!(
            "{what} {}={value} is accepted in {} only because it is the locked default{removal}: remove it",
            gate.name, to.version
        );
        out.push(
            Finding::new(Area::FeatureGates, Impact::Note, message)
                .about(if kind == "gate" { "ClusterProfile" } else { "KubeProxyConfiguration" })
                .caused_by(&[gate_cause(kind, gate, from, to)]),
        );
    }
}
