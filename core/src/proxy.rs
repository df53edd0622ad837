//! kube-proxy rule rendering: what kube-proxy programs for the Services and endpoints of a
//! scenario, in iptables mode (the `iptables-restore` payload) and nftables mode (the
//! `kube-proxy` table transaction), plus the endpoint selection both modes share.
//!
//! The renderer is stateless: every call is one kube-proxy *full* sync on a fresh node, so no
//! `-X` lines for stale chains appear. Output is in canonical order (for iptables that of
//! kube-proxy's tests, which sort chains and rules before comparing; for nftables the fixed
//! objects first, then per service port, in the same order, its affinity sets, chains, rules
//! and map elements, so every line refers only to objects defined above it), so it is deterministic and can be piped into `iptables-restore` /
//! `nft -f` as it is.
//!
//! Dual-stack: kube-proxy runs one proxier per IP family, so there is one payload per family.
//! [`RenderOptions::family`] picks it; `None` means the cluster's primary family (the first
//! service CIDR of the profile). The IPv6 payload is meant for `ip6tables-restore` (nftables:
//! the `ip6 kube-proxy` table). The report's `rules` field carries the primary family only.
//!
//! CLI mapping (host-runner): `svclab render --proxy-mode iptables|nftables` sets
//! [`RenderOptions::mode`], `--node NAME` sets [`RenderOptions::node`], an IP-family flag sets
//! [`RenderOptions::family`], and `--standalone` sets [`RenderOptions::standalone`].
//!
//! ```
//! use svclab_core::{Input, CheckOptions, evaluate, ProxyMode, RenderOptions, render};
//! let yaml = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec:\n  clusterIP: 10.96.0.20\n  ports: [{port: 80}]\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a}\n";
//! let (world, _) = evaluate(&[Input::new("web.yaml", yaml)], &CheckOptions::default());
//! let rules = render(&world, &RenderOptions::new(ProxyMode::Iptables)).unwrap();
//! assert!(rules.contains("\"default/web has no endpoints\""));
//! let err = render(&world, &RenderOptions { node: Some("nope".into()), ..RenderOptions::new(ProxyMode::Iptables) });
//! assert!(err.is_err());
//! ```

mod chain_hash;
mod config;
mod iptables;
mod model;
mod nftables;
mod release;
mod startup;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{EndpointSlice, Endpoints, Service, ServiceStatus};
use crate::net::IpFamily;

pub use config::{DetectLocal, NftablesMasquerade, NftablesTable, ProxyConfig, TopologyHints};
pub(crate) use config::{ROW_GROUPS, configure_release};
pub(crate) use iptables::builtin_jumps;
pub use model::EndpointSelection;
pub(crate) use release::{Behaviour, Rows, holds_at, rows as release_rows};
pub(crate) use startup::{
    STARTUP_ONLY, diagnostics as configuration_diagnostics, own_gate_default, own_gates,
    validate as validate_configuration,
};

/// Which kube-proxy backend to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProxyMode {
    /// `--proxy-mode iptables` (kube-proxy's default on Linux).
    Iptables,
    /// `--proxy-mode nftables`.
    Nftables,
}

impl ProxyMode {
    /// `iptables` or `nftables`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProxyMode::Iptables => "iptables",
            ProxyMode::Nftables => "nftables",
        }
    }

    /// Parses `iptables` / `nftables`.
    pub fn parse(text: &str) -> Option<ProxyMode> {
        match text {
            "iptables" => Some(ProxyMode::Iptables),
            "nftables" => Some(ProxyMode::Nftables),
            _ => None,
        }
    }
}

/// What to render. A `node` that is not among the scenario's Nodes is an error only when the
/// scenario has Nodes; otherwise the name just decides which endpoints are local.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderOptions {
    /// Backend.
    pub mode: ProxyMode,
    /// IP family of the payload; `None` = the cluster's primary family.
    pub family: Option<IpFamily>,
    /// The node kube-proxy runs on; `None` = `hostnameOverride`, else the first `Node` of the
    /// scenario, else a node that holds no endpoint.
    pub node: Option<String>,
    /// Also emit the jump rules from the built-in chains (`iptablesJumpChains`), so the output
    /// loaded into an empty network namespace is a complete dataplane. nftables output is
    /// always complete (the table carries its own base chains).
    pub standalone: bool,
}

