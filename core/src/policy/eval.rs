//! The rules: one function per settings block, each turning an object (defaulted, allocated,
//! accepted by the apiserver) into findings, one per offending value.

use std::collections::BTreeMap;
use std::net::IpAddr;

use crate::allocation::{Allocators, FamilyAllocator};
use crate::field::{FieldError, GoValue};
use crate::model::well_known::{
    ANNOTATION_LOAD_BALANCER_SOURCE_RANGES_KEY, DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS,
    LABEL_MANAGED_BY, TOLERATE_UNREADY_ENDPOINTS_ANNOTATION,
};
use crate::model::{EndpointSlice, Service, ServiceKey};
use crate::net::{IpFamily, parse_ip_sloppy, unmap};
use crate::policy::UserInfo;
use crate::policy::settings::{
    Action, Cidr, Explicit, ExternalIpMode, LoadBalancer, LoadBalancerIpMode, Manual,
    NamespacePattern, Ports, Settings,
};
use crate::world::StoredService;

/// What a rule found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Finding {
    /// A violation of the rule `rule` (a settings path), with the action it carries.
    Violation { rule: &'static str, action: Action, error: FieldError },
    /// The rule could not run: the host lacks `needs`.
    Skipped { rule: &'static str, needs: &'static str },
}

/// The Service under judgement.
pub(crate) struct ServiceSubject<'a> {
    pub(crate) service: &'a Service,
    /// The stored object on update.
    pub(crate) old: Option<&'a Service>,
    /// Cluster IPs and node ports this request asked for by value (not kept from the old
    /// object, not picked by the allocator). `None` when nothing was allocated
    /// (`--no-defaults`): then every written value counts as asked for.
    pub(crate) requested: Option<(Vec<IpAddr>, Vec<u32>)>,
    /// `status` as the request wrote it (the apiserver drops it on create, but a
    /// `services/status` request, or a scenario playing the load-balancer controller, sets it).
    pub(crate) status: &'a crate::model::ServiceStatus,
}

/// What the host knows besides the object.
pub(crate) struct Env<'a> {
    pub(crate) allocators: Option<&'a Allocators>,
    pub(crate) user_info: Option<&'a UserInfo>,
    /// The other Services in effect (the object's own stored version excluded); `None` when
    /// the host has no inventory.
    pub(crate) inventory: Option<&'a BTreeMap<ServiceKey, StoredService>>,
    /// The inventory by selector.
    pub(crate) selectors: &'a crate::policy::SelectorIndex,
    /// An update whose old object the host did not send.
    pub(crate) old_object_missing: bool,
    /// A `services/status` request: only the status rules apply.
    pub(crate) status_only: bool,
}

struct Judge<'a> {
    settings: &'a Settings,
    out: &'a mut Vec<Finding>,
}

impl Judge<'_> {
    fn violation(&mut self, rule: &'static str, block: Option<Action>, error: FieldError) {
        let action = block.unwrap_or(self.settings.action);
        self.out.push(Finding::Violation { rule, action, error });
    }

    fn with(&mut self, rule: &'static str, action: Action, error: FieldError) {
        self.out.push(Finding::Violation { rule, action, error });
    }

    fn skipped(&mut self, rule: &'static str, needs: &'static str) {
        let finding = Finding::Skipped { rule, needs };
        if !self.out.contains(&finding) {
            self.out.push(finding);
        }
    }
}

/// An address as kube-apiserver reads it before strict validation: leading-zero IPv4 octets
/// are decimal, `::ffff:a.b.c.d` is `a.b.c.d`.
pub(crate) fn address(text: &str) -> Option<IpAddr> {
    parse_ip_sloppy(text.trim()).map(unmap)
}

fn in_any(ip: IpAddr, cidrs: &[Cidr]) -> bool {
    cidrs.iter().any(|c| c.net.contains(&ip))
}

fn cidr_list(cidrs: &[Cidr]) -> String {
    if cidrs.is_empty() {
        return "(none)".to_owned();
    }
    cidrs.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join(", ")
}

