//! Service-level allocation as the REST storage does it on create, update and delete
//! (`alloc.go`): family and policy defaulting, ClusterIPs per family, NodePorts and the
//! health-check port, as one transaction per request.

use std::collections::BTreeMap;
use std::net::IpAddr;

use ipnet::IpNet;

use crate::allocation::{
    AllocationError, IpRange, MetaAllocator, Picks, PortAllocator, PortError, ip_offset_for,
};
use crate::field::{FieldError, GoValue, go_quote};
use crate::model::Service;
use crate::net::{IpFamily, ip_string, parse_ip_sloppy};
use crate::profile::{Feature, Profile};
use crate::validation::{Rule, rule_in_force};

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

/// What the IPAddress storage says of a parent reference naming Service `name`
/// (`validateIPAddressParentReference`, pkg/apis/networking/validation/validation.go, v1.27.16 to
/// v1.37.2: the name is required and must be a valid path segment,
/// `IsValidPathSegmentName` of apimachinery's api/validation/path).
fn parent_ref_name_error(name: &str) -> Option<String> {
    let field = "spec.parentRef.name";
    let errors: Vec<String> = if name.is_empty() {
        vec![FieldError::required(field, "").message(false)]
    } else {
        crate::validation::path_segment_name(name)
            .into_iter()
            .map(|why| {
                FieldError::invalid(field, GoValue::Str(name.to_owned()), why).message(false)
            })
            .collect()
    };
    // NewInvalid lists several errors in brackets.
    match errors.len() {
        0 => None,
        1 => errors.into_iter().next(),
        _ => Some(format!("[{}]", errors.join(", "))),
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

/// Why a Service could not be allocated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AllocFailure {
    /// 422 Invalid with these causes.
    Invalid(Vec<FieldError>),
    /// 500 InternalError with this message (after `Internal error occurred: `).
    Internal(String),
    /// 500 with reason Unknown: a plain Go error returned by the REST storage, shown verbatim
    /// (`duplicate nodePort: {TCP 30080}` from `updateNodePorts`).
    Unknown(String),
    /// kube-apiserver panics in the storage: the client gets the 500 the panic-recovery filter
    /// writes (apiserver `pkg/server/filters/wrap.go` `WithPanicRecovery`, its text is
    /// [`PANIC_RESPONSE`]); the string says why it panics, for svclab's own advisory.
    Panic(String),
}

/// The body of the 500 a request gets when kube-apiserver panics while serving it (apiserver
/// `pkg/server/filters/wrap.go` `WithPanicRecovery`, `http.Error`; v0.24 to v0.37).
pub(crate) const PANIC_RESPONSE: &str =
    "This request caused apiserver to panic. Look in the logs for details.";

/// What one create or update took and what it gives up, as the REST storage's transaction
/// (`txn`, `portallocator` operation): allocations happen at once and are undone on failure;
/// releases of values the old object held are deferred until the write succeeds, so a
/// dynamic pick in the same request never lands on them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Transaction {
    taken_ips: Vec<(IpFamily, IpAddr, bool)>,
    taken_ports: Vec<(u32, bool)>,
    taken_health_check: Option<(u32, bool)>,
    deferred_ips: Vec<(IpFamily, IpAddr)>,
    deferred_ports: Vec<u32>,
}

impl Transaction {
    /// The addresses and node ports this request asked for by value (not kept from the old
    /// object, not picked by the allocator): what a policy calls explicit.
    pub(crate) fn requested(&self) -> (Vec<IpAddr>, Vec<u32>) {
        (
            self.taken_ips.iter().filter(|t| t.2).map(|t| t.1).collect(),
            self.taken_ports.iter().filter(|t| t.1).map(|t| t.0).collect(),
        )
    }
}

/// The cluster's allocators.
#[derive(Debug, Clone)]
pub(crate) struct Allocators {
    primary: IpFamily,
    families: BTreeMap<IpFamily, FamilyAllocator>,
    pub(crate) ports: PortAllocator,
    /// StrictIPCIDRValidation: the pre-allocation validation rejects leading zeros too.
    strict_ip: bool,
    /// How a failed dynamic ClusterIP pick is answered (`allocIPs`, by release).
    pick_failure: PickFailure,
}

