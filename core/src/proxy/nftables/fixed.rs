//! The objects of the `kube-proxy` table that every sync writes whatever the Services: the sets
//! and maps, the chains, the jumps from the base chains and the rules of the fixed chains, in
//! the order `syncProxyRules` writes them (`setupNFTables` and `nftablesJumpChains` in
//! pkg/proxy/nftables/proxier.go). Which layout a release writes is [`NftablesTable`].

use ipnet::IpNet;

use super::{Tx, masquerade_statement};
use crate::net::IpFamily;
use crate::proxy::config::{NftablesMasquerade, NftablesTable, ProxyConfig, nft_ip};

/// The protocols whose NodePorts on loopback the nftables proxier rejects and counts
/// (pkg/proxy/nftables/proxier.go `localhostNodePortRejectProtocols`, 1.37 with
/// KubeProxyNFTablesLocalhostNodePorts): none with the gate off; with `nodePortAddresses`
/// naming loopback itself (`localhostNodePortProxy`, a userspace proxy serving TCP, which writes
/// no rules) UDP and SCTP (`metrics.LocalhostNodePortRejectedProtocols`); else all three
/// (`LocalhostNodePortRejectableProtocols`).
pub(super) fn localhost_rejects(config: &ProxyConfig) -> &'static [&'static str] {
    if !config.nftables_localhost_node_ports {
        &[]
    } else if config.node_port_explicit_loopback() {
        &["udp", "sctp"]
    } else {
        &["tcp", "udp", "sctp"]
    }
}

/// The fixed part of one sync's table.
pub(super) struct Fixed<'a> {
    config: &'a ProxyConfig,
    layout: NftablesTable,
    /// `ip` or `ip6`.
    ipx: &'static str,
    /// `ipv4_addr` or `ipv6_addr`.
    addr_type: &'static str,
    /// The nodePortAddresses CIDRs, when they do not take every local address.
    node_port_cidrs: Option<&'a [IpNet]>,
}

impl<'a> Fixed<'a> {
    pub(super) fn new(config: &'a ProxyConfig, node_port_cidrs: Option<&'a [IpNet]>) -> Self {
        let addr_type = match config.family {
            IpFamily::V4 => "ipv4_addr",
            IpFamily::V6 => "ipv6_addr",
        };
        Fixed {
            config,
            layout: config.nftables_table,
            ipx: nft_ip(config.family),
            addr_type,
            node_port_cidrs,
        }
    }

    /// Everything, in the order the proxier writes it.
    pub(super) fn write(&self, tx: &mut Tx) {
        self.sets_and_maps(tx);
        self.chains(tx);
        self.rules(tx);
    }

    fn alpha(&self) -> bool {
        self.layout == NftablesTable::Alpha
    }

    /// 1.36 on: inline marks and the hairpin set (`NftablesMasquerade::HairpinSet`).
    fn hairpin(&self) -> bool {
        self.config.nftables_masquerade == NftablesMasquerade::HairpinSet
    }

    fn sets_and_maps(&self, tx: &mut Tx) {
        let addr_type = self.addr_type;
        let lb_type = format!("{addr_type} . inet_proto . inet_service");
        if !self.alpha() {
            tx.line(
                "set",
                &format!("cluster-ips {{ type {addr_type} ; comment \"Active ClusterIPs\" ; }}"),
            );
        }
        if self.hairpin() {
            tx.line("set", &format!("hairpin-connections {{ type {addr_type} . {addr_type} . inet_proto . inet_service ; comment \"service hairpin connections\" ; }}"));
        }
        if self.node_port_cidrs.is_some() {
            tx.line("set", &format!("nodeport-ips {{ type {addr_type} ; comment \"IPs that accept NodePort traffic\" ; }}"));
        }
        if self.alpha() {
            // 1.29: the destinations under source ranges and the allowed destination+source
            // pairs.
            tx.line("set", &format!("firewall {{ type {lb_type} ; comment \"destinations that are subject to LoadBalancerSourceRanges\" ; }}"));
            tx.line("set", &format!("firewall-allow {{ type {lb_type} . {addr_type} ; flags interval ; comment \"destinations+sources that are allowed by LoadBalancerSourceRanges\" ; }}"));
        } else {
            tx.line(
                "map",
                &format!("firewall-ips {{ type {lb_type} : verdict ; comment \"destinations that are subject to LoadBalancerSourceRanges\" ; }}"),
            );
        }
        tx.line(
            "map",
            "no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment \"vmap to drop or reject packets to service nodeports with no endpoints\" ; }",
        );
        tx.line(
            "map",
            &format!("no-endpoint-services {{ type {lb_type} : verdict ; comment \"vmap to drop or reject packets to services with no endpoints\" ; }}"),
        );
        tx.line(
            "map",
            &format!("service-ips {{ type {lb_type} : verdict ; comment \"ClusterIP, ExternalIP and LoadBalancer IP traffic\" ; }}"),
        );
        tx.line("map", "service-nodeports { type inet_proto . inet_service : verdict ; comment \"NodePort traffic\" ; }");
        if !localhost_rejects(self.config).is_empty() {
            tx.line(
                "map",
                "localhost-nodeport-reject-ports { type inet_proto . inet_service : verdict ; comment \"localhost NodePorts rejected by kube-proxy\" ; }",
            );
            // `metrics.LocalhostNodePortRejectedCounterName`.
            for protocol in localhost_rejects(self.config) {
                tx.line("counter", &format!("localhost-nodeport-rejected-{protocol}"));
            }
        }
    }

