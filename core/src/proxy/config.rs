//! The proxier settings of one kube-proxy instance (one node, one IP family), resolved from
//! the real objects: `KubeProxyConfiguration`, the `Node`, and the host facts of the profile.

use std::collections::BTreeMap;
use std::net::IpAddr;

use ipnet::IpNet;

use super::release::{Behaviour, Rows};
use super::{ProxyMode, RenderError};
use crate::model::{KubeProxyConfiguration, Node};
use crate::net::{IpFamily, parse_cidr_sloppy, parse_ip_sloppy, unmap};
use crate::profile::{HostFacts, Version};

/// kube-proxy's local-traffic detector (`--detect-local-mode`, localdetector.go).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DetectLocal {
    /// No detector ("not implemented"): no ClusterIP masquerade rule, no pod short-circuit.
    None,
    /// `ClusterCIDR` or `NodeCIDR`: `-s CIDR` / `! -s CIDR`.
    Cidr(IpNet),
    /// `ClusterCIDR` or `NodeCIDR` in 1.24 to 1.29, which match the CIDR as written, host bits
    /// and leading zeros kept (proxy/release.rs `LocalDetectorCidrAsWritten`).
    WrittenCidr(String),
    /// `BridgeInterface`: `-i br0` / `! -i br0`.
    BridgeInterface(String),
    /// `InterfaceNamePrefix`: `-i veth+` / `! -i veth+`.
    InterfaceNamePrefix(String),
}

impl DetectLocal {
    /// iptables match for "traffic from a local pod".
    pub(crate) fn if_local(&self) -> Option<String> {
        match self {
            DetectLocal::None => None,
            DetectLocal::Cidr(net) => Some(format!("-s {net}")),
            DetectLocal::WrittenCidr(text) => Some(format!("-s {text}")),
            DetectLocal::BridgeInterface(name) => Some(format!("-i {name}")),
            DetectLocal::InterfaceNamePrefix(prefix) => Some(format!("-i {prefix}+")),
        }
    }

    /// iptables match for "traffic not from a local pod".
    pub(crate) fn if_not_local(&self) -> Option<String> {
        self.if_local().map(|m| format!("! {m}"))
    }

    /// nftables match for "traffic from a local pod". Interfaces are matched by name
    /// (`iifname`), as current localdetector.go does; older revisions wrote `iif`, which
    /// cannot take a `*` wildcard and needs the interface to exist when the rules load.
    pub(crate) fn nft_if_local(&self, family: IpFamily, by_name: bool) -> Option<String> {
        match self {
            DetectLocal::None => None,
            DetectLocal::Cidr(net) => Some(format!("{} saddr {net}", nft_ip(family))),
            DetectLocal::WrittenCidr(text) => Some(format!("{} saddr {text}", nft_ip(family))),
            DetectLocal::BridgeInterface(name) => Some(format!("{} {name}", iif(by_name))),
            DetectLocal::InterfaceNamePrefix(prefix) => Some(format!("{} {prefix}*", iif(by_name))),
        }
    }

    /// nftables match for "traffic not from a local pod".
    pub(crate) fn nft_if_not_local(&self, family: IpFamily, by_name: bool) -> Option<String> {
        match self {
            DetectLocal::None => None,
            DetectLocal::Cidr(net) => Some(format!("{} saddr != {net}", nft_ip(family))),
            DetectLocal::WrittenCidr(text) => Some(format!("{} saddr != {text}", nft_ip(family))),
            DetectLocal::BridgeInterface(name) => Some(format!("{} != {name}", iif(by_name))),
            DetectLocal::InterfaceNamePrefix(prefix) => {
                Some(format!("{} != {prefix}*", iif(by_name)))
            }
        }
    }
}

/// The nftables input-interface match: `iifname` (the name) where the release writes it, else
/// `iif` (proxy/release.rs `NftablesIifname`).
fn iif(by_name: bool) -> &'static str {
    if by_name { "iifname" } else { "iif" }
}

/// The layout of the nftables proxier's `kube-proxy` table: its filter base chains, the chains
/// they jump to and how LoadBalancer source ranges are checked. Which release writes which is
/// in the release table of `proxy/release.rs` (the `Nftables*` rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NftablesTable {
    /// 1.29 (alpha): `filter-input`, `filter-forward` and `filter-output` at priority -101,
    /// one `endpoints-check` chain, the `firewall` / `firewall-allow` sets and a `forward`
    /// chain with the `ct state invalid drop`; no `cluster-ips` set.
    Alpha,
    /// 1.30 to 1.33.5: `filter-prerouting`, `filter-input`, `filter-forward` and
    /// `filter-output` at -110 and `filter-output-post-dnat` at -90.
    PostDnatOutput,
    /// 1.34 on and 1.33.6 on: `filter-prerouting-pre-dnat` and `filter-output-pre-dnat` at
    /// -110, `filter-input`, `filter-forward` and `filter-output` at 0.
    PreDnat,
}

