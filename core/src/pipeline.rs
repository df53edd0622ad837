//! The whole pipeline over a scenario: parse → profile → (per Service, in stream order)
//! defaulting → allocation → report. Later stages (validation, proxy rules) hang off [`World`].

use std::collections::BTreeMap;

use crate::allocation::{AllocFailure, Cluster, ServiceAllocation};
use crate::defaulting::default_service;
use crate::diagnostic::{Diagnostic, ObjectRef, Severity};
use crate::manifest::{self, Input, Located, Object};
use crate::model::{EndpointSlice, Endpoints, KubeProxyConfiguration, Node, Positions, Service};
use crate::profile::Profile;
use crate::report::{
    AllocationReport, BandReport, PortRangeReport, PortReport, RangeReport, Report, ServiceReport,
};
use crate::source::Source;

/// Annotation that turns a Service document into a delete of that Service.
pub const OPERATION_ANNOTATION: &str = "svclab.dev/operation";

/// How `check` treats the objects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckOptions {
    /// Validate objects exactly as written: no defaulting, no allocation (`--no-defaults`).
    pub no_defaults: bool,
    /// `svclab check --policy FILE`: ServicePolicy documents or the bare settings, YAML or
    /// JSON, in effect before every object (ServicePolicy documents inside the scenario apply
    /// to the objects after them, by `metadata.name`).
    pub policy: Option<Input>,
    /// The requester; `None` makes user-based policy rules report `policy:skipped`.
    pub user_info: Option<crate::policy::UserInfo>,
}

/// A Service as the cluster stores it after the stream, with what it holds.
#[derive(Debug, Clone)]
pub struct StoredService {
    /// The defaulted, allocated object.
    pub service: Service,
    /// Field positions of the document that last wrote it.
    pub positions: Positions,
    pub(crate) allocation: ServiceAllocation,
}

/// The cluster state after a scenario: what rendering and tracing read.
#[derive(Debug, Clone)]
pub struct World {
    /// The profile in force.
    pub profile: Profile,
    pub(crate) cluster: Option<Cluster>,
    /// Live Services by (namespace, name).
    pub services: BTreeMap<(String, String), StoredService>,
    /// EndpointSlices in stream order.
    pub endpoint_slices: Vec<Located<EndpointSlice>>,
    /// v1 Endpoints in stream order.
    pub endpoints: Vec<Located<Endpoints>>,
    /// Nodes in stream order.
    pub nodes: Vec<Located<Node>>,
    /// The last KubeProxyConfiguration.
    pub kube_proxy: Option<Located<KubeProxyConfiguration>>,
    /// Pasted iptables-save dumps.
    pub iptables_dumps: Vec<(String, Source)>,
    /// `status` of live Services as the manifests wrote it: the apiserver drops status on
    /// create, but a scenario uses it to play the load-balancer controller (kube-proxy reads
    /// `status.loadBalancer.ingress`).
    pub service_status: BTreeMap<(String, String), crate::model::ServiceStatus>,
}

/// Runs the pipeline and returns the report.
pub fn check(inputs: &[Input], options: &CheckOptions) -> Report {
    evaluate(inputs, options).1
}

/// Runs the pipeline and returns the resulting cluster state with the report.
pub fn evaluate(inputs: &[Input], options: &CheckOptions) -> (World, Report) {
    evaluate_with(inputs, options, &crate::policy::Context::default())
}

/// The policy in effect and what the host knows for it, as one object is judged.
struct PolicyScope<'a> {
    policies: crate::policy::Policies,
    context: &'a crate::policy::Context,
    user_info: Option<&'a crate::policy::UserInfo>,
}