/// What `allocIPs` of `pkg/registry/core/service/storage/alloc.go` makes of a failed
/// `AllocateNext`, by release (`releases::Rule::ServiceIpNonFullInvalid`,
/// `releases::Rule::ServiceIpFullNamesService`).
#[derive(Debug, Clone, Copy)]
struct PickFailure {
    /// 1.35+: an error other than "range is full" is a 422 on `spec.clusterIPs` ("failed to
    /// allocate IP: ..."); before, every error is a 500.
    other_errors_invalid: bool,
    /// 1.36+: the 500 names the Service ("failed to allocate a serviceIP for Service %q").
    names_service: bool,
}

impl PickFailure {
    fn of(profile: &Profile) -> PickFailure {
        PickFailure {
            other_errors_invalid: rule_in_force(Rule::ServiceIpNonFullInvalid, profile),
            names_service: rule_in_force(Rule::ServiceIpFullNamesService, profile),
        }
    }

    /// The answer to `err` from the pick of `service`'s address, `cluster_ips` being
    /// `spec.clusterIPs` with the empty markers of the families to pick.
    fn answer(self, err: &AllocationError, service: &str, cluster_ips: &[String]) -> AllocFailure {
        match err {
            // Go's `rand.Intn` with a negative bound (kubernetes#115316): a panic, not an error.
            AllocationError::OffsetExceedsRange => AllocFailure::Panic(err.to_string()),
            AllocationError::Full if self.names_service => AllocFailure::Internal(format!(
                "failed to allocate a serviceIP for Service {}: {err}",
                go_quote(service)
            )),
            AllocationError::Full => {
                AllocFailure::Internal(format!("failed to allocate a serviceIP: {err}"))
            }
            _ if self.other_errors_invalid => AllocFailure::Invalid(vec![FieldError::invalid(
                "spec.clusterIPs",
                GoValue::strings(cluster_ips),
                format!("failed to allocate IP: {err}"),
            )]),
            _ if self.names_service => AllocFailure::Internal(format!(
                "failed to allocate a serviceIP for Service {}: {err}",
                go_quote(service)
            )),
            _ => AllocFailure::Internal(format!("failed to allocate a serviceIP: {err}")),
        }
    }
}

impl Allocators {
    /// Allocators for a profile; `service_cidrs` are the ranges of ServiceCIDR objects in order
    /// (used only when MultiCIDRServiceAllocator is on).
    pub(crate) fn new(
        profile: &Profile,
        service_cidrs: &[IpNet],
    ) -> Result<Allocators, AllocationError> {
        let primary =
            profile.service_cluster_ip_ranges.first().map_or(IpFamily::V4, IpFamily::of_net);
        let mut families = BTreeMap::new();
        if profile.multi_cidr() {
            let mut by_family: BTreeMap<IpFamily, Vec<(IpNet, u128)>> = BTreeMap::new();
            for net in &profile.service_cluster_ip_ranges {
                by_family
                    .entry(IpFamily::of_net(net))
                    .or_default()
                    .push((*net, ip_offset_for(profile, net)));
            }
            // kube-apiserver makes one MetaAllocator per family of its flag ranges
            // (`pkg/registry/core/rest/storage_core.go`: `NewMetaAllocator(..., isIPv6 of
            // --service-cluster-ip-range)`, and one more for the secondary range, 1.29 to 1.37),
            // and each takes only the ServiceCIDRs of its own family (`cidrallocator.go`
            // `addServiceCIDR`). A ServiceCIDR of another family is stored but allocates
            // nothing: on a single-stack cluster the other family stays "not configured".
            for net in service_cidrs {
                if let Some(cidrs) = by_family.get_mut(&IpFamily::of_net(net)) {
                    cidrs.push((*net, ip_offset_for(profile, net)));
                }
            }
            let dual_write = profile.allocator_dual_write();
            for (family, cidrs) in by_family {
                let mut meta = MetaAllocator::new(family, &cidrs, Picks::of(profile))?;
                // The flag-configured CIDR of the family keeps its bitmap while dual write is on.
                if dual_write
                    && let Some(flag) = profile
                        .service_cluster_ip_ranges
                        .iter()
                        .find(|n| IpFamily::of_net(n) == family)
                {
                    meta = meta.with_dual_write(IpRange::new(
                        *flag,
                        ip_offset_for(profile, flag),
                        Picks::of(profile),
                    ));
                }
                families.insert(family, FamilyAllocator::Objects(meta));
            }
        } else {
            for net in &profile.service_cluster_ip_ranges {
                let range = IpRange::new(*net, ip_offset_for(profile, net), Picks::of(profile));
                families.insert(IpFamily::of_net(net), FamilyAllocator::Bitmap(range));
            }
        }
        let ports = PortAllocator::new(
            profile.service_node_port_range,
            profile.node_port_static_subrange(),
            Picks::of(profile),
        );
        Ok(Allocators {
            primary,
            families,
            ports,
            strict_ip: profile.gate(Feature::StrictIPCIDRValidation),
            pick_failure: PickFailure::of(profile),
        })
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
                if r.in_static_band(ip) {
                    Band::Static
                } else {
                    Band::Dynamic
                }
            }
            Some(FamilyAllocator::Objects(m)) => match m.geometry_of(ip) {
                Some(g) if g.offset > 0 => {
                    let value = g.value_of(ip).unwrap_or(0);
                    if value >= g.first && value - g.first < g.offset {
                        Band::Static
                    } else {
                        Band::Dynamic
                    }
                }
                _ => Band::None,
            },
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

