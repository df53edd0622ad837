//! Addresses, CIDRs and port ranges with Go's parsing rules where Kubernetes depends on them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;
use serde::{Deserialize, Serialize};

/// An IP family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum IpFamily {
    /// `IPv4`.
    #[serde(rename = "IPv4")]
    V4,
    /// `IPv6`.
    #[serde(rename = "IPv6")]
    V6,
}

impl IpFamily {
    /// `IPv4` or `IPv6`, as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            IpFamily::V4 => "IPv4",
            IpFamily::V6 => "IPv6",
        }
    }

    /// The other family.
    pub fn other(self) -> IpFamily {
        match self {
            IpFamily::V4 => IpFamily::V6,
            IpFamily::V6 => IpFamily::V4,
        }
    }

    /// Parses the API spelling.
    pub fn parse(text: &str) -> Option<IpFamily> {
        match text {
            "IPv4" => Some(IpFamily::V4),
            "IPv6" => Some(IpFamily::V6),
            _ => None,
        }
    }

    /// Family of an address (IPv4-mapped IPv6 counts as IPv4, as in Go).
    pub fn of(ip: IpAddr) -> IpFamily {
        match ip {
            IpAddr::V4(_) => IpFamily::V4,
            IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some() => IpFamily::V4,
            IpAddr::V6(_) => IpFamily::V6,
        }
    }

    /// Family of a CIDR.
    pub fn of_net(net: &IpNet) -> IpFamily {
        match net {
            IpNet::V4(_) => IpFamily::V4,
            IpNet::V6(_) => IpFamily::V6,
        }
    }
}

/// Go 1.16 `net.ParseIP` ("sloppy"): IPv4 octets may carry leading zeros and are decimal.
pub fn parse_ip_sloppy(text: &str) -> Option<IpAddr> {
    // An IPv4 reading stops at the first byte that is neither a digit nor a dot, so trying it
    // first costs an IPv6 address next to nothing, and spares an IPv4 one a search for `:`.
    match parse_ipv4_sloppy(text) {
        Some(v4) => Some(IpAddr::V4(v4)),
        None if text.contains(':') => parse_ipv6_sloppy(text).map(IpAddr::V6),
        None => None,
    }
}

/// Four dot-separated decimal octets of 1 to 3 digits each, leading zeros allowed, read byte by
/// byte (addresses are parsed by the hundred thousand at cluster scale).
fn parse_ipv4_sloppy(text: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let (mut part, mut value, mut digits) = (0usize, 0u16, 0u8);
    for &b in text.as_bytes() {
        match b {
            b'0'..=b'9' if digits < 3 => {
                digits += 1;
                value = value * 10 + u16::from(b - b'0');
            }
            b'.' if digits > 0 && part < 3 => {
                *octets.get_mut(part)? = u8::try_from(value).ok()?;
                part += 1;
                (value, digits) = (0, 0);
            }
            _ => return None,
        }
    }
    if part != 3 || digits == 0 {
        return None;
    }
    octets[3] = u8::try_from(value).ok()?;
    Some(Ipv4Addr::from(octets))
}

fn parse_ipv6_sloppy(text: &str) -> Option<Ipv6Addr> {
    if text.contains('%') {
        return None;
    }
    // An embedded dotted IPv4 tail may carry leading zeros in Go's parser.
    if let Some(idx) = text.rfind(':') {
        let tail = &text[idx + 1..];
        if tail.contains('.') {
            let v4 = parse_ipv4_sloppy(tail)?;
            let head = &text[..=idx];
            let [a, b, c, d] = v4.octets();
            let rewritten =
                format!("{head}{:x}:{:x}", u16::from_be_bytes([a, b]), u16::from_be_bytes([c, d]));
            return rewritten.parse().ok();
        }
    }
    text.parse().ok()
}

