//! Typed Kubernetes objects, shaped like the Go API types (`pkg/apis/core`) they mirror.
//!
//! Absent strings are empty and absent pointers are `None`, exactly as Go decodes them, because
//! validation messages distinguish "unset" from "empty" only where Go does.

use std::collections::BTreeMap;

use std::sync::Arc;

use crate::source::{Pos, Source};
use crate::yaml::{Node as YamlNode, Value as YamlValue};

pub(crate) mod well_known;

/// A string-to-string map (`labels`, `annotations`, `selector`): entries kept sorted by key in
/// a vector sized to them, so it iterates in key order like a `BTreeMap`. A B-tree's first node
/// has room for eleven entries (half a kilobyte), and a cluster holds three such maps of one or
/// two entries per Service and slice.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StringMap(Vec<(String, String)>);

/// The entry pair as the map hands it out.
type EntryRef<'a> = (&'a String, &'a String);

/// The iterator over a [`StringMap`]'s entries.
type StringMapIter<'a> =
    std::iter::Map<std::slice::Iter<'a, (String, String)>, fn(&(String, String)) -> EntryRef<'_>>;

fn entry_ref((k, v): &(String, String)) -> EntryRef<'_> {
    (k, v)
}

impl StringMap {
    /// An empty map.
    pub fn new() -> StringMap {
        StringMap(Vec::new())
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&String> {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    /// Whether `key` has a value.
    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// Sets `key` (in key order), returning the value it replaced.
    pub fn insert(&mut self, key: String, value: String) -> Option<String> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (key, value));
                None
            }
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        self.find(key).ok().map(|i| self.0.remove(i).1)
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the map has no entry.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries in key order.
    pub fn iter(&self) -> StringMapIter<'_> {
        self.0.iter().map(entry_ref)
    }

    /// The keys in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator {
        self.0.iter().map(|(k, _)| k)
    }

    /// The values in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator {
        self.0.iter().map(|(_, v)| v)
    }

    /// Drops the spare capacity (a decoded map is read, rarely written).
    pub(crate) fn shrink_to_fit(&mut self) {
        self.0.shrink_to_fit();
    }
}

impl std::fmt::Debug for StringMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // As a `BTreeMap` prints, which snapshots of decoded objects show.
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &'a StringMap {
    type Item = EntryRef<'a>;
    type IntoIter = StringMapIter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for StringMap {
    type Item = (String, String);
    type IntoIter = std::vec::IntoIter<(String, String)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl FromIterator<(String, String)> for StringMap {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(iter: I) -> StringMap {
        let mut map = StringMap::new();
        map.extend(iter);
        map
    }
}

impl Extend<(String, String)> for StringMap {
    fn extend<I: IntoIterator<Item = (String, String)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<const N: usize> From<[(String, String); N]> for StringMap {
    fn from(entries: [(String, String); N]) -> StringMap {
        entries.into_iter().collect()
    }
}

/// Field positions of one object, searched by field path on demand (only diagnostics ask, so
/// nothing is indexed up front): its positioned tree, or the text of its document, parsed
/// again when a field is looked up (a tree is ten times the size of its text, and most
/// objects of a large scenario never have a diagnostic).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Positions {
    pub(crate) object: Pos,
    pub(crate) document: usize,
    /// The input's name, shared by all the objects read from it.
    pub(crate) file: Arc<str>,
    /// Where field positions are looked up.
    pub(crate) origin: Origin,
}

/// Where an object's field positions come from.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum Origin {
    /// Its positioned tree (a `List` item, or an object whose rules read values from it).
    Tree(Arc<YamlNode>),
    /// The text of its document, parsed again when a field is looked up.
    Text(DocumentText),
    /// Forgotten (a render writes no diagnostics): only the object's own position is left.
    #[default]
    Forgotten,
}

/// A whole document, as a range of its input's text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DocumentText {
    /// The input's text (shared by all its documents).
    pub(crate) text: Arc<String>,
    pub(crate) range: std::ops::Range<usize>,
    /// 1-based line where the document starts in its input.
    pub(crate) first_line: u32,
}

/// One step of a field path.
enum Step<'p> {
    Name(&'p str),
    Index(usize),
    Key(&'p str),
}

/// Splits `spec.ports[0].port` or `metadata.annotations[a.b/c]` into steps.
fn steps(path: &str) -> Vec<Step<'_>> {
    let mut out = Vec::new();
    let bytes = path.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'.' => i += 1,
            b'[' => {
                let close = path[i..].find(']').map_or(path.len(), |c| i + c);
                let inner = &path[i + 1..close];
                match inner.parse::<usize>() {
                    Ok(n) => out.push(Step::Index(n)),
                    Err(_) => out.push(Step::Key(inner)),
                }
                i = close + 1;
            }
            _ => {
                let end = path[i..].find(['.', '[']).map_or(path.len(), |c| i + c);
                out.push(Step::Name(&path[i..end]));
                i = end;
            }
        }
    }
    out
}