    /// The filter base chains by release: 1.29 runs them at dstnat - 1 on input, forward and
    /// output; kubernetes/kubernetes#122614 (1.30) moved them to dstnat - 10 and added
    /// prerouting, #122692 (1.30) the post-DNAT output chain at dstnat + 10; #132456 (1.34,
    /// 1.33.6) keeps only the firewall before DNAT and runs the rest at the filter priority.
    /// Then the filter chains they jump to, and the NAT chains.
    fn chains(&self, tx: &mut Tx) {
        let (base, regular): (&[&str], &[&str]) = match self.layout {
            NftablesTable::Alpha => (
                &[
                    "filter-forward { type filter hook forward priority -101 ; }",
                    "filter-input { type filter hook input priority -101 ; }",
                    "filter-output { type filter hook output priority -101 ; }",
                ],
                &["endpoints-check", "firewall-allow-check", "firewall-check", "forward"],
            ),
            NftablesTable::PostDnatOutput => (
                &[
                    "cluster-ips-check",
                    "filter-prerouting { type filter hook prerouting priority -110 ; }",
                    "filter-forward { type filter hook forward priority -110 ; }",
                    "filter-input { type filter hook input priority -110 ; }",
                    "filter-output { type filter hook output priority -110 ; }",
                    "filter-output-post-dnat { type filter hook output priority -90 ; }",
                ],
                &["firewall-check"],
            ),
            NftablesTable::PreDnat => (
                &[
                    "cluster-ips-check",
                    "filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }",
                    "filter-output-pre-dnat { type filter hook output priority -110 ; }",
                    "filter-forward { type filter hook forward priority 0 ; }",
                    "filter-input { type filter hook input priority 0 ; }",
                    "filter-output { type filter hook output priority 0 ; }",
                ],
                &["firewall-check"],
            ),
        };
        let nat_1_36: &[&str] = &[
            "masquerading",
            "nat-output { type nat hook output priority -100 ; }",
            "nat-postrouting { type nat hook postrouting priority 100 ; }",
            "nat-prerouting { type nat hook prerouting priority -100 ; }",
            "nodeport-endpoints-check",
            "reject-chain { comment \"helper for @no-endpoint-services / @no-endpoint-nodeports\" ; }",
            "services",
            "service-endpoints-check",
        ];
        let nat: &[&str] = if self.hairpin() {
            nat_1_36
        } else if self.alpha() {
            &[
                "mark-for-masquerade",
                "masquerading",
                "nat-output { type nat hook output priority -100 ; }",
                "nat-postrouting { type nat hook postrouting priority 100 ; }",
                "nat-prerouting { type nat hook prerouting priority -100 ; }",
                "reject-chain { comment \"helper for @no-endpoint-services / @no-endpoint-nodeports\" ; }",
                "services",
            ]
        } else {
            &[
                "mark-for-masquerade",
                "masquerading",
                "nat-output { type nat hook output priority -100 ; }",
                "nat-postrouting { type nat hook postrouting priority 100 ; }",
                "nat-prerouting { type nat hook prerouting priority -100 ; }",
                "nodeport-endpoints-check",
                "reject-chain { comment \"helper for @no-endpoint-services / @no-endpoint-nodeports\" ; }",
                "services",
                "service-endpoints-check",
            ]
        };
        for chain in base.iter().chain(regular).chain(nat) {
            tx.chain(chain);
        }
        for protocol in localhost_rejects(self.config) {
            tx.chain(&format!("localhost-nodeport-reject-{protocol}"));
        }
    }