/// Go `net.ParseCIDR` (sloppy for leading zeros, also in the prefix length).
pub fn parse_cidr_sloppy(text: &str) -> Option<(IpAddr, IpNet)> {
    let (addr, len) = text.split_once('/')?;
    let ip = parse_ip_sloppy(addr)?;
    if len.is_empty() || len.len() > 3 || !len.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let prefix: u8 = len.parse().ok()?;
    let ip_for_net = match ip {
        IpAddr::V6(v6) if !addr.contains('.') || v6.to_ipv4_mapped().is_none() => IpAddr::V6(v6),
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    let net = IpNet::new(ip_for_net, prefix).ok()?.trunc();
    Some((ip, net))
}

/// The IPv4 form of an IPv4-mapped address, as Go's `net.IP` compares and prints it.
pub(crate) fn unmap(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Go `net.IP.String()`: IPv4-mapped addresses print as dotted IPv4.
pub(crate) fn go_ip_string(ip: IpAddr) -> String {
    ip_string(unmap(ip))
}

/// Appends `ip` as its `Display` writes it (dotted decimal for IPv4). Rules and endpoint texts
/// write addresses by the hundred thousand, and the standard library formats each IPv4 octet
/// through the formatter's padding machinery: several calls per address, which inside the
/// WebAssembly plugin were a tenth of a ruleset. IPv6 goes through the standard library.
pub(crate) fn push_ip(out: &mut String, ip: IpAddr) {
    match ip {
        IpAddr::V4(v4) => {
            for (i, octet) in v4.octets().into_iter().enumerate() {
                if i > 0 {
                    out.push('.');
                }
                push_decimal(out, u64::from(octet));
            }
        }
        IpAddr::V6(v6) => {
            use std::fmt::Write as _;
            let _ = write!(out, "{v6}");
        }
    }
}

/// `ip` as its `Display` writes it, through [`push_ip`] (an allocation, a report and a ruleset
/// write one per Service).
pub(crate) fn ip_string(ip: IpAddr) -> String {
    let mut out = String::with_capacity(15);
    push_ip(&mut out, ip);
    out
}

/// Appends `value` in decimal, as its `Display` writes it (see [`push_ip`] for why not that).
pub(crate) fn push_decimal(out: &mut String, value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = value;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for &d in &digits[at..] {
        out.push(char::from(d));
    }
}

/// Appends a signed `value` in decimal (ports and counts are `int32` in the API).
pub(crate) fn push_signed(out: &mut String, value: i64) {
    if value < 0 {
        out.push('-');
    }
    push_decimal(out, value.unsigned_abs());
}

/// The address as an unsigned 128-bit number (IPv4 in the low 32 bits).
pub(crate) fn ip_to_u128(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

/// The address of the given family for a number.
pub(crate) fn u128_to_ip(family: IpFamily, value: u128) -> IpAddr {
    match family {
        IpFamily::V4 => IpAddr::V4(Ipv4Addr::from(u32::try_from(value & 0xffff_ffff).unwrap_or(0))),
        IpFamily::V6 => IpAddr::V6(Ipv6Addr::from(value)),
    }
}

/// `k8s.io/apimachinery` `net.PortRange`: `Base` and `Size`, inclusive at both ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortRange {
    /// First port.
    pub base: u32,
    /// Number of ports.
    pub size: u32,
}

impl PortRange {
    /// Parses `min-max`, `N` or `min+offset` like apimachinery.
    pub fn parse(text: &str) -> Option<PortRange> {
        let text = text.trim();
        let (base, size) = if let Some((lo, hi)) = text.split_once('-') {
            let lo: u32 = lo.trim().parse().ok()?;
            let hi: u32 = hi.trim().parse().ok()?;
            if hi < lo {
                return None;
            }
            (lo, hi - lo + 1)
        } else if let Some((lo, off)) = text.split_once('+') {
            let lo: u32 = lo.trim().parse().ok()?;
            let off: u32 = off.trim().parse().ok()?;
            (lo, off + 1)
        } else {
            (text.parse().ok()?, 1)
        };
        if base > 65535 || base + size - 1 > 65535 {
            return None;
        }
        Some(PortRange { base, size })
    }

    /// Whether the port lies in the range.
    pub fn contains(&self, port: u32) -> bool {
        port >= self.base && port - self.base < self.size
    }

    /// Last port.
    pub fn last(&self) -> u32 {
        self.base + self.size.saturating_sub(1)
    }
}

impl std::fmt::Display for PortRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.base, self.last())
    }
}

#[cfg(test)]
mod tests;
