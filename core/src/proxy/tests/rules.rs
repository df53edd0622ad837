//! The rules themselves: hashes, marks, probabilities, families, the configuration knobs that change them, endpoint sources and the figures.

use super::*;

#[test]
fn hashes_match_kube_proxy() {
    assert_eq!(iptables::hash16(&["ns1/svc1:p80", "tcp"]), "XPGD46QRK7WJZT7O");
    assert_eq!(iptables::hash16(&["ns1/svc1", "tcp", "10.0.1.5:80"]), "EQCHZ7S2PJ72OHAY");
    assert_eq!(
        nftables::hashed_base("ns5/svc5/tcp/p80__10.180.0.3/80"),
        "GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80"
    );
    let long = "x".repeat(300);
    let base = nftables::hashed_base(&long);
    assert_eq!(base.len(), 240);
    assert!(base.ends_with("..."));
}

#[test]
fn mark_is_go_formatted() {
    assert_eq!(mark_string(14), "0x00004000");
    assert_eq!(mark_string(0), "0x00000001");
    let kpc =
        KubeProxyConfiguration { masquerade_bit: Some(15), ..KubeProxyConfiguration::default() };
    let config = ProxyConfig::from_objects(
        IpFamily::V4,
        ProxyMode::Iptables,
        Some(&kpc),
        &[],
        None,
        &crate::profile::HostFacts::default(),
        &[],
    )
    .unwrap();
    assert_eq!(config.masquerade_mark, "0x00008000");
}

#[test]
fn no_endpoints_rejects() {
    check(
        SVC,
        ProxyMode::Iptables,
        none,
        &[
            "-A KUBE-SERVICES -m comment --comment \"ns1/svc1:p80 has no endpoints\" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j REJECT",
        ],
        &["KUBE-SVC-"],
    );
    check(
        SVC,
        ProxyMode::Nftables,
        none,
        &["comment \"ns1/svc1:p80\" : goto reject-chain"],
        &["service-ULMVA6XW"],
    );
}

#[test]
fn probabilities_follow_byte_order_of_endpoints() {
    let yaml =
        format!("{SVC}{}", slice(&[("10.0.1.1", "a"), ("10.0.1.11", "b"), ("10.0.1.2", "c")]));
    let r = check(
        &yaml,
        ProxyMode::Iptables,
        none,
        &["--probability 0.3333333333", "--probability 0.5000000000"],
        &[],
    );
    // Byte-wise endpoint order: 10.0.1.11:80 sorts before 10.0.1.1:80.
    assert!(r.text.find("-> 10.0.1.11:80").unwrap() < r.text.find("-> 10.0.1.1:80").unwrap());
    check(
        &yaml,
        ProxyMode::Nftables,
        none,
        &["numgen random mod 3 vmap { 0 : goto endpoint-"],
        &[],
    );
}

#[test]
fn leading_zeros_are_canonicalised_everywhere() {
    let yaml = format!(
        "{}{}",
        SVC.replace("172.30.0.41", "172.30.0.041"),
        slice(&[("10.180.00.001", "a")])
    );
    check(
        &yaml,
        ProxyMode::Iptables,
        none,
        &["-d 172.30.0.41 ", "--to-destination 10.180.0.1:80", "-s 10.180.0.1 "],
        &["0.041", "180.00"],
    );
}

#[test]
fn ipv6_payload() {
    let yaml = "apiVersion: v1\nkind: Service\nmetadata: {namespace: ns1, name: svc1}\nspec:\n  clusterIPs: [172.30.0.41, 'fd00::41']\n  ports: [{name: p80, port: 80, protocol: TCP}]\n"
        .to_owned()
        + &slice(&[("fd00:10::1", "test-node")])
        + &slice(&[("10.0.0.9", "x")]);
    let v6 = |c: &mut ProxyConfig| {
        c.family = IpFamily::V6;
        c.node_ip = Some("2001:db8::1".parse().unwrap());
        c.host_addresses = vec!["::1".parse().unwrap(), "2001:db8::1".parse().unwrap()];
        c.detect_local = DetectLocal::Cidr("fd00:10::/64".parse().unwrap());
    };
    check(
        &yaml,
        ProxyMode::Iptables,
        v6,
        &[
            "-d fd00::41 --dport 80",
            "--to-destination [fd00:10::1]:80",
            "-m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS",
            "! -s fd00:10::/64",
        ],
        &["KUBE-FIREWALL", "172.30.0.41", "10.0.0.9"],
    );
    check(
        &yaml,
        ProxyMode::Nftables,
        v6,
        &[
            "add table ip6 kube-proxy",
            "type ipv6_addr",
            "ip6 daddr fd00::41 ip6 saddr != fd00:10::/64",
            "dnat to [fd00:10::1]:80",
            "__fd00.10..1/80",
        ],
        &["172.30.0.41"],
    );
}

