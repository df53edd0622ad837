//! The Go library functions kube-proxy's configuration validation leans on, with Go's
//! semantics: `time.ParseDuration` and `Duration.String`, `net.SplitHostPort`,
//! `strconv.Atoi` and apimachinery's `net.PortRange.Set`.

/// Nanoseconds per unit, as `time.ParseDuration` names them.
const UNITS: &[(&str, i128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("μs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// `time.ParseDuration`: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or `0`; `None` where Go returns
/// an error (empty text, a number without unit, an unknown unit, overflow).
pub(crate) fn parse_duration(text: &str) -> Option<i64> {
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let whole = &rest[..digits];
        rest = &rest[digits..];
        let mut fraction = "";
        if let Some(after) = rest.strip_prefix('.') {
            let n = after.bytes().take_while(u8::is_ascii_digit).count();
            fraction = &after[..n];
            rest = &after[n..];
        }
        if whole.is_empty() && fraction.is_empty() {
            return None;
        }
        let unit_len = rest
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map_or(rest.len(), |(i, _)| i);
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let scale = UNITS.iter().find(|(name, _)| *name == unit)?.1;
        let whole: i128 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
        let mut value = whole.checked_mul(scale)?;
        // Go keeps the fraction's digits while they matter (`leadingFraction`), then scales.
        let mut numerator: i128 = 0;
        let mut denominator: i128 = 1;
        for digit in fraction.bytes() {
            if denominator > 1_000_000_000_000_000_000 {
                break;
            }
            numerator = numerator * 10 + i128::from(digit - b'0');
            denominator *= 10;
        }
        value += numerator * scale / denominator;
        total = total.checked_add(value)?;
        if total > i128::from(i64::MAX) + 1 {
            return None;
        }
    }
    let signed = if negative { -total } else { total };
    i64::try_from(signed).ok()
}

/// `time.Duration.String`: `1h2m3.5s`, `1.5ms`, `0s`.
pub(crate) fn format_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".to_owned();
    }
    let negative = nanos < 0;
    let u = nanos.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        let (precision, unit) = if u < 1_000 {
            (0, "ns")
        } else if u < 1_000_000 {
            (3, "µs")
        } else {
            (6, "ms")
        };
        let (whole, fraction) = split(u, precision);
        out.push_str(&whole.to_string());
        out.push_str(&fraction);
        out.push_str(unit);
    } else {
        let (seconds, fraction) = split(u, 9);
        let (minutes, seconds) = (seconds / 60, seconds % 60);
        let (hours, minutes) = (minutes / 60, minutes % 60);
        if hours > 0 {
            out.push_str(&format!("{hours}h"));
        }
        if hours > 0 || minutes > 0 {
            out.push_str(&format!("{minutes}m"));
        }
        out.push_str(&format!("{seconds}{fraction}s"));
    }
    if negative {
        out.insert(0, '-');
    }
    out
}

/// Go's `fmtFrac`: the integer part of `v / 10^precision` and the fraction as `.digits`
/// without trailing zeros (empty when it is zero).
fn split(v: u64, precision: u32) -> (u64, String) {
    let scale = 10u64.pow(precision);
    let (whole, fraction) = (v / scale, v % scale);
    if fraction == 0 {
        return (whole, String::new());
    }
    let digits = format!("{fraction:0width$}", width = precision as usize);
    (whole, format!(".{}", digits.trim_end_matches('0')))
}

/// `net.SplitHostPort`: host and port of `host:port` or `[host]:port`, `None` where Go
/// returns an error.
pub(crate) fn split_host_port(text: &str) -> Option<(&str, &str)> {
    let colon = text.rfind(':')?;
    let (host, from, to) = if text.starts_with('[') {
        let end = text.find(']')?;
        if end + 1 != colon {
            return None;
        }
        (&text[1..end], 1, end + 1)
    } else {
        let host = &text[..colon];
        if host.contains(':') {
            return None;
        }
        (host, 0, 0)
    };
    if text[from..].contains('[') || text[to..].contains(']') {
        return None;
    }
    Some((host, &text[colon + 1..]))
}

/// `strconv.Atoi`: an optional sign, then decimal digits, within 64 bits.
pub(crate) fn atoi(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.strip_prefix('+').unwrap_or(text).parse().ok()
}

/// apimachinery util/net `PortRange.Set`: `N`, `low-high` or `low+offset` (trimmed), empty for
/// no range; `false` where it returns an error.
pub(crate) fn port_range_valid(text: &str) -> bool {
    let text = text.trim();
    if text.is_empty() {
        return true;
    }
    let (hyphen, plus) = (text.find('-'), text.find('+'));
    let bounds = match (hyphen, plus) {
        (None, None) => atoi(text).map(|port| (port, port)),
        (Some(i), None) => atoi(&text[..i]).zip(atoi(&text[i + 1..])),
        (None, Some(i)) => {
            atoi(&text[..i]).zip(atoi(&text[i + 1..])).map(|(low, offset)| (low, low + offset))
        }
        (Some(_), Some(_)) => None,
    };
    bounds.is_some_and(|(low, high)| low <= 65535 && high <= 65535 && high >= low)
}

#[cfg(test)]
mod tests;
