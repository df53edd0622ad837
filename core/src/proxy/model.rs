//! kube-proxy's service-port and endpoint model (serviceport.go, endpointslicecache.go) and
//! endpoint selection (`CategorizeEndpoints`, topology.go), for one IP family.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use ipnet::IpNet;
use serde::{Deserialize, Serialize};

use super::config::{ProxyConfig, TopologyHints};
use crate::model::well_known::{
    ANNOTATION_TOPOLOGY_MODE, DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS, IS_HEADLESS_SERVICE,
    LABEL_SERVICE_NAME, LABEL_SERVICE_PROXY_NAME, LABEL_TOPOLOGY_ZONE,
};
use crate::model::{EndpointSlice, Endpoints, Service, ServiceStatus};
use crate::net::unmap;
use crate::net::{IpFamily, parse_cidr_sloppy, parse_ip_sloppy, push_ip, push_signed};

/// `v1.DefaultClientIPServiceAffinitySeconds`.
const DEFAULT_AFFINITY_SECONDS: i32 = 10800;

/// One endpoint of a service port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ep {
    pub(crate) ip: IpAddr,
    pub(crate) port: i32,
    /// `ip:port` (IPv6 `[ip]:port`): the sort key and the SEP hash input.
    pub(crate) text: String,
    pub(crate) ready: bool,
    pub(crate) serving: bool,
    pub(crate) terminating: bool,
    pub(crate) local: bool,
    pub(crate) zone_hints: BTreeSet<String>,
    pub(crate) node_hints: BTreeSet<String>,
}

/// One service port with everything the renderers need.
#[derive(Debug, Clone)]
pub(crate) struct SvcPort {
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) port_name: String,
    /// Lower-case protocol (`tcp`).
    pub(crate) protocol: String,
    /// `namespace/name[:portName]`.
    pub(crate) svc_name: String,
    pub(crate) cluster_ip: IpAddr,
    pub(crate) port: i32,
    pub(crate) node_port: i32,
    pub(crate) external_ips: Vec<IpAddr>,
    pub(crate) lb_vips: Vec<IpAddr>,
    pub(crate) source_ranges: Vec<IpNet>,
    /// The addresses as the rules write them, one for each of `external_ips`, `lb_vips` and
    /// `source_ranges`: as the Service writes them until 1.29, the parsed address (network)
    /// from 1.30 (proxy/release.rs `ServiceIpsAsWritten`).
    pub(crate) external_ip_texts: Vec<String>,
    pub(crate) lb_vip_texts: Vec<String>,
    pub(crate) source_range_texts: Vec<String>,
    pub(crate) etp_local: bool,
    pub(crate) itp_local: bool,
    pub(crate) affinity: Option<i32>,
    pub(crate) health_check_node_port: i32,
    /// Whether the Service's annotations let kube-proxy use topology hints.
    pub(crate) hints_allowed: bool,
    /// All endpoints, sorted by `text`.
    pub(crate) endpoints: Vec<Ep>,
    pub(crate) cat: Categorized,
}

/// The result of `CategorizeEndpoints`, as indices into [`SvcPort::endpoints`] (ascending,
/// so in endpoint-string order).
#[derive(Debug, Clone, Default)]
pub(crate) struct Categorized {
    pub(crate) cluster: Option<Vec<usize>>,
    pub(crate) local: Option<Vec<usize>>,
    pub(crate) reachable: Vec<usize>,
    pub(crate) has_any: bool,
}

/// Endpoint selection of one service port, as reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointSelection {
    /// `namespace/name[:portName]`.
    pub service_port: String,
    /// Lower-case protocol.
    pub protocol: String,
    /// Endpoints for Cluster policy (`None` = the service never uses Cluster policy).
    pub cluster_endpoints: Option<Vec<String>>,
    /// Endpoints for Local policy (`None` = the service never uses Local policy).
    pub local_endpoints: Option<Vec<String>>,
    /// Endpoints that get an endpoint chain.
    pub all_reachable_endpoints: Vec<String>,
    /// Whether any usable endpoint exists (false → REJECT).
    pub has_any_endpoints: bool,
}

