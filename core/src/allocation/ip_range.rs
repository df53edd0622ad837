//! The bitmap ClusterIP range (`ipallocator.Range`): IP ↔ bit mapping, the IPv6 2^16 cap, and
//! the static band of KEP-3070.

use std::net::IpAddr;

use ipnet::IpNet;

use crate::allocation::{AllocationError, Bitmap, Picks, Seeded, range_size};
use crate::net::{IpFamily, ip_to_u128, u128_to_ip};

/// Bits of an IPv6 bitmap range: Kubernetes caps it at 2^16.
const IPV6_BITMAP_CAP: u128 = 65536;

/// A ClusterIP range backed by a bitmap.
#[derive(Debug, Clone)]
pub struct IpRange {
    net: IpNet,
    /// Numeric value of the network address + 1 (bit 0).
    base: u128,
    bitmap: Bitmap,
    rng: Seeded,
}

/// The persisted form of a range (`RangeAllocation`): CIDR text and bitmap bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeSnapshot {
    /// `Range`.
    pub range: String,
    /// `Data`.
    pub data: Vec<u8>,
}

impl IpRange {
    /// A range with the given static band offset (in addresses), seeded for dynamic picks.
    pub fn new(net: IpNet, offset: u128, picks: impl Into<Picks>) -> IpRange {
        let net = net.trunc();
        let size = range_size(&net);
        let max = match net {
            IpNet::V6(_) => size.min(IPV6_BITMAP_CAP),
            IpNet::V4(_) => size.saturating_sub(1),
        }
        .saturating_sub(1);
        let base = ip_to_u128(net.network()) + 1;
        let max = usize::try_from(max).unwrap_or(usize::MAX);
        let offset = usize::try_from(offset).unwrap_or(usize::MAX);
        IpRange {
            net,
            base,
            bitmap: Bitmap::new(max, offset),
            rng: Seeded::new(picks, &net.to_string()),
        }
    }

    /// The CIDR.
    pub fn cidr(&self) -> IpNet {
        self.net
    }

    /// The family of the range.
    pub fn family(&self) -> IpFamily {
        IpFamily::of_net(&self.net)
    }

    /// Number of allocatable addresses.
    pub fn size(&self) -> u128 {
        self.bitmap.max() as u128
    }

    /// Band offset: the number of addresses in the static band.
    pub fn offset(&self) -> u128 {
        self.bitmap.offset() as u128
    }

    /// Unallocated addresses.
    pub fn free(&self) -> u128 {
        self.bitmap.free() as u128
    }

    /// Allocated addresses.
    pub fn used(&self) -> u128 {
        self.bitmap.used() as u128
    }

    fn ip_at(&self, i: u128) -> IpAddr {
        u128_to_ip(self.family(), self.base + i)
    }

    /// First allocatable address, if any.
    pub fn first(&self) -> Option<IpAddr> {
        (self.size() > 0).then(|| self.ip_at(0))
    }

    /// Last allocatable address, if any.
    pub fn last(&self) -> Option<IpAddr> {
        (self.size() > 0).then(|| self.ip_at(self.size() - 1))
    }

    /// Inclusive bounds of the static (lower) band, when the range has bands.
    pub fn static_band(&self) -> Option<(IpAddr, IpAddr)> {
        let offset = self.offset().min(self.size());
        (offset > 0).then(|| (self.ip_at(0), self.ip_at(offset - 1)))
    }

    /// Inclusive bounds of the dynamic (upper) band.
    pub fn dynamic_band(&self) -> Option<(IpAddr, IpAddr)> {
        let offset = self.offset();
        (offset < self.size()).then(|| (self.ip_at(offset), self.ip_at(self.size() - 1)))
    }

    /// Bit index of an address, when it is allocatable in this range.
    pub fn index_of(&self, ip: IpAddr) -> Option<usize> {
        let ip = match (ip, self.net) {
            (IpAddr::V6(v6), IpNet::V4(_)) => IpAddr::V4(v6.to_ipv4_mapped()?),
            _ => ip,
        };
        if !self.net.contains(&ip) {
            return None;
        }
        let value = ip_to_u128(ip);
        let offset = value.checked_sub(self.base)?;
        (offset < self.size()).then_some(offset as usize)
    }

    /// Whether an address lies in the static band.
    pub fn in_static_band(&self, ip: IpAddr) -> bool {
        self.index_of(ip).is_some_and(|i| i < self.bitmap.offset())
    }

    /// `Allocate(ip)`: takes a specific address anywhere in the range (bands do not restrict it).
    pub fn allocate(&mut self, ip: IpAddr) -> Result<(), AllocationError> {
        let Some(i) = self.index_of(ip) else {
            return Err(AllocationError::NotInRange { ip, range: self.net });
        };
        self.bitmap.allocate(i)
    }

    /// `AllocateNext()`: a dynamic pick, upper band first.
    pub fn allocate_next(&mut self) -> Result<IpAddr, AllocationError> {
        let i = self.bitmap.allocate_next(&mut self.rng)?;
        Ok(self.ip_at(i as u128))
    }

    /// `Release(ip)`: never fails; unknown or out-of-range addresses are ignored.
    pub fn release(&mut self, ip: IpAddr) {
        if let Some(i) = self.index_of(ip) {
            self.bitmap.release(i);
        }
    }

    /// `Has(ip)`.
    pub fn has(&self, ip: IpAddr) -> bool {
        self.index_of(ip).is_some_and(|i| self.bitmap.has(i))
    }

    /// `DryRun().Allocate(ip)`: only the range check.
    pub fn dry_allocate(&self, ip: IpAddr) -> Result<(), AllocationError> {
        match self.index_of(ip) {
            Some(_) => Ok(()),
            None => Err(AllocationError::NotInRange { ip, range: self.net }),
        }
    }

    /// `DryRun().AllocateNext()`: the network address, allocating nothing (the dry-run allocator
    /// of `ipallocator.Range` returns the base address without looking at the bitmap).
    pub fn dry_allocate_next(&self) -> IpAddr {
        self.net.network()
    }

    /// `Snapshot()`.
    pub fn snapshot(&self) -> RangeSnapshot {
        RangeSnapshot { range: self.net.to_string(), data: self.bitmap.snapshot_bytes() }
    }

    /// `Restore(net, data)`: the network must match; counts are recomputed.
    pub fn restore(&mut self, snapshot: &RangeSnapshot) -> Result<(), AllocationError> {
        let same =
            crate::net::parse_cidr_sloppy(&snapshot.range).is_some_and(|(_, n)| n == self.net);
        if !same {
            return Err(AllocationError::MismatchedNetwork);
        }
        self.bitmap.restore_bytes(&snapshot.data);
        Ok(())
    }
}