#[test]
fn large_cluster_mode_drops_endpoint_comments() {
    let many: Vec<(String, &str)> =
        (0..1001).map(|i| (format!("10.1.{}.{}", i / 250, i % 250 + 1), "node-n")).collect();
    let refs: Vec<(&str, &str)> = many.iter().map(|(a, b)| (a.as_str(), *b)).collect();
    let yaml = format!("{SVC}{}", slice(&refs));
    let r = check(
        &yaml,
        ProxyMode::Iptables,
        none,
        &["-m tcp -p tcp -j DNAT --to-destination 10.1.0.1:80", "\"ns1/svc1:p80 cluster IP\""],
        &["-> 10.1.0.1:80"],
    );
    assert_eq!(r.stats.endpoints, 1001);
    let small = check(
        &format!("{SVC}{}", slice(&refs[..1000])),
        ProxyMode::Iptables,
        none,
        &["-> 10.1.0.1:80"],
        &[],
    );
    assert_eq!(small.stats.endpoints, 1000);
}

#[test]
fn node_port_addresses_and_localhost_node_ports() {
    let yaml = format!("{}{}", lb(""), slice(&[("10.0.0.5", "test-node")]));
    let last = "-m comment --comment \"kubernetes service nodeports; NOTE: this must be the last rule in this chain\"";
    check(
        &yaml,
        ProxyMode::Iptables,
        |c| c.node_port_addresses = vec!["192.168.0.0/24".into()],
        &[&format!("{last} -d 192.168.0.2 -j KUBE-NODEPORTS")],
        &["KUBE-FIREWALL", "-d 127.0.0.1 -j KUBE-NODEPORTS", "--dst-type LOCAL -j KUBE-NODEPORTS"],
    );
    check(
        &yaml,
        ProxyMode::Iptables,
        |c| c.node_port_addresses = vec!["127.0.0.0/8".into(), "192.168.0.0/24".into()],
        &[&format!("{last} -d 127.0.0.1 -j KUBE-NODEPORTS"), "KUBE-FIREWALL -m comment"],
        &[],
    );
    check(
        &yaml,
        ProxyMode::Iptables,
        |c| c.localhost_node_ports = false,
        &[&format!("{last} -m addrtype --dst-type LOCAL ! -d 127.0.0.0/8 -j KUBE-NODEPORTS")],
        &["KUBE-FIREWALL", "-d 127.0.0.0/8 --dport 30080"],
    );
    check(
        &yaml,
        ProxyMode::Iptables,
        |c| c.nfacct_localhost = true,
        &[
            "-d 127.0.0.0/8 --dport 30080 -m nfacct --nfacct-name localhost_nps_accepted_pkts -j KUBE-EXT-",
        ],
        &[],
    );
    // nftables defaults nodePortAddresses to the node IP.
    check(
        &yaml,
        ProxyMode::Nftables,
        none,
        &["add element ip kube-proxy nodeport-ips { 192.168.0.2 }"],
        &["fib daddr type local"],
    );
    check(
        &yaml,
        ProxyMode::Nftables,
        |c| c.node_port_addresses = vec!["0.0.0.0/0".into()],
        &[
            "fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports",
        ],
        &["nodeport-ips"],
    );
}