impl RenderOptions {
    /// Defaults for a mode: primary family, default node, not standalone.
    pub fn new(mode: ProxyMode) -> RenderOptions {
        RenderOptions { mode, family: None, node: None, standalone: false }
    }
}

/// Why rendering failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RenderError {
    /// `--node` names a node that is not in the scenario.
    UnknownNode(String),
    /// The scenario would render more than svclab's limit of service-port and endpoint
    /// entries (rules follow them a few to one).
    TooLarge {
        /// Entries the scenario asks for.
        entries: usize,
        /// The limit.
        limit: usize,
    },
    /// kube-proxy of this release would refuse its configuration and exit (the nftables mode
    /// before it existed or with its gate off, `nodePortAddresses` it does not accept).
    InvalidConfiguration {
        /// The release (`1.28`).
        release: String,
        /// What kube-proxy's command returns: `failed complete: ` and the feature-gate error, or
        /// `failed validate: ` and the field errors.
        message: String,
    },
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RenderError::UnknownNode(name) => write!(f, "node {name:?} is not in the scenario"),
            RenderError::TooLarge { entries, limit } => write!(
                f,
                "the scenario would render {entries} service-port and endpoint entries; svclab renders at most {limit}"
            ),
            RenderError::InvalidConfiguration { release, message } => {
                write!(f, "kube-proxy {release} refuses to start: {message}")
            }
        }
    }
}

impl std::error::Error for RenderError {}

/// Figures kube-proxy exposes for one sync (its metrics), for the report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleStats {
    /// `sync_proxy_rules_no_local_endpoints_total{traffic_policy="internal"}`.
    pub no_local_endpoints_internal: u64,
    /// `sync_proxy_rules_no_local_endpoints_total{traffic_policy="external"}`.
    pub no_local_endpoints_external: u64,
    /// Service ports rendered.
    pub service_ports: u64,
    /// Endpoints over all service ports (drives large-cluster mode above 1000).
    pub endpoints: u64,
    /// Rules per table (`filter`, `nat`) in iptables mode, or `rules` in nftables mode.
    pub rules: BTreeMap<String, u64>,
    /// Chains per table (`filter`, `nat`), or `chains` in nftables mode.
    pub chains: BTreeMap<String, u64>,
}

impl RuleStats {
    /// The figures before any rule: how many service ports and endpoints there are.
    fn of_ports(ports: &[model::SvcPort]) -> RuleStats {
        RuleStats {
            service_ports: ports.len() as u64,
            endpoints: ports.iter().map(|p| p.endpoints.len() as u64).sum(),
            ..RuleStats::default()
        }
    }
}

/// A rendered ruleset with its figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The payload text.
    pub text: String,
    /// The figures.
    pub stats: RuleStats,
}

/// Renders objects as written (no defaulting, no allocation) with an explicit configuration.
/// This is the entry point of the golden tests and of the benchmark.
pub fn render_objects(
    services: &[&Service],
    slices: &[&EndpointSlice],
    endpoints: &[&Endpoints],
    config: &ProxyConfig,
    mode: ProxyMode,
    standalone: bool,
) -> Rendered {
    let ports = ServicePorts::build(&with_own_status(services), slices, endpoints, config);
    ports.render(config, mode, standalone)
}

/// Endpoint selection (kube-proxy's `CategorizeEndpoints`) for every service port, sorted by
/// service port name.
pub fn select_endpoints(
    services: &[&Service],
    slices: &[&EndpointSlice],
    endpoints: &[&Endpoints],
    config: &ProxyConfig,
) -> Vec<EndpointSelection> {
    let ports = model::build(&with_own_status(services), slices, endpoints, config);
    ports.into_iter().map(|p| p.selection()).collect()
}