    /// `allocateCreate`: family defaulting, ClusterIPs, NodePorts and the health-check port of
    /// a new Service, written into it. On failure everything taken is given back; on success
    /// the caller [`commit`](Allocators::commit)s or, when validation rejects the object,
    /// [`revert`](Allocators::revert)s.
    pub(crate) fn create(&mut self, svc: &mut Service) -> Result<Transaction, AllocFailure> {
        // normalizeClusterIPs (create branch).
        if !svc.spec.cluster_ip.is_empty() && svc.spec.cluster_ips.is_empty() {
            svc.spec.cluster_ips = vec![svc.spec.cluster_ip.clone()];
        }
        let mut txn = Transaction::default();
        let result = self.allocate_create(svc, &mut txn);
        match result {
            Ok(()) => Ok(txn),
            Err(failure) => {
                self.revert(txn);
                Err(failure)
            }
        }
    }

    fn allocate_create(
        &mut self,
        svc: &mut Service,
        txn: &mut Transaction,
    ) -> Result<(), AllocFailure> {
        if svc.spec.type_ != "ExternalName" {
            self.init_ip_family_fields(svc, None).map_err(AllocFailure::Invalid)?;
        }
        // IPs strictly before ports: when both would fail, only the IP error is reported.
        self.alloc_cluster_ips(svc, txn)?;
        if svc.needs_node_port() {
            self.init_node_ports(svc, txn)?;
        }
        if svc.needs_health_check() {
            self.alloc_health_check_node_port(svc, txn)?;
        }
        Ok(())
    }

    /// `beginUpdate` after the on-read defaulting: `allocateUpdate` of `new` against the stored
    /// `old`. Only what changes is allocated (a secondary family on upgrade, all IPs when
    /// leaving ExternalName, node ports not held before, a health-check port when one becomes
    /// needed); what the old object gives up is released on [`commit`](Allocators::commit).
    pub(crate) fn update(
        &mut self,
        new: &mut Service,
        old: &Service,
    ) -> Result<Transaction, AllocFailure> {
        let mut txn = Transaction::default();
        let result = self.allocate_update(new, old, &mut txn);
        match result {
            Ok(()) => Ok(txn),
            Err(failure) => {
                self.revert(txn);
                Err(failure)
            }
        }
    }

    fn allocate_update(
        &mut self,
        new: &mut Service,
        old: &Service,
        txn: &mut Transaction,
    ) -> Result<(), AllocFailure> {
        if new.spec.type_ != "ExternalName" {
            self.init_ip_family_fields(new, Some(old)).map_err(AllocFailure::Invalid)?;
        }
        self.update_cluster_ips(new, old, txn)?;
        self.update_node_ports_and_health_check(new, old, txn)
    }