/// [`evaluate`] with what an admission host knows (or lacks) about the request.
pub(crate) fn evaluate_with(
    inputs: &[Input],
    options: &CheckOptions,
    context: &crate::policy::Context,
) -> (World, Report) {
    let scenario = manifest::parse(inputs);
    let mut diagnostics = scenario.diagnostics;
    let profile_object = scenario.objects.iter().rev().find_map(|o| match o {
        Object::ClusterProfile(p) => Some(p),
        _ => None,
    });
    let profile = Profile::from_scenario(profile_object, &mut diagnostics);
    let service_cidrs = collect_service_cidrs(&scenario.objects, &profile, &mut diagnostics);
    let cluster = match Cluster::new(&profile, &service_cidrs) {
        Ok(c) => Some(c),
        Err(err) => {
            diagnostics.push(Diagnostic {
                severity: Severity::Error,
                object: Some(ObjectRef { kind: "ServiceCIDR".into(), ..ObjectRef::default() }),
                field: "spec.cidrs".into(),
                reason: "FieldValueInvalid".into(),
                message: err.to_string(),
                source: None,
            });
            None
        }
    };
    let mut world = World {
        profile,
        cluster,
        services: BTreeMap::new(),
        endpoint_slices: Vec::new(),
        endpoints: Vec::new(),
        nodes: Vec::new(),
        kube_proxy: None,
        iptables_dumps: Vec::new(),
        service_status: BTreeMap::new(),
    };
    let mut scope = PolicyScope {
        policies: crate::policy::Policies::from_input(
            options.policy.as_ref(),
            &world.profile,
            context.decoding,
            &mut diagnostics,
        ),
        context,
        user_info: options.user_info.as_ref(),
    };
    let mut service_reports = Vec::new();
    for object in scenario.objects {
        match object {
            Object::Service(located) => {
                let namespace = match located.value.metadata.namespace.as_str() {
                    "" => "default".to_owned(),
                    ns => ns.to_owned(),
                };
                let key = (namespace, located.value.metadata.name.clone());
                let status = located.value.status.clone();
                let report = if options.no_defaults {
                    validate_as_written(&mut world, located, &scope, &mut diagnostics)
                } else {
                    apply_service(&mut world, located, &scope, &mut diagnostics)
                };
                service_reports.push(report);
                if world.services.contains_key(&key) && !status.load_balancer_ingress.is_empty() {
                    world.service_status.insert(key, status);
                } else {
                    world.service_status.remove(&key);
                }
            }
            Object::EndpointSlice(slice) => apply_endpoint_slice(
                &mut world,
                slice,
                options.no_defaults,
                &scope,
                &mut diagnostics,
            ),
            Object::ServicePolicy(policy) => {
                scope.policies.apply(&policy, &world.profile, context.decoding, &mut diagnostics)
            }
            Object::Endpoints(e) => world.endpoints.push(e),
            Object::Node(n) => world.nodes.push(n),
            Object::KubeProxyConfiguration(k) => world.kube_proxy = Some(k),
            Object::IptablesSave { text, source } => world.iptables_dumps.push((text, source)),
            Object::ClusterProfile(_) | Object::ServiceCidr(_) => {}
        }
    }
    let (ranges, node_port_range) = range_reports(&world);
    let report = Report {
        api_version: crate::report::REPORT_API_VERSION.to_owned(),
        kind: "Report".to_owned(),
        profile: world.profile.summary(),
        services: service_reports,
        ranges,
        node_port_range,
        diagnostics,
        rules: None,
    };
    // kube-proxy rules are part of the report when the scenario says anything about the
    // dataplane (endpoints, nodes, kube-proxy configuration or a pasted dump).
    let proxy_related = !world.endpoint_slices.is_empty()
        || !world.endpoints.is_empty()
        || !world.nodes.is_empty()
        || world.kube_proxy.is_some()
        || !world.iptables_dumps.is_empty();
    let report = Report {
        rules: if proxy_related { crate::proxy::report_rules(&world) } else { None },
        ..report
    };
    (world, report)
}

/// The source of a field of an object.
pub(crate) fn source_of(positions: &Positions, field: &str) -> Source {
    let pos = positions.of(field);
    Source {
        file: positions.file().to_owned(),
        document: positions.document(),
        line: pos.line,
        column: pos.column,
    }
}

