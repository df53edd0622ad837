//! The IPAddress-object allocator of KEP-1880 (`ipallocator.go`): one object per address, no
//! 2^16 cap for IPv6, the same band offset as the bitmap. Objects are modelled as a sorted set.

use std::net::IpAddr;

use ipnet::IpNet;

use crate::allocation::interval_set::IntervalSet;
use crate::allocation::{AllocationError, Picks, Seeded};
use crate::net::{IpFamily, ip_to_u128, u128_to_ip};

/// Geometry of one ServiceCIDR under the IPAddress allocator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CidrGeometry {
    pub(crate) net: IpNet,
    /// Numeric first allocatable address (network + 1).
    pub(crate) first: u128,
    /// Number of allocatable addresses (`hostsPerNetwork`).
    pub(crate) size: u128,
    /// Static band size.
    pub(crate) offset: u128,
}

impl CidrGeometry {
    pub(crate) fn new(net: IpNet, offset: u128) -> Result<CidrGeometry, AllocationError> {
        let net = net.trunc();
        if let IpNet::V6(v6) = net
            && v6.prefix_len() < 64
        {
            return Err(AllocationError::PrefixTooShort { prefix: v6.prefix_len() });
        }
        let host_bits = u32::from(net.max_prefix_len() - net.prefix_len());
        let size = match net {
            IpNet::V4(_) if host_bits <= 1 => 0,
            IpNet::V4(_) => (1u128 << host_bits) - 2,
            IpNet::V6(_) if host_bits >= 64 => u128::from(u64::MAX),
            IpNet::V6(_) => (1u128 << host_bits) - 1,
        };
        let offset = if offset >= size { 0 } else { offset };
        Ok(CidrGeometry { net, first: ip_to_u128(net.network()) + 1, size, offset })
    }

    pub(crate) fn family(&self) -> IpFamily {
        IpFamily::of_net(&self.net)
    }

    pub(crate) fn ip(&self, value: u128) -> IpAddr {
        u128_to_ip(self.family(), value)
    }

    /// `first <= ip <= last`.
    pub(crate) fn contains_value(&self, value: u128) -> bool {
        self.size > 0 && value >= self.first && value - self.first < self.size
    }

    /// Numeric value of an address of this family.
    pub(crate) fn value_of(&self, ip: IpAddr) -> Option<u128> {
        let ip = match (ip, self.net) {
            (IpAddr::V6(v6), IpNet::V4(_)) => IpAddr::V4(v6.to_ipv4_mapped()?),
            (IpAddr::V4(_), IpNet::V6(_)) => return None,
            _ => ip,
        };
        Some(ip_to_u128(ip))
    }

    /// `prefixContainsIP`: in the prefix, not the network address, not the IPv4 broadcast.
    pub(crate) fn prefix_contains(&self, ip: IpAddr) -> bool {
        let Some(value) = self.value_of(ip) else { return false };
        if !self.net.contains(&self.ip(value)) {
            return false;
        }
        let network = ip_to_u128(self.net.network());
        let broadcast = ip_to_u128(self.net.broadcast());
        value != network && !(matches!(self.net, IpNet::V4(_)) && value == broadcast)
    }

    pub(crate) fn used_in(&self, allocated: &IntervalSet) -> u128 {
        if self.size == 0 {
            return 0;
        }
        allocated.count_in(self.first, self.first + (self.size - 1))
    }

    /// Dynamic pick over a shared set of taken addresses: upper band then lower band.
    pub(crate) fn pick(&self, allocated: &IntervalSet, rng: &mut Seeded) -> Option<u128> {
        if self.size == 0 {
            return None;
        }
        let (lo, hi) = (self.offset, self.size);
        if hi > lo {
            let start = lo + rng.below(hi - lo);
            if let Some(v) = self.first_free_wrapping(allocated, lo, hi, start) {
                return Some(v);
            }
        }
        if self.offset > 0 {
            let start = rng.below(self.offset);
            return self.first_free_wrapping(allocated, 0, self.offset, start);
        }
        None
    }