/// When kube-proxy uses an endpoint's topology hints (pkg/proxy/topology.go); which releases
/// take which rule is in the release table of `proxy/release.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopologyHints {
    /// TopologyAwareHints is off: hints are ignored.
    Off,
    /// 1.24 to 1.26: only with `service.kubernetes.io/topology-aware-hints: Auto` (or `auto`).
    AnnotationAuto,
    /// 1.27 on, ServiceTrafficDistribution off: with the hints annotation
    /// (`service.kubernetes.io/topology-aware-hints`, else `service.kubernetes.io/topology-mode`)
    /// set to anything but empty, `disabled` or `Disabled`.
    AnnotationEnabled,
    /// ServiceTrafficDistribution on (1.30 when enabled, 1.31 on by default): always.
    Always,
}

/// `ip` or `ip6`.
pub(crate) fn nft_ip(family: IpFamily) -> &'static str {
    match family {
        IpFamily::V4 => "ip",
        IpFamily::V6 => "ip6",
    }
}

/// Everything one proxier instance knows. Fields are public: any combination is a valid
/// kube-proxy, and tests override single settings (the golden fakes' mark string).
#[derive(Debug, Clone, PartialEq)]
pub struct ProxyConfig {
    /// The proxier's IP family.
    pub family: IpFamily,
    /// Node name (`hostnameOverride` or the Node): endpoints with this `nodeName` are local.
    pub node_name: String,
    /// Node labels (topology zone).
    pub node_labels: BTreeMap<String, String>,
    /// The node IP kube-proxy hands this family's proxier (`proxier.nodeIP`): the Node's IP of
    /// the family (1.29 on), or what older releases derive (proxy/release.rs
    /// `NodeIpFromBindAddress`, `NodeIpPrimaryFamilyOnly`: possibly the zero address).
    pub node_ip: Option<IpAddr>,
    /// Local-traffic detector.
    pub detect_local: DetectLocal,
    /// `masqueradeAll` of the mode's block (`iptables.masqueradeAll` or `nftables.masqueradeAll`).
    pub masquerade_all: bool,
    /// Mark string, `%#08x` of `1 << masqueradeBit` (`0x00004000`); the Go test fakes use `0x4000`.
    pub masquerade_mark: String,
    /// The MASQUERADE rule carries `--random-fully`: the iptables binary supports it, or the
    /// release writes it always (1.37 on).
    pub random_fully: bool,
    /// `iptables.localhostNodePorts` as configured (default true); forced off where kube-proxy
    /// forces it off (IPv6, nodePortAddresses without IPv4 loopback).
    pub localhost_node_ports: bool,
    /// `nodePortAddresses` as written (CIDRs and keywords); empty = kube-proxy's default.
    pub node_port_addresses: Vec<String>,
    /// Addresses on the node's interfaces, of the family.
    pub host_addresses: Vec<IpAddr>,
    /// `conntrack.tcpBeLiberal`.
    pub tcp_be_liberal: bool,
    /// nfacct counter `ct_state_invalid_dropped_pkts` exists.
    pub nfacct_invalid: bool,
    /// nfacct counter `localhost_nps_accepted_pkts` exists.
    pub nfacct_localhost: bool,
    /// Above this many endpoints in total, per-endpoint comments are dropped (1000).
    pub large_cluster_threshold: usize,
    /// Service CIDRs of the family (nftables "Drop traffic to unallocated ClusterIPs").
    pub service_cidrs: Vec<IpNet>,
    /// Feature gate PreferSameTrafficDistribution (node hints).
    pub prefer_same_node: bool,
    /// Feature gate ProxyTerminatingEndpoints: with no ready endpoint in scope, fall back to
    /// the serving-and-terminating ones (off by default in 1.24 and 1.25, always on from 1.28).
    pub terminating_fallback: bool,
    /// Feature gate ServiceInternalTrafficPolicy: `internalTrafficPolicy: Local` is honoured
    /// (settable in 1.24 and 1.25, always on from 1.26); off, every Service is `Cluster`.
    pub internal_traffic_policy: bool,
    /// When topology hints are used.
    pub topology_hints: TopologyHints,
    /// Feature gate LoadBalancerIPMode: `ipMode: Proxy` ingress IPs get no rules (else the
    /// field is ignored and every ingress IP is a VIP).
    pub ip_mode_proxy_skipped: bool,
    /// `nodePortAddresses` keywords beyond a lone `primary`: `localhost`, `all`, and `primary`
    /// among CIDRs (1.37 on).
    pub node_port_keywords: bool,
    /// Only `0.0.0.0/0` and `::/0` as written mean every address (`IsZeroCIDR` on the text,
    /// 1.24 to 1.33); later any CIDR of prefix length 0 does.
    pub zero_cidr_by_text: bool,
    /// A CIDR of prefix length 0 written otherwise (`192.168.0.9/0`) matches no host address
    /// (1.27: `GetNodeAddresses` skips it by its parsed text).
    pub zero_prefix_matches_nothing: bool,
    /// The iptables proxier takes `nodePortAddresses` of both families (1.27: `NewNodePortAddresses`
    /// without a family): a family without a CIDR matches nothing, unless a `0.0.0.0/0` or
    /// `::/0` of either family is written.
    pub node_port_addresses_unfiltered: bool,
    /// kube-proxy writes KUBE-FIREWALL's "block incoming localnet connections" rule (IPv4 with
    /// localhost NodePorts), 1.27 to the newest; before, kubelet owned the chain and the
    /// payload has none.
    pub kube_firewall_rule: bool,
    /// LoadBalancer source ranges are enforced in filter KUBE-PROXY-FIREWALL (1.25 to the
    /// newest); in 1.24 the nat KUBE-FW-* chain ends in `-j KUBE-MARK-DROP` (kubelet's chain
    /// and its filter KUBE-FIREWALL drop rule do the dropping).
    pub lb_firewall_in_filter: bool,
    /// A Local policy without local endpoints is dropped in filter (1.25 to the newest); in
    /// 1.24 the jumps go on to KUBE-SVL-*, which ends in `-j KUBE-MARK-DROP`.
    pub no_local_endpoints_in_filter: bool,
    /// External IPs, load-balancer ingress IPs and source ranges are written as the Service
    /// writes them (1.24 to 1.29); from 1.30 as parsed (`1.2.3.4`, `203.0.113.0/25`).
    pub service_ips_as_written: bool,
    /// Endpoint addresses are written as the EndpointSlice writes them (1.24 to 1.30); from
    /// 1.31 as parsed.
    pub endpoint_ips_as_written: bool,
    /// The iptables hairpin rule's `-s` is the endpoint address parsed (`IPPart`) even where the
    /// endpoint string keeps it as written (1.24 to 1.28).
    pub endpoint_ip_part_parsed: bool,
    /// The nat KUBE-FW-* chain ends in "other traffic to ... will be dropped by
    /// KUBE-PROXY-FIREWALL" (1.27 on).
    pub fw_closing_comment: bool,
    /// NodePort rules only when a host address matches `nodePortAddresses` (1.24 to 1.26).
    pub node_port_rules_need_address: bool,
    /// 1.30's nftables proxier: a family without a `nodePortAddresses` CIDR takes the node IP
    /// (`/32`, `/128`; loopback kept).
    pub nftables_node_ip_fallback: bool,
    /// nftables mode turns an empty `nodePortAddresses` into `primary`, the node IPs (1.31 to
    /// the newest); 1.29's nftables mode matches every local address but loopback.
    pub nftables_default_primary: bool,
    /// iptables mode keeps loopback destinations out of KUBE-NODEPORTS where they cannot work
    /// (`! -d ::1/128`, and `! -d 127.0.0.0/8` with localhost NodePorts off): 1.26, which added
    /// `iptables.localhostNodePorts`, to the newest. 1.24 and 1.25 jump to KUBE-NODEPORTS for
    /// every local address, loopback included, in both families.
    pub localhost_exclusions: bool,
    /// Of two endpoints with one `ip:port` in a service port's slices, the non-terminating
    /// copy wins (kube-proxy 1.36 to the newest); else a local copy wins (1.24 to 1.35).
    pub prefer_non_terminating_duplicates: bool,
    /// The nftables table layout of the release.
    pub nftables_table: NftablesTable,
    /// The nftables internal chain's masquerade rule also matches the service port (1.29 to
    /// 1.33).
    pub nftables_masquerade_port: bool,
    /// The nftables proxier writes each set or map key once (`nftElementStorage`, 1.31 to the
    /// newest); before, every element is added as met.
    pub nftables_elements_once: bool,
    /// The nftables interface detectors match `iifname` (1.35, 1.34.2, 1.33.6 on); before,
    /// `iif`.
    pub nftables_iifname: bool,
    /// How the nftables proxier masquerades and reaches endpoints.
    pub nftables_masquerade: NftablesMasquerade,
    /// A service chain with a single endpoint DNATs with `dnat to ip:port` (1.37 on).
    pub nftables_single_endpoint_dnat: bool,
    /// Element comments are cut to 128 bytes (`knftables.CommentLengthMax`, 1.37 on).
    pub nftables_truncate_comments: bool,
    /// `firewall-ips` elements carry the service port name as a comment (1.30).
    pub nftables_firewall_comment: bool,
    /// kube-proxy's own KubeProxyNFTablesLocalhostNodePorts gate (alpha in 1.37): NodePorts on
    /// loopback destinations are rejected and counted by the nftables proxier.
    pub nftables_localhost_node_ports: bool,
}