fn collect_service_cidrs(
    objects: &[Object],
    profile: &Profile,
    diags: &mut Vec<Diagnostic>,
) -> Vec<ipnet::IpNet> {
    let mut nets = Vec::new();
    for object in objects {
        let Object::ServiceCidr(located) = object else { continue };
        let object_ref = ObjectRef {
            kind: "ServiceCIDR".into(),
            namespace: String::new(),
            name: located.value.metadata.name.clone(),
        };
        if !profile.multi_cidr() {
            diags.push(Diagnostic {
                severity: Severity::Warning,
                object: Some(object_ref),
                field: String::new(),
                reason: "Ignored".into(),
                message: format!(
                    "ServiceCIDR objects are ignored: MultiCIDRServiceAllocator is off in Kubernetes {}",
                    profile.version
                ),
                source: Some(source_of(&located.positions, "")),
            });
            continue;
        }
        let json = profile.json_field_values();
        match service_cidr_nets(&located.value.cidrs) {
            Ok(parsed) => {
                for (i, net) in parsed.into_iter().enumerate() {
                    // The IPAddress allocator refuses IPv6 prefixes shorter than /64; the object is
                    // stored but its allocator never becomes ready.
                    if let Err(err) = crate::allocation::IpAddressAllocator::new(net, 0, 0) {
                        let field = format!("spec.cidrs[{i}]");
                        diags.push(Diagnostic {
                            severity: Severity::Warning,
                            object: Some(object_ref.clone()),
                            field: field.clone(),
                            reason: "AllocatorNotReady".into(),
                            message: format!(
                                "ServiceCIDR {:?} has no allocator: {err}",
                                located.value.metadata.name
                            ),
                            source: Some(source_of(&located.positions, &field)),
                        });
                        continue;
                    }
                    nets.push(net);
                }
            }
            Err(errors) => {
                for e in errors {
                    diags.push(e.to_diagnostic(&object_ref, &located.positions, json));
                }
            }
        }
    }
    nets
}

/// `ValidateServiceCIDR` of `spec.cidrs`: one or two CIDRs, at most one per family.
fn service_cidr_nets(cidrs: &[String]) -> Result<Vec<ipnet::IpNet>, Vec<crate::field::FieldError>> {
    use crate::field::{FieldError, GoValue};
    let mut errors = Vec::new();
    if cidrs.is_empty() {
        errors.push(FieldError::required("spec.cidrs", "at least one CIDR required"));
    } else if cidrs.len() > 2 {
        errors.push(FieldError::invalid(
            "spec.cidrs",
            GoValue::strings(cidrs),
            "may only hold up to 2 values",
        ));
    }
    let mut nets = Vec::new();
    for (i, text) in cidrs.iter().enumerate() {
        match crate::net::parse_cidr_sloppy(text) {
            Some((_, net)) => nets.push(net),
            None => errors.push(FieldError::invalid(
                format!("spec.cidrs[{i}]"),
                GoValue::Str(text.clone()),
                "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
            )),
        }
    }
    if errors.is_empty()
        && nets.len() == 2
        && crate::net::IpFamily::of_net(&nets[0]) == crate::net::IpFamily::of_net(&nets[1])
    {
        errors.push(FieldError::invalid(
            "spec.cidrs",
            GoValue::strings(cidrs),
            "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64",
        ));
    }
    if errors.is_empty() { Ok(nets) } else { Err(errors) }
}

fn object_ref(service: &Service) -> ObjectRef {
    ObjectRef {
        kind: "Service".into(),
        namespace: service.metadata.namespace.clone(),
        name: service.metadata.name.clone(),
    }
}

