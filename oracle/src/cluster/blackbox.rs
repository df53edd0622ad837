//! The apiserver oracle's generated cases through a real kube-apiserver: every Service and
//! EndpointSlice of a case created, updated or deleted in stream order over HTTP (behind
//! `kubectl proxy`), each answer put in the form of the apiserver oracle's output line
//! (`oracle/apiserver/README.md`), and compared with svclab's by
//! [`crate::apiserver::compare_upstream`].
//!
//! What differs from the in-process oracle, and how it is compared:
//! - kube-apiserver draws ClusterIPs and node ports at random (`ipallocator` and
//!   `portallocator`, `AllocateNext`), svclab here first-fit: a dynamic pick is compared by
//!   validity (inside the range) and band (static or dynamic, KEP-3070 and KEP-3668), not by
//!   value ([`Picks::Random`]).
//! - kube-apiserver keeps the `kubernetes` Service in `default` on the first address of the
//!   primary range (`pkg/controlplane/controller/kubernetesservice`): svclab reads the stored
//!   object, fetched from the cluster, before the case, so both sides start from it.
//! - Cases with ServiceCIDR objects are not run: without kube-controller-manager's ServiceCIDR
//!   controller nothing marks a new ServiceCIDR ready, so the allocator never uses it (the
//!   in-process oracle covers them).
//! - Between cases every Service but `kubernetes` and every EndpointSlice is deleted.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::http::{self, Response};
use super::{ClusterError, ControlPlane, Settings, free_port};
use crate::apiserver::{
    Answer, Picks, compare_upstream, kind_of, svclab_answers, upstream_answers,
};
use crate::divergence::Divergence;

/// `kubectl proxy` on a loopback port: plain HTTP to the control plane, credentials added.
/// Stopped when dropped.
#[derive(Debug)]
pub struct Proxy {
    /// The port on 127.0.0.1.
    pub port: u16,
    child: Child,
}

impl Proxy {
    /// Starts `kubectl proxy` for `plane` and returns once it answers.
    pub fn start(plane: &ControlPlane) -> Result<Proxy, ClusterError> {
        let port = free_port()?;
        let child = plane
            .kubectl()
            .args(["proxy", "--address=127.0.0.1", &format!("--port={port}")])
            // Every path, every method: the tests write through it.
            .args(["--accept-paths=^.*", "--reject-paths=^$", "--reject-methods=^$"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| ClusterError::Start(format!("cannot start kubectl proxy: {err}")))?;
        let mut proxy = Proxy { port, child };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !http::get(port, "/readyz").is_ok_and(|r| r.status == 200) {
            if Instant::now() > deadline || proxy.child.try_wait().ok().flatten().is_some() {
                return Err(ClusterError::Start("kubectl proxy did not answer".into()));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(proxy)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Why a case is not run black-box, or `None` when it can be.
pub fn not_runnable(objects: &[Value]) -> Option<&'static str> {
    if objects.iter().any(|o| o["kind"] == "ServiceCIDR") {
        return Some("ServiceCIDR objects (no ServiceCIDR controller marks them ready)");
    }
    None
}

/// The REST collection of a kind in `namespace`.
fn collection(kind: &str, namespace: &str) -> Option<String> {
    match kind {
        "Service" => Some(format!("/api/v1/namespaces/{namespace}/services")),
        "EndpointSlice" => {
            Some(format!("/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices"))
        }
        _ => None,
    }
}

/// The stored `default/kubernetes` Service as svclab reads it: the spec kube-apiserver keeps.
pub fn kubernetes_service(proxy: &Proxy) -> Result<Value, ClusterError> {
    let response = http::get(proxy.port, "/api/v1/namespaces/default/services/kubernetes")?;
    let stored: Value = serde_json::from_slice(&response.body).unwrap_or_default();
    if response.status != 200 {
        return Err(ClusterError::Start(format!(
            "no kubernetes Service: {}",
            String::from_utf8_lossy(&response.body)
        )));
    }
    let mut spec = stored["spec"].clone();
    if let Some(spec) = spec.as_object_mut() {
        spec.remove("internalTrafficPolicy");
    }
    Ok(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "kubernetes", "namespace": "default", "labels": stored["metadata"]["labels"]},
        "spec": spec,
    }))
}

/// The case's objects as svclab reads them: `kubernetes` right after the first ClusterProfile
/// (or first), and the index it is at.
pub fn with_kubernetes(objects: &[Value], kubernetes: &Value) -> (Vec<Value>, usize) {
    let at = objects.iter().position(|o| o["kind"] == "ClusterProfile").map_or(0, |i| i + 1);
    let mut out = objects.to_vec();
    out.insert(at, kubernetes.clone());
    (out, at)
}

/// Runs `objects` (stream order; the object at `skip` is the stored `kubernetes` Service and is
/// not sent) through the cluster behind `proxy`, and returns kube-apiserver's answers as an
/// output line of the apiserver oracle.
pub fn run(proxy: &Proxy, id: &str, objects: &[Value], skip: usize) -> Value {
    let port = proxy.port;
    // Namespaces must exist (NamespaceLifecycle admission); making them is not part of the case.
    let namespaces: BTreeSet<&str> = objects
        .iter()
        .filter(|o| kind_of(o).is_some())
        .filter_map(|o| o["metadata"]["namespace"].as_str())
        .filter(|n| !n.is_empty())
        .collect();
    for namespace in namespaces {
        let body =
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}});
        let _ = http::request(
            port,
            "POST",
            "/api/v1/namespaces",
            Some("application/json"),
            body.to_string().as_bytes(),
        );
    }
    let mut results = Vec::new();
    let mut errors = Vec::new();
    for (index, object) in objects.iter().enumerate() {
        let Some(kind) = kind_of(object).filter(|_| index != skip) else { continue };
        match send(port, kind, object) {
            Ok(mut result) => {
                result["index"] = json!(index);
                results.push(result);
            }
            Err(err) => errors.push(format!("object {index}: {err}")),
        }
    }
    let error = if errors.is_empty() { Value::Null } else { json!(errors.join("; ")) };
    json!({"id": id, "error": error, "results": results})
}