fn with_own_status<'a>(services: &[&'a Service]) -> Vec<(&'a Service, &'a ServiceStatus)> {
    services.iter().map(|s| (*s, &s.status)).collect()
}

/// The service-port model of one proxier configuration, which does not depend on the mode:
/// built once, it renders both rulesets of a report.
pub(crate) struct ServicePorts(Vec<model::SvcPort>);

impl ServicePorts {
    /// Every service port of the configuration's family with its categorized endpoints; each
    /// Service comes with the status kube-proxy sees (the scenario may write one for it).
    pub(crate) fn build(
        services: &[(&Service, &ServiceStatus)],
        slices: &[&EndpointSlice],
        endpoints: &[&Endpoints],
        config: &ProxyConfig,
    ) -> ServicePorts {
        ServicePorts(model::build(services, slices, endpoints, config))
    }

    /// The payload of a mode.
    pub(crate) fn render(
        &self,
        config: &ProxyConfig,
        mode: ProxyMode,
        standalone: bool,
    ) -> Rendered {
        self.rendered(config, mode, standalone).into_rendered()
    }

    /// The payload of a mode with every service port in, before it is one text.
    fn rendered(&self, config: &ProxyConfig, mode: ProxyMode, standalone: bool) -> Finished {
        let mut rendering = self.rendering(config, mode, standalone);
        rendering.add(self.0.len());
        rendering.finish()
    }

    /// The payload of a mode, rendered a few service ports at a time.
    pub(crate) fn rendering<'p>(
        &'p self,
        config: &'p ProxyConfig,
        mode: ProxyMode,
        standalone: bool,
    ) -> Rendering<'p> {
        let building = match mode {
            ProxyMode::Iptables => {
                Building::Iptables(Box::new(iptables::Building::new(&self.0, config, standalone)))
            }
            ProxyMode::Nftables => {
                Building::Nftables(Box::new(nftables::Building::new(&self.0, config)))
            }
        };
        Rendering { ports: &self.0, added: 0, building }
    }

    /// The ruleset of a mode, to be written out part by part ([`ServicePorts::render`] without
    /// joining it into one string); the service-port model may go once it is built.
    pub(crate) fn ruleset(
        &self,
        config: &ProxyConfig,
        mode: ProxyMode,
        standalone: bool,
    ) -> RulesetWriter {
        let body = match self.rendered(config, mode, standalone) {
            Finished::Iptables(payload) => Body::Iptables(payload),
            Finished::Nftables(rendered) => Body::Nftables(rendered.text),
        };
        RulesetWriter { body, next: 0 }
    }
}

/// A payload being rendered a few service ports at a time ([`ServicePorts::rendering`]), for a
/// host that must not be blocked for all of it ([`crate::report_rules_pausing`]); rendered all
/// at once, it is [`ServicePorts::render`].
pub(crate) struct Rendering<'p> {
    ports: &'p [model::SvcPort],
    /// The service ports added so far.
    added: usize,
    building: Building<'p>,
}

/// A mode's payload being built.
enum Building<'p> {
    Iptables(Box<iptables::Building<'p>>),
    Nftables(Box<nftables::Building<'p>>),
}

impl Rendering<'_> {
    /// Renders the next `count` service ports; `false` once every one is in.
    pub(crate) fn add(&mut self, count: usize) -> bool {
        for sp in self.ports.iter().skip(self.added).take(count) {
            match &mut self.building {
                Building::Iptables(building) => building.add(sp),
                Building::Nftables(building) => building.add(sp),
            }
            self.added += 1;
        }
        self.added < self.ports.len()
    }

    /// The payload, with every service port added, to be joined into its text.
    pub(crate) fn finish(self) -> Finished {
        match self.building {
            Building::Iptables(building) => Finished::Iptables(Box::new((*building).finish())),
            Building::Nftables(building) => Finished::Nftables((*building).finish()),
        }
    }
}