/// Creates, updates or deletes one Service document against the cluster.
fn apply_service(
    world: &mut World,
    located: Located<Service>,
    scope: &PolicyScope<'_>,
    diags: &mut Vec<Diagnostic>,
) -> ServiceReport {
    let json = world.profile.json_field_values();
    let Located { value: mut service, positions, .. } = located;
    let written_status = service.status.clone();
    default_service(&mut service);
    let salt = format!("{}/{}/{}", positions.file(), positions.document(), positions.object().line);
    crate::validation::generate_name(&mut service.metadata, world.profile.seed, &salt);
    let key = (service.metadata.namespace.clone(), service.metadata.name.clone());
    let document_source = source_of(&positions, "");
    let is_delete =
        service.metadata.annotations.get(OPERATION_ANNOTATION).is_some_and(|v| v == "delete");
    let Some(cluster) = world.cluster.as_mut() else {
        return rejected_report(None, &service, document_source);
    };
    if is_delete {
        return match world.services.remove(&key) {
            Some(stored) => {
                cluster.release(&stored.allocation);
                service_report(
                    Some(cluster),
                    &stored.service,
                    "deleted",
                    &ServiceAllocation::default(),
                    document_source,
                )
            }
            None => {
                diags.push(Diagnostic {
                    severity: Severity::Error,
                    object: Some(object_ref(&service)),
                    field: String::new(),
                    reason: "NotFound".into(),
                    message: format!("services {:?} not found", service.metadata.name),
                    source: Some(document_source.clone()),
                });
                rejected_report(Some(cluster), &service, document_source)
            }
        };
    }
    let previous = world.services.remove(&key);
    if let Some(old) = &previous {
        // beginUpdate: `patchAllocatedValues`, then `normalizeClusterIPs` (update branch). The
        // stored object is already fully defaulted, so `defaultOnReadService(old)` has nothing to do.
        patch_allocated_values(&old.service, &mut service);
        normalize_cluster_ips_update(&old.service, &mut service);
    }
    let outcome = if previous.is_some() { "updated" } else { "created" };
    crate::validation::prepare_service_for_create(&mut service, &world.profile);
    // BeginCreate/BeginUpdate allocate before the strategy's PrepareFor*/Validate run, so
    // allocation errors win over validation errors. See: genericregistry Store.Create/Update.
    let allocated = match &previous {
        Some(old) => cluster.update(&mut service, &old.service),
        None => cluster.create(&mut service),
    };
    match allocated {
        Ok(txn) => {
            // Validation runs on the defaulted, allocated object (validation.md §2 steps 4–6).
            let errors = match &previous {
                Some(old) => {
                    // PrepareForUpdate drops fields the new type makes meaningless.
                    crate::validation::drop_type_dependent_fields(&mut service, &old.service);
                    // `kubectl apply` patches the stored object, so the update carries its
                    // resourceVersion.
                    if service.metadata.resource_version.is_empty() {
                        service.metadata.resource_version =
                            if old.service.metadata.resource_version.is_empty() {
                                "1".to_owned()
                            } else {
                                old.service.metadata.resource_version.clone()
                            };
                    }
                    crate::validation::validate_service_update(
                        &service,
                        &old.service,
                        &world.profile,
                    )
                }
                None => crate::validation::validate_service_create(&service, &world.profile),
            };
            if !errors.is_empty() {
                // finishUpdate(false): undo what this request took; the old object keeps all.
                cluster.revert(txn);
                let object = object_ref(&service);
                diags.extend(errors.iter().map(|e| e.to_diagnostic(&object, &positions, json)));
                if let Some(old) = previous {
                    world.services.insert(key, old);
                }
                return rejected_report(Some(cluster), &service, document_source);
            }
            // The operator's policy judges what the apiserver accepted; a deny is a refusal
            // like any other: nothing stored, the allocations of this request undone.
            let judged = !scope.policies.is_empty() && scope.context.judges(positions.file());
            let judgement = judged.then(|| {
                let subject = crate::policy::ServiceSubject {
                    service: &service,
                    old: previous.as_ref().map(|old| &old.service),
                    requested: Some(txn.requested()),
                    status: &written_status,
                };
                let env = crate::policy::Env {
                    cluster: Some(&*cluster),
                    user_info: scope.user_info,
                    inventory: crate::policy::inventory(scope.context, &world.services),
                    old_object_missing: scope.context.old_object_missing,
                    status_only: scope.context.status_only,
                };
                scope.policies.judge_service(&subject, &env, &positions, json)
            });
            if let Some(judgement) = &judgement
                && judgement.denied
            {
                cluster.revert(txn);
                diags.extend(judgement.diagnostics.iter().cloned());
                if let Some(old) = previous {
                    world.services.insert(key, old);
                }
                return rejected_report(Some(cluster), &service, document_source);
            }
            push_service_warnings(&world.profile, &service, &positions, diags);
            diags.extend(judgement.into_iter().flat_map(|j| j.diagnostics));
            // finishUpdate(true): release what the old object gave up.
            let held = previous.as_ref().map(|old| old.allocation.clone()).unwrap_or_default();
            let allocation = cluster.commit(txn, &held);
            let report =
                service_report(Some(cluster), &service, outcome, &allocation, document_source);
            world.services.insert(key, StoredService { service, positions, allocation });
            report
        }
        Err(failure) => {
            let object = object_ref(&service);
            match failure {
                AllocFailure::Invalid(errors) => {
                    for e in errors {
                        diags.push(e.to_diagnostic(&object, &positions, json));
                    }
                }
                AllocFailure::Internal(message) => diags.push(Diagnostic {
                    severity: Severity::Error,
                    object: Some(object.clone()),
                    field: String::new(),
                    reason: "InternalError".into(),
                    message: format!("Internal error occurred: {message}"),
                    source: Some(document_source.clone()),
                }),
                // A plain Go error from the storage: HTTP 500 with an empty (Unknown) reason and
                // the text as is.
                AllocFailure::Unknown(message) => diags.push(Diagnostic {
                    severity: Severity::Error,
                    object: Some(object.clone()),
                    field: String::new(),
                    reason: "Unknown".into(),
                    message,
                    source: Some(document_source.clone()),
                }),
            }
            if let Some(old) = previous {
                world.services.insert(key, old);
            }
            rejected_report(Some(cluster), &service, document_source)
        }
    }
}