fn port_list(ranges: &[Ports]) -> String {
    ranges.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

fn patterns(list: &[NamespacePattern]) -> String {
    list.iter().map(|p| p.0.as_str()).collect::<Vec<_>>().join(", ")
}

fn namespace_of(service: &Service) -> &str {
    match service.metadata.namespace.as_str() {
        "" => "default",
        ns => ns,
    }
}

/// Whether the whole policy is skipped for this request; `Skipped` findings when user-based
/// exemptions cannot be decided.
pub(crate) fn exempt(
    settings: &Settings,
    namespace: &str,
    name: &str,
    user_info: Option<&UserInfo>,
    out: &mut Vec<Finding>,
) -> bool {
    let e = &settings.exemptions;
    if e.namespaces.iter().any(|p| p.matches(namespace)) {
        return true;
    }
    if e.services.iter().any(|s| s.namespace == namespace && s.name == name) {
        return true;
    }
    match user_info {
        Some(user) => {
            e.usernames.contains(&user.username) || user.groups.iter().any(|g| e.groups.contains(g))
        }
        None => {
            // Without the requester the policy applies in full; say so.
            if !e.usernames.is_empty() {
                out.push(Finding::Skipped { rule: "exemptions.usernames", needs: "userInfo" });
            }
            if !e.groups.is_empty() {
                out.push(Finding::Skipped { rule: "exemptions.groups", needs: "userInfo" });
            }
            false
        }
    }
}

/// Every rule of the settings over one Service.
pub(crate) fn service(
    settings: &Settings,
    subject: &ServiceSubject<'_>,
    env: &Env<'_>,
    out: &mut Vec<Finding>,
) {
    let mut judge = Judge { settings, out };
    if env.status_only {
        status_ingress(&mut judge, subject.status);
        return;
    }
    types(&mut judge, subject.service);
    external_ips(&mut judge, subject, env);
    node_ports(&mut judge, subject, env);
    load_balancer(&mut judge, subject.service);
    status_ingress(&mut judge, subject.status);
    cluster_ip(&mut judge, subject, env);
    external_name(&mut judge, subject.service);
    selector(&mut judge, subject.service, env);
    ports(&mut judge, subject.service);
    deprecations(&mut judge, subject.service);
    non_canonical(&mut judge, subject.service);
}

fn types(judge: &mut Judge<'_>, service: &Service) {
    let t = &judge.settings.types;
    if t.allowed.is_empty() || t.allowed.contains(&service.spec.type_) {
        return;
    }
    let allowed: Vec<&str> = t.allowed.iter().map(String::as_str).collect();
    let error = FieldError::not_supported_sorted(
        "spec.type",
        GoValue::Str(service.spec.type_.clone()),
        &allowed,
    );
    judge.violation("types.allowed", t.action, error);
}

/// The external IPs of a Service: `spec.externalIPs` and the configured annotations.
fn external_ip_values(service: &Service, annotations: &[String]) -> Vec<(String, String)> {
    let mut values: Vec<(String, String)> = service
        .spec
        .external_ips
        .iter()
        .enumerate()
        .map(|(i, ip)| (format!("spec.externalIPs[{i}]"), ip.clone()))
        .collect();
    for key in annotations {
        if let Some(text) = service.metadata.annotations.get(key) {
            for ip in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                values.push((format!("metadata.annotations[{key}]"), ip.to_owned()));
            }
        }
    }
    values
}

fn external_ips(judge: &mut Judge<'_>, subject: &ServiceSubject<'_>, env: &Env<'_>) {
    let e = &judge.settings.external_ips;
    let values = external_ip_values(subject.service, &e.also_check_annotations);
    if values.is_empty() {
        return;
    }
    let old_ips: Vec<IpAddr> = subject
        .old
        .map(|old| {
            external_ip_values(old, &e.also_check_annotations)
                .iter()
                .filter_map(|(_, ip)| address(ip))
                .collect()
        })
        .unwrap_or_default();
    let is_new = |ip: Option<IpAddr>| ip.is_none_or(|ip| !old_ips.contains(&ip));
    match e.mode {
        ExternalIpMode::Allow => {}
        ExternalIpMode::Forbid => {
            for (path, _) in &values {
                judge.violation(
                    "externalIPs.mode",
                    e.action,
                    FieldError::forbidden(path.as_str(), "external IPs are not allowed"),
                );
            }
        }
        ExternalIpMode::ForbidNew if env.old_object_missing => {
            judge.skipped("externalIPs.mode", "oldObject");
        }
        ExternalIpMode::ForbidNew => {
            for (path, ip) in &values {
                if is_new(address(ip)) {
                    judge.violation(
                        "externalIPs.mode",
                        e.action,
                        FieldError::forbidden(
                            path.as_str(),
                            format!(
                                "{} is not on the existing object; only external IPs already set may stay",
                                crate::field::go_quote(ip)
                            ),
                        ),
                    );
                }
            }
        }
        ExternalIpMode::Allowlist => {
            for (path, ip) in &values {
                let detail = match address(ip) {
                    Some(addr) if in_any(addr, &e.allowed_cidrs) => continue,
                    Some(_) => format!(
                        "{} is outside the allowed ranges {}",
                        crate::field::go_quote(ip),
                        cidr_list(&e.allowed_cidrs)
                    ),
                    None => format!("{} is not an IP address", crate::field::go_quote(ip)),
                };
                judge.violation(
                    "externalIPs.allowedCIDRs",
                    e.action,
                    FieldError::forbidden(path.as_str(), detail),
                );
            }
        }
    }
    if e.allowed_usernames.is_empty() && e.allowed_groups.is_empty() {
        return;
    }
    let rule = if e.allowed_usernames.is_empty() {
        "externalIPs.allowedGroups"
    } else {
        "externalIPs.allowedUsernames"
    };
    // Who may *set* external IPs: values already on the stored object stay, whoever updates.
    let new_values: Vec<&(String, String)> =
        values.iter().filter(|(_, ip)| is_new(address(ip))).collect();
    if new_values.is_empty() {
        return;
    }
    let Some(user) = env.user_info else {
        judge.skipped(rule, "userInfo");
        return;
    };
    let allowed = e.allowed_usernames.contains(&user.username)
        || user.groups.iter().any(|g| e.allowed_groups.contains(g));
    if allowed {
        return;
    }
    for (path, _) in new_values {
        judge.violation(
            rule,
            e.action,
            FieldError::forbidden(
                path.as_str(),
                format!("user {} may not set external IPs", crate::field::go_quote(&user.username)),
            ),
        );
    }
}