impl Ep {
    /// The address as text (the part of `text` before the port, without brackets).
    pub(crate) fn ip_text(&self) -> &str {
        // The port after the colon has at most five digits: a byte loop from the end finds it
        // at once, where `rfind` goes through `memrchr` (560 instructions a call in the plugin).
        let end = self.text.bytes().rposition(|b| b == b':').unwrap_or(self.text.len());
        self.text[..end].trim_start_matches('[').trim_end_matches(']')
    }
}

impl SvcPort {
    pub(crate) fn external_accessible(&self) -> bool {
        self.node_port != 0 || !self.lb_vips.is_empty() || !self.external_ips.is_empty()
    }

    pub(crate) fn uses_cluster(&self) -> bool {
        !self.itp_local || self.external_accessible()
    }

    pub(crate) fn uses_local(&self) -> bool {
        self.itp_local || (self.etp_local && self.external_accessible())
    }

    pub(crate) fn cluster_eps(&self) -> &[usize] {
        self.cat.cluster.as_deref().unwrap_or(&[])
    }

    pub(crate) fn local_eps(&self) -> &[usize] {
        self.cat.local.as_deref().unwrap_or(&[])
    }

    /// `sync_proxy_rules_no_local_endpoints_total` for either traffic policy: both proxiers
    /// count a Local policy with endpoints of which none is on this node.
    pub(crate) fn count_no_local_endpoints(
        &self,
        has_endpoints: bool,
        stats: &mut super::RuleStats,
    ) {
        if has_endpoints && self.local_eps().is_empty() {
            stats.no_local_endpoints_internal += u64::from(self.itp_local);
            stats.no_local_endpoints_external += u64::from(self.etp_local);
        }
    }

    /// Internal traffic has endpoints (else REJECT or DROP).
    pub(crate) fn has_internal(&self) -> bool {
        self.cat.has_any && !(self.itp_local && self.local_eps().is_empty())
    }

    /// External traffic has endpoints (else REJECT or DROP).
    pub(crate) fn has_external(&self) -> bool {
        self.cat.has_any && !(self.etp_local && self.local_eps().is_empty())
    }

    pub(crate) fn selection(&self) -> EndpointSelection {
        let texts =
            |eps: &[usize]| eps.iter().map(|i| self.endpoints[*i].text.clone()).collect::<Vec<_>>();
        EndpointSelection {
            service_port: self.svc_name.clone(),
            protocol: self.protocol.clone(),
            cluster_endpoints: self.cat.cluster.as_deref().map(texts),
            local_endpoints: self.cat.local.as_deref().map(texts),
            all_reachable_endpoints: texts(&self.cat.reachable),
            has_any_endpoints: self.cat.has_any,
        }
    }
}

/// `net.JoinHostPort(ip, port)` of the address as written (1.24 to 1.30, before
/// endpointslicecache.go parsed it: proxy/release.rs `EndpointIpsAsWritten`).
fn join_host_port(written: &str, port: i32) -> String {
    if written.contains(':') { format!("[{written}]:{port}") } else { format!("{written}:{port}") }
}

/// `ip:port` from the address as written when that is already canonical dotted IPv4 (the
/// common case, and no formatting needed), else from the parsed address.
fn endpoint_text_from(written: &str, ip: IpAddr, port: i32) -> String {
    // Canonical: digits and dots, and no octet with a leading zero (the parse made sure of the
    // rest). An octet starts at the start or after a dot.
    let bytes = written.as_bytes();
    let canonical_v4 = ip.is_ipv4()
        && bytes.iter().enumerate().all(|(i, &b)| {
            let starts_octet = i == 0 || bytes[i - 1] == b'.';
            match b {
                b'.' => true,
                b'0' if starts_octet => bytes.get(i + 1).is_none_or(|&next| next == b'.'),
                b => b.is_ascii_digit(),
            }
        });
    if !canonical_v4 {
        return endpoint_text(ip, port);
    }
    let mut text = String::with_capacity(written.len() + 6);
    text.push_str(written);
    text.push(':');
    push_signed(&mut text, i64::from(port));
    text
}