    /// The write succeeded: give back what the old object held and the new one does not,
    /// and return what the Service holds now (`old` minus the releases plus the new takes).
    pub(crate) fn commit(
        &mut self,
        txn: Transaction,
        old: &ServiceAllocation,
    ) -> ServiceAllocation {
        for (family, ip) in &txn.deferred_ips {
            if let Some(a) = self.families.get_mut(family) {
                a.release(*ip);
            }
        }
        for port in &txn.deferred_ports {
            self.ports.release(*port);
        }
        let mut held = old.clone();
        held.ips.retain(|(f, ip, _)| !txn.deferred_ips.contains(&(*f, *ip)));
        held.ips.extend(txn.taken_ips);
        held.node_ports.retain(|(p, _)| !txn.deferred_ports.contains(p));
        for (port, requested) in txn.taken_ports {
            if !held.node_ports.iter().any(|(p, _)| *p == port) {
                held.node_ports.push((port, requested));
            }
        }
        if held.health_check_node_port.is_some_and(|(p, _)| txn.deferred_ports.contains(&p)) {
            held.health_check_node_port = None;
        }
        if let Some(hc) = txn.taken_health_check {
            held.health_check_node_port = Some(hc);
        }
        held
    }

    /// The request failed after allocation (validation): give back what it took; nothing the
    /// old object held is touched.
    pub(crate) fn revert(&mut self, txn: Transaction) {
        for (family, ip, _) in &txn.taken_ips {
            if let Some(a) = self.families.get_mut(family) {
                a.release(*ip);
            }
        }
        for (port, _) in &txn.taken_ports {
            self.ports.release(*port);
        }
        if let Some((port, _)) = txn.taken_health_check {
            self.ports.release(port);
        }
    }

    /// Gives back everything a Service held (`releaseAllocatedResources` on delete).
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

    /// The repair loops' step for one stored address (`Repair.doRunOnce`, `RepairIPAddress.
    /// syncService`): mark it in use. `Err(None)`: its family is not configured at all.
    pub(crate) fn repair_ip(&mut self, ip: IpAddr) -> Result<(), Option<AllocationError>> {
        let family = self.families.get_mut(&IpFamily::of(ip)).ok_or(None)?;
        family.allocate(ip).map_err(Some)
    }

    /// The NodePort repair loop's step for one stored port (`portallocator/controller/repair.go`).
    pub(crate) fn repair_port(&mut self, port: u32) -> Result<(), PortError> {
        self.ports.allocate(port)
    }

