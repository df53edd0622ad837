//! The proxier settings of one kube-proxy instance (one node, one IP family), resolved from
//! the real objects: `KubeProxyConfiguration`, the `Node`, and the host facts of the profile.

use std::collections::BTreeMap;
use std::net::IpAddr;

use ipnet::IpNet;

use super::{ProxyMode, RenderError};
use crate::model::{KubeProxyConfiguration, Node};
use crate::net::{IpFamily, parse_cidr_sloppy, parse_ip_sloppy, unmap};
use crate::profile::HostFacts;

/// kube-proxy's local-traffic detector (`--detect-local-mode`, localdetector.go).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DetectLocal {
    /// No detector ("not implemented"): no ClusterIP masquerade rule, no pod short-circuit.
    None,
    /// `ClusterCIDR` or `NodeCIDR`: `-s CIDR` / `! -s CIDR`.
    Cidr(IpNet),
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
            DetectLocal::BridgeInterface(name) => Some(format!("{} {name}", iif(by_name))),
            DetectLocal::InterfaceNamePrefix(prefix) => Some(format!("{} {prefix}*", iif(by_name))),
        }
    }

    /// nftables match for "traffic not from a local pod".
    pub(crate) fn nft_if_not_local(&self, family: IpFamily, by_name: bool) -> Option<String> {
        match self {
            DetectLocal::None => None,
            DetectLocal::Cidr(net) => Some(format!("{} saddr != {net}", nft_ip(family))),
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
    /// The node's primary IP of the family (`proxier.nodeIP`).
    pub node_ip: Option<IpAddr>,
    /// Local-traffic detector.
    pub detect_local: DetectLocal,
    /// `masqueradeAll` of the mode's block (`iptables.masqueradeAll` or `nftables.masqueradeAll`).
    pub masquerade_all: bool,
    /// Mark string, `%#08x` of `1 << masqueradeBit` (`0x00004000`); the Go test fakes use `0x4000`.
    pub masquerade_mark: String,
    /// iptables supports `--random-fully`.
    pub random_fully: bool,
    /// `iptables.localhostNodePorts` as configured (default true); forced off where kube-proxy
    /// forces it off (IPv6, nodePortAddresses without IPv4 loopback).
    pub localhost_node_ports: bool,
    /// `nodePortAddresses` as written (CIDRs or `primary`); empty = kube-proxy's default.
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
    /// `nodePortAddresses: [primary]` drops a loopback node IP, leaving the list empty, so
    /// NodePorts match every local address (1.30, where the nftables default became the
    /// primary node IPs, to the newest).
    pub primary_skips_loopback: bool,
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
    /// nftables mode turns an empty `nodePortAddresses` into the primary node IPs (1.30 to the
    /// newest); 1.29's nftables mode matches every local address but loopback.
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
    /// The nftables proxier writes each set or map key once (`nftElementStorage`, 1.32 to the
    /// newest); before, every element is added as met.
    pub nftables_elements_once: bool,
    /// The nftables interface detectors match `iifname` (1.35, 1.34.2, 1.33.6 on); before,
    /// `iif`.
    pub nftables_iifname: bool,
    /// The release's nftables masquerading is not the one svclab writes (1.36 on): the payload
    /// opens with a `#` comment saying so (`nftables::MASQUERADE_NOTICE`).
    pub nftables_masquerade_unmodelled: bool,
}

/// `fmt.Sprintf("%#08x", 1<<bit)`: Go counts the width in digits after `0x`.
pub(crate) fn mark_string(bit: i32) -> String {
    let bit = u32::try_from(bit.clamp(0, 31)).unwrap_or(14);
    format!("0x{:08x}", 1u64 << bit)
}

impl ProxyConfig {
    /// A proxier with kube-proxy's defaults and no node facts.
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
            primary_skips_loopback: true,
            nftables_default_primary: true,
            kube_firewall_rule: true,
            lb_firewall_in_filter: true,
            no_local_endpoints_in_filter: true,
            localhost_exclusions: true,
            nftables_table: NftablesTable::PreDnat,
            nftables_masquerade_port: false,
            nftables_elements_once: true,
            nftables_iifname: true,
            nftables_masquerade_unmodelled: false,
        }
    }

    /// Builds the configuration from the real objects for a kube-proxy running in `mode`.
    /// `node_name` overrides `hostnameOverride`; without both, the first Node is used.
    pub fn from_objects(
        family: IpFamily,
        mode: ProxyMode,
        kube_proxy: Option<&KubeProxyConfiguration>,
        nodes: &[&Node],
        node_name: Option<&str>,
        host: &HostFacts,
        service_cidrs: &[IpNet],
    ) -> Result<ProxyConfig, RenderError> {
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
            // kube-proxy's node IP: the first InternalIP of the family, else the first ExternalIP.
            let pick = |kind: &str| {
                node.addresses
                    .iter()
                    .filter(|(t, _)| t == kind)
                    .filter_map(|(_, a)| parse_ip_sloppy(a).map(unmap))
                    .find(|ip| IpFamily::of(*ip) == family)
            };
            config.node_ip = pick("InternalIP").or_else(|| pick("ExternalIP"));
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
            config.host_addresses.push(match family {
                IpFamily::V4 => IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
                IpFamily::V6 => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
            });
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
        // cmd/kube-proxy/app/server.go `detectNodeIPs` (1.24 to 1.28: `detectNodeIP`): the
        // Node's IP of the family, else loopback ("Can't determine this node's IP, assuming
        // loopback; if this is incorrect, please set the --bind-address flag"); a specified
        // `bindAddress` overrides the IP of its own family, in every release.
        if config.node_ip.is_none() {
            config.node_ip = Some(match family {
                IpFamily::V4 => IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
                IpFamily::V6 => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
            });
        }
        if let Some(bind) = parse_ip_sloppy(kpc.bind_address.trim()).map(unmap)
            && !bind.is_unspecified()
            && IpFamily::of(bind) == family
        {
            config.node_ip = Some(bind);
        }
        config.detect_local = detect_local(kpc, node, family);
        // pkg/proxy/apis/config/v1alpha1/conversion.go
        // `Convert_v1alpha1_KubeProxyConfiguration_To_config_KubeProxyConfiguration` (1.31 to
        // the newest) takes masqueradeAll from the block of the configured mode, and
        // cmd/kube-proxy/app/server_linux.go `createProxier` hands the nftables proxier
        // `NFTables.MasqueradeBit`, the iptables proxier `IPTables.MasqueradeBit` (each
        // defaulted to 14 by `SetDefaults_KubeProxyConfiguration`). The `nftables` block
        // appeared with the nftables mode in 1.29; 1.29 and 1.30 are taken to read it the same
        // way (not checked at those tags).
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
    /// nftables mode defaults an empty list to `primary` (the node IP) from 1.30.
    pub(crate) fn node_port_cidrs(&self, mode: ProxyMode) -> Option<Vec<IpNet>> {
        let mut texts = self.node_port_addresses.clone();
        if texts.is_empty() && mode == ProxyMode::Nftables && self.nftables_default_primary {
            texts.push("primary".to_owned());
        }
        let mut cidrs = Vec::new();
        for text in &texts {
            if text == "primary" {
                if let Some(ip) = self.node_ip
                    && !(self.primary_skips_loopback && ip.is_loopback())
                    && let Ok(net) = IpNet::new(ip, if ip.is_ipv4() { 32 } else { 128 })
                {
                    cidrs.push(net);
                }
                continue;
            }
            if let Some((_, net)) = parse_cidr_sloppy(text.trim())
                && IpFamily::of_net(&net) == self.family
            {
                cidrs.push(net);
            }
        }
        // No CIDR of this family means "all" (0.0.0.0/0 resp. ::/0), as NewNodePortAddresses.
        if cidrs.is_empty() || cidrs.iter().any(|c| c.prefix_len() == 0) {
            return None;
        }
        Some(cidrs)
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
            .filter(|ip| cidrs.iter().any(|c| c.contains(ip)))
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

/// cmd/kube-proxy's detector selection: ClusterCIDR is the default mode; a mode without its
/// value (no CIDR of the family, no interface name) means no detector.
fn detect_local(
    kpc: &KubeProxyConfiguration,
    node: Option<&Node>,
    family: IpFamily,
) -> DetectLocal {
    let first_cidr = |texts: &mut dyn Iterator<Item = &str>| {
        texts
            .filter_map(|t| parse_cidr_sloppy(t.trim()).map(|(_, n)| n))
            .find(|n| IpFamily::of_net(n) == family)
    };
    match kpc.detect_local_mode.as_str() {
        "" | "ClusterCIDR" => first_cidr(&mut kpc.cluster_cidr.split(','))
            .map_or(DetectLocal::None, DetectLocal::Cidr),
        "NodeCIDR" => node
            .and_then(|n| first_cidr(&mut n.pod_cidrs.iter().map(String::as_str)))
            .map_or(DetectLocal::None, DetectLocal::Cidr),
        "BridgeInterface" if !kpc.bridge_interface.is_empty() => {
            DetectLocal::BridgeInterface(kpc.bridge_interface.clone())
        }
        "InterfaceNamePrefix" if !kpc.interface_name_prefix.is_empty() => {
            DetectLocal::InterfaceNamePrefix(kpc.interface_name_prefix.clone())
        }
        _ => DetectLocal::None,
    }
}
