//! The cluster state after a scenario ([`World`]) and the readers that take it whole: rendering
//! a node's kube-proxy rules and tracing a packet through them. Below this layer, proxy and trace
//! read plain objects and text; above it, the report and the pipeline.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::allocation::{Allocators, FamilyAllocator, ServiceAllocation};
use crate::limits::MAX_RENDER_ENTRIES;
use crate::model::{
    EndpointSlice, Endpoints, KubeProxyConfiguration, Located, Node, Origin, Positions, Service,
    ServiceKey, ServiceStatus,
};
use crate::net::{IpFamily, parse_ip_sloppy};
use crate::profile::Profile;
use crate::proxy::{
    Behaviour, ProxyConfig, ProxyMode, RenderError, RenderOptions, Rendered, Rows, RulesetWriter,
    ServicePorts, own_gate_default, validate_configuration,
};
use crate::source::Source;
use crate::trace::{TraceReport, TraceRequest, failed, trace_nft_text, trace_text};

/// A Service as the cluster stores it after the stream, with what it holds.
#[derive(Debug, Clone)]
pub struct StoredService {
    /// The defaulted, allocated object (behind a pointer: the B-tree of stored Services moves its
    /// values as it splits and merges nodes, and a Service is most of a kilobyte; shared, so that
    /// a copy of the cluster state, a `Session`'s checkpoint, copies no Service).
    pub service: Arc<Service>,
    /// Field positions of the document that last wrote it.
    pub positions: Positions,
    pub(crate) allocation: ServiceAllocation,
}

/// The cluster state after a scenario: what rendering and tracing read.
#[derive(Debug, Clone)]
pub struct World {
    /// The profile in force.
    pub profile: Profile,
    pub(crate) allocators: Option<Allocators>,
    /// Live Services by namespace and name.
    pub services: BTreeMap<ServiceKey, StoredService>,
    /// EndpointSlices in stream order (shared, as [`StoredService::service`]).
    pub endpoint_slices: Vec<Arc<Located<EndpointSlice>>>,
    /// v1 Endpoints in stream order.
    pub endpoints: Vec<Located<Endpoints>>,
    /// Nodes in the order their names first appeared, each the last document of its name.
    pub nodes: Vec<Located<Node>>,
    /// The last KubeProxyConfiguration.
    pub kube_proxy: Option<Located<KubeProxyConfiguration>>,
    /// Pasted iptables-save dumps.
    pub iptables_dumps: Vec<(String, Source)>,
    /// `status` of live Services as the manifests wrote it: the apiserver drops status on
    /// create, but a scenario uses it to play the load-balancer controller (kube-proxy reads
    /// `status.loadBalancer.ingress`).
    pub service_status: BTreeMap<ServiceKey, ServiceStatus>,
    /// Index of named EndpointSlices in `endpoint_slices` by namespace, then name: two levels
    /// so a lookup borrows its key instead of building a [`ServiceKey`].
    endpoint_slice_index: BTreeMap<String, BTreeMap<String, usize>>,
    /// kube-proxy's release rows rendered as on the other side of their boundary (`upgrade`'s
    /// attribution, proxy/release.rs [`Rows`]); empty everywhere else.
    pub(crate) rows_set_back: Vec<Behaviour>,
}

impl World {
    /// An empty cluster under a profile; `allocators` is `None` when its ranges could not be built.
    pub(crate) fn new(profile: Profile, allocators: Option<Allocators>) -> World {
        World {
            profile,
            allocators,
            services: BTreeMap::new(),
            endpoint_slices: Vec::new(),
            endpoints: Vec::new(),
            nodes: Vec::new(),
            kube_proxy: None,
            iptables_dumps: Vec::new(),
            service_status: BTreeMap::new(),
            endpoint_slice_index: BTreeMap::new(),
            rows_set_back: Vec::new(),
        }
    }