/// `(path, port, protocol)` of every node port after allocation (`healthCheckNodePort` is not
/// one).
/// `spec.ports[i].nodePort`, formatted only when a violation names it.
#[derive(Clone, Copy)]
struct NodePortPath(usize);

impl NodePortPath {
    fn to_path(self) -> String {
        format!("spec.ports[{}].nodePort", self.0)
    }
}

/// `spec.clusterIP` (the first) or `spec.clusterIPs[i]`, formatted only when needed.
#[derive(Clone, Copy)]
struct ClusterIpPath(usize);

impl ClusterIpPath {
    fn to_path(self) -> String {
        if self.0 == 0 {
            "spec.clusterIP".to_owned()
        } else {
            format!("spec.clusterIPs[{}]", self.0)
        }
    }
}

fn node_port_values(service: &Service) -> Vec<(NodePortPath, u32, &str)> {
    service
        .spec
        .ports
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let port = u32::try_from(p.node_port).ok().filter(|p| *p != 0)?;
            let protocol = if p.protocol.is_empty() { "TCP" } else { p.protocol.as_str() };
            Some((NodePortPath(i), port, protocol))
        })
        .collect()
}

fn node_ports(judge: &mut Judge<'_>, subject: &ServiceSubject<'_>, env: &Env<'_>) {
    let np = &judge.settings.node_ports;
    let service = subject.service;
    let values = node_port_values(service);
    if values.is_empty() {
        return;
    }
    let namespace = namespace_of(service);
    let is_lb = service.spec.type_ == "LoadBalancer";
    // `countLoadBalancerNodePorts: false` exempts LoadBalancers from `forbid` only.
    if np.forbid && (!is_lb || np.count_load_balancer_node_ports) {
        for (path, _, _) in &values {
            let detail = if is_lb {
                "a LoadBalancer Service allocates node ports; set allocateLoadBalancerNodePorts: false"
            } else {
                "node ports are not allowed"
            };
            judge.violation(
                "nodePorts.forbid",
                np.action,
                FieldError::forbidden(path.to_path(), detail),
            );
        }
    }
    if !np.allowed_ranges.is_empty() {
        for (path, port, _) in &values {
            if !np.allowed_ranges.iter().any(|r| r.contains(*port)) {
                judge.violation(
                    "nodePorts.allowedRanges",
                    np.action,
                    FieldError::invalid(
                        path.to_path(),
                        GoValue::Int(i64::from(*port)),
                        format!("must lie in the allowed ranges {}", port_list(&np.allowed_ranges)),
                    ),
                );
            }
        }
    }
    let old_ports: Vec<u32> =
        subject.old.map(node_port_values).unwrap_or_default().iter().map(|v| v.1).collect();
    let explicit: Vec<u32> = match &subject.requested {
        Some((_, ports)) => ports.clone(),
        None => values.iter().map(|v| v.1).filter(|p| !old_ports.contains(p)).collect(),
    };
    for (path, port, _) in values.iter().filter(|v| explicit.contains(&v.1)) {
        match np.explicit {
            Explicit::Allow => {}
            Explicit::Forbid => judge.violation(
                "nodePorts.explicit",
                np.action,
                FieldError::forbidden(
                    path.to_path(),
                    "explicit node ports are not allowed; leave nodePort unset",
                ),
            ),
            Explicit::StaticBandOnly => {
                let Some(allocators) = env.allocators else {
                    judge.skipped("nodePorts.explicit", "allocation");
                    continue;
                };
                match allocators.ports.static_band() {
                    Some((first, last)) if (first..=last).contains(port) => {}
                    band => judge.violation(
                        "nodePorts.explicit",
                        np.action,
                        FieldError::invalid(
                            path.to_path(),
                            GoValue::Int(i64::from(*port)),
                            match band {
                                Some((first, last)) => format!(
                                    "explicit node ports must lie in the static band {first}-{last}"
                                ),
                                None => "explicit node ports must lie in the static band, and the node port range has none".to_owned(),
                            },
                        ),
                    ),
                }
            }
        }
    }
    // Per-namespace ranges: a matching namespace keeps to its ranges (allocated ports count);
    // the others may not ask for a port in them. A port the allocator picked at random for
    // another namespace is not refused: that would fail requests at random.
    let own: Vec<&Ports> = np
        .namespace_ranges
        .iter()
        .filter(|e| e.namespaces.iter().any(|p| p.matches(namespace)))
        .flat_map(|e| e.ranges.iter())
        .collect();
    for (path, port, _) in &values {
        if !own.is_empty() {
            if !own.iter().any(|r| r.contains(*port)) {
                let ranges: Vec<Ports> = own.iter().map(|r| **r).collect();
                judge.violation(
                    "nodePorts.namespaceRanges",
                    np.action,
                    FieldError::invalid(
                        path.to_path(),
                        GoValue::Int(i64::from(*port)),
                        format!(
                            "namespace {} may only use node ports {}",
                            crate::field::go_quote(namespace),
                            port_list(&ranges)
                        ),
                    ),
                );
            }
        } else if let Some(entry) = np
            .namespace_ranges
            .iter()
            .find(|e| e.ranges.iter().any(|r| r.contains(*port)))
            .filter(|_| explicit.contains(port))
        {
            judge.violation(
                "nodePorts.namespaceRanges",
                np.action,
                FieldError::forbidden(
                    path.to_path(),
                    format!(
                        "node port {port} belongs to namespaces {}",
                        patterns(&entry.namespaces)
                    ),
                ),
            );
        }
    }
    for (path, port, protocol) in &values {
        for r in &np.reservations {
            let owner = r.owner.namespace == namespace && r.owner.name == service.metadata.name;
            if r.port == *port && r.protocol == *protocol && !owner {
                judge.violation(
                    "nodePorts.reservations",
                    np.action,
                    FieldError::forbidden(
                        path.to_path(),
                        format!(
                            "{port}/{protocol} is reserved for {}/{}",
                            r.owner.namespace, r.owner.name
                        ),
                    ),
                );
            }
        }
    }
}

