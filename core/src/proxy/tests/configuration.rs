//! The proxier configuration from the objects: KubeProxyConfiguration blocks, node addresses, kube-proxy's own gates and what its validation refuses.

use super::*;

#[test]
fn world_objects_drive_the_configuration() {
    let yaml = "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nserviceClusterIPRanges: [172.30.0.0/16]\nhost: {iptablesRandomFully: true, nfacct: true, interfaceAddresses: [127.0.0.1/8, 192.168.0.2/24]}\n---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.0.0.0/8\niptables: {masqueradeBit: 14}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}]}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-b}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.3}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {namespace: ns1, name: web}\nspec:\n  type: LoadBalancer\n  externalTrafficPolicy: Local\n  clusterIP: 172.30.0.41\n  ports: [{name: http, port: 80, nodePort: 30080}]\nstatus: {loadBalancer: {ingress: [{ip: 5.6.7.8}]}}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: ns1, name: web-1, labels: {kubernetes.io/service-name: web}}\naddressType: IPv4\nendpoints: [{addresses: [10.180.0.1], nodeName: node-b}]\nports: [{name: http, port: 8080, protocol: TCP}]\n";
    let (world, report) =
        crate::evaluate(&[Input::new("w.yaml", yaml)], &crate::CheckOptions::default());
    assert!(!report.has_errors(), "{:?}", report.diagnostics);
    // The first Node by default: the endpoint is remote, so external traffic is dropped.
    let a = render(&world, &RenderOptions::new(ProxyMode::Iptables)).unwrap();
    for want in [
        "-A KUBE-MARK-MASQ -j MARK --or-mark 0x00004000",
        "-j MASQUERADE --random-fully",
        "--ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP",
        "\"ns1/web:http has no local endpoints\" -m tcp -p tcp -d 5.6.7.8 --dport 80 -j DROP",
        "\"ns1/web:http loadbalancer IP\" -m tcp -p tcp -d 5.6.7.8 --dport 80 -j KUBE-EXT-",
    ] {
        assert!(a.contains(want), "missing {want:?} in\n{a}");
    }
    // On node-b the endpoint is local.
    let options =
        RenderOptions { node: Some("node-b".into()), ..RenderOptions::new(ProxyMode::Iptables) };
    let b = render(&world, &options).unwrap();
    assert!(b.contains("-j KUBE-SVL-") && !b.contains("has no local endpoints"));
    let missing =
        RenderOptions { node: Some("node-z".into()), ..RenderOptions::new(ProxyMode::Iptables) };
    assert_eq!(render(&world, &missing), Err(RenderError::UnknownNode("node-z".into())));
    // nftables: the service CIDR from the profile, node IP as the default nodePortAddresses.
    let n = render(&world, &RenderOptions::new(ProxyMode::Nftables)).unwrap();
    assert!(n.contains("ip daddr { 172.30.0.0/16 } drop"));
    assert!(n.contains("add element ip kube-proxy nodeport-ips { 192.168.0.2 }"));
    let rules = report.rules.expect("rules in the report");
    assert_eq!(rules.iptables, a);
    assert_eq!(rules.figures.no_local_endpoints_external, 1);
}