/// How the nftables proxier masquerades (proxy/release.rs `NftablesMarkForMasqueradeChain`,
/// `NftablesHairpinMasquerade`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NftablesMasquerade {
    /// 1.29 to 1.35: rules jump to the `mark-for-masquerade` chain; the internal chain
    /// masquerades off-cluster sources; every endpoint has a chain with a hairpin rule.
    MarkChain,
    /// 1.36 on: `mark set mark or <mark>` inline, one `services` rule on `@cluster-ips`, the
    /// `hairpin-connections` set; endpoint chains only with session affinity.
    HairpinSet,
}

/// `fmt.Sprintf("%#08x", 1<<bit)`: Go counts the width in digits after `0x`.
pub(crate) fn mark_string(bit: i32) -> String {
    let bit = u32::try_from(bit.clamp(0, 31)).unwrap_or(14);
    format!("0x{:08x}", 1u64 << bit)
}

impl ProxyConfig {
    /// A proxier with kube-proxy's defaults and no node facts: the newest release's behaviours
    /// but for the nftables masquerading, which is that of 1.29 to 1.35
    /// ([`NftablesMasquerade::MarkChain`]), the release of kube-proxy's own goldens.
    pub fn new(family: IpFamily) -> ProxyConfig {
        ProxyConfig {
            family,
            node_name: String::new(),
            node_labels: BTreeMap::new(),
            node_ip: None,
            detect_local: DetectLocal::None,
            masquerade_all: false,
            masquerade_mark: mark_string(14),
            random_fully: false,
            localhost_node_ports: true,
            node_port_addresses: Vec::new(),
            host_addresses: Vec::new(),
            tcp_be_liberal: false,
            nfacct_invalid: false,
            nfacct_localhost: false,
            large_cluster_threshold: 1000,
            service_cidrs: Vec::new(),
            prefer_same_node: false,
            terminating_fallback: true,
            internal_traffic_policy: true,
            prefer_non_terminating_duplicates: true,
            topology_hints: TopologyHints::Always,
            ip_mode_proxy_skipped: true,
            node_port_keywords: true,
            zero_cidr_by_text: false,
            zero_prefix_matches_nothing: false,
            node_port_addresses_unfiltered: false,
            service_ips_as_written: false,
            endpoint_ips_as_written: false,
            endpoint_ip_part_parsed: false,
            fw_closing_comment: true,
            node_port_rules_need_address: false,
            nftables_node_ip_fallback: false,
            nftables_default_primary: true,
            kube_firewall_rule: true,
            lb_firewall_in_filter: true,
            no_local_endpoints_in_filter: true,
            localhost_exclusions: true,
            nftables_table: NftablesTable::PreDnat,
            nftables_masquerade_port: false,
            nftables_elements_once: true,
            nftables_iifname: true,
            // The goldens of kube-proxy's own tests (tests/data/proxy, and the conformance
            // copies) are of the 1.34/1.35 era: a bare configuration keeps that layout;
            // `configure_release` sets each release's.
            nftables_masquerade: NftablesMasquerade::MarkChain,
            nftables_single_endpoint_dnat: true,
            nftables_truncate_comments: true,
            nftables_firewall_comment: false,
            nftables_localhost_node_ports: false,
        }
    }