#[test]
fn masquerade_and_detector_modes() {
    let yaml = format!(
        "{}{}",
        lb("  externalTrafficPolicy: Local\n"),
        slice(&[("10.0.0.5", "test-node")])
    );
    check(
        &yaml,
        ProxyMode::Iptables,
        |c| c.masquerade_all = true,
        &["--dport 80 -j KUBE-MARK-MASQ"],
        &["! -s 10.0.0.0/8"],
    );
    check(
        &yaml,
        ProxyMode::Iptables,
        |c| c.detect_local = DetectLocal::None,
        &["masquerade LOCAL traffic"],
        &[
            "pod traffic for",
            "cluster IP\" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-MARK-MASQ",
        ],
    );
    check(
        &yaml,
        ProxyMode::Iptables,
        |c| c.detect_local = DetectLocal::BridgeInterface("br0".into()),
        &["--dport 80 ! -i br0 -j KUBE-MARK-MASQ", "external destinations\" -i br0 -j KUBE-SVC-"],
        &[],
    );
    check(
        &yaml,
        ProxyMode::Nftables,
        |c| c.detect_local = DetectLocal::InterfaceNamePrefix("veth".into()),
        &["iifname != veth* jump mark-for-masquerade", "iifname veth* goto service-"],
        &[],
    );
    check(
        &yaml,
        ProxyMode::Iptables,
        |c| {
            c.random_fully = true;
            c.tcp_be_liberal = true;
        },
        &["-j MASQUERADE --random-fully"],
        &["--ctstate INVALID"],
    );
}

#[test]
fn load_balancer_firewall_and_ip_mode_proxy() {
    let yaml = format!(
        "{}{}",
        lb("  loadBalancerSourceRanges: [' 192.168.0.0/16', 203.0.113.0/25]\n"),
        slice(&[("10.0.0.5", "node-n")])
    );
    check(
        &yaml,
        ProxyMode::Iptables,
        none,
        &[
            "\"ns1/svc1:p80 loadbalancer IP\" -s 192.168.0.0/16 -j KUBE-EXT-",
            "\"ns1/svc1:p80 loadbalancer IP\" -s 203.0.113.0/25 -j KUBE-EXT-",
            // The node's IP is inside a range, so the VIP itself is allowed too.
            "\"ns1/svc1:p80 loadbalancer IP\" -s 5.6.7.8 -j KUBE-EXT-",
            "-d 5.6.7.8 --dport 80 -j DROP",
        ],
        &["5.6.7.9"],
    );
    check(
        &yaml,
        ProxyMode::Nftables,
        none,
        &[
            "ip saddr != { 192.168.0.0/16 , 203.0.113.0/25 , 5.6.7.8 } drop",
            "firewall-ips { 5.6.7.8 . tcp . 80 : goto firewall-",
        ],
        &["5.6.7.9"],
    );
}

#[test]
fn local_policies_and_figures() {
    let etp = format!(
        "{}{}",
        lb("  externalTrafficPolicy: Local\n  healthCheckNodePort: 31000\n"),
        slice(&[("10.0.0.5", "other")])
    );
    let r = check(
        &etp,
        ProxyMode::Iptables,
        none,
        &[
            "\"ns1/svc1:p80 health check node port\" -m tcp -p tcp --dport 31000 -j ACCEPT",
            "\"ns1/svc1:p80 has no local endpoints\" -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 30080 -j DROP",
        ],
        &["KUBE-SVL-"],
    );
    assert_eq!((r.stats.no_local_endpoints_external, r.stats.no_local_endpoints_internal), (1, 0));
    let itp = format!(
        "{}{}",
        SVC.replace("  ports:", "  internalTrafficPolicy: Local\n  ports:"),
        slice(&[("10.0.0.5", "other")])
    );
    let r = check(
        &itp,
        ProxyMode::Iptables,
        none,
        &[
            "\"ns1/svc1:p80 has no local endpoints\" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j DROP",
        ],
        &["KUBE-SEP-"],
    );
    assert_eq!(r.stats.no_local_endpoints_internal, 1);
    check(
        &itp,
        ProxyMode::Nftables,
        none,
        &["172.30.0.41 . tcp . 80 comment \"ns1/svc1:p80\" : drop"],
        &[],
    );
}