/// pkg/proxy/apis/config/v1alpha1/conversion.go
/// `Convert_v1alpha1_KubeProxyConfiguration_To_config_KubeProxyConfiguration` (1.31 to the
/// newest) and cmd/kube-proxy/app/server_linux.go `createProxier`: the nftables proxier takes
/// masqueradeAll and masqueradeBit from `nftables:`, the iptables proxier from `iptables:`;
/// component-helpers `nodeutil.GetHostname` lowercases `hostnameOverride` (1.24 to the newest);
/// kube-proxy's own `featureGates` override the profile's gate either way.
#[test]
fn configuration_blocks_hostname_and_own_gates() {
    let world = |kpc: &str, profile_gates: &str| {
        let yaml = format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"1.33\"\nserviceClusterIPRanges: [\"172.30.0.0/16\"]\nfeatureGates: {{{profile_gates}}}\n---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n{kpc}\n---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-a}}\nstatus: {{addresses: [{{type: InternalIP, address: 192.168.0.2}}]}}\n---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-b}}\nstatus: {{addresses: [{{type: InternalIP, address: 192.168.0.3}}]}}\n"
        );
        let (world, report) =
            crate::evaluate(&[Input::new("t.yaml", yaml)], &crate::CheckOptions::default());
        assert!(!report.has_errors(), "{:?}", report.diagnostics);
        world
    };
    let blocks = "hostnameOverride: \" Node-B \"\niptables: {masqueradeAll: true, masqueradeBit: 15}\nnftables: {masqueradeBit: 12}\nfeatureGates: {PreferSameTrafficDistribution: false}";
    let w = world(blocks, "PreferSameTrafficDistribution: true");
    let ipt = ProxyConfig::from_world(&w, None, None, ProxyMode::Iptables).unwrap();
    assert_eq!((ipt.masquerade_all, ipt.masquerade_mark.as_str()), (true, "0x00008000"));
    let nft = ProxyConfig::from_world(&w, None, None, ProxyMode::Nftables).unwrap();
    assert_eq!((nft.masquerade_all, nft.masquerade_mark.as_str()), (false, "0x00001000"));
    assert_eq!(nft.node_name, "node-b");
    assert_eq!(nft.node_ip, Some("192.168.0.3".parse().unwrap()));
    assert!(!nft.prefer_same_node, "kube-proxy's own gate wins over the profile");
    // The duplicate-endpoint rule of endpointslicecache.go follows the release (1.33 here).
    assert!(!nft.prefer_non_terminating_duplicates);
    // Without an own gate the profile decides; without `nftables:` the defaults (bit 14).
    let w = world(
        "mode: nftables\niptables: {masqueradeAll: true}",
        "PreferSameTrafficDistribution: true",
    );
    let nft = ProxyConfig::from_world(&w, None, None, ProxyMode::Nftables).unwrap();
    assert_eq!((nft.masquerade_all, nft.masquerade_mark.as_str()), (false, "0x00004000"));
    assert!(nft.prefer_same_node);
    let w = world(
        "featureGates: {PreferSameTrafficDistribution: true}",
        "PreferSameTrafficDistribution: false",
    );
    assert!(ProxyConfig::from_world(&w, None, None, ProxyMode::Iptables).unwrap().prefer_same_node);
}

/// cmd/kube-proxy/app/server.go `detectNodeIPs` (1.24 to 1.28 `detectNodeIP`): without a Node
/// the node IP is loopback, and `bindAddress` overrides the IP of its family; `newProxyServer`
/// (1.29, where `primary` came with the nftables mode, to the newest) leaves a loopback node IP
/// out of `nodePortAddresses: [primary]`, so the nftables default then matches every local
/// address instead of one `nodeport-ips` element.
#[test]
fn node_ip_fallback_and_bind_address() {
    let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: np, namespace: default}\nspec: {type: NodePort, clusterIP: 172.30.0.41, ports: [{name: p80, port: 80, nodePort: 30080}]}\n";
    let profile_host = "---\napiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"1.33\"\nserviceClusterIPRanges: [\"172.30.0.0/16\"]\nhost: {interfaceAddresses: [192.168.0.9/24]}\n";
    let world = |kpc: &str| {
        let yaml = format!(
            "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n{kpc}\n---\n{svc}{profile_host}"
        );
        let (world, report) =
            crate::evaluate(&[Input::new("t.yaml", yaml)], &crate::CheckOptions::default());
        assert!(!report.has_errors(), "{:?}", report.diagnostics);
        world
    };
    let w = world("mode: nftables");
    let config = ProxyConfig::from_world(&w, None, None, ProxyMode::Nftables).unwrap();
    assert_eq!(config.node_ip, Some("127.0.0.1".parse().unwrap()));
    let text = crate::render(&w, &RenderOptions::new(ProxyMode::Nftables))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!text.contains("nodeport-ips"), "{text}");
    assert!(
        text.contains("add rule ip kube-proxy services fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports"),
        "{text}"
    );
    let w = world("mode: nftables\nbindAddress: 192.168.0.9");
    let config = ProxyConfig::from_world(&w, None, None, ProxyMode::Nftables).unwrap();
    assert_eq!(config.node_ip, Some("192.168.0.9".parse().unwrap()));
    let text = crate::render(&w, &RenderOptions::new(ProxyMode::Nftables))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains("add element ip kube-proxy nodeport-ips { 192.168.0.9 }"), "{text}");
    // An unspecified or other-family bindAddress changes nothing.
    for bind in ["0.0.0.0", "::"] {
        let w = world(&format!("bindAddress: \"{bind}\""));
        let config = ProxyConfig::from_world(&w, None, None, ProxyMode::Iptables).unwrap();
        assert_eq!(config.node_ip, Some("127.0.0.1".parse().unwrap()), "{bind}");
    }
}