/// An object with the positions of its fields, as the scenario reader hands it on.
#[derive(Debug, Clone, PartialEq)]
pub struct Located<T> {
    /// The decoded object.
    pub value: T,
    /// `apiVersion` as written.
    pub api_version: String,
    /// Where its fields are.
    pub positions: Positions,
}

impl Positions {
    /// The report position of a field path (see [`Positions::of`]); `""` is the object itself.
    pub fn source_of(&self, path: &str) -> Source {
        let pos = self.of(path);
        Source {
            file: self.file.to_string(),
            document: self.document,
            line: pos.line,
            column: pos.column,
        }
    }

    /// Position of a field path, falling back to its nearest present parent and then the object.
    ///
    /// Field names also match with a lower-cased first letter, because some Kubernetes messages
    /// use Go field names (`spec.LoadBalancerSourceRanges`).
    pub fn of(&self, path: &str) -> Pos {
        // Allocation errors name `spec.clusterIPs` even when the user only wrote `clusterIP`
        // (normalizeClusterIPs copied it); point at what was written.
        if path.starts_with("spec.clusterIPs") && !self.has(path) && !self.has("spec.clusterIPs") {
            return self.find("spec.clusterIP").0;
        }
        self.find(path).0
    }

    /// Whether a field path was written in the input.
    pub fn has(&self, path: &str) -> bool {
        self.find(path).1
    }

    /// The deepest position found along the path, and whether the whole path was found.
    fn find(&self, path: &str) -> (Pos, bool) {
        if path.is_empty() {
            return (self.object, self.origin != Origin::Forgotten);
        }
        let parsed;
        let root: &YamlNode = match &self.origin {
            Origin::Tree(root) => root,
            Origin::Text(doc) => {
                let text = doc.text.get(doc.range.clone()).unwrap_or("");
                parsed = crate::yaml::parse_one(text, doc.first_line);
                match &parsed {
                    Some(root) => root,
                    None => return (self.object, false),
                }
            }
            Origin::Forgotten => return (self.object, false),
        };
        let mut node: &YamlNode = root;
        let mut pos = self.object;
        for step in steps(path) {
            let next = match (&node.value, step) {
                (YamlValue::Map(entries), Step::Name(name) | Step::Key(name)) => entries
                    .iter()
                    .rev()
                    .find(|e| e.key == name || lower_first(name).is_some_and(|l| e.key == l))
                    .map(|e| (e.key_pos, &e.value)),
                (YamlValue::Seq(items), Step::Index(i)) => {
                    items.get(i).map(|item| (item.pos, item))
                }
                _ => None,
            };
            match next {
                Some((p, n)) => {
                    pos = p;
                    node = n;
                }
                None => return (pos, false),
            }
        }
        (pos, true)
    }

    /// Position of the object itself (its first line).
    pub fn object(&self) -> Pos {
        self.object
    }

    /// 0-based document index in its file.
    pub fn document(&self) -> usize {
        self.document
    }

    /// File name the object came from.
    pub fn file(&self) -> &str {
        &self.file
    }
}

fn lower_first(name: &str) -> Option<String> {
    let first = name.chars().next()?;
    first.is_uppercase().then(|| first.to_lowercase().chain(name.chars().skip(1)).collect())
}

/// `metadata` of any object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObjectMeta {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.generateName`.
    pub generate_name: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.labels`.
    pub labels: StringMap,
    /// `metadata.annotations`.
    pub annotations: StringMap,
    /// `metadata.resourceVersion`.
    pub resource_version: String,
    /// `metadata.generation`.
    pub generation: i64,
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.finalizers`.
    pub finalizers: Vec<String>,
    /// `metadata.clusterName`: a field of 1.24's ObjectMeta only (`ZZZ_DeprecatedClusterName`),
    /// which the generic registry clears with a warning (`registry::drop_cluster_name`).
    pub cluster_name: String,
}

/// What a Service is stored under: its namespace and its name. The map key of the cluster's
/// Services (`World::services`), ordered by namespace, then name, as `kubectl get -A` lists them.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServiceKey {
    /// `metadata.namespace` as stored.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
}