fn load_balancer(judge: &mut Judge<'_>, service: &Service) {
    if service.spec.type_ != "LoadBalancer" {
        return;
    }
    let lb = &judge.settings.load_balancer;
    if lb.forbid {
        judge.violation(
            "loadBalancer.forbid",
            lb.action,
            FieldError::forbidden("spec.type", "LoadBalancer Services are not allowed"),
        );
    }
    if lb.require_internal {
        require_internal(judge, lb, service);
    }
    if !lb.allowed_classes.is_empty() {
        allowed_classes(judge, lb, service.spec.load_balancer_class.as_deref());
    }
    source_ranges(judge, lb, service);
    if !service.spec.load_balancer_ip.is_empty() {
        load_balancer_ip(judge, lb, &service.spec.load_balancer_ip);
    }
}

/// `loadBalancer.requireInternal`: one of the internal annotations (any value when the setting
/// gives none).
fn require_internal(judge: &mut Judge<'_>, lb: &LoadBalancer, service: &Service) {
    let annotations = &service.metadata.annotations;
    let internal = lb
        .internal_annotations
        .iter()
        .any(|a| annotations.get(&a.key).is_some_and(|v| a.value.is_empty() || *v == a.value));
    if internal {
        return;
    }
    let wanted: Vec<String> = lb
        .internal_annotations
        .iter()
        .map(|a| if a.value.is_empty() { a.key.clone() } else { format!("{}: {}", a.key, a.value) })
        .collect();
    judge.violation(
        "loadBalancer.requireInternal",
        lb.action,
        FieldError::required(
            "metadata.annotations",
            format!("a LoadBalancer Service must be internal: set {}", wanted.join(" or ")),
        ),
    );
}

/// `loadBalancer.allowedClasses`: `spec.loadBalancerClass` is set and one of them.
fn allowed_classes(judge: &mut Judge<'_>, lb: &LoadBalancer, class: Option<&str>) {
    let allowed: Vec<&str> = lb.allowed_classes.iter().map(String::as_str).collect();
    let error = match class {
        Some(class) if allowed.contains(&class) => return,
        Some(class) => FieldError::not_supported_sorted(
            "spec.loadBalancerClass",
            GoValue::Str(class.to_owned()),
            &allowed,
        ),
        None => {
            let mut sorted = allowed;
            sorted.sort_unstable();
            let quoted: Vec<String> = sorted.iter().map(|c| crate::field::go_quote(c)).collect();
            FieldError::required(
                "spec.loadBalancerClass",
                format!("supported values: {}", quoted.join(", ")),
            )
        }
    };
    judge.violation("loadBalancer.allowedClasses", lb.action, error);
}

/// The client ranges of a LoadBalancer Service with the path each was written at:
/// `spec.loadBalancerSourceRanges`, else the legacy annotation (comma-separated), as the cloud
/// providers read them.
fn written_source_ranges(service: &Service) -> Vec<(String, String)> {
    if !service.spec.load_balancer_source_ranges.is_empty() {
        let ranges = service.spec.load_balancer_source_ranges.iter().enumerate();
        return ranges
            .map(|(i, r)| (format!("spec.loadBalancerSourceRanges[{i}]"), r.trim().to_owned()))
            .collect();
    }
    let Some(value) = service.metadata.annotations.get(ANNOTATION_LOAD_BALANCER_SOURCE_RANGES_KEY)
    else {
        return Vec::new();
    };
    let path = format!("metadata.annotations[{ANNOTATION_LOAD_BALANCER_SOURCE_RANGES_KEY}]");
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| (path.clone(), s.to_owned()))
        .collect()
}

