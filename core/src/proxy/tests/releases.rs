//! What changes from one kube-proxy release to the next (the rows of `proxy/release.rs`), a release at a time.

use super::*;
use crate::proxy::release::{Behaviour, holds};

/// pkg/proxy/endpointslicecache.go `addEndpoints`: of two copies of one `ip:port`, 1.36 and
/// later keep the non-terminating one (kubernetes/kubernetes#135593, a pod IP reused while the
/// old pod terminates); 1.24 to 1.35 keep a local copy.
#[test]
fn duplicate_endpoints_by_release() {
    let ghost = "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: ns1, name: s-a, labels: {kubernetes.io/service-name: svc1}}\naddressType: IPv4\nendpoints: [{addresses: [\"10.0.0.5\"], nodeName: test-node, conditions: {ready: false, serving: false, terminating: true}}]\nports: [{name: p80, port: 80, protocol: TCP}]\n";
    let running = "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: ns1, name: s-b, labels: {kubernetes.io/service-name: svc1}}\naddressType: IPv4\nendpoints: [{addresses: [\"10.0.0.5\"], nodeName: other, conditions: {ready: true}}]\nports: [{name: p80, port: 80, protocol: TCP}]\n";
    let yaml = format!("{SVC}{ghost}{running}");
    // Newest: the running copy is kept, so the Service has a ready endpoint.
    check(&yaml, ProxyMode::Iptables, none, &["-j KUBE-SEP-"], &["has no endpoints"]);
    // 1.35: the local terminating copy is kept; not ready, not serving: no endpoint at all.
    check(
        &yaml,
        ProxyMode::Iptables,
        |c| c.prefer_non_terminating_duplicates = false,
        &["has no endpoints"],
        &["-j KUBE-SEP-"],
    );
}

/// pkg/proxy/topology.go `canUseTopology` and pkg/proxy/serviceport.go by release (the
/// `Hints*` rows of proxy/release.rs): 1.24 to 1.26 need `topology-aware-hints: Auto`; 1.27
/// to 1.30 any value but disabled of `topology-aware-hints`, else `topology-mode`; from 1.31
/// (ServiceTrafficDistribution beta, KEP-4444) hints count without any annotation. With zone
/// hints for z1 only on 10.0.0.1, a node in z1 reaches 10.0.0.1 alone when hints are used.
#[test]
fn topology_hints_by_release() {
    let objects = |annotations: &str| {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: node-a, labels: {{topology.kubernetes.io/zone: z1}}}}\nstatus: {{addresses: [{{type: InternalIP, address: 192.168.0.2}}]}}\n---\napiVersion: v1\nkind: Service\nmetadata: {{name: web, namespace: default, annotations: {{{annotations}}}}}\nspec: {{clusterIP: 172.30.0.41, ports: [{{name: p80, port: 80}}]}}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{namespace: default, name: web-1, labels: {{kubernetes.io/service-name: web}}}}\naddressType: IPv4\nendpoints:\n- {{addresses: [10.0.0.1], hints: {{forZones: [{{name: z1}}]}}}}\n- {{addresses: [10.0.0.2], hints: {{forZones: [{{name: z2}}]}}}}\nports: [{{name: p80, port: 80, protocol: TCP}}]\n"
        )
    };
    let zonal = |version: &str, annotations: &str| {
        let world = release_world(version, "mode: iptables", &objects(annotations));
        let text = crate::render(&world, &RenderOptions::new(ProxyMode::Iptables))
            .unwrap_or_else(|e| panic!("{e}"));
        !text.contains("10.0.0.2:80")
    };
    let auto = "service.kubernetes.io/topology-aware-hints: Auto";
    let mode = "service.kubernetes.io/topology-mode: Auto";
    let other = "service.kubernetes.io/topology-aware-hints: PreferZone";
    let disabled = "service.kubernetes.io/topology-aware-hints: Disabled";
    let table: [(&str, &str, bool); 13] = [
        ("1.24", "", false),
        ("1.24", auto, true),
        ("1.26", mode, false),
        ("1.26", other, false),
        ("1.27", mode, true),
        ("1.27", other, true),
        ("1.27", disabled, false),
        ("1.29", "", false),
        ("1.30", "", false),
        ("1.30", mode, true),
        ("1.31", "", true),
        ("1.33", disabled, true),
        ("1.37", "", true),
    ];
    for (version, annotations, want) in table {
        assert_eq!(zonal(version, annotations), want, "{version} {{{annotations}}}");
    }
    // kube-proxy's own ServiceTrafficDistribution gate at 1.30 drops the annotation check.
    let world =
        release_world("1.30", "featureGates: {ServiceTrafficDistribution: true}", &objects(""));
    let text = crate::render(&world, &RenderOptions::new(ProxyMode::Iptables))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!text.contains("10.0.0.2:80"), "{text}");
    // `canUseTopology` of 1.30 to 1.32 wants TopologyAwareHints *or* ServiceTrafficDistribution,
    // but endpointslicecache.go `addEndpoints` keeps hints only with TopologyAwareHints: with it
    // off, no filtering at 1.31 even with ServiceTrafficDistribution on (beta).
    let gated = |version: &str, kpc: &str, annotations: &str| {
        let world = release_world(version, kpc, &objects(annotations));
        let text = crate::render(&world, &RenderOptions::new(ProxyMode::Iptables))
            .unwrap_or_else(|e| panic!("{e}"));
        !text.contains("10.0.0.2:80")
    };
    assert!(!gated("1.31", "featureGates: {TopologyAwareHints: false}", ""));
    assert!(gated("1.31", "", ""));
    assert!(!gated(
        "1.31",
        "featureGates: {TopologyAwareHints: false, ServiceTrafficDistribution: false}",
        mode
    ));
    assert!(!gated("1.29", "featureGates: {TopologyAwareHints: false}", mode));
}

/// pkg/proxy/util/utils.go `IsVIPMode`: an ingress with `ipMode: Proxy` gets no rules only
/// while LoadBalancerIPMode is on (beta from 1.30, locked from 1.32, gate removed in 1.35); in 1.24 to 1.29
/// (no gate, or alpha and off) the field is ignored and the IP is a VIP like any other.
#[test]
fn ip_mode_proxy_by_release() {
    let objects = "apiVersion: v1\nkind: Service\nmetadata: {name: lb, namespace: default}\nspec: {type: LoadBalancer, clusterIP: 172.30.0.41, ports: [{name: p80, port: 80, nodePort: 30080}]}\nstatus: {loadBalancer: {ingress: [{ip: 5.6.7.8, ipMode: Proxy}]}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}]}\n";
    // 1.29 and 1.30 need kube-proxy's NFTablesProxyMode gate for the nftables mode; 1.24 has
    // no nftables mode (nftables_mode_by_release), so only iptables is rendered there. At 1.29
    // the apiserver's gate must be on too, or its status strategy drops `ipMode` before
    // kube-proxy sees it (registry::drop_disabled_status_fields).
    for (version, gates, kpc, vip) in [
        ("1.24", "{}", "mode: iptables", true),
        ("1.29", "{}", "featureGates: {NFTablesProxyMode: true}", true),
        (
            "1.29",
            "{LoadBalancerIPMode: true}",
            "featureGates: {LoadBalancerIPMode: true, NFTablesProxyMode: true}",
            false,
        ),
        ("1.29", "{}", "featureGates: {LoadBalancerIPMode: true, NFTablesProxyMode: true}", true),
        ("1.30", "{}", "featureGates: {NFTablesProxyMode: true}", false),
        ("1.31", "{}", "featureGates: {LoadBalancerIPMode: false}", true),
        ("1.34", "{}", "mode: iptables", false),
    ] {
        let world = release_world_with_gates(version, gates, kpc, objects);
        let modes: &[ProxyMode] = if version == "1.24" {
            &[ProxyMode::Iptables]
        } else {
            &[ProxyMode::Iptables, ProxyMode::Nftables]
        };
        for &mode in modes {
            let text =
                crate::render(&world, &RenderOptions::new(mode)).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(text.contains("5.6.7.8"), vip, "{version} {kpc} {mode:?}\n{text}");
        }
    }
}

/// pkg/proxy/iptables/proxier.go `syncProxyRules` (the last KUBE-SERVICES rules) by release:
/// 1.24 and 1.25 (no `iptables.localhostNodePorts`) jump to KUBE-NODEPORTS for every local
/// address, `::1` and a written `localhostNodePorts: false` included; 1.26 to the newest keep
/// `::1` out, and `127.0.0.0/8` when the option is off. `ContainsIPv4Loopback` (1.26 on)
/// counts `127.0.2.0/28` as loopback although it does not hold 127.0.0.1.
#[test]
fn localhost_node_ports_by_release() {
    let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: np, namespace: default}\nspec: {type: NodePort, clusterIP: 172.30.0.41, clusterIPs: [172.30.0.41, 'fd00::41'], ipFamilyPolicy: RequireDualStack, ports: [{name: p80, port: 80, nodePort: 30080}]}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}, {type: InternalIP, address: '2001:db8::2'}]}\n";
    let last_rule = |version: &str, kpc: &str, family: IpFamily| {
        let yaml = format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"{version}\"\nserviceClusterIPRanges: [\"172.30.0.0/16\", \"fd00::/112\"]\nhost: {{interfaceAddresses: [127.0.0.1/8, 127.0.2.1/28, 192.168.0.2/24, '::1/128', '2001:db8::2/64']}}\n---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n{kpc}\n---\n{svc}"
        );
        let (world, report) =
            crate::evaluate(&[Input::new("t.yaml", yaml)], &crate::CheckOptions::default());
        assert!(!report.has_errors(), "{:?}", report.diagnostics);
        let options =
            RenderOptions { family: Some(family), ..RenderOptions::new(ProxyMode::Iptables) };
        let text = crate::render(&world, &options).unwrap_or_else(|e| panic!("{e}"));
        text.lines()
            .filter(|l| l.starts_with("-A KUBE-SERVICES") && l.contains("-j KUBE-NODEPORTS"))
            .map(|l| l.split("chain\" ").nth(1).unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    let off = "iptables: {localhostNodePorts: false}";
    assert_eq!(
        last_rule("1.25", off, IpFamily::V4),
        ["-m addrtype --dst-type LOCAL -j KUBE-NODEPORTS"]
    );
    assert_eq!(
        last_rule("1.25", "mode: iptables", IpFamily::V6),
        ["-m addrtype --dst-type LOCAL -j KUBE-NODEPORTS"]
    );
    assert_eq!(
        last_rule("1.26", off, IpFamily::V4),
        ["-m addrtype --dst-type LOCAL ! -d 127.0.0.0/8 -j KUBE-NODEPORTS"]
    );
    assert_eq!(
        last_rule("1.33", "mode: iptables", IpFamily::V6),
        ["-m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS"]
    );
    // Explicit addresses: loopback ones stay in 1.24, leave in 1.26+ for IPv6.
    let v6 = "nodePortAddresses: ['::/0']";
    assert_eq!(
        last_rule("1.24", "nodePortAddresses: ['::1/128', '2001:db8::/64']", IpFamily::V6),
        ["-d ::1 -j KUBE-NODEPORTS", "-d 2001:db8::2 -j KUBE-NODEPORTS"]
    );
    assert_eq!(
        last_rule("1.26", "nodePortAddresses: ['::1/128', '2001:db8::/64']", IpFamily::V6),
        ["-d 2001:db8::2 -j KUBE-NODEPORTS"]
    );
    assert_eq!(last_rule("1.33", v6, IpFamily::V6).len(), 1);
    // 127.0.2.0/28 keeps localhost NodePorts on, so its loopback address stays.
    assert_eq!(
        last_rule("1.33", "nodePortAddresses: [127.0.2.0/28, 192.168.0.0/24]", IpFamily::V4),
        ["-d 127.0.2.1 -j KUBE-NODEPORTS", "-d 192.168.0.2 -j KUBE-NODEPORTS"]
    );
}

