//! The MetaAllocator of KEP-1880 (`cidrallocator.go`): one family's ServiceCIDRs sharing one
//! set of IPAddress objects.

use std::net::IpAddr;

use ipnet::IpNet;

use crate::allocation::interval_set::IntervalSet;
use crate::allocation::ip_address::CidrGeometry;
use crate::allocation::{AllocationError, IpRange, Picks, Seeded};
use crate::net::IpFamily;

/// All ServiceCIDRs of one family.
#[derive(Debug, Clone)]
pub struct MetaAllocator {
    family: IpFamily,
    /// Invariant: distinct CIDRs, in ServiceCIDR object order.
    cidrs: Vec<CidrGeometry>,
    /// Numeric values of every allocated address (IPAddress objects are cluster-wide).
    allocated: IntervalSet,
    rng: Seeded,
    /// The legacy bitmap of the flag-configured range, written too while
    /// `DisableAllocatorDualWrite` is off (1.31 to 1.34; see [`MetaAllocator::with_dual_write`]).
    bitmap: Option<Box<IpRange>>,
}

impl MetaAllocator {
    /// An allocator over CIDRs of one family, each with its band offset.
    pub fn new(
        family: IpFamily,
        cidrs: &[(IpNet, u128)],
        picks: impl Into<Picks>,
    ) -> Result<MetaAllocator, AllocationError> {
        let mut geometries: Vec<CidrGeometry> = Vec::new();
        for (net, offset) in cidrs {
            let geometry = CidrGeometry::new(*net, *offset)?;
            if !geometries.iter().any(|g| g.net == geometry.net) {
                geometries.push(geometry);
            }
        }
        let label = format!("servicecidrs/{}", family.as_str());
        Ok(MetaAllocator {
            family,
            cidrs: geometries,
            allocated: IntervalSet::default(),
            rng: Seeded::new(picks, &label),
            bitmap: None,
        })
    }

    /// Dual write (pkg/registry/core/service/ipallocator/cidrallocator.go, `MetaAllocator`
    /// with `DisableAllocatorDualWrite` off, kubernetes/kubernetes#122047, 1.31 to 1.34): the
    /// legacy bitmap of the `--service-cluster-ip-range` CIDR is written with every address
    /// inside that CIDR. So in 1.33, where MultiCIDRServiceAllocator is on and dual write still
    /// on by default, the bitmap's IPv6 window of 2^16 addresses bounds both a requested
    /// address (`AllocateService` writes the bitmap first and returns its `ErrNotInRange`) and a
    /// picked one (`AllocateNextService` picks from the bitmap first, then creates the
    /// IPAddress; the new allocators pick only once the bitmap is full), as rewritten by
    /// kubernetes/kubernetes#129798 (January 2025, 1.33) after IPv6 ranges wider than /112
    /// failed with "range is full".
    pub(crate) fn with_dual_write(mut self, bitmap: IpRange) -> MetaAllocator {
        self.bitmap = Some(Box::new(bitmap));
        self
    }

    /// The family.
    pub fn family(&self) -> IpFamily {
        self.family
    }

    /// CIDRs in object order.
    pub fn cidrs(&self) -> Vec<IpNet> {
        self.cidrs.iter().map(|g| g.net).collect()
    }

    /// Sum of free addresses over the CIDRs (overlaps counted per CIDR, like upstream metrics).
    pub fn free(&self) -> u128 {
        self.cidrs.iter().map(|g| g.size - g.used_in(&self.allocated)).sum()
    }

    /// Allocated addresses of this family.
    pub fn used(&self) -> u128 {
        self.allocated.len()
    }

    /// Size, used count, static and dynamic band of one CIDR.
    pub(crate) fn geometry(&self, net: &IpNet) -> Option<(CidrGeometry, u128)> {
        self.cidrs.iter().find(|g| g.net == *net).map(|g| (*g, g.used_in(&self.allocated)))
    }

    /// The CIDR an address would be allocated from.
    pub fn cidr_of(&self, ip: IpAddr) -> Option<IpNet> {
        self.geometry_of(ip).map(|g| g.net)
    }

    /// The geometry of the CIDR an address would be allocated from, without counting what it
    /// holds (a band lookup per allocated address must not walk the allocated runs).
    pub(crate) fn geometry_of(&self, ip: IpAddr) -> Option<CidrGeometry> {
        self.cidrs.iter().find(|g| g.prefix_contains(ip)).copied()
    }

    /// `AllocateService` with a specific IP; with dual write the bitmap is written first and
    /// its error (out of the IPv6 window, already allocated) is returned as it is.
    pub fn allocate(&mut self, ip: IpAddr) -> Result<(), AllocationError> {
        self.allocate_for(ip, None)
    }