/// `ip:port`, `[ip]:port` for IPv6.
pub(crate) fn endpoint_text(ip: IpAddr, port: i32) -> String {
    let mut text = String::with_capacity(24);
    let v6 = ip.is_ipv6();
    if v6 {
        text.push('[');
    }
    push_ip(&mut text, ip);
    if v6 {
        text.push(']');
    }
    text.push(':');
    push_signed(&mut text, i64::from(port));
    text
}

/// The lower-case protocol (`tcp` when unset), without an allocation for the protocols a
/// Service may name (anything else is lower-cased into a new string).
fn protocol_key(text: Option<&str>) -> Cow<'static, str> {
    match text {
        None | Some("") => Cow::Borrowed("tcp"),
        Some(p) if p.eq_ignore_ascii_case("tcp") => Cow::Borrowed("tcp"),
        Some(p) if p.eq_ignore_ascii_case("udp") => Cow::Borrowed("udp"),
        Some(p) if p.eq_ignore_ascii_case("sctp") => Cow::Borrowed("sctp"),
        Some(p) => Cow::Owned(p.to_ascii_lowercase()),
    }
}

fn parse_family_ip(text: &str, family: IpFamily) -> Option<IpAddr> {
    let text = text.trim();
    let ip = match dotted_quad(text.as_bytes()) {
        Some(v4) => IpAddr::V4(v4),
        None => unmap(parse_ip_sloppy(text)?),
    };
    (IpFamily::of(ip) == family).then_some(ip)
}

/// Dotted IPv4 with Go 1.16's sloppy rules (1 to 3 decimal digits per octet, leading zeros
/// allowed), byte by byte: the hot path of endpoint parsing. Anything else returns `None`
/// and goes through `parse_ip_sloppy`.
fn dotted_quad(bytes: &[u8]) -> Option<std::net::Ipv4Addr> {
    let mut octets = [0u8; 4];
    let (mut part, mut value, mut digits) = (0usize, 0u16, 0u8);
    for &b in bytes {
        match b {
            b'0'..=b'9' => {
                digits += 1;
                value = value * 10 + u16::from(b - b'0');
                if digits > 3 || value > 255 {
                    return None;
                }
            }
            b'.' if digits > 0 && part < 3 => {
                octets[part] = u8::try_from(value).ok()?;
                part += 1;
                (value, digits) = (0, 0);
            }
            _ => return None,
        }
    }
    if part != 3 || digits == 0 {
        return None;
    }
    octets[3] = u8::try_from(value).ok()?;
    Some(std::net::Ipv4Addr::from(octets))
}

/// Endpoints of each (port name, protocol) of a service, before sorting: a vector, since a
/// service has a port or two (a B-tree's first node alone is most of a kilobyte).
#[derive(Default)]
struct PortEndpoints<'a>(Vec<(PortKey<'a>, Vec<Ep>)>);

/// (port name, lower-case protocol).
type PortKey<'a> = (&'a str, Cow<'static, str>);

impl<'a> PortEndpoints<'a> {
    /// The list of a port, made empty on first use.
    fn list(&mut self, port: PortKey<'a>) -> &mut Vec<Ep> {
        let at = match self.0.iter().position(|(p, _)| *p == port) {
            Some(at) => at,
            None => {
                self.0.push((port, Vec::new()));
                self.0.len() - 1
            }
        };
        &mut self.0[at].1
    }

    /// Appends another slice's endpoints of the same service, port by port.
    fn append(&mut self, other: PortEndpoints<'a>) {
        for (port, mut list) in other.0 {
            self.list(port).append(&mut list);
        }
    }

    /// Takes the list of a port (empty when there is none).
    fn take(&mut self, name: &str, protocol: &str) -> Vec<Ep> {
        self.0
            .iter_mut()
            .find(|((n, p), _)| *n == name && *p == protocol)
            .map(|(_, list)| std::mem::take(list))
            .unwrap_or_default()
    }
}