    /// Builds the configuration from the real objects for a kube-proxy of the newest release
    /// running in `mode` ([`ProxyConfig::from_objects_at`]).
    pub fn from_objects(
        family: IpFamily,
        mode: ProxyMode,
        kube_proxy: Option<&KubeProxyConfiguration>,
        nodes: &[&Node],
        node_name: Option<&str>,
        host: &HostFacts,
        service_cidrs: &[IpNet],
    ) -> Result<ProxyConfig, RenderError> {
        ProxyConfig::from_objects_at(
            Version::NEWEST,
            family,
            mode,
            kube_proxy,
            nodes,
            node_name,
            host,
            service_cidrs,
        )
    }

    /// Builds the configuration from the real objects for a kube-proxy of `version` running
    /// in `mode`: what cmd/kube-proxy derives before it creates the proxier (node, node IP,
    /// local detector, the mode's block). `node_name` overrides `hostnameOverride`; without
    /// both, the first Node is used. The rest of the release's behaviours are applied by
    /// proxy/release.rs `configure_release`.
    #[allow(clippy::too_many_arguments, reason = "the inputs cmd/kube-proxy reads, each once")]
    pub fn from_objects_at(
        version: Version,
        family: IpFamily,
        mode: ProxyMode,
        kube_proxy: Option<&KubeProxyConfiguration>,
        nodes: &[&Node],
        node_name: Option<&str>,
        host: &HostFacts,
        service_cidrs: &[IpNet],
    ) -> Result<ProxyConfig, RenderError> {
        let rows = Rows::at(version);
        let objects = (kube_proxy, nodes, node_name);
        ProxyConfig::from_objects_with(rows, family, mode, objects, host, service_cidrs)
    }

