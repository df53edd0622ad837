//! `allocation`: the stored ClusterIPs and node ports under the target's allocators, as its
//! repair loops find them, and the cluster state the target starts from.
//!
//! The target kube-apiserver starts with its own ranges (or ServiceCIDR objects) and learns what
//! is in use the way it does after any restart: its repair loops walk the Services (in key
//! order, as a List returns them) and mark every ClusterIP and node port, and each address or
//! port they cannot mark is a Warning event on the Service, in the loop's words
//! (`pkg/registry/core/service/ipallocator/controller/repair.go` for the bitmap,
//! `repairip.go` for IPAddress objects, `portallocator/controller/repair.go`, read at every
//! release svclab models). What the loops mark is what the target's allocators hold before the
//! next write. Moving to the IPAddress allocator (or back), and static bands that appear,
//! disappear or move, are findings of their own.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

use super::cause::{Cause, Crossed};
use super::report::{Area, Finding, Impact};
use super::sides::Sides;
use crate::allocation::{AllocationError, Allocators, FamilyAllocator, PortError};
use crate::defaulting::default_service;
use crate::manifest::Object;
use crate::model::Service;
use crate::net::{IpFamily, ip_string, parse_ip_sloppy};
use crate::pipeline::evaluate_objects;
use crate::profile::Profile;
use crate::report::{RangeReport, Report};
use crate::validation::{self, Rule};
use crate::world::{StoredService, World};

/// How many example addresses a finding about many Services names.
const EXAMPLES: usize = 3;

/// The cluster the target starts from: its profile, allocators, Nodes, Endpoints and
/// KubeProxyConfiguration from the target's objects, today's stored Services (as the target
/// reads them: with its defaulting) and EndpointSlices, and what the repair loops mark. The
/// findings of the repair loops, the allocator move and the bands go to `out`.
pub(crate) fn migrate(sides: &Sides, today: &World, out: &mut Vec<Finding>) -> World {
    let crossed = Crossed::between(sides);
    let profile = &sides.to.profile;
    let bare: Vec<Object> = sides
        .to
        .objects
        .iter()
        .filter(|o| {
            !matches!(o, Object::Service(_) | Object::EndpointSlice(_) | Object::ServicePolicy(_))
        })
        .cloned()
        .collect();
    let (mut world, bare_report) = evaluate_objects(bare, profile.clone(), Vec::new());
    let etp_for_external_ips = validation::rule_in_force(Rule::EtpForExternalIps, profile);
    let mut repair = Repair::new(sides, &crossed);
    match world.allocators.as_mut() {
        Some(allocators) => {
            for (key, stored) in &today.services {
                repair.service(allocators, &stored.service, stored.positions.source_of(""));
                let mut service = stored.service.clone();
                default_service(Arc::make_mut(&mut service), profile, etp_for_external_ips);
                world.services.insert(
                    key.clone(),
                    StoredService {
                        service,
                        positions: stored.positions.clone(),
                        allocation: stored.allocation.clone(),
                    },
                );
            }
        }
        None => {
            // kube-apiserver cannot build its ranges: the ranges area says why; nothing is
            // stored that a next write could reach.
            let why = bare_report
                .diagnostics
                .iter()
                .find(|d| d.object.as_ref().is_some_and(|o| o.kind == "ServiceCIDR"))
                .map_or_else(String::new, |d| format!(": {}", d.message));
            out.push(
                Finding::new(
                    Area::Allocation,
                    Impact::Breaks,
                    format!(
                        "kube-apiserver {} cannot build its ClusterIP allocators{why}",
                        sides.to.version
                    ),
                )
                .caused_by(&crossed.apiserver_profile()),
            );
        }
    }
    for slice in &today.endpoint_slices {
        world.store_endpoint_slice(None, Arc::clone(slice));
    }
    world.service_status = today.service_status.clone();
    out.extend(repair.findings);
    allocator_move(sides, today, &crossed, out);
    bands(today, &world, &crossed, out);
    world
}

/// The repair loops of the target, Service by Service.
struct Repair<'a> {
    sides: &'a Sides,
    causes: Vec<Cause>,
    findings: Vec<Finding>,
}

