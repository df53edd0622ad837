//! Unit tests of the proxy renderer, a topic per child module (the rules, the configuration,
//! the releases); the helpers they share are here.

use super::config::mark_string;
use super::*;
use crate::manifest::{Input, Object, parse};
use crate::model::KubeProxyConfiguration;
use crate::render;

mod configuration;
mod releases;
mod rules;

/// Renders a YAML scenario (objects as written) on node `test-node` (192.168.0.2, detector
/// `10.0.0.0/8`, the fakes' mark `0x4000`) after `tweak`, checks that every `want` line is
/// present and no `unwanted` one, and returns the rendering.
fn check(
    yaml: &str,
    mode: ProxyMode,
    tweak: impl Fn(&mut ProxyConfig),
    want: &[&str],
    unwanted: &[&str],
) -> Rendered {
    let scenario = parse(&[Input::new("t.yaml", yaml)]);
    assert!(
        scenario.diagnostics.iter().all(|d| d.severity != crate::Severity::Error),
        "{:?}",
        scenario.diagnostics
    );
    let (mut services, mut slices, mut endpoints) = (Vec::new(), Vec::new(), Vec::new());
    for object in &scenario.objects {
        match object {
            Object::Service(s) => services.push(&s.value),
            Object::EndpointSlice(s) => slices.push(&s.value),
            Object::Endpoints(e) => endpoints.push(&e.value),
            _ => {}
        }
    }
    let mut config = ProxyConfig::new(IpFamily::V4);
    config.node_name = "test-node".into();
    config.node_ip = Some("192.168.0.2".parse().unwrap());
    config.host_addresses = vec!["127.0.0.1".parse().unwrap(), "192.168.0.2".parse().unwrap()];
    config.masquerade_mark = "0x4000".into();
    config.detect_local = DetectLocal::Cidr("10.0.0.0/8".parse().unwrap());
    tweak(&mut config);
    let rendered = render_objects(&services, &slices, &endpoints, &config, mode, false);
    for w in want {
        assert!(rendered.text.contains(w), "missing {w:?} in\n{}", rendered.text);
    }
    for u in unwanted {
        assert!(!rendered.text.contains(u), "unexpected {u:?} in\n{}", rendered.text);
    }
    rendered
}

fn none(_: &mut ProxyConfig) {}

const SVC: &str = "apiVersion: v1\nkind: Service\nmetadata: {namespace: ns1, name: svc1}\nspec:\n  clusterIP: 172.30.0.41\n  ports: [{name: p80, port: 80, protocol: TCP}]\n";

fn slice(addresses: &[(&str, &str)]) -> String {
    let eps: Vec<String> = addresses
        .iter()
        .map(|(ip, node)| format!("{{addresses: [\"{ip}\"], nodeName: {node}}}"))
        .collect();
    format!(
        "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{namespace: ns1, name: s-{}, labels: {{kubernetes.io/service-name: svc1}}}}\naddressType: {}\nendpoints: [{}]\nports: [{{name: p80, port: 80, protocol: TCP}}]\n",
        addresses.len(),
        if addresses.iter().any(|(ip, _)| ip.contains(':')) { "IPv6" } else { "IPv4" },
        eps.join(", ")
    )
}

fn lb(extra: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{namespace: ns1, name: svc1}}\nspec:\n  type: LoadBalancer\n  clusterIP: 172.30.0.41\n{extra}  ports: [{{name: p80, port: 80, protocol: TCP, nodePort: 30080}}]\nstatus: {{loadBalancer: {{ingress: [{{ip: 5.6.7.8}}, {{ip: 5.6.7.9, ipMode: Proxy}}]}}}}\n"
    )
}

/// A scenario world at a release with one Node (zone `z1`), evaluated; the only errors
/// allowed are those on a KubeProxyConfiguration kube-proxy refuses (what the callers render).
fn release_world(version: &str, kpc: &str, rest: &str) -> crate::World {
    release_world_with_gates(version, "{}", kpc, rest)
}

/// [`release_world`] with the ClusterProfile's (the apiserver's) `featureGates`.
fn release_world_with_gates(version: &str, gates: &str, kpc: &str, rest: &str) -> crate::World {
    let yaml = format!(
        "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"{version}\"\nfeatureGates: {gates}\nserviceClusterIPRanges: [\"172.30.0.0/16\"]\n---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n{kpc}\n---\n{rest}"
    );
    let (world, report) =
        crate::evaluate(&[Input::new("t.yaml", yaml)], &crate::CheckOptions::default());
    let other_errors = report.diagnostics.iter().any(|d| {
        d.severity == crate::Severity::Error
            && d.object.as_ref().is_none_or(|o| o.kind != "KubeProxyConfiguration")
    });
    assert!(!other_errors, "{:?}", report.diagnostics);
    world
}

/// The outcome of `svclab render` at a release for a KubeProxyConfiguration body: the rules,
/// or the error text.
fn render_at(version: &str, kpc: &str, mode: ProxyMode) -> Result<String, String> {
    let node = "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: np, namespace: default}\nspec: {type: NodePort, clusterIP: 172.30.0.41, ports: [{name: p80, port: 80, nodePort: 30080}]}\n";
    let world = release_world(version, kpc, node);
    crate::render(&world, &RenderOptions::new(mode)).map_err(|e| e.to_string())
}