/// The endpoints of one EndpointSlice by (port name, protocol), in its ports' and endpoints'
/// order; none when the slice is of another address type than the proxier's family (FQDN
/// slices never match).
fn slice_endpoints<'a>(slice: &'a EndpointSlice, config: &ProxyConfig) -> PortEndpoints<'a> {
    let family = config.family;
    let mut ports = PortEndpoints::default();
    if !slice.address_type.is_empty() && slice.address_type != family.as_str() {
        return ports;
    }
    for port in &slice.ports {
        let (Some(name), Some(number)) = (&port.name, port.port) else { continue };
        if number == 0 {
            continue;
        }
        let list = ports.list((name.as_str(), protocol_key(port.protocol.as_deref())));
        for endpoint in &slice.endpoints {
            // Only the first address is used (endpointslicecache.go).
            let Some(written) = endpoint.addresses.first() else { continue };
            let Some(ip) = parse_family_ip(written, family) else { continue };
            let hints = endpoint.hints.as_ref();
            list.push(Ep {
                ip,
                port: number,
                text: if config.endpoint_ips_as_written {
                    join_host_port(written.trim(), number)
                } else {
                    endpoint_text_from(written.trim(), ip, number)
                },
                ready: endpoint.ready.unwrap_or(true),
                serving: endpoint.serving.unwrap_or(true),
                terminating: endpoint.terminating.unwrap_or(false),
                local: !config.node_name.is_empty()
                    && endpoint.node_name.as_deref() == Some(config.node_name.as_str()),
                zone_hints: hints
                    .map(|h| h.for_zones.iter().cloned().collect())
                    .unwrap_or_default(),
                node_hints: hints
                    .map(|h| h.for_nodes.iter().cloned().collect())
                    .unwrap_or_default(),
            });
        }
    }
    ports
}

/// Endpoints by (namespace, service name): those from EndpointSlices as a vector sorted by
/// key, which the Services, coming in the same order, walk with a cursor instead of searching
/// a tree; those mirrored from v1 Endpoints (few) in a map.
struct ServiceEndpoints<'a> {
    sliced: Vec<((&'a str, &'a str), PortEndpoints<'a>)>,
    cursor: usize,
    mirrored: BTreeMap<(&'a str, &'a str), PortEndpoints<'a>>,
}

impl<'a> ServiceEndpoints<'a> {
    fn sliced_index(&self, key: (&str, &str)) -> Option<usize> {
        let at = |i: usize| self.sliced.get(i).is_some_and(|(k, _)| *k == key);
        if at(self.cursor) {
            return Some(self.cursor);
        }
        if at(self.cursor + 1) {
            return Some(self.cursor + 1);
        }
        self.sliced.binary_search_by(|(k, _)| (*k).cmp(&key)).ok()
    }

    fn contains(&self, key: (&'a str, &'a str)) -> bool {
        self.sliced_index(key).is_some() || self.mirrored.contains_key(&key)
    }

    /// The endpoints of a Service's port, taken out.
    fn take(&mut self, key: (&'a str, &'a str), name: &str, protocol: &str) -> Vec<Ep> {
        if let Some(at) = self.sliced_index(key) {
            self.cursor = at;
            return self.sliced[at].1.take(name, protocol);
        }
        self.mirrored.get_mut(&key).map(|p| p.take(name, protocol)).unwrap_or_default()
    }
}