/// One object's request and kube-apiserver's answer, in the oracle's output form.
fn send(port: u16, kind: &str, object: &Value) -> Result<Value, ClusterError> {
    let meta = &object["metadata"];
    let namespace = meta["namespace"].as_str().filter(|n| !n.is_empty()).unwrap_or("default");
    let name = meta["name"].as_str().unwrap_or("");
    let base = collection(kind, namespace).unwrap_or_default();
    let delete = kind == "Service" && meta["annotations"]["svclab.dev/operation"] == "delete";
    let stored = !name.is_empty()
        && http::get(port, &format!("{base}/{name}")).is_ok_and(|r| r.status == 200);
    let body = object.to_string();
    let (op, response) = if delete {
        ("delete", http::request(port, "DELETE", &format!("{base}/{name}"), None, b"")?)
    } else if stored {
        let path = format!("{base}/{name}");
        ("update", http::request(port, "PUT", &path, Some("application/json"), body.as_bytes())?)
    } else {
        ("create", http::request(port, "POST", &base, Some("application/json"), body.as_bytes())?)
    };
    Ok(answer(kind, namespace, name, op, &response))
}

/// kube-apiserver's response as an oracle result.
fn answer(kind: &str, namespace: &str, name: &str, op: &str, response: &Response) -> Value {
    let body: Value = serde_json::from_slice(&response.body).unwrap_or_default();
    let mut result = json!({"kind": kind, "namespace": namespace, "name": name, "op": op,
        "warnings": http::warnings(response)});
    if !(200..300).contains(&response.status) {
        result["outcome"] = json!("rejected");
        result["status"] = json!({
            "code": body["code"],
            "reason": body["reason"],
            "message": body["message"],
            "causes": body["details"]["causes"],
        });
        return result;
    }
    result["outcome"] = json!(match op {
        "delete" => "deleted",
        "update" => "updated",
        _ => "created",
    });
    if let Some(stored) = body["metadata"]["name"].as_str() {
        result["name"] = json!(stored);
    }
    if kind == "Service" {
        let spec = &body["spec"];
        result["type"] = spec["type"].clone();
        result["clusterIPs"] = spec["clusterIPs"].clone();
        result["ipFamilies"] = spec["ipFamilies"].clone();
        result["ipFamilyPolicy"] = spec["ipFamilyPolicy"].clone();
        let ports = spec["ports"].as_array().into_iter().flatten();
        result["nodePorts"] =
            json!(ports.map(|p| p["nodePort"].as_u64().unwrap_or(0)).collect::<Vec<_>>());
        result["healthCheckNodePort"] = json!(spec["healthCheckNodePort"].as_u64().unwrap_or(0));
    }
    result
}