#[test]
fn endpoint_sources_duplicates_and_skipped_services() {
    // A local copy of a duplicate wins: the endpoint counts as local for iTP Local.
    let itp = SVC.replace("  ports:", "  internalTrafficPolicy: Local\n  ports:");
    let dup = format!(
        "{itp}{}{}",
        slice(&[("10.0.0.5", "other")]),
        slice(&[("10.0.0.5", "test-node"), ("10.0.0.6", "x")])
    );
    check(
        &dup,
        ProxyMode::Iptables,
        none,
        &["KUBE-SVL-", "-> 10.0.0.5:80\" -j KUBE-SEP-"],
        &["10.0.0.6"],
    );
    // v1 Endpoints are mirrored (notReadyAddresses are not ready).
    let legacy = format!(
        "{SVC}---\napiVersion: v1\nkind: Endpoints\nmetadata: {{namespace: ns1, name: svc1}}\nsubsets: [{{addresses: [{{ip: 10.0.0.7}}], notReadyAddresses: [{{ip: 10.0.0.8}}], ports: [{{name: p80, port: 8080}}]}}]\n"
    );
    check(&legacy, ProxyMode::Iptables, none, &["--to-destination 10.0.0.7:8080"], &["10.0.0.8"]);
    let skipped = "apiVersion: v1\nkind: Service\nmetadata: {namespace: ns1, name: h}\nspec:\n  clusterIP: None\n  ports: [{port: 80}]\n---\napiVersion: v1\nkind: Service\nmetadata: {namespace: ns1, name: e}\nspec:\n  type: ExternalName\n  externalName: example.com\n  clusterIP: 172.30.0.50\n  ports: [{port: 80}]\n";
    let r = check(skipped, ProxyMode::Iptables, none, &[], &["ns1/h", "ns1/e"]);
    assert_eq!(r.stats.service_ports, 0);
}

#[test]
fn terminating_fallback_and_node_hints() {
    let yaml = format!(
        "{SVC}---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{namespace: ns1, name: s, labels: {{kubernetes.io/service-name: svc1}}}}\naddressType: IPv4\nendpoints:\n- {{addresses: [10.0.0.1], conditions: {{ready: false, serving: true, terminating: true}}, hints: {{forNodes: [{{name: test-node}}]}}}}\n- {{addresses: [10.0.0.2], conditions: {{ready: false, serving: false, terminating: true}}}}\nports: [{{name: p80, port: 80, protocol: TCP}}]\n"
    );
    check(&yaml, ProxyMode::Iptables, none, &["--to-destination 10.0.0.1:80"], &["10.0.0.2"]);
    let hinted = format!(
        "{SVC}---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{namespace: ns1, name: s, labels: {{kubernetes.io/service-name: svc1}}}}\naddressType: IPv4\nendpoints:\n- {{addresses: [10.0.0.1], hints: {{forNodes: [{{name: test-node}}], forZones: [{{name: a}}]}}}}\n- {{addresses: [10.0.0.2], hints: {{forNodes: [{{name: other}}], forZones: [{{name: a}}]}}}}\nports: [{{name: p80, port: 80, protocol: TCP}}]\n"
    );
    check(
        &hinted,
        ProxyMode::Iptables,
        |c| c.prefer_same_node = true,
        &["10.0.0.1:80"],
        &["10.0.0.2:80"],
    );
    check(&hinted, ProxyMode::Iptables, none, &["10.0.0.1:80", "10.0.0.2:80"], &[]);
}