/// cmd/kube-proxy/app/server.go `ProxyServer.Run` (ServiceCIDR watch behind
/// MultiCIDRServiceAllocator) and pkg/proxy/nftables/proxier.go `OnServiceCIDRsChanged`: the
/// "Drop traffic to unallocated ClusterIPs" rule lists every ServiceCIDR of the family, extra
/// objects included, and is absent while the gate is off (1.29 to 1.32 by default) or turned
/// off in kube-proxy's own `featureGates`.
#[test]
fn service_cidr_drop_rule_follows_the_gate() {
    let rule = |version: &str, kpc: &str| {
        let yaml = format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"{version}\"\nserviceClusterIPRanges: [\"172.30.0.0/16\"]\n---\napiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {{name: extra}}\nspec: {{cidrs: [10.100.0.0/24, 'fd00::/112']}}\n---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\n{kpc}\n---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-a}}\nstatus: {{addresses: [{{type: InternalIP, address: 192.168.0.2}}]}}\n"
        );
        let (world, _) =
            crate::evaluate(&[Input::new("t.yaml", yaml)], &crate::CheckOptions::default());
        let text = crate::render(&world, &RenderOptions::new(ProxyMode::Nftables))
            .unwrap_or_else(|e| panic!("{e}"));
        text.lines().find(|l| l.contains("unallocated")).map(str::to_owned)
    };
    let drop = "add rule ip kube-proxy cluster-ips-check ip daddr { 10.100.0.0/24,172.30.0.0/16 } drop comment \"Drop traffic to unallocated ClusterIPs\"";
    assert_eq!(rule("1.33", "").as_deref(), Some(drop));
    assert_eq!(rule("1.37", "").as_deref(), Some(drop));
    assert_eq!(rule("1.32", ""), None);
    assert_eq!(rule("1.30", "featureGates: {NFTablesProxyMode: true}"), None);
    assert_eq!(rule("1.33", "featureGates: {MultiCIDRServiceAllocator: false}"), None);
}

/// kube-proxy config/v1alpha1/types.go has `conntrack.tcpBeLiberal` from 1.29 (v0.29.0) and
/// pkg/proxy/iptables/proxier.go `syncProxyRules` then leaves out the KUBE-FORWARD INVALID
/// drop; 1.24 to 1.28 have no such field and always write the drop.
#[test]
fn tcp_be_liberal_by_release() {
    let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec: {clusterIP: 172.30.0.41, ports: [{name: p80, port: 80}]}\n";
    for (version, drop) in [("1.28", true), ("1.29", false), ("1.33", false)] {
        let world = release_world(version, "conntrack: {tcpBeLiberal: true}", svc);
        let text = crate::render(&world, &RenderOptions::new(ProxyMode::Iptables))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(text.contains("--ctstate INVALID"), drop, "{version}\n{text}");
    }
}

/// pkg/proxy/apis/config/validation/validation.go `validateProxyModeLinux` by release: no
/// nftables mode in 1.24 to 1.28 (1.24 and 1.25 still list `userspace`; the list is joined
/// with `,` until 1.27 and with `, ` from 1.28, where `sets.List` came in); in
/// 1.29 and 1.30 it needs kube-proxy's NFTablesProxyMode gate (alpha, off by default,
/// CHANGELOG-1.29 for #121046); in 1.31 and 1.32 the gate is beta and on unless kube-proxy's
/// `featureGates` turn it off (#124383); from 1.33 it is GA. A refusal is the text
/// cmd/kube-proxy/app/server.go returns (`failed validate: ...`), and no rules.
#[test]
fn nftables_mode_by_release() {
    let refused = |version: &str, modes: &str| {
        Err(format!(
            "kube-proxy {version} refuses to start: failed validate: KubeProxyConfiguration.Mode.ProxyMode: Invalid value: \"nftables\": must be {modes} or blank (blank means the best-available proxy [currently iptables])"
        ))
    };
    let on = "featureGates: {NFTablesProxyMode: true}";
    let off = "featureGates: {NFTablesProxyMode: false}";
    for (version, kpc, want_rules) in [
        ("1.24", "mode: iptables", false),
        ("1.25", "mode: nftables", false),
        ("1.26", "mode: nftables", false),
        ("1.27", "mode: nftables", false),
        ("1.28", "mode: nftables", false),
        ("1.29", "mode: nftables", false),
        ("1.29", on, true),
        ("1.30", "mode: nftables", false),
        ("1.30", on, true),
        ("1.31", "mode: nftables", true),
        ("1.32", off, false),
        ("1.32", "mode: nftables", true),
        ("1.33", "mode: nftables", true),
        ("1.37", "mode: nftables", true),
    ] {
        let got = render_at(version, kpc, ProxyMode::Nftables);
        if want_rules {
            let text = got.unwrap_or_else(|e| panic!("{version} {kpc}: {e}"));
            assert!(text.contains("add table ip kube-proxy"), "{version} {kpc}\n{text}");
        } else {
            let modes = match version {
                "1.24" | "1.25" => "iptables,ipvs,userspace",
                "1.26" | "1.27" => "iptables,ipvs",
                _ => "iptables, ipvs",
            };
            assert_eq!(got, refused(version, modes), "{version} {kpc}");
        }
    }
    // The iptables mode starts in every release, and the trace of the nftables mode meets the
    // same refusal.
    assert!(render_at("1.24", "mode: nftables", ProxyMode::Iptables).is_ok());
    let world = release_world("1.28", "mode: nftables", SVC);
    let request = crate::TraceRequest {
        src: "10.0.0.9".into(),
        dst: "172.30.0.41".into(),
        dport: 80,
        ..Default::default()
    };
    let report = crate::testing::trace_mode(&world, &request, ProxyMode::Nftables);
    assert_eq!(report.warnings, [refused("1.28", "iptables, ipvs").unwrap_err()]);
    assert!(report.outcomes.is_empty());
}

/// pkg/proxy/apis/config/validation/validation.go `validateKubeProxyNodePortAddress` by
/// release: the keyword `primary` exists from 1.31 (kubernetes/kubernetes#123105, listed in
/// CHANGELOG-1.31), alone until 1.36; mixed with CIDRs it is "can't use both 'primary' and
/// CIDRs" and the check stops there. 1.37 takes `primary`, `localhost` and `all` anywhere,
/// each once. Before 1.31 it is an entry that is not a CIDR, refused per index ("must be a
/// valid CIDR", #95036) in every mode. Several errors aggregate as `[a, b]`.
#[test]
fn primary_keyword_by_release() {
    let refused = |version: &str, errors: &str| {
        Err(format!("kube-proxy {version} refuses to start: failed validate: {errors}"))
    };
    let invalid = |i: usize, value: &str, detail: &str| {
        format!(
            "KubeProxyConfiguration.NodePortAddresses[{i}]: Invalid value: \"{value}\": {detail}"
        )
    };
    let cidr = "must be a valid CIDR";
    let both = "can't use both 'primary' and CIDRs";
    let primary = "nodePortAddresses: [primary]";
    for version in ["1.24", "1.28", "1.30"] {
        assert_eq!(
            render_at(version, primary, ProxyMode::Iptables),
            refused(version, &invalid(0, "primary", cidr))
        );
    }
    let text = render_at("1.31", primary, ProxyMode::Iptables).unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains("-d 192.168.0.2 -j KUBE-NODEPORTS"), "{text}");
    assert_eq!(
        render_at("1.31", "nodePortAddresses: [primary, 10.0.0.0/8]", ProxyMode::Iptables),
        refused("1.31", &invalid(0, "primary", both))
    );
    // The loop stops at `primary`: the bad entry after it goes unreported in 1.31 to 1.36.
    let mixed = "nodePortAddresses: [10.0.0.0/8, primary, bogus]";
    assert_eq!(
        render_at("1.36", mixed, ProxyMode::Iptables),
        refused("1.36", &invalid(1, "primary", both))
    );
    // 1.37: keywords anywhere, each once; the other entries must be CIDRs.
    let keywords = "must be a valid CIDR or one of the keywords 'primary', 'localhost', 'all'";
    assert_eq!(
        render_at("1.37", mixed, ProxyMode::Iptables),
        refused("1.37", &invalid(2, "bogus", keywords))
    );
    assert_eq!(
        render_at("1.37", "nodePortAddresses: [primary, all, primary]", ProxyMode::Iptables),
        refused(
            "1.37",
            "KubeProxyConfiguration.NodePortAddresses[2]: Duplicate value: \"primary\""
        )
    );
    let text = render_at("1.37", "nodePortAddresses: [primary, 127.0.0.0/8]", ProxyMode::Iptables)
        .unwrap_or_else(|e| panic!("{e}"));
    for rule in ["-d 127.0.0.1 -j KUBE-NODEPORTS", "-d 192.168.0.2 -j KUBE-NODEPORTS"] {
        assert!(text.contains(rule), "{rule}\n{text}");
    }
    assert_eq!(
        render_at("1.30", mixed, ProxyMode::Iptables),
        refused(
            "1.30",
            &format!("[{}, {}]", invalid(1, "primary", cidr), invalid(2, "bogus", cidr))
        )
    );
    // The mode comes first in `Validate`.
    assert_eq!(
        render_at("1.28", primary, ProxyMode::Nftables),
        refused(
            "1.28",
            &format!(
                "[KubeProxyConfiguration.Mode.ProxyMode: Invalid value: \"nftables\": must be iptables, ipvs or blank (blank means the best-available proxy [currently iptables]), {}]",
                invalid(0, "primary", cidr)
            )
        )
    );
}

/// The nftables mode's NodePort addresses by release: 1.29 matches every local address but
/// loopback (`fib daddr type local` and `!= 127.0.0.0/8`); from 1.30 an empty
/// `nodePortAddresses` means the node's primary IP (kubernetes/kubernetes#122724,
/// CHANGELOG-1.30), a `nodeport-ips` set.
#[test]
fn nftables_default_node_ports_by_release() {
    let on = "featureGates: {NFTablesProxyMode: true}";
    let every_local = "add rule ip kube-proxy services fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports";
    let primary = "add element ip kube-proxy nodeport-ips { 192.168.0.2 }";
    let text = render_at("1.29", on, ProxyMode::Nftables).unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains(every_local) && !text.contains(primary), "{text}");
    for version in ["1.30", "1.33"] {
        let text = render_at(version, on, ProxyMode::Nftables).unwrap_or_else(|e| panic!("{e}"));
        assert!(text.contains(primary) && !text.contains(every_local), "{version}\n{text}");
    }
}

