//! Service-level allocation as the REST storage does it on create and delete (`alloc.go`):
//! family and policy defaulting, ClusterIPs per family, NodePorts and the health-check port,
//! atomic per Service.

use std::collections::BTreeMap;
use std::net::IpAddr;

use ipnet::IpNet;

use crate::allocation::{
    AllocationError, IpRange, MetaAllocator, PortAllocator, ip_offset_for,
};
use crate::field::{FieldError, GoValue};
use crate::model::Service;
use crate::net::{IpFamily, parse_ip_sloppy};
use crate::profile::Profile;

/// The allocator of one family: the bitmap, or ServiceCIDR/IPAddress objects.
#[derive(Debug, Clone)]
pub(crate) enum FamilyAllocator {
    Bitmap(IpRange),
    Objects(MetaAllocator),
}

impl FamilyAllocator {
    fn allocate(&mut self, ip: IpAddr) -> Result<(), AllocationError> {
        match self {
            FamilyAllocator::Bitmap(r) => r.allocate(ip),
            FamilyAllocator::Objects(m) => m.allocate(ip),
        }
    }

    fn allocate_next(&mut self) -> Result<IpAddr, AllocationError> {
        match self {
            FamilyAllocator::Bitmap(r) => r.allocate_next(),
            FamilyAllocator::Objects(m) => m.allocate_next(),
        }
    }

    fn release(&mut self, ip: IpAddr) {
        match self {
            FamilyAllocator::Bitmap(r) => r.release(ip),
            FamilyAllocator::Objects(m) => {
                // Upstream ignores release errors of the IPAddress allocator.
                let _ = m.release(ip);
            }
        }
    }
}

/// Which band an allocated address or port lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Band {
    Static,
    Dynamic,
    /// The range has no bands (gate off or a tiny range).
    None,
}

impl Band {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Band::Static => "static",
            Band::Dynamic => "dynamic",
            Band::None => "none",
        }
    }
}

/// What a Service holds, so it can be released and reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ServiceAllocation {
    /// (family, address, requested by the user).
    pub(crate) ips: Vec<(IpFamily, IpAddr, bool)>,
    /// NodePorts taken by this Service (each once), with whether they were requested.
    pub(crate) node_ports: Vec<(u32, bool)>,
    /// The health-check NodePort, with whether it was requested.
    pub(crate) health_check_node_port: Option<(u32, bool)>,
}

impl ServiceAllocation {
    /// After an update re-took the same addresses and ports, keep whether the user had asked
    /// for them originally (carried values are not new requests).
    pub(crate) fn keep_requested_flags(&mut self, old: &ServiceAllocation) {
        for (family, ip, requested) in &mut self.ips {
            if let Some((_, _, was)) = old.ips.iter().find(|(f, i, _)| f == family && i == ip) {
                *requested = *was;
            }
        }
        for (port, requested) in &mut self.node_ports {
            if let Some((_, was)) = old.node_ports.iter().find(|(p, _)| p == port) {
                *requested = *was;
            }
        }
        if let (Some((port, requested)), Some((old_port, was))) =
            (&mut self.health_check_node_port, old.health_check_node_port)
        {
            if *port == old_port {
                *requested = was;
            }
        }
    }
}

/// Why a Service could not be allocated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AllocFailure {
    /// 422 Invalid with these causes.
    Invalid(Vec<FieldError>),
    /// 500 InternalError with this message (after `Internal error occurred: `).
    Internal(String),
}

/// The cluster's allocators.
#[derive(Debug, Clone)]
pub(crate) struct Cluster {
    primary: IpFamily,
    families: BTreeMap<IpFamily, FamilyAllocator>,
    pub(crate) ports: PortAllocator,
    /// StrictIPCIDRValidation: the pre-allocation validation rejects leading zeros too.
    strict_ip: bool,
}

