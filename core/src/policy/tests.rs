//! Policy rules, actions, settings errors and skipped inputs over whole scenarios.

use std::fmt::Write as _;

use expect_test::{Expect, expect};

use crate::manifest::Input;
use crate::policy::UserInfo;
use crate::{CheckOptions, check as run};

/// A release that still accepts leading zeros and IPv4-mapped addresses.
const PROFILE_1_32: &str =
    "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: '1.32'\n---\n";

/// A ServicePolicy document named `name` with `spec` (flow YAML).
fn policy(name: &str, spec: &str) -> String {
    format!(
        "apiVersion: svclab.dev/v1alpha1\nkind: ServicePolicy\nmetadata: {{name: {name}}}\nspec: {spec}\n---\n"
    )
}

/// A Service document (`spec` in flow YAML, `meta` extra metadata fields).
fn svc(name: &str, spec: &str) -> String {
    format!("apiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec: {spec}\n---\n")
}

/// Runs the scenario (the requester is `user` with `groups` when given) and prints every
/// diagnostic (severity, reason, message, line) and every Service outcome.
fn check(scenario: &str, user: Option<(&str, &[&str])>, expect: Expect) {
    let options = CheckOptions {
        user_info: user.map(|(username, groups)| UserInfo {
            username: username.to_owned(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        }),
        ..CheckOptions::default()
    };
    let report = run(&[Input::new("s.yaml", scenario)], &options);
    let mut out = String::new();
    for d in &report.diagnostics {
        let line = d.source.as_ref().map_or(0, |s| s.line);
        let severity = format!("{:?}", d.severity).to_lowercase();
        let _ = writeln!(out, "{severity} {} L{line}: {}", d.reason, d.message);
    }
    for s in &report.services {
        let _ = writeln!(out, "{}/{} {} {:?}", s.namespace, s.name, s.outcome, s.cluster_ips);
    }
    expect.assert_eq(&out);
}

#[test]
fn types_allowed_denies_other_types() {
    check(
        &format!(
            "{}{}{}",
            policy("p", "{types: {allowed: [ClusterIP, LoadBalancer]}}"),
            svc("np", "{type: NodePort, ports: [{port: 80}]}"),
            svc("ok", "{ports: [{port: 80}]}"),
        ),
        None,
        expect![[r#"
            error policy:types.allowed L9: spec.type: Unsupported value: "NodePort": supported values: "ClusterIP", "LoadBalancer" (types.allowed)
            default/np rejected ["10.101.39.219"]
            default/ok created ["10.103.224.41"]
        "#]],
    );
}

#[test]
fn external_ips_allowlist_compares_addresses() {
    // 192.0.2.010 is 192.0.2.10 (decimal), ::ffff:192.0.2.1 is 192.0.2.1, a bare IP is a /32;
    // 1.32 still accepts both spellings (StrictIPCIDRValidation is off).
    check(
        &format!(
            "{}{}{}{}{}",
            PROFILE_1_32,
            policy(
                "p",
                "{externalIPs: {mode: allowlist, allowedCIDRs: [192.0.2.0/24, 198.51.100.7]}}"
            ),
            svc("in", "{externalIPs: [192.0.2.010, 198.51.100.7], ports: [{port: 80}]}"),
            svc("mapped", "{externalIPs: ['::ffff:192.0.2.1'], ports: [{port: 80}]}"),
            svc("out", "{externalIPs: [203.0.113.9, 198.51.100.8], ports: [{port: 80}]}"),
        ),
        None,
        expect![[r#"
            warning Warning L13: spec.externalIPs[0]: IP address was accepted, but will be invalid in a future Kubernetes release: ParseAddr("192.0.2.010"): IPv4 field has octet with leading zero
            error policy:externalIPs.allowedCIDRs L23: spec.externalIPs[0]: Forbidden: "203.0.113.9" is outside the allowed ranges 192.0.2.0/24, 198.51.100.7 (externalIPs.allowedCIDRs)
            error policy:externalIPs.allowedCIDRs L23: spec.externalIPs[1]: Forbidden: "198.51.100.8" is outside the allowed ranges 192.0.2.0/24, 198.51.100.7 (externalIPs.allowedCIDRs)
            default/in created ["10.105.69.182"]
            default/mapped created ["10.105.240.179"]
            default/out rejected ["10.97.182.212"]
        "#]],
    );
}

#[test]
fn external_ips_forbid_and_forbid_new() {
    check(
        &format!(
            "{}{}{}{}",
            policy("p", "{externalIPs: {mode: forbidNew}}"),
            svc("a", "{externalIPs: [192.0.2.1], ports: [{port: 80}]}"),
            policy("q", "{externalIPs: {mode: forbid}, action: warn}"),
            svc("b", "{externalIPs: [192.0.2.2], ports: [{port: 80}]}"),
        ),
        None,
        expect![[r#"
            error policy:externalIPs.mode L9: spec.externalIPs[0]: Forbidden: "192.0.2.1" is not on the existing object; only external IPs already set may stay (externalIPs.mode)
            error policy:externalIPs.mode L19: spec.externalIPs[0]: Forbidden: "192.0.2.2" is not on the existing object; only external IPs already set may stay (externalIPs.mode)
            warning policy:externalIPs.mode L19: spec.externalIPs[0]: Forbidden: external IPs are not allowed (externalIPs.mode)
            default/a rejected ["10.101.39.219"]
            default/b rejected ["10.103.224.41"]
        "#]],
    );
}

#[test]
fn external_ips_forbid_new_keeps_existing_on_update() {
    let spec_old = "{externalIPs: [192.0.2.1], ports: [{port: 80}]}";
    let spec_new = "{externalIPs: [192.0.2.1, 192.0.2.2], ports: [{port: 80}]}";
    check(
        &format!(
            "{}{}{}",
            svc("a", spec_old),
            policy("p", "{externalIPs: {mode: forbidNew}}"),
            svc("a", spec_new),
        ),
        None,
        expect![[r#"
            warning Warning L4: spec.externalIPs is deprecated and may no longer be implemented in some clusters
            error policy:externalIPs.mode L14: spec.externalIPs[1]: Forbidden: "192.0.2.2" is not on the existing object; only external IPs already set may stay (externalIPs.mode)
            default/a created ["10.101.39.219"]
            default/a rejected ["10.101.39.219"]
        "#]],
    );
}

#[test]
fn external_ips_users_and_skipped_without_user() {
    let scenario = format!(
        "{}{}",
        policy("p", "{externalIPs: {allowedGroups: [net-admins]}}"),
        svc("a", "{externalIPs: [192.0.2.1], ports: [{port: 80}]}"),
    );
    check(
        &scenario,
        None,
        expect![[r#"
        warning Warning L9: spec.externalIPs is deprecated and may no longer be implemented in some clusters
        info policy:skipped L6: externalIPs.allowedGroups: skipped: needs userInfo
        default/a created ["10.101.39.219"]
    "#]],
    );
    check(
        &scenario,
        Some(("alice", &["dev"])),
        expect![[r#"
        error policy:externalIPs.allowedGroups L9: spec.externalIPs[0]: Forbidden: user "alice" may not set external IPs (externalIPs.allowedGroups)
        default/a rejected ["10.101.39.219"]
    "#]],
    );
    check(
        &scenario,
        Some(("bob", &["net-admins"])),
        expect![[r#"
        warning Warning L9: spec.externalIPs is deprecated and may no longer be implemented in some clusters
        default/a created ["10.101.39.219"]
    "#]],
    );
}

#[test]
fn node_ports_forbid_counts_load_balancers() {
    check(
        &format!(
            "{}{}{}{}",
            policy("p", "{nodePorts: {forbid: true}}"),
            svc("np", "{type: NodePort, ports: [{port: 80}]}"),
            svc(
                "lb",
                "{type: LoadBalancer, ports: [{name: http, port: 80}, {name: https, port: 443}]}"
            ),
            svc(
                "lb-no-ports",
                "{type: LoadBalancer, allocateLoadBalancerNodePorts: false, ports: [{port: 80}]}"
            ),
        ),
        None,
        expect![[r#"
            error policy:nodePorts.forbid L9: spec.ports[0].nodePort: Forbidden: node ports are not allowed (nodePorts.forbid)
            error policy:nodePorts.forbid L14: spec.ports[0].nodePort: Forbidden: a LoadBalancer Service allocates node ports; set allocateLoadBalancerNodePorts: false (nodePorts.forbid)
            error policy:nodePorts.forbid L14: spec.ports[1].nodePort: Forbidden: a LoadBalancer Service allocates node ports; set allocateLoadBalancerNodePorts: false (nodePorts.forbid)
            default/np rejected ["10.101.39.219"]
            default/lb rejected ["10.103.224.41"]
            default/lb-no-ports created ["10.105.1.23"]
        "#]],
    );
}

#[test]
fn node_ports_forbid_without_counting_load_balancers() {
    check(
        &format!(
            "{}{}",
            policy("p", "{nodePorts: {forbid: true, countLoadBalancerNodePorts: false}}"),
            svc("lb", "{type: LoadBalancer, ports: [{port: 80}]}"),
        ),
        None,
        expect![[r#"
            default/lb created ["10.101.39.219"]
        "#]],
    );
}

#[test]
fn node_ports_ranges_explicit_namespaces_and_reservations() {
    check(
        &format!(
            "{}{}{}{}",
            policy(
                "p",
                "{nodePorts: {allowedRanges: ['30000-31000'], explicit: forbid, reservations: [{port: 30443, namespace: ingress, name: nginx}], namespaceRanges: [{namespaces: ['team-a-*'], ranges: ['30100-30199']}]}, exemptions: {services: [{namespace: ingress, name: nginx}]}}"
            ),
            svc("explicit", "{type: NodePort, ports: [{port: 80, nodePort: 31500}]}"),
            svc("reserved", "{type: NodePort, ports: [{port: 443, nodePort: 30443}]}"),
            "apiVersion: v1\nkind: Service\nmetadata: {name: team, namespace: team-a-web}\nspec: {type: NodePort, ports: [{port: 80, nodePort: 30500}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: nginx, namespace: ingress}\nspec: {type: NodePort, ports: [{port: 443, nodePort: 30443}]}\n",
        ),
        None,
        expect![[r#"
            error policy:nodePorts.allowedRanges L9: spec.ports[0].nodePort: Invalid value: 31500: must lie in the allowed ranges 30000-31000 (nodePorts.allowedRanges)
            error policy:nodePorts.explicit L9: spec.ports[0].nodePort: Forbidden: explicit node ports are not allowed; leave nodePort unset (nodePorts.explicit)
            error policy:nodePorts.explicit L14: spec.ports[0].nodePort: Forbidden: explicit node ports are not allowed; leave nodePort unset (nodePorts.explicit)
            error policy:nodePorts.reservations L14: spec.ports[0].nodePort: Forbidden: 30443/TCP is reserved for ingress/nginx (nodePorts.reservations)
            error policy:nodePorts.explicit L19: spec.ports[0].nodePort: Forbidden: explicit node ports are not allowed; leave nodePort unset (nodePorts.explicit)
            error policy:nodePorts.namespaceRanges L19: spec.ports[0].nodePort: Invalid value: 30500: namespace "team-a-web" may only use node ports 30100-30199 (nodePorts.namespaceRanges)
            default/explicit rejected ["10.101.39.219"]
            default/reserved rejected ["10.103.224.41"]
            team-a-web/team rejected ["10.105.1.23"]
            ingress/nginx created ["10.107.124.56"]
        "#]],
    );
}

/// The static band of the profile's range, across releases and gates.
fn static_band_scenario(profile: &str) -> String {
    format!(
        "{profile}{}{}{}",
        policy(
            "p",
            "{clusterIP: {explicit: staticBandOnly}, nodePorts: {explicit: staticBandOnly}}"
        ),
        svc("in", "{type: NodePort, clusterIP: 10.96.0.10, ports: [{port: 53, nodePort: 30010}]}"),
        svc("out", "{type: NodePort, clusterIP: 10.96.40.7, ports: [{port: 53, nodePort: 31000}]}"),
    )
}

#[test]
fn static_band_newest() {
    check(
        &static_band_scenario(""),
        None,
        expect![[r#"
        error policy:nodePorts.explicit L14: spec.ports[0].nodePort: Invalid value: 31000: explicit node ports must lie in the static band 30000-30085 (nodePorts.explicit)
        error policy:clusterIP.explicit L14: spec.clusterIP: Invalid value: "10.96.40.7": explicit cluster IPs must lie in the static band 10.96.0.1-10.96.1.0 (clusterIP.explicit)
        default/in created ["10.96.0.10"]
        default/out rejected ["10.96.40.7"]
    "#]],
    );
}

#[test]
fn static_band_1_24_gate_off_is_a_settings_error() {
    let profile =
        "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: '1.24'\n---\n";
    check(
        &static_band_scenario(profile),
        None,
        expect![[r#"
        error FieldValueInvalid L8: spec.clusterIP.explicit: Invalid value: "staticBandOnly": Kubernetes 1.24 with ServiceIPStaticSubrange off has no static band for cluster IPs
        error FieldValueInvalid L8: spec.nodePorts.explicit: Invalid value: "staticBandOnly": Kubernetes 1.24 has no static band for node ports
        default/in created ["10.96.0.10"]
        default/out created ["10.96.40.7"]
    "#]],
    );
}

#[test]
fn static_band_1_24_gate_on() {
    // 1.24 has the ClusterIP band behind ServiceIPStaticSubrange, and no node port band.
    let profile = "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: '1.24'\nfeatureGates: {ServiceIPStaticSubrange: true}\n---\n";
    let scenario = format!(
        "{profile}{}{}{}",
        policy("p", "{clusterIP: {explicit: staticBandOnly}}"),
        svc("in", "{clusterIP: 10.96.0.10, ports: [{port: 53}]}"),
        svc("out", "{clusterIP: 10.96.40.7, ports: [{port: 53}]}"),
    );
    check(
        &scenario,
        None,
        expect![[r#"
        error policy:clusterIP.explicit L19: spec.clusterIP: Invalid value: "10.96.40.7": explicit cluster IPs must lie in the static band 10.96.0.1-10.96.1.0 (clusterIP.explicit)
        default/in created ["10.96.0.10"]
        default/out rejected ["10.96.40.7"]
    "#]],
    );
}

#[test]
fn cluster_ip_reservations_namespaces_and_headless() {
    check(
        &format!(
            "{}{}{}{}{}",
            policy(
                "p",
                "{clusterIP: {reservations: [{ip: 10.96.0.10, namespace: kube-system, name: kube-dns}], explicitNamespaces: [kube-system], namespaceCIDRs: [{namespaces: [kube-system], cidrs: [10.96.0.0/28]}], headless: forbid}}"
            ),
            svc("thief", "{clusterIP: 10.96.0.10, ports: [{port: 53}]}"),
            svc("headless", "{clusterIP: None, ports: [{port: 53}]}"),
            "apiVersion: v1\nkind: Service\nmetadata: {name: kube-dns, namespace: kube-system}\nspec: {clusterIP: 10.96.0.10, ports: [{port: 53}]}\n---\n",
            "apiVersion: v1\nkind: Service\nmetadata: {name: metrics, namespace: kube-system}\nspec: {clusterIP: 10.96.0.100, ports: [{port: 443}]}\n",
        ),
        None,
        expect![[r#"
            error policy:clusterIP.explicitNamespaces L9: spec.clusterIP: Forbidden: only namespaces kube-system may set cluster IPs (clusterIP.explicitNamespaces)
            error policy:clusterIP.namespaceCIDRs L9: spec.clusterIP: Forbidden: 10.96.0.10 belongs to namespaces kube-system (clusterIP.namespaceCIDRs)
            error policy:clusterIP.reservations L9: spec.clusterIP: Forbidden: 10.96.0.10 is reserved for kube-system/kube-dns (clusterIP.reservations)
            error policy:clusterIP.headless L14: spec.clusterIP: Forbidden: headless Services are not allowed (clusterIP.headless)
            error policy:clusterIP.namespaceCIDRs L24: spec.clusterIP: Invalid value: "10.96.0.100": namespace "kube-system" may only use cluster IPs in 10.96.0.0/28 (clusterIP.namespaceCIDRs)
            default/thief rejected ["10.96.0.10"]
            default/headless rejected ["None"]
            kube-system/kube-dns created ["10.96.0.10"]
            kube-system/metrics rejected ["10.96.0.100"]
        "#]],
    );
}

#[test]
fn load_balancer_rules() {
    check(
        &format!(
            "{}{}{}",
            policy(
                "p",
                "{loadBalancer: {requireInternal: true, internalAnnotations: [{key: networking.gke.io/load-balancer-type, value: Internal}], allowedClasses: [internal], forbidOpenSourceRanges: true, allowedSourceRangeCIDRs: [10.0.0.0/8], loadBalancerIP: allowlist, allowedLoadBalancerIPCIDRs: [10.1.0.0/16]}}"
            ),
            svc(
                "public",
                "{type: LoadBalancer, loadBalancerIP: 203.0.113.1, loadBalancerSourceRanges: [0.0.0.0/0], ports: [{port: 80}]}"
            ),
            "apiVersion: v1\nkind: Service\nmetadata: {name: internal, annotations: {networking.gke.io/load-balancer-type: Internal}}\nspec: {type: LoadBalancer, loadBalancerClass: internal, loadBalancerIP: 10.1.2.3, loadBalancerSourceRanges: [10.1.0.0/16], ports: [{port: 80}]}\n",
        ),
        None,
        expect![[r#"
            error policy:loadBalancer.requireInternal L8: metadata.annotations: Required value: a LoadBalancer Service must be internal: set networking.gke.io/load-balancer-type: Internal (loadBalancer.requireInternal)
            error policy:loadBalancer.allowedClasses L9: spec.loadBalancerClass: Required value: supported values: "internal" (loadBalancer.allowedClasses)
            error policy:loadBalancer.forbidOpenSourceRanges L9: spec.loadBalancerSourceRanges[0]: Forbidden: "0.0.0.0/0" opens the load balancer to every address (loadBalancer.forbidOpenSourceRanges)
            error policy:loadBalancer.allowedSourceRangeCIDRs L9: spec.loadBalancerSourceRanges[0]: Forbidden: "0.0.0.0/0" is outside the allowed ranges 10.0.0.0/8 (loadBalancer.allowedSourceRangeCIDRs)
            error policy:loadBalancer.allowedLoadBalancerIPCIDRs L9: spec.loadBalancerIP: Forbidden: "203.0.113.1" is outside the allowed ranges 10.1.0.0/16 (loadBalancer.allowedLoadBalancerIPCIDRs)
            warning SvclabAdvisory L14: spec.loadBalancerIP is deprecated since Kubernetes 1.24 (in the API documentation only, the apiserver does not warn): its meaning is implementation-specific and it cannot express dual-stack; use your load-balancer implementation's annotation instead (for example metallb.universe.tf/loadBalancerIPs)
            default/public rejected ["10.101.39.219"]
            default/internal created ["10.103.224.41"]
        "#]],
    );
}

#[test]
fn load_balancer_forbid_and_status_ingress() {
    check(
        &format!(
            "{}{}",
            policy(
                "p",
                "{loadBalancer: {forbid: true, action: audit, statusIngressAllowedCIDRs: [198.51.100.0/24]}}"
            ),
            "apiVersion: v1\nkind: Service\nmetadata: {name: lb}\nspec: {type: LoadBalancer, ports: [{port: 80}]}\nstatus: {loadBalancer: {ingress: [{ip: 203.0.113.5}]}}\n",
        ),
        None,
        expect![[r#"
            info policy:loadBalancer.forbid L9: spec.type: Forbidden: LoadBalancer Services are not allowed (loadBalancer.forbid)
            info policy:loadBalancer.statusIngressAllowedCIDRs L10: status.loadBalancer.ingress[0].ip: Forbidden: "203.0.113.5" is outside the allowed ranges 198.51.100.0/24 (loadBalancer.statusIngressAllowedCIDRs)
            default/lb created ["10.101.39.219"]
        "#]],
    );
}

#[test]
fn external_name_rules() {
    check(
        &format!(
            "{}{}{}{}{}",
            policy(
                "p",
                "{externalName: {deniedNames: [localhost, '*.svc.cluster.local'], forbidIPLiterals: true}}"
            ),
            svc("local", "{type: ExternalName, externalName: localhost.}"),
            svc("ip", "{type: ExternalName, externalName: 127.0.0.1}"),
            svc("svc", "{type: ExternalName, externalName: a.b.svc.cluster.local}"),
            svc("ok", "{type: ExternalName, externalName: svc.cluster.local}"),
        ),
        None,
        expect![[r#"
            error policy:externalName.deniedNames L9: spec.externalName: Forbidden: "localhost." matches the denied name "localhost" (externalName.deniedNames)
            error policy:externalName.forbidIPLiterals L14: spec.externalName: Forbidden: "127.0.0.1" is an IP address literal (externalName.forbidIPLiterals)
            error policy:externalName.deniedNames L19: spec.externalName: Forbidden: "a.b.svc.cluster.local" matches the denied name "*.svc.cluster.local" (externalName.deniedNames)
            default/local rejected []
            default/ip rejected []
            default/svc rejected []
            default/ok created []
        "#]],
    );
}

#[test]
fn external_name_allowed_names_and_forbid() {
    check(
        &format!(
            "{}{}",
            policy("p", "{externalName: {forbid: true, allowedNames: ['*.example.com']}}"),
            svc("x", "{type: ExternalName, externalName: db.example.org}"),
        ),
        None,
        expect![[r#"
            error policy:externalName.forbid L9: spec.type: Forbidden: ExternalName Services are not allowed (externalName.forbid)
            error policy:externalName.allowedNames L9: spec.externalName: Forbidden: "db.example.org" matches none of the allowed names *.example.com (externalName.allowedNames)
            default/x rejected []
        "#]],
    );
}

#[test]
fn selector_unique_in_namespace_sees_the_scenario() {
    check(
        &format!(
            "{}{}{}{}",
            svc("a", "{selector: {app: web}, ports: [{port: 80}]}"),
            policy("p", "{selector: {require: true, uniqueInNamespace: true}}"),
            svc("b", "{selector: {app: web}, ports: [{port: 80}]}"),
            svc("c", "{ports: [{port: 80}]}"),
        ),
        None,
        expect![[r#"
            error policy:selector.uniqueInNamespace L14: spec.selector: Forbidden: Service "a" in namespace "default" has the same selector (selector.uniqueInNamespace)
            error policy:selector.require L19: spec.selector: Required value: a Service must select its Pods (selector.require)
            default/a created ["10.101.39.219"]
            default/b rejected ["10.103.224.41"]
            default/c rejected ["10.105.1.23"]
        "#]],
    );
}

#[test]
fn ports_rules() {
    check(
        &format!(
            "{}{}{}",
            policy(
                "p",
                "{ports: {allowedPorts: [80, '8000-8999'], deniedPorts: [8080], allowedProtocols: [TCP], requireNames: true}}"
            ),
            svc(
                "x",
                "{ports: [{name: web, port: 80}, {name: alt, port: 8080, protocol: UDP}, {name: ssh, port: 22}]}"
            ),
            svc("unnamed", "{ports: [{port: 8443}]}"),
        ),
        None,
        expect![[r#"
            error policy:ports.deniedPorts L9: spec.ports[1].port: Forbidden: port 8080 is denied (ports.deniedPorts)
            error policy:ports.allowedProtocols L9: spec.ports[1].protocol: Unsupported value: "UDP": supported values: "TCP" (ports.allowedProtocols)
            error policy:ports.allowedPorts L9: spec.ports[2].port: Invalid value: 22: must be one of the allowed ports 80, 8000-8999 (ports.allowedPorts)
            error policy:ports.requireNames L14: spec.ports[0].name: Required value: every port must be named (ports.requireNames)
            default/x rejected ["10.101.39.219"]
            default/unnamed rejected ["10.103.224.41"]
        "#]],
    );
}

#[test]
fn endpoint_slices_manual_restrict_addresses() {
    check(
        &format!(
            "{}{}",
            policy(
                "p",
                "{endpointSlices: {manual: restrictAddresses, deniedAddressCIDRs: [10.0.0.0/24], allowedAddressCIDRs: [10.244.0.0/16]}}"
            ),
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: good, labels: {kubernetes.io/service-name: web, endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.6]}]\nports: [{port: 80}]\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: evil, labels: {kubernetes.io/service-name: web}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.5]}, {addresses: [10.244.1.5]}]\nports: [{port: 80}]\n",
        ),
        None,
        expect![[r#"
            error policy:endpointSlices.deniedAddressCIDRs L17: endpoints[0].addresses[0]: Forbidden: "10.0.0.5" lies in the denied range 10.0.0.0/24 (endpointSlices.deniedAddressCIDRs)
            error policy:endpointSlices.allowedAddressCIDRs L17: endpoints[0].addresses[0]: Forbidden: "10.0.0.5" is outside the allowed ranges 10.244.0.0/16 (endpointSlices.allowedAddressCIDRs)
        "#]],
    );
}

#[test]
fn deprecations_and_non_canonical_ips() {
    check(
        &format!(
            "{PROFILE_1_32}{}{}{}",
            policy(
                "p",
                "{deprecations: {externalIPs: warn, loadBalancerIP: deny}, nonCanonicalIPs: warn}"
            ),
            svc(
                "x",
                "{type: LoadBalancer, externalIPs: [192.0.2.010], loadBalancerIP: 198.51.100.1, ports: [{port: 80}]}"
            ),
            svc(
                "mapped",
                "{externalIPs: ['::ffff:192.0.2.1', '2001:DB8::1'], ports: [{port: 80}]}"
            ),
        ),
        None,
        expect![[r#"
            warning policy:deprecations.externalIPs L13: spec.externalIPs: Forbidden: external IPs are deprecated: any user who can set them can intercept traffic (CVE-2020-8554) (deprecations.externalIPs)
            error policy:deprecations.loadBalancerIP L13: spec.loadBalancerIP: Forbidden: spec.loadBalancerIP is deprecated since Kubernetes 1.24: use the load balancer implementation's annotation (deprecations.loadBalancerIP)
            warning policy:nonCanonicalIPs L13: spec.externalIPs[0]: Invalid value: "192.0.2.010": must be written in canonical form "192.0.2.10" (nonCanonicalIPs)
            warning Warning L18: spec.externalIPs[1]: IPv6 address "2001:DB8::1" is not in RFC 5952 canonical format ("2001:db8::1"), which may cause controller apply-loops
            warning policy:deprecations.externalIPs L18: spec.externalIPs: Forbidden: external IPs are deprecated: any user who can set them can intercept traffic (CVE-2020-8554) (deprecations.externalIPs)
            warning policy:nonCanonicalIPs L18: spec.externalIPs[0]: Invalid value: "::ffff:192.0.2.1": must be written in canonical form "192.0.2.1" (nonCanonicalIPs)
            warning policy:nonCanonicalIPs L18: spec.externalIPs[1]: Invalid value: "2001:DB8::1": must be written in canonical form "2001:db8::1" (nonCanonicalIPs)
            default/x rejected ["10.105.69.182"]
            default/mapped created ["10.105.240.179"]
        "#]],
    );
}

#[test]
fn exemptions_skip_the_policy_and_report_unknown_users() {
    check(
        &format!(
            "{}{}{}",
            policy(
                "p",
                "{types: {allowed: [ClusterIP]}, exemptions: {namespaces: ['kube-*'], groups: [system:masters]}}"
            ),
            "apiVersion: v1\nkind: Service\nmetadata: {name: np, namespace: kube-system}\nspec: {type: NodePort, ports: [{port: 80}]}\n---\n",
            svc("np", "{type: NodePort, ports: [{port: 80}]}"),
        ),
        None,
        expect![[r#"
            info policy:skipped L11: exemptions.groups: skipped: needs userInfo
            error policy:types.allowed L14: spec.type: Unsupported value: "NodePort": supported values: "ClusterIP" (types.allowed)
            kube-system/np created ["10.101.39.219"]
            default/np rejected ["10.103.224.41"]
        "#]],
    );
}

#[test]
fn several_policies_replace_and_delete() {
    check(
        &format!(
            "{}{}{}{}{}{}{}",
            policy("a", "{types: {allowed: [ClusterIP]}}"),
            policy("b", "{ports: {deniedPorts: [22]}, action: warn}"),
            svc("one", "{type: NodePort, ports: [{port: 22}]}"),
            policy("a", "{types: {allowed: [ClusterIP, NodePort]}}"),
            svc("two", "{type: NodePort, ports: [{port: 22}]}"),
            "apiVersion: svclab.dev/v1alpha1\nkind: ServicePolicy\nmetadata: {name: b, annotations: {svclab.dev/operation: delete}}\n---\n",
            svc("three", "{type: NodePort, ports: [{port: 22}]}"),
        ),
        None,
        expect![[r#"
            error policy:types.allowed L14: spec.type: Unsupported value: "NodePort": supported values: "ClusterIP" (types.allowed)
            warning policy:ports.deniedPorts L14: spec.ports[0].port: Forbidden: port 22 is denied (ports.deniedPorts)
            warning policy:ports.deniedPorts L24: spec.ports[0].port: Forbidden: port 22 is denied (ports.deniedPorts)
            default/one rejected ["10.101.39.219"]
            default/two created ["10.103.224.41"]
            default/three created ["10.105.1.23"]
        "#]],
    );
}

#[test]
fn settings_errors_point_at_the_settings_line() {
    check(
        &format!(
            "{}{}{}",
            policy("p", "{types: {allowed: [ClusterIP]}}"),
            "apiVersion: svclab.dev/v1alpha1\nkind: ServicePolicy\nmetadata: {name: p}\nspec:\n  externalIPs:\n    allowedCIDR: [10.0.0.0/8]\n    allowedCIDRs: [10.0.0.0/33]\n  nodePorts:\n    allowedRanges: ['32000-31000', 70000]\n  loadBalancer:\n    allowedLoadBalancerIPCIDRs: [10.0.0.0/8]\n  action: block\n---\n",
            svc("np", "{type: NodePort, ports: [{port: 80}]}"),
        ),
        None,
        expect![[r#"
            error FieldValueNotSupported L17: spec.action: Unsupported value: "block": supported values: "audit", "deny", "warn"
            error FieldValueNotSupported L11: spec.externalIPs.allowedCIDR: Unsupported value: "allowedCIDR": supported values: "action", "allowedCIDRs", "allowedGroups", "allowedUsernames", "alsoCheckAnnotations", "mode"
            error FieldValueInvalid L12: spec.externalIPs.allowedCIDRs[0]: Invalid value: "10.0.0.0/33": must be a valid CIDR value or IP address, (e.g. 10.9.8.0/24 or 2001:db8::/64)
            error FieldValueForbidden L12: spec.externalIPs.allowedCIDRs: Forbidden: only applies with mode: allowlist
            error FieldValueInvalid L14: spec.nodePorts.allowedRanges[0]: Invalid value: "32000-31000": must be a port ("30443") or a range of ports ("30000-30100") between 1 and 65535
            error FieldValueInvalid L14: spec.nodePorts.allowedRanges[1]: Invalid value: 70000: must be a port ("30443") or a range of ports ("30000-30100") between 1 and 65535
            error FieldValueForbidden L16: spec.loadBalancer.allowedLoadBalancerIPCIDRs: Forbidden: only applies with loadBalancerIP: allowlist
            error policy:types.allowed L22: spec.type: Unsupported value: "NodePort": supported values: "ClusterIP" (types.allowed)
            default/np rejected ["10.101.39.219"]
        "#]],
    );
}

#[test]
fn denied_objects_release_their_allocations() {
    // The denied Service's explicit IP and node port are free again for the next one.
    check(
        &format!(
            "{}{}{}",
            policy("p", "{ports: {deniedPorts: [22]}}"),
            svc(
                "denied",
                "{type: NodePort, clusterIP: 10.96.0.50, ports: [{port: 22, nodePort: 30050}]}"
            ),
            svc(
                "next",
                "{type: NodePort, clusterIP: 10.96.0.50, ports: [{port: 80, nodePort: 30050}]}"
            ),
        ),
        None,
        expect![[r#"
            error policy:ports.deniedPorts L9: spec.ports[0].port: Forbidden: port 22 is denied (ports.deniedPorts)
            default/denied rejected ["10.96.0.50"]
            default/next created ["10.96.0.50"]
        "#]],
    );
}

#[test]
fn schema_lists_the_decoder_keys() {
    let schema: serde_json::Value =
        serde_json::from_str(&crate::policy::settings_schema()).unwrap_or_default();
    let keys: Vec<&str> = schema["properties"]
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let mut expected = crate::policy::settings::TOP_KEYS.to_vec();
    expected.sort_unstable();
    assert_eq!(keys, expected);
}

#[test]
fn check_settings_reports_bare_settings_errors() {
    let diags = crate::policy::check_settings(&Input::new(
        "p.yaml",
        "profile: {kubernetesVersion: '1.26', featureGates: {ServiceIPStaticSubrange: true}}\nnodePorts:\n  explicit: staticBandOnly\nexternalIPs:\n  allowedCIDRs: [10.0.0.0/8]\n",
    ));
    let lines: Vec<String> = diags
        .iter()
        .map(|d| format!("{} L{}", d.message, d.source.as_ref().map_or(0, |s| s.line)))
        .collect();
    expect![[r#"
        [
            "externalIPs.allowedCIDRs: Forbidden: only applies with mode: allowlist L5",
            "nodePorts.explicit: Invalid value: \"staticBandOnly\": Kubernetes 1.26 has no static band for node ports L3",
        ]
    "#]].assert_debug_eq(&lines);
}

#[test]
fn example_external_ips() {
    check(
        include_str!("../../../examples/policy-external-ips.yaml"),
        None,
        expect![[r#"
        warning Warning L23: spec.externalIPs is deprecated and may no longer be implemented in some clusters
        error policy:externalIPs.allowedCIDRs L35: spec.externalIPs[0]: Forbidden: "203.0.113.9" is outside the allowed ranges 192.0.2.0/24 (externalIPs.allowedCIDRs)
        edge/ingress created ["10.101.39.219"]
        team-a/hijack rejected ["10.103.224.41"]
    "#]],
    );
}

#[test]
fn example_no_nodeport() {
    check(
        include_str!("../../../examples/policy-no-nodeport.yaml"),
        None,
        expect![[r#"
        error policy:nodePorts.forbid L43: spec.ports[0].nodePort: Forbidden: node ports are not allowed (nodePorts.forbid)
        error policy:nodePorts.forbid L54: spec.ports[0].nodePort: Forbidden: a LoadBalancer Service allocates node ports; set allocateLoadBalancerNodePorts: false (nodePorts.forbid)
        default/api created ["10.101.39.219"]
        default/public created ["10.103.224.41"]
        default/debug rejected ["10.105.1.23"]
        default/shop rejected ["10.107.124.56"]
    "#]],
    );
}

#[test]
fn example_internal_load_balancers() {
    check(
        include_str!("../../../examples/policy-internal-load-balancers.yaml"),
        None,
        expect![[r#"
            error policy:loadBalancer.requireInternal L33: metadata.annotations: Required value: a LoadBalancer Service must be internal: set service.beta.kubernetes.io/aws-load-balancer-scheme: internal or service.beta.kubernetes.io/azure-load-balancer-internal: true or networking.gke.io/load-balancer-type: Internal (loadBalancer.requireInternal)
            error policy:loadBalancer.forbidOpenSourceRanges L37: spec.loadBalancerSourceRanges[0]: Forbidden: "0.0.0.0/0" opens the load balancer to every address (loadBalancer.forbidOpenSourceRanges)
            default/billing created ["10.101.39.219"]
            default/storefront rejected ["10.103.224.41"]
        "#]],
    );
}

#[test]
fn example_unique_selector() {
    check(
        include_str!("../../../examples/policy-unique-selector.yaml"),
        None,
        expect![[r#"
        error policy:selector.uniqueInNamespace L52: spec.selector: Forbidden: Service "web" in namespace "shop" has the same selector (selector.uniqueInNamespace)
        shop/web created ["10.101.39.219"]
        shop/api created ["10.103.224.41"]
        blog/web created ["10.105.1.23"]
        shop/web-canary rejected ["10.107.124.56"]
    "#]],
    );
}

#[test]
fn example_allowed_ports() {
    check(
        include_str!("../../../examples/policy-allowed-ports.yaml"),
        None,
        expect![[r#"
        warning policy:ports.allowedPorts L42: spec.ports[0].port: Invalid value: 5432: must be one of the allowed ports 80, 443, 8000-8999 (ports.allowedPorts)
        warning policy:ports.allowedPorts L52: spec.ports[0].port: Invalid value: 22: must be one of the allowed ports 80, 443, 8000-8999 (ports.allowedPorts)
        error policy:ports.deniedPorts L52: spec.ports[0].port: Forbidden: port 22 is denied (ports.deniedPorts)
        default/web created ["10.101.39.219"]
        default/db created ["10.103.224.41"]
        default/bastion rejected ["10.105.1.23"]
    "#]],
    );
}

#[test]
fn orphan_settings_are_errors() {
    check(
        &policy(
            "p",
            "{nodePorts: {countLoadBalancerNodePorts: false}, endpointSlices: {managedBy: [my-controller]}, loadBalancer: {internalAnnotations: [{key: a, value: b}]}}",
        ),
        None,
        expect![[r#"
            error FieldValueForbidden L4: spec.nodePorts.countLoadBalancerNodePorts: Forbidden: only applies with forbid: true
            error FieldValueForbidden L4: spec.loadBalancer.internalAnnotations: Forbidden: only applies with requireInternal: true
            error FieldValueForbidden L4: spec.endpointSlices.managedBy: Forbidden: only applies with manual: forbid or restrictAddresses
        "#]],
    );
}

#[test]
fn more_rules_one_violation_each() {
    check(
        &format!(
            "{PROFILE_1_32}{}{}{}{}{}{}",
            policy(
                "p",
                "{externalIPs: {mode: allowlist, allowedCIDRs: ['2001:db8::/64'], alsoCheckAnnotations: [example.com/vips]}, loadBalancer: {requireSourceRanges: true, allowedClasses: [internal], loadBalancerIP: forbid}, clusterIP: {explicit: forbid}, endpointSlices: {manual: forbid}, deprecations: {topologyAwareHintsAnnotation: warn, tolerateUnreadyEndpointsAnnotation: deny}}"
            ),
            "apiVersion: v1\nkind: Service\nmetadata: {name: vips, annotations: {example.com/vips: '2001:DB8:0:0::7, 203.0.113.7'}}\nspec: {externalIPs: ['2001:0db8::1'], ports: [{port: 80}]}\n---\n",
            svc(
                "lb",
                "{type: LoadBalancer, loadBalancerClass: public, loadBalancerIP: 10.0.0.1, ports: [{port: 80}]}"
            ),
            svc("pinned", "{clusterIP: 10.96.0.77, ports: [{port: 80}]}"),
            "apiVersion: v1\nkind: Service\nmetadata: {name: old, annotations: {service.kubernetes.io/topology-aware-hints: auto, service.alpha.kubernetes.io/tolerate-unready-endpoints: 'true'}}\nspec: {ports: [{port: 80}]}\n---\n",
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: manual}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.5]}]\n",
        ),
        None,
        expect![[r#"
            error policy:externalIPs.allowedCIDRs L12: metadata.annotations[example.com/vips]: Forbidden: "203.0.113.7" is outside the allowed ranges 2001:db8::/64 (externalIPs.allowedCIDRs)
            error policy:loadBalancer.allowedClasses L18: spec.loadBalancerClass: Unsupported value: "public": supported values: "internal" (loadBalancer.allowedClasses)
            error policy:loadBalancer.requireSourceRanges L18: spec.loadBalancerSourceRanges: Required value: a LoadBalancer Service must restrict its clients (loadBalancer.requireSourceRanges)
            error policy:loadBalancer.loadBalancerIP L18: spec.loadBalancerIP: Forbidden: spec.loadBalancerIP is not allowed (loadBalancer.loadBalancerIP)
            error policy:clusterIP.explicit L23: spec.clusterIP: Forbidden: explicit cluster IPs are not allowed; leave clusterIP unset (clusterIP.explicit)
            warning policy:deprecations.topologyAwareHintsAnnotation L27: metadata.annotations[service.kubernetes.io/topology-aware-hints]: Forbidden: deprecated since Kubernetes 1.27: use service.kubernetes.io/topology-mode or spec.trafficDistribution (deprecations.topologyAwareHintsAnnotation)
            error policy:deprecations.tolerateUnreadyEndpointsAnnotation L27: metadata.annotations[service.alpha.kubernetes.io/tolerate-unready-endpoints]: Forbidden: ignored since Kubernetes 1.21: use spec.publishNotReadyAddresses (deprecations.tolerateUnreadyEndpointsAnnotation)
            error policy:endpointSlices.manual L32: metadata.labels[endpointslice.kubernetes.io/managed-by]: Forbidden: EndpointSlices not managed by endpointslice-controller.k8s.io or endpointslicemirroring-controller.k8s.io are not allowed (endpointSlices.manual)
            default/vips rejected ["10.105.69.182"]
            default/lb rejected ["10.105.240.179"]
            default/pinned rejected ["10.96.0.77"]
            default/old rejected ["10.97.182.212"]
        "#]],
    );
}

#[test]
fn namespace_ranges_refuse_asked_values_not_random_picks() {
    check(
        &format!(
            "{}{}{}",
            policy(
                "p",
                "{nodePorts: {namespaceRanges: [{namespaces: [team-a], ranges: ['30000-32767']}]}, clusterIP: {namespaceCIDRs: [{namespaces: [team-a], cidrs: [10.96.0.0/12]}]}}"
            ),
            svc(
                "asks",
                "{type: NodePort, clusterIP: 10.96.0.44, ports: [{port: 80, nodePort: 30044}]}"
            ),
            svc("random", "{type: NodePort, ports: [{port: 80}]}"),
        ),
        None,
        expect![[r#"
            error policy:nodePorts.namespaceRanges L9: spec.ports[0].nodePort: Forbidden: node port 30044 belongs to namespaces team-a (nodePorts.namespaceRanges)
            error policy:clusterIP.namespaceCIDRs L9: spec.clusterIP: Forbidden: 10.96.0.44 belongs to namespaces team-a (clusterIP.namespaceCIDRs)
            default/asks rejected ["10.96.0.44"]
            default/random created ["10.101.39.219"]
        "#]],
    );
}

#[test]
fn no_defaults_skips_rules_that_need_allocation() {
    let report = run(
        &[Input::new(
            "s.yaml",
            format!(
                "{}{}",
                policy("p", "{clusterIP: {explicit: staticBandOnly}}"),
                "apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: default}\nspec: {clusterIP: 10.96.40.7, type: ClusterIP, ports: [{port: 80, protocol: TCP, targetPort: 80}], sessionAffinity: None, ipFamilies: [IPv4], ipFamilyPolicy: SingleStack, clusterIPs: [10.96.40.7], internalTrafficPolicy: Cluster}\n",
            ),
        )],
        &CheckOptions { no_defaults: true, ..CheckOptions::default() },
    );
    let lines: Vec<String> =
        report.diagnostics.iter().map(|d| format!("{} {}", d.reason, d.message)).collect();
    expect![[r#"
        [
            "policy:skipped clusterIP.explicit: skipped: needs allocation",
        ]
    "#]]
    .assert_debug_eq(&lines);
}

#[test]
fn more_settings_errors() {
    check(
        &policy(
            "p",
            "{selector: {require: 'yes'}, exemptions: {namespaces: ['a*b'], services: [{name: x}]}, clusterIP: {reservations: [{ip: 10.96.0.300, namespace: a, name: b}]}, nodePorts: {reservations: [{port: 0, namespace: a, name: b, protocol: ICMP}]}, nonCanonicalIPs: maybe}",
        ),
        None,
        expect![[r#"
            error FieldValueInvalid L4: spec.exemptions.namespaces[0]: Invalid value: "a*b": must be a namespace name, optionally with a leading or trailing "*"
            error FieldValueRequired L4: spec.exemptions.services[0]: Required value: namespace and name are required
            error FieldValueInvalid L4: spec.nodePorts.reservations[0].port: Invalid value: 0: must be a port number between 1 and 65535
            error FieldValueInvalid L4: spec.clusterIP.reservations[0].ip: Invalid value: "10.96.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)
            error FieldValueInvalid L4: spec.selector.require: Invalid value: "yes": must be a boolean
            error FieldValueNotSupported L4: spec.nonCanonicalIPs: Unsupported value: "maybe": supported values: "allow", "deny", "warn"
        "#]],
    );
}