/// pkg/proxy/iptables/proxier.go `syncProxyRules` by release, on a host with nfacct: 1.24 to
/// 1.26 write no KUBE-FIREWALL (kubelet owned the chain; kube-proxy writes the route_localnet
/// mitigation itself from kubernetes/kubernetes#114470, 1.27); the nfacct counters on the
/// INVALID drop and on localhost NodePorts start in 1.31 (#122812 and #125015, both in
/// CHANGELOG-1.31).
#[test]
fn nfacct_and_kube_firewall_by_release() {
    let render_v4 = |version: &str| {
        let yaml = format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"{version}\"\nserviceClusterIPRanges: [\"172.30.0.0/16\"]\nhost: {{nfacct: true}}\n---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-a}}\nstatus: {{addresses: [{{type: InternalIP, address: 192.168.0.2}}]}}\n---\napiVersion: v1\nkind: Service\nmetadata: {{name: np, namespace: default}}\nspec: {{type: NodePort, clusterIP: 172.30.0.41, ports: [{{name: p80, port: 80, nodePort: 30080}}]}}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{namespace: default, name: np-1, labels: {{kubernetes.io/service-name: np}}}}\naddressType: IPv4\nendpoints: [{{addresses: [10.0.0.1]}}]\nports: [{{name: p80, port: 80, protocol: TCP}}]\n"
        );
        let (world, report) =
            crate::evaluate(&[Input::new("t.yaml", yaml)], &crate::CheckOptions::default());
        assert!(!report.has_errors(), "{:?}", report.diagnostics);
        crate::render(&world, &RenderOptions::new(ProxyMode::Iptables))
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let firewall = "-A KUBE-FIREWALL -m comment --comment \"block incoming localnet connections\" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP";
    let plain_drop = "-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP";
    let counted_drop = "-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP";
    let localhost = "-m nfacct --nfacct-name localhost_nps_accepted_pkts";
    for (version, has_firewall, counted) in [
        ("1.24", false, false),
        ("1.26", false, false),
        ("1.27", true, false),
        ("1.30", true, false),
        ("1.31", true, true),
        ("1.37", true, true),
    ] {
        let text = render_v4(version);
        assert_eq!(text.contains(":KUBE-FIREWALL - [0:0]"), has_firewall, "{version}\n{text}");
        assert_eq!(text.contains(firewall), has_firewall, "{version}\n{text}");
        assert_eq!(text.contains(counted_drop), counted, "{version}\n{text}");
        assert_eq!(text.contains(plain_drop), !counted, "{version}\n{text}");
        assert_eq!(text.contains(localhost), counted, "{version}\n{text}");
    }
}

/// pkg/proxy/iptables/proxier.go `syncProxyRules` for `loadBalancerSourceRanges` by release:
/// 1.24 (v1.24.17) writes the nat KUBE-FW-* rules inside its loop over the VIPs, so the allow
/// rules come once per VIP, each block ending in `-j KUBE-MARK-DROP` (kubelet's filter
/// KUBE-FIREWALL drops the mark), and has no KUBE-PROXY-FIREWALL; from 1.25
/// (kubernetes/kubernetes#110289, KEP-3178) KUBE-FW-* falls through and filter
/// KUBE-PROXY-FIREWALL drops per VIP; from 1.27 (v1.27.0; not in v1.26.15) KUBE-FW-* ends in
/// the comment-only "other traffic ... will be dropped by KUBE-PROXY-FIREWALL" rule. A
/// standalone 1.24 payload carries kubelet's KUBE-MARK-DROP and drop rule so that it loads.
#[test]
fn load_balancer_source_ranges_by_release() {
    let lb = "apiVersion: v1\nkind: Service\nmetadata: {name: lb, namespace: default}\nspec: {type: LoadBalancer, clusterIP: 172.30.0.41, loadBalancerSourceRanges: [203.0.113.0/25], ports: [{name: p80, port: 80, nodePort: 30080}]}\nstatus: {loadBalancer: {ingress: [{ip: 5.6.7.8}, {ip: 5.6.7.9}]}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: lb-1, labels: {kubernetes.io/service-name: lb}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.1]}]\nports: [{name: p80, port: 80, protocol: TCP}]\n";
    let rendered = |version: &str, standalone: bool| {
        let world = release_world(version, "mode: iptables", lb);
        let options = RenderOptions { standalone, ..RenderOptions::new(ProxyMode::Iptables) };
        crate::render(&world, &options).unwrap_or_else(|e| panic!("{e}"))
    };
    let fw_lines = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with("-A KUBE-FW-"))
            .map(|l| l.split_once(' ').map_or("", |(_, rest)| rest).to_owned())
            .map(|l| l.split_once(' ').map_or(String::new(), |(_, rest)| rest.to_owned()))
            .map(|l| l.split(" -j KUBE-EXT-").next().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    let allowed = "-m comment --comment \"default/lb:p80 loadbalancer IP\" -s 203.0.113.0/25";
    let marked = "-m comment --comment \"default/lb:p80 loadbalancer IP\" -j KUBE-MARK-DROP";
    let other = "-m comment --comment \"other traffic to default/lb:p80 will be dropped by KUBE-PROXY-FIREWALL\"";
    let old = rendered("1.24", false);
    assert_eq!(fw_lines(&old), [allowed, marked, allowed, marked], "{old}");
    assert!(!old.contains("KUBE-PROXY-FIREWALL") && !old.contains(":KUBE-MARK-DROP"), "{old}");
    for version in ["1.25", "1.26"] {
        let new = rendered(version, false);
        assert_eq!(fw_lines(&new), [allowed], "{version}\n{new}");
        assert!(new.contains(":KUBE-PROXY-FIREWALL - [0:0]"), "{new}");
        assert!(
            new.contains("-A KUBE-PROXY-FIREWALL -m comment --comment \"default/lb:p80 traffic not accepted by KUBE-FW-"),
            "{new}"
        );
    }
    for version in ["1.27", "1.37"] {
        let new = rendered(version, false);
        assert_eq!(fw_lines(&new), [allowed, other], "{version}\n{new}");
    }
    let standalone = rendered("1.24", true);
    for line in [
        ":KUBE-MARK-DROP - [0:0]",
        "-A KUBE-MARK-DROP -j MARK --or-mark 0x00008000",
        "-A KUBE-FIREWALL -m comment --comment \"kubernetes firewall for dropping marked packets\" -m mark --mark 0x00008000/0x00008000 -j DROP",
        "-A INPUT -j KUBE-FIREWALL",
    ] {
        assert!(standalone.lines().any(|l| l == line), "{line}\n{standalone}");
    }
    assert!(!standalone.contains("KUBE-PROXY-FIREWALL"), "{standalone}");
    assert!(rendered("1.25", true).contains("-j KUBE-PROXY-FIREWALL"));
}

/// cmd/kube-proxy's node IP by release (proxy/release.rs `NodeIpFromBindAddress`,
/// `NodeIpPrimaryFamilyOnly`), seen where the iptables and nftables proxiers use it: a
/// `loadBalancerSourceRanges` range holding the node IP also allows the VIPs as sources.
/// 1.24 to 1.27 (`nodeIPTuple(bindAddress)`) never read the Node: `0.0.0.0` and `::`, so only
/// a range holding the zero address counts; 1.28 (`detectNodeIPs` of one IP) gives the Node's
/// primary IP to its own family and the zero address to the other; 1.29 on, each family its
/// Node IP. The 1.24 form repeats the allow block per VIP, each with its own VIP.
#[test]
fn node_ip_by_release() {
    let scenario = |ranges: &str| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: lb, namespace: default}}\nspec: {{type: LoadBalancer, clusterIP: 172.30.0.41, clusterIPs: [172.30.0.41, 'fd00::41'], ipFamilyPolicy: RequireDualStack, loadBalancerSourceRanges: [{ranges}], ports: [{{name: p80, port: 80, nodePort: 30080}}]}}\nstatus: {{loadBalancer: {{ingress: [{{ip: 5.6.7.8}}, {{ip: '2001:db8:ff::8'}}]}}}}\n---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-a}}\nstatus: {{addresses: [{{type: InternalIP, address: 192.168.0.2}}, {{type: InternalIP, address: '2001:db8::2'}}]}}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{namespace: default, name: lb-1, labels: {{kubernetes.io/service-name: lb}}}}\naddressType: IPv4\nendpoints: [{{addresses: [10.0.0.1]}}]\nports: [{{name: p80, port: 80, protocol: TCP}}]\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{namespace: default, name: lb-2, labels: {{kubernetes.io/service-name: lb}}}}\naddressType: IPv6\nendpoints: [{{addresses: ['fd00:10::1']}}]\nports: [{{name: p80, port: 80, protocol: TCP}}]\n"
        )
    };
    let allows_vip = |version: &str, ranges: &str, family: IpFamily| {
        let yaml = format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"{version}\"\nserviceClusterIPRanges: [\"172.30.0.0/16\", \"fd00::/112\"]\n---\n{}",
            scenario(ranges)
        );
        let (world, report) =
            crate::evaluate(&[Input::new("t.yaml", yaml)], &crate::CheckOptions::default());
        assert!(!report.has_errors(), "{:?}", report.diagnostics);
        let options =
            RenderOptions { family: Some(family), ..RenderOptions::new(ProxyMode::Iptables) };
        let text = crate::render(&world, &options).unwrap_or_else(|e| panic!("{e}"));
        let vip = if family == IpFamily::V4 { "5.6.7.8" } else { "2001:db8:ff::8" };
        text.contains(&format!("-s {vip} -j KUBE-EXT-"))
    };
    let node_ranges = "192.168.0.0/24, '2001:db8::/64'";
    let zero_ranges = "0.0.0.0/0, '::/0'";
    for (version, node_v4, node_v6, zero) in [
        ("1.24", false, false, true),
        ("1.27", false, false, true),
        ("1.28", true, false, true),
        ("1.29", true, true, true),
        ("1.37", true, true, true),
    ] {
        assert_eq!(allows_vip(version, node_ranges, IpFamily::V4), node_v4, "{version} IPv4");
        assert_eq!(allows_vip(version, node_ranges, IpFamily::V6), node_v6, "{version} IPv6");
        assert_eq!(allows_vip(version, zero_ranges, IpFamily::V6), zero, "{version} ::/0");
    }
}