impl ServiceKey {
    /// The key of an object's metadata as it stands (after defaulting, the namespace is set; with
    /// `--no-defaults` it may be empty).
    pub fn of(metadata: &ObjectMeta) -> ServiceKey {
        ServiceKey { namespace: metadata.namespace.clone(), name: metadata.name.clone() }
    }

    /// The key the apiserver would store the object under: an empty namespace is `default`.
    pub fn defaulted(metadata: &ObjectMeta) -> ServiceKey {
        let namespace = if metadata.namespace.is_empty() { "default" } else { &metadata.namespace };
        ServiceKey { namespace: namespace.to_owned(), name: metadata.name.clone() }
    }
}

impl std::fmt::Display for ServiceKey {
    /// `namespace/name`, as kubectl and kube-proxy name a Service.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// `svclab.dev/v1alpha1 ServicePolicy`: the operator's Service policy as a scenario object. Its
/// `spec` (the settings) is decoded by the policy layer from the positioned tree.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServicePolicy {
    /// `metadata`.
    pub metadata: ObjectMeta,
}

/// `v1 Service`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Service {
    /// `metadata`.
    pub metadata: ObjectMeta,
    /// `spec`.
    pub spec: ServiceSpec,
    /// `status`.
    pub status: ServiceStatus,
}

/// What a Service's type and policies make it need, as kube-apiserver's and kube-proxy's helpers
/// ask (`pkg/registry/core/service/strategy.go`, `pkg/apis/core/v1/helper`).
impl Service {
    /// `needsClusterIP`: every type but ExternalName holds cluster IPs.
    pub(crate) fn needs_cluster_ip(&self) -> bool {
        self.spec.type_ != "ExternalName"
    }

    /// `needsNodePort`: NodePort and LoadBalancer Services hold NodePorts.
    pub(crate) fn needs_node_port(&self) -> bool {
        self.spec.type_ == "NodePort" || self.spec.type_ == "LoadBalancer"
    }

    /// `ExternallyAccessible`: LoadBalancer, NodePort, or ClusterIP with external IPs.
    pub(crate) fn is_externally_accessible(&self) -> bool {
        self.needs_node_port()
            || (self.spec.type_ == "ClusterIP" && !self.spec.external_ips.is_empty())
    }

    /// `NeedsHealthCheck`: a LoadBalancer with `externalTrafficPolicy: Local`.
    pub(crate) fn needs_health_check(&self) -> bool {
        self.spec.type_ == "LoadBalancer" && self.spec.external_traffic_policy == "Local"
    }
}

/// `spec` of a Service.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServiceSpec {
    /// `spec.type` (empty when absent).
    pub type_: String,
    /// `spec.ports`.
    pub ports: Vec<ServicePort>,
    /// `spec.selector` (`None` when absent, which differs from `{}` only in rendering).
    pub selector: Option<StringMap>,
    /// `spec.clusterIP`.
    pub cluster_ip: String,
    /// `spec.clusterIPs`.
    pub cluster_ips: Vec<String>,
    /// `spec.ipFamilies`.
    pub ip_families: Vec<String>,
    /// `spec.ipFamilyPolicy`.
    pub ip_family_policy: Option<String>,
    /// `spec.externalIPs`.
    pub external_ips: Vec<String>,
    /// `spec.loadBalancerIP`.
    pub load_balancer_ip: String,
    /// `spec.loadBalancerSourceRanges`.
    pub load_balancer_source_ranges: Vec<String>,
    /// `spec.externalName`.
    pub external_name: String,
    /// `spec.externalTrafficPolicy`.
    pub external_traffic_policy: String,
    /// `spec.internalTrafficPolicy`.
    pub internal_traffic_policy: Option<String>,
    /// `spec.healthCheckNodePort`.
    pub health_check_node_port: i32,
    /// `spec.publishNotReadyAddresses`.
    pub publish_not_ready_addresses: bool,
    /// `spec.sessionAffinity`.
    pub session_affinity: String,
    /// `spec.sessionAffinityConfig`.
    pub session_affinity_config: Option<SessionAffinityConfig>,
    /// `spec.allocateLoadBalancerNodePorts`.
    pub allocate_load_balancer_node_ports: Option<bool>,
    /// `spec.loadBalancerClass`.
    pub load_balancer_class: Option<String>,
    /// `spec.trafficDistribution`.
    pub traffic_distribution: Option<String>,
}

/// `spec.sessionAffinityConfig`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionAffinityConfig {
    /// `clientIP`.
    pub client_ip: Option<ClientIpConfig>,
}

/// `spec.sessionAffinityConfig.clientIP`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientIpConfig {
    /// `timeoutSeconds`.
    pub timeout_seconds: Option<i32>,
}

