//! Go's own examples and edge cases for the library functions the validation uses.

use super::*;

#[test]
fn durations_parse_and_print_as_go_does() {
    // time.ParseDuration's test table (a part) and Duration.String's.
    for (text, nanos) in [
        ("0", 0),
        ("5s", 5_000_000_000),
        ("-5s", -5_000_000_000),
        ("+5s", 5_000_000_000),
        ("1.5h", 5_400_000_000_000),
        ("1h2m3s", 3_723_000_000_000),
        ("100ms", 100_000_000),
        ("3µs", 3_000),
        (".5s", 500_000_000),
        ("5.s", 5_000_000_000),
        ("1h-1s", -1),
    ] {
        if nanos == -1 {
            assert_eq!(parse_duration(text), None, "{text}");
        } else {
            assert_eq!(parse_duration(text), Some(nanos), "{text}");
        }
    }
    for bad in ["", "3", "-", "s", ".s", "1d", "3000000h"] {
        assert_eq!(parse_duration(bad), None, "{bad}");
    }
    for (nanos, text) in [
        (0, "0s"),
        (1, "1ns"),
        (1_100, "1.1µs"),
        (2_200_000, "2.2ms"),
        (3_300_000_000, "3.3s"),
        (-1_000_000_000, "-1s"),
        (240_000_000_000, "4m0s"),
        (3_723_000_000_000, "1h2m3s"),
        (86_400_000_000_000, "24h0m0s"),
    ] {
        assert_eq!(format_duration(nanos), text, "{nanos}");
    }
}

#[test]
fn host_ports_and_port_ranges() {
    assert_eq!(split_host_port("0.0.0.0:10256"), Some(("0.0.0.0", "10256")));
    assert_eq!(split_host_port("[::]:10256"), Some(("::", "10256")));
    assert_eq!(split_host_port(":80"), Some(("", "80")));
    for bad in ["1.2.3.4", "::1:80", "[::1]", "[::1]x:80", "a]:80"] {
        assert_eq!(split_host_port(bad), None, "{bad}");
    }
    assert_eq!(atoi("+80"), Some(80));
    assert_eq!(atoi("-1"), Some(-1));
    assert_eq!(atoi("8o"), None);
    for good in ["", " 300-2000 ", "8080", "300+10", "65535"] {
        assert!(port_range_valid(good), "{good}");
    }
    for bad in ["2000-300", "70000", "1-2+3", "x", "300-"] {
        assert!(!port_range_valid(bad), "{bad}");
    }
}