/// pkg/proxy/nftables/proxier.go `nftablesBaseChains`, `nftablesJumpChains`, `setupNFTables`
/// and the internal chain's masquerade rule of `syncProxyRules` by release (the `Nftables*`
/// rows of proxy/release.rs): 1.29 (read in a copy from before kubernetes/kubernetes#122614)
/// runs its filter chains at dstnat - 1 and has one `endpoints-check` chain; 1.30 to 1.33.5
/// (#122614, #122692) run filter-prerouting/input/forward/output at dstnat - 10 and
/// filter-output-post-dnat at dstnat + 10; 1.34 (#132456, in 1.33.6 as #133969) keeps only
/// the firewall before DNAT and runs the checks at priority 0. 1.29 to 1.33 match the
/// service port in the masquerade rule (#131492 dropped it in 1.34). With every address
/// accepting NodePorts, the input-only nodeport check has no `fib daddr type local` from 1.30.
#[test]
fn nftables_table_by_release() {
    let on = "featureGates: {NFTablesProxyMode: true}";
    let objects = "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: np, namespace: default}\nspec: {type: NodePort, clusterIP: 172.30.0.41, ports: [{name: p80, port: 80, nodePort: 30080}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: np-1, labels: {kubernetes.io/service-name: np}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.1]}]\nports: [{name: p80, port: 80, protocol: TCP}]\n";
    let lines = |version: &str, kpc: &str| {
        let world = release_world(version, kpc, objects);
        let text = crate::render(&world, &RenderOptions::new(ProxyMode::Nftables))
            .unwrap_or_else(|e| panic!("{e}"));
        text.lines().map(str::to_owned).collect::<Vec<_>>()
    };
    let base = |lines: &[String]| {
        lines
            .iter()
            .filter(|l| l.contains(" hook ") && l.contains("filter-"))
            .map(|l| l.trim_start_matches("add chain ip kube-proxy ").to_owned())
            .collect::<Vec<_>>()
    };
    let jumps = |lines: &[String], chain: &str| {
        let prefix = format!("add rule ip kube-proxy {chain} ");
        lines.iter().filter_map(|l| l.strip_prefix(&prefix)).map(str::to_owned).collect::<Vec<_>>()
    };
    let filter =
        |hook: &str, priority: i32| format!("{{ type filter hook {hook} priority {priority} ; }}");
    let alpha = lines("1.29", on);
    assert_eq!(
        base(&alpha),
        [
            format!("filter-forward {}", filter("forward", -101)),
            format!("filter-input {}", filter("input", -101)),
            format!("filter-output {}", filter("output", -101)),
        ]
    );
    assert_eq!(
        jumps(&alpha, "filter-forward"),
        ["ct state new jump endpoints-check", "jump forward", "ct state new jump firewall-check"]
    );
    assert_eq!(jumps(&alpha, "forward"), ["ct state invalid drop"]);
    assert_eq!(
        jumps(&alpha, "endpoints-check")[1],
        "fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @no-endpoint-nodeports"
    );
    assert!(!alpha.iter().any(|l| l.contains("cluster-ips")), "{alpha:#?}");
    let post_dnat = [
        format!("filter-prerouting {}", filter("prerouting", -110)),
        format!("filter-forward {}", filter("forward", -110)),
        format!("filter-input {}", filter("input", -110)),
        format!("filter-output {}", filter("output", -110)),
        format!("filter-output-post-dnat {}", filter("output", -90)),
    ];
    let pre_dnat = [
        format!("filter-prerouting-pre-dnat {}", filter("prerouting", -110)),
        format!("filter-output-pre-dnat {}", filter("output", -110)),
        format!("filter-forward {}", filter("forward", 0)),
        format!("filter-input {}", filter("input", 0)),
        format!("filter-output {}", filter("output", 0)),
    ];
    let masquerade = |port: bool| {
        format!(
            "ip daddr 172.30.0.41{} jump mark-for-masquerade",
            if port { " tcp dport 80" } else { "" }
        )
    };
    let cluster_ip_masquerade = |lines: &[String]| {
        lines
            .iter()
            .find(|l| l.contains("daddr 172.30.0.41") && l.ends_with("jump mark-for-masquerade"))
            .map(|l| l.split_once("tcp/p80 ").map_or("", |(_, rule)| rule).to_owned())
    };
    // masqueradeAll so the rule is written without a local-traffic detector.
    let masq_all = "nftables: {masqueradeAll: true}";
    for (version, kpc, want, port) in [
        (
            "1.30",
            "featureGates: {NFTablesProxyMode: true}\nnftables: {masqueradeAll: true}",
            &post_dnat,
            true,
        ),
        ("1.33.5", masq_all, &post_dnat, true),
        ("1.33", masq_all, &pre_dnat, true),
        ("1.33.6", masq_all, &pre_dnat, true),
        ("1.34", masq_all, &pre_dnat, false),
        ("1.35", masq_all, &pre_dnat, false),
    ] {
        let got = lines(version, kpc);
        assert_eq!(&base(&got), want, "{version}");
        assert_eq!(cluster_ip_masquerade(&got), Some(masquerade(port)), "{version}");
        let post = jumps(&got, "filter-output-post-dnat");
        assert_eq!(post.is_empty(), *want == pre_dnat, "{version}: {post:?}");
    }
    // 1.36 on: the pre-DNAT table still, and the ClusterIP masquerade in `services`
    // (nftables_masquerading_by_release).
    let newest = lines("1.37", masq_all);
    assert_eq!(&base(&newest), &pre_dnat);
    assert_eq!(cluster_ip_masquerade(&newest), None);
    for (version, kpc) in
        [("1.31", "nodePortAddresses: [0.0.0.0/0]"), ("1.37", "nodePortAddresses: [0.0.0.0/0]")]
    {
        let got = lines(version, kpc);
        assert_eq!(
            jumps(&got, "nodeport-endpoints-check"),
            ["ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @no-endpoint-nodeports"],
            "{version}"
        );
        assert!(jumps(&got, "services")[1].starts_with("fib daddr type local"), "{version}");
    }
}

/// 1.29's LoadBalancer source ranges (pkg/proxy/nftables/proxier.go `syncProxyRules` before
/// kubernetes/kubernetes#122296): a `firewall` element per VIP and a `firewall-allow` element
/// per range, plus the VIP itself as a source when a range holds the node IP; no per-service
/// `firewall-*` chain. From 1.30 the `firewall-ips` map leads to that chain.
#[test]
fn nftables_source_ranges_by_release() {
    let lb = "apiVersion: v1\nkind: Service\nmetadata: {name: lb, namespace: default}\nspec: {type: LoadBalancer, clusterIP: 172.30.0.41, loadBalancerSourceRanges: [203.0.113.0/25, 192.168.0.0/24], ports: [{name: p80, port: 80, nodePort: 30080}]}\nstatus: {loadBalancer: {ingress: [{ip: 5.6.7.8}]}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}]}\n";
    let render = |version: &str| {
        let world = release_world(version, "featureGates: {NFTablesProxyMode: true}", lb);
        crate::render(&world, &RenderOptions::new(ProxyMode::Nftables))
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let alpha = render("1.29");
    let elements: Vec<&str> =
        alpha.lines().filter(|l| l.starts_with("add element ip kube-proxy firewall")).collect();
    assert_eq!(
        elements,
        [
            "add element ip kube-proxy firewall { 5.6.7.8 . tcp . 80 comment \"default/lb:p80\" }",
            "add element ip kube-proxy firewall-allow { 5.6.7.8 . tcp . 80 . 203.0.113.0/25 comment \"default/lb:p80\" }",
            "add element ip kube-proxy firewall-allow { 5.6.7.8 . tcp . 80 . 192.168.0.0/24 comment \"default/lb:p80\" }",
            "add element ip kube-proxy firewall-allow { 5.6.7.8 . tcp . 80 . 5.6.7.8 }",
        ],
        "{alpha}"
    );
    let per_service_chain = |text: &str| {
        text.lines()
            .any(|l| l.starts_with("add chain ip kube-proxy firewall-") && l.contains("default/lb"))
    };
    assert!(!alpha.contains("firewall-ips") && !per_service_chain(&alpha), "{alpha}");
    // 1.30 (v1.30.14: `Comment: &svcPortNameString`) comments the `firewall-ips` element with
    // the service port; 1.31 on (the `firewallIPs.ensureElem` of #126013) does not.
    for (version, comment) in [("1.30", " comment \"default/lb:p80\""), ("1.31", ""), ("1.37", "")]
    {
        let later = render(version);
        let element = format!(
            "add element ip kube-proxy firewall-ips {{ 5.6.7.8 . tcp . 80{comment} : goto firewall-"
        );
        assert!(later.contains(&element), "{version}\n{later}");
        assert!(!later.contains("firewall-allow") && per_service_chain(&later), "{later}");
    }
}

/// kubelet's half of the 1.24 to 1.26 dataplane (pkg/kubelet/kubelet_network_linux.go
/// `syncNetworkUtil`, until IPTablesOwnershipCleanup went beta in 1.27): nat KUBE-MARK-DROP and
/// filter KUBE-FIREWALL with the marked-packet drop and, for IPv4, the localnet rule. The
/// standalone payload carries them, and the trace of a 1.24 payload runs through them: a
/// LoadBalancer packet from outside the source ranges is marked in KUBE-FW-* and dropped in
/// kubelet's chain, not sent to an unknown chain.
#[test]
fn kubelet_chains_before_1_27() {
    let lb = "apiVersion: v1\nkind: Service\nmetadata: {name: lb, namespace: default}\nspec: {type: LoadBalancer, clusterIP: 172.30.0.41, loadBalancerSourceRanges: [203.0.113.0/25], ports: [{name: p80, port: 80, nodePort: 30080}]}\nstatus: {loadBalancer: {ingress: [{ip: 5.6.7.8}]}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: lb-1, labels: {kubernetes.io/service-name: lb}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.1]}]\nports: [{name: p80, port: 80, protocol: TCP}]\n";
    let localnet = "-A KUBE-FIREWALL -m comment --comment \"block incoming localnet connections\" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP";
    let marked = "-A KUBE-FIREWALL -m comment --comment \"kubernetes firewall for dropping marked packets\" -m mark --mark 0x00008000/0x00008000 -j DROP";
    for (version, kubelet) in [("1.24", true), ("1.25", true), ("1.26", true), ("1.27", false)] {
        let world = release_world(version, "mode: iptables", lb);
        let options = RenderOptions { standalone: true, ..RenderOptions::new(ProxyMode::Iptables) };
        let text = crate::render(&world, &options).unwrap_or_else(|e| panic!("{e}"));
        let lines: Vec<&str> = text.lines().collect();
        let at = |line: &str| lines.iter().position(|l| *l == line);
        assert_eq!(at(marked).is_some(), kubelet, "{version}\n{text}");
        assert_eq!(lines.contains(&":KUBE-MARK-DROP - [0:0]"), kubelet, "{version}");
        if kubelet {
            assert!(at(marked) < at(localnet), "{version}\n{text}");
        }
    }
    let world = release_world("1.24", "mode: iptables", lb);
    let request = crate::TraceRequest {
        src: "198.51.100.7".into(),
        dst: "5.6.7.8".into(),
        dport: 80,
        ..Default::default()
    };
    let report = crate::testing::trace_mode(&world, &request, ProxyMode::Iptables);
    let effects: Vec<&str> =
        report.outcomes.iter().flat_map(|o| o.steps.iter().map(|s| s.effect.as_str())).collect();
    assert!(!effects.iter().any(|e| e.contains("unknown chain")), "{report:#?}");
    let marked = report.outcomes.iter().flat_map(|o| &o.steps).any(|s| s.chain == "KUBE-MARK-DROP");
    assert!(marked, "{report:#?}");
}

/// The nftables trace over each release's table: 1.29's firewall runs on the input, forward
/// and output hooks, after the prerouting DNAT, so a LoadBalancer packet from outside the
/// source ranges reaches the endpoint (the bug kubernetes/kubernetes#122614 fixed in 1.30:
/// "LoadBalancerSourceRanges not working for nftables mode"); from 1.30 the pre-DNAT
/// firewall drops it. A source inside the ranges reaches the endpoint in every release, and
/// 1.29 to 1.33's port match in the masquerade rule is understood (no warning).
#[test]
fn nftables_trace_by_release() {
    let lb = "apiVersion: v1\nkind: Service\nmetadata: {name: lb, namespace: default}\nspec: {type: LoadBalancer, clusterIP: 172.30.0.41, loadBalancerSourceRanges: [203.0.113.0/25], ports: [{name: p80, port: 80, nodePort: 30080}]}\nstatus: {loadBalancer: {ingress: [{ip: 5.6.7.8}]}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: lb-1, labels: {kubernetes.io/service-name: lb}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.1]}]\nports: [{name: p80, port: 80, protocol: TCP}]\n";
    let verdicts = |version: &str, src: &str, dst: &str| {
        let kpc = "featureGates: {NFTablesProxyMode: true}\nclusterCIDR: 10.0.0.0/8";
        let world = release_world(version, kpc, lb);
        let request = crate::TraceRequest {
            src: src.into(),
            dst: dst.into(),
            dport: 80,
            ..Default::default()
        };
        let report = crate::testing::trace_mode(&world, &request, ProxyMode::Nftables);
        assert!(report.warnings.is_empty(), "{version}: {:?}", report.warnings);
        report.outcomes.iter().map(|o| o.verdict.clone()).collect::<Vec<_>>()
    };
    for (version, outside) in
        [("1.29", "endpoint"), ("1.30", "DROP"), ("1.33.5", "DROP"), ("1.34", "DROP")]
    {
        assert_eq!(verdicts(version, "198.51.100.7", "5.6.7.8"), [outside], "{version}");
        assert_eq!(verdicts(version, "203.0.113.5", "5.6.7.8"), ["endpoint"], "{version}");
        assert_eq!(verdicts(version, "198.51.100.7", "172.30.0.41"), ["endpoint"], "{version}");
    }
}

/// pkg/proxy/nftables/proxier.go by release: 1.29 and 1.30 `tx.Add` every element as met (a
/// two-port Service's ClusterIP twice into `cluster-ips`; two Services with endpoints on one
/// external IP and port both add the key, with their own chains, which the kernel refuses
/// with "File exists"); from 1.31 (read in v1.31.0: kubernetes/kubernetes#126013 is already
/// there) `nftElementStorage.ensureElem` writes each key once and replaces a changed value.
#[test]
fn nftables_elements_by_release() {
    let service = |name: &str, cip: &str, ep: &str| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{namespace: ns1, name: {name}}}\nspec:\n  clusterIP: {cip}\n  externalIPs: [\"1.2.3.4\"]\n  ports: [{{name: p80, port: 80, protocol: TCP}}, {{name: p81, port: 81, protocol: TCP}}]\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{namespace: ns1, name: {name}-1, labels: {{kubernetes.io/service-name: {name}}}}}\naddressType: IPv4\nendpoints: [{{addresses: [\"{ep}\"]}}]\nports: [{{name: p80, port: 80, protocol: TCP}}, {{name: p81, port: 81, protocol: TCP}}]\n"
        )
    };
    let objects =
        [service("a", "172.30.0.41", "10.180.0.1"), service("b", "172.30.0.42", "10.180.0.2")]
            .join("---\n");
    for (version, adds, deletes) in [("1.30", 2, 0), ("1.31", 2, 1), ("1.37", 2, 1)] {
        let kpc = "mode: nftables\nfeatureGates: {NFTablesProxyMode: true}";
        let world = release_world(version, kpc, &objects);
        let text = crate::render(&world, &RenderOptions::new(ProxyMode::Nftables))
            .unwrap_or_else(|e| panic!("{e}"));
        let count = |needle: &str| text.lines().filter(|l| l.starts_with(needle)).count();
        let cluster_ip = "add element ip kube-proxy cluster-ips { 172.30.0.41 }";
        assert_eq!(count(cluster_ip), if deletes == 0 { 2 } else { 1 }, "{version}\n{text}");
        let key = "add element ip kube-proxy service-ips { 1.2.3.4 . tcp . 80 ";
        assert_eq!(count(key), adds, "{version}\n{text}");
        let delete = "delete element ip kube-proxy service-ips { 1.2.3.4 . tcp . 80 }";
        assert_eq!(count(delete), deletes, "{version}\n{text}");
    }
}