/// `patchAllocatedValues`: a re-applied manifest without the allocated values keeps them.
/// ClusterIP and ClusterIPs come from the old object when empty; a port without a nodePort
/// gets the old nodePort of the same-named port unless that number is also named in both
/// objects; the health-check port is kept while both need one. Families and policy are not
/// patched here (`initIPFamilyFields` infers and inherits them).
fn patch_allocated_values(old: &Service, new: &mut Service) {
    let needs_cluster_ip = |s: &Service| s.spec.type_ != "ExternalName";
    if needs_cluster_ip(old) && needs_cluster_ip(new) {
        if new.spec.cluster_ip.is_empty() {
            new.spec.cluster_ip = old.spec.cluster_ip.clone();
        }
        if new.spec.cluster_ips.is_empty() && !old.spec.cluster_ips.is_empty() {
            new.spec.cluster_ips = old.spec.cluster_ips.clone();
        }
    }
    let needs_node_port =
        |s: &Service| s.spec.type_ == "NodePort" || s.spec.type_ == "LoadBalancer";
    if needs_node_port(old) && needs_node_port(new) {
        let named = |s: &Service| {
            s.spec.ports.iter().map(|p| p.node_port).filter(|p| *p != 0).collect::<Vec<_>>()
        };
        let (old_used, new_used) = (named(old), named(new));
        // The last old port of a name wins, as a Go map insert would.
        let by_name: BTreeMap<&str, i32> =
            old.spec.ports.iter().map(|p| (p.name.as_str(), p.node_port)).collect();
        for port in &mut new.spec.ports {
            if port.node_port == 0 {
                let old_value = by_name.get(port.name.as_str()).copied().unwrap_or(0);
                if !(old_used.contains(&old_value) && new_used.contains(&old_value)) {
                    port.node_port = old_value;
                }
            }
        }
    }
    let needs_hc =
        |s: &Service| s.spec.type_ == "LoadBalancer" && s.spec.external_traffic_policy == "Local";
    if needs_hc(old) && needs_hc(new) && new.spec.health_check_node_port == 0 {
        new.spec.health_check_node_port = old.spec.health_check_node_port;
    }
}