#[test]
fn standalone_adds_builtin_jumps() {
    let scenario = parse(&[Input::new("t.yaml", SVC)]);
    let Some(Object::Service(s)) = scenario.objects.first() else { panic!("no service") };
    let config = ProxyConfig::new(IpFamily::V4);
    let text = render_objects(&[&s.value], &[], &[], &config, ProxyMode::Iptables, true).text;
    for want in [
        ":INPUT ACCEPT [0:0]",
        ":PREROUTING ACCEPT [0:0]",
        "-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES",
        "-A POSTROUTING -m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING",
        "-A INPUT -j KUBE-FIREWALL",
    ] {
        assert!(text.contains(want), "missing {want:?}");
    }
    // Prepending makes the last-listed jump the first rule of its chain.
    let input: Vec<&str> = text.lines().filter(|l| l.starts_with("-A INPUT ")).collect();
    assert_eq!(input[0], "-A INPUT -j KUBE-FIREWALL");
    let plain = render_objects(&[&s.value], &[], &[], &config, ProxyMode::Iptables, false).text;
    assert!(!plain.contains("PREROUTING"));
    // pkg/proxy/iptables/proxier.go `syncProxyRules` (`iptablesKubeletJumpChains`) and kubelet's
    // `syncIPTablesRules`: the KUBE-FIREWALL jumps exist without localhost NodePorts too (here
    // nodePortAddresses leave out 127.0.0.1), into a chain the payload leaves empty.
    let mut no_localhost = config.clone();
    no_localhost.node_port_addresses = vec!["192.168.0.0/24".into()];
    let text = render_objects(&[&s.value], &[], &[], &no_localhost, ProxyMode::Iptables, true).text;
    assert!(!text.contains("block incoming localnet connections"), "{text}");
    let filter = text.split("*nat").next().unwrap_or_default();
    for want in
        [":KUBE-FIREWALL - [0:0]", "-A INPUT -j KUBE-FIREWALL", "-A OUTPUT -j KUBE-FIREWALL"]
    {
        assert!(filter.contains(want), "missing {want:?} in {filter}");
    }
    let order: Vec<&str> = filter.lines().filter(|l| l.starts_with(":KUBE-")).collect();
    assert_eq!(
        order,
        [
            ":KUBE-NODEPORTS - [0:0]",
            ":KUBE-SERVICES - [0:0]",
            ":KUBE-EXTERNAL-SERVICES - [0:0]",
            ":KUBE-FIREWALL - [0:0]",
            ":KUBE-FORWARD - [0:0]",
            ":KUBE-PROXY-FIREWALL - [0:0]",
        ]
    );
}

#[test]
fn fast_ipv4_parse_agrees_with_sloppy_parse() {
    for text in [
        "10.0.0.1",
        "010.000.000.001",
        "255.255.255.255",
        "256.0.0.1",
        "1.2.3",
        "1.2.3.4.5",
        "1..2.3",
        "1.2.3.",
        "0001.2.3.4",
        "a.b.c.d",
        "",
    ] {
        let fast = model::dotted_quad_for_tests(text);
        let slow = crate::net::parse_ip_sloppy(text).filter(|ip| ip.is_ipv4());
        assert_eq!(fast, slow, "{text}");
    }
}

/// pkg/proxy/nftables/proxier.go `nftElementStorage.ensureElem` (#126013, kube-proxy 1.32 to
/// the newest):
/// one element per key. A two-port Service writes its ClusterIP into `cluster-ips` once; two
/// Services sharing an external IP and port replace the key (delete, then add) instead of
/// adding it twice, which the kernel refuses with "File exists"; equal values (two ports'
/// no-endpoint verdicts on one key cannot happen, but two Services without endpoints on one
/// external IP and port can) are written once with the first comment.
#[test]
fn map_elements_are_written_once_per_key() {
    let shared = |name: &str, cip: &str| {
        format!(
            "---\napiVersion: v1\nkind: Service\nmetadata: {{namespace: ns1, name: {name}}}\nspec:\n  clusterIP: {cip}\n  externalIPs: [\"1.2.3.4\"]\n  ports: [{{name: p80, port: 80, protocol: TCP}}, {{name: p81, port: 81, protocol: TCP}}]\n"
        )
    };
    let endpoints = |name: &str, ip: &str| {
        format!(
            "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{namespace: ns1, name: {name}-1, labels: {{kubernetes.io/service-name: {name}}}}}\naddressType: IPv4\nendpoints: [{{addresses: [\"{ip}\"], nodeName: test-node}}]\nports: [{{name: p80, port: 80, protocol: TCP}}, {{name: p81, port: 81, protocol: TCP}}]\n"
        )
    };
    let yaml = [
        shared("a", "172.30.0.41"),
        endpoints("a", "10.180.0.1"),
        shared("b", "172.30.0.42"),
        endpoints("b", "10.180.0.2"),
    ]
    .concat();
    let text = check(&yaml, ProxyMode::Nftables, none, &[], &[]).text;
    let count = |needle: &str| text.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(count("add element ip kube-proxy cluster-ips { 172.30.0.41 }"), 1, "{text}");
    assert_eq!(count("add element ip kube-proxy cluster-ips { 172.30.0.42 }"), 1, "{text}");
    // Service a writes the key first, Service b replaces it: the last writer wins.
    for port in [80, 81] {
        let key = format!("service-ips {{ 1.2.3.4 . tcp . {port} ");
        assert_eq!(count(&format!("add element ip kube-proxy {key}")), 2, "{text}");
        assert_eq!(
            count(&format!(
                "delete element ip kube-proxy service-ips {{ 1.2.3.4 . tcp . {port} }}"
            )),
            1,
            "{text}"
        );
        let last = text.lines().rfind(|l| l.contains(&key)).unwrap_or_default();
        assert!(last.ends_with(&format!("-ns1/b/tcp/p{port} }}")), "{last}");
    }

    // Without endpoints both write the same verdict: one element, with a's comment.
    let text = check(
        &[shared("a", "172.30.0.41"), shared("b", "172.30.0.42")].concat(),
        ProxyMode::Nftables,
        none,
        &[],
        &["delete element"],
    )
    .text;
    let line = "add element ip kube-proxy no-endpoint-services { 1.2.3.4 . tcp . 80 comment \"ns1/a:p80\" : goto reject-chain }";
    assert_eq!(text.lines().filter(|l| *l == line).count(), 1, "{text}");
    assert!(!text.contains("1.2.3.4 . tcp . 80 comment \"ns1/b:p80\""), "{text}");
}