/// `loadBalancer.requireSourceRanges`, `forbidOpenSourceRanges` and `allowedSourceRangeCIDRs`.
fn source_ranges(judge: &mut Judge<'_>, lb: &LoadBalancer, service: &Service) {
    let ranges = written_source_ranges(service);
    if lb.require_source_ranges && ranges.is_empty() {
        judge.violation(
            "loadBalancer.requireSourceRanges",
            lb.action,
            FieldError::required(
                "spec.loadBalancerSourceRanges",
                "a LoadBalancer Service must restrict its clients",
            ),
        );
    }
    for (path, text) in &ranges {
        let net = crate::policy::settings::parse_cidr_or_ip(text);
        let quoted = crate::field::go_quote(text);
        if lb.forbid_open_source_ranges && net.is_some_and(|n| n.prefix_len() == 0) {
            judge.violation(
                "loadBalancer.forbidOpenSourceRanges",
                lb.action,
                FieldError::forbidden(
                    path.as_str(),
                    format!("{quoted} opens the load balancer to every address"),
                ),
            );
        }
        let allowed = &lb.allowed_source_range_cidrs;
        if !allowed.is_empty() && !net.is_some_and(|n| allowed.iter().any(|c| c.net.contains(&n))) {
            judge.violation(
                "loadBalancer.allowedSourceRangeCIDRs",
                lb.action,
                FieldError::forbidden(
                    path.as_str(),
                    format!("{quoted} is outside the allowed ranges {}", cidr_list(allowed)),
                ),
            );
        }
    }
}

/// `loadBalancer.loadBalancerIP` (and its allowlist) on a written `spec.loadBalancerIP`.
fn load_balancer_ip(judge: &mut Judge<'_>, lb: &LoadBalancer, ip: &str) {
    match lb.load_balancer_ip {
        LoadBalancerIpMode::Allow => {}
        LoadBalancerIpMode::Forbid => judge.violation(
            "loadBalancer.loadBalancerIP",
            lb.action,
            FieldError::forbidden("spec.loadBalancerIP", "spec.loadBalancerIP is not allowed"),
        ),
        LoadBalancerIpMode::Allowlist => {
            let allowed = &lb.allowed_load_balancer_ip_cidrs;
            if !address(ip).is_some_and(|a| in_any(a, allowed)) {
                judge.violation(
                    "loadBalancer.allowedLoadBalancerIPCIDRs",
                    lb.action,
                    FieldError::forbidden(
                        "spec.loadBalancerIP",
                        format!(
                            "{} is outside the allowed ranges {}",
                            crate::field::go_quote(ip),
                            cidr_list(allowed)
                        ),
                    ),
                );
            }
        }
    }
}

/// `status.loadBalancer.ingress[].ip` (what a load-balancer controller writes through
/// `services/status`; a scenario plays that controller by writing `status`).
fn status_ingress(judge: &mut Judge<'_>, status: &crate::model::ServiceStatus) {
    let lb = &judge.settings.load_balancer;
    if lb.status_ingress_allowed_cidrs.is_empty() {
        return;
    }
    for (i, ingress) in status.load_balancer_ingress.iter().enumerate() {
        if ingress.ip.is_empty() {
            continue;
        }
        if !address(&ingress.ip).is_some_and(|a| in_any(a, &lb.status_ingress_allowed_cidrs)) {
            judge.violation(
                "loadBalancer.statusIngressAllowedCIDRs",
                lb.action,
                FieldError::forbidden(
                    format!("status.loadBalancer.ingress[{i}].ip"),
                    format!(
                        "{} is outside the allowed ranges {}",
                        crate::field::go_quote(&ingress.ip),
                        cidr_list(&lb.status_ingress_allowed_cidrs)
                    ),
                ),
            );
        }
    }
}

/// The static band of the range holding `ip`, from the allocator itself.
fn static_band(allocators: &Allocators, ip: IpAddr) -> Option<(IpAddr, IpAddr)> {
    match allocators.families().get(&IpFamily::of(ip))? {
        FamilyAllocator::Bitmap(range) => range.static_band(),
        FamilyAllocator::Objects(meta) => {
            let net = meta.cidr_of(ip)?;
            let (g, _) = meta.geometry(&net)?;
            (g.offset > 0).then(|| (g.ip(g.first), g.ip(g.first + g.offset - 1)))
        }
    }
}