/// pkg/proxy/util/localdetector.go by release: the nftables detectors by interface wrote
/// `iif` (an interface index nft resolves at load time, refused for a prefix such as `veth*`)
/// until kubernetes/kubernetes#134024 (1.35), cherry-picked to 1.34.2 and 1.33.6; from there
/// `iifname`. A release without a patch is its latest patch.
#[test]
fn nftables_interface_detector_by_release() {
    let objects = "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec: {clusterIP: 172.30.0.41, ports: [{name: p80, port: 80}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: web-1, labels: {kubernetes.io/service-name: web}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.1]}]\nports: [{name: p80, port: 80, protocol: TCP}]\n";
    let kpc = "featureGates: {NFTablesProxyMode: true}\ndetectLocalMode: InterfaceNamePrefix\ndetectLocal: {interfaceNamePrefix: veth}";
    for (version, word) in [
        ("1.29", "iif"),
        ("1.33.5", "iif"),
        ("1.33.6", "iifname"),
        ("1.33", "iifname"),
        ("1.34.1", "iif"),
        ("1.34.2", "iifname"),
        ("1.35", "iifname"),
    ] {
        let world = release_world(version, kpc, objects);
        let text = crate::render(&world, &RenderOptions::new(ProxyMode::Nftables))
            .unwrap_or_else(|e| panic!("{e}"));
        let want = format!(" {word} != veth* jump mark-for-masquerade");
        assert!(text.lines().any(|l| l.ends_with(&want)), "{version}: {want}\n{text}");
    }
}

/// kube-proxy's own `featureGates` by release: cmd/kube-proxy/app/server.go `Options.Complete`
/// hands them to component-base `featureGate.SetFromMap`, which refuses a gate unknown at the
/// release (`unrecognized feature gate`) or a locked gate set to its other value, judged on the
/// whole registry of a kube-proxy binary of the release (startup/gates.rs, read from upstream's
/// binaries): the gates kube-proxy acts on (LoadBalancerIPMode removed in 1.35,
/// TopologyAwareHints and ServiceTrafficDistribution in 1.36; KubeProxyIPVS new in 1.37, not
/// locked) and any other name, a kubelet gate of the release as much as a made-up one.
#[test]
fn kube_proxy_gates_by_release() {
    let unknown = |gate: &str| format!("failed complete: unrecognized feature gate: {gate}");
    let locked = |gate: &str, value: bool| {
        format!(
            "failed complete: cannot set feature gate {gate} to {value}, feature is locked to {}",
            !value
        )
    };
    /// A gate set to a value: releases that accept it, lock it the other way, don't know it.
    type Row = (&'static str, bool, &'static [u32], &'static [u32], &'static [u32]);
    let table: &[Row] = &[
        ("ProxyTerminatingEndpoints", false, &[24, 25, 26, 27], &[28, 29], &[30, 37]),
        ("ProxyTerminatingEndpoints", true, &[24, 27, 28, 29], &[], &[30]),
        ("KubeProxyDrainingTerminatingNodes", false, &[28, 29, 30], &[31, 32], &[24, 27, 33]),
        ("MinimizeIPTablesRestore", false, &[26, 27], &[28, 29], &[24, 25, 30]),
        ("IPTablesOwnershipCleanup", false, &[25, 26, 27], &[28, 29], &[24, 30]),
        ("IPTablesOwnershipCleanup", true, &[25, 29], &[], &[24, 30]),
        ("NFTablesProxyMode", false, &[29, 32], &[33, 37], &[24, 28]),
        ("ServiceInternalTrafficPolicy", false, &[24, 25], &[26, 27], &[28, 37]),
        ("EndpointSliceTerminatingCondition", false, &[24, 25], &[26, 27], &[28]),
        ("LoadBalancerIPMode", false, &[29, 30, 31], &[32, 34], &[24, 28, 35]),
        ("TopologyAwareHints", false, &[24, 32], &[33, 35], &[36, 37]),
        ("ServiceTrafficDistribution", false, &[30, 32], &[33, 35], &[29, 36]),
        ("PreferSameTrafficDistribution", false, &[33, 34], &[35, 37], &[32]),
        ("KubeProxyIPVS", false, &[37], &[], &[24, 36]),
    ];
    for (gate, value, accepted, refused, gone) in table {
        let kpc = format!("featureGates: {{{gate}: {value}}}");
        for minor in *accepted {
            let got = render_at(&format!("1.{minor}"), &kpc, ProxyMode::Iptables);
            assert!(got.is_ok(), "{gate}={value} at 1.{minor}: {got:?}");
        }
        for (minors, text) in [(*refused, locked(gate, *value)), (*gone, unknown(gate))] {
            for minor in minors {
                let version = format!("1.{minor}");
                assert_eq!(
                    render_at(&version, &kpc, ProxyMode::Iptables),
                    Err(format!("kube-proxy {version} refuses to start: {text}")),
                    "{gate}={value}"
                );
            }
        }
    }
    // Any gate of the registry is taken (a kubelet gate too), any other name refused; of two bad
    // gates the first by name is named.
    assert!(render_at("1.30", "featureGates: {KubeletTracing: true}", ProxyMode::Iptables).is_ok());
    assert_eq!(
        render_at("1.30", "featureGates: {SomeKubeletGate: true}", ProxyMode::Iptables),
        Err(format!("kube-proxy 1.30 refuses to start: {}", unknown("SomeKubeletGate")))
    );
    assert_eq!(
        render_at(
            "1.30",
            "featureGates: {ProxyTerminatingEndpoints: true, MinimizeIPTablesRestore: true}",
            ProxyMode::Iptables
        ),
        Err(format!("kube-proxy 1.30 refuses to start: {}", unknown("MinimizeIPTablesRestore")))
    );
    // OWN_GATES' NFTablesProxyMode agrees with the release rows the mode check reads.
    for minor in crate::profile::OLDEST_MINOR..=crate::profile::NEWEST_MINOR {
        let known =
            holds(Behaviour::NftablesModeGated, minor) || holds(Behaviour::NftablesModeGa, minor);
        let default = holds(Behaviour::NftablesModeOnByDefault, minor) && known;
        assert_eq!(super::own_gate_default("NFTablesProxyMode", minor), Some(default), "1.{minor}");
    }
}

