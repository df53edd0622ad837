//! `kubeProxy`: the rules kube-proxy programs today and at the target, for every IP family of
//! the cluster, on the node kube-proxy runs on (`hostnameOverride`, else the first Node) and,
//! when the scenario has more Nodes, on one more (so endpoints local to one node are remote to
//! the other). Per Service port, what changes in the rules, in words; per Service, probe
//! packets traced through both rulesets, each changed outcome a finding; a configuration the
//! target kube-proxy refuses (the nftables mode before it exists, a keyword its release does not
//! know) breaks. With `--diff`, both rulesets and their diff.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::cause::{Cause, Crossed, Point, proxy_gate};
use super::diff::{diff_lines, unified};
use super::probes::{self, Outcome};
use super::report::{Area, Finding, Impact, RulesComparison};
use super::rules::{self, PortRules};
use super::sides::Sides;
use crate::model::well_known::LABEL_SERVICE_NAME;
use crate::model::{KubeProxyConfiguration, Located};
use crate::net::IpFamily;
use crate::proxy::{
    Behaviour, ProxyConfig, ProxyMode, ROW_GROUPS, RenderError, RenderOptions, STARTUP_ONLY,
};
use crate::trace::{
    NftTable, Ruleset, TraceRequest, parse_iptables, parse_nft, trace_nft_table, trace_ruleset,
};
use crate::world::{World, render_with_stats};

/// One side's ruleset on one node and family, ready to compare and trace through.
struct Side {
    config: ProxyConfig,
    mode: ProxyMode,
    /// kube-proxy's payload, as `svclab render` prints it.
    text: String,
    rules: u64,
    parsed: Parsed,
}

/// The ruleset as the tracer reads it (iptables: with kubelet's chains where kube-proxy of the
/// release does not write them, as `svclab trace` does).
enum Parsed {
    Iptables(Ruleset),
    Nftables(NftTable),
}

impl Side {
    fn render(
        world: &World,
        family: IpFamily,
        node: Option<&str>,
        mode: ProxyMode,
    ) -> Result<Side, RenderError> {
        let config = ProxyConfig::from_world(world, Some(family), node, mode)?;
        let options = RenderOptions {
            mode,
            family: Some(family),
            node: node.map(str::to_owned),
            standalone: false,
        };
        let rendered = render_with_stats(world, &options)?;
        let parsed = match mode {
            ProxyMode::Nftables => Parsed::Nftables(parse_nft(&rendered.text)),
            ProxyMode::Iptables if !config.kube_firewall_rule => {
                let standalone =
                    render_with_stats(world, &RenderOptions { standalone: true, ..options })?;
                Parsed::Iptables(parse_iptables(&standalone.text))
            }
            ProxyMode::Iptables => Parsed::Iptables(parse_iptables(&rendered.text)),
        };
        let rules = rendered.stats.rules.values().sum();
        Ok(Side { config, mode, text: rendered.text, rules, parsed })
    }

    fn trace(&self, request: &TraceRequest) -> Outcome {
        let report = match &self.parsed {
            Parsed::Iptables(ruleset) => trace_ruleset(ruleset, &self.config, request),
            Parsed::Nftables(table) => trace_nft_table(table, &self.config, request),
        };
        probes::outcome(&report)
    }
}