fn cluster_ip(judge: &mut Judge<'_>, subject: &ServiceSubject<'_>, env: &Env<'_>) {
    let c = &judge.settings.cluster_ip;
    let service = subject.service;
    let namespace = namespace_of(service);
    if c.forbid_headless && service.spec.cluster_ip == "None" {
        judge.violation(
            "clusterIP.headless",
            c.action,
            FieldError::forbidden("spec.clusterIP", "headless Services are not allowed"),
        );
    }
    let ips: Vec<(ClusterIpPath, &str, IpAddr)> = {
        let list: Vec<&String> = if service.spec.cluster_ips.is_empty() {
            std::iter::once(&service.spec.cluster_ip).filter(|s| !s.is_empty()).collect()
        } else {
            service.spec.cluster_ips.iter().collect()
        };
        list.into_iter()
            .enumerate()
            .filter_map(|(i, text)| Some((ClusterIpPath(i), text.as_str(), address(text)?)))
            .collect()
    };
    let old_ips: Vec<IpAddr> = subject
        .old
        .map(|o| {
            o.spec
                .cluster_ips
                .iter()
                .chain([&o.spec.cluster_ip])
                .filter_map(|t| address(t))
                .collect()
        })
        .unwrap_or_default();
    let explicit: Vec<&(ClusterIpPath, &str, IpAddr)> = match &subject.requested {
        Some((requested, _)) => ips.iter().filter(|v| requested.contains(&v.2)).collect(),
        None => ips.iter().filter(|v| !old_ips.contains(&v.2)).collect(),
    };
    for (path, text, ip) in &explicit {
        match c.explicit {
            Explicit::Allow => {}
            Explicit::Forbid => judge.violation(
                "clusterIP.explicit",
                c.action,
                FieldError::forbidden(
                    path.to_path(),
                    "explicit cluster IPs are not allowed; leave clusterIP unset",
                ),
            ),
            Explicit::StaticBandOnly => {
                let Some(allocators) = env.allocators else {
                    judge.skipped("clusterIP.explicit", "allocation");
                    continue;
                };
                match static_band(allocators, *ip) {
                    Some((first, last)) if (first..=last).contains(ip) => {}
                    band => judge.violation(
                        "clusterIP.explicit",
                        c.action,
                        FieldError::invalid(
                            path.to_path(),
                            GoValue::Str((*text).to_owned()),
                            match band {
                                Some((first, last)) => format!(
                                    "explicit cluster IPs must lie in the static band {first}-{last}"
                                ),
                                None => "explicit cluster IPs must lie in the static band, and this range has none".to_owned(),
                            },
                        ),
                    ),
                }
            }
        }
        if !c.explicit_namespaces.is_empty()
            && !c.explicit_namespaces.iter().any(|p| p.matches(namespace))
        {
            judge.violation(
                "clusterIP.explicitNamespaces",
                c.action,
                FieldError::forbidden(
                    path.to_path(),
                    format!(
                        "only namespaces {} may set cluster IPs",
                        patterns(&c.explicit_namespaces)
                    ),
                ),
            );
        }
    }
    // Per-namespace CIDRs: a matching namespace keeps to its CIDRs (of the address's family,
    // allocated addresses count); the others may not ask for an address in them (a random
    // pick is not refused, as for node ports).
    for (path, text, ip) in &ips {
        let own: Vec<&Cidr> = c
            .namespace_cidrs
            .iter()
            .filter(|e| e.namespaces.iter().any(|p| p.matches(namespace)))
            .flat_map(|e| e.ranges.iter())
            .filter(|cidr| IpFamily::of_net(&cidr.net) == IpFamily::of(*ip))
            .collect();
        if !own.is_empty() {
            if !own.iter().any(|cidr| cidr.net.contains(ip)) {
                let list: Vec<&str> = own.iter().map(|c| c.text.as_str()).collect();
                judge.violation(
                    "clusterIP.namespaceCIDRs",
                    c.action,
                    FieldError::invalid(
                        path.to_path(),
                        GoValue::Str((*text).to_owned()),
                        format!(
                            "namespace {} may only use cluster IPs in {}",
                            crate::field::go_quote(namespace),
                            list.join(", ")
                        ),
                    ),
                );
            }
        } else if let Some(entry) = c
            .namespace_cidrs
            .iter()
            .find(|e| e.ranges.iter().any(|cidr| cidr.net.contains(ip)))
            .filter(|_| explicit.iter().any(|v| v.2 == *ip))
        {
            judge.violation(
                "clusterIP.namespaceCIDRs",
                c.action,
                FieldError::forbidden(
                    path.to_path(),
                    format!("{ip} belongs to namespaces {}", patterns(&entry.namespaces)),
                ),
            );
        }
        for r in &c.reservations {
            let owner = r.owner.namespace == namespace && r.owner.name == service.metadata.name;
            if r.ip == *ip && !owner {
                judge.violation(
                    "clusterIP.reservations",
                    c.action,
                    FieldError::forbidden(
                        path.to_path(),
                        format!("{ip} is reserved for {}/{}", r.owner.namespace, r.owner.name),
                    ),
                );
            }
        }
    }
}

/// `*` matches one or more characters, dots included.
fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            let Some(rest) = name.strip_prefix(head) else { return false };
            // One or more characters, then the rest of the pattern.
            (1..=rest.len()).any(|skip| rest.is_char_boundary(skip) && glob(tail, &rest[skip..]))
        }
    }
}

/// Lower-cased, one trailing dot removed.
fn dns_form(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    lower.strip_suffix('.').map_or(lower.clone(), str::to_owned)
}

fn external_name(judge: &mut Judge<'_>, service: &Service) {
    let e = &judge.settings.external_name;
    if service.spec.type_ != "ExternalName" {
        return;
    }
    if e.forbid {
        judge.violation(
            "externalName.forbid",
            e.action,
            FieldError::forbidden("spec.type", "ExternalName Services are not allowed"),
        );
    }
    let raw = &service.spec.external_name;
    let name = dns_form(raw);
    let quoted = crate::field::go_quote(raw);
    if let Some(denied) = e.denied_names.iter().find(|p| glob(&dns_form(p), &name)) {
        judge.violation(
            "externalName.deniedNames",
            e.action,
            FieldError::forbidden(
                "spec.externalName",
                format!("{quoted} matches the denied name {}", crate::field::go_quote(denied)),
            ),
        );
    }
    if !e.allowed_names.is_empty() && !e.allowed_names.iter().any(|p| glob(&dns_form(p), &name)) {
        judge.violation(
            "externalName.allowedNames",
            e.action,
            FieldError::forbidden(
                "spec.externalName",
                format!(
                    "{quoted} matches none of the allowed names {}",
                    e.allowed_names.join(", ")
                ),
            ),
        );
    }
    let bare = name.trim_start_matches('[').trim_end_matches(']');
    if e.forbid_ip_literals && parse_ip_sloppy(bare).is_some() {
        judge.violation(
            "externalName.forbidIPLiterals",
            e.action,
            FieldError::forbidden(
                "spec.externalName",
                format!("{quoted} is an IP address literal"),
            ),
        );
    }
}