/// Deletes every Service but `default/kubernetes` and every EndpointSlice but
/// `default/kubernetes`'s (kube-apiserver's own), so the next case starts from a fresh cluster.
pub fn clean(proxy: &Proxy) -> Result<(), ClusterError> {
    for list in ["/api/v1/services", "/apis/discovery.k8s.io/v1/endpointslices"] {
        let response = http::get(proxy.port, list)?;
        let items: Value = serde_json::from_slice(&response.body).unwrap_or_default();
        for item in items["items"].as_array().into_iter().flatten() {
            let namespace = item["metadata"]["namespace"].as_str().unwrap_or("");
            let name = item["metadata"]["name"].as_str().unwrap_or("");
            if namespace == "default" && name == "kubernetes" {
                continue;
            }
            let kind = if list.contains("services") { "Service" } else { "EndpointSlice" };
            let path = format!("{}/{name}", collection(kind, namespace).unwrap_or_default());
            let response = http::request(proxy.port, "DELETE", &path, None, b"")?;
            if response.status != 200 && response.status != 404 {
                return Err(ClusterError::Start(format!(
                    "cannot delete {path}: {}",
                    String::from_utf8_lossy(&response.body)
                )));
            }
        }
    }
    Ok(())
}

/// svclab's answers to `objects` (with `kubernetes` at `skip`) against kube-apiserver's `line`,
/// dynamic picks compared by validity and band.
pub fn compare(
    id: &str,
    objects: &[Value],
    skip: usize,
    line: &Value,
    settings: &Settings,
) -> Vec<Divergence> {
    let (profile, mut svclab) = svclab_answers(objects);
    svclab.remove(&skip);
    let (upstream_profile, mut upstream, harness) = upstream_answers(line);
    let bands = Bands::of(settings);
    for (index, s) in &mut svclab {
        let Some(u) = upstream.get_mut(index) else { continue };
        bands.mask(&objects[*index], s, u);
    }
    compare_upstream(id, (profile, svclab), (upstream_profile, upstream, harness), Picks::Random)
}

/// The ranges and their static bands, to compare dynamic picks by band.
struct Bands {
    ranges: Vec<ipnet::IpNet>,
    node_ports: (u32, u32),
    ip_bands: bool,
    port_bands: bool,
}

impl Bands {
    fn of(settings: &Settings) -> Bands {
        let ranges = settings.service_cluster_ip_ranges.iter().filter_map(|r| r.parse().ok());
        let (low, high) = settings
            .service_node_port_range
            .split_once('-')
            .and_then(|(l, h)| Some((l.trim().parse().ok()?, h.trim().parse().ok()?)))
            .unwrap_or((30000, 32767));
        let gate = |name: &str, default: bool| {
            settings.feature_gates.get(name).copied().unwrap_or(default)
        };
        let minor = settings.minor();
        Bands {
            ranges: ranges.collect(),
            node_ports: (low, high),
            // ServiceIPStaticSubrange: beta (on) in 1.25, GA 1.26; alpha (off) in 1.24.
            ip_bands: gate("ServiceIPStaticSubrange", minor >= 25),
            // ServiceNodePortStaticSubrange: alpha 1.27 (off), beta 1.28 (on), GA 1.29.
            port_bands: gate("ServiceNodePortStaticSubrange", minor >= 28),
        }
    }

    /// Replaces the dynamic picks of both answers by their band, where upstream's is valid.
    fn mask(&self, object: &Value, s: &mut Answer, u: &mut Answer) {
        let (Some(sf), Some(uf)) = (s.service.as_mut(), u.service.as_mut()) else { return };
        let spec = &object["spec"];
        let requested: Vec<&str> = match spec["clusterIPs"].as_array() {
            Some(list) => list.iter().filter_map(Value::as_str).collect(),
            None => spec["clusterIP"].as_str().into_iter().collect(),
        };
        for (i, (si, ui)) in sf.cluster_ips.iter_mut().zip(uf.cluster_ips.iter_mut()).enumerate() {
            if requested.get(i).is_some_and(|r| !r.is_empty()) || si == ui {
                continue;
            }
            if let (Some(sb), Some(ub)) = (self.ip_band(si), self.ip_band(ui)) {
                *si = sb;
                *ui = ub;
            }
        }
        let ports = spec["ports"].as_array().cloned().unwrap_or_default();
        for (i, (sp, up)) in sf.node_ports.iter_mut().zip(uf.node_ports.iter_mut()).enumerate() {
            let asked = ports.get(i).and_then(|p| p["nodePort"].as_u64()).is_some_and(|p| p != 0);
            self.mask_port(asked, sp, up);
        }
        let asked = spec["healthCheckNodePort"].as_u64().is_some_and(|p| p != 0);
        self.mask_port(asked, &mut sf.health_check_node_port, &mut uf.health_check_node_port);
    }