/// The kubeProxy findings; with `diff`, the rulesets compared.
pub(crate) fn findings(
    sides: &Sides,
    today: &World,
    migrated: &World,
    diff: bool,
    out: &mut Vec<Finding>,
) -> Vec<RulesComparison> {
    let crossed = Crossed::between(sides);
    let causes = crossed.for_rules();
    let mut comparisons = Vec::new();
    let mut refusals: BTreeSet<String> = BTreeSet::new();
    let nodes = nodes(today, sides.from.mode);
    for family in families(sides) {
        for node in &nodes {
            let node = node.as_deref();
            let before = Side::render(today, family, node, sides.from.mode);
            let after = Side::render(migrated, family, node, sides.to.mode);
            let place = place(node, family, &nodes);
            match (before, after) {
                (Ok(before), Ok(after)) => {
                    compare(
                        sides,
                        today,
                        migrated,
                        &before,
                        &after,
                        (family, node),
                        &place,
                        &crossed,
                        out,
                    );
                    if diff {
                        comparisons.push(comparison(
                            family,
                            node,
                            &before.text,
                            &after.text,
                            sides,
                        ));
                    }
                }
                (Ok(before), Err(RenderError::InvalidConfiguration { release, message })) => {
                    // A gate kube-proxy refuses is the featureGates area's finding.
                    if !message.starts_with("failed complete:") && refusals.insert(message.clone())
                    {
                        out.push(
                            Finding::new(
                                Area::KubeProxy,
                                Impact::Breaks,
                                format!(
                                    "kube-proxy {release} does not start: \"command failed\" err=\"{message}\"; the rules it programmed before stay as they are and no change reaches them"
                                ),
                            )
                            .about("KubeProxyConfiguration")
                            .caused_by(&causes),
                        );
                    }
                    if diff {
                        comparisons.push(comparison(family, node, &before.text, "", sides));
                    }
                }
                (Err(RenderError::InvalidConfiguration { message, .. }), Ok(after)) => {
                    if refusals.insert(message.clone()) {
                        out.push(
                            Finding::new(
                                Area::KubeProxy,
                                Impact::Note,
                                format!(
                                    "kube-proxy {} starts, which today it does not: {message}",
                                    sides.to.version
                                ),
                            )
                            .about("KubeProxyConfiguration")
                            .caused_by(&causes),
                        );
                    }
                    if diff {
                        comparisons.push(comparison(family, node, "", &after.text, sides));
                    }
                }
                (Err(a), Err(b)) if a == b => {}
                // The same refusal at both releases (its text names each release's own).
                (
                    Err(RenderError::InvalidConfiguration { message: a, .. }),
                    Err(RenderError::InvalidConfiguration { message: b, .. }),
                ) if a == b => {}
                (Err(error), _) | (_, Err(error)) => {
                    if refusals.insert(error.to_string()) {
                        out.push(
                            Finding::new(
                                Area::KubeProxy,
                                Impact::Note,
                                format!("svclab compares no rules {place}: {error}"),
                            )
                            .caused_by(&causes),
                        );
                    }
                }
            }
        }
    }
    comparisons
}

/// The families of both sides' ranges, primary first.
fn families(sides: &Sides) -> Vec<IpFamily> {
    let mut families: Vec<IpFamily> = Vec::new();
    for net in sides
        .from
        .profile
        .service_cluster_ip_ranges
        .iter()
        .chain(&sides.to.profile.service_cluster_ip_ranges)
    {
        let family = IpFamily::of_net(net);
        if !families.contains(&family) {
            families.push(family);
        }
    }
    if families.is_empty() {
        families.push(IpFamily::V4);
    }
    families
}

/// The nodes to render on: kube-proxy's own (`None`), and with two Nodes or more the first
/// other one.
fn nodes(today: &World, mode: ProxyMode) -> Vec<Option<String>> {
    let mut nodes = vec![None];
    if today.nodes.len() < 2 {
        return nodes;
    }
    let own = ProxyConfig::from_world(today, None, None, mode)
        .map(|c| c.node_name)
        .unwrap_or_else(|_| today.nodes[0].value.metadata.name.clone());
    if let Some(other) = today.nodes.iter().map(|n| &n.value.metadata.name).find(|n| **n != own) {
        nodes.push(Some(other.clone()));
    }
    nodes
}

/// Where the rules are, in words: `on the node` / `on node-b (IPv6)`.
fn place(node: Option<&str>, family: IpFamily, nodes: &[Option<String>]) -> String {
    let node = match node {
        Some(name) => format!("on node {name}"),
        None if nodes.len() > 1 => "on kube-proxy's own node".to_owned(),
        None => "on the node".to_owned(),
    };
    format!("{node} ({})", family.as_str())
}

