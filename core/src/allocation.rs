//! ClusterIP and NodePort allocation exactly as kube-apiserver does it: bitmap ranges with the
//! static/dynamic bands of KEP-3070 and KEP-3668, the ServiceCIDR/IPAddress allocator of
//! KEP-1880, and the dual-stack rules of the Service REST storage (`pkg/registry/core/service/storage`).

mod bitmap;
mod interval_set;
mod ip_address;
mod ip_range;
mod meta;
mod port_range;
mod service;

use std::net::IpAddr;

use ipnet::IpNet;
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng as _, SeedableRng as _};

pub use bitmap::Bitmap;
pub use ip_address::IpAddressAllocator;
pub use ip_range::{IpRange, RangeSnapshot};
pub use meta::MetaAllocator;
pub use port_range::PortAllocator;
pub(crate) use service::{
    AllocFailure, Allocators, FamilyAllocator, PANIC_RESPONSE, ServiceAllocation, Transaction,
};

use crate::net::PortRange;
use crate::profile::{DynamicPicks, Profile, SmallRangeRule};

/// Why an allocator refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AllocationError {
    /// `range is full`.
    Full,
    /// `provided IP is already allocated` (or the port equivalent, see [`PortError`]).
    Allocated,
    /// `the provided IP (<ip>) is not in the valid range. The range of valid IPs is <cidr>`.
    NotInRange {
        /// The requested address.
        ip: IpAddr,
        /// The range.
        range: IpNet,
    },
    /// `the provided network does not match the current range`.
    MismatchedNetwork,
    /// `allocator not ready`.
    NotReady,
    /// The bitmap core's own bound check (`offset N out of range [0,MAX]`).
    OffsetOutOfRange {
        /// Bit index asked for.
        offset: u128,
        /// Number of bits.
        max: u128,
    },
    /// `shortest allowed prefix length for service CIDR is 64, got N`.
    PrefixTooShort {
        /// The prefix length given.
        prefix: u8,
    },
    /// The 1.24-era band offset exceeds a /28 or /124 range and Go panics (kubernetes#115316).
    OffsetExceedsRange,
    /// The IPAddress object of a pick is refused by its own validation: the Service's name is
    /// its `spec.parentRef.name`, and a Service without one (or with `.`, `..`, a `/` or a `%`)
    /// makes an invalid one (`validateIPAddressParentReference`,
    /// pkg/apis/networking/validation/validation.go, v1.27.16 to v1.37.2). The allocator runs in
    /// BeginCreate, before the Service's own validation, so this is the Service's answer.
    IpAddressInvalid {
        /// The address picked or requested (the IPAddress's name).
        ip: IpAddr,
        /// The field error, `spec.parentRef.name: Required value`.
        error: String,
    },
}

impl AllocationError {
    /// The vector-format kind (`Full`, `Allocated`, `NotInRange`, `MismatchedNetwork`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            AllocationError::Full => "Full",
            AllocationError::Allocated => "Allocated",
            AllocationError::NotInRange { .. } | AllocationError::OffsetOutOfRange { .. } => {
                "NotInRange"
            }
            AllocationError::MismatchedNetwork => "MismatchedNetwork",
            AllocationError::NotReady => "NotReady",
            AllocationError::PrefixTooShort { .. } => "Invalid",
            AllocationError::OffsetExceedsRange => "Internal",
            AllocationError::IpAddressInvalid { .. } => "Invalid",
        }
    }
}

impl std::fmt::Display for AllocationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AllocationError::Full => f.write_str("range is full"),
            AllocationError::Allocated => f.write_str("provided IP is already allocated"),
            AllocationError::NotInRange { ip, range } => write!(
                f,
                "the provided IP ({}) is not in the valid range. The range of valid IPs is {range}",
                crate::net::go_ip_string(*ip)
            ),
            AllocationError::MismatchedNetwork => {
                f.write_str("the provided network does not match the current range")
            }
            AllocationError::NotReady => f.write_str("allocator not ready"),
            AllocationError::OffsetOutOfRange { offset, max } => {
                write!(f, "offset {offset} out of range [0,{max}]")
            }
            AllocationError::PrefixTooShort { prefix } => {
                write!(f, "shortest allowed prefix length for service CIDR is 64, got {prefix}")
            }
            AllocationError::OffsetExceedsRange => f.write_str(
                "kube-apiserver panics here: the static band offset exceeds the range (rand.Intn with a negative argument, kubernetes#115316)",
            ),
            // apierrors.NewInvalid(networking.Kind("IPAddress"), name, errs) with one error.
            AllocationError::IpAddressInvalid { ip, error } => {
                write!(f, "IPAddress.networking.k8s.io \"{}\" is invalid: {error}", crate::net::ip_string(*ip))
            }
        }
    }
}

impl std::error::Error for AllocationError {}

/// Port allocator errors, worded like `portallocator`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PortError {
    /// `range is full`.
    Full,
    /// `provided port is already allocated`.
    Allocated,
    /// `provided port is not in the valid range. The range of valid ports is <min>-<max>`.
    NotInRange {
        /// The range.
        range: PortRange,
    },
    /// `the provided port range does not match the current port range`.
    MismatchedRange,
}