    /// Where the stored EndpointSlice of that namespace and name is; a slice without a name
    /// (one that only has `generateName` under `--no-defaults`) is never found.
    pub(crate) fn endpoint_slice_position(&self, namespace: &str, name: &str) -> Option<usize> {
        if name.is_empty() {
            return None;
        }
        self.endpoint_slice_index.get(namespace)?.get(name).copied()
    }

    /// Stores an accepted EndpointSlice: in place of the one it updates, else after the others.
    pub(crate) fn store_endpoint_slice(
        &mut self,
        existing: Option<usize>,
        slice: Arc<Located<EndpointSlice>>,
    ) {
        match existing {
            Some(i) => self.endpoint_slices[i] = slice,
            None => {
                let meta = &slice.value.metadata;
                if !meta.name.is_empty() {
                    let names = match self.endpoint_slice_index.get_mut(meta.namespace.as_str()) {
                        Some(names) => names,
                        None => {
                            self.endpoint_slice_index.entry(meta.namespace.clone()).or_default()
                        }
                    };
                    names.insert(meta.name.clone(), self.endpoint_slices.len());
                }
                self.endpoint_slices.push(slice);
            }
        }
    }

    /// Stores a Node: a later document of the same name replaces the earlier one where it
    /// stands, as kube-proxy's Node informer keeps the last version of an object (its store is
    /// keyed by name); the Nodes keep the order in which their names first appeared.
    pub(crate) fn store_node(&mut self, node: Located<Node>) {
        match self.nodes.iter_mut().find(|n| n.value.metadata.name == node.value.metadata.name) {
            Some(stored) => *stored = node,
            None => self.nodes.push(node),
        }
    }

    /// Forgets the documents the objects were read from (their text or tree, kept for the
    /// field positions of diagnostics, which a render never writes): the input text goes as
    /// soon as the host drops its own handle on it.
    fn forget_documents(&mut self) {
        let forget = |positions: &mut Positions| positions.origin = Origin::Forgotten;
        self.services.values_mut().for_each(|s| forget(&mut s.positions));
        self.endpoint_slices.iter_mut().for_each(|s| forget(&mut Arc::make_mut(s).positions));
        self.endpoints.iter_mut().for_each(|e| forget(&mut e.positions));
        self.nodes.iter_mut().for_each(|n| forget(&mut n.positions));
        if let Some(k) = &mut self.kube_proxy {
            forget(&mut k.positions);
        }
    }

    /// Whether the scenario says anything about the dataplane (endpoints, nodes, kube-proxy
    /// configuration or a pasted dump), which makes kube-proxy rules part of the report.
    pub(crate) fn has_dataplane(&self) -> bool {
        !self.endpoint_slices.is_empty()
            || !self.endpoints.is_empty()
            || !self.nodes.is_empty()
            || self.kube_proxy.is_some()
            || !self.iptables_dumps.is_empty()
    }
}

