//! Generated cluster-scale scenarios: what `kubectl get svc,endpointslices -A -o yaml` of a large
//! cluster looks like, as one multi-document stream, so the benchmarks, the scaling table of
//! `cargo xtask bench` and the scaling guard test all read the same input.
//!
//! The stream opens with two Nodes and a KubeProxyConfiguration, then every Service (two named
//! ports) followed, with [`Shape::slices`], by its EndpointSlice (three ready endpoints on the
//! two nodes, the Service's two target ports). One Service in a hundred is a NodePort Service,
//! the rest are ClusterIP; Services spread over a hundred namespaces. The output depends only
//! on the shape, so the same numbers always give the same bytes.
//!
//! [`variety`] draws the other kind of scenario: small ones of every shape, for comparing svclab
//! with upstream's own code (`cargo xtask oracle`).

pub mod variety;

use std::fmt::Write as _;

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// How many Services.
    pub services: usize,
    /// Whether each Service gets an EndpointSlice.
    pub slices: bool,
}

/// Namespaces the Services are spread over.
const NAMESPACES: usize = 100;

/// One Service in this many is `type: NodePort` (2 NodePorts each: 100,000 Services take
/// 2,000 of the default range's 2,768 ports).
const NODE_PORT_EVERY: usize = 100;

/// The scenario text for a shape.
pub fn generate(shape: Shape) -> String {
    // ~330 bytes per Service and ~620 per EndpointSlice.
    let per_service = if shape.slices { 960 } else { 340 };
    let mut out = String::with_capacity(1024 + shape.services * per_service);
    out.push_str(PREAMBLE);
    for i in 0..shape.services {
        service(&mut out, i);
        if shape.slices {
            endpoint_slice(&mut out, i);
        }
    }
    out
}

/// The Nodes and the KubeProxyConfiguration (the render's node is the first Node).
const PREAMBLE: &str = "\
apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels:
    kubernetes.io/hostname: node-a
    topology.kubernetes.io/zone: zone-a
status:
  addresses:
  - type: InternalIP
    address: 192.168.0.10
---
apiVersion: v1
kind: Node
metadata:
  name: node-b
  labels:
    kubernetes.io/hostname: node-b
    topology.kubernetes.io/zone: zone-b
status:
  addresses:
  - type: InternalIP
    address: 192.168.0.11
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clusterCIDR: 10.244.0.0/16
";

fn namespace(i: usize) -> usize {
    i % NAMESPACES
}

fn service(out: &mut String, i: usize) {
    let ns = namespace(i);
    let type_line = if i.is_multiple_of(NODE_PORT_EVERY) { "  type: NodePort\n" } else { "" };
    // Writing into a String cannot fail.
    let _ = write!(
        out,
        "---
apiVersion: v1
kind: Service
metadata:
  name: svc-{i}
  namespace: ns-{ns}
  labels:
    app: app-{i}
spec:
{type_line}  selector:
    app: app-{i}
  ports:
  - name: http
    port: 80
    protocol: TCP
    targetPort: 8080
  - name: metrics
    port: 9090
    protocol: TCP
    targetPort: 9090
"
    );
}

fn endpoint_slice(out: &mut String, i: usize) {
    let ns = namespace(i);
    // Three distinct pod addresses per Service in 10.244.0.0/16 and beyond (10.x.y.z spans
    // 16M addresses, enough for 5M Services).
    let base = 3 * i as u64 + 0x00F4_0000 + 2;
    let ip = |k: u64| {
        let v = base + k;
        format!("10.{}.{}.{}", (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff)
    };
    let node = |k: usize| if (i + k).is_multiple_of(2) { "node-a" } else { "node-b" };
    let _ = write!(
        out,
        "---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: svc-{i}-{suffix}
  namespace: ns-{ns}
  labels:
    kubernetes.io/service-name: svc-{i}
    endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io
addressType: IPv4
endpoints:
- addresses: [\"{a}\"]
  conditions: {{ready: true, serving: true, terminating: false}}
  nodeName: {na}
- addresses: [\"{b}\"]
  conditions: {{ready: true, serving: true, terminating: false}}
  nodeName: {nb}
- addresses: [\"{c}\"]
  conditions: {{ready: true, serving: true, terminating: false}}
  nodeName: {nc}
ports:
- name: http
  port: 8080
  protocol: TCP
- name: metrics
  port: 9090
  protocol: TCP
",
        suffix = suffix(i),
        a = ip(0),
        b = ip(1),
        c = ip(2),
        na = node(0),
        nb = node(1),
        nc = node(2),
    );
}

/// A five-letter suffix like the EndpointSlice controller's generated names.
fn suffix(i: usize) -> String {
    const LETTERS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut v = i.wrapping_mul(2_654_435_761) ^ 0x5bd1_e995;
    (0..5)
        .map(|_| {
            let c = LETTERS[v % LETTERS.len()];
            v /= LETTERS.len();
            char::from(c)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(shape: Shape, documents: usize) {
        let text = generate(shape);
        assert_eq!(text.matches("\n---\n").count() + 1, documents, "{text}");
        assert_eq!(text, generate(shape), "generation is deterministic");
    }

    #[test]
    fn services_and_slices() {
        check(Shape { services: 3, slices: false }, 3 + 3);
        check(Shape { services: 3, slices: true }, 3 + 6);
    }
}