    /// [`MetaAllocator::allocate`] for a Service whose IPAddress object the storage refuses
    /// with `parent_ref` (see [`AllocationError::IpAddressInvalid`]), when given.
    pub(crate) fn allocate_for(
        &mut self,
        ip: IpAddr,
        parent_ref: Option<&str>,
    ) -> Result<(), AllocationError> {
        let Some(geometry) = self.cidrs.iter().find(|g| g.prefix_contains(ip)).copied() else {
            return Err(AllocationError::MismatchedNetwork);
        };
        if let Some(bitmap) = &mut self.bitmap
            && bitmap.cidr().contains(&ip)
        {
            bitmap.allocate(ip)?;
        }
        let created = self.allocate_object(&geometry, ip, parent_ref);
        if created.is_err()
            && let Some(bitmap) = &mut self.bitmap
            && bitmap.cidr().contains(&ip)
        {
            // Upstream keeps the bitmap's bit until its repair loop; svclab gives it back at
            // once, the state the cluster settles in.
            bitmap.release(ip);
        }
        created
    }

    /// Creates the IPAddress object of an address of `geometry`: the allocator's range check,
    /// then the IPAddress storage's validation (`parent_ref`), then its conflict check.
    fn allocate_object(
        &mut self,
        geometry: &CidrGeometry,
        ip: IpAddr,
        parent_ref: Option<&str>,
    ) -> Result<(), AllocationError> {
        let Some(value) = geometry.value_of(ip).filter(|v| geometry.contains_value(*v)) else {
            return Err(AllocationError::NotInRange { ip, range: geometry.net });
        };
        if let Some(error) = parent_ref {
            return Err(AllocationError::IpAddressInvalid { ip, error: error.to_owned() });
        }
        if !self.allocated.insert(value) {
            return Err(AllocationError::Allocated);
        }
        Ok(())
    }

    /// `AllocateNextService`: with dual write, the bitmap's pick first (its address must lie in
    /// a ServiceCIDR, else `ErrMismatchedNetwork`); then, or once the bitmap is full, the
    /// CIDRs in an order Go takes from map iteration, which we draw from the seeded source, so
    /// it is random yet reproducible.
    pub fn allocate_next(&mut self) -> Result<IpAddr, AllocationError> {
        self.allocate_next_for(None, true)
    }

    /// [`MetaAllocator::allocate_next`] for a Service whose IPAddress object the storage
    /// refuses with `parent_ref`, when given: the pick is made, its object refused, and
    /// nothing stays allocated. With dual write the bitmap's pick is created as a requested
    /// address and its refusal returned; otherwise `allocateFromRange` (ipallocator.go) tries
    /// the next address after a refused create until the range ends ("range is full", after
    /// one create per free address) in k8s.io/kubernetes@v1.27.16 to @v1.34.12, and returns
    /// the refusal (`aborts`) from @v1.35.8 (issues.k8s.io/135333, with
    /// `Rule::ServiceIpNonFullInvalid`).
    pub(crate) fn allocate_next_for(
        &mut self,
        parent_ref: Option<&str>,
        aborts: bool,
    ) -> Result<IpAddr, AllocationError> {
        if let Some(bitmap) = &mut self.bitmap
            && let Ok(ip) = bitmap.allocate_next()
        {
            let Some(geometry) = self.cidrs.iter().find(|g| g.prefix_contains(ip)).copied() else {
                return Err(AllocationError::MismatchedNetwork);
            };
            let created = self.allocate_object(&geometry, ip, parent_ref);
            if created.is_err()
                && let Some(bitmap) = &mut self.bitmap
            {
                // As in `allocate_for`: the cluster's settled state.
                bitmap.release(ip);
            }
            return created.map(|()| ip);
        }
        let n = self.cidrs.len();
        if n == 0 {
            return Err(AllocationError::Full);
        }
        let rotation = self.rng.below(n as u128) as usize;
        for k in 0..n {
            let geometry = self.cidrs[(rotation + k) % n];
            if let Some(value) = geometry.pick(&self.allocated, &mut self.rng) {
                let ip = geometry.ip(value);
                match parent_ref {
                    Some(error) if aborts => {
                        return Err(AllocationError::IpAddressInvalid {
                            ip,
                            error: error.to_owned(),
                        });
                    }
                    Some(_) => return Err(AllocationError::Full),
                    None => {}
                }
                self.allocated.insert(value);
                return Ok(ip);
            }
        }
        Err(AllocationError::Full)
    }

    /// `Release`: unlike the bitmap, an address outside every CIDR is an error.
    pub fn release(&mut self, ip: IpAddr) -> Result<(), AllocationError> {
        let Some(geometry) = self.cidrs.iter().find(|g| g.prefix_contains(ip)) else {
            return Err(AllocationError::MismatchedNetwork);
        };
        if let Some(bitmap) = &mut self.bitmap
            && bitmap.cidr().contains(&ip)
        {
            bitmap.release(ip);
        }
        if let Some(v) = geometry.value_of(ip) {
            self.allocated.remove(v);
        }
        Ok(())
    }

    /// Whether the address is allocated.
    pub fn has(&self, ip: IpAddr) -> bool {
        self.cidrs.first().and_then(|g| g.value_of(ip)).is_some_and(|v| self.allocated.contains(v))
    }
}