impl PortError {
    /// The vector-format kind.
    pub fn kind(&self) -> &'static str {
        match self {
            PortError::Full => "Full",
            PortError::Allocated => "Allocated",
            PortError::NotInRange { .. } => "NotInRange",
            PortError::MismatchedRange => "MismatchedNetwork",
        }
    }
}

impl std::fmt::Display for PortError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PortError::Full => f.write_str("range is full"),
            PortError::Allocated => f.write_str("provided port is already allocated"),
            PortError::NotInRange { range } => write!(
                f,
                "provided port is not in the valid range. The range of valid ports is {range}"
            ),
            PortError::MismatchedRange => {
                f.write_str("the provided port range does not match the current port range")
            }
        }
    }
}

impl std::error::Error for PortError {}

/// The deterministic random source of one allocator: ChaCha8 seeded from the profile seed, on a
/// stream chosen by the range, so adding a range never changes another range's picks.
#[derive(Debug, Clone)]
pub struct Seeded(Option<ChaCha8Rng>);

/// How an allocator draws its dynamic picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Picks {
    /// From a seeded ChaCha stream: the same picks on every platform and run.
    Seeded(u64),
    /// Every draw 0: upstream's random scans then take the lowest free value at or above the
    /// band's offset, else the lowest below it. What the upstream oracle makes its allocators
    /// do, so that dynamic picks compare exactly (`dynamicPicks: FirstFit` in a ClusterProfile).
    FirstFit,
}

impl From<u64> for Picks {
    fn from(seed: u64) -> Picks {
        Picks::Seeded(seed)
    }
}

impl Picks {
    /// The picks a profile asks for.
    pub(crate) fn of(profile: &Profile) -> Picks {
        match profile.dynamic_picks {
            DynamicPicks::Seeded => Picks::Seeded(profile.seed),
            DynamicPicks::FirstFit => Picks::FirstFit,
        }
    }
}

impl Seeded {
    /// A source for `picks` and a stream label (usually the range text).
    pub fn new(picks: impl Into<Picks>, label: &str) -> Seeded {
        match picks.into() {
            Picks::Seeded(seed) => {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                rng.set_stream(fnv1a(label));
                Seeded(Some(rng))
            }
            Picks::FirstFit => Seeded(None),
        }
    }

    /// Uniform in `[0, n)` (Lemire's multiply-and-reject on 128 bits), `0` when `n == 0` or
    /// the picks are first-fit.
    pub fn below(&mut self, n: u128) -> u128 {
        let Some(rng) = &mut self.0 else { return 0 };
        if n <= 1 {
            return 0;
        }
        if let Ok(n64) = u64::try_from(n) {
            // Fast path: 64-bit widening multiply with rejection.
            let threshold = n64.wrapping_neg() % n64;
            loop {
                let x = rng.next_u64();
                let m = u128::from(x) * u128::from(n64);
                if (m as u64) >= threshold {
                    return m >> 64;
                }
            }
        }
        // Rare (ranges beyond 2^64 addresses): rejection sampling on the bit width.
        let bits = 128 - (n - 1).leading_zeros();
        loop {
            let hi = u128::from(rng.next_u64());
            let lo = u128::from(rng.next_u64());
            let x = ((hi << 64) | lo) >> (128 - bits);
            if x < n {
                return x;
            }
        }
    }
}

fn fnv1a(text: &str) -> u64 {
    text.bytes()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// `RangeSize` of k8s.io/utils/net: 2^hostbits with its two special cases.
pub fn range_size(net: &IpNet) -> u128 {
    let host_bits = u32::from(net.max_prefix_len() - net.prefix_len());
    match net {
        IpNet::V4(_) if host_bits >= 31 => 0,
        IpNet::V6(_) if host_bits >= 127 => 0,
        _ if host_bits >= 63 => i64::MAX as u128,
        _ => 1u128 << host_bits,
    }
}

/// `calculateRangeOffset` of the IP allocator: `clamp(size/16, 16, 256)`, 0 for small ranges.
pub fn ip_band_offset(cidr_size: u128, rule: SmallRangeRule) -> u128 {
    let small = match rule {
        SmallRangeRule::LessThan16 => cidr_size < 16,
        SmallRangeRule::AtMost16 => cidr_size <= 16,
    };
    if small { 0 } else { (cidr_size / 16).clamp(16, 256) }
}

/// `calculateRangeOffset` of the port allocator: `clamp(size/32, 16, 128)`, 0 for `size <= 16`.
pub fn port_band_offset(size: u32) -> u32 {
    if size <= 16 { 0 } else { (size / 32).clamp(16, 128) }
}

/// The band offset a profile uses for an IP range (0 when the gate is off).
pub fn ip_offset_for(profile: &Profile, net: &IpNet) -> u128 {
    if profile.ip_static_subrange() {
        ip_band_offset(range_size(net), profile.small_range_rule())
    } else {
        0
    }
}

#[cfg(test)]
mod tests;