    /// [`ProxyConfig::from_objects_at`] with the release's rows as `rows` has them (some set
    /// back, for `upgrade`); `objects` are the KubeProxyConfiguration, the Nodes and the
    /// node's name.
    pub(crate) fn from_objects_with(
        rows: Rows<'_>,
        family: IpFamily,
        mode: ProxyMode,
        objects: (Option<&KubeProxyConfiguration>, &[&Node], Option<&str>),
        host: &HostFacts,
        service_cidrs: &[IpNet],
    ) -> Result<ProxyConfig, RenderError> {
        let (kube_proxy, nodes, node_name) = objects;
        let mut config = ProxyConfig::new(family);
        let default_kpc = KubeProxyConfiguration::default();
        let kpc = kube_proxy.unwrap_or(&default_kpc);
        // cmd/kube-proxy/app/server.go `newProxyServer` takes the hostname from
        // component-helpers `nodeutil.GetHostname(hostnameOverride)`, which trims and
        // lowercases it (every release svclab offers, 1.24 to the newest): `Node-A` finds Node
        // `node-a` and makes endpoints with `nodeName: node-a` local.
        let wanted = node_name.map(str::to_owned).or_else(|| {
            (!kpc.hostname_override.trim().is_empty())
                .then(|| kpc.hostname_override.trim().to_lowercase())
        });
        let node = match &wanted {
            Some(name) => match nodes.iter().find(|n| n.metadata.name == *name) {
                Some(n) => Some(*n),
                // An explicit --node must exist when the scenario has Nodes at all.
                None if node_name.is_some() && !nodes.is_empty() => {
                    return Err(RenderError::UnknownNode(name.clone()));
                }
                None => None,
            },
            None => nodes.first().copied(),
        };
        config.node_name =
            wanted.or_else(|| node.map(|n| n.metadata.name.clone())).unwrap_or_default();
        if let Some(node) = node {
            config.node_labels = node.metadata.labels.clone().into_iter().collect();
        }
        config.host_addresses = host
            .interface_addresses
            .iter()
            .filter_map(|a| {
                parse_cidr_sloppy(a)
                    .map(|(ip, _)| unmap(ip))
                    .or_else(|| parse_ip_sloppy(a).map(unmap))
            })
            .filter(|ip| IpFamily::of(*ip) == family)
            .collect();
        if config.host_addresses.is_empty() {
            // No interface facts: the node's addresses plus loopback.
            config.host_addresses.push(loopback(family));
            if let Some(node) = node {
                for (_, a) in &node.addresses {
                    if let Some(ip) = parse_ip_sloppy(a).map(unmap)
                        && IpFamily::of(ip) == family
                        && !config.host_addresses.contains(&ip)
                    {
                        config.host_addresses.push(ip);
                    }
                }
            }
        }
        config.node_ip = Some(node_ip(rows, family, node, &kpc.bind_address));
        config.detect_local = detect_local(kpc, node, family, rows);
        // pkg/proxy/apis/config/v1alpha1/conversion.go
        // `Convert_v1alpha1_KubeProxyConfiguration_To_config_KubeProxyConfiguration` (1.31 to
        // the newest) takes masqueradeAll from the block of the configured mode, and
        // cmd/kube-proxy/app/server_linux.go `createProxier` hands the nftables proxier
        // `NFTables.MasqueradeBit`, the iptables proxier `IPTables.MasqueradeBit` (each
        // defaulted to 14 by `SetDefaults_KubeProxyConfiguration`). In 1.29 and 1.30
        // cmd/kube-proxy passes `config.NFTables.MasqueradeAll` and `MasqueradeBit` to the
        // nftables proxier itself (server_others.go `newProxyServer` in v1.29.15,
        // server_linux.go `createProxier` in v1.30.14).
        let (masquerade_all, masquerade_bit) = match mode {
            ProxyMode::Nftables => (kpc.nftables_masquerade_all, kpc.nftables_masquerade_bit),
            ProxyMode::Iptables => (kpc.masquerade_all, kpc.masquerade_bit),
        };
        config.masquerade_all = masquerade_all;
        config.masquerade_mark = mark_string(masquerade_bit.unwrap_or(14));
        config.random_fully = host.iptables_random_fully;
        config.localhost_node_ports = kpc.localhost_node_ports.unwrap_or(true);
        config.node_port_addresses = kpc.node_port_addresses.clone();
        config.tcp_be_liberal = kpc.tcp_be_liberal;
        config.nfacct_invalid = host.nfacct;
        config.nfacct_localhost = host.nfacct;
        config.service_cidrs =
            service_cidrs.iter().copied().filter(|n| IpFamily::of_net(n) == family).collect();
        // kube-proxy's own gates: `featureGates` of its configuration, applied by
        // cmd/kube-proxy/app/server.go `Options.processV1Alpha1Config`'s
        // `utilfeature.DefaultMutableFeatureGate.SetFromMap`; a gate it leaves out keeps the
        // release default, which `from_world` takes from the profile.
        config.prefer_same_node =
            kpc.feature_gates.get("PreferSameTrafficDistribution").copied().unwrap_or(false);
        Ok(config)
    }

    /// `nodePortAddresses` resolved for a mode: CIDRs of the family; `None` = match all.
    /// Keywords as cmd/kube-proxy expands them (`primary`: 1.31 on, alone until 1.36;
    /// `localhost`, `all`: 1.37 on; the release's validation refuses them before); nftables
    /// defaults an empty list to `primary` (1.31 on) or, in 1.30, takes the node IP for a
    /// family without a CIDR (`NewNodePortAddresses(family, cidrs, nodeIP)`, loopback kept).
    pub(crate) fn node_port_cidrs(&self, mode: ProxyMode) -> Option<Vec<IpNet>> {
        let nftables = mode == ProxyMode::Nftables;
        let mut texts: Vec<&str> = self.node_port_addresses.iter().map(String::as_str).collect();
        if texts.is_empty() && nftables && self.nftables_default_primary {
            texts.push("primary");
        }
        let host = |ip: IpAddr| IpNet::new(ip, if ip.is_ipv4() { 32 } else { 128 }).ok();
        let mut cidrs = Vec::new();
        let mut all = false;
        for text in texts {
            match text {
                // cmd/kube-proxy/app/server.go `newProxyServer` (1.31 to 1.36) and
                // `expandNodePortAddressKeywords` (1.37): the node IPs that are not loopback.
                "primary" => {
                    if let Some(ip) = self.node_ip
                        && !ip.is_loopback()
                        && !ip.is_unspecified()
                        && IpFamily::of(ip) == self.family
                    {
                        cidrs.extend(host(ip));
                    }
                }
                // `127.0.0.0/8` and `::1/128`.
                "localhost" if self.node_port_keywords => {
                    let loopback = match self.family {
                        IpFamily::V4 => "127.0.0.0/8",
                        IpFamily::V6 => "::1/128",
                    };
                    cidrs.extend(loopback.parse::<IpNet>().ok());
                }
                "all" if self.node_port_keywords => all = true,
                _ => {
                    let Some((_, net)) = parse_cidr_sloppy(text.trim()) else { continue };
                    if IpFamily::of_net(&net) != self.family {
                        continue;
                    }
                    // pkg/proxy/util `IsZeroCIDR`: the text `0.0.0.0/0` or `::/0` until 1.33,
                    // any prefix length 0 from 1.34 (proxy/release.rs `ZeroCidrByText`).
                    let zero = if self.zero_cidr_by_text {
                        matches!(text, "0.0.0.0/0" | "::/0")
                    } else {
                        net.prefix_len() == 0
                    };
                    if zero {
                        all = true;
                    } else {
                        cidrs.push(net);
                    }
                }
            }
        }
        if nftables && self.nftables_node_ip_fallback && cidrs.is_empty() && !all {
            // 1.30: no CIDR of the family, so the node IP, loopback or not.
            return self.node_ip.and_then(host).map(|net| vec![net]);
        }
        if !nftables
            && self.node_port_addresses_unfiltered
            && cidrs.is_empty()
            && !all
            && !self.node_port_addresses.is_empty()
        {
            // 1.27: the other family's CIDRs hold no address of this one; a zero CIDR of any
            // family as written ends the final loop with the match-all rule.
            let any_zero =
                self.node_port_addresses.iter().any(|t| matches!(t.as_str(), "0.0.0.0/0" | "::/0"));
            return if any_zero { None } else { Some(Vec::new()) };
        }
        // No CIDR of this family means "all" (0.0.0.0/0 resp. ::/0), as NewNodePortAddresses.
        if cidrs.is_empty() || all {
            return None;
        }
        Some(cidrs)
    }

