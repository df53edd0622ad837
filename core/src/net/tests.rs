//! Unit tests of Go-compatible address parsing.

use std::net::IpAddr;

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

#[test]
fn addresses_and_numbers_are_written_as_display_writes_them() {
    let ips = ["0.0.0.0", "10.96.0.10", "255.255.255.255", "1.20.100.9", "::", "2001:db8::1"];
    for text in ips {
        let ip: IpAddr = text.parse().unwrap();
        let mut out = String::from(">");
        super::push_ip(&mut out, ip);
        assert_eq!(out, format!(">{ip}"));
        assert_eq!(super::ip_string(ip), ip.to_string());
    }
    for n in [0, 7, 10, 99, 100, 65535, 4_294_967_295, i64::MAX, -1, -80, i64::MIN] {
        let mut out = String::new();
        super::push_signed(&mut out, n);
        assert_eq!(out, n.to_string());
    }
    let mut out = String::new();
    super::push_decimal(&mut out, u64::MAX);
    assert_eq!(out, u64::MAX.to_string());
}