/// cmd/kube-proxy/app/server.go `ProxyServer.Run` (1.24 to the newest): Services and
/// EndpointSlices labelled `service.kubernetes.io/service-proxy-name` or
/// `service.kubernetes.io/headless` (any value) are not listed, so they program nothing.
#[test]
fn labelled_objects_are_ignored() {
    let labelled = |label: &str| {
        SVC.replace("name: svc1}", &format!("name: svc1, labels: {{{label}}}}}"))
            + &slice(&[("10.0.0.5", "test-node")])
    };
    for label in
        ["service.kubernetes.io/service-proxy-name: other", "service.kubernetes.io/headless: \"\""]
    {
        let r =
            check(&labelled(label), ProxyMode::Nftables, none, &[], &["172.30.0.41", "10.0.0.5"]);
        assert_eq!(r.stats.service_ports, 0);
        // A labelled slice is ignored too: the Service has no endpoints and rejects.
        let yaml = SVC.to_owned()
            + &slice(&[("10.0.0.5", "test-node")]).replace(
                "kubernetes.io/service-name: svc1}",
                &format!("kubernetes.io/service-name: svc1, {label}}}"),
            );
        check(
            &yaml,
            ProxyMode::Iptables,
            none,
            &["has no endpoints\" -m tcp -p tcp -d 172.30.0.41"],
            &["10.0.0.5"],
        );
    }
}

/// The report's rulesets rendered in steps (`report_rules_pausing`, the playground's) are the
/// ones rendered at once, byte for byte; a pause that answers `Break` abandons them there.
#[test]
fn rulesets_in_steps_are_the_rulesets_at_once() {
    let text =
        svclab_scenario_gen::generate(svclab_scenario_gen::Shape { services: 12, slices: true });
    let (world, _) = crate::evaluate(
        &[crate::Input::new("cluster.yaml", text)],
        &crate::CheckOptions::default(),
    );
    let at_once = crate::report_rules(&world).expect("rulesets");
    assert!(!at_once.iptables.is_empty() && !at_once.nftables.is_empty());
    // Runs the steps, answering `Break` at pause `stop` (from 1); how many pauses came.
    let run = |stop: usize| {
        let mut pauses = 0;
        let steps = crate::report_rules_pausing(&world, || {
            pauses += 1;
            std::future::ready(if pauses == stop {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            })
        });
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        let std::task::Poll::Ready(flow) = std::pin::pin!(steps).poll(&mut context) else {
            panic!("its pauses are ready");
        };
        (flow, pauses)
    };
    let (flow, pauses) = run(0);
    assert_eq!(flow, std::ops::ControlFlow::Continue(Some(at_once)));
    // The model, then in each mode every two of the 24 service ports (12 Services of two ports)
    // but the last two and the finish, then every 64 parts of the iptables payload's join.
    assert!(pauses > 1 + 2 * (24 / 2 - 1 + 2), "{pauses} pauses");
    for stop in 1..=pauses {
        assert_eq!(run(stop), (std::ops::ControlFlow::Break(()), stop), "abandoned at {stop}");
    }
}