/// The findings of one node and family: the totals, each Service port's rules, the fixed
/// chains, and every probe whose outcome changes.
#[allow(clippy::too_many_arguments, reason = "one comparison of two sides on one node")]
fn compare(
    sides: &Sides,
    today: &World,
    migrated: &World,
    before: &Side,
    after: &Side,
    where_: (IpFamily, Option<&str>),
    place: &str,
    crossed: &Crossed,
    out: &mut Vec<Finding>,
) {
    if before.text == after.text && before.mode == after.mode {
        return;
    }
    let known = probes::port_names(today);
    let a = rules::layout(&before.text, before.mode, &known);
    let b = rules::layout(&after.text, after.mode, &known);
    let switch = before.mode != after.mode;
    let ports: BTreeSet<&String> = a.ports.keys().chain(b.ports.keys()).collect();
    let empty = PortRules::default();
    let mut changed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for port in ports {
        let words = rules::describe(
            a.ports.get(port).unwrap_or(&empty),
            b.ports.get(port).unwrap_or(&empty),
            switch,
        );
        if !words.is_empty() {
            changed.insert(port.clone(), words);
        }
    }
    let fixed = rules::describe(&a.fixed, &b.fixed, switch);
    let attribution =
        Attribution::find(sides, migrated, &a, &changed, !fixed.is_empty(), where_, crossed);
    let mut all: Vec<Cause> = Vec::new();
    for cause in attribution.ports.values().flatten().chain(&attribution.fixed) {
        if !all.contains(cause) {
            all.push(cause.clone());
        }
    }
    out.push(
        Finding::new(
            Area::KubeProxy,
            Impact::Note,
            format!(
                "kube-proxy's rules {place}: {} {} rules today, {} {} rules at {}",
                before.mode.as_str(),
                before.rules,
                after.mode.as_str(),
                after.rules,
                sides.to.version
            ),
        )
        .caused_by(&all),
    );
    for (port, words) in &changed {
        let service = port.split(':').next().unwrap_or(port);
        let mut finding = Finding::new(
            Area::KubeProxy,
            Impact::Changes,
            format!("its rules {place}: {}", words.join("; ")),
        )
        .about(format!("Service {service}"))
        .caused_by(attribution.of(port));
        finding.service_port = Some(port.clone());
        out.push(finding);
    }
    if !fixed.is_empty() {
        out.push(
            Finding::new(
                Area::KubeProxy,
                Impact::Changes,
                format!(
                    "kube-proxy's own chains {place} (of no Service port): {}",
                    fixed.join("; ")
                ),
            )
            .caused_by(&attribution.fixed),
        );
    }
    for probe in probes::probes(today, &before.config) {
        let (Some(was), Some(is)) = (before.trace(&probe.request), after.trace(&probe.request))
        else {
            continue;
        };
        if was == is {
            continue;
        }
        let severity = if probes::reaches(&was) && !probes::reaches(&is) {
            Impact::Breaks
        } else {
            Impact::Changes
        };
        let r = &probe.request;
        let message = format!(
            "probe {} {} → {}:{} ({}, {place}): today: {}; at {}: {}",
            r.protocol,
            r.src,
            r.dst,
            r.dport,
            probe.what,
            probes::outcome_words(&was),
            sides.to.version,
            probes::outcome_words(&is)
        );
        let mut causes: Vec<Cause> = attribution.of(&probe.port_name).to_vec();
        causes.extend(attribution.fixed.iter().cloned());
        if causes.is_empty() {
            causes = all.clone();
        }
        let mut finding = Finding::new(Area::KubeProxy, severity, message)
            .about(format!("Service {}", probe.service))
            .caused_by(&causes);
        finding.service_port = Some(probe.port_name);
        out.push(finding);
    }
}

/// The causes of each changed Service port's rules (and of the fixed chains'), found by
/// stepping from today to the target one change at a time: first today's release with the
/// target's profile, ServiceCIDRs and KubeProxyConfiguration, then each release in between,
/// then the target. A port cites what changed at the steps where its rules change. A mode
/// switch replaces every chain, so then the switch is the cause.
struct Attribution {
    ports: BTreeMap<String, Vec<Cause>>,
    fixed: Vec<Cause>,
}

