//! kube-proxy's own gate table against the registry read from upstream's binaries.

use super::{OWN_GATES, gates};

/// Every row of `OWN_GATES` (the defaults svclab's rules take for kube-proxy's own gates)
/// says what the registry of each release says: registered or not, the default, the lock.
#[test]
fn own_gates_agree_with_the_registry() {
    for gate in OWN_GATES {
        let pattern = gates::GATES
            .iter()
            .find(|(name, _)| *name == gate.name)
            .map(|(_, pattern)| *pattern)
            .unwrap_or_else(|| panic!("{} is not in the registry", gate.name));
        for (i, state) in pattern.bytes().enumerate() {
            let minor = gates::FIRST_MINOR + i as u32;
            let want = match state {
                b'-' => None,
                b'a' => Some((false, false)),
                b'b' => Some((true, false)),
                b'G' => Some((true, true)),
                _ => Some((false, true)),
            };
            let got = gate.stage(minor).map(|s| {
                let default = s.default();
                (default, gate.refusal(!default, minor).is_some())
            });
            assert_eq!(got, want, "{} at 1.{minor}", gate.name);
        }
    }
}

/// The registry is sorted by name, as the lookup's binary search needs.
#[test]
fn registry_is_sorted() {
    assert!(gates::GATES.windows(2).all(|w| w[0].0 < w[1].0));
}
