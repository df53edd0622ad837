//! What kube-proxy does differently from one release to the next: one table, [`BEHAVIOURS`],
//! with the releases each behaviour holds in and the upstream code it follows. The config
//! resolution ([`configure_release`]) and the endpoint model read it through [`holds`]; a
//! gate-driven behaviour is listed with the releases of its gate and read through the profile's
//! gates as well.

use super::config::{NftablesTable, ProxyConfig, TopologyHints};

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
    /// nftables mode defaults an empty `nodePortAddresses` to the node's primary IPs; before,
    /// its NodePorts match every local address but loopback.
    NftablesDefaultPrimary,
    /// The primary node IPs (the nftables default, or the `primary` keyword where it exists)
    /// leave a loopback node IP out, so a node whose IP is loopback (no Node object, no
    /// `bindAddress`) accepts NodePorts on every local address.
    PrimaryNodePortAddresses,
    /// `nodePortAddresses` accepts the keyword `primary` (alone); before, kube-proxy's
    /// configuration validation refuses it like any other entry that is not a CIDR.
    PrimaryKeyword,
    /// `--proxy-mode nftables` exists behind kube-proxy's NFTablesProxyMode gate (alpha, off by
    /// default, in 1.29 and 1.30; beta, on by default, in 1.31 and 1.32).
    NftablesModeGated,
    /// NFTablesProxyMode is on unless kube-proxy's own `featureGates` turn it off.
    NftablesModeOnByDefault,
    /// NFTablesProxyMode is GA: the nftables mode is always valid.
    NftablesModeGa,
    /// `userspace` is still a valid Linux proxy mode, and the valid modes of the mode error
    /// are joined with `,` (`iptables,ipvs,userspace`); later ones are joined with `, `.
    UserspaceProxyMode,
    /// `iptables.localhostNodePorts` exists (default true) and iptables mode keeps loopback
    /// destinations it cannot serve out of KUBE-NODEPORTS; before, every local address jumps.
    LocalhostNodePortsOption,
    /// `conntrack.tcpBeLiberal` exists; when true, iptables mode leaves out the KUBE-FORWARD
    /// `--ctstate INVALID -j DROP` rule. Before, the rule is always written.
    TcpBeLiberalOption,
    /// iptables mode counts with nfacct: `ct_state_invalid_dropped_pkts` on the KUBE-FORWARD
    /// INVALID drop and `localhost_nps_accepted_pkts` on localhost NodePorts (when the host
    /// has nfacct); before, neither rule carries `-m nfacct`.
    NfacctCounters,
    /// kube-proxy writes KUBE-FIREWALL's "block incoming localnet connections" rule itself
    /// (IPv4 with localhost NodePorts); before, kubelet owned that chain and kube-proxy's
    /// payload has no KUBE-FIREWALL.
    KubeFirewallInPayload,
    /// LoadBalancer source ranges are enforced in filter KUBE-PROXY-FIREWALL (`-j DROP` per
    /// VIP), the nat KUBE-FW-* chain falling through; before, KUBE-FW-* ends in
    /// `-j KUBE-MARK-DROP` and kubelet's filter KUBE-FIREWALL drops the marked packets.
    ProxyFirewallChain,
    /// A Service with a Local policy and endpoints, none of them on this node, is dropped by a
    /// filter `-j DROP` rule on its destination (KUBE-SERVICES or KUBE-EXTERNAL-SERVICES), with
    /// no SVL chain; before, its jumps lead to a KUBE-SVL-* chain holding
    /// `"... has no local endpoints" -j KUBE-MARK-DROP`.
    NoLocalEndpointsInFilter,
    /// The nftables table of the first (alpha) nftables mode: filter base chains
    /// `filter-input`, `filter-forward` and `filter-output` at `dstnat - 1`, one
    /// `endpoints-check` chain, `firewall-check` jumped to from input, forward and output,
    /// LoadBalancer source ranges as the `firewall` and `firewall-allow` sets with a
    /// `firewall-allow-check` chain, a `forward` chain holding the `ct state invalid drop`
    /// (unless `conntrack.tcpBeLiberal`), and no `cluster-ips` set.
    NftablesAlphaTable,
    /// The nftables filter base chains `filter-prerouting`, `filter-input`, `filter-forward`
    /// and `filter-output` at `dstnat - 10` and `filter-output-post-dnat` at `dstnat + 10`,
    /// with `service-endpoints-check`, `nodeport-endpoints-check` and `cluster-ips-check`,
    /// per-service `firewall-*` chains behind the `firewall-ips` map.
    NftablesPostDnatOutputChain,
    /// The nftables filter base chains `filter-prerouting-pre-dnat` and
    /// `filter-output-pre-dnat` at `dstnat - 10` (firewall only) and `filter-input`,
    /// `filter-forward`, `filter-output` at priority 0 (the endpoint and ClusterIP checks).
    NftablesPreDnatChains,
    /// The nftables internal chain's masquerade rule also matches the service port
    /// (`ip daddr <clusterIP> tcp dport <port> ip saddr != <cidr> jump mark-for-masquerade`);
    /// later releases match the ClusterIP alone.
    NftablesMasqueradeMatchesPort,
    /// The nftables proxier writes each set or map key once (`nftElementStorage.ensureElem`):
    /// the same key and value again adds nothing, another value replaces the element. Before,
    /// every element is added as met, and a key with two values fails the transaction.
    NftablesElementsOnce,
    /// The nftables local-traffic detectors by interface (`bridgeInterface`,
    /// `interfaceNamePrefix`) match the name, `iifname`; before, they wrote `iif`, which nft
    /// resolves to an interface index when it loads the rule (and refuses, "Interface does
    /// not exist", for a prefix such as `veth*`, failing the whole transaction).
    NftablesIifname,
    /// The nftables masquerading svclab writes: a `mark-for-masquerade` chain that every rule
    /// needing SNAT jumps to, the internal chain's `ip saddr != <cluster CIDR>` rule, a
    /// per-endpoint hairpin rule in each `endpoint-*` chain, and an `endpoint-*` chain for
    /// every endpoint. Later releases inline the mark, masquerade hairpin connections from a
    /// set and put the endpoints in the service chain's `dnat` map; svclab does not model that
    /// layout and says so in the payload and on the KubeProxyConfiguration.
    NftablesMarkForMasqueradeChain,
    /// Of two endpoints with one `ip:port` in a service port's slices, the non-terminating copy
    /// wins; before, a local copy wins (`!exists || isLocal`).
    DuplicateEndpointsPreferNonTerminating,
}