impl Attribution {
    fn of(&self, port: &str) -> &[Cause] {
        self.ports.get(port).map_or(&[], Vec::as_slice)
    }

    fn find(
        sides: &Sides,
        migrated: &World,
        today: &rules::Layout,
        changed: &BTreeMap<String, Vec<String>>,
        fixed_changed: bool,
        (family, node): (IpFamily, Option<&str>),
        crossed: &Crossed,
    ) -> Attribution {
        let mut attribution = Attribution { ports: BTreeMap::new(), fixed: Vec::new() };
        if sides.from.mode != sides.to.mode {
            let mode: Vec<Cause> =
                crossed.profile.iter().filter(|c| c.id == "mode").cloned().collect();
            for port in changed.keys() {
                attribution.ports.insert(port.clone(), mode.clone());
            }
            if fixed_changed {
                attribution.fixed = mode;
            }
            return attribution;
        }
        let services: BTreeSet<&str> =
            changed.keys().map(|p| p.split(':').next().unwrap_or(p)).collect();
        let subset = subset_world(migrated, &services);
        let known = probes::port_names(&subset);
        let mode = sides.to.mode;
        let profile_cause: Vec<Cause> =
            crossed.profile.iter().filter(|c| c.id != "mode").cloned().collect();
        // (layout, the causes of reaching it from the previous one).
        let options = RenderOptions {
            mode,
            family: Some(family),
            node: node.map(str::to_owned),
            standalone: false,
        };
        let render = |world: &World| {
            render_with_stats(world, &options).ok().map(|r| rules::layout(&r.text, mode, &known))
        };
        let mut steps: Vec<Step> = Vec::new();
        let mut previous: Option<(crate::profile::Profile, crate::profile::Version)> = None;
        // What changed at releases that render nothing (a mode not valid yet) carries on.
        let mut pending = Step::default();
        for version in versions(sides) {
            let profile = profile_at(sides, version);
            let mut world = subset.clone();
            world.profile = profile.clone();
            let layout = render(&world);
            // Only a step whose rules differ from the last ones needs its causes told apart.
            let last_layout = steps.last().map_or(today, |s| &s.layout);
            let try_back = layout.as_ref().is_some_and(|l| l != last_layout);
            // The rules of this step with one thing set back as it was before the step (`None`
            // where kube-proxy refuses that), when it is worth rendering.
            let set_back = |reverted: &mut World| if try_back { render(reverted) } else { None };
            match &previous {
                None => pending.add_fixed(profile_cause.iter().cloned()),
                Some((p, v)) => {
                    let kube_proxy = sides.to.kube_proxy.as_ref();
                    let from = Point { version: *v, profile: p, kube_proxy };
                    let to = Point { version, profile: &profile, kube_proxy };
                    let step = Crossed::releases(from, to);
                    pending.add_fixed(step.allocation.into_iter());
                    // A row that only decides whether kube-proxy starts changes no rules of a
                    // kube-proxy that starts on both sides, and a row that acts only on a
                    // setting the configuration does not write changes none either. A row
                    // that can is a cause where rendering this step with it set back
                    // (proxy/release.rs `Rows`) takes the rules back; one that cannot be
                    // tried (the step renders nothing) is taken to be one.
                    let crossed: Vec<Behaviour> = step.proxy.iter().map(|(b, _)| *b).collect();
                    let rows = step.proxy.into_iter().filter(|(b, c)| {
                        relevant(*b, &c.upstream, mode)
                            && !STARTUP_ONLY.contains(b)
                            && !inert(*b, kube_proxy)
                    });
                    for (behaviour, cause) in rows {
                        if layout.is_none() {
                            pending.add_fixed(std::iter::once(cause));
                            continue;
                        }
                        let mut reverted = world.clone();
                        reverted.rows_set_back = with_its_group(behaviour, &crossed);
                        pending.set_back.push((cause, set_back(&mut reverted)));
                    }
                    // Likewise a gate, set back in kube-proxy's own featureGates (which win
                    // over every default); where kube-proxy refuses the setting, it is taken
                    // to be one.
                    for gate in step.proxy_gates {
                        let name = gate.id.trim_start_matches("proxyGate:").to_owned();
                        let back = proxy_gate(from, &name);
                        let mut reverted = world.clone();
                        let mut kpc = reverted.kube_proxy.take().unwrap_or_else(|| Located {
                            value: KubeProxyConfiguration::default(),
                            api_version: String::new(),
                            positions: Default::default(),
                        });
                        kpc.value.feature_gates.insert(name, back);
                        reverted.kube_proxy = Some(kpc);
                        pending.set_back.push((gate, set_back(&mut reverted)));
                    }
                }
            }
            if let Some(layout) = layout {
                let mut step = std::mem::take(&mut pending);
                step.layout = layout;
                steps.push(step);
            }
            previous = Some((profile, version));
        }
        let empty = PortRules::default();
        let mut last = today;
        for step in &steps {
            for port in changed.keys() {
                let (x, y) = (
                    last.ports.get(port).unwrap_or(&empty),
                    step.layout.ports.get(port).unwrap_or(&empty),
                );
                if x != y {
                    let entry = attribution.ports.entry(port.clone()).or_default();
                    step.causes(entry, |l| l.ports.get(port).unwrap_or(&empty) != y);
                }
            }
            if fixed_changed && last.fixed != step.layout.fixed {
                step.causes(&mut attribution.fixed, |l| l.fixed != step.layout.fixed);
            }
            last = &step.layout;
        }
        // What stepping could not pin (a release that renders nothing, a change that shows
        // only in the whole cluster) falls back on everything that crossed.
        let fallback = crossed.for_rules();
        for port in changed.keys() {
            let entry = attribution.ports.entry(port.clone()).or_default();
            if entry.is_empty() {
                *entry = fallback.clone();
            }
        }
        if fixed_changed && attribution.fixed.is_empty() {
            attribution.fixed = fallback;
        }
        attribution
    }
}