fn selector(judge: &mut Judge<'_>, service: &Service, env: &Env<'_>) {
    let s = &judge.settings.selector;
    if service.spec.type_ == "ExternalName" {
        return;
    }
    let selector = service.spec.selector.as_ref().filter(|m| !m.is_empty());
    if s.require && selector.is_none() {
        judge.violation(
            "selector.require",
            s.action,
            FieldError::required("spec.selector", "a Service must select its Pods"),
        );
    }
    if !s.unique_in_namespace {
        return;
    }
    if selector.is_none() {
        return;
    }
    let Some(inventory) = env.inventory else {
        judge.skipped("selector.uniqueInNamespace", "inventory");
        return;
    };
    for ServiceKey { namespace: ns, name } in env.selectors.same_selector(inventory, service) {
        judge.violation(
            "selector.uniqueInNamespace",
            s.action,
            FieldError::forbidden(
                "spec.selector",
                format!(
                    "Service {} in namespace {} has the same selector",
                    crate::field::go_quote(&name),
                    crate::field::go_quote(namespace_of_key(&ns))
                ),
            ),
        );
    }
}

fn namespace_of_key(namespace: &str) -> &str {
    if namespace.is_empty() { "default" } else { namespace }
}

fn ports(judge: &mut Judge<'_>, service: &Service) {
    let p = &judge.settings.ports;
    for (i, port) in service.spec.ports.iter().enumerate() {
        let number = u32::try_from(port.port).unwrap_or(0);
        if !p.allowed_ports.is_empty() && !p.allowed_ports.iter().any(|r| r.contains(number)) {
            judge.violation(
                "ports.allowedPorts",
                p.action,
                FieldError::invalid(
                    format!("spec.ports[{i}].port"),
                    GoValue::Int(i64::from(port.port)),
                    format!("must be one of the allowed ports {}", port_list(&p.allowed_ports)),
                ),
            );
        }
        if let Some(range) = p.denied_ports.iter().find(|r| r.contains(number)) {
            judge.violation(
                "ports.deniedPorts",
                p.action,
                FieldError::forbidden(
                    format!("spec.ports[{i}].port"),
                    if range.first == range.last {
                        format!("port {number} is denied")
                    } else {
                        format!("port {number} is in the denied range {range}")
                    },
                ),
            );
        }
        let protocol = if port.protocol.is_empty() { "TCP" } else { port.protocol.as_str() };
        if !p.allowed_protocols.is_empty() && !p.allowed_protocols.iter().any(|a| a == protocol) {
            let allowed: Vec<&str> = p.allowed_protocols.iter().map(String::as_str).collect();
            judge.violation(
                "ports.allowedProtocols",
                p.action,
                FieldError::not_supported_sorted(
                    format!("spec.ports[{i}].protocol"),
                    GoValue::Str(protocol.to_owned()),
                    &allowed,
                ),
            );
        }
        if p.require_names && port.name.is_empty() {
            judge.violation(
                "ports.requireNames",
                p.action,
                FieldError::required(format!("spec.ports[{i}].name"), "every port must be named"),
            );
        }
    }
}

fn deprecations(judge: &mut Judge<'_>, service: &Service) {
    let d = judge.settings.deprecations.clone();
    if let Some(action) = d.external_ips.action()
        && !service.spec.external_ips.is_empty()
    {
        judge.with(
            "deprecations.externalIPs",
            action,
            FieldError::forbidden(
                "spec.externalIPs",
                "external IPs are deprecated: any user who can set them can intercept traffic (CVE-2020-8554)",
            ),
        );
    }
    if let Some(action) = d.load_balancer_ip.action()
        && !service.spec.load_balancer_ip.is_empty()
    {
        judge.with(
            "deprecations.loadBalancerIP",
            action,
            FieldError::forbidden(
                "spec.loadBalancerIP",
                "spec.loadBalancerIP is deprecated since Kubernetes 1.24: use the load balancer implementation's annotation",
            ),
        );
    }
    if let Some(action) = d.topology_aware_hints_annotation.action()
        && service.metadata.annotations.contains_key(DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS)
    {
        judge.with(
            "deprecations.topologyAwareHintsAnnotation",
            action,
            FieldError::forbidden(
                format!("metadata.annotations[{DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS}]"),
                "deprecated since Kubernetes 1.27: use service.kubernetes.io/topology-mode or spec.trafficDistribution",
            ),
        );
    }
    if let Some(action) = d.tolerate_unready_endpoints_annotation.action()
        && service.metadata.annotations.contains_key(TOLERATE_UNREADY_ENDPOINTS_ANNOTATION)
    {
        judge.with(
            "deprecations.tolerateUnreadyEndpointsAnnotation",
            action,
            FieldError::forbidden(
                format!("metadata.annotations[{TOLERATE_UNREADY_ENDPOINTS_ANNOTATION}]"),
                "ignored since Kubernetes 1.21: use spec.publishNotReadyAddresses",
            ),
        );
    }
}