/// The nftables rules of one node at a release, for the scenario of the masquerading tests:
/// `web` (two endpoints, one on this node), `one` (a single endpoint, on this node), `sticky`
/// (ClientIP affinity, one endpoint here) and `lb` (eTP Local, no endpoint here), with only the
/// lines that differ between the masquerading layouts (rules and `hairpin-connections`
/// elements; the fixed chains' declarations through `masquerading`).
fn masquerading_rules(version: &str, kpc: &str) -> String {
    let objects = "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec: {clusterIP: 172.30.0.41, ports: [{name: p80, port: 80}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: web-1, labels: {kubernetes.io/service-name: web}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.1], nodeName: node-a}, {addresses: [10.0.0.2], nodeName: node-b}]\nports: [{name: p80, port: 8080, protocol: TCP}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: one, namespace: default}\nspec: {clusterIP: 172.30.0.42, ports: [{port: 53, protocol: UDP}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: one-1, labels: {kubernetes.io/service-name: one}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.3], nodeName: node-a}]\nports: [{port: 5353, protocol: UDP}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: sticky, namespace: default}\nspec: {clusterIP: 172.30.0.43, sessionAffinity: ClientIP, ports: [{port: 443}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: sticky-1, labels: {kubernetes.io/service-name: sticky}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.4], nodeName: node-a}, {addresses: [10.0.0.5], nodeName: node-b}]\nports: [{port: 8443, protocol: TCP}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: lb, namespace: default}\nspec: {type: LoadBalancer, externalTrafficPolicy: Local, clusterIP: 172.30.0.44, ports: [{port: 80, nodePort: 30044}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: lb-1, labels: {kubernetes.io/service-name: lb}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.6], nodeName: node-b}]\nports: [{port: 80, protocol: TCP}]\n";
    let world = release_world(version, kpc, objects);
    let text = crate::render(&world, &RenderOptions::new(ProxyMode::Nftables))
        .unwrap_or_else(|e| panic!("{version}: {e}"));
    text.lines()
        .filter(|l| {
            (l.starts_with("add rule ") || l.starts_with("add element ip kube-proxy hairpin"))
                && !l.contains(" filter-")
                && !l.contains("-check ")
                && !l.contains(" nat-")
                && !l.contains(" reject-chain ")
        })
        .map(|l| l.trim_start_matches("add rule ip kube-proxy "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// pkg/proxy/nftables/proxier.go masquerading by release (`NftablesMarkForMasqueradeChain`,
/// `NftablesHairpinMasquerade`, `NftablesSingleEndpointDnat` of proxy/release.rs): 1.29 to
/// 1.35 jump to `mark-for-masquerade` from the internal chain, the external chain and every
/// endpoint chain; 1.36 (kubernetes/kubernetes#135800, #136499; v1.36.0 = v1.36.5) marks
/// inline, masquerades ClusterIP traffic once in `services` on `@cluster-ips`, masquerades
/// this node's endpoints talking to themselves from the `hairpin-connections` set, and DNATs
/// from a `numgen` map in the service chain unless the Service has affinity (whose endpoint
/// chains stay, without the hairpin rule); 1.37 DNATs a single endpoint with `dnat to`.
#[test]
fn nftables_masquerading_by_release() {
    let kpc = "mode: nftables\nclusterCIDR: 10.0.0.0/8";
    expect_test::expect![[r#"
        mark-for-masquerade mark set mark or 0x00004000
        masquerading mark and 0x00004000 == 0 return
        masquerading mark set mark xor 0x00004000
        masquerading masquerade fully-random
        services ip daddr . meta l4proto . th dport vmap @service-ips
        services ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
        service-Z62NTLDZ-default/lb/tcp/ ip daddr 172.30.0.44 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
        service-Z62NTLDZ-default/lb/tcp/ numgen random mod 1 vmap { 0 : goto endpoint-ZRRP6MMV-default/lb/tcp/__10.0.0.6/80 }
        external-Z62NTLDZ-default/lb/tcp/ ip saddr 10.0.0.0/8 goto service-Z62NTLDZ-default/lb/tcp/ comment "short-circuit pod traffic"
        external-Z62NTLDZ-default/lb/tcp/ fib saddr type local jump mark-for-masquerade comment "masquerade local traffic"
        external-Z62NTLDZ-default/lb/tcp/ fib saddr type local goto service-Z62NTLDZ-default/lb/tcp/ comment "short-circuit local traffic"
        endpoint-ZRRP6MMV-default/lb/tcp/__10.0.0.6/80 ip saddr 10.0.0.6 jump mark-for-masquerade
        endpoint-ZRRP6MMV-default/lb/tcp/__10.0.0.6/80 meta l4proto tcp dnat to 10.0.0.6:80
        service-KQF7E3D2-default/one/udp/ ip daddr 172.30.0.42 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
        service-KQF7E3D2-default/one/udp/ numgen random mod 1 vmap { 0 : goto endpoint-PYOKNR2O-default/one/udp/__10.0.0.3/5353 }
        endpoint-PYOKNR2O-default/one/udp/__10.0.0.3/5353 ip saddr 10.0.0.3 jump mark-for-masquerade
        endpoint-PYOKNR2O-default/one/udp/__10.0.0.3/5353 meta l4proto udp dnat to 10.0.0.3:5353
        service-EDE2N7RF-default/sticky/tcp/ ip daddr 172.30.0.43 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
        service-EDE2N7RF-default/sticky/tcp/ ip saddr @affinity-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 goto endpoint-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443
        service-EDE2N7RF-default/sticky/tcp/ ip saddr @affinity-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 goto endpoint-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443
        service-EDE2N7RF-default/sticky/tcp/ numgen random mod 2 vmap { 0 : goto endpoint-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 , 1 : goto endpoint-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 }
        endpoint-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 ip saddr 10.0.0.4 jump mark-for-masquerade
        endpoint-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 update @affinity-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 { ip saddr }
        endpoint-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 meta l4proto tcp dnat to 10.0.0.4:8443
        endpoint-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 ip saddr 10.0.0.5 jump mark-for-masquerade
        endpoint-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 update @affinity-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 { ip saddr }
        endpoint-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 meta l4proto tcp dnat to 10.0.0.5:8443
        service-CLLS5CZR-default/web/tcp/p80 ip daddr 172.30.0.41 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
        service-CLLS5CZR-default/web/tcp/p80 numgen random mod 2 vmap { 0 : goto endpoint-BLMAVPEO-default/web/tcp/p80__10.0.0.1/8080 , 1 : goto endpoint-GX3L7LED-default/web/tcp/p80__10.0.0.2/8080 }
        endpoint-BLMAVPEO-default/web/tcp/p80__10.0.0.1/8080 ip saddr 10.0.0.1 jump mark-for-masquerade
        endpoint-BLMAVPEO-default/web/tcp/p80__10.0.0.1/8080 meta l4proto tcp dnat to 10.0.0.1:8080
        endpoint-GX3L7LED-default/web/tcp/p80__10.0.0.2/8080 ip saddr 10.0.0.2 jump mark-for-masquerade
        endpoint-GX3L7LED-default/web/tcp/p80__10.0.0.2/8080 meta l4proto tcp dnat to 10.0.0.2:8080"#]]
    .assert_eq(&masquerading_rules("1.35", kpc));
    expect_test::expect![[r#"
        masquerading mark and 0x00004000 != 0 mark set mark xor 0x00004000 masquerade fully-random
        masquerading ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random
        services ip daddr @cluster-ips ip saddr != 10.0.0.0/8 mark set mark or 0x00004000 comment "masquerade clusterIP traffic from outside cluster"
        services ip daddr . meta l4proto . th dport vmap @service-ips
        services ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
        service-Z62NTLDZ-default/lb/tcp/ meta l4proto tcp dnat ip addr . port to numgen random mod 1 map { 0 : 10.0.0.6 . 80 }
        external-Z62NTLDZ-default/lb/tcp/ ip saddr 10.0.0.0/8 goto service-Z62NTLDZ-default/lb/tcp/ comment "short-circuit pod traffic"
        external-Z62NTLDZ-default/lb/tcp/ fib saddr type local mark set mark or 0x00004000 comment "masquerade local traffic"
        external-Z62NTLDZ-default/lb/tcp/ fib saddr type local goto service-Z62NTLDZ-default/lb/tcp/ comment "short-circuit local traffic"
        service-KQF7E3D2-default/one/udp/ meta l4proto udp dnat ip addr . port to numgen random mod 1 map { 0 : 10.0.0.3 . 5353 }
        add element ip kube-proxy hairpin-connections { 10.0.0.3 . 10.0.0.3 . udp . 5353 }
        service-EDE2N7RF-default/sticky/tcp/ ip saddr @affinity-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 goto endpoint-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443
        service-EDE2N7RF-default/sticky/tcp/ ip saddr @affinity-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 goto endpoint-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443
        service-EDE2N7RF-default/sticky/tcp/ numgen random mod 2 vmap { 0 : goto endpoint-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 , 1 : goto endpoint-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 }
        endpoint-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 update @affinity-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 { ip saddr }
        endpoint-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 meta l4proto tcp dnat to 10.0.0.4:8443
        endpoint-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 update @affinity-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 { ip saddr }
        endpoint-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 meta l4proto tcp dnat to 10.0.0.5:8443
        add element ip kube-proxy hairpin-connections { 10.0.0.4 . 10.0.0.4 . tcp . 8443 }
        service-CLLS5CZR-default/web/tcp/p80 meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.0.0.1 . 8080 , 1 : 10.0.0.2 . 8080 }
        add element ip kube-proxy hairpin-connections { 10.0.0.1 . 10.0.0.1 . tcp . 8080 }"#]].assert_eq(&masquerading_rules("1.36", kpc));
    expect_test::expect![[r#"
        masquerading mark and 0x00004000 != 0 mark set mark xor 0x00004000 masquerade fully-random
        masquerading ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random
        services ip daddr @cluster-ips ip saddr != 10.0.0.0/8 mark set mark or 0x00004000 comment "masquerade clusterIP traffic from outside cluster"
        services ip daddr . meta l4proto . th dport vmap @service-ips
        services ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
        service-Z62NTLDZ-default/lb/tcp/ meta l4proto tcp dnat to 10.0.0.6:80
        external-Z62NTLDZ-default/lb/tcp/ ip saddr 10.0.0.0/8 goto service-Z62NTLDZ-default/lb/tcp/ comment "short-circuit pod traffic"
        external-Z62NTLDZ-default/lb/tcp/ fib saddr type local mark set mark or 0x00004000 comment "masquerade local traffic"
        external-Z62NTLDZ-default/lb/tcp/ fib saddr type local goto service-Z62NTLDZ-default/lb/tcp/ comment "short-circuit local traffic"
        service-KQF7E3D2-default/one/udp/ meta l4proto udp dnat to 10.0.0.3:5353
        add element ip kube-proxy hairpin-connections { 10.0.0.3 . 10.0.0.3 . udp . 5353 }
        service-EDE2N7RF-default/sticky/tcp/ ip saddr @affinity-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 goto endpoint-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443
        service-EDE2N7RF-default/sticky/tcp/ ip saddr @affinity-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 goto endpoint-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443
        service-EDE2N7RF-default/sticky/tcp/ numgen random mod 2 vmap { 0 : goto endpoint-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 , 1 : goto endpoint-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 }
        endpoint-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 update @affinity-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 { ip saddr }
        endpoint-SOLYA5YD-default/sticky/tcp/__10.0.0.4/8443 meta l4proto tcp dnat to 10.0.0.4:8443
        endpoint-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 update @affinity-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 { ip saddr }
        endpoint-F24JYJWX-default/sticky/tcp/__10.0.0.5/8443 meta l4proto tcp dnat to 10.0.0.5:8443
        add element ip kube-proxy hairpin-connections { 10.0.0.4 . 10.0.0.4 . tcp . 8443 }
        service-CLLS5CZR-default/web/tcp/p80 meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.0.0.1 . 8080 , 1 : 10.0.0.2 . 8080 }
        add element ip kube-proxy hairpin-connections { 10.0.0.1 . 10.0.0.1 . tcp . 8080 }"#]].assert_eq(&masquerading_rules("1.37", kpc));
    // masqueradeAll: the `services` rule for every ClusterIP, whatever the source.
    let all = masquerading_rules("1.37", "mode: nftables\nnftables: {masqueradeAll: true}");
    assert!(
        all.contains("services ip daddr @cluster-ips mark set mark or 0x00004000 comment \"masquerade all clusterIP traffic\""),
        "{all}"
    );
    // No detector, no masqueradeAll: no ClusterIP masquerade rule at all.
    let none = masquerading_rules("1.37", "mode: nftables");
    assert!(!none.contains("@cluster-ips"), "{none}");
}

/// The report's `rules` (report/build.rs `report_rules`) by release: kube-proxy has no
/// nftables mode before 1.29 and refuses it in 1.29 and 1.30 unless its own NFTablesProxyMode
/// gate is on (pkg/proxy/apis/config/validation/validation.go `validateProxyModeLinux`), so
/// the nftables ruleset is empty there, with no `nftables-*` figures; the iptables ruleset is
/// always there. The nftables ruleset takes `nftables.masqueradeAll`, not the iptables block's
/// (cmd/kube-proxy/app/server_linux.go `createProxier`).
#[test]
fn report_rules_by_release() {
    let objects = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec: {clusterIP: 172.30.0.41, ports: [{name: p80, port: 80}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: web-1, labels: {kubernetes.io/service-name: web}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.1]}]\nports: [{name: p80, port: 80, protocol: TCP}]\n";
    let rules = |version: &str, kpc: &str| {
        let world = release_world(version, kpc, objects);
        crate::report_rules(&world).unwrap_or_else(|| panic!("{version}: no rules"))
    };
    for (version, kpc, nftables) in [
        ("1.24", "mode: iptables", false),
        ("1.28", "mode: iptables", false),
        ("1.29", "mode: iptables", false),
        ("1.30", "mode: iptables", false),
        ("1.29", "featureGates: {NFTablesProxyMode: true}", true),
        ("1.31", "mode: iptables", true),
        ("1.31", "featureGates: {NFTablesProxyMode: false}", false),
        ("1.33", "mode: iptables", true),
        ("1.37", "mode: iptables", true),
    ] {
        let got = rules(version, kpc);
        assert!(got.iptables.contains("KUBE-SERVICES"), "{version} {kpc}");
        assert_eq!(!got.nftables.is_empty(), nftables, "{version} {kpc}: {}", got.nftables);
        assert_eq!(
            got.figures.rules.contains_key("nftables-rules"),
            nftables,
            "{version} {kpc}: {:?}",
            got.figures
        );
    }
    let masquerade_all = |block: &str| {
        let got = rules("1.35", &format!("{block}: {{masqueradeAll: true}}"));
        (
            got.iptables.contains("-d 172.30.0.41 --dport 80 -j KUBE-MARK-MASQ"),
            got.nftables.contains("ip daddr 172.30.0.41 jump mark-for-masquerade"),
        )
    };
    assert_eq!(masquerade_all("nftables"), (false, true));
    assert_eq!(masquerade_all("iptables"), (true, false));
}

/// kube-proxy 1.24 and 1.25 with EndpointSliceTerminatingCondition off in its own
/// `featureGates`: pkg/proxy/endpointslicecache.go `newEndpointSliceInfo` reads `serving` and
/// `terminating` as the slice carries them (`Serving == nil || *Serving`, `Terminating != nil
/// && *Terminating`) whatever the gate, read in a copy of the discovery/v1 cache of 1.22 to
/// 1.25 (`newBaseEndpointInfo(..., ready, serving, terminating, zoneHints)`); the gate is read
/// only by the apiserver's strategy (registry.rs) and the EndpointSlice controller. So a
/// stored slice's conditions reach the terminating fallback (ProxyTerminatingEndpoints on)
/// with the gate off as with it on.
#[test]
fn terminating_condition_gate_is_not_read_by_kube_proxy_before_1_26() {
    let objects = "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec: {clusterIP: 172.30.0.41, ports: [{name: p80, port: 80}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: web-1, labels: {kubernetes.io/service-name: web}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.1], conditions: {ready: false, serving: true, terminating: true}}]\nports: [{name: p80, port: 80, protocol: TCP}]\n";
    for version in ["1.24", "1.25"] {
        let render = |gate: bool| {
            let kpc = format!(
                "featureGates: {{ProxyTerminatingEndpoints: true, EndpointSliceTerminatingCondition: {gate}}}"
            );
            let world = release_world(version, &kpc, objects);
            crate::render(&world, &RenderOptions::new(ProxyMode::Iptables))
                .unwrap_or_else(|e| panic!("{version}: {e}"))
        };
        let on = render(true);
        assert!(on.contains("-j DNAT --to-destination 10.0.0.1:80"), "{version}\n{on}");
        assert_eq!(render(false), on, "{version}");
    }
}

/// pkg/proxy/iptables/proxier.go `syncProxyRules`: 1.37 (v1.37.0, v1.37.2) writes
/// `--random-fully` on the MASQUERADE rule unconditionally; 1.36 (v1.36.5) only when the
/// iptables binary has it (`host.iptablesRandomFully`, off here).
#[test]
fn random_fully_by_release() {
    let masquerade = "-j MASQUERADE --random-fully";
    for (version, want) in [("1.24", false), ("1.36", false), ("1.37", true)] {
        let text = render_at(version, "mode: iptables", ProxyMode::Iptables).unwrap();
        assert_eq!(text.contains(masquerade), want, "{version}\n{text}");
    }
}

/// pkg/proxy/nftables/proxier.go `truncateNFTablesComment` (1.37: kubernetes/kubernetes#139516):
/// element comments are cut to `knftables.CommentLengthMax`, 128 bytes; 1.36 writes the service
/// port name whole (143 bytes here, which nft refuses).
#[test]
fn nftables_comments_by_release() {
    let (ns, name) = ("n".repeat(63), "s".repeat(63));
    let svc = format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{namespace: {ns}, name: {name}}}\nspec: {{clusterIP: 172.30.0.41, ports: [{{name: abcdefghijklmno, port: 80}}]}}\n"
    );
    let whole = format!("{ns}/{name}:abcdefghijklmno");
    for (version, comment) in [("1.36", whole.as_str()), ("1.37", &whole[..128])] {
        let world = release_world(version, "mode: nftables", &svc);
        let text = crate::render(&world, &RenderOptions::new(ProxyMode::Nftables))
            .unwrap_or_else(|e| panic!("{e}"));
        let element = format!(
            "add element ip kube-proxy no-endpoint-services {{ 172.30.0.41 . tcp . 80 comment \"{comment}\" : goto reject-chain }}"
        );
        assert!(text.lines().any(|l| l == element), "{version}\n{text}");
    }
}

/// The NodePort addresses of the nftables proxier by release: 1.30 (v1.30.14
/// `NewNodePortAddresses(family, cidrs, nodeIP)`) takes the node IP for a family without a
/// CIDR, a loopback node IP included (no Node: `127.0.0.1`, so `nodeport-ips` stays empty), and
/// for IPv6 when only IPv4 CIDRs are written; 1.31 on (`platformApplyDefaults`: `primary`)
/// leaves a loopback node IP out, so every local address accepts NodePorts, and a family
/// without a CIDR matches every address.
#[test]
fn nftables_node_port_addresses_by_release() {
    let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: np, namespace: default}\nspec: {type: NodePort, clusterIP: 172.30.0.41, clusterIPs: [172.30.0.41, 'fd00::41'], ipFamilyPolicy: RequireDualStack, ports: [{name: p80, port: 80, nodePort: 30080}]}\n";
    let node = "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}, {type: InternalIP, address: '2001:db8::2'}]}\n";
    let services_rule = |version: &str, kpc: &str, objects: &str, family: IpFamily| {
        let yaml = format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"{version}\"\nserviceClusterIPRanges: [\"172.30.0.0/16\", \"fd00::/112\"]\nhost: {{interfaceAddresses: [127.0.0.1/8, 192.168.0.2/24, '::1/128', '2001:db8::2/64']}}\n---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\nfeatureGates: {{NFTablesProxyMode: true}}\n{kpc}\n---\n{objects}"
        );
        let (world, report) =
            crate::evaluate(&[Input::new("t.yaml", yaml)], &crate::CheckOptions::default());
        assert!(!report.has_errors(), "{:?}", report.diagnostics);
        let options =
            RenderOptions { family: Some(family), ..RenderOptions::new(ProxyMode::Nftables) };
        let text = crate::render(&world, &options).unwrap_or_else(|e| panic!("{e}"));
        let rule = text
            .lines()
            .find(|l| l.contains("vmap @service-nodeports"))
            .map(|l| {
                l.trim_start_matches("add rule ip kube-proxy services ")
                    .trim_start_matches("add rule ip6 kube-proxy services ")
                    .to_owned()
            })
            .unwrap_or_default();
        let elements: Vec<String> = text
            .lines()
            .filter_map(|l| {
                l.split_once("element ip kube-proxy nodeport-ips { ")
                    .or_else(|| l.split_once("element ip6 kube-proxy nodeport-ips { "))
                    .map(|(_, e)| e.trim_end_matches(" }").to_owned())
            })
            .collect();
        (rule, elements)
    };
    let set = |ipx: &str| {
        format!("{ipx} daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports")
    };
    let all = |ipx: &str, lo: &str| {
        format!(
            "fib daddr type local {ipx} daddr != {lo} meta l4proto . th dport vmap @service-nodeports"
        )
    };
    // No Node: the node IP is loopback.
    assert_eq!(services_rule("1.30", "", svc, IpFamily::V4), (set("ip"), vec![]));
    assert_eq!(services_rule("1.31", "", svc, IpFamily::V4), (all("ip", "127.0.0.0/8"), vec![]));
    let with_node = format!("{svc}{node}");
    assert_eq!(
        services_rule("1.30", "", &with_node, IpFamily::V4),
        (set("ip"), vec!["192.168.0.2".to_owned()])
    );
    // Only IPv4 CIDRs written: 1.30's IPv6 proxier falls back to the node's IPv6 address.
    let v4_only = "nodePortAddresses: [192.168.0.0/24]";
    assert_eq!(
        services_rule("1.30", v4_only, &with_node, IpFamily::V6),
        (set("ip6"), vec!["2001:db8::2".to_owned()])
    );
    assert_eq!(
        services_rule("1.31", v4_only, &with_node, IpFamily::V6),
        (all("ip6", "::1"), vec![])
    );
}

/// The local-traffic detector by CIDR writes the CIDR as written in 1.24 to 1.29
/// (pkg/proxy/util/iptables/traffic.go `NewDetectLocalByCIDR(cidr string)` fed the strings of
/// `clusterCIDR`), the parsed network from 1.30 (`MapCIDRsByIPFamily` returns `*net.IPNet`s,
/// passed as `.String()`).
#[test]
fn cluster_cidr_as_written_by_release() {
    let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec: {clusterIP: 172.30.0.41, ports: [{name: p80, port: 80}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: web-1, labels: {kubernetes.io/service-name: web}}\naddressType: IPv4\nendpoints: [{addresses: [10.244.1.5]}]\nports: [{name: p80, port: 8080, protocol: TCP}]\n";
    for (version, cidr) in [
        ("1.24", "10.244.1.0/16"),
        ("1.29", "10.244.1.0/16"),
        ("1.30", "10.244.0.0/16"),
        ("1.37", "10.244.0.0/16"),
    ] {
        let world = release_world(version, "clusterCIDR: 10.244.1.0/16", svc);
        let text = crate::render(&world, &RenderOptions::new(ProxyMode::Iptables))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            text.contains(&format!("--dport 80 ! -s {cidr} -j KUBE-MARK-MASQ")),
            "{version}\n{text}"
        );
    }
}

/// NodePorts whose `nodePortAddresses` match no host address: 1.24 to 1.26 write no NodePort
/// rule at all (`if svcInfo.NodePort() != 0 && len(nodeAddresses) != 0`, `GetNodeAddresses`
/// found nothing), 1.27 on write them (here the REJECT of a NodePort without endpoints) and no
/// jump to KUBE-NODEPORTS. And the zero CIDR:
/// `IsZeroCIDR` compares the text until 1.33, so `192.168.0.9/0` is a CIDR holding every
/// host address (one jump per address); 1.34 on any prefix length 0 means every address.
#[test]
fn node_port_addresses_matching_by_release() {
    let nodeports = |version: &str, kpc: &str| {
        let text = render_at(version, kpc, ProxyMode::Iptables).unwrap_or_else(|e| panic!("{e}"));
        let count = |needle: &str| text.lines().filter(|l| l.contains(needle)).count();
        (count("--dport 30080"), count("-j KUBE-NODEPORTS"))
    };
    let elsewhere = "nodePortAddresses: [10.99.0.0/16]";
    assert_eq!(nodeports("1.26", elsewhere), (0, 0));
    assert_eq!(nodeports("1.27", elsewhere), (1, 0));
    let zero = "nodePortAddresses: [192.168.0.9/0]";
    let local = |version: &str| {
        let text = render_at(version, zero, ProxyMode::Iptables).unwrap_or_else(|e| panic!("{e}"));
        text.lines()
            .filter(|l| l.starts_with("-A KUBE-SERVICES") && l.ends_with("-j KUBE-NODEPORTS"))
            .map(|l| l.split("chain\" ").nth(1).unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        local("1.33"),
        ["-d 127.0.0.1 -j KUBE-NODEPORTS", "-d 192.168.0.2 -j KUBE-NODEPORTS"]
    );
    assert_eq!(local("1.34"), ["-m addrtype --dst-type LOCAL -j KUBE-NODEPORTS"]);
    // 1.27's `GetNodeAddresses` skips the CIDR by its parsed text, `0.0.0.0/0`, having not
    // taken it as a zero CIDR by its written one: no address, no jump.
    assert_eq!(local("1.26"), local("1.33"));
    assert_eq!(local("1.27"), Vec::<String>::new());
}

/// pkg/proxy/nftables/proxier.go with kube-proxy's KubeProxyNFTablesLocalhostNodePorts (alpha,
/// 1.37; `localhostNodePortRejectProtocols`): NodePorts on loopback are rejected and counted
/// per protocol (a named counter and a chain each, the `localhost-nodeport-reject-ports` map,
/// one element per NodePort); with loopback itself among `nodePortAddresses` a userspace
/// proxy serves TCP (no rules), so only UDP and SCTP are rejected. The gate is unknown before
/// 1.37.
#[test]
fn nftables_localhost_node_ports_gate() {
    let gate = "featureGates: {KubeProxyNFTablesLocalhostNodePorts: true}";
    let lines = |kpc: &str| {
        let text = render_at("1.37", kpc, ProxyMode::Nftables).unwrap_or_else(|e| panic!("{e}"));
        text.lines()
            .filter(|l| l.contains("localhost-nodeport"))
            .map(|l| l.trim_start_matches("add ").to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    };
    expect_test::expect![[r#"
        map ip kube-proxy localhost-nodeport-reject-ports { type inet_proto . inet_service : verdict ; comment "localhost NodePorts rejected by kube-proxy" ; }
        counter ip kube-proxy localhost-nodeport-rejected-tcp
        counter ip kube-proxy localhost-nodeport-rejected-udp
        counter ip kube-proxy localhost-nodeport-rejected-sctp
        chain ip kube-proxy localhost-nodeport-reject-tcp
        chain ip kube-proxy localhost-nodeport-reject-udp
        chain ip kube-proxy localhost-nodeport-reject-sctp
        rule ip kube-proxy localhost-nodeport-reject-tcp counter name "localhost-nodeport-rejected-tcp" reject
        rule ip kube-proxy localhost-nodeport-reject-udp counter name "localhost-nodeport-rejected-udp" reject
        rule ip kube-proxy localhost-nodeport-reject-sctp counter name "localhost-nodeport-rejected-sctp" reject
        rule ip kube-proxy nodeport-endpoints-check ip daddr 127.0.0.0/8 meta l4proto . th dport vmap @localhost-nodeport-reject-ports
        element ip kube-proxy localhost-nodeport-reject-ports { tcp . 30080 : goto localhost-nodeport-reject-tcp }"#]].assert_eq(&lines(gate));
    expect_test::expect![[r#"
        map ip kube-proxy localhost-nodeport-reject-ports { type inet_proto . inet_service : verdict ; comment "localhost NodePorts rejected by kube-proxy" ; }
        counter ip kube-proxy localhost-nodeport-rejected-udp
        counter ip kube-proxy localhost-nodeport-rejected-sctp
        chain ip kube-proxy localhost-nodeport-reject-udp
        chain ip kube-proxy localhost-nodeport-reject-sctp
        rule ip kube-proxy localhost-nodeport-reject-udp counter name "localhost-nodeport-rejected-udp" reject
        rule ip kube-proxy localhost-nodeport-reject-sctp counter name "localhost-nodeport-rejected-sctp" reject
        rule ip kube-proxy nodeport-endpoints-check ip daddr 127.0.0.0/8 meta l4proto . th dport vmap @localhost-nodeport-reject-ports"#]]
        .assert_eq(&lines(&format!("{gate}\nnodePortAddresses: [primary, localhost]")));
    assert_eq!(lines("mode: nftables"), "");
    assert_eq!(
        render_at("1.36", gate, ProxyMode::Nftables),
        Err("kube-proxy 1.36 refuses to start: failed complete: unrecognized feature gate: KubeProxyNFTablesLocalhostNodePorts".to_owned())
    );
}

/// Addresses as written by release: pkg/proxy/service.go `newBaseServiceInfo` (1.24 to 1.29)
/// keeps a Service's external IPs, ingress IPs and source ranges as strings, serviceport.go
/// (1.30 on) as parsed values; pkg/proxy/endpointslicecache.go hands the endpoint address
/// as written to the endpoint string until 1.30 and parses it from 1.31, while the iptables
/// hairpin `-s` of 1.24 to 1.28 comes from `IPPart`, which parses.
#[test]
fn addresses_as_written_by_release() {
    let lb = "apiVersion: v1\nkind: Service\nmetadata: {name: lb, namespace: default}\nspec: {type: LoadBalancer, clusterIP: 172.30.0.41, externalIPs: [198.051.100.007], loadBalancerSourceRanges: [203.0.113.5/24], ports: [{name: p80, port: 80, nodePort: 30080}]}\nstatus: {loadBalancer: {ingress: [{ip: 005.006.007.008}]}}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: lb-1, labels: {kubernetes.io/service-name: lb}}\naddressType: IPv4\nendpoints: [{addresses: [10.180.00.001]}]\nports: [{name: p80, port: 80, protocol: TCP}]\n";
    let has = |version: &str, needles: &[&str]| {
        let world = release_world(version, "mode: iptables", lb);
        let text = crate::render(&world, &RenderOptions::new(ProxyMode::Iptables))
            .unwrap_or_else(|e| panic!("{e}"));
        needles.iter().map(|n| text.contains(n)).collect::<Vec<_>>()
    };
    let needles = [
        "-d 198.051.100.007 --dport 80",
        "-d 005.006.007.008 --dport 80",
        "-s 203.0.113.5/24 -j KUBE-EXT-",
        "--to-destination 10.180.00.001:80",
        "-s 10.180.0.1 -j KUBE-MARK-MASQ",
    ];
    assert_eq!(has("1.28", &needles), [true, true, true, true, true]);
    assert_eq!(has("1.29", &needles), [true, true, true, true, false]);
    assert!(has("1.29", &["-s 10.180.00.001 -j KUBE-MARK-MASQ"])[0]);
    assert_eq!(has("1.30", &needles), [false, false, false, true, false]);
    assert_eq!(
        has(
            "1.31",
            &[
                "-d 198.51.100.7 --dport 80",
                "-s 203.0.113.0/24 -j KUBE-EXT-",
                "--to-destination 10.180.0.1:80"
            ]
        ),
        [true, true, true]
    );
}

/// 1.27's iptables proxier takes `nodePortAddresses` of both families
/// (`NewNodePortAddresses(strings)` without the family, between 1.26's `MapCIDRsByIPFamily`
/// and 1.28's family argument): with IPv4 CIDRs only, the IPv6 proxier finds no address and
/// writes no jump to KUBE-NODEPORTS; other releases match every local IPv6 address.
#[test]
fn node_port_addresses_of_the_other_family_by_release() {
    let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: np, namespace: default}\nspec: {type: NodePort, clusterIP: 172.30.0.41, clusterIPs: [172.30.0.41, 'fd00::41'], ipFamilyPolicy: RequireDualStack, ports: [{name: p80, port: 80, nodePort: 30080}]}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}, {type: InternalIP, address: '2001:db8::2'}]}\n";
    let jumps = |version: &str| {
        let yaml = format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"{version}\"\nserviceClusterIPRanges: [\"172.30.0.0/16\", \"fd00::/112\"]\n---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nnodePortAddresses: [192.168.0.0/24]\n---\n{svc}"
        );
        let (world, report) =
            crate::evaluate(&[Input::new("t.yaml", yaml)], &crate::CheckOptions::default());
        assert!(!report.has_errors(), "{:?}", report.diagnostics);
        let options =
            RenderOptions { family: Some(IpFamily::V6), ..RenderOptions::new(ProxyMode::Iptables) };
        let text = crate::render(&world, &options).unwrap_or_else(|e| panic!("{e}"));
        text.lines().filter(|l| l.ends_with("-j KUBE-NODEPORTS")).count()
    };
    assert_eq!(jumps("1.26"), 1);
    assert_eq!(jumps("1.27"), 0);
    assert_eq!(jumps("1.28"), 1);
}

/// The rows proxy/startup.rs alone reads shape no rules: no module that configures, models or
/// writes rules names one.
#[test]
fn startup_only_rows_shape_no_rules() {
    let sources = [
        ("proxy/config.rs", include_str!("../config.rs")),
        ("proxy/model.rs", include_str!("../model.rs")),
        ("proxy/iptables.rs", include_str!("../iptables.rs")),
        ("proxy/nftables.rs", include_str!("../nftables.rs")),
        ("proxy/nftables/fixed.rs", include_str!("../nftables/fixed.rs")),
        ("world.rs", include_str!("../../world.rs")),
    ];
    for behaviour in crate::proxy::startup::STARTUP_ONLY {
        let name = format!("Behaviour::{behaviour:?}");
        for (file, text) in sources {
            let code = text.split("#[cfg(test)]").next().unwrap_or(text);
            assert!(
                !code.contains(&name),
                "{file} reads {name}, which startup.rs says only it reads"
            );
        }
    }
}
