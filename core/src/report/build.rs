//! Building the report from the cluster state: one Service document's outcome, the ranges
//! after the stream, and the kube-proxy rulesets.

use std::ops::ControlFlow;

use super::{
    AllocationReport, BandReport, PortRangeReport, PortReport, RangeReport, Report, Rules,
    ServiceReport,
};
use crate::allocation::{Allocators, FamilyAllocator, ServiceAllocation};
use crate::diagnostic::Diagnostic;
use crate::model::{IntOrString, Service};
use crate::proxy::{ProxyConfig, ProxyMode, Rendered, Rendering, ServicePorts};
use crate::source::Source;
use crate::world::{World, service_ports};

impl Report {
    /// The report of a scenario: the Service documents' outcomes in stream order, the ranges as
    /// the stream left them, and the diagnostics. kube-proxy rules are part of it when the
    /// scenario says anything about the dataplane and the caller wants them (`with_rules`).
    pub(crate) fn new(
        world: &World,
        services: Vec<ServiceReport>,
        diagnostics: Vec<Diagnostic>,
        with_rules: bool,
    ) -> Report {
        let (ranges, node_port_range) = range_reports(world);
        Report {
            api_version: super::REPORT_API_VERSION.to_owned(),
            kind: "Report".to_owned(),
            profile: world.profile.summary(),
            services,
            ranges,
            node_port_range,
            diagnostics,
            rules: if with_rules && world.has_dataplane() { report_rules(world) } else { None },
        }
    }
}

impl ServiceReport {
    /// One Service document's outcome (`created`, `updated`, `deleted`, `validated`) with what
    /// it holds, each address and NodePort with the band it came from.
    pub(crate) fn new(
        allocators: Option<&Allocators>,
        service: &Service,
        outcome: &str,
        allocation: &ServiceAllocation,
        source: Source,
    ) -> ServiceReport {
        let allocations = allocation
            .ips
            .iter()
            .map(|(_, ip, requested)| AllocationReport {
                ip: crate::net::ip_string(*ip),
                band: allocators.map_or("none", |c| c.ip_band(*ip).as_str()).to_owned(),
                requested: *requested,
            })
            .collect();
        let ports = service
            .spec
            .ports
            .iter()
            .map(|p| {
                let node_port = u32::try_from(p.node_port).unwrap_or(0);
                PortReport {
                    name: p.name.clone(),
                    port: p.port,
                    protocol: p.protocol.clone(),
                    target_port: match &p.target_port {
                        IntOrString::Int(i) => i.to_string(),
                        IntOrString::String(s) => s.clone(),
                    },
                    node_port,
                    node_port_band: if node_port == 0 {
                        String::new()
                    } else {
                        allocators.map_or("none", |c| c.port_band(node_port).as_str()).to_owned()
                    },
                }
            })
            .collect();
        ServiceReport {
            namespace: service.metadata.namespace.clone(),
            name: service.metadata.name.clone(),
            type_: service.spec.type_.clone(),
            outcome: outcome.to_owned(),
            cluster_ips: service.spec.cluster_ips.clone(),
            ip_families: service.spec.ip_families.clone(),
            ip_family_policy: service.spec.ip_family_policy.clone().unwrap_or_default(),
            allocations,
            ports,
            health_check_node_port: u32::try_from(service.spec.health_check_node_port).unwrap_or(0),
            source,
        }
    }

    /// The report of a Service the cluster refused: it holds nothing.
    pub(crate) fn rejected(
        allocators: Option<&Allocators>,
        service: &Service,
        source: Source,
    ) -> ServiceReport {
        ServiceReport::new(allocators, service, "rejected", &ServiceAllocation::default(), source)
    }
}