/// The canonical spelling of an address when `text` is not it: leading-zero IPv4 octets,
/// IPv4-mapped IPv6, IPv6 that is not RFC 5952 (CVE-2021-29923).
pub(crate) fn canonical_form(text: &str) -> Option<String> {
    // Dotted IPv4 is canonical unless an octet has a leading zero: no need to print it.
    if !text.contains(':') && !text.split('.').any(|o| o.len() > 1 && o.starts_with('0')) {
        return None;
    }
    let ip = parse_ip_sloppy(text)?;
    let canonical = match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6.to_string(),
        },
        IpAddr::V4(v4) => v4.to_string(),
    };
    (canonical != text).then_some(canonical)
}

fn non_canonical(judge: &mut Judge<'_>, service: &Service) {
    let Some(action) = judge.settings.non_canonical_ips.action() else { return };
    let spec = &service.spec;
    // Paths are formatted only for the values that are reported.
    if spec.cluster_ip != "None" && !spec.cluster_ip.is_empty() {
        report_non_canonical(judge, action, || "spec.clusterIP".to_owned(), &spec.cluster_ip);
    }
    for (i, ip) in spec.cluster_ips.iter().enumerate().skip(1) {
        report_non_canonical(judge, action, || format!("spec.clusterIPs[{i}]"), ip);
    }
    for (i, ip) in spec.external_ips.iter().enumerate() {
        report_non_canonical(judge, action, || format!("spec.externalIPs[{i}]"), ip);
    }
    if !spec.load_balancer_ip.is_empty() {
        let path = || "spec.loadBalancerIP".to_owned();
        report_non_canonical(judge, action, path, &spec.load_balancer_ip);
    }
    for (i, range) in spec.load_balancer_source_ranges.iter().enumerate() {
        if let Some((ip, _)) = range.split_once('/') {
            let path = || format!("spec.loadBalancerSourceRanges[{i}]");
            report_non_canonical(judge, action, path, ip);
        }
    }
}

fn report_non_canonical(
    judge: &mut Judge<'_>,
    action: Action,
    path: impl FnOnce() -> String,
    text: &str,
) {
    if let Some(canonical) = canonical_form(text) {
        judge.with(
            "nonCanonicalIPs",
            action,
            FieldError::invalid(
                path(),
                GoValue::Str(text.to_owned()),
                format!("must be written in canonical form {}", crate::field::go_quote(&canonical)),
            ),
        );
    }
}

/// The rules over a hand-written or controller-written EndpointSlice (CVE-2021-25740).
pub(crate) fn endpoint_slice(settings: &Settings, slice: &EndpointSlice, out: &mut Vec<Finding>) {
    let mut judge = Judge { settings, out };
    let e = &settings.endpoint_slices;
    let managed =
        slice.metadata.labels.get(LABEL_MANAGED_BY).is_some_and(|m| e.managed_by.contains(m));
    if !managed {
        match e.manual {
            Manual::Allow => {}
            Manual::Forbid => judge.violation(
                "endpointSlices.manual",
                e.action,
                FieldError::forbidden(
                    format!("metadata.labels[{LABEL_MANAGED_BY}]"),
                    format!(
                        "EndpointSlices not managed by {} are not allowed",
                        e.managed_by.join(" or ")
                    ),
                ),
            ),
            Manual::RestrictAddresses => {
                for (i, endpoint) in slice.endpoints.iter().enumerate() {
                    for (j, text) in endpoint.addresses.iter().enumerate() {
                        let path = format!("endpoints[{i}].addresses[{j}]");
                        let Some(ip) = address(text) else { continue };
                        if let Some(denied) =
                            e.denied_address_cidrs.iter().find(|c| c.net.contains(&ip))
                        {
                            judge.violation(
                                "endpointSlices.deniedAddressCIDRs",
                                e.action,
                                FieldError::forbidden(
                                    path.as_str(),
                                    format!(
                                        "{} lies in the denied range {}",
                                        crate::field::go_quote(text),
                                        denied.text
                                    ),
                                ),
                            );
                        }
                        if !e.allowed_address_cidrs.is_empty()
                            && !in_any(ip, &e.allowed_address_cidrs)
                        {
                            judge.violation(
                                "endpointSlices.allowedAddressCIDRs",
                                e.action,
                                FieldError::forbidden(
                                    path.as_str(),
                                    format!(
                                        "{} is outside the allowed ranges {}",
                                        crate::field::go_quote(text),
                                        cidr_list(&e.allowed_address_cidrs)
                                    ),
                                ),
                            );
                        }
                    }
                }
            }
        }
    }
    if let Some(action) = settings.non_canonical_ips.action() {
        for (i, endpoint) in slice.endpoints.iter().enumerate() {
            for (j, text) in endpoint.addresses.iter().enumerate() {
                report_non_canonical(
                    &mut judge,
                    action,
                    || format!("endpoints[{i}].addresses[{j}]"),
                    text,
                );
            }
        }
    }
}