    /// pkg/proxy/util `NodePortAddresses.ContainsExplicitLoopback` (1.37): a CIDR of the
    /// family whose network address is loopback (`127.0.0.0/8`, `::1/128`, the `localhost`
    /// keyword), as opposed to one that merely holds loopback (`0.0.0.0/0`).
    pub(crate) fn node_port_explicit_loopback(&self) -> bool {
        self.node_port_addresses.iter().any(|text| match text.as_str() {
            "localhost" => self.node_port_keywords,
            _ => parse_cidr_sloppy(text.trim()).is_some_and(|(_, net)| {
                IpFamily::of_net(&net) == self.family && net.network().is_loopback()
            }),
        })
    }

    /// Whether localhost NodePorts are in effect (iptables mode, IPv4 only, and only when
    /// nodePortAddresses includes an IPv4 loopback address). pkg/proxy/util
    /// `NodePortAddresses.ContainsIPv4Loopback` (1.26, with the option, to the newest): a CIDR
    /// counts when its address as written is loopback (`127.0.2.0/28`) or it contains
    /// `127.0.0.0` (`64.0.0.0/2`); an IPv4-less list matches everything and counts too.
    pub(crate) fn localhost_node_ports_effective(&self) -> bool {
        if self.family != IpFamily::V4 || !self.localhost_node_ports {
            return false;
        }
        match self.node_port_cidrs(ProxyMode::Iptables) {
            None => true,
            Some(cidrs) => cidrs.iter().any(|c| {
                c.addr().is_loopback()
                    || c.contains(&IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 0)))
            }),
        }
    }

    /// Host addresses that accept NodePorts when nodePortAddresses is not match-all, sorted.
    pub(crate) fn node_port_ips(&self, cidrs: &[IpNet], skip_loopback: bool) -> Vec<IpAddr> {
        let mut ips: Vec<IpAddr> = self
            .host_addresses
            .iter()
            .copied()
            .filter(|ip| {
                cidrs
                    .iter()
                    .filter(|c| !(self.zero_prefix_matches_nothing && c.prefix_len() == 0))
                    .any(|c| c.contains(ip))
            })
            .filter(|ip| !(skip_loopback && ip.is_loopback()))
            .collect();
        ips.sort();
        ips.dedup();
        ips
    }

    /// Whether an address is one of this node's own (`-m addrtype --dst-type LOCAL`).
    pub(crate) fn is_local_address(&self, ip: IpAddr) -> bool {
        ip.is_loopback() || self.host_addresses.contains(&ip) || self.node_ip == Some(ip)
    }
}

/// `127.0.0.1` or `::1`.
fn loopback(family: IpFamily) -> IpAddr {
    match family {
        IpFamily::V4 => IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
        IpFamily::V6 => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
    }
}

/// `0.0.0.0` or `::` (`net.IPv4zero`, `net.IPv6zero`).
fn zero(family: IpFamily) -> IpAddr {
    match family {
        IpFamily::V4 => IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
        IpFamily::V6 => IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED),
    }
}

/// pkg/util/node `GetNodeHostIPs`: the Node's InternalIPs, then its ExternalIPs, in order; the
/// first, then the first of the other family.
fn node_host_ips(node: Option<&Node>) -> Vec<IpAddr> {
    let Some(node) = node else { return Vec::new() };
    let all: Vec<IpAddr> = ["InternalIP", "ExternalIP"]
        .iter()
        .flat_map(|kind| {
            node.addresses
                .iter()
                .filter(move |(t, _)| t == kind)
                .filter_map(|(_, a)| parse_ip_sloppy(a).map(unmap))
        })
        .collect();
    let Some(&first) = all.first() else { return Vec::new() };
    let mut ips = vec![first];
    ips.extend(all.iter().copied().find(|ip| IpFamily::of(*ip) != IpFamily::of(first)));
    ips
}