/// The service IP ranges (primary family first) and the NodePort range as the stream left
/// them; without a cluster (its ranges were invalid) only the configured NodePort range.
fn range_reports(world: &World) -> (Vec<RangeReport>, PortRangeReport) {
    let band = |b: Option<(String, String)>| b.map(|(first, last)| BandReport { first, last });
    let mut ranges = Vec::new();
    let empty_ports = PortRangeReport {
        range: world.profile.service_node_port_range.to_string(),
        size: world.profile.service_node_port_range.size,
        used: 0,
        free: world.profile.service_node_port_range.size,
        static_band: None,
        dynamic_band: None,
    };
    let Some(allocators) = &world.allocators else { return (ranges, empty_ports) };
    // Primary family first.
    let mut families: Vec<_> = allocators.families().iter().collect();
    families.sort_by_key(|(f, _)| **f != allocators.primary());
    for (family, allocator) in families {
        match allocator {
            FamilyAllocator::Bitmap(r) => ranges.push(RangeReport {
                cidr: r.cidr().to_string(),
                family: family.as_str().to_owned(),
                allocator: "bitmap".into(),
                size: u64::try_from(r.size()).unwrap_or(u64::MAX),
                used: u64::try_from(r.used()).unwrap_or(u64::MAX),
                free: u64::try_from(r.free()).unwrap_or(u64::MAX),
                static_band: band(r.static_band().map(|(a, b)| (a.to_string(), b.to_string()))),
                dynamic_band: band(r.dynamic_band().map(|(a, b)| (a.to_string(), b.to_string()))),
            }),
            FamilyAllocator::Objects(m) => {
                for net in m.cidrs() {
                    let Some((g, used)) = m.geometry(&net) else { continue };
                    let ip = |v: u128| g.ip(v).to_string();
                    ranges.push(RangeReport {
                        cidr: net.to_string(),
                        family: family.as_str().to_owned(),
                        allocator: "ipaddress".into(),
                        size: u64::try_from(g.size).unwrap_or(u64::MAX),
                        used: u64::try_from(used).unwrap_or(u64::MAX),
                        free: u64::try_from(g.size - used).unwrap_or(u64::MAX),
                        static_band: band(
                            (g.offset > 0).then(|| (ip(g.first), ip(g.first + g.offset - 1))),
                        ),
                        dynamic_band: band(
                            (g.offset < g.size)
                                .then(|| (ip(g.first + g.offset), ip(g.first + g.size - 1))),
                        ),
                    });
                }
            }
        }
    }
    let ports = &allocators.ports;
    let port_band = |b: Option<(u32, u32)>| band(b.map(|(a, z)| (a.to_string(), z.to_string())));
    let node_port_range = PortRangeReport {
        range: ports.range().to_string(),
        size: ports.range().size,
        used: ports.used(),
        free: ports.free(),
        static_band: port_band(ports.static_band()),
        dynamic_band: port_band(ports.dynamic_band()),
    };
    (ranges, node_port_range)
}

/// Both rulesets of the scenario (for the report's `rules` field) with the figures of the
/// iptables sync plus the nftables rule and chain counts. Rendering problems leave the rules
/// out rather than failing the check (and so does a scenario past svclab's rendering limit,
/// which `render` reports). The nftables ruleset is left empty (and has no figures) where a
/// kube-proxy of the release would refuse `--proxy-mode nftables`: before 1.29, which has no
/// nftables mode, and in 1.29 and 1.30 unless kube-proxy's own `featureGates` turn
/// NFTablesProxyMode on (pkg/proxy/apis/config/validation/validation.go
/// `validateProxyModeLinux`; the release table's `NftablesModeGated` rows).
pub fn report_rules(world: &World) -> Option<Rules> {
    // The steps of `report_rules_pausing` without their pauses, written out: the guests that
    // render rules whole (a policy engine's, a gateway's) then carry no step machinery, and
    // they are kept under a size budget (`xtask/src/plugins.rs` `MAX_SIZE`).
    let (config, ports) = service_port_model(world)?;
    let ipt = ports.render(&config, ProxyMode::Iptables, false);
    let nft = ProxyConfig::from_world(world, None, None, ProxyMode::Nftables)
        .ok()
        .map(|nft_config| ports.render(&nft_config, ProxyMode::Nftables, false));
    Some(rules_of(ipt, nft))
}