/// One row: the behaviour, the first and last minor release it holds in (`None` = to the
/// newest), the patch releases of earlier minors it was backported to (`(33, 6)`: 1.33.6 and
/// later 1.33 patches, and `1.33` written without a patch, which means the latest patch), and
/// the upstream code.
struct Row {
    behaviour: Behaviour,
    first: u32,
    last: Option<u32>,
    backports: &'static [(u32, u32)],
    upstream: &'static str,
}

/// The table. Release ranges come from the source at the tags where a copy was found, else
/// from the CHANGELOG entry of the PR (said so in the row).
///
/// Read and left out because a fresh node's full sync writes the same rules:
/// kubernetes/kubernetes#137501 (1.36, cherry-picked to 1.33 to 1.35 as #137809, #137808,
/// #137807: `nft list --terse` when kube-proxy reads its own elements back, for nft 1.1.3) and
/// #138571 (1.37: no periodic full sync in large-cluster mode). Not modelled although the
/// rules differ: #139516 (CHANGELOG-1.37, v1.37.0-alpha.1) truncates the service-port name in
/// nftables comments to 128 bytes, where 1.36 and earlier write it whole and `nft` refuses the
/// transaction ("comment too long"); where the cut falls was not read, so svclab writes the
/// whole name at every release.
const BEHAVIOURS: &[Row] = &[
    Row {
        behaviour: Behaviour::HintsAnnotationAuto,
        first: 24,
        last: Some(26),
        backports: &[],
        upstream: "pkg/proxy/topology.go `canUseTopology`: `hintsAnnotation != \"Auto\" && \
                   hintsAnnotation != \"auto\"` returns false; serviceport.go reads \
                   `v1.AnnotationTopologyAwareHints` only",
    },
    Row {
        behaviour: Behaviour::HintsAnnotationAnyValue,
        first: 27,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/topology.go `canUseTopology` (\"Any non-empty and non-disabled \
                   values for the hints annotation are acceptable\"), serviceport.go \
                   `newBaseServiceInfo` (deprecated annotation has precedence over \
                   `v1.AnnotationTopologyMode`), kubernetes/kubernetes#116522 (1.27)",
    },
    Row {
        behaviour: Behaviour::HintsWithoutAnnotation,
        first: 30,
        last: None,
        backports: &[],
        upstream: "KEP-4444 \"Changes within kube-proxy\": with ServiceTrafficDistribution \
                   (alpha 1.30, beta 1.31, GA 1.33) hints are used irrespective of the \
                   annotation; pkg/proxy/topology.go `topologyModeFromHints` (no annotation)",
    },
    Row {
        behaviour: Behaviour::IpModeProxySkipped,
        first: 29,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/util/utils.go `IsVIPMode` (gate LoadBalancerIPMode: alpha 1.29, \
                   beta 1.30, GA 1.32, gate removed 1.34), pkg/proxy/serviceport.go \
                   `newBaseServiceInfo`",
    },
    Row {
        behaviour: Behaviour::NftablesDefaultPrimary,
        first: 30,
        last: None,
        backports: &[],
        upstream: "kubernetes/kubernetes#122724 (CHANGELOG-1.30: \"Changed `--nodeport-addresses` \
                   behavior to default to \"primary node IP(s) only\" rather than \"all node \
                   IPs\"\", the nftables mode), reworked by #123105 (1.31) into \
                   cmd/kube-proxy/app/server.go `newProxyServer` passing `primary`; 1.29's \
                   nftables proxier matched `fib daddr type local` minus loopback",
    },
    Row {
        behaviour: Behaviour::PrimaryNodePortAddresses,
        first: 30,
        last: None,
        backports: &[],
        upstream: "cmd/kube-proxy/app/server.go `newProxyServer` (`NodePortAddressesPrimary`, \
                   `!nodeIP.IsLoopback()`, read in the 1.31+ form of #123105; 1.30's #122724 \
                   form is taken to agree), `detectNodeIPs`",
    },
    Row {
        behaviour: Behaviour::PrimaryKeyword,
        first: 31,
        last: None,
        backports: &[],
        upstream: "kubernetes/kubernetes#123105 \"Add `--nodeport-addresses primary`\" (listed in \
                   CHANGELOG-1.31); pkg/proxy/apis/config/validation/validation.go \
                   `validateKubeProxyNodePortAddress` (\"can't use both 'primary' and CIDRs\"); \
                   before, every entry must pass `ParseCIDRSloppy` (\"must be a valid CIDR\", \
                   per index since #95036, 1.20)",
    },
    Row {
        behaviour: Behaviour::NftablesModeGated,
        first: 29,
        last: Some(32),
        backports: &[],
        upstream: "pkg/proxy/apis/config/validation/validation.go `validateProxyModeLinux` \
                   (`nftables` valid only with `features.NFTablesProxyMode`); gate added by \
                   #121046 (CHANGELOG-1.29: \"kube-proxy --feature-gates NFTablesProxyMode=true \
                   --proxy-mode nftables\", alpha), beta by #124383 (1.31), GA in 1.33 (KEP-3866)",
    },
    Row {
        behaviour: Behaviour::NftablesModeOnByDefault,
        first: 31,
        last: None,
        backports: &[],
        upstream: "kubernetes/kubernetes#124383 \"KEP-3866 kube-proxy nftables to beta\" (merged \
                   April 2024, 1.31: \"now beta and available by default\")",
    },
    Row {
        behaviour: Behaviour::NftablesModeGa,
        first: 33,
        last: None,
        backports: &[],
        upstream: "KEP-3866: NFTablesProxyMode GA (locked on) in 1.33",
    },
    Row {
        behaviour: Behaviour::UserspaceProxyMode,
        first: 24,
        last: Some(25),
        backports: &[],
        upstream: "pkg/proxy/apis/config/validation/validation.go `validateProxyModeLinux` \
                   (`sets.NewString(userspace, iptables, ipvs)`, `strings.Join(validModes.List(), \
                   \",\")`, read in a userspace-era copy); userspace removed by #112133 (1.26); \
                   the `, ` join read in a copy after the removal and before the nftables mode",
    },
    Row {
        behaviour: Behaviour::LocalhostNodePortsOption,
        first: 26,
        last: None,
        backports: &[],
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
        backports: &[],
        upstream: "kube-proxy config/v1alpha1/types.go `KubeProxyConntrackConfiguration.\
                   TCPBeLiberal` (absent at v0.28.0, present at v0.29.0); \
                   pkg/proxy/iptables/proxier.go `NewProxier` (`conntrackTCPLiberal`) and \
                   `syncProxyRules` (the INVALID drop only when not liberal)",
    },
    Row {
        behaviour: Behaviour::NfacctCounters,
        first: 31,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/iptables/proxier.go `syncProxyRules` (`-m nfacct --nfacct-name`), \
                   pkg/proxy/metrics/metrics.go: kubernetes/kubernetes#122812 \
                   (`kubeproxy_iptables_ct_state_invalid_dropped_packets_total`) and #125015 \
                   (`kubeproxy_iptables_localhost_nodeports_accepted_packets_total`), both \
                   listed in CHANGELOG-1.31",
    },
    Row {
        behaviour: Behaviour::KubeFirewallInPayload,
        first: 27,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/iptables/proxier.go `syncProxyRules` (the route_localnet \
                   mitigation written when `!isIPv6 && proxier.localhostNodePorts`): \
                   kubernetes/kubernetes#114470 \"KEP-3178-related iptables rule fixups\" \
                   (merged December 2022, after 1.26; its companion #114472, kubelet's \
                   IPTablesOwnershipCleanup beta, is in CHANGELOG-1.27); the 1.26-era \
                   `syncProxyRules` writes no KUBE-FIREWALL",
    },
    Row {
        behaviour: Behaviour::ProxyFirewallChain,
        first: 25,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/iptables/proxier.go `syncProxyRules`: kubernetes/kubernetes#110289 \
                   \"Don't use KUBE-MARK-DROP for LoadBalancerSourceRanges\" (KEP-3178, opened \
                   2022-05-30, after 1.24.0; its description gives the 1.24 form: KUBE-FW-* \
                   jumps to KUBE-EXT-* per allowed range and ends in KUBE-MARK-DROP)",
    },
    Row {
        behaviour: Behaviour::NoLocalEndpointsInFilter,
        first: 25,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/iptables/proxier.go `syncProxyRules`: kubernetes/kubernetes#110290 \
                   \"Don't use KUBE-MARK-DROP for 'no local endpoints'\" (KEP-3178, opened \
                   2022-05-30, after 1.24.0); the 1.24 form read in a copy of the 1.24 proxier \
                   (the local policy chain is declared whenever the Service has endpoints and \
                   ends in `-j KUBE-MARK-DROP` when none is local)",
    },
    Row {
        behaviour: Behaviour::NftablesAlphaTable,
        first: 29,
        last: Some(29),
        backports: &[],
        upstream: "pkg/proxy/nftables/proxier.go `nftablesBaseChains`, `nftablesJumpChains` and \
                   `setupNFTables` as read in a copy from before kubernetes/kubernetes#122614 \
                   (`knftables.DNATPriority + \"-1\"`, `kubeFirewallSet`, \
                   `kubeFirewallAllowCheckChain`, `kubeForwardChain`); #122296 (per-service \
                   firewall chains, December 2023) and #122614 (\"fixed LoadBalancerSourceRanges \
                   not working for nftables mode\", CHANGELOG-1.30) changed it after 1.29.0",
    },
    Row {
        behaviour: Behaviour::NftablesPostDnatOutputChain,
        first: 30,
        last: Some(33),
        backports: &[],
        upstream: "pkg/proxy/nftables/proxier.go `nftablesBaseChains` (`filterPreroutingChain` \
                   ... at `DNATPriority + \"-10\"`, `filterOutputPostDNATChain` at \
                   `DNATPriority + \"+10\"`) and `nftablesJumpChains`: #122614 (1.30) and \
                   #122692 (\"reject packets destined for invalid ports of service ips\", \
                   January 2024, 1.30: `cluster-ips`, `cluster-ips-check`, the split \
                   endpoints checks); 1.33.0 to 1.33.5 keep it",
    },
    Row {
        behaviour: Behaviour::NftablesPreDnatChains,
        first: 34,
        last: None,
        backports: &[(33, 6)],
        upstream: "kubernetes/kubernetes#132456 \"nftables short-circuit local traffic to external \
                   addresses\" (CHANGELOG-1.34, v1.34.0-beta.0: \"reject/drop traffic to service \
                   with no endpoints from filter chains at priority 0\"), cherry-picked to 1.33 \
                   as #133969 (CHANGELOG-1.33, v1.33.6)",
    },
    Row {
        behaviour: Behaviour::NftablesMasqueradeMatchesPort,
        first: 29,
        last: Some(33),
        backports: &[],
        upstream: "pkg/proxy/nftables/proxier.go `syncProxyRules` (`ipX, \"daddr\", \
                   svcInfo.ClusterIP(), protocol, \"dport\", svcInfo.Port()`); dropped by \
                   kubernetes/kubernetes#131492 \"nftables: cleanup service chain checks\" \
                   (opened 2025-04-26, after 1.33.0, so 1.34)",
    },
    Row {
        behaviour: Behaviour::NftablesElementsOnce,
        first: 32,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/nftables/proxier.go `nftElementStorage.ensureElem`: \
                   kubernetes/kubernetes#126013 \"[kube-proxy: nftables] Implement partial sync\" \
                   (still under review on 2024-07-18, after the 1.31 code freeze, so 1.32); \
                   1.29 to 1.31 `tx.Add` every element",
    },
    Row {
        behaviour: Behaviour::NftablesIifname,
        first: 35,
        last: None,
        backports: &[(33, 6), (34, 2)],
        upstream: "pkg/proxy/util/localdetector.go (`ifLocalNFT`, `ifNotLocalNFT`): \
                   kubernetes/kubernetes#134024 \"fix: use iifname for input interface name \
                   matches\" (opened 2025-09-11, so 1.35; its description shows the old \
                   `iif != azv*` refused with \"Interface does not exist\"), cherry-picked as \
                   #134118 (v1.34.2) and #134099 / #134117 (CHANGELOG-1.33, v1.33.6)",
    },
    Row {
        behaviour: Behaviour::NftablesMarkForMasqueradeChain,
        first: 29,
        last: Some(35),
        backports: &[],
        upstream: "pkg/proxy/nftables/proxier.go `setupNFTables` (`markMasqChain`, the three \
                   `masqueradingChain` rules) and `syncProxyRules` (`jump mark-for-masquerade`); \
                   replaced in 1.36 by kubernetes/kubernetes#135800 \"rework nftables \
                   masquerading code, part 1\" (CHANGELOG-1.36, v1.36.0-alpha: \"uses less CPU \
                   when loading very large rulesets\"; removes the chain and inlines `mark set \
                   mark or`), #136499 \"further nftables masquerading improvements\" (the \
                   `hairpin-connections` set, `nftElementStorage` `hairpinConnections`) and the \
                   commit \"Squash nftables endpoint chains into service vmap\"; a v1.36.2 node's \
                   `nft list table ip kube-proxy` shows all three. No copy of the 1.36 \
                   proxier or of its test's expected ruleset was found, so the 1.36 layout is \
                   not modelled",
    },
    Row {
        behaviour: Behaviour::DuplicateEndpointsPreferNonTerminating,
        first: 36,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/endpointslicecache.go `addEndpoints`: kubernetes/kubernetes#135593 \
                   (merged December 2025, after the 1.35 code freeze, so first in 1.36; a pod IP \
                   reused while the old pod terminates); before, `!exists || isLocal`, read in a \
                   discovery/v1 copy of 1.22 to 1.25",
    },
];

/// Every row: the behaviour, its first and last minor (`None`: to the newest) and its upstream
/// code, in table order (`upgrade` finds the rows a release change crosses).
pub(crate) fn rows() -> impl Iterator<Item = (Behaviour, u32, Option<u32>, &'static str)> {
    BEHAVIOURS.iter().map(|r| (r.behaviour, r.first, r.last, r.upstream))
}

/// Whether a behaviour holds in a release, its patch included (a backported row).
pub(crate) fn holds_at(behaviour: Behaviour, version: crate::profile::Version) -> bool {
    // A bare minor is the newest patch svclab was checked at, which has every backport.
    let version = version.modelled();
    holds(behaviour, version.minor)
        || BEHAVIOURS.iter().any(|r| {
            r.behaviour == behaviour
                && r.backports.iter().any(|&(minor, patch)| {
                    version.minor == minor && version.patch.is_some_and(|p| p >= patch)
                })
        })
}

/// Whether a minor release comes after the last release a behaviour holds in (a behaviour that
/// holds to the newest is never past).
pub(crate) fn past(behaviour: Behaviour, minor: u32) -> bool {
    BEHAVIOURS
        .iter()
        .filter(|r| r.behaviour == behaviour)
        .filter_map(|r| r.last)
        .max()
        .is_some_and(|last| minor > last)
}

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

/// The proxier settings that follow kube-proxy's release (`version`, its patch included where a
/// row is backported) and its feature gates (`gate`, as the KubeProxyConfiguration and the
/// profile set them): the rows of [`BEHAVIOURS`] applied to a configuration.
pub(crate) fn configure_release(
    config: &mut ProxyConfig,
    version: crate::profile::Version,
    gate: &dyn Fn(&str) -> bool,
) {
    let minor = version.minor;
    config.prefer_non_terminating_duplicates =
        holds(Behaviour::DuplicateEndpointsPreferNonTerminating, minor);
    config.prefer_same_node = gate("PreferSameTrafficDistribution");
    config.terminating_fallback = gate("ProxyTerminatingEndpoints");
    config.internal_traffic_policy = gate("ServiceInternalTrafficPolicy");
    config.topology_hints = if !gate("TopologyAwareHints") {
        TopologyHints::Off
    } else if holds(Behaviour::HintsWithoutAnnotation, minor) && gate("ServiceTrafficDistribution")
    {
        TopologyHints::Always
    } else if holds(Behaviour::HintsAnnotationAnyValue, minor) {
        TopologyHints::AnnotationEnabled
    } else if holds(Behaviour::HintsAnnotationAuto, minor) {
        TopologyHints::AnnotationAuto
    } else {
        TopologyHints::Off
    };
    config.ip_mode_proxy_skipped =
        holds(Behaviour::IpModeProxySkipped, minor) && gate("LoadBalancerIPMode");
    config.primary_skips_loopback = holds(Behaviour::PrimaryNodePortAddresses, minor);
    config.nftables_default_primary = holds(Behaviour::NftablesDefaultPrimary, minor);
    config.kube_firewall_rule = holds(Behaviour::KubeFirewallInPayload, minor);
    config.lb_firewall_in_filter = holds(Behaviour::ProxyFirewallChain, minor);
    config.no_local_endpoints_in_filter = holds(Behaviour::NoLocalEndpointsInFilter, minor);
    config.nfacct_invalid &= holds(Behaviour::NfacctCounters, minor);
    config.nfacct_localhost &= holds(Behaviour::NfacctCounters, minor);
    config.localhost_exclusions = holds(Behaviour::LocalhostNodePortsOption, minor);
    // No `conntrack.tcpBeLiberal` before 1.29: the INVALID drop is always written.
    config.tcp_be_liberal &= holds(Behaviour::TcpBeLiberalOption, minor);
    config.nftables_table = if holds_at(Behaviour::NftablesPreDnatChains, version) {
        NftablesTable::PreDnat
    } else if holds(Behaviour::NftablesPostDnatOutputChain, minor) {
        NftablesTable::PostDnatOutput
    } else {
        NftablesTable::Alpha
    };
    config.nftables_masquerade_port = holds(Behaviour::NftablesMasqueradeMatchesPort, minor);
    config.nftables_elements_once = holds(Behaviour::NftablesElementsOnce, minor);
    config.nftables_iifname = holds_at(Behaviour::NftablesIifname, version);
    config.nftables_masquerade_unmodelled = past(Behaviour::NftablesMarkForMasqueradeChain, minor);
    if !config.localhost_exclusions {
        // No `iptables.localhostNodePorts` before 1.26: IPv4 localhost NodePorts always on.
        config.localhost_node_ports = true;
    }
}