/// `normalizeClusterIPs` (update branch): keep `clusterIP` and `clusterIPs` in step when a
/// client only sent or only changed the singular field.
fn normalize_cluster_ips_update(old: &Service, new: &mut Service) {
    if !old.spec.cluster_ips.is_empty()
        && new.spec.cluster_ips.is_empty()
        && old.spec.cluster_ip == new.spec.cluster_ip
    {
        new.spec.cluster_ips = old.spec.cluster_ips.clone();
    }
    if old.spec.cluster_ip != new.spec.cluster_ip {
        let same_ips = old.spec.cluster_ips == new.spec.cluster_ips;
        if !old.spec.cluster_ip.is_empty() && new.spec.cluster_ip.is_empty() {
            if same_ips {
                new.spec.cluster_ips.clear();
            }
        } else if same_ips {
            new.spec.cluster_ips = vec![new.spec.cluster_ip.clone()];
        }
    }
}

/// `--no-defaults`: the object as written (the vectors' `validate` mode), nothing allocated. A
/// later document with the same namespace and name is validated as an update of the earlier one.
fn validate_as_written(
    world: &mut World,
    located: Located<Service>,
    scope: &PolicyScope<'_>,
    diags: &mut Vec<Diagnostic>,
) -> ServiceReport {
    let json = world.profile.json_field_values();
    let Located { value: service, positions, .. } = located;
    let source = source_of(&positions, "");
    let key = (service.metadata.namespace.clone(), service.metadata.name.clone());
    let previous = world.services.get(&key);
    let errors = match previous {
        Some(old) => {
            crate::validation::validate_service_update(&service, &old.service, &world.profile)
        }
        None => crate::validation::validate_service_create(&service, &world.profile),
    };
    let outcome = if previous.is_some() { "updated" } else { "validated" };
    if !errors.is_empty() {
        let object = object_ref(&service);
        diags.extend(errors.iter().map(|e| e.to_diagnostic(&object, &positions, json)));
        return rejected_report(None, &service, source);
    }
    let judged = !scope.policies.is_empty() && scope.context.judges(positions.file());
    let judgement = judged.then(|| {
        let subject = crate::policy::ServiceSubject {
            service: &service,
            old: previous.map(|old| &old.service),
            requested: None,
            status: &service.status,
        };
        let env = crate::policy::Env {
            cluster: None,
            user_info: scope.user_info,
            inventory: crate::policy::inventory(scope.context, &world.services),
            old_object_missing: scope.context.old_object_missing,
            status_only: scope.context.status_only,
        };
        scope.policies.judge_service(&subject, &env, &positions, json)
    });
    if let Some(judgement) = &judgement
        && judgement.denied
    {
        diags.extend(judgement.diagnostics.iter().cloned());
        return rejected_report(None, &service, source);
    }
    push_service_warnings(&world.profile, &service, &positions, diags);
    diags.extend(judgement.into_iter().flat_map(|j| j.diagnostics));
    let report = service_report(None, &service, outcome, &ServiceAllocation::default(), source);
    world.services.insert(
        key,
        StoredService { service, positions, allocation: ServiceAllocation::default() },
    );
    report
}

