//! What kube-proxy does differently from one release to the next: one table, [`BEHAVIOURS`],
//! with the releases each behaviour holds in and the upstream code it follows. The config
//! resolution and the endpoint model read it through [`holds`]; a gate-driven behaviour is
//! listed with the releases of its gate and read through the profile's gates as well.

/// A release-dependent kube-proxy behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Behaviour {
    /// Topology hints are used only when the Service's
    /// `service.kubernetes.io/topology-aware-hints` annotation is `Auto` or `auto`.
    HintsAnnotationAuto,
    /// Topology hints are used when the hints annotation is set to anything but `""`,
    /// `disabled` or `Disabled`; `service.kubernetes.io/topology-aware-hints` wins over
    /// `service.kubernetes.io/topology-mode` when both are present.
    HintsAnnotationAnyValue,
    /// The ServiceTrafficDistribution gate (kube-proxy's own) makes kube-proxy use hints
    /// whatever the annotations say.
    HintsWithoutAnnotation,
    /// The LoadBalancerIPMode gate: a `status.loadBalancer.ingress` entry with
    /// `ipMode: Proxy` gets no rules; with the gate off (or before it) every entry with an IP
    /// does.
    IpModeProxySkipped,
    /// `nodePortAddresses: [primary]` (the nftables default) keeps only non-loopback node IPs;
    /// a node whose IP is loopback (no Node object, no `bindAddress`) accepts NodePorts on
    /// every local address.
    PrimaryNodePortAddresses,
    /// `iptables.localhostNodePorts` exists (default true) and iptables mode keeps loopback
    /// destinations it cannot serve out of KUBE-NODEPORTS; before, every local address jumps.
    LocalhostNodePortsOption,
    /// `conntrack.tcpBeLiberal` exists; when true, iptables mode leaves out the KUBE-FORWARD
    /// `--ctstate INVALID -j DROP` rule. Before, the rule is always written.
    TcpBeLiberalOption,
}

/// One row: the behaviour, the first and last minor release it holds in (`None` = to the
/// newest), and the upstream code.
struct Row {
    behaviour: Behaviour,
    first: u32,
    last: Option<u32>,
    upstream: &'static str,
}

/// The table. Release ranges come from the source at the tags where a copy was found, else
/// from the CHANGELOG entry of the PR (said so in the row).
const BEHAVIOURS: &[Row] = &[
    Row {
        behaviour: Behaviour::HintsAnnotationAuto,
        first: 24,
        last: Some(26),
        upstream: "pkg/proxy/topology.go `canUseTopology`: `hintsAnnotation != \"Auto\" && \
                   hintsAnnotation != \"auto\"` returns false; serviceport.go reads \
                   `v1.AnnotationTopologyAwareHints` only",
    },
    Row {
        behaviour: Behaviour::HintsAnnotationAnyValue,
        first: 27,
        last: None,
        upstream: "pkg/proxy/topology.go `canUseTopology` (\"Any non-empty and non-disabled \
                   values for the hints annotation are acceptable\"), serviceport.go \
                   `newBaseServiceInfo` (deprecated annotation has precedence over \
                   `v1.AnnotationTopologyMode`), kubernetes/kubernetes#116522 (1.27)",
    },
    Row {
        behaviour: Behaviour::HintsWithoutAnnotation,
        first: 30,
        last: None,
        upstream: "KEP-4444 \"Changes within kube-proxy\": with ServiceTrafficDistribution \
                   (alpha 1.30, beta 1.31, GA 1.33) hints are used irrespective of the \
                   annotation; pkg/proxy/topology.go `topologyModeFromHints` (no annotation)",
    },
    Row {
        behaviour: Behaviour::IpModeProxySkipped,
        first: 29,
        last: None,
        upstream: "pkg/proxy/util/utils.go `IsVIPMode` (gate LoadBalancerIPMode: alpha 1.29, \
                   beta 1.30, GA 1.32, gate removed 1.34), pkg/proxy/serviceport.go \
                   `newBaseServiceInfo`",
    },
    Row {
        behaviour: Behaviour::PrimaryNodePortAddresses,
        first: 29,
        last: None,
        upstream: "cmd/kube-proxy/app/server.go `newProxyServer` (`NodePortAddressesPrimary`, \
                   `!nodeIP.IsLoopback()`), `detectNodeIPs`; the `primary` value and the \
                   nftables default came with the nftables mode in 1.29",
    },
    Row {
        behaviour: Behaviour::LocalhostNodePortsOption,
        first: 26,
        last: None,
        upstream: "kube-proxy config/v1alpha1/types.go `KubeProxyIPTablesConfiguration.\
                   LocalhostNodePorts` (absent at v0.25.0, present at v0.26.0); \
                   pkg/proxy/iptables/proxier.go `syncProxyRules` (`! -d ::1/128`, `! -d \
                   127.0.0.0/8` when off, loopback addresses skipped) and `NewProxier` \
                   (`ContainsIPv4Loopback`)",
    },
    Row {
        behaviour: Behaviour::TcpBeLiberalOption,
        first: 29,
        last: None,
        upstream: "kube-proxy config/v1alpha1/types.go `KubeProxyConntrackConfiguration.\
                   TCPBeLiberal` (absent at v0.28.0, present at v0.29.0); \
                   pkg/proxy/iptables/proxier.go `NewProxier` (`conntrackTCPLiberal`) and \
                   `syncProxyRules` (the INVALID drop only when not liberal)",
    },
];

/// Whether a behaviour holds in a minor release.
pub(crate) fn holds(behaviour: Behaviour, minor: u32) -> bool {
    upstream_in(behaviour, minor).is_some()
}

/// The upstream code a behaviour follows, when it holds in a minor release.
pub(crate) fn upstream_in(behaviour: Behaviour, minor: u32) -> Option<&'static str> {
    BEHAVIOURS
        .iter()
        .find(|r| {
            r.behaviour == behaviour && minor >= r.first && r.last.is_none_or(|last| minor <= last)
        })
        .map(|r| r.upstream)
}