    /// A dynamic node port pick of both sides replaced by its band (where upstream's is in the
    /// range).
    fn mask_port(&self, asked: bool, s: &mut u32, u: &mut u32) {
        if asked || s == u || *s == 0 || *u == 0 {
            return;
        }
        if let (Some(sb), Some(ub)) = (self.port_band(*s), self.port_band(*u)) {
            (*s, *u) = (sb, ub);
        }
    }

    /// `<dynamic band of RANGE>` or `<static band of RANGE>` for an address an allocator of
    /// the ranges may hand out, `None` for one it may not (outside, the network address, the
    /// IPv4 broadcast address).
    ///
    /// The static band is the first `calculateRangeOffset` addresses after the network address
    /// (pkg/registry/core/service/ipallocator/bitmap.go at v1.24.17 to v1.32.13 and
    /// ipallocator.go from v1.33.13: `min(max(16, size/16), 256)`, none for fewer than 16
    /// addresses), dynamic picks come from above it first.
    fn ip_band(&self, text: &str) -> Option<String> {
        let ip: IpAddr = text.parse().ok()?;
        let range = self.ranges.iter().find(|r| r.contains(&ip))?;
        let (offset, size) = match (ip, range) {
            (IpAddr::V4(ip), ipnet::IpNet::V4(net)) => {
                let size = 1u128 << (32 - net.prefix_len());
                (u128::from(u32::from(ip) - u32::from(net.network())), size)
            }
            (IpAddr::V6(ip), ipnet::IpNet::V6(net)) => {
                let size =
                    1u128.checked_shl(128 - u32::from(net.prefix_len())).unwrap_or(u128::MAX);
                (u128::from(ip) - u128::from(net.network()), size)
            }
            _ => return None,
        };
        let v4 = ip.is_ipv4();
        if offset == 0 || (v4 && offset == size - 1) {
            return None;
        }
        // RangeSize caps an IPv6 range at 2^64 addresses (k8s.io/utils/net); the band only
        // needs to know whether it exceeds 256 * 16.
        let band = if self.ip_bands { static_band(size.min(1 << 20), 16, 256, 16) } else { 0 };
        let which = if offset - 1 < band { "static" } else { "dynamic" };
        Some(format!("<{which} band of {range}>"))
    }

    /// 1 for a port in the static band of the node port range, 2 for one above it, `None`
    /// outside the range. The band: `calculateRangeOffset` of
    /// pkg/registry/core/service/portallocator/allocator.go (v1.27.16 on:
    /// `min(max(16, size/32), 128)`, none for fewer than 16 ports).
    fn port_band(&self, port: u32) -> Option<u32> {
        let (low, high) = self.node_ports;
        if port < low || port > high {
            return None;
        }
        let size = u128::from(high - low + 1);
        let band = if self.port_bands { static_band(size, 16, 128, 32) } else { 0 };
        Some(if u128::from(port - low) < band { 1 } else { 2 })
    }
}

/// Upstream's `calculateRangeOffset`: `size/step` held between `min` and `max`, 0 below `min`.
fn static_band(size: u128, min: u128, max: u128, step: u128) -> u128 {
    if size < min { 0 } else { (size / step).clamp(min, max) }
}

/// How many cases of each kind a black-box run had: run, not runnable, and why.
#[derive(Debug, Default)]
pub struct Tally {
    /// Cases run.
    pub run: usize,
    /// Cases not run, by reason.
    pub skipped: BTreeMap<String, usize>,
}

/// Groups cases by the settings their ClusterProfile starts kube-apiserver with, so that one
/// start serves a group.
pub fn by_settings(
    cases: Vec<(String, Vec<Value>)>,
) -> BTreeMap<Settings, Vec<(String, Vec<Value>)>> {
    let mut out: BTreeMap<Settings, Vec<(String, Vec<Value>)>> = BTreeMap::new();
    for (id, objects) in cases {
        let profile = objects.iter().rev().find(|o| o["kind"] == "ClusterProfile").cloned();
        let settings = Settings::from_profile(&profile.unwrap_or_default());
        out.entry(settings).or_default().push((id, objects));
    }
    out
}