/// The proxier configuration and service-port model both rulesets are rendered from; `None`
/// past svclab's rendering limit, or where the configuration does not hold. The model does not
/// depend on the mode (only the rendering does), so both rulesets come from one model; each
/// mode renders with its own proxier configuration (masqueradeAll and masqueradeBit come from
/// the mode's block).
fn service_port_model(world: &World) -> Option<(ProxyConfig, ServicePorts)> {
    if crate::world::render_entries(world) > crate::limits::MAX_RENDER_ENTRIES {
        return None;
    }
    let config = ProxyConfig::from_world(world, None, None, ProxyMode::Iptables).ok()?;
    let ports = service_ports(world, &config);
    Some((config, ports))
}

/// The report's rulesets: the iptables figures, with the nftables rule and chain counts.
fn rules_of(ipt: Rendered, nft: Option<Rendered>) -> Rules {
    let mut figures = ipt.stats;
    let mut nftables = String::new();
    if let Some(nft) = nft {
        for (k, v) in nft.stats.rules {
            figures.rules.insert(format!("nftables-{k}"), v);
        }
        for (k, v) in nft.stats.chains {
            figures.chains.insert(format!("nftables-{k}"), v);
        }
        nftables = nft.text;
    }
    Rules { iptables: ipt.text, nftables, figures }
}

/// Service ports rendered between two pauses of [`report_rules_pausing`]: a few milliseconds
/// of a cluster-sized scenario's in a browser. (Fewer in unit tests, so that their small
/// scenarios pause too.)
const PORTS_PER_STEP: usize = if cfg!(test) { 2 } else { 64 };

/// Parts of an iptables payload (a chain's declaration or its rules) joined into its text
/// between two pauses: a 10,000-Service payload has about 80,000.
const PARTS_PER_STEP: usize = if cfg!(test) { 64 } else { 8_192 };

/// [`report_rules`] in steps, for a host that must not be blocked for all of it (a browser's
/// main thread, where both rulesets of a 10,000-Service cluster take most of a second): it
/// awaits `pause()` once the service-port model is built, after every 64 service ports of each
/// mode, once a mode's payload is finished (the iptables chains sorted), and every 8,192 parts
/// of an iptables payload joined into its text. `Break` abandons it.
pub async fn report_rules_pausing<F>(
    world: &World,
    mut pause: impl FnMut() -> F,
) -> ControlFlow<(), Option<Rules>>
where
    F: Future<Output = ControlFlow<()>>,
{
    let Some((config, ports)) = service_port_model(world) else {
        return ControlFlow::Continue(None);
    };
    pause().await?;
    let ipt = in_steps(ports.rendering(&config, ProxyMode::Iptables, false), &mut pause).await?;
    let nft = match ProxyConfig::from_world(world, None, None, ProxyMode::Nftables) {
        Ok(nft_config) => {
            let rendering = ports.rendering(&nft_config, ProxyMode::Nftables, false);
            Some(in_steps(rendering, &mut pause).await?)
        }
        Err(_) => None,
    };
    ControlFlow::Continue(Some(rules_of(ipt, nft)))
}

/// One mode's ruleset, [`PORTS_PER_STEP`] service ports a step, then finished, then joined.
async fn in_steps<F: Future<Output = ControlFlow<()>>>(
    mut rendering: Rendering<'_>,
    pause: &mut impl FnMut() -> F,
) -> ControlFlow<(), Rendered> {
    while rendering.add(PORTS_PER_STEP) {
        pause().await?;
    }
    pause().await?;
    let mut joining = rendering.finish().joining();
    pause().await?;
    while joining.join(PARTS_PER_STEP) {
        pause().await?;
    }
    ControlFlow::Continue(joining.into_rendered())
}