/// One step of [`Attribution::find`]: the rules after it, the causes that are causes wherever the
/// rules changed (allocator behaviours, the profile, release rows that could not be tried), and
/// each release row and gate crossed with the rules rendered with it set back (`None`:
/// kube-proxy refuses that, or the step changed no rules and nothing was rendered).
#[derive(Default)]
struct Step {
    layout: rules::Layout,
    fixed: Vec<Cause>,
    set_back: Vec<(Cause, Option<rules::Layout>)>,
}

impl Step {
    fn add_fixed(&mut self, causes: impl Iterator<Item = Cause>) {
        for cause in causes {
            if !self.fixed.contains(&cause) {
                self.fixed.push(cause);
            }
        }
    }

    /// Adds this step's causes of a change to `into`; `reverted_differs` says whether a
    /// rendering with a row or gate set back differs from this step's for the part in question.
    fn causes(&self, into: &mut Vec<Cause>, reverted_differs: impl Fn(&rules::Layout) -> bool) {
        let set_back = self
            .set_back
            .iter()
            .filter(|(_, reverted)| reverted.as_ref().is_none_or(&reverted_differs));
        for cause in self.fixed.iter().chain(set_back.map(|(c, _)| c)) {
            if !into.contains(cause) {
                into.push(cause.clone());
            }
        }
    }
}

/// A row to set back, with the rows of its group ([`ROW_GROUPS`]) the same step crosses.
fn with_its_group(behaviour: Behaviour, crossed: &[Behaviour]) -> Vec<Behaviour> {
    let group = ROW_GROUPS.iter().find(|g| g.contains(&behaviour)).copied().unwrap_or_default();
    let mut rows = vec![behaviour];
    rows.extend(group.iter().filter(|b| **b != behaviour && crossed.contains(b)));
    rows
}