/// Builds every service port of the family with its categorized endpoints, sorted by
/// (namespace, name, port name, protocol).
pub(crate) fn build<'a>(
    services: &[(&'a Service, &'a ServiceStatus)],
    slices: &[&'a EndpointSlice],
    legacy: &[&'a Endpoints],
    config: &ProxyConfig,
) -> Vec<SvcPort> {
    let mut by_service = group_slices(slices, config);
    mirror_endpoints(&mut by_service, legacy, config);
    // At most one entry per Service port: sized up front, the vector of 10,000 Services'
    // ports never holds two copies of itself while doubling.
    let mut out = Vec::with_capacity(services.iter().map(|(s, _)| s.spec.ports.len()).sum());
    for &(service, status) in services {
        service_ports(service, status, &mut by_service, config, &mut out);
    }
    // Sorted by "namespace/name" (the Go tests' sort key for KUBE-SERVICES and KUBE-NODEPORTS
    // rules), then port name and protocol, so emission order is already canonical.
    // Stable, like the cached-key sort it replaces (whose keys carried the index); the stored
    // Services come in (namespace, name) order, which is almost always this order already, so
    // the sort finds one run and compares each neighbour pair once, allocating nothing.
    out.sort_by(|a, b| {
        cmp_service_key(a, b)
            .then_with(|| a.port_name.cmp(&b.port_name))
            .then_with(|| a.protocol.cmp(&b.protocol))
    });
    out
}

/// The endpoints of the EndpointSlices kube-proxy reads, grouped by Service.
fn group_slices<'a>(slices: &[&'a EndpointSlice], config: &ProxyConfig) -> ServiceEndpoints<'a> {
    // Each slice's endpoints are read in stream order, the order the objects sit in memory
    // (read in key order instead, each slice was read cold: at 100,000 Services a generated
    // scenario in Service-number order rendered 13 % slower than the same one sorted by
    // namespace and name, as `kubectl get -A` lists them). Then they are grouped by (namespace,
    // service name), and in name order within a group: slices in name order stand for the Go
    // map kube-proxy ranges over (random order), so the duplicate rule below picks one copy the
    // same way on every run. One stable sort (slices of one name keep their stream order).
    let mut keyed: Vec<((&'a str, &'a str), &'a str, PortEndpoints<'a>)> = slices
        .iter()
        .copied()
        .filter(|s| !ignored_by_kube_proxy(&s.metadata.labels))
        .filter_map(|slice| {
            let service = slice.metadata.labels.get(LABEL_SERVICE_NAME)?;
            let key = (slice.metadata.namespace.as_str(), service.as_str());
            Some((key, slice.metadata.name.as_str(), slice_endpoints(slice, config)))
        })
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
    // Endpoints grouped by (namespace, service name), then (port name, protocol). A service is
    // recorded as sliced even when no slice of its family matched, so its v1 Endpoints are not
    // mirrored below.
    let mut by_service = ServiceEndpoints {
        sliced: Vec::with_capacity(keyed.len()),
        cursor: 0,
        mirrored: BTreeMap::new(),
    };
    for (key, _, ports) in keyed {
        match by_service.sliced.last_mut() {
            Some((last, group)) if *last == key => group.append(ports),
            _ => by_service.sliced.push((key, ports)),
        }
    }
    by_service
}

/// v1 Endpoints are mirrored into slices by the EndpointSliceMirroring controller; mirror
/// those of services that have no EndpointSlice in the scenario (a selector-less Service).
/// Later objects of the same name replace earlier ones: walk backwards, first one wins.
fn mirror_endpoints<'a>(
    by_service: &mut ServiceEndpoints<'a>,
    legacy: &[&'a Endpoints],
    config: &ProxyConfig,
) {
    let family = config.family;
    for e in legacy.iter().rev() {
        let key = (e.metadata.namespace.as_str(), e.metadata.name.as_str());
        if by_service.contains(key) {
            continue;
        }
        let ports = by_service.mirrored.entry(key).or_default();
        for subset in &e.subsets {
            for port in &subset.ports {
                let number = port.port.unwrap_or(0);
                if number == 0 {
                    continue;
                }
                let name = port.name.as_deref().unwrap_or("");
                let list = ports.list((name, protocol_key(port.protocol.as_deref())));
                let all = subset
                    .addresses
                    .iter()
                    .map(|a| (a, true))
                    .chain(subset.not_ready_addresses.iter().map(|a| (a, false)));
                for (address, ready) in all {
                    let Some(ip) = parse_family_ip(&address.ip, family) else { continue };
                    // Mirrored endpoints carry only `ready`; serving defaults to true.
                    list.push(Ep {
                        ip,
                        port: number,
                        text: if config.endpoint_ips_as_written {
                            join_host_port(address.ip.trim(), number)
                        } else {
                            endpoint_text(ip, number)
                        },
                        ready,
                        serving: true,
                        terminating: false,
                        local: !config.node_name.is_empty()
                            && address.node_name.as_deref() == Some(config.node_name.as_str()),
                        zone_hints: BTreeSet::new(),
                        node_hints: BTreeSet::new(),
                    });
                }
            }
        }
    }
}