/// Warnings of an accepted Service (`Warning`) and svclab's advisories (`SvclabAdvisory`).
fn push_service_warnings(
    profile: &Profile,
    service: &Service,
    positions: &Positions,
    diags: &mut Vec<Diagnostic>,
) {
    let object = object_ref(service);
    let warnings =
        crate::validation::service_warnings(service, profile).into_iter().map(|w| (w, "Warning"));
    let advisories =
        crate::validation::service_advisories(service).into_iter().map(|w| (w, "SvclabAdvisory"));
    for (w, reason) in warnings.chain(advisories) {
        diags.push(Diagnostic {
            severity: Severity::Warning,
            object: Some(object.clone()),
            source: Some(source_of(positions, &w.path)),
            field: w.path,
            reason: reason.to_owned(),
            message: w.message,
        });
    }
}

/// Creates or updates an EndpointSlice: v1 defaulting (unless `--no-defaults`), validation,
/// warnings. A rejected slice is not stored.
fn apply_endpoint_slice(
    world: &mut World,
    mut located: Located<EndpointSlice>,
    no_defaults: bool,
    scope: &PolicyScope<'_>,
    diags: &mut Vec<Diagnostic>,
) {
    if !no_defaults {
        crate::validation::default_endpoint_slice(&mut located.value, &world.profile);
        let p = &located.positions;
        let salt = format!("{}/{}/{}", p.file(), p.document(), p.object().line);
        crate::validation::generate_name(&mut located.value.metadata, world.profile.seed, &salt);
    }
    let slice = &located.value;
    let object = ObjectRef {
        kind: "EndpointSlice".into(),
        namespace: slice.metadata.namespace.clone(),
        name: slice.metadata.name.clone(),
    };
    let existing = world.endpoint_slices.iter().position(|s| {
        !slice.metadata.name.is_empty()
            && s.value.metadata.name == slice.metadata.name
            && s.value.metadata.namespace == slice.metadata.namespace
    });
    let errors = match existing {
        Some(i) => crate::validation::validate_endpoint_slice_update(
            slice,
            &world.endpoint_slices[i].value,
            &world.profile,
        ),
        None => crate::validation::validate_endpoint_slice_create(slice, &world.profile),
    };
    if !errors.is_empty() {
        let json = world.profile.json_field_values();
        diags.extend(errors.iter().map(|e| e.to_diagnostic(&object, &located.positions, json)));
        return;
    }
    let judged = !scope.policies.is_empty() && scope.context.judges(located.positions.file());
    let judgement = judged.then(|| {
        scope.policies.judge_endpoint_slice(
            slice,
            scope.user_info,
            &located.positions,
            world.profile.json_field_values(),
        )
    });
    if let Some(judgement) = &judgement
        && judgement.denied
    {
        diags.extend(judgement.diagnostics.iter().cloned());
        return;
    }
    for w in crate::validation::endpoint_slice_warnings(slice, existing.is_none(), &world.profile) {
        diags.push(Diagnostic {
            severity: Severity::Warning,
            object: Some(object.clone()),
            source: Some(source_of(&located.positions, &w.path)),
            field: w.path,
            reason: "Warning".to_owned(),
            message: w.message,
        });
    }
    diags.extend(judgement.into_iter().flat_map(|j| j.diagnostics));
    match existing {
        Some(i) => world.endpoint_slices[i] = located,
        None => world.endpoint_slices.push(located),
    }
}

/// The report of a Service the cluster refused: it holds nothing.
fn rejected_report(cluster: Option<&Cluster>, service: &Service, source: Source) -> ServiceReport {
    service_report(cluster, service, "rejected", &ServiceAllocation::default(), source)
}

