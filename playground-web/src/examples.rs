//! The examples menu: one scenario per seed topic, embedded at build time.

/// One entry of the examples menu.
pub(crate) struct Example {
    /// Stable identifier (used in tests and the menu's values).
    pub(crate) id: &'static str,
    /// Menu label.
    pub(crate) title: &'static str,
    /// The scenario text.
    pub(crate) text: &'static str,
}

/// Every example, the default first.
pub(crate) const EXAMPLES: &[Example] = &[
    Example {
        id: "static-band-dns",
        title: "Static band reserving a DNS IP",
        text: include_str!("../examples/static-band-dns.yaml"),
    },
    Example {
        id: "gate-off-1-24",
        title: "1.24 with ServiceIPStaticSubrange off: collision risk",
        text: include_str!("../examples/gate-off-1-24.yaml"),
    },
    Example {
        id: "dual-stack",
        title: "Dual-stack",
        text: include_str!("../examples/dual-stack.yaml"),
    },
    Example {
        id: "etp-local-terminating",
        title: "ETP Local with terminating endpoints",
        text: include_str!("../examples/etp-local-terminating.yaml"),
    },
    Example {
        id: "topology-hints",
        title: "Topology hints",
        text: include_str!("../examples/topology-hints.yaml"),
    },
    Example {
        id: "lb-source-ranges",
        title: "LoadBalancer source ranges",
        text: include_str!("../examples/lb-source-ranges.yaml"),
    },
    Example {
        id: "leading-zero-ip",
        title: "Leading-zero IP warning",
        text: include_str!("../examples/leading-zero-ip.yaml"),
    },
    Example {
        id: "deprecated-load-balancer-ip",
        title: "Deprecated loadBalancerIP",
        text: include_str!("../examples/deprecated-load-balancer-ip.yaml"),
    },
    Example {
        id: "detect-local-modes",
        title: "detect-local modes",
        text: include_str!("../examples/detect-local-modes.yaml"),
    },
    Example {
        id: "iptables-vs-nftables",
        title: "iptables vs nftables",
        text: include_str!("../examples/iptables-vs-nftables.yaml"),
    },
];

/// The example shown when nothing else is asked for.
pub(crate) fn default_example() -> &'static Example {
    &EXAMPLES[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(example: &Example) {
        let report = svclab_core::check(
            &[svclab_core::Input::new(example.id, example.text)],
            &Default::default(),
        );
        assert!(!report.services.is_empty(), "{}: no Service", example.id);
    }

    #[test]
    fn every_example_has_services() {
        for example in EXAMPLES {
            check(example);
        }
    }
}
