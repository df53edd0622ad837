//! Go `net/netip` parsing errors (`ParseAddr`, `ParsePrefix`), whose texts the 1.27 to 1.32
//! apiserver put into its IP and CIDR warnings.

use std::net::{IpAddr, Ipv6Addr};

use crate::field::go_quote;

/// `parseAddrError.Error()`: `ParseAddr("in"): msg` with ` (at "rest")` when it has one.
fn addr_error(input: &str, msg: &str, at: Option<&str>) -> String {
    match at {
        Some(at) => format!("ParseAddr({}): {msg} (at {})", go_quote(input), go_quote(at)),
        None => format!("ParseAddr({}): {msg}", go_quote(input)),
    }
}

/// `netip.ParseAddr`: the address (with its zone) or the error text.
pub(super) fn parse_addr(s: &str) -> Result<(IpAddr, String), String> {
    for b in s.bytes() {
        match b {
            b'.' => return parse_ipv4(s).map(|v4| (IpAddr::V4(v4.into()), String::new())),
            b':' => return parse_ipv6(s),
            b'%' => return Err(addr_error(s, "missing IPv6 address", None)),
            _ => {}
        }
    }
    Err(addr_error(s, "unable to parse IP", None))
}

/// `parseIPv4`.
fn parse_ipv4(s: &str) -> Result<[u8; 4], String> {
    let b = s.as_bytes();
    let mut fields = [0u8; 4];
    let (mut val, mut pos, mut digits) = (0u32, 0usize, 0usize);
    for (i, c) in b.iter().enumerate() {
        if c.is_ascii_digit() {
            if digits == 1 && val == 0 {
                return Err(addr_error(s, "IPv4 field has octet with leading zero", None));
            }
            val = val * 10 + u32::from(c - b'0');
            digits += 1;
            if val > 255 {
                return Err(addr_error(s, "IPv4 field has value >255", None));
            }
        } else if *c == b'.' {
            if i == 0 || i == b.len() - 1 || b[i - 1] == b'.' {
                return Err(addr_error(
                    s,
                    "IPv4 field must have at least one digit",
                    Some(&s[i..]),
                ));
            }
            if pos == 3 {
                return Err(addr_error(s, "IPv4 address too long", None));
            }
            fields[pos] = u8::try_from(val).unwrap_or(u8::MAX);
            pos += 1;
            val = 0;
            digits = 0;
        } else {
            // `s[i:]` in Go slices bytes; a multi-byte character starts at a boundary here
            // because every earlier byte was ASCII.
            return Err(addr_error(s, "unexpected character", Some(&s[i..])));
        }
    }
    if pos < 3 {
        return Err(addr_error(s, "IPv4 address too short", None));
    }
    fields[3] = u8::try_from(val).unwrap_or(u8::MAX);
    Ok(fields)
}

/// `parseIPv6`, zone included.
fn parse_ipv6(input: &str) -> Result<(IpAddr, String), String> {
    let (mut s, zone) = match input.split_once('%') {
        Some((_, "")) => return Err(addr_error(input, "zone must be a non-empty string", None)),
        Some((addr, zone)) => (addr, zone.to_owned()),
        None => (input, String::new()),
    };
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    if s.starts_with("::") {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return Ok((IpAddr::V6(Ipv6Addr::UNSPECIFIED), zone));
        }
    }
    let mut i = 0usize;
    while i < 16 {
        let b = s.as_bytes();
        let mut off = 0usize;
        let mut acc = 0u32;
        while off < b.len() {
            let Some(d) = char::from(b[off]).to_digit(16) else { break };
            acc = (acc << 4) + d;
            if off > 3 {
                return Err(addr_error(input, "each group must have 4 or less digits", Some(s)));
            }
            if acc > 0xffff {
                return Err(addr_error(input, "IPv6 field has value >=2^16", Some(s)));
            }
            off += 1;
        }
        if off == 0 {
            return Err(addr_error(
                input,
                "each colon-separated field must have at least one digit",
                Some(s),
            ));
        }
        if off < b.len() && b[off] == b'.' {
            if ellipsis.is_none() && i != 12 {
                return Err(addr_error(
                    input,
                    "embedded IPv4 address must replace the final 2 fields of the address",
                    Some(s),
                ));
            }
            if i + 4 > 16 {
                return Err(addr_error(
                    input,
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    Some(s),
                ));
            }
            let v4 = parse_ipv4(s).map_err(|e| addr_error(input, &e, Some(s)))?;
            ip[i..i + 4].copy_from_slice(&v4);
            s = "";
            i += 4;
            break;
        }
        ip[i] = u8::try_from(acc >> 8).unwrap_or(0);
        ip[i + 1] = u8::try_from(acc & 0xff).unwrap_or(0);
        i += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if !s.starts_with(':') {
            return Err(addr_error(input, "unexpected character, want colon", Some(s)));
        } else if s.len() == 1 {
            return Err(addr_error(input, "colon must be followed by more characters", Some(s)));
        }
        s = &s[1..];
        if s.starts_with(':') {
            if ellipsis.is_some() {
                return Err(addr_error(input, "multiple :: in address", Some(s)));
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return Err(addr_error(input, "trailing garbage after address", Some(s)));
    }
    if i < 16 {
        let Some(e) = ellipsis else {
            return Err(addr_error(input, "address string too short", None));
        };
        let n = 16 - i;
        ip.copy_within(e..i, e + n);
        ip[e..e + n].fill(0);
    } else if ellipsis.is_some() {
        return Err(addr_error(input, "the :: must expand to at least one field of zeros", None));
    }
    Ok((IpAddr::V6(Ipv6Addr::from(ip)), zone))
}

/// `netip.ParsePrefix`: the address and length, or the error text.
pub(super) fn parse_prefix(s: &str) -> Result<(IpAddr, u32), String> {
    let quoted = go_quote(s);
    let Some(i) = s.rfind('/') else {
        return Err(format!("netip.ParsePrefix({quoted}): no '/'"));
    };
    let (ip, zone) =
        parse_addr(&s[..i]).map_err(|e| format!("netip.ParsePrefix({quoted}): {e}"))?;
    if ip.is_ipv6() && !zone.is_empty() {
        return Err(format!(
            "netip.ParsePrefix({quoted}): IPv6 zones cannot be present in a prefix"
        ));
    }
    let bits = &s[i + 1..];
    let bad = || format!("netip.ParsePrefix({quoted}): bad bits after slash: {}", go_quote(bits));
    // Go 1.22 (Kubernetes 1.30 and later) refuses a sign or a leading zero here; the Go of
    // 1.27 to 1.29 accepted `strconv.Atoi`'s forms. svclab applies the newer rule throughout.
    if bits.len() > 1 && !matches!(bits.as_bytes()[0], b'1'..=b'9') {
        return Err(bad());
    }
    let n: u32 = bits.parse().map_err(|_| bad())?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    if n > max {
        return Err(format!("netip.ParsePrefix({quoted}): prefix length out of range"));
    }
    Ok((ip, n))
}

/// `Addr.String()`: IPv6 in RFC 5952 form (IPv4-mapped as `::ffff:a.b.c.d`) with its zone.
pub(super) fn addr_string(ip: IpAddr, zone: &str) -> String {
    if zone.is_empty() { ip.to_string() } else { format!("{ip}%{zone}") }
}