/// `svclab check` reports what kube-proxy of the profile's release refuses, one error per
/// field error of pkg/proxy/apis/config/validation/validation.go `Validate`, on the field as
/// the KubeProxyConfiguration writes it and at its line: the nftables mode before 1.29 (and
/// `validateProxyModeLinux`'s list, with `nftables` once it is valid), entries of
/// `nodePortAddresses` that are not CIDRs (`validateKubeProxyNodePortAddress`).
#[test]
fn check_reports_refused_configuration() {
    let diagnostics = |version: &str, kpc: &str| {
        let yaml = format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"{version}\"\n---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n{kpc}\n"
        );
        let report = crate::check(&[Input::new("kp.yaml", yaml)], &crate::CheckOptions::default());
        report
            .diagnostics
            .iter()
            .map(|d| {
                let object = d.object.as_ref().map(|o| o.kind.clone()).unwrap_or_default();
                let line = d.source.as_ref().map_or(0, |s| s.line);
                format!("{:?} {object} {} line {line}: {}", d.severity, d.field, d.message)
            })
            .collect::<Vec<_>>()
    };
    let prefix = "kube-proxy refuses to start: failed validate: KubeProxyConfiguration";
    let blank = "or blank (blank means the best-available proxy [currently iptables])";
    let kpc = "mode: nftables\nnodePortAddresses:\n- 10.0.0.0/8\n- bogus";
    assert_eq!(
        diagnostics("1.28", kpc),
        [
            format!(
                "Error KubeProxyConfiguration mode line 7: {prefix}.Mode.ProxyMode: Invalid value: \"nftables\": must be iptables, ipvs {blank}"
            ),
            format!(
                "Error KubeProxyConfiguration nodePortAddresses[1] line 10: {prefix}.NodePortAddresses[1]: Invalid value: \"bogus\": must be a valid CIDR"
            ),
        ]
    );
    assert_eq!(
        diagnostics("1.31", kpc),
        [format!(
            "Error KubeProxyConfiguration nodePortAddresses[1] line 10: {prefix}.NodePortAddresses[1]: Invalid value: \"bogus\": must be a valid CIDR"
        )]
    );
    assert_eq!(
        diagnostics("1.24", "mode: nftables"),
        [format!(
            "Error KubeProxyConfiguration mode line 7: {prefix}.Mode.ProxyMode: Invalid value: \"nftables\": must be iptables,ipvs,userspace {blank}"
        )]
    );
    assert_eq!(
        diagnostics("1.31", "mode: kernelspace"),
        [format!(
            "Error KubeProxyConfiguration mode line 7: {prefix}.Mode.ProxyMode: Invalid value: \"kernelspace\": must be iptables, ipvs, nftables {blank}"
        )]
    );
    for (version, kpc) in [
        ("1.24", "mode: userspace"),
        ("1.28", "mode: iptables"),
        ("1.29", "mode: nftables\nfeatureGates: {NFTablesProxyMode: true}"),
        ("1.31", "mode: nftables\nnodePortAddresses: [primary]"),
        ("1.37", "mode: ipvs"),
    ] {
        assert_eq!(diagnostics(version, kpc), Vec::<String>::new(), "{version} {kpc}");
    }
}