/// A rendered payload before it is one text: the iptables chains sorted into their canonical
/// order, and the nftables transaction (written as it went).
pub(crate) enum Finished {
    Iptables(Box<iptables::Payload>),
    Nftables(Rendered),
}

impl Finished {
    /// The payload as one text, with its figures.
    fn into_rendered(self) -> Rendered {
        match self {
            Finished::Iptables(payload) => (*payload).into_rendered(),
            Finished::Nftables(rendered) => rendered,
        }
    }

    /// The payload, to be joined into one text a few parts at a time.
    pub(crate) fn joining(self) -> Joining {
        let text = match &self {
            Finished::Iptables(payload) => String::with_capacity(payload.len()),
            Finished::Nftables(_) => String::new(),
        };
        Joining { finished: self, text, next: 0 }
    }
}

/// A payload being joined into one text, a few of its parts at a time (an iptables payload's
/// declarations and chains, [`iptables::Payload::write_part`]; an nftables transaction is one
/// text already).
pub(crate) struct Joining {
    finished: Finished,
    text: String,
    next: usize,
}

impl Joining {
    /// Joins the next `count` parts; `false` once every one is in.
    pub(crate) fn join(&mut self, count: usize) -> bool {
        let Joining { finished, text, next } = self;
        let Finished::Iptables(payload) = finished else { return false };
        for _ in 0..count {
            if !payload.write_part(*next, &mut |piece| text.push_str(piece)) {
                return false;
            }
            *next += 1;
        }
        true
    }

    /// The payload as one text, with its figures, once every part is joined.
    pub(crate) fn into_rendered(mut self) -> Rendered {
        while self.join(usize::MAX) {}
        match self.finished {
            Finished::Iptables(payload) => Rendered { text: self.text, stats: payload.stats },
            Finished::Nftables(rendered) => rendered,
        }
    }
}

/// A rendered ruleset, written out a part at a time: what a host that hands the ruleset over in
/// pieces (the plugin's `render-begin` / `render-next`) keeps between pieces, rather than a copy
/// of its text (at 100,000 Services, a quarter of a gigabyte more of the guest's memory).
pub struct RulesetWriter {
    body: Body,
    /// The next part of an iptables payload, or the next byte of an nftables transaction.
    next: usize,
}

enum Body {
    Iptables(Box<iptables::Payload>),
    Nftables(String),
}

impl RulesetWriter {
    /// The next piece of the ruleset, `None` once all of it is out: whole parts (iptables
    /// chains and declarations, nftables lines) until the piece holds at least `bytes`.
    pub fn next_piece(&mut self, bytes: usize) -> Option<String> {
        let RulesetWriter { body, next } = self;
        let piece = match body {
            Body::Iptables(payload) => {
                let mut piece = String::with_capacity(bytes);
                while payload.write_part(*next, &mut |s| piece.push_str(s)) {
                    *next += 1;
                    if piece.len() >= bytes {
                        break;
                    }
                }
                piece
            }
            Body::Nftables(text) => {
                let rest = text.as_bytes().get(*next..).unwrap_or_default();
                // A line feed is ASCII, so the cut after one is a character boundary.
                let cut = rest
                    .get(bytes..)
                    .and_then(|after| after.iter().position(|&b| b == b'\n'))
                    .map_or(rest.len(), |at| bytes + at + 1);
                let piece = text.get(*next..*next + cut).unwrap_or_default().to_owned();
                *next += cut;
                piece
            }
        };
        (!piece.is_empty()).then_some(piece)
    }

    /// Writes the rest of the ruleset to `out`, piece by piece, in order.
    pub fn write_to(&mut self, out: &mut dyn FnMut(&str)) {
        let RulesetWriter { body, next } = self;
        match body {
            Body::Iptables(payload) if *next == 0 => {
                payload.write(out);
                *next = usize::MAX;
            }
            Body::Iptables(payload) => {
                while payload.write_part(*next, out) {
                    *next += 1;
                }
            }
            Body::Nftables(text) => {
                out(text.get(*next..).unwrap_or_default());
                *next = text.len();
            }
        }
    }
}

#[cfg(test)]
mod tests;