/// The service ports of one Service that kube-proxy programs (none for an ExternalName, a
/// headless or another proxy's Service, or one without an address of the family), each with
/// its endpoints taken out of `by_service` and categorized.
fn service_ports<'a>(
    service: &'a Service,
    status: &'a ServiceStatus,
    by_service: &mut ServiceEndpoints<'a>,
    config: &ProxyConfig,
    out: &mut Vec<SvcPort>,
) {
    let family = config.family;
    if ignored_by_kube_proxy(&service.metadata.labels) {
        return;
    }
    let spec = &service.spec;
    if spec.type_ == "ExternalName" {
        return;
    }
    let cluster_ip = spec
        .cluster_ips
        .iter()
        .chain(std::iter::once(&spec.cluster_ip))
        .filter(|t| !t.is_empty() && t.as_str() != "None")
        .find_map(|t| parse_family_ip(t, family));
    let Some(cluster_ip) = cluster_ip else { return };
    // pkg/proxy/service.go `newBaseServiceInfo` (1.24 to 1.29) keeps the strings it filtered
    // by family (`MapIPsByIPFamily`, the source ranges trimmed); serviceport.go (1.30 on)
    // keeps `net.IP`s and `*net.IPNet`s, which print canonical.
    let written = |text: &str, canonical: String| {
        if config.service_ips_as_written { text.trim().to_owned() } else { canonical }
    };
    let (external_ips, external_ip_texts): (Vec<IpAddr>, Vec<String>) = spec
        .external_ips
        .iter()
        .filter_map(|t| parse_family_ip(t, family).map(|ip| (ip, written(t, ip.to_string()))))
        .unzip();
    let (source_ranges, source_range_texts): (Vec<IpNet>, Vec<String>) = spec
        .load_balancer_source_ranges
        .iter()
        .filter_map(|t| parse_cidr_sloppy(t.trim()).map(|(_, n)| (n, written(t, n.to_string()))))
        .filter(|(n, _)| IpFamily::of_net(n) == family)
        .unzip();
    // pkg/proxy/util/utils.go `IsVIPMode`: `ipMode: Proxy` counts only while the
    // LoadBalancerIPMode gate is on (kube-proxy's own gates).
    let (lb_vips, lb_vip_texts): (Vec<IpAddr>, Vec<String>) = status
        .load_balancer_ingress
        .iter()
        .filter(|i| !(config.ip_mode_proxy_skipped && i.ip_mode.as_deref() == Some("Proxy")))
        .filter_map(|i| {
            parse_family_ip(&i.ip, family).map(|ip| (ip, written(&i.ip, ip.to_string())))
        })
        .unzip();
    // apihelpers ExternallyAccessible / ExternalPolicyLocal / NeedsHealthCheck.
    let etp_local = service.is_externally_accessible() && spec.external_traffic_policy == "Local";
    let needs_hc = service.needs_health_check();
    // kube-proxy honours the policy only while ServiceInternalTrafficPolicy is on (its own
    // gate; off-able in 1.24 and 1.25): pkg/proxy/service.go `newBaseServiceInfo` gates
    // it in the copies read from before 1.24, and the 1.24 iptables `syncProxyRules`
    // counts its no-local-endpoints metric only with the gate.
    let itp_local =
        config.internal_traffic_policy && spec.internal_traffic_policy.as_deref() == Some("Local");
    let affinity = (spec.session_affinity == "ClientIP").then(|| {
        spec.session_affinity_config
            .as_ref()
            .and_then(|c| c.client_ip.as_ref())
            .and_then(|c| c.timeout_seconds)
            .unwrap_or(DEFAULT_AFFINITY_SECONDS)
    });
    let hints_allowed = hints_allowed(&service.metadata.annotations, config.topology_hints);
    let ns = service.metadata.namespace.clone();
    let key = (service.metadata.namespace.as_str(), service.metadata.name.as_str());
    for port in &spec.ports {
        let protocol = protocol_key(Some(&port.protocol));
        // `namespace/name[:portName]`, pieced together (one per Service port).
        let name = &service.metadata.name;
        let mut svc_name = String::with_capacity(ns.len() + name.len() + port.name.len() + 2);
        svc_name.push_str(&ns);
        svc_name.push('/');
        svc_name.push_str(name);
        if !port.name.is_empty() {
            svc_name.push(':');
            svc_name.push_str(&port.name);
        }
        let mut endpoints = by_service.take(key, &port.name, &protocol);
        endpoints = dedup(endpoints, config.prefer_non_terminating_duplicates);
        let mut sp = SvcPort {
            namespace: ns.clone(),
            name: service.metadata.name.clone(),
            port_name: port.name.clone(),
            protocol: protocol.into_owned(),
            svc_name,
            cluster_ip,
            port: port.port,
            node_port: port.node_port,
            external_ips: external_ips.clone(),
            lb_vips: lb_vips.clone(),
            source_ranges: source_ranges.clone(),
            external_ip_texts: external_ip_texts.clone(),
            lb_vip_texts: lb_vip_texts.clone(),
            source_range_texts: source_range_texts.clone(),
            etp_local,
            itp_local,
            affinity,
            health_check_node_port: if needs_hc { spec.health_check_node_port } else { 0 },
            hints_allowed,
            endpoints,
            cat: Categorized::default(),
        };
        sp.cat = categorize(&sp, config);
        out.push(sp);
    }
}