/// The node IP cmd/kube-proxy hands the proxier of `family`, as a dual-stack kube-proxy (one
/// on a host with both iptables and ip6tables, or nftables) derives it at its release
/// (proxy/release.rs `NodeIpFromBindAddress`, `NodeIpPrimaryFamilyOnly`). `bindAddress` is
/// `0.0.0.0` when not written (v1alpha1 `SetDefaults_KubeProxyConfiguration`).
fn node_ip(rows: Rows<'_>, family: IpFamily, node: Option<&Node>, bind_address: &str) -> IpAddr {
    let bind_text = if bind_address.is_empty() { "0.0.0.0" } else { bind_address };
    let bind = parse_ip_sloppy(bind_text).map(unmap);
    if rows.holds(Behaviour::NodeIpFromBindAddress) {
        // cmd/kube-proxy/app/server.go `nodeIPTuple`: the bind address, unspecified or not,
        // fills its own family's slot; the other gets the zero address.
        return bind.filter(|ip| IpFamily::of(*ip) == family).unwrap_or_else(|| zero(family));
    }
    if rows.holds(Behaviour::NodeIpPrimaryFamilyOnly) {
        // cmd/kube-proxy/app/server.go `detectNodeIPs` (1.28): one IP, for its family only.
        let ip = bind
            .filter(|ip| !ip.is_unspecified())
            .or_else(|| node_host_ips(node).first().copied())
            .unwrap_or_else(|| loopback(IpFamily::V4));
        return if IpFamily::of(ip) == family { ip } else { zero(family) };
    }
    // cmd/kube-proxy/app/server.go `detectNodeIPs` (1.29 on): the Node's IP of the family,
    // else loopback ("Can't determine this node's IP, assuming loopback; if this is incorrect,
    // please set the --bind-address flag"); a specified `bindAddress` overrides the IP of its
    // own family.
    if let Some(bind) = bind.filter(|ip| !ip.is_unspecified() && IpFamily::of(*ip) == family) {
        return bind;
    }
    node_host_ips(node)
        .into_iter()
        .find(|ip| IpFamily::of(*ip) == family)
        .unwrap_or_else(|| loopback(family))
}

/// cmd/kube-proxy's detector selection: ClusterCIDR is the default mode; a mode without its
/// value (no CIDR of the family, no interface name) means no detector. A CIDR detector writes
/// the CIDR as written in 1.24 to 1.29 (proxy/release.rs `LocalDetectorCidrAsWritten`), the
/// parsed network after.
fn detect_local(
    kpc: &KubeProxyConfiguration,
    node: Option<&Node>,
    family: IpFamily,
    rows: Rows<'_>,
) -> DetectLocal {
    let as_written = rows.holds(Behaviour::LocalDetectorCidrAsWritten);
    let first_cidr = |texts: &mut dyn Iterator<Item = &str>| {
        texts
            .filter_map(|t| parse_cidr_sloppy(t.trim()).map(|(_, n)| (t.trim(), n)))
            .find(|(_, n)| IpFamily::of_net(n) == family)
            .map_or(DetectLocal::None, |(text, net)| {
                if as_written {
                    DetectLocal::WrittenCidr(text.to_owned())
                } else {
                    DetectLocal::Cidr(net)
                }
            })
    };
    match kpc.detect_local_mode.as_str() {
        "" | "ClusterCIDR" => first_cidr(&mut kpc.cluster_cidr.split(',')),
        "NodeCIDR" => node
            .map_or(DetectLocal::None, |n| first_cidr(&mut n.pod_cidrs.iter().map(String::as_str))),
        "BridgeInterface" if !kpc.bridge_interface.is_empty() => {
            DetectLocal::BridgeInterface(kpc.bridge_interface.clone())
        }
        "InterfaceNamePrefix" if !kpc.interface_name_prefix.is_empty() => {
            DetectLocal::InterfaceNamePrefix(kpc.interface_name_prefix.clone())
        }
        _ => DetectLocal::None,
    }
}

/// Release rows that [`configure_release`] reads as one setting, each taking over where another
/// ends (it reads the newest that holds), and a row that tells the same upstream change from
/// cmd/kube-proxy's side (`PrimaryNodePortAddresses`, which the nftables proxier's
/// `NftablesDefaultPrimary` renders). Setting one of them back alone may change nothing, so
/// `upgrade`'s attribution sets back together the rows of a group that one release step crosses.
pub(crate) const ROW_GROUPS: &[&[Behaviour]] = &[
    &[Behaviour::HintsAnnotationAuto, Behaviour::HintsAnnotationAnyValue],
    &[Behaviour::NodeIpFromBindAddress, Behaviour::NodeIpPrimaryFamilyOnly],
    &[
        Behaviour::NftablesAlphaTable,
        Behaviour::NftablesPostDnatOutputChain,
        Behaviour::NftablesPreDnatChains,
    ],
    &[Behaviour::NftablesMarkForMasqueradeChain, Behaviour::NftablesHairpinMasquerade],
    &[
        Behaviour::NftablesNodeIpFallback,
        Behaviour::NftablesDefaultPrimary,
        Behaviour::PrimaryNodePortAddresses,
    ],
];