impl ProxyConfig {
    /// Builds the configuration from a scenario's cluster state for a kube-proxy in `mode`
    /// (which picks the `iptables` or `nftables` block; nftables' `primary`
    /// nodePortAddresses default is applied when rendering).
    pub fn from_world(
        world: &World,
        family: Option<IpFamily>,
        node_name: Option<&str>,
        mode: ProxyMode,
    ) -> Result<ProxyConfig, RenderError> {
        let family = family.unwrap_or_else(|| {
            world.profile.service_cluster_ip_ranges.first().map_or(IpFamily::V4, IpFamily::of_net)
        });
        // kube-proxy exits rather than program rules when its validation refuses the
        // configuration for this release (proxy/startup.rs).
        let default_kpc = KubeProxyConfiguration::default();
        let kpc = world.kube_proxy.as_ref().map_or(&default_kpc, |k| &k.value);
        let release = world.profile.version.to_string();
        validate_configuration(kpc, mode, world.profile.version.minor, &release)?;
        let nodes: Vec<&Node> = world.nodes.iter().map(|n| &n.value).collect();
        let rows = Rows { version: world.profile.version, set_back: &world.rows_set_back };
        let mut config = ProxyConfig::from_objects_with(
            rows,
            family,
            mode,
            (world.kube_proxy.as_ref().map(|k| &k.value), &nodes, node_name),
            &world.profile.host,
            &world.profile.service_cluster_ip_ranges,
        )?;
        // A gate kube-proxy's own `featureGates` names wins over the profile, either way; a
        // gate only kube-proxy acts on takes its release default from kube-proxy's table.
        let own = world.kube_proxy.as_ref().map(|k| &k.value.feature_gates);
        let minor = world.profile.version.minor;
        let gate = |name: &str| {
            own.and_then(|gates| gates.get(name).copied())
                .or_else(|| own_gate_default(name, minor))
                .unwrap_or_else(|| world.profile.gate_named(name))
        };
        crate::proxy::configure_release(&mut config, rows, &gate);
        // cmd/kube-proxy/app/server.go `ProxyServer.Run` watches ServiceCIDR objects only with
        // MultiCIDRServiceAllocator on (kube-proxy's own gate; v1alpha1 objects in 1.29 and
        // 1.30, v1beta1 from 1.31, v1 from 1.33), and the nftables proxier's
        // `OnServiceCIDRsChanged` keeps those of its family for the "Drop traffic to
        // unallocated ClusterIPs" rule: without the gate (or without the API, when the
        // apiserver's gate is off) there are none and no drop rule. The objects are the
        // apiserver's default one (the flag ranges) and the scenario's own; upstream joins them
        // in set order (`UnsortedList`), svclab in sorted order.
        config.service_cidrs = if gate("MultiCIDRServiceAllocator") && world.profile.multi_cidr() {
            let mut cidrs: Vec<ipnet::IpNet> = world
                .allocators
                .as_ref()
                .and_then(|c| c.families().get(&config.family))
                .map(|f| match f {
                    FamilyAllocator::Objects(m) => m.cidrs(),
                    FamilyAllocator::Bitmap(r) => vec![r.cidr()],
                })
                .unwrap_or_default();
            cidrs.sort();
            cidrs.dedup();
            cidrs
        } else {
            Vec::new()
        };
        Ok(config)
    }
}

/// Renders the ruleset kube-proxy programs on a node for the scenario's cluster state.
pub fn render(world: &World, options: &RenderOptions) -> Result<String, RenderError> {
    render_with_stats(world, options).map(|r| r.text)
}

/// [`render`] as a [`RulesetWriter`] to write out part by part instead of one string, for a
/// host that renders the cluster state once and writes the pieces straight to its output (or
/// hands them over): the world is dropped once the service-port model is built, the model once
/// the ruleset is, and the whole ruleset (tens of megabytes at 10,000 Services) is never copied
/// into one string.
pub(crate) fn ruleset(world: World, options: &RenderOptions) -> Result<RulesetWriter, RenderError> {
    let config = render_config(&world, options)?;
    let mut world = world;
    world.forget_documents();
    let ports = service_ports(&world, &config);
    drop(world);
    Ok(ports.ruleset(&config, options.mode, options.standalone))
}

/// [`render`] plus the figures kube-proxy exposes for the sync.
pub(crate) fn render_with_stats(
    world: &World,
    options: &RenderOptions,
) -> Result<Rendered, RenderError> {
    let config = render_config(world, options)?;
    Ok(service_ports(world, &config).render(&config, options.mode, options.standalone))
}

/// The proxier configuration of a render, once the render is known to stay within
/// [`MAX_RENDER_ENTRIES`].
fn render_config(world: &World, options: &RenderOptions) -> Result<ProxyConfig, RenderError> {
    let config =
        ProxyConfig::from_world(world, options.family, options.node.as_deref(), options.mode)?;
    let entries = render_entries(world);
    if entries > MAX_RENDER_ENTRIES {
        return Err(RenderError::TooLarge { entries, limit: MAX_RENDER_ENTRIES });
    }
    Ok(config)
}