/// One entry of `spec.ports`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServicePort {
    /// `name`.
    pub name: String,
    /// `protocol` (empty when absent).
    pub protocol: String,
    /// `appProtocol`.
    pub app_protocol: Option<String>,
    /// `port`.
    pub port: i32,
    /// `targetPort`.
    pub target_port: IntOrString,
    /// `nodePort`.
    pub node_port: i32,
}

/// `intstr.IntOrString`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntOrString {
    /// An integer (`Type: 0`).
    Int(i32),
    /// A string (`Type: 1`).
    String(String),
}

impl Default for IntOrString {
    fn default() -> Self {
        IntOrString::Int(0)
    }
}

/// `status` of a Service.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServiceStatus {
    /// `status.loadBalancer.ingress`.
    pub load_balancer_ingress: Vec<LoadBalancerIngress>,
}

/// One entry of `status.loadBalancer.ingress`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadBalancerIngress {
    /// `ip`.
    pub ip: String,
    /// `hostname`.
    pub hostname: String,
    /// `ipMode`.
    pub ip_mode: Option<String>,
}

/// `discovery.k8s.io/v1 EndpointSlice`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EndpointSlice {
    /// `metadata`.
    pub metadata: ObjectMeta,
    /// `addressType`.
    pub address_type: String,
    /// `endpoints`.
    pub endpoints: Vec<Endpoint>,
    /// `ports`.
    pub ports: Vec<EndpointPort>,
}

/// One entry of `endpoints`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Endpoint {
    /// `addresses`.
    pub addresses: Vec<String>,
    /// `conditions.ready`.
    pub ready: Option<bool>,
    /// `conditions.serving`.
    pub serving: Option<bool>,
    /// `conditions.terminating`.
    pub terminating: Option<bool>,
    /// `hostname`.
    pub hostname: Option<String>,
    /// `nodeName`.
    pub node_name: Option<String>,
    /// `zone`.
    pub zone: Option<String>,
    /// `hints.forZones[].name` (`None` when `hints` is absent).
    pub hints: Option<EndpointHints>,
}

/// `endpoints[].hints`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EndpointHints {
    /// `forZones[].name`.
    pub for_zones: Vec<String>,
    /// `forNodes[].name`.
    pub for_nodes: Vec<String>,
}

/// One entry of `ports` of an EndpointSlice.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EndpointPort {
    /// `name`.
    pub name: Option<String>,
    /// `protocol`.
    pub protocol: Option<String>,
    /// `port`.
    pub port: Option<i32>,
    /// `appProtocol`.
    pub app_protocol: Option<String>,
}

/// `v1 Endpoints` (the legacy API, mirrored into slices).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Endpoints {
    /// `metadata`.
    pub metadata: ObjectMeta,
    /// `subsets`.
    pub subsets: Vec<EndpointSubset>,
}

/// One entry of `subsets`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EndpointSubset {
    /// `addresses`.
    pub addresses: Vec<EndpointAddress>,
    /// `notReadyAddresses`.
    pub not_ready_addresses: Vec<EndpointAddress>,
    /// `ports`.
    pub ports: Vec<EndpointPort>,
}

/// One address of an Endpoints subset.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EndpointAddress {
    /// `ip`.
    pub ip: String,
    /// `hostname`.
    pub hostname: String,
    /// `nodeName`.
    pub node_name: Option<String>,
}

/// `v1 Node`: what kube-proxy reads of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Node {
    /// `metadata`.
    pub metadata: ObjectMeta,
    /// `spec.podCIDRs` (or `spec.podCIDR`).
    pub pod_cidrs: Vec<String>,
    /// `status.addresses` as (type, address).
    pub addresses: Vec<(String, String)>,
}

/// `networking.k8s.io/v1 ServiceCIDR`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServiceCidr {
    /// `metadata`.
    pub metadata: ObjectMeta,
    /// `spec.cidrs`.
    pub cidrs: Vec<String>,
}

