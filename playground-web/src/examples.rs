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
    Example {
        id: "policy-external-ips",
        title: "Policy: externalIPs allowlist",
        text: include_str!("../examples/policy-external-ips.yaml"),
    },
    Example {
        id: "policy-node-ports",
        title: "Policy: no NodePorts, LoadBalancer ports included",
        text: include_str!("../examples/policy-node-ports.yaml"),
    },
    Example {
        id: "policy-load-balancer",
        title: "Policy: internal-only LoadBalancers",
        text: include_str!("../examples/policy-load-balancer.yaml"),
    },
    Example {
        id: "policy-static-band",
        title: "Policy: static band and reserved ClusterIPs",
        text: include_str!("../examples/policy-static-band.yaml"),
    },
    Example {
        id: "policy-external-name",
        title: "Policy: ExternalName targets",
        text: include_str!("../examples/policy-external-name.yaml"),
    },
    Example {
        id: "policy-endpoint-slices",
        title: "Policy: hand-written EndpointSlices",
        text: include_str!("../examples/policy-endpoint-slices.yaml"),
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
        if example.id.starts_with("policy-") {
            // Valid settings, and a policy that denies something (each example shows both).
            let settings_errors: Vec<_> = report
                .diagnostics
                .iter()
                .filter(|d| d.object.as_ref().is_some_and(|o| o.kind == "ServicePolicy"))
                .collect();
            assert!(settings_errors.is_empty(), "{}: {settings_errors:?}", example.id);
            assert!(
                report.diagnostics.iter().any(|d| d.severity == svclab_core::Severity::Error
                    && d.reason.starts_with("policy:")),
                "{}: no policy denial in {:?}",
                example.id,
                report.diagnostics
            );
        }
    }

    #[test]
    fn every_example_has_services() {
        for example in EXAMPLES {
            check(example);
        }
    }
}