/// What a render of the cluster state writes, counted before anything is written (see
/// [`MAX_RENDER_ENTRIES`]): Service ports times their addresses, endpoints times their ports.
pub(crate) fn render_entries(world: &World) -> usize {
    let services = world.services.iter().map(|(key, stored)| {
        let spec = &stored.service.spec;
        let ingress = world
            .service_status
            .get(key)
            .unwrap_or(&stored.service.status)
            .load_balancer_ingress
            .len();
        let addresses = 4
            + spec.cluster_ips.len()
            + spec.external_ips.len()
            + ingress
            + spec.load_balancer_source_ranges.len();
        spec.ports.len().max(1).saturating_mul(addresses)
    });
    let slices = world
        .endpoint_slices
        .iter()
        .map(|s| s.value.endpoints.len().saturating_mul(s.value.ports.len().max(1)));
    let endpoints = world.endpoints.iter().flat_map(|e| &e.value.subsets).map(|subset| {
        let addresses = subset.addresses.len() + subset.not_ready_addresses.len();
        addresses.saturating_mul(subset.ports.len().max(1))
    });
    services.chain(slices).chain(endpoints).fold(0, usize::saturating_add)
}

/// The service-port model of the cluster state for one proxier configuration.
pub(crate) fn service_ports(world: &World, config: &ProxyConfig) -> ServicePorts {
    // The apiserver drops `status` on create; the scenario's written status plays the
    // load-balancer controller.
    let services: Vec<(&Service, &ServiceStatus)> = world
        .services
        .iter()
        .map(|(key, stored)| {
            (&*stored.service, world.service_status.get(key).unwrap_or(&stored.service.status))
        })
        .collect();
    let slices: Vec<&EndpointSlice> = world.endpoint_slices.iter().map(|s| &s.value).collect();
    let endpoints: Vec<&Endpoints> = world.endpoints.iter().map(|e| &e.value).collect();
    ServicePorts::build(&services, &slices, &endpoints, config)
}

/// Traces a packet through the scenario's rules: the last pasted `iptables-save` dump if
/// there is one, else the iptables payload rendered for the destination's family.
pub fn trace(world: &World, request: &TraceRequest) -> TraceReport {
    let family = parse_ip_sloppy(&request.dst).map(IpFamily::of);
    let config = match ProxyConfig::from_world(
        world,
        family,
        request.node.as_deref(),
        ProxyMode::Iptables,
    ) {
        Ok(c) => c,
        Err(e) => return failed(request, &e.to_string()),
    };
    if let Some((text, source)) = world.iptables_dumps.last() {
        let mut report = trace_text(text, &config, request);
        report.ruleset = format!("iptables-save dump {}:{}", source.file, source.line);
        return report;
    }
    // In 1.24 to 1.26 kubelet, not kube-proxy, writes KUBE-MARK-DROP (which 1.24's KUBE-FW-*
    // chains jump to) and KUBE-FIREWALL: the node has them, so the trace runs over the
    // standalone payload, which carries kubelet's chains.
    let options = RenderOptions {
        family,
        node: request.node.clone(),
        standalone: !config.kube_firewall_rule,
        ..RenderOptions::new(ProxyMode::Iptables)
    };
    match render(world, &options) {
        Ok(text) => trace_text(&text, &config, request),
        Err(e) => failed(request, &e.to_string()),
    }
}

/// Traces a packet through the rules of a proxy mode: iptables as [`trace`]; nftables through
/// the rendered `kube-proxy` table of the destination's family.
pub fn trace_mode(world: &World, request: &TraceRequest, mode: ProxyMode) -> TraceReport {
    if mode == ProxyMode::Iptables {
        return trace(world, request);
    }
    let family = parse_ip_sloppy(&request.dst).map(IpFamily::of);
    let config = match ProxyConfig::from_world(world, family, request.node.as_deref(), mode) {
        Ok(c) => c,
        Err(e) => return failed(request, &e.to_string()),
    };
    let options = RenderOptions { family, node: request.node.clone(), ..RenderOptions::new(mode) };
    match render(world, &options) {
        Ok(text) => trace_nft_text(&text, &config, request),
        Err(e) => failed(request, &e.to_string()),
    }
}
