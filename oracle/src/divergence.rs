//! One difference between svclab's answer and upstream's, and the kind it is grouped under.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DivergenceKind {
    /// The feature gates refused (kube-apiserver would not start).
    Profile,
    /// Create, update or delete.
    Op,
    /// Created, updated, deleted or rejected.
    Outcome,
    /// The refusal's causes (or its Status message).
    Errors,
    /// The warnings, in order.
    Warnings,
    /// An accepted Service's type, families, policy, addresses or ports.
    Addresses,
    /// kube-proxy's rules.
    Rules,
    /// Upstream did not answer (the harness failed or skipped the object).
    Harness,
}

impl DivergenceKind {
    /// The kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            DivergenceKind::Profile => "profile",
            DivergenceKind::Op => "op",
            DivergenceKind::Outcome => "outcome",
            DivergenceKind::Errors => "errors",
            DivergenceKind::Warnings => "warnings",
            DivergenceKind::Addresses => "addresses",
            DivergenceKind::Rules => "rules",
            DivergenceKind::Harness => "harness",
        }
    }
}

/// One difference in one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Divergence {
    /// The case's id.
    pub case: String,
    /// The object's index in the case (`None` for the whole case).
    pub index: Option<usize>,
    /// `Service ns/name`, `EndpointSlice ns/name`, `ClusterProfile`, `iptables IPv4 node-a`.
    pub object: String,
    /// What differs.
    pub kind: DivergenceKind,
    /// svclab's side.
    pub svclab: Value,
    /// upstream's side.
    pub upstream: Value,
}

impl Divergence {
    /// The group the divergence belongs to: its kind, the kind of object, and the first
    /// differing line with its values masked (addresses, numbers, quoted strings), so one
    /// behaviour met in many cases is one group.
    pub fn group(&self) -> String {
        let object_kind = self.object.split(' ').next().unwrap_or("");
        let first = first_difference(&self.svclab, &self.upstream);
        format!("{} {object_kind}: {}", self.kind.as_str(), mask(&first))
    }
}

/// What tells two values apart, as `svclab | upstream`: for objects, the first field that
/// differs; otherwise the first item (a line of a text, an element of a list) that only one
/// side has, counting repeats, masked; `(order)` when both hold the same items in another
/// order.
fn first_difference(svclab: &Value, upstream: &Value) -> String {
    if let (Value::Object(a), Value::Object(b)) = (svclab, upstream) {
        let keys = a.keys().chain(b.keys());
        if let Some(key) = keys.into_iter().find(|k| a.get(*k) != b.get(*k)) {
            let side =
                |m: &serde_json::Map<String, Value>| m.get(key).map_or("(nothing)".into(), text);
            return format!("{key}: {} | {}", side(a), side(b));
        }
    }
    let lines = |v: &Value| -> Vec<String> {
        match v {
            Value::Array(items) => items.iter().map(text).collect(),
            Value::String(s) => s.lines().map(str::to_owned).collect(),
            other => vec![text(other)],
        }
    };
    let (a, b) = (lines(svclab), lines(upstream));
    // The first item of `x` left over once every item of `y` has taken one equal to it.
    let only = |x: &[String], y: &[String]| {
        let mut left: Vec<String> = y.iter().map(|l| mask(l)).collect();
        x.iter()
            .find(|l| match left.iter().position(|m| *m == mask(l)) {
                Some(at) => {
                    left.remove(at);
                    false
                }
                None => true,
            })
            .cloned()
    };
    match (only(&a, &b), only(&b, &a)) {
        (None, None) => "(order)".to_owned(),
        (x, y) => {
            let side = |l: Option<String>| l.unwrap_or_else(|| "(nothing)".to_owned());
            format!("{} | {}", side(x), side(y))
        }
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The text with its values replaced: IPv4 and IPv6 addresses, numbers and quoted strings.
pub fn mask(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '"' {
            out.push_str("\"…\"");
            for d in chars.by_ref() {
                if d == '"' {
                    break;
                }
            }
        } else if c.is_ascii_hexdigit() || c == ':' {
            let mut word = String::from(c);
            while let Some(&d) = chars.peek() {
                if d.is_ascii_hexdigit() || d == '.' || d == ':' || d == '/' {
                    word.push(d);
                    chars.next();
                } else {
                    break;
                }
            }
            // `10.96.0.5:` is an address and the colon after it, `line 87:` a number and one.
            let trailing_colon = word.ends_with(':') && word.matches(':').count() == 1;
            if trailing_colon {
                word.pop();
            }
            let digits = word.chars().any(|d| d.is_ascii_digit());
            let address = word.contains('.') || word.matches(':').count() >= 2;
            if digits && (address || word.chars().all(|d| d.is_ascii_digit())) {
                out.push('#');
            } else {
                out.push_str(&word);
            }
            if trailing_colon {
                out.push(':');
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::mask;

    #[test]
    fn values_are_masked_words_are_not() {
        assert_eq!(
            mask(
                r#"spec.clusterIPs[0]: Invalid value: "10.96.0.5": failed to allocate IP 10.96.0.5: range is full at 30080"#
            ),
            r#"spec.clusterIPs[#]: Invalid value: "…": failed to allocate IP #: range is full at #"#
        );
        assert_eq!(mask("fd00::1 and dead beef"), "# and dead beef");
        assert_eq!(mask("(at line 87: delete element"), "(at line #: delete element");
    }
}