    /// `initIPFamilyFields` of the Service REST storage; `old` is the stored object on an update.
    fn init_ip_family_fields(
        &self,
        svc: &mut Service,
        old: Option<&Service>,
    ) -> Result<(), Vec<FieldError>> {
        // A PreferDualStack Service whose IPs and families did not change is left alone, so a
        // cluster that gained or lost a family never silently up- or downgrades it.
        if old.is_some_and(|old| matching_prefer_dual_stack(svc, old)) {
            return Ok(());
        }
        let spec = &mut svc.spec;
        let selectorless = spec.selector.as_ref().is_none_or(|s| s.is_empty());
        if spec.ip_family_policy.is_none() {
            // An update adopts the old policy; a create (or an update from ExternalName,
            // which has none) gets the default.
            let inherited = old.and_then(|o| o.spec.ip_family_policy.clone());
            let policy = match inherited {
                Some(policy) => policy,
                None if spec.cluster_ip == "None" && selectorless => "RequireDualStack".to_owned(),
                None => "SingleStack".to_owned(),
            };
            spec.ip_family_policy = Some(policy);
        }
        let old_ips = old.map_or(&[][..], |o| o.spec.cluster_ips.as_slice());
        let errors = crate::validation::cluster_ips_related_fields(svc, self.strict_ip, old_ips);
        if !errors.is_empty() {
            return Err(errors);
        }
        let spec = &mut svc.spec;
        let policy = spec.ip_family_policy.clone().unwrap_or_default();
        let mut errors = Vec::new();
        if let Some(old) = old {
            let old_spec = &old.spec;
            if policy == "SingleStack" {
                // Saying SingleStack while leaving the lists as they were is the downgrade:
                // keep the primary (clusterIPs[0] is immutable anyway).
                if spec.cluster_ips == old_spec.cluster_ips && spec.cluster_ips.len() > 1 {
                    spec.cluster_ips.truncate(1);
                }
                if spec.ip_families == old_spec.ip_families && spec.ip_families.len() > 1 {
                    spec.ip_families.truncate(1);
                }
            } else {
                let reduced =
                    |new: &[String], old: &[String]| !new.is_empty() && new.len() < old.len();
                if reduced(&spec.cluster_ips, &old_spec.cluster_ips) {
                    errors.push(FieldError::invalid(
                        "spec.ipFamilyPolicy",
                        GoValue::Str(policy.clone()),
                        "must be 'SingleStack' to release the secondary cluster IP",
                    ));
                }
                if reduced(&spec.ip_families, &old_spec.ip_families) {
                    errors.push(FieldError::invalid(
                        "spec.ipFamilyPolicy",
                        GoValue::Str(policy.clone()),
                        "must be 'SingleStack' to release the secondary IP family",
                    ));
                }
            }
        }
        if policy == "SingleStack" {
            // Both checks are made; the errors come together (upstream appends, then bails out
            // after the family inference below).
            if spec.cluster_ips.len() == 2 {
                errors.push(FieldError::invalid(
                    "spec.ipFamilyPolicy",
                    GoValue::Str(policy.clone()),
                    "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
                ));
            }
            if spec.ip_families.len() == 2 {
                errors.push(FieldError::invalid(
                    "spec.ipFamilyPolicy",
                    GoValue::Str(policy.clone()),
                    "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
                ));
            }
        }
        // Infer families from the requested IPs, in index order, stopping at "None".
        for (i, ip) in spec.cluster_ips.clone().iter().enumerate() {
            if ip == "None" {
                break;
            }
            let Some(addr) = parse_ip_sloppy(ip) else { continue };
            let family = IpFamily::of(addr);
            if i >= spec.ip_families.len() {
                if self.families.contains_key(&family) {
                    spec.ip_families.push(family.as_str().to_owned());
                } else {
                    errors.push(FieldError::invalid(
                        format!("spec.clusterIPs[{i}]"),
                        GoValue::strings(&spec.cluster_ips),
                        format!("{} is not configured on this cluster", family.as_str()),
                    ));
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        // Headless and selector-less: no allocation, families defaulted even on single-stack.
        if spec.cluster_ip == "None" && selectorless {
            if spec.ip_families.is_empty() {
                spec.ip_families.push(self.primary.as_str().to_owned());
            }
            if policy != "SingleStack" && spec.ip_families.len() == 1 {
                let other = IpFamily::parse(&spec.ip_families[0]).unwrap_or(self.primary).other();
                spec.ip_families.push(other.as_str().to_owned());
            }
            return Ok(());
        }
        if policy == "RequireDualStack" && !self.dual_stack() {
            errors.push(FieldError::invalid(
                "spec.ipFamilyPolicy",
                GoValue::Str(policy.clone()),
                "this cluster is not configured for dual-stack services",
            ));
        }
        for (i, family) in spec.ip_families.iter().enumerate() {
            let configured =
                IpFamily::parse(family).is_some_and(|f| self.families.contains_key(&f));
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
    ///
    /// Upstream walks a Go map of family -> requested IP, so with two families the order (and
    /// hence which error is reported when both fail) is random, and an IP taken before the
    /// other family failed is not given back until the repair loop finds it. We walk
    /// `ipFamilies` in order and give it back at once, the state the cluster settles in.
    fn alloc_cluster_ips(
        &mut self,
        svc: &mut Service,
        txn: &mut Transaction,
    ) -> Result<(), AllocFailure> {
        let spec = &mut svc.spec;
        if spec.type_ == "ExternalName" {
            return Ok(());
        }
        if spec.cluster_ips.first().is_some_and(|ip| ip == "None") {
            spec.cluster_ip = "None".to_owned();
            return Ok(());
        }
        while spec.cluster_ips.len() < spec.ip_families.len() {
            spec.cluster_ips.push(String::new());
        }
        let requested = spec.cluster_ips.clone();
        for (i, family_name) in spec.ip_families.clone().iter().enumerate() {
            let Some(family) = IpFamily::parse(family_name) else { continue };
            let ip = self.alloc_ip(family, &requested[i], &requested, &svc.metadata.name, txn)?;
            spec.cluster_ips[i] = ip;
        }
        spec.cluster_ip = spec.cluster_ips.first().cloned().unwrap_or_default();
        Ok(())
    }

    /// `allocIPs` for one family: `text` is the requested IP or empty for a dynamic pick.
    fn alloc_ip(
        &mut self,
        family: IpFamily,
        text: &str,
        cluster_ips: &[String],
        service: &str,
        txn: &mut Transaction,
    ) -> Result<String, AllocFailure> {
        let Some(allocator) = self.families.get_mut(&family) else {
            return Err(AllocFailure::Internal(format!(
                "failed to allocate a serviceIP: {family:?} is not configured"
            )));
        };
        // The IPAddress object names the Service as its parent (`spec.parentRef.name`): one
        // the IPAddress storage refuses fails the allocation.
        let parent_ref = parent_ref_name_error(service);
        if text.is_empty() {
            let picked = match allocator {
                FamilyAllocator::Objects(m) => {
                    let aborts = self.pick_failure.other_errors_invalid;
                    m.allocate_next_for(parent_ref.as_deref(), aborts)
                }
                FamilyAllocator::Bitmap(r) => r.allocate_next(),
            };
            return match picked {
                Ok(ip) => {
                    txn.taken_ips.push((family, ip, false));
                    Ok(ip_string(ip))
                }
                Err(err) => Err(self.pick_failure.answer(&err, service, cluster_ips)),
            };
        }
        let Some(ip) = parse_ip_sloppy(text) else {
            return Err(AllocFailure::Internal(format!("failed to parse service IP {text:?}")));
        };
        let allocated = match allocator {
            FamilyAllocator::Objects(m) => m.allocate_for(ip, parent_ref.as_deref()),
            FamilyAllocator::Bitmap(r) => r.allocate(ip),
        };
        if let Err(err) = allocated {
            return Err(AllocFailure::Invalid(vec![FieldError::invalid(
                "spec.clusterIPs",
                GoValue::strings(cluster_ips),
                format!("failed to allocate IP {text}: {err}"),
            )]));
        }
        txn.taken_ips.push((family, ip, true));
        Ok(text.to_owned())
    }

    /// `updateClusterIPs`: the four cases of an update (from ExternalName: allocate all; to
    /// ExternalName: release all; upgrade: allocate the secondary; downgrade: release it).
    /// Any other change allocates nothing (validation then rejects changed IPs).
    fn update_cluster_ips(
        &mut self,
        new: &mut Service,
        old: &Service,
        txn: &mut Transaction,
    ) -> Result<(), AllocFailure> {
        if matching_prefer_dual_stack(new, old) {
            return Ok(());
        }
        if old.spec.type_ == "ExternalName" && new.spec.type_ != "ExternalName" {
            return self.alloc_cluster_ips(new, txn);
        }
        if old.spec.cluster_ips.first().is_some_and(|ip| ip == "None") {
            return Ok(());
        }
        if old.spec.type_ != "ExternalName" && new.spec.type_ == "ExternalName" {
            for (family, ip) in old.spec.ip_families.iter().zip(&old.spec.cluster_ips) {
                self.defer_ip_release(family, ip, txn);
            }
            return Ok(());
        }
        let (old_families, new_families) = (old.spec.ip_families.len(), new.spec.ip_families.len());
        if old_families == 1 && new_families == 2 {
            if new.spec.cluster_ips.len() < 2 {
                new.spec.cluster_ips.push(String::new());
            }
            if let Some(family) = IpFamily::parse(&new.spec.ip_families[1]) {
                let requested = new.spec.cluster_ips.clone();
                let name = &new.metadata.name;
                new.spec.cluster_ips[1] =
                    self.alloc_ip(family, &requested[1], &requested, name, txn)?;
            }
        } else if old_families == 2
            && new_families == 1
            && let (Some(family), Some(ip)) =
                (old.spec.ip_families.get(1), old.spec.cluster_ips.get(1))
        {
            self.defer_ip_release(family, ip, txn);
        }
        Ok(())
    }

    fn defer_ip_release(&self, family: &str, ip: &str, txn: &mut Transaction) {
        // releaseIPs skips a family the cluster no longer has.
        let (Some(family), Some(ip)) = (IpFamily::parse(family), parse_ip_sloppy(ip)) else {
            return;
        };
        if self.families.contains_key(&family) {
            txn.deferred_ips.push((family, ip));
        }
    }

    /// `initNodePorts` of a create. Entries sharing a `port` number (TCP and UDP 53) share one
    /// NodePort: the first entry of a number takes the first nodePort any entry of that number
    /// names (even a later one, and the error then names this entry), or a dynamic one; a
    /// later entry of the number with no nodePort gets it, one naming another value takes that
    /// too. Entries with different numbers naming the same nodePort are NOT shared: the second
    /// take fails with `provided port is already allocated`, before validation could report
    /// the duplicate. The first failure ends the request.
    fn init_node_ports(
        &mut self,
        svc: &mut Service,
        txn: &mut Transaction,
    ) -> Result<(), AllocFailure> {
        let should_allocate = should_allocate_node_ports(svc);
        let ports = &mut svc.spec.ports;
        let mut by_number: BTreeMap<i32, i32> = BTreeMap::new();
        for i in 0..ports.len() {
            let (number, node_port) = (ports[i].port, ports[i].node_port);
            if node_port == 0 && !should_allocate {
                // Don't allocate new ports, but do respect specific requests.
                continue;
            }
            match by_number.get(&number).copied().unwrap_or(0) {
                0 => {
                    let requested = ports
                        .iter()
                        .find(|p| p.port == number && p.node_port != 0)
                        .map_or(0, |p| p.node_port);
                    let port = if requested != 0 {
                        self.take_node_port(i, requested, txn)?;
                        requested
                    } else {
                        self.next_node_port(txn)?
                    };
                    ports[i].node_port = port;
                    by_number.insert(number, port);
                }
                shared if node_port == 0 => ports[i].node_port = shared,
                shared if node_port != shared => self.take_node_port(i, node_port, txn)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// `txnUpdateNodePorts`: release the node ports when leaving NodePort/LoadBalancer for
    /// ClusterIP or ExternalName, `updateNodePorts` when the new type has them, then
    /// `updateHealthCheckNodePort`.
    fn update_node_ports_and_health_check(
        &mut self,
        new: &mut Service,
        old: &Service,
        txn: &mut Transaction,
    ) -> Result<(), AllocFailure> {
        if old.needs_node_port()
            && (new.spec.type_ == "ExternalName" || new.spec.type_ == "ClusterIP")
        {
            for port in collect_node_ports(old) {
                txn.deferred_ports.push(port);
            }
        }
        if new.needs_node_port() {
            self.update_node_ports(new, old, txn)?;
        }
        match (old.needs_health_check(), new.needs_health_check()) {
            (false, true) => self.alloc_health_check_node_port(new, txn)?,
            (true, false) => {
                if let Ok(port) = u32::try_from(old.spec.health_check_node_port)
                    && port != 0
                {
                    txn.deferred_ports.push(port);
                }
            }
            // Needed before and after: nothing is allocated, even when the value changed
            // (validation then says the field is immutable).
            _ => {}
        }
        Ok(())
    }

    /// `updateNodePorts`. Unlike a create there is no sharing by port number: every entry
    /// without a nodePort gets its own dynamic one (TCP and UDP 53 turned NodePort by an
    /// update get two), a named nodePort is taken unless the old object or an earlier entry
    /// already holds it, and the same protocol and nodePort twice fails with a plain error
    /// (`duplicate nodePort: {TCP 30080}`, HTTP 500 reason Unknown). Old node ports the new
    /// object no longer names are released on commit.
    fn update_node_ports(
        &mut self,
        new: &mut Service,
        old: &Service,
        txn: &mut Transaction,
    ) -> Result<(), AllocFailure> {
        let should_allocate = should_allocate_node_ports(new);
        let old_numbers = collect_node_ports(old);
        let mut seen: Vec<(String, i32)> = Vec::new();
        let mut taken_here: Vec<i32> = Vec::new();
        for i in 0..new.spec.ports.len() {
            let mut node_port = new.spec.ports[i].node_port;
            if node_port == 0 && !should_allocate {
                continue;
            }
            if node_port != 0 {
                let held_before = u32::try_from(node_port).is_ok_and(|p| old_numbers.contains(&p));
                if !held_before && !taken_here.contains(&node_port) {
                    self.take_node_port(i, node_port, txn)?;
                    taken_here.push(node_port);
                }
            } else {
                node_port = self.next_node_port(txn)?;
                new.spec.ports[i].node_port = node_port;
            }
            let key = (new.spec.ports[i].protocol.clone(), node_port);
            if seen.contains(&key) {
                return Err(AllocFailure::Unknown(format!(
                    "duplicate nodePort: {{{} {}}}",
                    key.0, key.1
                )));
            }
            seen.push(key);
        }
        let new_numbers = collect_node_ports(new);
        for port in old_numbers {
            if !new_numbers.contains(&port) && !txn.deferred_ports.contains(&port) {
                txn.deferred_ports.push(port);
            }
        }
        Ok(())
    }

    /// Takes a named nodePort for `spec.ports[index]`: 422 on that field when it fails.
    fn take_node_port(
        &mut self,
        index: usize,
        node_port: i32,
        txn: &mut Transaction,
    ) -> Result<(), AllocFailure> {
        let result = match u32::try_from(node_port) {
            Ok(port) => self.ports.allocate(port).map(|()| port),
            Err(_) => Err(PortError::NotInRange { range: self.ports.range() }),
        };
        match result {
            Ok(port) => {
                txn.taken_ports.push((port, true));
                Ok(())
            }
            Err(err) => Err(AllocFailure::Invalid(vec![FieldError::invalid(
                format!("spec.ports[{index}].nodePort"),
                GoValue::Int(i64::from(node_port)),
                err.to_string(),
            )])),
        }
    }

    /// A dynamic nodePort; a full range is a 500 InternalError.
    fn next_node_port(&mut self, txn: &mut Transaction) -> Result<i32, AllocFailure> {
        match self.ports.allocate_next() {
            Ok(port) => {
                txn.taken_ports.push((port, false));
                Ok(i32::try_from(port).unwrap_or(0))
            }
            Err(err) => {
                Err(AllocFailure::Internal(format!("failed to allocate a nodePort: {err}")))
            }
        }
    }

    /// `allocHealthCheckNodePort`: both failures are wrapped as InternalError (500), not as a
    /// field error. The dynamic text prints the port the failed pick returned, always 0.
    fn alloc_health_check_node_port(
        &mut self,
        svc: &mut Service,
        txn: &mut Transaction,
    ) -> Result<(), AllocFailure> {
        let requested = svc.spec.health_check_node_port;
        if requested != 0 {
            let result = match u32::try_from(requested) {
                Ok(port) => self.ports.allocate(port).map(|()| port),
                Err(_) => Err(PortError::NotInRange { range: self.ports.range() }),
            };
            match result {
                Ok(port) => txn.taken_health_check = Some((port, true)),
                Err(err) => {
                    return Err(AllocFailure::Internal(format!(
                        "failed to allocate requested HealthCheck NodePort {requested}: {err}"
                    )));
                }
            }
        } else {
            match self.ports.allocate_next() {
                Ok(port) => {
                    txn.taken_health_check = Some((port, false));
                    svc.spec.health_check_node_port = i32::try_from(port).unwrap_or(0);
                }
                Err(err) => {
                    return Err(AllocFailure::Internal(format!(
                        "failed to allocate a HealthCheck NodePort 0: {err}"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// `shouldAllocateNodePorts`: NodePort always, LoadBalancer unless
/// `allocateLoadBalancerNodePorts: false` (named nodePorts are still taken then).
fn should_allocate_node_ports(svc: &Service) -> bool {
    svc.spec.type_ == "NodePort"
        || (svc.spec.type_ == "LoadBalancer"
            && svc.spec.allocate_load_balancer_node_ports != Some(false))
}

/// `collectServiceNodePorts`: every non-zero nodePort, repeats included.
fn collect_node_ports(svc: &Service) -> Vec<u32> {
    svc.spec
        .ports
        .iter()
        .filter_map(|p| u32::try_from(p.node_port).ok().filter(|p| *p != 0))
        .collect()
}

/// `isMatchingPreferDualStackClusterIPFields`: same type with IPs, PreferDualStack on both
/// sides, same clusterIPs and ipFamilies.
fn matching_prefer_dual_stack(new: &Service, old: &Service) -> bool {
    let Some(policy) = &new.spec.ip_family_policy else { return false };
    let typed = matches!(new.spec.type_.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer");
    old.spec.type_ == new.spec.type_
        && typed
        && policy == "PreferDualStack"
        && old.spec.ip_family_policy.as_deref().is_none_or(|p| p == "PreferDualStack")
        && old.spec.cluster_ips == new.spec.cluster_ips
        && old.spec.ip_families == new.spec.ip_families
}