    /// The jumps of `nftablesJumpChains`. Each goes to the end of its base chain, so within a
    /// base chain they keep this list's order; across chains any order loads the same table.
    fn jumps(&self) -> &'static [(&'static str, &'static str)] {
        match self.layout {
            NftablesTable::Alpha => &[
                ("filter-input", "ct state new jump endpoints-check"),
                ("filter-forward", "ct state new jump endpoints-check"),
                ("filter-output", "ct state new jump endpoints-check"),
                ("filter-forward", "jump forward"),
                ("filter-input", "ct state new jump firewall-check"),
                ("filter-output", "ct state new jump firewall-check"),
                ("filter-forward", "ct state new jump firewall-check"),
            ],
            NftablesTable::PostDnatOutput => &[
                ("filter-input", "ct state new jump nodeport-endpoints-check"),
                ("filter-input", "ct state new jump service-endpoints-check"),
                ("filter-forward", "ct state new jump service-endpoints-check"),
                ("filter-output", "ct state new jump service-endpoints-check"),
                ("filter-prerouting", "ct state new jump firewall-check"),
                ("filter-output", "ct state new jump firewall-check"),
                ("filter-forward", "ct state new jump cluster-ips-check"),
                ("filter-output-post-dnat", "ct state new jump cluster-ips-check"),
            ],
            NftablesTable::PreDnat => &[
                ("filter-prerouting-pre-dnat", "ct state new jump firewall-check"),
                ("filter-forward", "ct state new jump service-endpoints-check"),
                ("filter-forward", "ct state new jump cluster-ips-check"),
                ("filter-input", "ct state new jump nodeport-endpoints-check"),
                ("filter-input", "ct state new jump service-endpoints-check"),
                ("filter-output", "ct state new jump service-endpoints-check"),
                ("filter-output-pre-dnat", "ct state new jump firewall-check"),
                ("filter-output", "ct state new jump cluster-ips-check"),
            ],
        }
    }

    /// The match of NodePort traffic: every local address but loopback, or the
    /// `nodeport-ips` set.
    fn nodeport_match(&self) -> String {
        match self.node_port_cidrs {
            None => format!("fib daddr type local {}", self.no_localhost()),
            Some(_) => format!("{} daddr @nodeport-ips", self.ipx),
        }
    }

    fn no_localhost(&self) -> String {
        let loopback = match self.config.family {
            IpFamily::V4 => "127.0.0.0/8",
            IpFamily::V6 => "::1",
        };
        format!("{} daddr != {loopback}", self.ipx)
    }

    fn services_lookup(&self) -> String {
        format!("{} daddr . meta l4proto . th dport vmap @no-endpoint-services", self.ipx)
    }

    fn nodeports_lookup(nodeport_match: &str) -> String {
        format!("{nodeport_match} meta l4proto . th dport vmap @no-endpoint-nodeports")
    }

    fn rules(&self, tx: &mut Tx) {
        let ipx = self.ipx;
        let nodeport_match = self.nodeport_match();
        if self.alpha() {
            tx.rule("endpoints-check", &self.services_lookup());
            tx.rule("endpoints-check", &Self::nodeports_lookup(&nodeport_match));
        } else {
            self.cluster_ips_check(tx);
        }
        for (chain, rule) in self.jumps() {
            tx.rule(chain, rule);
        }
        self.firewall(tx);
        self.masquerading(tx);
        tx.rule("nat-output", "jump services");
        tx.rule("nat-postrouting", "jump masquerading");
        tx.rule("nat-prerouting", "jump services");
        if !self.alpha() {
            // The split check runs on the input hook only, where the destination is local
            // already: with every address accepting NodePorts it leaves out `fib daddr type
            // local` (kubernetes/kubernetes#122692, 1.30 to the newest).
            let m = match self.node_port_cidrs {
                Some(_) => nodeport_match.clone(),
                None => self.no_localhost(),
            };
            tx.rule("nodeport-endpoints-check", &Self::nodeports_lookup(&m));
        }
        self.localhost_reject(tx);
        tx.rule("reject-chain", "reject");
        if self.hairpin() {
            self.cluster_ip_masquerade(tx);
        }
        tx.rule("services", &format!("{ipx} daddr . meta l4proto . th dport vmap @service-ips"));
        tx.rule(
            "services",
            &format!("{nodeport_match} meta l4proto . th dport vmap @service-nodeports"),
        );
        if let Some(cidrs) = self.node_port_cidrs {
            for ip in self.config.node_port_ips(cidrs, true) {
                tx.element("nodeport-ips", &ip.to_string(), None, "");
            }
        }
        if !self.alpha() {
            tx.rule("service-endpoints-check", &self.services_lookup());
        }
    }

    /// `cluster-ips-check` (1.30 on): reject the invalid ports of ClusterIPs, drop what no
    /// Service holds in the service CIDRs. kube-proxy keeps the CIDRs as one comma-separated
    /// string (`{ a,b }`).
    fn cluster_ips_check(&self, tx: &mut Tx) {
        let ipx = self.ipx;
        tx.rule("cluster-ips-check", &format!("{ipx} daddr @cluster-ips reject comment \"Reject traffic to invalid ports of ClusterIPs\""));
        if !self.config.service_cidrs.is_empty() {
            let cidrs: Vec<String> =
                self.config.service_cidrs.iter().map(ToString::to_string).collect();
            tx.rule(
                "cluster-ips-check",
                &format!(
                    "{ipx} daddr {{ {} }} drop comment \"Drop traffic to unallocated ClusterIPs\"",
                    cidrs.join(",")
                ),
            );
        }
    }

    /// LoadBalancer source ranges: 1.29's `firewall` sets and the proxier's own INVALID drop
    /// (the nftables twin of KUBE-FORWARD's), else the `firewall-ips` verdict map.
    fn firewall(&self, tx: &mut Tx) {
        let ipx = self.ipx;
        if !self.alpha() {
            tx.rule(
                "firewall-check",
                &format!("{ipx} daddr . meta l4proto . th dport vmap @firewall-ips"),
            );
            return;
        }
        tx.rule(
            "firewall-allow-check",
            &format!("{ipx} daddr . meta l4proto . th dport . {ipx} saddr @firewall-allow return"),
        );
        tx.rule("firewall-allow-check", "drop");
        tx.rule(
            "firewall-check",
            &format!("{ipx} daddr . meta l4proto . th dport @firewall jump firewall-allow-check"),
        );
        if !self.config.tcp_be_liberal {
            tx.rule("forward", "ct state invalid drop");
        }
    }

    /// 1.37, KubeProxyNFTablesLocalhostNodePorts on: each rejected protocol's chain counts and
    /// rejects, and `nodeport-endpoints-check` sends loopback NodePorts to them
    /// (`setupNFTables`, after the no-endpoint rule).
    fn localhost_reject(&self, tx: &mut Tx) {
        let protocols = localhost_rejects(self.config);
        if protocols.is_empty() {
            return;
        }
        for protocol in protocols {
            tx.rule(
                &format!("localhost-nodeport-reject-{protocol}"),
                &format!("counter name \"localhost-nodeport-rejected-{protocol}\" reject"),
            );
        }
        let loopback = match self.config.family {
            IpFamily::V4 => "127.0.0.0/8",
            IpFamily::V6 => "::1",
        };
        tx.rule(
            "nodeport-endpoints-check",
            &format!(
                "{} daddr {loopback} meta l4proto . th dport vmap @localhost-nodeport-reject-ports",
                self.ipx
            ),
        );
    }

    /// 1.36 on: ClusterIP traffic is marked for masquerading in `services`, before the
    /// dispatch, once for every ClusterIP (`setupNFTables`: `masqueradeAll`, else the local
    /// detector's "not local" match; no rule without a detector).
    fn cluster_ip_masquerade(&self, tx: &mut Tx) {
        let (config, ipx) = (self.config, self.ipx);
        let mark = masquerade_statement(config);
        if config.masquerade_all {
            tx.rule(
                "services",
                &format!(
                    "{ipx} daddr @cluster-ips {mark} comment \"masquerade all clusterIP traffic\""
                ),
            );
        } else if let Some(not_local) =
            config.detect_local.nft_if_not_local(config.family, config.nftables_iifname)
        {
            tx.rule(
                "services",
                &format!(
                    "{ipx} daddr @cluster-ips {not_local} {mark} comment \"masquerade clusterIP traffic from outside cluster\""
                ),
            );
        }
    }

    /// The masquerade mark and the chain that masquerades marked packets; from 1.36 one rule
    /// takes the mark off and masquerades, another masquerades the hairpin connections.
    fn masquerading(&self, tx: &mut Tx) {
        let mark = &self.config.masquerade_mark;
        if self.hairpin() {
            let ipx = self.ipx;
            tx.rule(
                "masquerading",
                &format!("mark and {mark} != 0 mark set mark xor {mark} masquerade fully-random"),
            );
            tx.rule(
                "masquerading",
                &format!("ct status dnat {ipx} saddr . {ipx} daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random"),
            );
            return;
        }
        tx.rule("mark-for-masquerade", &format!("mark set mark or {mark}"));
        tx.rule("masquerading", &format!("mark and {mark} == 0 return"));
        tx.rule("masquerading", &format!("mark set mark xor {mark}"));
        tx.rule("masquerading", "masquerade fully-random");
    }
}