fn service_report(
    cluster: Option<&Cluster>,
    service: &Service,
    outcome: &str,
    allocation: &ServiceAllocation,
    source: Source,
) -> ServiceReport {
    let allocations = allocation
        .ips
        .iter()
        .map(|(_, ip, requested)| AllocationReport {
            ip: ip.to_string(),
            band: cluster.map_or("none", |c| c.ip_band(*ip).as_str()).to_owned(),
            requested: *requested,
        })
        .collect();
    let ports = service
        .spec
        .ports
        .iter()
        .map(|p| {
            let node_port = u32::try_from(p.node_port).unwrap_or(0);
            PortReport {
                name: p.name.clone(),
                port: p.port,
                protocol: p.protocol.clone(),
                target_port: match &p.target_port {
                    crate::model::IntOrString::Int(i) => i.to_string(),
                    crate::model::IntOrString::String(s) => s.clone(),
                },
                node_port,
                node_port_band: if node_port == 0 {
                    String::new()
                } else {
                    cluster.map_or("none", |c| c.port_band(node_port).as_str()).to_owned()
                },
            }
        })
        .collect();
    ServiceReport {
        namespace: service.metadata.namespace.clone(),
        name: service.metadata.name.clone(),
        type_: service.spec.type_.clone(),
        outcome: outcome.to_owned(),
        cluster_ips: service.spec.cluster_ips.clone(),
        ip_families: service.spec.ip_families.clone(),
        ip_family_policy: service.spec.ip_family_policy.clone().unwrap_or_default(),
        allocations,
        ports,
        health_check_node_port: u32::try_from(service.spec.health_check_node_port).unwrap_or(0),
        source,
    }
}

fn range_reports(world: &World) -> (Vec<RangeReport>, PortRangeReport) {
    let band = |b: Option<(String, String)>| b.map(|(first, last)| BandReport { first, last });
    let mut ranges = Vec::new();
    let empty_ports = PortRangeReport {
        range: world.profile.service_node_port_range.to_string(),
        size: world.profile.service_node_port_range.size,
        used: 0,
        free: world.profile.service_node_port_range.size,
        static_band: None,
        dynamic_band: None,
    };
    let Some(cluster) = &world.cluster else { return (ranges, empty_ports) };
    // Primary family first.
    let mut families: Vec<_> = cluster.families().iter().collect();
    families.sort_by_key(|(f, _)| **f != cluster.primary());
    for (family, allocator) in families {
        match allocator {
            crate::allocation::FamilyAllocator::Bitmap(r) => ranges.push(RangeReport {
                cidr: r.cidr().to_string(),
                family: family.as_str().to_owned(),
                allocator: "bitmap".into(),
                size: u64::try_from(r.size()).unwrap_or(u64::MAX),
                used: u64::try_from(r.used()).unwrap_or(u64::MAX),
                free: u64::try_from(r.free()).unwrap_or(u64::MAX),
                static_band: band(r.static_band().map(|(a, b)| (a.to_string(), b.to_string()))),
                dynamic_band: band(r.dynamic_band().map(|(a, b)| (a.to_string(), b.to_string()))),
            }),
            crate::allocation::FamilyAllocator::Objects(m) => {
                for net in m.cidrs() {
                    let Some((g, used)) = m.geometry(&net) else { continue };
                    let ip = |v: u128| g.ip(v).to_string();
                    ranges.push(RangeReport {
                        cidr: net.to_string(),
                        family: family.as_str().to_owned(),
                        allocator: "ipaddress".into(),
                        size: u64::try_from(g.size).unwrap_or(u64::MAX),
                        used: u64::try_from(used).unwrap_or(u64::MAX),
                        free: u64::try_from(g.size - used).unwrap_or(u64::MAX),
                        static_band: band(
                            (g.offset > 0).then(|| (ip(g.first), ip(g.first + g.offset - 1))),
                        ),
                        dynamic_band: band(
                            (g.offset < g.size)
                                .then(|| (ip(g.first + g.offset), ip(g.first + g.size - 1))),
                        ),
                    });
                }
            }
        }
    }
    let ports = &cluster.ports;
    let port_band = |b: Option<(u32, u32)>| band(b.map(|(a, z)| (a.to_string(), z.to_string())));
    let node_port_range = PortRangeReport {
        range: ports.range().to_string(),
        size: ports.range().size,
        used: ports.used(),
        free: ports.free(),
        static_band: port_band(ports.static_band()),
        dynamic_band: port_band(ports.dynamic_band()),
    };
    (ranges, node_port_range)
}

#[cfg(test)]
mod tests;