    /// First free address at or after band index `start`, wrapping inside `[lo, hi)`.
    fn first_free_wrapping(
        &self,
        set: &IntervalSet,
        lo: u128,
        hi: u128,
        start: u128,
    ) -> Option<u128> {
        let f = self.first;
        set.first_absent(f + start, f + hi).or_else(|| set.first_absent(f + lo, f + start))
    }
}

/// The allocator of one ServiceCIDR.
#[derive(Debug, Clone)]
pub struct IpAddressAllocator {
    geometry: CidrGeometry,
    allocated: IntervalSet,
    rng: Seeded,
}

impl IpAddressAllocator {
    /// An allocator for `net` with a band offset; IPv6 prefixes shorter than /64 are refused.
    pub fn new(
        net: IpNet,
        offset: u128,
        picks: impl Into<Picks>,
    ) -> Result<IpAddressAllocator, AllocationError> {
        let geometry = CidrGeometry::new(net, offset)?;
        Ok(IpAddressAllocator {
            geometry,
            allocated: IntervalSet::default(),
            rng: Seeded::new(picks, &geometry.net.to_string()),
        })
    }

    /// The CIDR.
    pub fn cidr(&self) -> IpNet {
        self.geometry.net
    }

    /// Allocatable addresses (`hostsPerNetwork`).
    pub fn size(&self) -> u128 {
        self.geometry.size
    }

    /// Static band size.
    pub fn offset(&self) -> u128 {
        self.geometry.offset
    }

    /// Free addresses.
    pub fn free(&self) -> u128 {
        self.geometry.size - self.used()
    }

    /// Used addresses.
    pub fn used(&self) -> u128 {
        self.allocated.len()
    }

    /// First allocatable address.
    pub fn first(&self) -> Option<IpAddr> {
        (self.geometry.size > 0).then(|| self.geometry.ip(self.geometry.first))
    }

    /// Last allocatable address.
    pub fn last(&self) -> Option<IpAddr> {
        (self.geometry.size > 0)
            .then(|| self.geometry.ip(self.geometry.first + self.geometry.size - 1))
    }

    /// Static band bounds.
    pub fn static_band(&self) -> Option<(IpAddr, IpAddr)> {
        let g = &self.geometry;
        (g.offset > 0).then(|| (g.ip(g.first), g.ip(g.first + g.offset - 1)))
    }

    /// Dynamic band bounds.
    pub fn dynamic_band(&self) -> Option<(IpAddr, IpAddr)> {
        let g = &self.geometry;
        (g.offset < g.size).then(|| (g.ip(g.first + g.offset), g.ip(g.first + g.size - 1)))
    }

    /// Takes a specific address.
    pub fn allocate(&mut self, ip: IpAddr) -> Result<(), AllocationError> {
        let value = self.geometry.value_of(ip).filter(|v| self.geometry.contains_value(*v));
        let Some(value) = value else {
            return Err(AllocationError::NotInRange { ip, range: self.geometry.net });
        };
        if !self.allocated.insert(value) {
            return Err(AllocationError::Allocated);
        }
        Ok(())
    }

    /// A dynamic pick.
    pub fn allocate_next(&mut self) -> Result<IpAddr, AllocationError> {
        let value =
            self.geometry.pick(&self.allocated, &mut self.rng).ok_or(AllocationError::Full)?;
        self.allocated.insert(value);
        Ok(self.geometry.ip(value))
    }

    /// Deletes the IPAddress; errors are ignored like upstream.
    pub fn release(&mut self, ip: IpAddr) {
        if let Some(v) = self.geometry.value_of(ip) {
            self.allocated.remove(v);
        }
    }

    /// Whether the address is allocated.
    pub fn has(&self, ip: IpAddr) -> bool {
        self.geometry.value_of(ip).is_some_and(|v| self.allocated.contains(v))
    }
}