/// Compares `namespace/name`, the key the Go tests sort KUBE-SERVICES rules by, without
/// building it.
fn cmp_service_key(a: &SvcPort, b: &SvcPort) -> std::cmp::Ordering {
    if a.namespace == b.namespace {
        return a.name.cmp(&b.name);
    }
    fn joined(p: &SvcPort) -> impl Iterator<Item = u8> + '_ {
        p.namespace.bytes().chain(std::iter::once(b'/')).chain(p.name.bytes())
    }
    joined(a).cmp(joined(b))
}

/// Whether topology hints may be used for a Service, by release (the rows of `Behaviour::Hints*`
/// in `proxy/release.rs`): pkg/proxy/serviceport.go reads `topology-aware-hints` alone (1.24
/// to 1.26) or that, when present even if empty, else `topology-mode` (1.27 on), and
/// pkg/proxy/topology.go `canUseTopology` accepts `Auto`/`auto` (1.24 to 1.26) or any value
/// but empty, `disabled` and `Disabled` (1.27 on); with ServiceTrafficDistribution on the
/// annotation no longer matters.
fn hints_allowed(annotations: &crate::model::StringMap, rule: TopologyHints) -> bool {
    match rule {
        TopologyHints::Off => false,
        TopologyHints::Always => true,
        TopologyHints::AnnotationAuto => {
            matches!(
                annotations.get(DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS).map(String::as_str),
                Some("Auto" | "auto")
            )
        }
        TopologyHints::AnnotationEnabled => {
            let value = annotations
                .get(DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS)
                .or_else(|| annotations.get(ANNOTATION_TOPOLOGY_MODE));
            !matches!(value.map(String::as_str), None | Some("" | "disabled" | "Disabled"))
        }
    }
}

/// cmd/kube-proxy/app/server.go `ProxyServer.Run` lists Services and EndpointSlices through
/// one informer factory whose label selector requires `service.kubernetes.io/service-proxy-name`
/// and `service.kubernetes.io/headless` to be absent (any value, even empty, excludes the
/// object), in every release svclab offers (1.24 to the newest).
fn ignored_by_kube_proxy(labels: &crate::model::StringMap) -> bool {
    labels.contains_key(LABEL_SERVICE_PROXY_NAME) || labels.contains_key(IS_HEADLESS_SERVICE)
}