impl Cluster {
    /// Allocators for a profile; `service_cidrs` are the ranges of ServiceCIDR objects in order
    /// (used only when MultiCIDRServiceAllocator is on).
    pub(crate) fn new(profile: &Profile, service_cidrs: &[IpNet]) -> Result<Cluster, AllocationError> {
        let primary = profile
            .service_cluster_ip_ranges
            .first()
            .map_or(IpFamily::V4, IpFamily::of_net);
        let mut families = BTreeMap::new();
        if profile.multi_cidr() {
            let mut by_family: BTreeMap<IpFamily, Vec<(IpNet, u128)>> = BTreeMap::new();
            for net in profile.service_cluster_ip_ranges.iter().chain(service_cidrs) {
                by_family
                    .entry(IpFamily::of_net(net))
                    .or_default()
                    .push((*net, ip_offset_for(profile, net)));
            }
            for (family, cidrs) in by_family {
                families.insert(family, FamilyAllocator::Objects(MetaAllocator::new(family, &cidrs, profile.seed)?));
            }
        } else {
            for net in &profile.service_cluster_ip_ranges {
                let range = IpRange::new(*net, ip_offset_for(profile, net), profile.seed);
                families.insert(IpFamily::of_net(net), FamilyAllocator::Bitmap(range));
            }
        }
        let ports = PortAllocator::new(
            profile.service_node_port_range,
            profile.node_port_static_subrange(),
            profile.seed,
        );
        Ok(Cluster { primary, families, ports, strict_ip: profile.gate("StrictIPCIDRValidation") })
    }

    pub(crate) fn primary(&self) -> IpFamily {
        self.primary
    }

    pub(crate) fn families(&self) -> &BTreeMap<IpFamily, FamilyAllocator> {
        &self.families
    }

    fn dual_stack(&self) -> bool {
        self.families.len() >= 2
    }

    /// Band of an allocated address.
    pub(crate) fn ip_band(&self, ip: IpAddr) -> Band {
        match self.families.get(&IpFamily::of(ip)) {
            Some(FamilyAllocator::Bitmap(r)) if r.offset() > 0 => {
                if r.in_static_band(ip) { Band::Static } else { Band::Dynamic }
            }
            Some(FamilyAllocator::Objects(m)) => {
                let Some(net) = m.cidr_of(ip) else { return Band::None };
                match m.geometry(&net) {
                    Some((g, _)) if g.offset > 0 => {
                        let value = g.value_of(ip).unwrap_or(0);
                        if value >= g.first && value - g.first < g.offset { Band::Static } else { Band::Dynamic }
                    }
                    _ => Band::None,
                }
            }
            _ => Band::None,
        }
    }

    /// Band of an allocated NodePort.
    pub(crate) fn port_band(&self, port: u32) -> Band {
        if self.ports.offset() == 0 {
            Band::None
        } else if self.ports.in_static_band(port) {
            Band::Static
        } else {
            Band::Dynamic
        }
    }

    /// Allocates everything a new Service needs and writes the results into it; atomic.
    pub(crate) fn create(&mut self, svc: &mut Service) -> Result<ServiceAllocation, AllocFailure> {
        // normalizeClusterIPs (create branch).
        if !svc.spec.cluster_ip.is_empty() && svc.spec.cluster_ips.is_empty() {
            svc.spec.cluster_ips = vec![svc.spec.cluster_ip.clone()];
        }
        let mut allocation = ServiceAllocation::default();
        if svc.spec.type_ != "ExternalName" {
            self.init_ip_family_fields(svc).map_err(AllocFailure::Invalid)?;
            if let Err(failure) = self.alloc_cluster_ips(svc, &mut allocation) {
                self.release(&allocation);
                return Err(failure);
            }
        }
        if let Err(failure) = self.alloc_node_ports(svc, &mut allocation) {
            self.release(&allocation);
            return Err(failure);
        }
        Ok(allocation)
    }

    /// Gives back everything a Service held.
    pub(crate) fn release(&mut self, allocation: &ServiceAllocation) {
        for (family, ip, _) in &allocation.ips {
            if let Some(a) = self.families.get_mut(family) {
                a.release(*ip);
            }
        }
        for (port, _) in &allocation.node_ports {
            self.ports.release(*port);
        }
        if let Some((port, _)) = allocation.health_check_node_port {
            self.ports.release(port);
        }
    }

    /// Takes back exactly what a Service held (after a failed update released it).
    pub(crate) fn reclaim(&mut self, allocation: &ServiceAllocation) {
        for (family, ip, _) in &allocation.ips {
            if let Some(a) = self.families.get_mut(family) {
                let _ = a.allocate(*ip);
            }
        }
        for (port, _) in &allocation.node_ports {
            let _ = self.ports.allocate(*port);
        }
        if let Some((port, _)) = allocation.health_check_node_port {
            let _ = self.ports.allocate(port);
        }
    }