/// Whether a kube-proxy row acts on nothing the configuration writes: the `localhost` and `all`
/// keywords of `nodePortAddresses` (cmd/kube-proxy/app/server.go
/// `expandNodePortAddressKeywords`, proxy/config.rs `node_port_keywords`) only where one is
/// written.
fn inert(behaviour: Behaviour, kube_proxy: Option<&KubeProxyConfiguration>) -> bool {
    match behaviour {
        Behaviour::NodePortAddressKeywords => !kube_proxy.is_some_and(|k| {
            k.node_port_addresses.iter().any(|a| matches!(a.trim(), "localhost" | "all"))
        }),
        _ => false,
    }
}

/// Whether a kube-proxy row can touch the rules of a mode: `Nftables*` rows only the nftables
/// mode's, rows that follow `pkg/proxy/iptables` alone only the iptables mode's, the rest
/// (topology, endpoints, configuration) both.
fn relevant(behaviour: Behaviour, upstream: &str, mode: ProxyMode) -> bool {
    let name = format!("{behaviour:?}");
    let nftables_only = name.starts_with("Nftables");
    let iptables_only =
        !nftables_only && upstream.contains("pkg/proxy/iptables") && !upstream.contains("nftables");
    match mode {
        ProxyMode::Nftables => !iptables_only,
        ProxyMode::Iptables => !nftables_only,
    }
}

/// Today's release, each release in between, the target's, in the upgrade's direction.
fn versions(sides: &Sides) -> Vec<crate::profile::Version> {
    let (from, to) = (sides.from.version, sides.to.version);
    let mut out = vec![from];
    let between: Vec<u32> = if from.minor < to.minor {
        (from.minor + 1..to.minor).collect()
    } else {
        (to.minor + 1..from.minor).rev().collect()
    };
    out.extend(between.into_iter().map(|minor| crate::profile::Version { minor, patch: None }));
    if to != from {
        out.push(to);
    }
    out
}

/// The target's profile at another release.
fn profile_at(sides: &Sides, version: crate::profile::Version) -> crate::profile::Profile {
    if version == sides.to.version {
        return sides.to.profile.clone();
    }
    let given = sides.to.objects.iter().rev().find_map(|o| match o {
        crate::manifest::Object::ClusterProfile(p) => Some((**p).clone()),
        _ => None,
    });
    let Some(mut located) = given else { return crate::profile::Profile::for_version(version) };
    located.value.kubernetes_version = Some(version.to_string());
    crate::profile::Profile::from_scenario(Some(&located), &mut Vec::new())
}

/// The cluster with only some Services (and their EndpointSlices).
fn subset_world(world: &World, services: &BTreeSet<&str>) -> World {
    let mut subset = World::new(world.profile.clone(), world.allocators.clone());
    for (key, stored) in &world.services {
        if services.contains(key.to_string().as_str()) {
            subset.services.insert(key.clone(), stored.clone());
        }
    }
    for slice in &world.endpoint_slices {
        let meta = &slice.value.metadata;
        let owner = meta.labels.get(LABEL_SERVICE_NAME).map(|n| format!("{}/{n}", meta.namespace));
        if owner.is_some_and(|o| services.contains(o.as_str())) {
            subset.store_endpoint_slice(None, Arc::clone(slice));
        }
    }
    subset.endpoints = world.endpoints.clone();
    subset.nodes = world.nodes.clone();
    subset.kube_proxy = world.kube_proxy.clone();
    subset.service_status = world.service_status.clone();
    subset
}

/// Both rulesets of a node and family, and their diff.
fn comparison(
    family: IpFamily,
    node: Option<&str>,
    before: &str,
    after: &str,
    sides: &Sides,
) -> RulesComparison {
    let label = |side: &super::sides::Side| {
        format!("{} {} ({})", side.mode.as_str(), side.version, family.as_str())
    };
    let lines = diff_lines(before, after);
    RulesComparison {
        family: family.as_str().to_owned(),
        node: node.unwrap_or_default().to_owned(),
        before_mode: sides.from.mode.as_str().to_owned(),
        after_mode: sides.to.mode.as_str().to_owned(),
        before: before.to_owned(),
        after: after.to_owned(),
        diff: unified(&lines, &label(&sides.from), &label(&sides.to), 3),
    }
}