/// Collapses duplicates (same `ip:port` in several slices or twice in one) as
/// pkg/proxy/endpointslicecache.go `addEndpoints` does, walking the copies in slice order:
/// a later copy replaces the kept one when it is not terminating (1.36 to the newest,
/// kubernetes/kubernetes#135593: a pod IP reused while the old pod terminates) or when it is
/// local (1.24 to 1.35: `!exists || isLocal`). Then sorts by the endpoint string byte-wise
/// (`10.1.1.11:11` before `10.1.1.1:11`).
fn dedup(mut endpoints: Vec<Ep>, prefer_non_terminating: bool) -> Vec<Ep> {
    // Strictly ascending already (distinct, in order: the common case): nothing to do.
    if endpoints.windows(2).all(|w| w[0].text < w[1].text) {
        return endpoints;
    }
    // A stable sort keeps the copies of one endpoint in slice order; each run then collapses
    // to its first copy or the last copy that replaces.
    endpoints.sort_by(|a, b| a.text.cmp(&b.text));
    let mut out: Vec<Ep> = Vec::with_capacity(endpoints.len());
    for ep in endpoints {
        let replaces = if prefer_non_terminating { !ep.terminating } else { ep.local };
        match out.last_mut() {
            Some(kept) if kept.text == ep.text => {
                if replaces {
                    *kept = ep;
                }
            }
            _ => out.push(ep),
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Topology {
    None,
    SameZone,
    SameNode,
}

/// `topologyModeFromHints`: only Ready endpoints count; node hints need the gate.
fn topology_mode(eps: &[Ep], node: &str, zone: &str, prefer_same_node: bool) -> Topology {
    let (mut all_node, mut for_node, mut all_zone, mut for_zone) = (true, false, true, false);
    for ep in eps.iter().filter(|e| e.ready) {
        if ep.node_hints.is_empty() {
            all_node = false;
        } else if ep.node_hints.contains(node) {
            for_node = true;
        }
        if ep.zone_hints.is_empty() {
            all_zone = false;
        } else if ep.zone_hints.contains(zone) {
            for_zone = true;
        }
    }
    if prefer_same_node && all_node && for_node {
        return Topology::SameNode;
    }
    if all_zone && for_zone {
        return Topology::SameZone;
    }
    Topology::None
}

/// `CategorizeEndpoints` (pkg/proxy/topology.go).
fn categorize(sp: &SvcPort, config: &ProxyConfig) -> Categorized {
    let eps = &sp.endpoints;
    let all = 0..eps.len();
    let mut out = Categorized::default();
    let mut topology = Topology::None;
    if sp.uses_cluster() {
        let zone = config.node_labels.get(LABEL_TOPOLOGY_ZONE).map_or("", String::as_str);
        if sp.hints_allowed {
            topology = topology_mode(eps, &config.node_name, zone, config.prefer_same_node);
        }
        let mut cluster: Vec<usize> = all
            .clone()
            .filter(|i| {
                let e = &eps[*i];
                e.ready
                    && match topology {
                        Topology::None => true,
                        Topology::SameZone => e.zone_hints.contains(zone),
                        Topology::SameNode => e.node_hints.contains(&config.node_name),
                    }
            })
            .collect();
        // No ready endpoint anywhere: fall back to serving-and-terminating ones, only with
        // ProxyTerminatingEndpoints on (off by default in 1.24 and 1.25; #108691, 1.24, made
        // the fallback cover cluster as well as local policies).
        if cluster.is_empty() && config.terminating_fallback {
            cluster = all.clone().filter(|i| eps[*i].serving && eps[*i].terminating).collect();
        }
        out.has_any = !cluster.is_empty();
        out.cluster = Some(cluster);
    }
    if !sp.uses_local() {
        out.reachable = out.cluster.clone().unwrap_or_default();
        return out;
    }
    let (mut local_ready, mut local_terminating) = (false, false);
    for e in eps {
        if e.ready {
            out.has_any = true;
            local_ready |= e.local;
        } else if config.terminating_fallback && e.serving && e.terminating {
            out.has_any = true;
            local_terminating |= e.local;
        }
    }
    let mut fallback = false;
    let local: Vec<usize> = if local_ready {
        all.filter(|i| eps[*i].local && eps[*i].ready).collect()
    } else if local_terminating {
        fallback = true;
        all.filter(|i| eps[*i].local && eps[*i].serving && eps[*i].terminating).collect()
    } else {
        Vec::new()
    };
    out.local = Some(local.clone());
    if !sp.uses_cluster() {
        out.reachable = local;
        return out;
    }
    if topology == Topology::None && !fallback {
        // clusterEndpoints holds every Ready endpoint: a superset of the local ones.
        out.reachable = out.cluster.clone().unwrap_or_default();
        return out;
    }
    let mut union: Vec<usize> = out.cluster.iter().flatten().copied().chain(local).collect();
    union.sort_unstable();
    union.dedup();
    out.reachable = union;
    out
}

/// [`dotted_quad`] for the unit tests.
#[cfg(test)]
pub(crate) fn dotted_quad_for_tests(text: &str) -> Option<IpAddr> {
    dotted_quad(text.as_bytes()).map(IpAddr::V4)
}
