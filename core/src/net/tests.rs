//! Unit tests of Go-compatible address parsing.

use super::{IpFamily, PortRange, go_ip_string, parse_cidr_sloppy, parse_ip_sloppy};

#[track_caller]
fn check(input: &str, expect: Option<&str>) {
    assert_eq!(parse_ip_sloppy(input).map(go_ip_string).as_deref(), expect, "{input}");
}

#[test]
fn sloppy_ipv4_accepts_leading_zeros_as_decimal() {
    check("010.001.002.003", Some("10.1.2.3"));
    check("172.30.0.041", Some("172.30.0.41"));
    check("256.1.1.1", None);
    check("1.2.3", None);
    check("::ffff:1.2.3.4", Some("1.2.3.4"));
    check("fe80::1%eth0", None);
    check("2001:db8::0001", Some("2001:db8::1"));
}

#[test]
fn cidrs_truncate_and_accept_leading_zeros() {
    let net = parse_cidr_sloppy("203.0.113.000/025").map(|(_, n)| n.to_string());
    assert_eq!(net.as_deref(), Some("203.0.113.0/25"));
    assert_eq!(parse_cidr_sloppy("10.0.0.1/33"), None);
}

#[test]
fn mapped_addresses_count_as_ipv4() {
    let ip = parse_ip_sloppy("::ffff:10.0.0.1").map(IpFamily::of);
    assert_eq!(ip, Some(IpFamily::V4));
}

#[test]
fn port_ranges_parse_like_apimachinery() {
    assert_eq!(PortRange::parse("30000-32767").map(|r| r.size), Some(2768));
    assert_eq!(PortRange::parse("100").map(|r| (r.base, r.size)), Some((100, 1)));
    assert_eq!(PortRange::parse("100+9").map(|r| r.to_string()).as_deref(), Some("100-109"));
    assert_eq!(PortRange::parse("10-5"), None);
    assert_eq!(PortRange::parse("65530-65540"), None);
}