/// The proxier settings that follow kube-proxy's release (`rows`, its patch included where a
/// row is backported) and its feature gates (`gate`, as the KubeProxyConfiguration and the
/// profile set them): the rows of proxy/release.rs `BEHAVIOURS` applied to a configuration.
pub(crate) fn configure_release(
    config: &mut ProxyConfig,
    rows: Rows<'_>,
    gate: &dyn Fn(&str) -> bool,
) {
    config.prefer_non_terminating_duplicates =
        rows.holds(Behaviour::DuplicateEndpointsPreferNonTerminating);
    config.prefer_same_node = gate("PreferSameTrafficDistribution");
    config.terminating_fallback = gate("ProxyTerminatingEndpoints");
    config.internal_traffic_policy = gate("ServiceInternalTrafficPolicy");
    // pkg/proxy/endpointslicecache.go `addEndpoints` keeps an endpoint's zone hints only with
    // TopologyAwareHints on (1.24 to 1.32), so without it `canUseTopology` finds an endpoint
    // without hints and bails out even where ServiceTrafficDistribution alone would let it
    // through (1.30 to 1.32); from 1.33 neither file checks a gate.
    config.topology_hints = if !gate("TopologyAwareHints") {
        TopologyHints::Off
    } else if rows.holds(Behaviour::HintsWithoutAnnotation) && gate("ServiceTrafficDistribution") {
        TopologyHints::Always
    } else if rows.holds(Behaviour::HintsAnnotationAnyValue) {
        TopologyHints::AnnotationEnabled
    } else if rows.holds(Behaviour::HintsAnnotationAuto) {
        TopologyHints::AnnotationAuto
    } else {
        TopologyHints::Off
    };
    config.ip_mode_proxy_skipped =
        rows.holds(Behaviour::IpModeProxySkipped) && gate("LoadBalancerIPMode");
    config.nftables_node_ip_fallback = rows.holds(Behaviour::NftablesNodeIpFallback);
    config.nftables_default_primary = rows.holds(Behaviour::NftablesDefaultPrimary);
    config.node_port_keywords = rows.holds(Behaviour::NodePortAddressKeywords);
    config.zero_cidr_by_text = rows.holds(Behaviour::ZeroCidrByText);
    config.zero_prefix_matches_nothing = rows.holds(Behaviour::ZeroPrefixMatchesNothing);
    config.node_port_addresses_unfiltered = rows.holds(Behaviour::NodePortAddressesUnfiltered);
    config.node_port_rules_need_address = rows.holds(Behaviour::NodePortRulesNeedNodeAddress);
    config.random_fully |= rows.holds(Behaviour::IptablesRandomFullyAlways);
    config.fw_closing_comment = rows.holds(Behaviour::FirewallChainClosingComment);
    config.service_ips_as_written = rows.holds(Behaviour::ServiceIpsAsWritten);
    config.endpoint_ips_as_written = rows.holds(Behaviour::EndpointIpsAsWritten);
    config.endpoint_ip_part_parsed = rows.holds(Behaviour::EndpointIpPartParsed);
    config.kube_firewall_rule = rows.holds(Behaviour::KubeFirewallInPayload);
    config.lb_firewall_in_filter = rows.holds(Behaviour::ProxyFirewallChain);
    config.no_local_endpoints_in_filter = rows.holds(Behaviour::NoLocalEndpointsInFilter);
    config.nfacct_invalid &= rows.holds(Behaviour::NfacctCounters);
    config.nfacct_localhost &= rows.holds(Behaviour::NfacctCounters);
    config.localhost_exclusions = rows.holds(Behaviour::LocalhostNodePortsOption);
    // No `conntrack.tcpBeLiberal` before 1.29: the INVALID drop is always written.
    config.tcp_be_liberal &= rows.holds(Behaviour::TcpBeLiberalOption);
    config.nftables_table = if rows.holds(Behaviour::NftablesPreDnatChains) {
        NftablesTable::PreDnat
    } else if rows.holds(Behaviour::NftablesPostDnatOutputChain) {
        NftablesTable::PostDnatOutput
    } else {
        NftablesTable::Alpha
    };
    config.nftables_masquerade_port = rows.holds(Behaviour::NftablesMasqueradeMatchesPort);
    config.nftables_elements_once = rows.holds(Behaviour::NftablesElementsOnce);
    config.nftables_iifname = rows.holds(Behaviour::NftablesIifname);
    config.nftables_masquerade = if rows.holds(Behaviour::NftablesHairpinMasquerade) {
        NftablesMasquerade::HairpinSet
    } else {
        NftablesMasquerade::MarkChain
    };
    config.nftables_single_endpoint_dnat = rows.holds(Behaviour::NftablesSingleEndpointDnat);
    config.nftables_truncate_comments = rows.holds(Behaviour::NftablesCommentTruncated);
    config.nftables_firewall_comment = rows.holds(Behaviour::NftablesFirewallElementComment);
    // pkg/features/kube_features.go `KubeProxyNFTablesLocalhostNodePorts` (alpha in 1.37, off by
    // default; unknown before, where kube-proxy refuses to set it: proxy/startup.rs).
    config.nftables_localhost_node_ports = gate("KubeProxyNFTablesLocalhostNodePorts");
    if !config.localhost_exclusions {
        // No `iptables.localhostNodePorts` before 1.26: IPv4 localhost NodePorts always on.
        config.localhost_node_ports = true;
    }
}
