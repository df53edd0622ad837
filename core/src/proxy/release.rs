//! What kube-proxy does differently from one release to the next: one table, [`BEHAVIOURS`],
//! with the releases each behaviour holds in and the upstream code it follows. The config
//! resolution ([`configure_release`]) and the endpoint model read it through [`holds`]; a
//! gate-driven behaviour is listed with the releases of its gate and read through the profile's
//! gates as well.

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
    /// The nftables proxier builds its NodePort addresses with the node IP as the fallback
    /// (`NewNodePortAddresses(family, cidrs, nodeIP)`): a family without a CIDR in
    /// `nodePortAddresses` (an empty list included) takes the node IP of the family as `/32` or
    /// `/128`, a loopback node IP included (the `nodeport-ips` set then stays empty, as
    /// loopback is never an element).
    NftablesNodeIpFallback,
    /// nftables mode defaults an empty `nodePortAddresses` to `primary`.
    NftablesDefaultPrimary,
    /// `primary` becomes the node IPs that are not loopback, so a node whose IP is loopback
    /// (no Node object, no `bindAddress`) accepts NodePorts on every local address.
    PrimaryNodePortAddresses,
    /// `nodePortAddresses` accepts the keyword `primary` (alone); before, kube-proxy's
    /// configuration validation refuses it like any other entry that is not a CIDR.
    PrimaryKeyword,
    /// `nodePortAddresses` takes the keywords `primary`, `localhost` and `all` beside CIDRs,
    /// each entry at most once (a repeated one is a `Duplicate` error).
    NodePortAddressKeywords,
    /// A `nodePortAddresses` CIDR means every address only when written `0.0.0.0/0` or `::/0`
    /// (`IsZeroCIDR` compares the text), so `1.2.3.4/0` is an ordinary CIDR holding every host
    /// address; later, any CIDR with prefix length 0 means every address.
    ZeroCidrByText,
    /// A `nodePortAddresses` CIDR of prefix length 0 not written `0.0.0.0/0` or `::/0` matches no
    /// host address (its parsed text is skipped as a zero CIDR, its written text was not taken
    /// as one), so it yields no jump to KUBE-NODEPORTS.
    ZeroPrefixMatchesNothing,
    /// The iptables proxier of each family takes the whole `nodePortAddresses` list: with CIDRs
    /// of the other family only, no host address matches and no jump to KUBE-NODEPORTS is
    /// written (unless a zero CIDR of either family is).
    NodePortAddressesUnfiltered,
    /// `--proxy-mode nftables` exists behind kube-proxy's NFTablesProxyMode gate (alpha, off by
    /// default, in 1.29 and 1.30; beta, on by default, in 1.31 and 1.32).
    NftablesModeGated,
    /// NFTablesProxyMode is on unless kube-proxy's own `featureGates` turn it off.
    NftablesModeOnByDefault,
    /// NFTablesProxyMode is GA: the nftables mode is always valid.
    NftablesModeGa,
    /// `userspace` is still a valid Linux proxy mode (`iptables,ipvs,userspace`).
    UserspaceProxyMode,
    /// The valid proxy modes of the mode error are joined with `, ` (`iptables, ipvs`); before,
    /// with `,`.
    ModeListCommaSpace,
    /// `mode: ipvs` is valid only while kube-proxy's KubeProxyIPVS gate is on.
    IpvsModeGated,
    /// `Options.Complete` runs `platformApplyDefaults` before `Validate`: a blank `mode` is
    /// validated as `iptables`, a blank `detectLocalMode` as `ClusterCIDR`.
    PlatformDefaultsBeforeValidate,
    /// `Validate` checks the internal configuration of the `Linux` split: conntrack and
    /// `oomScoreAdj` under `KubeProxyLinuxConfiguration`, the sync periods at the top (from
    /// the mode's block), `clusterCIDR` as `DetectLocalConfiguration.ClusterCIDRs`, the
    /// interface names under `DetectLocalConfiguration`; no `PortRange`.
    ValidateLinuxBlock,
    /// `Validate` checks the nftables block (`masqueradeBit`, and its sync periods until the
    /// `Linux` split) when the mode is nftables.
    ValidateNftablesBlock,
    /// `Validate` checks the ipvs scheduler's name (`validateIPVSSchedulerMethod`).
    ValidateIpvsScheduler,
    /// `Validate` checks conntrack's `udpTimeout` and `udpStreamTimeout`.
    ValidateConntrackUdpTimeouts,
    /// `Validate` checks the userspace proxy's `udpIdleTimeout` (above zero).
    ValidateUdpIdleTimeout,
    /// `Validate` checks `portRange` (`utilnet.ParsePortRange`).
    ValidatePortRange,
    /// `Validate` refuses a `detectLocalMode` it does not know (`field.NotSupported`).
    ValidateDetectLocalMode,
    /// An unknown `detectLocalMode` stops `newProxyServer` ("cannot determine
    /// detect-local-mode: unknown detect-local-mode: X") after validation.
    DetectLocalModeStartupError,
    /// `Validate` checks `logging` (component-base logs/api/v1 `Validate`: the format).
    ValidateLogging,
    /// `showHiddenMetricsForVersion`'s error nests component-base's own `field.Error`
    /// ("invalid showHiddenMetricsForVersion: ..."); before, a flag-style sentence.
    ShowHiddenMetricsFieldError,
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
    /// The nat KUBE-FW-* chain ends in the comment-only rule "other traffic to <port> will be
    /// dropped by KUBE-PROXY-FIREWALL"; before, it ends after its allow rules.
    FirewallChainClosingComment,
    /// A dual-stack kube-proxy's node IP of each family is `nodeIPTuple(bindAddress)`: the
    /// bind address for its own family (`0.0.0.0` by default), the zero address for the other;
    /// the Node's addresses are not read. A source range holding the zero address (`0.0.0.0/0`)
    /// counts as holding the node.
    NodeIpFromBindAddress,
    /// `detectNodeIPs` gives one node IP, the bind address if specified, else the Node's
    /// primary address (`GetNodeHostIP`: the first InternalIP of any family, else the first
    /// ExternalIP), else `127.0.0.1`, and the zero address to the other family.
    NodeIpPrimaryFamilyOnly,
    /// The local-traffic detector by CIDR (`ClusterCIDR`, `NodeCIDR`) writes the CIDR as
    /// written, host bits and leading zeros included (`! -s 10.244.1.0/16`); later it writes the
    /// parsed network (`10.244.0.0/16`).
    LocalDetectorCidrAsWritten,
    /// A Service's external IPs, load-balancer ingress IPs and `loadBalancerSourceRanges` reach
    /// the rules as the Service writes them (leading zeros, host bits kept); later parsed.
    ServiceIpsAsWritten,
    /// An endpoint's address reaches the rules, chain names and order as the EndpointSlice
    /// writes it; later parsed (`10.180.0.1` for `10.180.00.001`).
    EndpointIpsAsWritten,
    /// An endpoint's `IP()` parses the address out of its endpoint string (`IPPart`), so the
    /// iptables hairpin rule writes it canonical while the DNAT target keeps it as written.
    EndpointIpPartParsed,
    /// iptables mode always writes `--random-fully` on the KUBE-POSTROUTING MASQUERADE rule;
    /// before, only when the iptables binary supports it (`host.iptablesRandomFully`).
    IptablesRandomFullyAlways,
    /// A NodePort gets its KUBE-NODEPORTS (and KUBE-EXTERNAL-SERVICES) rules only when some
    /// host address matches `nodePortAddresses` (`GetNodeAddresses` found one); later, whatever
    /// the host addresses.
    NodePortRulesNeedNodeAddress,
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
    /// The first nftables masquerading: a `mark-for-masquerade` chain that every rule needing
    /// SNAT jumps to, the internal chain's `ip saddr != <cluster CIDR>` rule, a per-endpoint
    /// hairpin rule in each `endpoint-*` chain, and an `endpoint-*` chain for every endpoint.
    NftablesMarkForMasqueradeChain,
    /// The nftables masquerading of kubernetes/kubernetes#135800 and #136499: no
    /// `mark-for-masquerade` chain (the rules carry `mark set mark or <mark>` themselves), the
    /// ClusterIP masquerade rule once in `services` on `@cluster-ips`, a `hairpin-connections`
    /// set of this node's endpoints that `masquerading` masquerades, and, without session
    /// affinity, the endpoints as a `dnat ... numgen random mod n map` in the service chain
    /// instead of one `endpoint-*` chain each (affinity keeps them, without the hairpin rule).
    NftablesHairpinMasquerade,
    /// A service chain with one endpoint (no session affinity) DNATs with `dnat to ip:port`
    /// instead of a `numgen random mod 1` map.
    NftablesSingleEndpointDnat,
    /// The nftables element comments (the service port name) are cut to
    /// `knftables.CommentLengthMax`, 128 bytes; before, written whole (nft refuses longer ones).
    NftablesCommentTruncated,
    /// The nftables `firewall-ips` elements carry the service port name as a comment.
    NftablesFirewallElementComment,
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
/// #137807: `nft list --terse` when kube-proxy reads its own elements back, for nft 1.1.3),
/// #138571 (1.37: no periodic full sync in large-cluster mode), the partial-sync bookkeeping
/// of 1.27 to 1.36 (`PendingChanges`, `UpdatedServices`, `epChainSkipUpdate`) and the
/// add-and-delete of objects kube-proxy no longer wants (1.37's localhost NodePort reject map,
/// chains and counters with KubeProxyNFTablesLocalhostNodePorts off).
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
        upstream: "pkg/proxy/topology.go `canUseTopology` in v1.30.14 to v1.32.13 (`if \
                   !Enabled(TopologyAwareHints) && !Enabled(ServiceTrafficDistribution)`, the \
                   annotation checked only without ServiceTrafficDistribution: KEP-4444, alpha \
                   1.30, beta 1.31, GA 1.33) and `topologyModeFromHints` from v1.33.13 (no gate, \
                   no annotation); either way pkg/proxy/endpointslicecache.go `addEndpoints` drops the \
                   hints without TopologyAwareHints up to v1.32.13",
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
        behaviour: Behaviour::NftablesNodeIpFallback,
        first: 30,
        last: Some(30),
        backports: &[],
        upstream: "pkg/proxy/nftables/proxier.go `NewProxier` \
                   (`proxyutil.NewNodePortAddresses(ipFamily, nodePortAddressStrings, nodeIP)`) \
                   and pkg/proxy/util/nodeport_addresses.go `NewNodePortAddresses` (no CIDR of \
                   the family: `primaryIP/32` or `/128`, loopback not excluded), read in \
                   v1.30.14: kubernetes/kubernetes#122724 (CHANGELOG-1.30: \"Changed \
                   `--nodeport-addresses` behavior to default to \"primary node IP(s) only\"\"); \
                   1.29's nftables proxier (v1.29.15) passes no node IP and matches `fib daddr \
                   type local` minus loopback; 1.31 (#123105) moved the default into \
                   cmd/kube-proxy",
    },
    Row {
        behaviour: Behaviour::NftablesDefaultPrimary,
        first: 31,
        last: None,
        backports: &[],
        upstream: "cmd/kube-proxy/app/server_linux.go `platformApplyDefaults` (`nftables` mode and \
                   no `NodePortAddresses`: `[]string{NodePortAddressesPrimary}`), read in v1.31.14 \
                   to v1.37.2: kubernetes/kubernetes#123105 (CHANGELOG-1.31); absent in v1.30.14",
    },
    Row {
        behaviour: Behaviour::PrimaryNodePortAddresses,
        first: 31,
        last: None,
        backports: &[],
        upstream: "cmd/kube-proxy/app/server.go `newProxyServer`: v1.31.14 to v1.36.5 expand a lone \
                   `primary` into `nodeIPs[family]/32` and `/128` for each family whose node IP \
                   `!IsLoopback()`; v1.37.2 `expandNodePortAddressKeywords` does the same for \
                   `primary` wherever it stands; `detectNodeIPs` gives loopback to a family \
                   without a node IP",
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
        behaviour: Behaviour::NodePortAddressKeywords,
        first: 37,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/apis/config/validation/validation.go `validateKubeProxyNodePortAddress` \
                   (`seenKeywords`, `field.Duplicate`, \"must be a valid CIDR or one of the \
                   keywords 'primary', 'localhost', 'all'\") and cmd/kube-proxy/app/server.go \
                   `expandNodePortAddressKeywords` (`localhost`: `127.0.0.0/8` and `::1/128`; \
                   `all`: `0.0.0.0/0` and `::/0`), read in v1.37.0 and v1.37.2; v1.36.5 has \
                   neither",
    },
    Row {
        behaviour: Behaviour::ZeroCidrByText,
        first: 24,
        last: Some(33),
        backports: &[],
        upstream: "pkg/proxy/util/utils.go `IsZeroCIDR(cidr string)` (`cidr == IPv4ZeroCIDR || cidr \
                   == IPv6ZeroCIDR`) as read in v1.24.17 to v1.33.13 (1.24 to 1.26 through \
                   `GetNodeAddresses`, 1.27 on through `NewNodePortAddresses`); v1.34.12 has \
                   `IsZeroCIDR(cidr *net.IPNet)` (prefix length 0)",
    },
    Row {
        behaviour: Behaviour::ZeroPrefixMatchesNothing,
        first: 27,
        last: Some(27),
        backports: &[],
        upstream: "pkg/proxy/util/nodeport_addresses.go `GetNodeAddresses` in v1.27.16: the first \
                   round keeps `cidrStrings` that are `IsZeroCIDR` as written, the second skips \
                   `npa.cidrs` whose parsed `cidr.String()` is, so `192.168.0.9/0` gives no \
                   address; v1.26.15 skips by the written text in both rounds \
                   (pkg/proxy/util/utils.go), v1.28.15 has `GetNodeIPs` (`matchAll` by the \
                   written text)",
    },
    Row {
        behaviour: Behaviour::NodePortAddressesUnfiltered,
        first: 27,
        last: Some(27),
        backports: &[],
        upstream: "pkg/proxy/iptables/proxier.go `NewProxier` in v1.27.16: \
                   `utilproxy.NewNodePortAddresses(nodePortAddressStrings)` without the family \
                   (v1.26.15 filtered with `MapCIDRsByIPFamily`, v1.28.15 passes `ipFamily`), and \
                   `syncProxyRules` skips `nodeAddresses` of the other version but stops at the \
                   first zero CIDR of any",
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
                   (`sets.NewString(userspace, iptables, ipvs)` in v1.24.17 and v1.25.16); \
                   userspace removed by #112133 (v1.26.15 lists `iptables,ipvs`)",
    },
    Row {
        behaviour: Behaviour::ModeListCommaSpace,
        first: 28,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/apis/config/validation/validation.go `validateProxyModeLinux`: \
                   `strings.Join(sets.List(validModes), \", \")` in v1.28.15 (the move to \
                   generic sets), `strings.Join(validModes.List(), \",\")` in v1.24.17 to \
                   v1.27.16",
    },
    Row {
        behaviour: Behaviour::IpvsModeGated,
        first: 37,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/apis/config/validation/validation.go `validateProxyModeLinux` in \
                   v1.37.2: `if utilfeature.DefaultFeatureGate.Enabled(features.KubeProxyIPVS) \
                   { validModes.Insert(ProxyModeIPVS) }` (KEP-5495, kubernetes/kubernetes#139397)",
    },
    Row {
        behaviour: Behaviour::PlatformDefaultsBeforeValidate,
        first: 28,
        last: None,
        backports: &[],
        upstream: "cmd/kube-proxy/app/server.go (options.go from 1.31) `Options.Complete` calls \
                   `o.platformApplyDefaults(o.config)` (server_linux.go / server_others.go: \
                   blank mode to iptables, blank detectLocalMode to ClusterCIDR) in v1.28.15 to \
                   v1.37.2; v1.24.17 to v1.27.16 have no platformApplyDefaults",
    },
    Row {
        behaviour: Behaviour::ValidateLinuxBlock,
        first: 31,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/apis/config/validation/validation.go `Validate`, \
                   `validateKubeProxyLinuxConfiguration`, `validateDetectLocalConfiguration`, \
                   `validateDualStackCIDRStrings` in v1.31.14; v1.30.14 has the per-block sync \
                   periods, `ClusterCIDR`, `PortRange`, `InterfaceName` at the top",
    },
    Row {
        behaviour: Behaviour::ValidateNftablesBlock,
        first: 29,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/apis/config/validation/validation.go \
                   `validateKubeProxyNFTablesConfiguration` (v1.29.15 on, with the nftables \
                   mode)",
    },
    Row {
        behaviour: Behaviour::ValidateIpvsScheduler,
        first: 24,
        last: Some(26),
        backports: &[],
        upstream: "pkg/proxy/apis/config/validation/validation.go `validateIPVSSchedulerMethod` \
                   (v1.24.17 to v1.26.15; gone in v1.27.16)",
    },
    Row {
        behaviour: Behaviour::ValidateConntrackUdpTimeouts,
        first: 29,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/apis/config/validation/validation.go \
                   `validateKubeProxyConntrackConfiguration` (`UDPTimeout`, `UDPStreamTimeout`, \
                   v1.29.15 on)",
    },
    Row {
        behaviour: Behaviour::ValidateUdpIdleTimeout,
        first: 24,
        last: Some(25),
        backports: &[],
        upstream: "pkg/proxy/apis/config/validation/validation.go `Validate` (`UDPIdleTimeout`, \
                   v1.24.17 and v1.25.16; removed with the userspace proxy, v1.26.15)",
    },
    Row {
        behaviour: Behaviour::ValidatePortRange,
        first: 24,
        last: Some(30),
        backports: &[],
        upstream: "pkg/proxy/apis/config/validation/validation.go `Validate` \
                   (`utilnet.ParsePortRange(config.PortRange)`, v1.24.17 to v1.30.14)",
    },
    Row {
        behaviour: Behaviour::ValidateDetectLocalMode,
        first: 28,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/apis/config/validation/validation.go `validateDetectLocalMode` \
                   (`field.NotSupported`, v1.28.15 on)",
    },
    Row {
        behaviour: Behaviour::DetectLocalModeStartupError,
        first: 24,
        last: Some(27),
        backports: &[],
        upstream: "cmd/kube-proxy/app/server_others.go `getDetectLocalMode` (\"unknown \
                   detect-local-mode: %v\") and `newProxyServer` (\"cannot determine \
                   detect-local-mode: %v\"), v1.24.17 to v1.27.16",
    },
    Row {
        behaviour: Behaviour::ValidateLogging,
        first: 28,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/apis/config/validation/validation.go `Validate` \
                   (`logsapi.Validate(&config.Logging, ...)`, v1.28.15 on): component-base \
                   logs/api/v1 `Validate` (\"Unsupported log format\"; kube-proxy registers \
                   `text` and `json`)",
    },
    Row {
        behaviour: Behaviour::ShowHiddenMetricsFieldError,
        first: 36,
        last: None,
        backports: &[],
        upstream: "component-base metrics/options.go `ValidateShowHiddenMetricsVersion`: \
                   v0.36.5 calls metrics/api/v1 \
                   `ValidateShowHiddenMetricsVersionForKubeletBackwardCompatOnly` (\"invalid \
                   showHiddenMetricsForVersion: %v\" of a field.Error); v0.24.17 to v0.35.8 \
                   return \"--show-hidden-metrics-for-version must be omitted or have the value \
                   '%v'. Only the previous minor version is allowed\"",
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
        behaviour: Behaviour::FirewallChainClosingComment,
        first: 27,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/iptables/proxier.go `syncProxyRules` (`\"other traffic to %s will be \
                   dropped by KUBE-PROXY-FIREWALL\"`): present in v1.27.0 and v1.27.16, absent in \
                   v1.25.16 and v1.26.15, whose KUBE-FW-* ends after the allow rules",
    },
    Row {
        behaviour: Behaviour::NodeIpFromBindAddress,
        first: 24,
        last: Some(27),
        backports: &[],
        upstream: "cmd/kube-proxy/app/server_others.go `newProxyServer` hands the dual-stack \
                   proxiers `nodeIPTuple(config.BindAddress)` (cmd/kube-proxy/app/server.go: the \
                   bind address in its family's slot, `net.IPv4zero` / `net.IPv6zero` in the \
                   other), read in v1.24.17 and v1.27.16; `detectNodeIP` (the Node's IP) only \
                   picks the primary family and feeds a single-stack proxier",
    },
    Row {
        behaviour: Behaviour::NodeIpPrimaryFamilyOnly,
        first: 28,
        last: Some(28),
        backports: &[],
        upstream: "cmd/kube-proxy/app/server.go `detectNodeIPs(client, hostname, bindAddress)` in \
                   v1.28.15: the bind address unless unspecified, else `utilnode.GetNodeIP` \
                   (pkg/util/node `GetNodeHostIP`: `GetNodeHostIPs(node)[0]`), else \
                   `127.0.0.1`, and `net.IPv6zero` / `net.IPv4zero` for the other family; v1.29.15 \
                   reads every node IP (`getNodeIPs`, `detectNodeIPs(rawNodeIPs, bindAddress)`)",
    },
    Row {
        behaviour: Behaviour::LocalDetectorCidrAsWritten,
        first: 24,
        last: Some(29),
        backports: &[],
        upstream: "pkg/proxy/util/iptables/traffic.go `NewDetectLocalByCIDR(cidr string)` keeps the \
                   string for `-s` (v1.24.17 to v1.30.14), fed as written by cmd/kube-proxy \
                   `getLocalDetector` (1.24 to 1.27 `cidrTuple` / `PodCIDR`; 1.28 and 1.29 \
                   `proxyutil.MapCIDRsByIPFamily`, which returns the strings); from v1.30.14 \
                   `MapCIDRsByIPFamily` returns parsed `*net.IPNet`s and the caller passes \
                   `.String()`, the network",
    },
    Row {
        behaviour: Behaviour::ServiceIpsAsWritten,
        first: 24,
        last: Some(29),
        backports: &[],
        upstream: "pkg/proxy/service.go `newBaseServiceInfo` (v1.24.17 to v1.29.15): \
                   `MapIPsByIPFamily(service.Spec.ExternalIPs)` and `MapCIDRsByIPFamily` of the \
                   trimmed source ranges return the strings, the ingress IPs are kept as \
                   `ing.IP`, and iptables writes `-d`/`-s` with them; \
                   pkg/proxy/serviceport.go (v1.30.14) keeps `[]net.IP` / `[]*net.IPNet` \
                   (`externalIP.String()`, `cidr.String()`)",
    },
    Row {
        behaviour: Behaviour::EndpointIpsAsWritten,
        first: 24,
        last: Some(30),
        backports: &[],
        upstream: "pkg/proxy/endpointslicecache.go `addEndpoints`: v1.24.17 to v1.30.14 hand \
                   `endpoint.Addresses[0]` as written to `newBaseEndpointInfo` \
                   (`net.JoinHostPort(ip, port)`); v1.31.14 parses it first \
                   (`utilnet.ParseIPSloppy(endpoint.Addresses[0]).String()`)",
    },
    Row {
        behaviour: Behaviour::EndpointIpPartParsed,
        first: 24,
        last: Some(28),
        backports: &[],
        upstream: "pkg/proxy/endpoints.go `(*BaseEndpointInfo).IP()` = \
                   `proxyutil.IPPart(info.Endpoint)` (pkg/proxy/util/endpoints.go: \
                   `ParseIPSloppy(host).String()`) in v1.24.17 to v1.28.15; v1.29.15 returns \
                   the stored `info.ip`, as written",
    },
    Row {
        behaviour: Behaviour::IptablesRandomFullyAlways,
        first: 37,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/iptables/proxier.go `syncProxyRules`: v1.37.0 and v1.37.2 write \
                   `\"-j\", \"MASQUERADE\", \"--random-fully\"` unconditionally (`NewProxier` no longer \
                   asks `ipt.HasRandomFully()`); v1.36.5 appends it only `if \
                   proxier.iptables.HasRandomFully()`",
    },
    Row {
        behaviour: Behaviour::NodePortRulesNeedNodeAddress,
        first: 24,
        last: Some(26),
        backports: &[],
        upstream: "pkg/proxy/iptables/proxier.go `syncProxyRules`: `if svcInfo.NodePort() != 0 && \
                   len(nodeAddresses) != 0` around the \"Capture nodeports\" rules, \
                   `nodeAddresses` from pkg/proxy/util `GetNodeAddresses` (nil with \"no addresses \
                   found for cidrs\"), read in v1.24.17, v1.25.16 and v1.26.15; v1.27.16 builds \
                   the NodePort rules whatever `NodePortAddresses.GetNodeIPs` finds",
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
                   endpoints checks), read in v1.30.14 to v1.32.13 and v1.33.5 (1.33.0 to 1.33.5 \
                   keep it)",
    },
    Row {
        behaviour: Behaviour::NftablesPreDnatChains,
        first: 34,
        last: None,
        backports: &[(33, 6)],
        upstream: "kubernetes/kubernetes#132456 \"nftables short-circuit local traffic to external \
                   addresses\" (CHANGELOG-1.34, v1.34.0-beta.0: \"reject/drop traffic to service \
                   with no endpoints from filter chains at priority 0\"), cherry-picked to 1.33 \
                   as #133969 (CHANGELOG-1.33, v1.33.6); `filterPreroutingPreDNATChain` read in \
                   v1.33.6, v1.33.13 and v1.34.12, absent in v1.33.5",
    },
    Row {
        behaviour: Behaviour::NftablesMasqueradeMatchesPort,
        first: 29,
        last: Some(33),
        backports: &[],
        upstream: "pkg/proxy/nftables/proxier.go `syncProxyRules` (`ipX, \"daddr\", \
                   svcInfo.ClusterIP(), protocol, \"dport\", svcInfo.Port()`), in v1.33.5, v1.33.6 \
                   and v1.33.13; dropped by kubernetes/kubernetes#131492 \"nftables: cleanup \
                   service chain checks\" (not in v1.34.1)",
    },
    Row {
        behaviour: Behaviour::NftablesElementsOnce,
        first: 31,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/nftables/proxier.go `nftElementStorage.ensureElem` \
                   (kubernetes/kubernetes#126013 \"[kube-proxy: nftables] Implement partial \
                   sync\"), present in v1.31.0 and v1.31.14 (the nftables proxier of the two is \
                   the same file); v1.29.15 and v1.30.14 `tx.Add` every element",
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
                   #134118 (v1.34.2) and #134099 / #134117 (CHANGELOG-1.33, v1.33.6): `iifname` \
                   read in v1.33.6, v1.34.2 and v1.35.0, `iif` in v1.33.5 and v1.34.1",
    },
    Row {
        behaviour: Behaviour::NftablesMarkForMasqueradeChain,
        first: 29,
        last: Some(35),
        backports: &[],
        upstream: "pkg/proxy/nftables/proxier.go `setupNFTables` (`markMasqChain`, the three \
                   `masqueradingChain` rules) and `syncProxyRules` (`jump mark-for-masquerade`, \
                   `writeServiceToEndpointRules`), read in v1.29.15 to v1.35.8",
    },
    Row {
        behaviour: Behaviour::NftablesHairpinMasquerade,
        first: 36,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/nftables/proxier.go, v1.36.0 = v1.36.5 and v1.37.2: `setupNFTables` \
                   (`hairpinConnectionsSet`, the two `masqueradingChain` rules, the `services` \
                   rule on `@cluster-ips` with `proxier.masqueradeRule` and the comments \
                   \"masquerade all clusterIP traffic\" / \"masquerade clusterIP traffic from \
                   outside cluster\"), `syncProxyRules` (`hairpinConnections.ensureElem` for \
                   `epInfo.IsLocal()`, `serviceUsesAffinity`, the external chain's \
                   `masqueradeRule` with comment \"masquerade\" or \"masquerade local traffic\"), \
                   `writeServiceToEndpointDNATs` and `writeServiceToEndpointJumps`: \
                   kubernetes/kubernetes#135800 \"rework nftables masquerading code, part 1\" \
                   and #136499 \"further nftables masquerading improvements\" (CHANGELOG-1.36)",
    },
    Row {
        behaviour: Behaviour::NftablesSingleEndpointDnat,
        first: 37,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/nftables/proxier.go `writeServiceToEndpointDNATs` (\"Special case for \
                   single endpoint services\": `dnat to` `net.JoinHostPort(ip, port)`), in \
                   v1.37.0 and v1.37.2, not in v1.36.5",
    },
    Row {
        behaviour: Behaviour::NftablesCommentTruncated,
        first: 37,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/nftables/proxier.go `truncateNFTablesComment` \
                   (`s[:knftables.CommentLengthMax]`, 128 bytes, cut at a byte whatever the \
                   UTF-8) on `svcPortComment`, in v1.37.0 and v1.37.2: kubernetes/kubernetes#139516 \
                   (CHANGELOG-1.37, v1.37.0-alpha.1); v1.36.5 writes `svcInfo.nameString` whole",
    },
    Row {
        behaviour: Behaviour::NftablesFirewallElementComment,
        first: 30,
        last: Some(30),
        backports: &[],
        upstream: "pkg/proxy/nftables/proxier.go `syncProxyRules` in v1.30.14: the `firewallIPsMap` \
                   element has `Comment: &svcPortNameString`; v1.31.0 (the \
                   `proxier.firewallIPs.ensureElem` of #126013) writes none, and 1.29 has no \
                   `firewall-ips` map",
    },
    Row {
        behaviour: Behaviour::DuplicateEndpointsPreferNonTerminating,
        first: 36,
        last: None,
        backports: &[],
        upstream: "pkg/proxy/endpointslicecache.go `addEndpoints` (`!exists || !terminating` in \
                   v1.36.0 and v1.36.5, `!exists || isLocal` in v1.35.0 and v1.35.8): \
                   kubernetes/kubernetes#135593 \
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

/// A kube-proxy release as its rules are rendered: the release, and rows set back to how they
/// were on the other side of their boundary. `upgrade` renders a release step again with one
/// crossed row set back to tell which row changed a Service's rules; everything else renders
/// with none ([`Rows::at`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rows<'a> {
    pub(crate) version: crate::profile::Version,
    pub(crate) set_back: &'a [Behaviour],
}

impl Rows<'_> {
    /// The release's rows as they are.
    pub(crate) fn at(version: crate::profile::Version) -> Rows<'static> {
        Rows { version, set_back: &[] }
    }

    /// Whether a behaviour holds ([`holds_at`]), unless it is set back.
    pub(crate) fn holds(&self, behaviour: Behaviour) -> bool {
        holds_at(behaviour, self.version) != self.set_back.contains(&behaviour)
    }
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