    /// `initIPFamilyFields` for a create (allocation.md §3.2).
    fn init_ip_family_fields(&self, svc: &mut Service) -> Result<(), Vec<FieldError>> {
        let spec = &mut svc.spec;
        let selectorless = spec.selector.as_ref().is_none_or(|s| s.is_empty());
        if spec.ip_family_policy.is_none() {
            let policy = if spec.cluster_ip == "None" && selectorless { "RequireDualStack" } else { "SingleStack" };
            spec.ip_family_policy = Some(policy.to_owned());
        }
        let errors = crate::validation::cluster_ips_related_fields(svc, self.strict_ip, &[]);
        if !errors.is_empty() {
            return Err(errors);
        }
        let spec = &mut svc.spec;
        let policy = spec.ip_family_policy.clone().unwrap_or_default();
        if policy == "SingleStack" {
            if spec.cluster_ips.len() > 1 {
                return Err(vec![FieldError::invalid(
                    "spec.ipFamilyPolicy",
                    GoValue::Str(policy),
                    "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
                )]);
            }
            if spec.ip_families.len() > 1 {
                return Err(vec![FieldError::invalid(
                    "spec.ipFamilyPolicy",
                    GoValue::Str(policy),
                    "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
                )]);
            }
        }
        // Infer families from the requested IPs, in index order, stopping at "None".
        for (i, ip) in spec.cluster_ips.clone().iter().enumerate() {
            if ip == "None" {
                break;
            }
            let Some(addr) = parse_ip_sloppy(ip) else { continue };
            let family = IpFamily::of(addr);
            if spec.ip_families.len() < i + 1 {
                if !self.families.contains_key(&family) {
                    return Err(vec![FieldError::invalid(
                        format!("spec.clusterIPs[{i}]"),
                        GoValue::strings(&spec.cluster_ips),
                        format!("{} is not configured on this cluster", family.as_str()),
                    )]);
                }
                spec.ip_families.push(family.as_str().to_owned());
            }
        }
        // Headless and selector-less: no allocation, families defaulted even on single-stack.
        let headless = spec.cluster_ips.first().is_some_and(|ip| ip == "None");
        if headless && selectorless {
            if spec.ip_families.is_empty() {
                spec.ip_families.push(self.primary.as_str().to_owned());
            }
            if policy != "SingleStack" && spec.ip_families.len() == 1 {
                let other = IpFamily::parse(&spec.ip_families[0]).unwrap_or(self.primary).other();
                spec.ip_families.push(other.as_str().to_owned());
            }
            return Ok(());
        }
        let mut errors = Vec::new();
        if policy == "RequireDualStack" && !self.dual_stack() {
            errors.push(FieldError::invalid(
                "spec.ipFamilyPolicy",
                GoValue::Str(policy.clone()),
                "this cluster is not configured for dual-stack services",
            ));
        }
        for (i, family) in spec.ip_families.iter().enumerate() {
            let configured = IpFamily::parse(family).is_some_and(|f| self.families.contains_key(&f));
            if !configured {
                errors.push(FieldError::invalid(
                    format!("spec.ipFamilies[{i}]"),
                    GoValue::Str(family.clone()),
                    "not configured on this cluster",
                ));
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        if spec.ip_families.is_empty() {
            spec.ip_families.push(self.primary.as_str().to_owned());
        }
        if policy != "SingleStack" && spec.ip_families.len() == 1 && self.dual_stack() {
            let other = IpFamily::parse(&spec.ip_families[0]).unwrap_or(self.primary).other();
            spec.ip_families.push(other.as_str().to_owned());
        }
        Ok(())
    }

    /// `allocClusterIPs`: one address per family, requested ones statically.
    fn alloc_cluster_ips(&mut self, svc: &mut Service, allocation: &mut ServiceAllocation) -> Result<(), AllocFailure> {
        let spec = &mut svc.spec;
        if spec.cluster_ips.first().is_some_and(|ip| ip == "None") {
            spec.cluster_ip = "None".to_owned();
            return Ok(());
        }
        let requested = spec.cluster_ips.clone();
        let mut result = Vec::new();
        for (i, family_name) in spec.ip_families.clone().iter().enumerate() {
            let Some(family) = IpFamily::parse(family_name) else { continue };
            let Some(allocator) = self.families.get_mut(&family) else { continue };
            match requested.get(i).filter(|ip| !ip.is_empty()) {
                Some(text) => {
                    let Some(ip) = parse_ip_sloppy(text) else {
                        return Err(AllocFailure::Internal(format!("failed to parse service IP {text:?}")));
                    };
                    if let Err(err) = allocator.allocate(ip) {
                        return Err(AllocFailure::Invalid(vec![FieldError::invalid(
                            "spec.clusterIPs",
                            GoValue::strings(&requested),
                            format!("failed to allocate IP {text}: {err}"),
                        )]));
                    }
                    allocation.ips.push((family, ip, true));
                    result.push(text.clone());
                }
                None => match allocator.allocate_next() {
                    Ok(ip) => {
                        allocation.ips.push((family, ip, false));
                        result.push(ip.to_string());
                    }
                    Err(err) => {
                        return Err(AllocFailure::Internal(format!("failed to allocate a serviceIP: {err}")));
                    }
                },
            }
        }
        spec.cluster_ips = result;
        spec.cluster_ip = spec.cluster_ips.first().cloned().unwrap_or_default();
        Ok(())
    }

    /// `initNodePorts` and `initHealthCheckNodePort`.
    fn alloc_node_ports(&mut self, svc: &mut Service, allocation: &mut ServiceAllocation) -> Result<(), AllocFailure> {
        let spec = &mut svc.spec;
        let wants_node_ports = spec.type_ == "NodePort"
            || (spec.type_ == "LoadBalancer" && spec.allocate_load_balancer_node_ports != Some(false));
        let keeps_node_ports = wants_node_ports || spec.type_ == "LoadBalancer";
        if keeps_node_ports {
            let mut errors = Vec::new();
            for i in 0..spec.ports.len() {
                let requested = spec.ports[i].node_port;
                if requested != 0 {
                    let port = u32::try_from(requested).unwrap_or(0);
                    // A number already taken by this Service (TCP and UDP of one port) is shared.
                    if allocation.node_ports.iter().any(|(p, _)| *p == port) {
                        continue;
                    }
                    match self.ports.allocate(port) {
                        Ok(()) => allocation.node_ports.push((port, true)),
                        Err(err) => errors.push(FieldError::invalid(
                            format!("spec.ports[{i}].nodePort"),
                            GoValue::Int(i64::from(requested)),
                            err.to_string(),
                        )),
                    }
                } else if wants_node_ports {
                    // Reuse the NodePort of another entry with the same port number.
                    let same_port = spec.ports[i].port;
                    let shared = spec
                        .ports
                        .iter()
                        .enumerate()
                        .find(|(j, p)| *j != i && p.port == same_port && p.node_port != 0)
                        .map(|(_, p)| p.node_port);
                    if let Some(node_port) = shared {
                        spec.ports[i].node_port = node_port;
                        continue;
                    }
                    match self.ports.allocate_next() {
                        Ok(port) => {
                            allocation.node_ports.push((port, false));
                            spec.ports[i].node_port = i32::try_from(port).unwrap_or(0);
                        }
                        Err(err) => return Err(AllocFailure::Internal(format!("failed to allocate a nodePort: {err}"))),
                    }
                }
            }
            if !errors.is_empty() {
                return Err(AllocFailure::Invalid(errors));
            }
        }
        let needs_health_check = spec.type_ == "LoadBalancer" && spec.external_traffic_policy == "Local";
        if needs_health_check {
            let requested = spec.health_check_node_port;
            if requested != 0 {
                let port = u32::try_from(requested).unwrap_or(0);
                if let Err(err) = self.ports.allocate(port) {
                    return Err(AllocFailure::Internal(format!(
                        "failed to allocate requested HealthCheck NodePort {requested}: {err}"
                    )));
                }
                allocation.health_check_node_port = Some((port, true));
            } else {
                match self.ports.allocate_next() {
                    Ok(port) => {
                        allocation.health_check_node_port = Some((port, false));
                        spec.health_check_node_port = i32::try_from(port).unwrap_or(0);
                    }
                    Err(err) => {
                        return Err(AllocFailure::Internal(format!(
                            "failed to allocate a HealthCheck NodePort {requested}: {err}"
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}