/// kube-proxy's own NFTablesProxyMode gate in its `featureGates`: cmd/kube-proxy/app/server.go
/// `Options.Complete` applies them with component-base featuregate `SetFromMap` before
/// validation and fails with `failed complete: %w`. The gate is unknown before 1.29
/// (kubernetes/kubernetes#121046) and locked to true from 1.33 (KEP-3866 GA), so both refuse
/// to start in any mode; `svclab check` reports it on the field.
#[test]
fn nftables_gate_in_kube_proxy_feature_gates() {
    let unknown = "failed complete: unrecognized feature gate: NFTablesProxyMode";
    let locked = "failed complete: cannot set feature gate NFTablesProxyMode to false, feature is locked to true";
    for (version, value, mode, want) in [
        ("1.24", true, ProxyMode::Iptables, Some(unknown)),
        ("1.28", false, ProxyMode::Nftables, Some(unknown)),
        ("1.29", true, ProxyMode::Nftables, None),
        ("1.32", false, ProxyMode::Iptables, None),
        ("1.33", true, ProxyMode::Nftables, None),
        ("1.33", false, ProxyMode::Iptables, Some(locked)),
        ("1.37", false, ProxyMode::Nftables, Some(locked)),
    ] {
        let kpc = format!("featureGates: {{NFTablesProxyMode: {value}}}");
        let got = render_at(version, &kpc, mode);
        match want {
            Some(text) => {
                assert_eq!(got, Err(format!("kube-proxy {version} refuses to start: {text}")))
            }
            None => assert!(got.is_ok(), "{version} {value}: {got:?}"),
        }
    }
    let world_report = |version: &str| {
        let yaml = format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"{version}\"\n---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\nfeatureGates:\n  NFTablesProxyMode: true\n"
        );
        let (_, report) =
            crate::evaluate(&[Input::new("kp.yaml", yaml)], &crate::CheckOptions::default());
        report
            .diagnostics
            .iter()
            .filter(|d| d.severity == crate::Severity::Error)
            .map(|d| (d.field.clone(), d.source.as_ref().map(|s| s.line), d.message.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        world_report("1.28"),
        [(
            "featureGates.NFTablesProxyMode".to_owned(),
            Some(9),
            format!("kube-proxy refuses to start: {unknown}")
        )]
    );
    assert!(world_report("1.29").is_empty());
}

/// pkg/proxy/topology.go `CategorizeEndpoints` with ProxyTerminatingEndpoints (kube-proxy's own
/// gate; off by default in 1.24 and 1.25, on in 1.26 and 1.27, locked from 1.28, gone in 1.30
/// with the fallback kept). On, a Service whose endpoints are all serving and terminating
/// falls back to them (cluster policy, and local policy for the node's own; #108691,
/// CHANGELOG-1.24); off, it has no endpoints (cluster: REJECT) or no local ones (eTP Local:
/// "has no local endpoints" drop, the ready remote endpoint still serving cluster traffic).
/// ServiceInternalTrafficPolicy off (1.24 and 1.25 only) makes an `internalTrafficPolicy:
/// Local` Service route like a `Cluster` one.
#[test]
fn terminating_fallback_and_internal_policy_follow_kube_proxy_gates() {
    let objects = "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: term, namespace: default}\nspec: {clusterIP: 172.30.0.52, ports: [{name: p80, port: 80}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: term-1, labels: {kubernetes.io/service-name: term}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.5], nodeName: node-b, conditions: {ready: false, serving: true, terminating: true}}]\nports: [{name: p80, port: 80, protocol: TCP}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: etp, namespace: default}\nspec: {type: NodePort, externalTrafficPolicy: Local, clusterIP: 172.30.0.53, ports: [{name: p80, port: 80, nodePort: 30053}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: etp-1, labels: {kubernetes.io/service-name: etp}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.6], nodeName: node-a, conditions: {ready: false, serving: true, terminating: true}}, {addresses: [10.0.0.7], nodeName: node-b}]\nports: [{name: p80, port: 80, protocol: TCP}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: itp, namespace: default}\nspec: {clusterIP: 172.30.0.54, internalTrafficPolicy: Local, ports: [{name: p80, port: 80}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {namespace: default, name: itp-1, labels: {kubernetes.io/service-name: itp}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.8], nodeName: node-b}]\nports: [{name: p80, port: 80, protocol: TCP}]\n";
    let render = |version: &str, gates: &str| {
        let kpc = format!("hostnameOverride: node-a\nmode: iptables\nfeatureGates: {gates}");
        let world = release_world(version, &kpc, objects);
        crate::render(&world, &RenderOptions::new(ProxyMode::Iptables))
            .unwrap_or_else(|e| panic!("{version} {gates}: {e}"))
    };
    let term_rejected = "default/term:p80 has no endpoints";
    for (version, gates, fallback) in [
        ("1.24", "{}", false),
        ("1.25", "{ProxyTerminatingEndpoints: true}", true),
        ("1.26", "{}", true),
        ("1.27", "{ProxyTerminatingEndpoints: false}", false),
        ("1.29", "{}", true),
        ("1.30", "{}", true),
        ("1.37", "{}", true),
    ] {
        let text = render(version, gates);
        assert_eq!(!text.contains(term_rejected), fallback, "{version} {gates}\n{text}");
        // etp's local policy: its own terminating endpoint 10.0.0.6, or the no-local drop;
        // the ready remote 10.0.0.7 serves cluster traffic either way.
        let etp: Vec<&str> = text.lines().filter(|l| l.contains("default/etp:p80")).collect();
        let local_sep = etp
            .iter()
            .any(|l| l.starts_with("-A KUBE-SVL-") && l.contains("default/etp:p80 -> 10.0.0.6:80"));
        assert_eq!(local_sep, fallback, "{version} {gates}: {etp:#?}");
        assert_eq!(
            etp.iter().any(|l| l.contains("has no local endpoints")),
            !fallback,
            "{version} {gates}: {etp:#?}"
        );
        assert!(etp.iter().any(|l| l.contains("-> 10.0.0.7:80")), "{version} {gates}: {etp:#?}");
    }
    // 1.24 (before #110290): no local endpoint means KUBE-SVL-* marks the packet for kubelet's
    // drop; the trace follows it into KUBE-MARK-DROP, not to an unknown chain.
    let world = release_world("1.24", "hostnameOverride: node-a\nmode: iptables", objects);
    let request = crate::TraceRequest {
        src: "198.51.100.7".into(),
        dst: "192.168.0.2".into(),
        dport: 30053,
        ..Default::default()
    };
    let report = crate::testing::trace_mode(&world, &request, ProxyMode::Iptables);
    let steps: Vec<(&str, &str)> = report
        .outcomes
        .iter()
        .flat_map(|o| o.steps.iter().map(|s| (s.chain.as_str(), s.effect.as_str())))
        .collect();
    assert!(!steps.iter().any(|(_, e)| e.contains("unknown chain")), "{report:#?}");
    assert!(steps.iter().any(|(c, _)| c.starts_with("KUBE-SVL-")), "{report:#?}");
    assert!(steps.iter().any(|(c, _)| *c == "KUBE-MARK-DROP"), "{report:#?}");
    // internalTrafficPolicy: Local, the only endpoint remote: honoured, the ClusterIP drops;
    // ignored (gate off in 1.24/1.25), it reaches 10.0.0.8 through the cluster chain.
    for (version, gates, honoured) in [
        ("1.24", "{}", true),
        ("1.24", "{ServiceInternalTrafficPolicy: false}", false),
        ("1.25", "{ServiceInternalTrafficPolicy: false}", false),
        ("1.26", "{ServiceInternalTrafficPolicy: true}", true),
        ("1.37", "{}", true),
    ] {
        let text = render(version, gates);
        let itp: Vec<&str> = text.lines().filter(|l| l.contains("default/itp:p80")).collect();
        assert_eq!(
            itp.iter().any(|l| l.contains("has no local endpoints")),
            honoured,
            "{version} {gates}: {itp:?}"
        );
        assert_eq!(
            itp.iter().any(|l| l.contains("-j DNAT --to-destination 10.0.0.8:80")),
            !honoured,
            "{version} {gates}: {itp:?}"
        );
    }
}

/// Two Node documents of one name: kube-proxy's Node informer keeps the last version of an
/// object (client-go's store is keyed by name), so the later document's addresses and labels
/// are what kube-proxy reads; the Node keeps its place as the first Node of the scenario.
#[test]
fn a_later_node_document_replaces_the_earlier() {
    let yaml = "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nserviceClusterIPRanges: [172.30.0.0/16]\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a, labels: {topology.kubernetes.io/zone: z1}}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}]}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-b}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.3}]}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a, labels: {topology.kubernetes.io/zone: z2}}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.9}]}\n";
    let (world, report) =
        crate::evaluate(&[Input::new("n.yaml", yaml)], &crate::CheckOptions::default());
    assert!(!report.has_errors(), "{:?}", report.diagnostics);
    let names: Vec<&str> = world.nodes.iter().map(|n| n.value.metadata.name.as_str()).collect();
    assert_eq!(names, ["node-a", "node-b"]);
    let config =
        ProxyConfig::from_world(&world, Some(IpFamily::V4), None, ProxyMode::Nftables).unwrap();
    assert_eq!(config.node_name, "node-a");
    assert_eq!(config.node_ip, Some("192.168.0.9".parse().unwrap()));
    assert_eq!(
        config.node_labels.get("topology.kubernetes.io/zone").map(String::as_str),
        Some("z2")
    );
}

/// `svclab check` on a KubeProxyConfiguration: its `(severity reason field line: message)`
/// diagnostics at a release.
fn check_kube_proxy(version: &str, kpc: &str) -> String {
    let yaml = format!(
        "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"{version}\"\n---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n{kpc}\n"
    );
    let report = crate::check(&[Input::new("kp.yaml", yaml)], &crate::CheckOptions::default());
    report
        .diagnostics
        .iter()
        .map(|d| {
            let line = d.source.as_ref().map_or(0, |s| s.line);
            format!("{:?} {} line {line}: {}", d.severity, d.field, d.message)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// pkg/proxy/apis/config/validation/validation.go `Validate` as `svclab check` reports it: one
/// error per field error, on the field as the document writes it, in `Validate`'s order, with
/// the release's path and value format (proxy/release.rs `Validate*` rows): 1.30 checks the
/// iptables sync periods in their block, `portRange`, the `clusterCIDR` string; 1.37 the
/// sync periods at the top, the clusterCIDRs list, and prints durations as JSON.
#[test]
fn kube_proxy_validation_as_check_errors() {
    let kpc = "bindAddress: not-an-ip\nconfigSyncPeriod: -1s\nportRange: 2000-300\noomScoreAdj: 2000\nconntrack: {maxPerCore: -1, udpTimeout: -1s}\niptables: {masqueradeBit: 32, syncPeriod: -30s}\nclusterCIDR: 10.244.0.0/16,bogus\ndetectLocalMode: BridgeInterface\nshowHiddenMetricsForVersion: \"1.20\"\nlogging: {format: yaml}";
    expect_test::expect![[r#"
        Error iptables.masqueradeBit line 12: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.KubeProxyIPTablesConfiguration.MasqueradeBit: Invalid value: 32: must be within the range [0, 31]
        Error iptables.syncPeriod line 12: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.KubeProxyIPTablesConfiguration.SyncPeriod: Invalid value: v1.Duration{Duration:-30000000000}: must be greater than 0
        Error iptables.syncPeriod line 12: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.KubeProxyIPTablesConfiguration.SyncPeriod: Invalid value: v1.Duration{Duration:1000000000}: must be greater than or equal to KubeProxyConfiguration.KubeProxyIPTablesConfiguration.MinSyncPeriod
        Error conntrack.maxPerCore line 11: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.KubeProxyConntrackConfiguration.MaxPerCore: Invalid value: -1: must be greater than or equal to 0
        Error conntrack.udpTimeout line 11: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.KubeProxyConntrackConfiguration.UDPTimeout: Invalid value: v1.Duration{Duration:-1000000000}: must be greater than or equal to 0
        Error oomScoreAdj line 10: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.OOMScoreAdj: Invalid value: 2000: must be within the range [-1000, 1000]
        Error configSyncPeriod line 8: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.ConfigSyncPeriod: Invalid value: v1.Duration{Duration:-1000000000}: must be greater than 0
        Error bindAddress line 7: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.BindAddress: Invalid value: "not-an-ip": not a valid textual representation of an IP address
        Error clusterCIDR line 13: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.ClusterCIDR: Invalid value: "10.244.0.0/16,bogus": must be a valid DualStack CIDR (e.g. 10.100.0.0/16,fde4:8dba:82e1::/48)
        Error portRange line 9: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.PortRange: Invalid value: "2000-300": must be a valid port range (e.g. 300-2000)
        Error showHiddenMetricsForVersion line 15: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.ShowHiddenMetricsForVersion: Invalid value: "1.20": --show-hidden-metrics-for-version must be omitted or have the value '1.29'. Only the previous minor version is allowed
        Error detectLocal.bridgeInterface line 5: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.InterfaceName: Invalid value: "": must not be empty
        Error logging.format line 16: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.logging.format: Invalid value: "yaml": Unsupported log format"#]].assert_eq(&check_kube_proxy("1.30", kpc));
    expect_test::expect![[r#"
        Error iptables.masqueradeBit line 12: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.KubeProxyIPTablesConfiguration.MasqueradeBit: Invalid value: 32: must be within the range [0, 31]
        Error conntrack.maxPerCore line 11: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.KubeProxyLinuxConfiguration.KubeProxyConntrackConfiguration.MaxPerCore: Invalid value: -1: must be greater than or equal to 0
        Error conntrack.udpTimeout line 11: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.KubeProxyLinuxConfiguration.KubeProxyConntrackConfiguration.UDPTimeout: Invalid value: "-1s": must be greater than or equal to 0
        Error oomScoreAdj line 10: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.KubeProxyLinuxConfiguration.OOMScoreAdj: Invalid value: 2000: must be within the range [-1000, 1000]
        Error configSyncPeriod line 8: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.ConfigSyncPeriod: Invalid value: "-1s": must be greater than 0
        Error iptables.syncPeriod line 12: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.SyncPeriod: Invalid value: "-30s": must be greater than 0
        Error iptables.syncPeriod line 12: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.SyncPeriod: Invalid value: "1s": must be greater than or equal to KubeProxyConfiguration.MinSyncPeriod
        Error bindAddress line 7: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.BindAddress: Invalid value: "not-an-ip": not a valid textual representation of an IP address
        Error showHiddenMetricsForVersion line 15: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.ShowHiddenMetricsForVersion: Invalid value: "1.20": invalid showHiddenMetricsForVersion: showHiddenMetricsForVersion: Invalid value: "1.20": must be omitted or have the value '1.36'; only the previous minor version is allowed
        Error detectLocal.bridgeInterface line 5: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.DetectLocalConfiguration.InterfaceName: Invalid value: "": must not be empty
        Error logging.format line 16: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.logging.format: Invalid value: "yaml": Unsupported log format"#]].assert_eq(&check_kube_proxy("1.37", kpc));
}

/// The ipvs block is validated only for `mode: ipvs` (the oracle never runs that mode): its
/// timeouts, the excluded CIDRs, and until 1.26 the scheduler's name (`%v` of the slice of
/// names); from 1.37 `mode: ipvs` needs kube-proxy's KubeProxyIPVS gate. A detect-local mode
/// kube-proxy does not know stops 1.24 to 1.27 after validation (`getDetectLocalMode`).
#[test]
fn ipvs_block_and_detect_local_mode_by_release() {
    let ipvs =
        "mode: ipvs\nipvs: {scheduler: bogus, tcpTimeout: -5s, excludeCIDRs: [10.0.0.0/8, nope]}";
    expect_test::expect![[r#"
        Error ipvs.tcpTimeout line 8: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.KubeProxyIPVSConfiguration.TCPTimeout: Invalid value: v1.Duration{Duration:-5000000000}: must be greater than or equal to 0
        Error ipvs.scheduler line 8: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.KubeProxyIPVSConfiguration.Scheduler.Scheduler: Invalid value: "bogus": must be in [rr wrr lc wlc lblc lblcr sh dh sed nq ], blank means the default algorithm method (currently rr)
        Error ipvs.excludeCIDRs[1] line 8: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.KubeProxyIPVSConfiguration.ExcludeCidrs[1]: Invalid value: "nope": must be a valid CIDR"#]].assert_eq(&check_kube_proxy("1.26", ipvs));
    expect_test::expect![[r#"
        Error ipvs.tcpTimeout line 8: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.KubeProxyIPVSConfiguration.TCPTimeout: Invalid value: v1.Duration{Duration:-5000000000}: must be greater than or equal to 0
        Error ipvs.excludeCIDRs[1] line 8: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.KubeProxyIPVSConfiguration.ExcludeCidrs[1]: Invalid value: "nope": must be a valid CIDR"#]].assert_eq(&check_kube_proxy("1.27", ipvs));
    expect_test::expect![[r#"Error mode line 7: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.Mode.ProxyMode: Invalid value: "ipvs": must be iptables, nftables or blank (blank means the best-available proxy [currently iptables])"#]]
        .assert_eq(&check_kube_proxy("1.37", "mode: ipvs\nfeatureGates: {KubeProxyIPVS: false}"));
    expect_test::expect!["Error detectLocalMode line 7: kube-proxy refuses to start: cannot determine detect-local-mode: unknown detect-local-mode: Bogus"].assert_eq(&check_kube_proxy("1.27", "detectLocalMode: Bogus"));
    expect_test::expect![[r#"Error detectLocalMode line 7: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.DetectLocalMode: Unsupported value: "Bogus": supported values: "ClusterCIDR", "NodeCIDR", "BridgeInterface", "InterfaceNamePrefix", """#]].assert_eq(&check_kube_proxy("1.28", "detectLocalMode: Bogus"));
    expect_test::expect![[r#"Error showHiddenMetricsForVersion line 7: kube-proxy refuses to start: failed validate: KubeProxyConfiguration.ShowHiddenMetricsForVersion: Invalid value: "1.20": invalid showHiddenMetricsForVersion: showHiddenMetricsForVersion: Invalid value: "1.20": must be omitted or have the value '1.35'; only the previous minor version is allowed"#]]
        .assert_eq(&check_kube_proxy("1.36", "showHiddenMetricsForVersion: \"1.20\""));
}