/// What a repair loop reports about one address or port.
enum Event {
    OutOfRange,
    FamilyNotConfigured,
    Duplicate,
}

impl<'a> Repair<'a> {
    fn new(sides: &'a Sides, crossed: &Crossed) -> Repair<'a> {
        let causes = crossed.only(&[
            "profile:",
            "allocation:ipAddressAllocator",
            "gate:MultiCIDRServiceAllocator",
        ]);
        Repair { sides, causes, findings: Vec::new() }
    }

    /// Marks one stored Service's ClusterIPs and node ports.
    fn service(
        &mut self,
        allocators: &mut Allocators,
        service: &Service,
        source: crate::source::Source,
    ) {
        let object = format!("Service {}/{}", service.metadata.namespace, service.metadata.name);
        if service.needs_cluster_ip() {
            for text in &service.spec.cluster_ips {
                let Some(ip) = parse_ip_sloppy(text) else { continue };
                let event = match allocators.repair_ip(ip) {
                    Ok(()) => continue,
                    Err(None) => Event::FamilyNotConfigured,
                    Err(Some(AllocationError::Allocated)) => Event::Duplicate,
                    Err(Some(_)) => Event::OutOfRange,
                };
                let (severity, reason, text) = self.ip_event(&event, ip, allocators);
                let consequence = match event {
                    Event::Duplicate => "two Services hold the same ClusterIP",
                    _ => {
                        "the Service keeps its address and kube-proxy keeps serving it, but kube-apiserver asks for it to be recreated"
                    }
                };
                self.push(&object, &source, severity, format!(
                    "kube-apiserver {}'s repair loop reports {reason} on the Service every few minutes: \"{text}\"; {consequence}",
                    self.sides.to.version
                ));
            }
        }
        for port in node_ports(service) {
            let (severity, reason, text) = match allocators.repair_port(port) {
                Ok(()) => continue,
                Err(PortError::Allocated) => (
                    Impact::Breaks,
                    "PortAlreadyAllocated",
                    format!(
                        "Port {port} was assigned to multiple services; please recreate service"
                    ),
                ),
                Err(_) => (
                    Impact::Changes,
                    "PortOutOfRange",
                    format!(
                        "Port {port} is not within the port range {}; please recreate service",
                        self.sides.to.profile.service_node_port_range
                    ),
                ),
            };
            self.push(&object, &source, severity, format!(
                "kube-apiserver {}'s NodePort repair loop reports {reason} on the Service every few minutes: \"{text}\"",
                self.sides.to.version
            ));
        }
    }

    fn push(
        &mut self,
        object: &str,
        source: &crate::source::Source,
        severity: Impact,
        message: String,
    ) {
        self.findings.push(
            Finding::new(Area::Allocation, severity, message)
                .about(object)
                .caused_by(&self.causes)
                .at(Some(source.clone())),
        );
    }

    /// The event's severity, reason and text, as the target's repair loop words it.
    fn ip_event(
        &self,
        event: &Event,
        ip: IpAddr,
        allocators: &Allocators,
    ) -> (Impact, &'static str, String) {
        let family = IpFamily::of(ip).as_str();
        let ip_text = ip_string(ip);
        let to = &self.sides.to.profile;
        if !to.multi_cidr() {
            // repair.go, the same texts at every release.
            let cidr = to
                .service_cluster_ip_ranges
                .iter()
                .find(|n| IpFamily::of_net(n) == IpFamily::of(ip))
                .map(ToString::to_string)
                .unwrap_or_default();
            return match event {
                Event::OutOfRange => (
                    Impact::Changes,
                    "ClusterIPOutOfRange",
                    format!(
                        "Cluster IP [{family}]:{ip_text} is not within the service CIDR {cidr}; please recreate service"
                    ),
                ),
                Event::FamilyNotConfigured => (
                    Impact::Changes,
                    "ClusterIPNotValid",
                    format!(
                        "Cluster IP {ip_text}({family}) is of ip family that is no longer configured on cluster; please recreate service"
                    ),
                ),
                Event::Duplicate => (
                    Impact::Breaks,
                    "ClusterIPAlreadyAllocated",
                    format!(
                        "Cluster IP [{family}]:{ip_text} was assigned to multiple services; please recreate service"
                    ),
                ),
            };
        }
        // repairip.go: 1.27 and 1.28 check the family's one CIDR; from 1.29 any ServiceCIDR.
        let minor = self.sides.to.version.minor;
        match event {
            Event::Duplicate => (
                Impact::Breaks,
                "ClusterIPAlreadyAllocated",
                format!(
                    "Cluster IP [{family}]:{ip_text} was assigned to multiple services; please recreate service"
                ),
            ),
            Event::FamilyNotConfigured if minor <= 28 => (
                Impact::Changes,
                "ClusterIPNotValid",
                format!(
                    "Cluster IP {ip_text}({family}) is of ip family that is no longer configured on cluster; please recreate Service"
                ),
            ),
            _ if minor <= 28 => {
                let network = allocators
                    .families()
                    .get(&IpFamily::of(ip))
                    .and_then(|f| match f {
                        FamilyAllocator::Objects(m) => m.cidrs().first().map(ToString::to_string),
                        FamilyAllocator::Bitmap(r) => Some(r.cidr().to_string()),
                    })
                    .unwrap_or_default();
                (
                    Impact::Changes,
                    "ClusterIPOutOfRange",
                    format!(
                        "Cluster IP [{family}]: {ip_text} is not within the configured Service CIDR {network}; please recreate service"
                    ),
                )
            }
            _ => (
                Impact::Changes,
                "ClusterIPOutOfRange",
                format!(
                    "Cluster IP [{family}]: {ip_text} is not within any configured Service CIDR; please recreate service"
                ),
            ),
        }
    }
}

/// `collectServiceNodePorts` of the NodePort repair loop: each node port once per protocol
/// (a port shared by TCP and UDP is one), then the health-check port unless a non-TCP port
/// already holds it.
fn node_ports(service: &Service) -> Vec<u32> {
    let mut ports = Vec::new();
    let mut seen: BTreeMap<i32, Vec<&str>> = BTreeMap::new();
    for port in &service.spec.ports {
        if port.node_port == 0 {
            continue;
        }
        let protocols = seen.entry(port.node_port).or_default();
        if protocols.is_empty() || protocols.contains(&port.protocol.as_str()) {
            ports.push(port.node_port);
        }
        if !protocols.contains(&port.protocol.as_str()) {
            protocols.push(&port.protocol);
        }
    }
    let health = service.spec.health_check_node_port;
    if health != 0 && seen.get(&health).is_none_or(|p| p.contains(&"TCP")) {
        ports.push(health);
    }
    ports.into_iter().filter_map(|p| u32::try_from(p).ok()).collect()
}

/// The stored ClusterIPs in key order (what a repair loop walks), with the Service's name.
fn stored_ips(today: &World) -> Vec<(String, IpAddr)> {
    today
        .services
        .values()
        .filter(|s| s.service.needs_cluster_ip())
        .flat_map(|s| {
            let name = format!("{}/{}", s.service.metadata.namespace, s.service.metadata.name);
            s.service
                .spec
                .cluster_ips
                .iter()
                .filter_map(move |t| parse_ip_sloppy(t).map(|ip| (name.clone(), ip)))
        })
        .collect()
}

/// The flag ranges of a profile, as text.
fn flag_ranges(profile: &Profile) -> String {
    let ranges: Vec<String> =
        profile.service_cluster_ip_ranges.iter().map(ToString::to_string).collect();
    ranges.join(", ")
}

/// A few addresses of a list, for a finding about many.
fn examples(ips: &[(String, IpAddr)], event: impl Fn(IpAddr) -> String) -> String {
    let shown: Vec<String> = ips
        .iter()
        .take(EXAMPLES)
        .map(|(service, ip)| format!("{service}: \"{}\"", event(*ip)))
        .collect();
    let more = ips.len().saturating_sub(EXAMPLES);
    let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
    format!("{}{tail}", shown.join(", "))
}

/// The move to the IPAddress allocator (or back to the bitmap), and the bitmap's dual write
/// starting or stopping.
fn allocator_move(sides: &Sides, today: &World, crossed: &Crossed, out: &mut Vec<Finding>) {
    let (from, to) = (&sides.from.profile, &sides.to.profile);
    let causes: Vec<Cause> = crossed
        .allocation
        .iter()
        .chain(crossed.gates.iter().filter(|c| {
            c.id == "gate:MultiCIDRServiceAllocator" || c.id == "gate:DisableAllocatorDualWrite"
        }))
        .chain(crossed.profile.iter().filter(|c| c.id == "profile:serviceCIDRs"))
        .cloned()
        .collect();
    let ips = stored_ips(today);
    let release = &sides.to.version;
    let not_allocated_ip = |ip: IpAddr| {
        format!(
            "Cluster IP [{}]: {} is not allocated; repairing",
            IpFamily::of(ip).as_str(),
            ip_string(ip)
        )
    };
    let not_allocated_bitmap = |ip: IpAddr| {
        format!(
            "Cluster IP [{}]:{} is not allocated; repairing",
            IpFamily::of(ip).as_str(),
            ip_string(ip)
        )
    };
    let finding = |severity, message: String| {
        Finding::new(Area::Allocation, severity, message).caused_by(&causes)
    };
    match (from.multi_cidr(), to.multi_cidr()) {
        (false, true) => {
            let bitmap = if to.allocator_dual_write() {
                "it still writes the bitmap of the flag ranges too (DisableAllocatorDualWrite off)"
            } else {
                "it no longer writes the bitmap of the flag ranges (DisableAllocatorDualWrite on)"
            };
            let repaired = if ips.is_empty() {
                "no ClusterIP is in use, so its repair loop has nothing to create".to_owned()
            } else {
                format!(
                    "its repair loop creates an IPAddress object for each of the {} ClusterIPs in use and reports ClusterIPNotAllocated on each Service ({})",
                    ips.len(),
                    examples(&ips, not_allocated_ip)
                )
            };
            out.push(finding(Impact::Changes, format!(
                "kube-apiserver {release} allocates ClusterIPs from ServiceCIDR and IPAddress objects (MultiCIDRServiceAllocator on): it creates the default ServiceCIDR \"kubernetes\" for {}; {repaired}; {bitmap}",
                flag_ranges(to)
            )));
            for (name, cidrs) in &sides.to.service_cidrs {
                out.push(
                    finding(Impact::Note, format!(
                        "ServiceCIDR {name} ({}) takes effect: kube-apiserver {release} allocates from it too (it was ignored without MultiCIDRServiceAllocator)",
                        cidrs.join(", ")
                    ))
                    .about(format!("ServiceCIDR {name}")),
                );
            }
        }
        (true, false) => {
            let stale = if from.allocator_dual_write() || ips.is_empty() {
                String::new()
            } else {
                format!(
                    "; the bitmap was not written today (DisableAllocatorDualWrite on), so its repair loop finds every ClusterIP missing and reports ClusterIPNotAllocated on each of the {} Services holding one ({})",
                    ips.len(),
                    examples(&ips, not_allocated_bitmap)
                )
            };
            out.push(finding(Impact::Changes, format!(
                "kube-apiserver {release} allocates ClusterIPs from the bitmap of {} again (MultiCIDRServiceAllocator off): ServiceCIDR and IPAddress objects stay but are no longer read{stale}",
                flag_ranges(to)
            )));
        }
        (true, true) if from.allocator_dual_write() != to.allocator_dual_write() => {
            let message = if to.allocator_dual_write() {
                format!(
                    "kube-apiserver {release} writes the bitmap of {} again besides IPAddress objects (DisableAllocatorDualWrite off); its bitmap repair loop marks the ClusterIPs allocated while it was not written ({})",
                    flag_ranges(to),
                    if ips.is_empty() {
                        "none".to_owned()
                    } else {
                        examples(&ips, not_allocated_bitmap)
                    }
                )
            } else {
                format!(
                    "kube-apiserver {release} no longer writes the bitmap of {} (DisableAllocatorDualWrite on): a later rollback to a release without the IPAddress allocator finds it stale and rebuilds it with its repair loop",
                    flag_ranges(to)
                )
            };
            out.push(finding(Impact::Note, message));
        }
        _ => {}
    }
}

/// Static bands that appear, disappear or move, and the addresses in use that change band.
fn bands(today: &World, target: &World, crossed: &Crossed, out: &mut Vec<Finding>) {
    let before = Report::new(today, Vec::new(), Vec::new(), false);
    let after = Report::new(target, Vec::new(), Vec::new(), false);
    let causes = crossed.only(&[
        "allocation:ipStaticSubrange",
        "allocation:smallRangeRule",
        "allocation:ipAddressAllocator",
        "gate:ServiceIPStaticSubrange",
        "gate:MultiCIDRServiceAllocator",
        "profile:serviceClusterIPRanges",
        "profile:serviceCIDRs",
    ]);
    let port_causes = crossed.only(&[
        "allocation:nodePortStaticSubrange",
        "gate:ServiceNodePortStaticSubrange",
        "profile:serviceNodePortRange",
    ]);
    let band = |r: &RangeReport| r.static_band.as_ref().map(|b| format!("{}–{}", b.first, b.last));
    for new in &after.ranges {
        // The same CIDR, else the range of the family that replaces one.
        let old = before.ranges.iter().find(|r| r.cidr == new.cidr).or_else(|| {
            before
                .ranges
                .iter()
                .find(|r| r.family == new.family && !after.ranges.iter().any(|a| a.cidr == r.cidr))
        });
        let Some(old) = old else { continue };
        let (was, is) = (band(old), band(new));
        let message = match (&was, &is) {
            (None, None) => continue,
            (Some(w), Some(i)) if w == i && old.cidr == new.cidr => continue,
            (None, Some(i)) => {
                format!("{} gains a static band, {i}: dynamic picks avoid it from now on", new.cidr)
            }
            (Some(w), None) => format!(
                "the static band {w} of {} goes: dynamic picks may take any address",
                old.cidr
            ),
            (Some(w), Some(i)) => {
                format!("the static band moves from {w} ({}) to {i} ({})", old.cidr, new.cidr)
            }
        };
        let moved = moved_addresses(today, target);
        let suffix = if moved.is_empty() {
            String::new()
        } else {
            format!("; addresses in use that change band: {}", moved.join(", "))
        };
        out.push(
            Finding::new(Area::Allocation, Impact::Changes, format!("{message}{suffix}"))
                .caused_by(&causes),
        );
    }
    let (old, new) = (&before.node_port_range, &after.node_port_range);
    let port_band = |b: &Option<crate::report::BandReport>| {
        b.as_ref().map(|b| format!("{}–{}", b.first, b.last))
    };
    let (was, is) = (port_band(&old.static_band), port_band(&new.static_band));
    let message = match (&was, &is) {
        (None, Some(i)) => Some(format!(
            "the NodePort range {} gains a static band, {i}: dynamic node ports avoid it from now on",
            new.range
        )),
        (Some(w), None) => {
            Some(format!("the static band {w} of the NodePort range {} goes", old.range))
        }
        (Some(w), Some(i)) if w != i => Some(format!(
            "the NodePort static band moves from {w} ({}) to {i} ({})",
            old.range, new.range
        )),
        _ => None,
    };
    if let Some(message) = message {
        out.push(Finding::new(Area::Allocation, Impact::Changes, message).caused_by(&port_causes));
    }
}

/// The stored addresses whose band differs between today's allocators and the target's, as
/// `ip (ns/name): static → dynamic`, at most [`EXAMPLES`] of them and how many more.
fn moved_addresses(today: &World, target: &World) -> Vec<String> {
    let (Some(a), Some(b)) = (&today.allocators, &target.allocators) else { return Vec::new() };
    let mut moved = Vec::new();
    let mut count = 0;
    for (service, ip) in stored_ips(today) {
        let (x, y) = (a.ip_band(ip), b.ip_band(ip));
        if x != y {
            count += 1;
            if moved.len() < EXAMPLES {
                moved.push(format!(
                    "{} ({service}): {} → {}",
                    ip_string(ip),
                    x.as_str(),
                    y.as_str()
                ));
            }
        }
    }
    if count > EXAMPLES {
        moved.push(format!("{} more", count - EXAMPLES));
    }
    moved
}