/// `kubeproxy.config.k8s.io/v1alpha1 KubeProxyConfiguration`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KubeProxyConfiguration {
    /// `mode`.
    pub mode: String,
    /// `hostnameOverride`.
    pub hostname_override: String,
    /// `bindAddress`.
    pub bind_address: String,
    /// `clusterCIDR` (comma-separated in the API).
    pub cluster_cidr: String,
    /// `detectLocalMode`.
    pub detect_local_mode: String,
    /// `detectLocal.bridgeInterface`.
    pub bridge_interface: String,
    /// `detectLocal.interfaceNamePrefix`.
    pub interface_name_prefix: String,
    /// `iptables.masqueradeAll`.
    pub masquerade_all: bool,
    /// `iptables.masqueradeBit`.
    pub masquerade_bit: Option<i32>,
    /// `nftables.masqueradeAll` (the block exists from 1.29, with the nftables mode).
    pub nftables_masquerade_all: bool,
    /// `nftables.masqueradeBit`.
    pub nftables_masquerade_bit: Option<i32>,
    /// `iptables.localhostNodePorts`.
    pub localhost_node_ports: Option<bool>,
    /// `nodePortAddresses`.
    pub node_port_addresses: Vec<String>,
    /// `conntrack.tcpBeLiberal`.
    pub tcp_be_liberal: bool,
    /// `featureGates`.
    pub feature_gates: BTreeMap<String, bool>,
    /// The settings kube-proxy only validates (sync periods, timeouts, bind addresses, ...):
    /// they change no rule, but a bad value stops kube-proxy (proxy/startup.rs).
    pub checked: KubeProxyChecked,
}

/// The KubeProxyConfiguration settings kube-proxy's `Validate` reads and svclab's rules do not,
/// as written (durations in Go's `time.ParseDuration` form; empty or `None` = not written).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KubeProxyChecked {
    /// `healthzBindAddress`.
    pub healthz_bind_address: String,
    /// `metricsBindAddress`.
    pub metrics_bind_address: String,
    /// `configSyncPeriod`.
    pub config_sync_period: String,
    /// `udpIdleTimeout` (the userspace proxy's, until 1.25).
    pub udp_idle_timeout: String,
    /// `portRange` (until 1.30).
    pub port_range: String,
    /// `oomScoreAdj`.
    pub oom_score_adj: Option<i32>,
    /// `showHiddenMetricsForVersion`.
    pub show_hidden_metrics_for_version: String,
    /// `clientConnection.burst`.
    pub client_connection_burst: Option<i32>,
    /// `conntrack.maxPerCore`.
    pub conntrack_max_per_core: Option<i32>,
    /// `conntrack.min`.
    pub conntrack_min: Option<i32>,
    /// `conntrack.tcpEstablishedTimeout`.
    pub conntrack_tcp_established_timeout: String,
    /// `conntrack.tcpCloseWaitTimeout`.
    pub conntrack_tcp_close_wait_timeout: String,
    /// `conntrack.udpTimeout` (1.29 on).
    pub conntrack_udp_timeout: String,
    /// `conntrack.udpStreamTimeout` (1.29 on).
    pub conntrack_udp_stream_timeout: String,
    /// `iptables.syncPeriod`.
    pub iptables_sync_period: String,
    /// `iptables.minSyncPeriod`.
    pub iptables_min_sync_period: String,
    /// `nftables.syncPeriod` (1.29 on).
    pub nftables_sync_period: String,
    /// `nftables.minSyncPeriod` (1.29 on).
    pub nftables_min_sync_period: String,
    /// `ipvs.syncPeriod`.
    pub ipvs_sync_period: String,
    /// `ipvs.minSyncPeriod`.
    pub ipvs_min_sync_period: String,
    /// `ipvs.tcpTimeout`.
    pub ipvs_tcp_timeout: String,
    /// `ipvs.tcpFinTimeout`.
    pub ipvs_tcp_fin_timeout: String,
    /// `ipvs.udpTimeout`.
    pub ipvs_udp_timeout: String,
    /// `ipvs.scheduler`.
    pub ipvs_scheduler: String,
    /// `ipvs.excludeCIDRs`.
    pub ipvs_exclude_cidrs: Vec<String>,
    /// `logging.format` (1.28 on).
    pub logging_format: String,
}

/// `svclab.dev/v1alpha1 ClusterProfile`: facts no Kubernetes object carries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterProfile {
    /// `kubernetesVersion` (`1.24`, `v1.33.2`, ...).
    pub kubernetes_version: Option<String>,
    /// apiserver `featureGates`.
    pub feature_gates: BTreeMap<String, bool>,
    /// `serviceClusterIPRanges`.
    pub service_cluster_ip_ranges: Vec<String>,
    /// `serviceNodePortRange`.
    pub service_node_port_range: Option<String>,
    /// `seed`.
    pub seed: Option<u64>,
    /// `dynamicPicks`: `Seeded` (the default) or `FirstFit`.
    pub dynamic_picks: Option<String>,
    /// `host.iptablesRandomFully`.
    pub iptables_random_fully: Option<bool>,
    /// `host.nfacct`.
    pub nfacct: Option<bool>,
    /// `host.interfaceAddresses`.
    pub interface_addresses: Vec<String>,
}
