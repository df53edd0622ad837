//! The whole pipeline over a scenario, in the order a cluster sees it: read the objects, settle
//! the profile and the service ranges, take every object in stream order (create, update when
//! the same Service appears again, delete with the `svclab.dev/operation: delete` annotation),
//! and report what the cluster holds afterwards.
//!
//! A Service goes through kube-apiserver's steps: defaulting, the registry's preparation,
//! allocation (which wins over validation, as in the generic registry `Store.Create`/`Update`),
//! validation of the allocated object, then commit or rollback.

pub(crate) mod suite;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::allocation::{AllocFailure, Allocators, PANIC_RESPONSE, ServiceAllocation, Transaction};
use crate::defaulting::default_service;
use crate::diagnostic::{Diagnostic, ObjectRef};
use crate::field::{FieldError, go_quote};
use crate::manifest::{self, Input, Object};
use crate::model::well_known::OPERATION_ANNOTATION;
use crate::model::{
    ClusterProfile, EndpointSlice, Located, Positions, Service, ServiceKey, ServiceStatus,
};
use crate::policy::{self, UserInfo};
use crate::profile::Profile;
use crate::proxy::{self, RenderError, RenderOptions, RulesetWriter};
use crate::registry;
use crate::report::{Report, ServiceReport};
use crate::source::Source;
use crate::validation;
use crate::world::{StoredService, World};

mod onward;
mod session;

pub(crate) use onward::{evaluate_objects, write_onward};
pub use session::{EditError, Session};

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
    pub user_info: Option<UserInfo>,
    /// `--explain-release`: give every diagnostic the releases in which upstream produces
    /// exactly its text for this scenario (the scenario is evaluated again at every release
    /// svclab models), with the release-table rows behind it.
    pub explain_release: bool,
    /// Leave the kube-proxy rulesets out of the report. For callers that never read them
    /// (`check`'s text output, `render` and `trace`, which render the world themselves,
    /// admission): at 10,000 Services they are tens of megabytes of text.
    pub omit_rules: bool,
}

impl CheckOptions {
    /// What `render` and `trace` need of the pipeline: the world with defaults applied, not
    /// the report's rulesets (they render the world themselves).
    pub const WORLD_ONLY: CheckOptions = CheckOptions {
        no_defaults: false,
        policy: None,
        user_info: None,
        explain_release: false,
        omit_rules: true,
    };
}

/// Runs the pipeline and returns the report.
pub fn check(inputs: &[Input], options: &CheckOptions) -> Report {
    evaluate(inputs, options).1
}

/// Runs the pipeline and returns the resulting cluster state with the report (without its
/// rulesets when `options.omit_rules`).
pub fn evaluate(inputs: &[Input], options: &CheckOptions) -> (World, Report) {
    evaluate_with(inputs, options, &policy::Context::default())
}

/// The operator's policies in effect and what the host knows for them, as objects are judged.
struct PolicyScope<'a> {
    policies: policy::Policies,
    context: &'a policy::Context,
    user_info: Option<&'a UserInfo>,
    selectors: policy::SelectorIndex,
    /// Whether `selectors` follows the stored Services: only once a policy is in effect (an
    /// index of 10,000 Services is megabytes nobody reads otherwise); it is filled from the
    /// stored Services when the first policy comes into effect.
    indexing: bool,
}

impl PolicyScope<'_> {
    /// Starts indexing selectors once a policy is in effect, from the Services stored so far
    /// (the index is only ever read through the stored Services, so what it would have
    /// recorded for Services since changed or deleted never matters).
    fn index_if_judging(&mut self, services: &BTreeMap<ServiceKey, StoredService>) {
        if !self.indexing && !self.policies.is_empty() {
            self.indexing = true;
            for (key, stored) in services {
                self.selectors.stored(key, &stored.service);
            }
        }
    }

    /// A Service was stored under `key`.
    fn stored(&self, key: &ServiceKey, service: &Service) {
        if self.indexing {
            self.selectors.stored(key, service);
        }
    }

    /// Whether the policy judges an object written at `positions`.
    fn judges(&self, positions: &Positions) -> bool {
        !self.policies.is_empty() && self.context.judges(positions.file())
    }

    /// The environment of one judgement over the stored Services.
    fn env<'w>(
        &'w self,
        services: &'w BTreeMap<ServiceKey, StoredService>,
        allocators: Option<&'w Allocators>,
    ) -> policy::Env<'w> {
        policy::Env {
            allocators,
            user_info: self.user_info,
            inventory: policy::inventory(self.context, services),
            selectors: &self.selectors,
            old_object_missing: self.context.old_object_missing,
            status_only: self.context.status_only,
        }
    }
}

/// [`evaluate`] with what an admission host knows (or lacks) about the request.
pub(crate) fn evaluate_with(
    inputs: &[Input],
    options: &CheckOptions,
    context: &policy::Context,
) -> (World, Report) {
    evaluate_reading(inputs, options, context, None)
}

/// [`evaluate_with`], reading through `cache` ([`Session`]).
fn evaluate_reading(
    inputs: &[Input],
    options: &CheckOptions,
    context: &policy::Context,
    cache: Option<&mut manifest::ReadCache>,
) -> (World, Report) {
    let (scenario, profile, diags) = read_at_own_release(inputs, cache);
    // Decoded by the host against this profile, if it did.
    let decoded = context.decoded.as_ref();
    let mut run = Evaluation::begin(&scenario.objects, profile, diags, options, context, decoded);
    run.keep_service_reports(&scenario.objects);
    run.apply_all(scenario.objects);
    let (world, mut report) = run.finish();
    if options.explain_release {
        explain_releases(inputs, options, context, &mut report);
    }
    (world, report)
}

/// The report of the scenario evaluated at another release (a minor) than its own, for
/// `--explain-release`: the profile moved there ([`profile_at`]), the policies decoded anew.
fn evaluate_at_release(
    inputs: &[Input],
    options: &CheckOptions,
    context: &policy::Context,
    minor: u32,
) -> Report {
    let scenario = manifest::read(inputs);
    let profile = profile_at(scenario.cluster_profile(), minor);
    let scenario = scenario.at_release(&profile);
    let diags = scenario.diagnostics;
    let mut run = Evaluation::begin(&scenario.objects, profile, diags, options, context, None);
    run.keep_service_reports(&scenario.objects);
    run.apply_all(scenario.objects);
    run.finish().1
}

/// The cluster state alone, for a render: no Service reports, no policy (a render judges
/// nothing), the inputs dropped as soon as they are read.
fn evaluate_world(inputs: Vec<Input>) -> World {
    let (scenario, profile, diags) = read_at_own_release(&inputs, None);
    drop(inputs);
    let context = policy::Context::default();
    let options = &CheckOptions::WORLD_ONLY;
    let mut run = Evaluation::begin(&scenario.objects, profile, diags, options, &context, None);
    run.apply_all(scenario.objects);
    run.world
}

/// Renders the scenario's ruleset for a host that writes it straight to its output: the cluster
/// state is evaluated without the Services' reports (a render reads none), the inputs are
/// dropped once read, and the ruleset is handed to `out` piece by piece, in order (see
/// [`render_ruleset`]). The same bytes as [`crate::render`] of [`evaluate`]'s world with
/// [`CheckOptions::WORLD_ONLY`].
pub fn render_to(
    inputs: Vec<Input>,
    options: &RenderOptions,
    out: &mut dyn FnMut(&str),
) -> Result<(), RenderError> {
    render_ruleset(inputs, options)?.write_to(out);
    Ok(())
}

/// [`render_to`]'s ruleset itself, for a host that hands it over in pieces when asked
/// ([`RulesetWriter::next_piece`]) rather than writing it all at once.
pub fn render_ruleset(
    inputs: Vec<Input>,
    options: &RenderOptions,
) -> Result<RulesetWriter, RenderError> {
    crate::world::ruleset(evaluate_world(inputs), options)
}

/// One evaluation under way: the cluster state, the policies in effect and what the report
/// collects, fed the scenario's objects one at a time in stream order.
struct Evaluation<'a> {
    world: World,
    scope: PolicyScope<'a>,
    options: &'a CheckOptions,
    diags: Vec<Diagnostic>,
    /// The Service documents' reports, when the caller reads them (a render does not).
    services: Option<Vec<ServiceReport>>,
}

impl<'a> Evaluation<'a> {
    /// An empty cluster under `profile`, with the allocators of its ranges and the scenario's
    /// ServiceCIDRs, and the policies of `--policy` in effect: `decoded` when the host decoded
    /// them against this profile, else decoded here.
    fn begin(
        objects: &[Object],
        profile: Profile,
        mut diags: Vec<Diagnostic>,
        options: &'a CheckOptions,
        context: &'a policy::Context,
        decoded: Option<&policy::Policies>,
    ) -> Evaluation<'a> {
        let allocators = new_allocators(&profile, objects, &mut diags);
        let policies = match decoded {
            Some(policies) => policies.clone(),
            None => policy::Policies::from_input(
                options.policy.as_ref(),
                &profile,
                context.decoding,
                &mut diags,
            ),
        };
        let mut world = World::new(profile, allocators);
        // An exact size: at cluster scale this vector of large values would otherwise double
        // its way up and keep the unused part.
        world.endpoint_slices.reserve(count(objects, |o| matches!(o, Object::EndpointSlice(_))));
        let mut scope = PolicyScope {
            policies,
            context,
            user_info: options.user_info.as_ref(),
            selectors: policy::SelectorIndex::default(),
            indexing: false,
        };
        scope.index_if_judging(&world.services);
        Evaluation { world, scope, options, diags, services: None }
    }

    /// Collect a report per Service document from now on.
    fn keep_service_reports(&mut self, objects: &[Object]) {
        let documents = count(objects, |o| matches!(o, Object::Service(_)));
        self.services = Some(Vec::with_capacity(documents));
    }

    fn apply_all(&mut self, objects: impl IntoIterator<Item = Object>) {
        for object in objects {
            self.apply(object);
        }
    }

    /// One object of the stream, as the cluster takes it.
    fn apply(&mut self, object: Object) {
        let world = &mut self.world;
        let diags = &mut self.diags;
        match object {
            Object::Service(located) => {
                let with_report = self.services.is_some();
                let report = store_service(
                    world,
                    Arc::unwrap_or_clone(located),
                    self.options,
                    &self.scope,
                    with_report,
                    diags,
                );
                if let (Some(services), Some(report)) = (&mut self.services, report) {
                    services.push(report);
                }
            }
            Object::EndpointSlice(slice) => {
                store_endpoint_slice(
                    world,
                    Arc::unwrap_or_clone(slice),
                    self.options,
                    &self.scope,
                    diags,
                );
            }
            Object::ServicePolicy(policy) => {
                let decoding = self.scope.context.decoding;
                self.scope.policies.apply(&policy, &world.profile, decoding, diags);
                self.scope.index_if_judging(&world.services);
            }
            Object::Endpoints(e) => world.endpoints.push(Arc::unwrap_or_clone(e)),
            Object::Node(n) => world.store_node(Arc::unwrap_or_clone(n)),
            Object::KubeProxyConfiguration(k) => {
                // What kube-proxy of the profile's release refuses (proxy/startup.rs).
                diags.extend(proxy::configuration_diagnostics(&k, world.profile.version.minor));
                world.kube_proxy = Some(Arc::unwrap_or_clone(k));
            }
            Object::IptablesSave { text, source } => world.iptables_dumps.push((text, source)),
            Object::ClusterProfile(_) | Object::ServiceCidr(_) => {}
        }
    }

    /// The cluster state and its report (with its rulesets unless `omit_rules`).
    fn finish(self) -> (World, Report) {
        let services = self.services.unwrap_or_default();
        let report = Report::new(&self.world, services, self.diags, !self.options.omit_rules);
        (self.world, report)
    }
}

/// How many of the objects are of a kind.
fn count(objects: &[Object], kind: fn(&Object) -> bool) -> usize {
    objects.iter().filter(|o| kind(o)).count()
}

/// The scenario's profile moved to another release: the same gates and ranges where that release
/// accepts them (what it refuses is dropped, as its diagnostics are not this run's).
fn profile_at(chosen: Option<&Located<ClusterProfile>>, minor: u32) -> Profile {
    let Some(located) = chosen else {
        return Profile::for_version(crate::profile::Version { minor, patch: None });
    };
    let mut moved = located.clone();
    let own = moved.value.kubernetes_version.as_deref().and_then(crate::profile::Version::parse);
    moved.value.kubernetes_version = Some(match own {
        Some(v) if v.minor == minor => v.to_string(),
        _ => format!("1.{minor}"),
    });
    Profile::from_scenario(Some(&moved), &mut Vec::new())
}

/// What identifies a diagnostic across releases: everything but its source position.
fn diagnostic_key(
    d: &Diagnostic,
) -> (crate::diagnostic::Severity, Option<ObjectRef>, &str, &str, &str) {
    (d.severity, d.object.clone(), d.field.as_str(), d.reason.as_str(), d.message.as_str())
}

/// `--explain-release`: evaluates the scenario at every release svclab models and records, on
/// each diagnostic of the report, the releases that give exactly the same diagnostic.
fn explain_releases(
    inputs: &[Input],
    options: &CheckOptions,
    context: &policy::Context,
    report: &mut Report,
) {
    let minors = crate::profile::OLDEST_MINOR..=crate::profile::NEWEST_MINOR;
    let runs: Vec<(u32, Report)> =
        minors.map(|minor| (minor, evaluate_at_release(inputs, options, context, minor))).collect();
    for diagnostic in &mut report.diagnostics {
        let key = diagnostic_key(diagnostic);
        let matching: Vec<u32> = runs
            .iter()
            .filter(|(_, r)| r.diagnostics.iter().any(|d| diagnostic_key(d) == key))
            .map(|(minor, _)| *minor)
            .collect();
        diagnostic.releases = Some(crate::diagnostic::ReleaseExplanation {
            releases: release_ranges(&matching),
            changes: validation::release_changes(&diagnostic.message),
        });
    }
}

/// Consecutive minors as ranges: `[24, 25, 26, 30]` → `1.24–1.26`, `1.30`.
fn release_ranges(minors: &[u32]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < minors.len() {
        let start = minors[i];
        let mut end = start;
        while i + 1 < minors.len() && minors[i + 1] == end + 1 {
            i += 1;
            end = minors[i];
        }
        out.push(if start == end { format!("1.{start}") } else { format!("1.{start}–1.{end}") });
        i += 1;
    }
    out
}

/// The scenario read as the release of its own ClusterProfile decodes it, that profile, and
/// the diagnostics so far: the reader's, then the profile's.
fn read_at_own_release(
    inputs: &[Input],
    cache: Option<&mut manifest::ReadCache>,
) -> (manifest::Scenario, Profile, Vec<Diagnostic>) {
    at_own_release(manifest::read_with(inputs, cache))
}

/// A scenario as read ([`manifest::read`]) at the release of its profile, the profile, and
/// the reading's diagnostics.
fn at_own_release(scenario: manifest::Scenario) -> (manifest::Scenario, Profile, Vec<Diagnostic>) {
    let mut profile_diags = Vec::new();
    let profile = Profile::from_scenario(scenario.cluster_profile(), &mut profile_diags);
    let mut scenario = scenario.at_release(&profile);
    let mut diags = std::mem::take(&mut scenario.diagnostics);
    diags.extend(profile_diags);
    (scenario, profile, diags)
}

/// The allocators of the profile's ranges and the scenario's ServiceCIDRs; `None` (with a
/// diagnostic) when they cannot be built, which rejects every Service.
fn new_allocators(
    profile: &Profile,
    objects: &[Object],
    diags: &mut Vec<Diagnostic>,
) -> Option<Allocators> {
    let service_cidrs = registry::service_cidrs(objects, profile, diags);
    match Allocators::new(profile, &service_cidrs) {
        Ok(allocators) => Some(allocators),
        Err(err) => {
            let object = Some(ObjectRef::kind("ServiceCIDR"));
            diags.push(Diagnostic::error(
                object,
                "spec.cidrs",
                "FieldValueInvalid",
                err.to_string(),
            ));
            None
        }
    }
}

/// One Service document: written through the registry (or only validated with
/// `--no-defaults`), with the `status` it carries kept for kube-proxy while the Service lives.
/// The Service's report only `with_report` (a render builds none).
fn store_service(
    world: &mut World,
    located: Located<Service>,
    options: &CheckOptions,
    scope: &PolicyScope<'_>,
    with_report: bool,
    diags: &mut Vec<Diagnostic>,
) -> Option<ServiceReport> {
    // The apiserver drops `status` on create, but a scenario uses it to play the load-balancer
    // controller (kube-proxy reads `status.loadBalancer.ingress`). Most Services carry none,
    // and then, unless an earlier document left some, the key is not even built.
    let status = located.value.status.clone();
    let has_ingress = !status.load_balancer_ingress.is_empty();
    let key = (has_ingress || !world.service_status.is_empty())
        .then(|| ServiceKey::defaulted(&located.value.metadata));
    let report = if options.no_defaults {
        Some(validate_as_written(world, located, scope, diags))
    } else {
        write_service(world, located, scope, with_report, diags)
    };
    if let Some(key) = key {
        if has_ingress && world.services.contains_key(&key) {
            let mut status = status;
            let old = world.service_status.get(&key);
            registry::drop_disabled_status_fields(&mut status, old, &world.profile);
            world.service_status.insert(key, status);
        } else {
            world.service_status.remove(&key);
        }
    }
    report.filter(|_| with_report)
}

/// Creates, updates or deletes one Service document against the cluster. The report of a
/// stored Service is built only `with_report`; a refusal's always is (refusals are few).
fn write_service(
    world: &mut World,
    located: Located<Service>,
    scope: &PolicyScope<'_>,
    with_report: bool,
    diags: &mut Vec<Diagnostic>,
) -> Option<ServiceReport> {
    let Located { value: mut service, positions, .. } = located;
    let written_status = service.status.clone();
    default_service(
        &mut service,
        &world.profile,
        validation::rule_in_force(validation::Rule::EtpForExternalIps, &world.profile),
    );
    registry::generate_name(&mut service.metadata, &positions, world.profile.seed);
    let document = positions.source_of("");
    let Some(allocators) = world.allocators.as_mut() else {
        return Some(ServiceReport::rejected(None, &service, document));
    };
    let key = ServiceKey::of(&service.metadata);
    if service.metadata.annotations.get(OPERATION_ANNOTATION).is_some_and(|v| v == "delete") {
        let stored = world.services.remove(&key);
        return Some(delete_service(allocators, stored, &service, document, diags));
    }
    let previous = world.services.remove(&key);
    if previous.is_none()
        && let Some(refusal) =
            namespace_lifecycle("Service", &service.metadata, &world.profile, &document)
    {
        diags.push(refusal);
        return Some(ServiceReport::rejected(Some(allocators), &service, document));
    }
    let request = ServiceWrite {
        old: previous.as_ref(),
        written_status: &written_status,
        positions: &positions,
        profile: &world.profile,
    };
    match request.admit(&mut service, allocators, scope, &world.services) {
        Err(refusal) => {
            // Nothing stored: the old object, if any, stays as it was.
            diags.extend(refusal);
            if let Some(old) = previous {
                world.services.insert(key, old);
            }
            Some(ServiceReport::rejected(Some(allocators), &service, document))
        }
        Ok((txn, registry_warnings, judged)) => {
            diags.extend(registry_warnings);
            diags.extend(service_warnings(&world.profile, &service, &positions));
            diags.extend(judged);
            // What a client reads back (the warnings were given before storage).
            registry::default_on_read(&mut service);
            // finishUpdate(true): release what the old object gave up.
            let outcome = if previous.is_some() { "updated" } else { "created" };
            let held = previous.map(|old| old.allocation).unwrap_or_default();
            let allocation = allocators.commit(txn, &held);
            let report = with_report.then(|| {
                ServiceReport::new(Some(allocators), &service, outcome, &allocation, document)
            });
            scope.stored(&key, &service);
            let stored = StoredService { service: Arc::new(service), positions, allocation };
            world.services.insert(key, stored);
            report
        }
    }
}

/// A delete of the stored Service (`stored`, taken out of the cluster), or `NotFound`.
fn delete_service(
    allocators: &mut Allocators,
    stored: Option<StoredService>,
    service: &Service,
    document: Source,
    diags: &mut Vec<Diagnostic>,
) -> ServiceReport {
    // The generic registry's Store.Delete keys the object before it looks (NamespaceKeyFunc,
    // apiserver pkg/registry/generic/registry/store.go, v0.24.17 to v0.37.2): a name no URL
    // path can carry is a 400.
    let name = &service.metadata.name;
    let unkeyable = if name.is_empty() {
        Some("Name parameter required.".to_owned())
    } else {
        let why = validation::path_segment_name(name);
        (!why.is_empty())
            .then(|| format!("Name parameter invalid: {}: {}", go_quote(name), why.join(";")))
    };
    if let Some(message) = unkeyable {
        let object = Some(service_ref(service));
        diags.push(Diagnostic::error(object, "", "BadRequest", message).at(document.clone()));
        return ServiceReport::rejected(Some(allocators), service, document);
    }
    match stored {
        Some(stored) => {
            allocators.release(&stored.allocation);
            let none = ServiceAllocation::default();
            ServiceReport::new(Some(allocators), &stored.service, "deleted", &none, document)
        }
        None => {
            let message = format!("services {:?} not found", service.metadata.name);
            let object = Some(service_ref(service));
            diags.push(Diagnostic::error(object, "", "NotFound", message).at(document.clone()));
            ServiceReport::rejected(Some(allocators), service, document)
        }
    }
}

/// kube-apiserver's NamespaceLifecycle admission: a create in a namespace that does not exist is
/// a 404 before the registry sees the object (`Lifecycle.Admit`,
/// k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go, enabled by default
/// v0.24.17 to v0.37.2; updates and deletes pass). A scenario's namespaces are taken to exist,
/// except a name no Namespace can have: there the object is refused so, not validated (found by
/// the black-box oracle, `svclab_oracle::cluster::blackbox`, on a real kube-apiserver).
fn namespace_lifecycle(
    kind: &str,
    meta: &crate::model::ObjectMeta,
    profile: &Profile,
    document: &Source,
) -> Option<Diagnostic> {
    let namespace = &meta.namespace;
    if namespace.is_empty() || validation::namespace_can_exist(namespace, profile) {
        return None;
    }
    let object = Some(ObjectRef::new(kind, namespace, &meta.name));
    let message = format!("namespaces {} not found", go_quote(namespace));
    Some(Diagnostic::error(object, "", "NotFound", message).at(document.clone()))
}

/// A create or update of a Service on its way through kube-apiserver.
struct ServiceWrite<'r> {
    /// The stored object an update replaces.
    old: Option<&'r StoredService>,
    /// The `status` the document carried (the policy reads it; the apiserver drops it).
    written_status: &'r ServiceStatus,
    positions: &'r Positions,
    profile: &'r Profile,
}

impl ServiceWrite<'_> {
    /// The registry's steps in kube-apiserver's order: the update's preparation, allocation
    /// (which wins over validation, as in the generic registry `Store.Create`/`Update`),
    /// the generic registry's `BeforeCreate`/`BeforeUpdate` (1.24's clusterName warning),
    /// validation of the allocated object, then the operator's policy. Accepted: the allocation
    /// to commit, the registry's warnings (they come before the strategy's) and the policy's
    /// diagnostics; refused: the refusal's diagnostics, after the registry's warnings, with this
    /// request's allocations undone (`finishUpdate(false)`).
    fn admit(
        &self,
        service: &mut Service,
        allocators: &mut Allocators,
        scope: &PolicyScope<'_>,
        stored: &BTreeMap<ServiceKey, StoredService>,
    ) -> Result<(Transaction, Vec<Diagnostic>, Vec<Diagnostic>), Vec<Diagnostic>> {
        let old = self.old.map(|o| &*o.service);
        match old {
            Some(old) => {
                // The storage's preconditions come before anything of the strategy.
                registry::update_preconditions(
                    registry::SERVICES,
                    &service.metadata,
                    &old.metadata,
                )
                .map_err(|refusal| {
                    vec![storage_diagnostic(refusal, service_ref(service), self.positions)]
                })?;
                registry::begin_update(old, service, self.profile);
            }
            None => registry::fill_uid(&mut service.metadata, self.positions, self.profile.seed),
        }
        registry::prepare_service(service, old, self.profile);
        let allocated = match old {
            Some(old) => allocators.update(service, old),
            None => allocators.create(service),
        };
        let txn = allocated.map_err(|failure| {
            allocation_diagnostics(failure, service, self.positions, self.profile)
        })?;
        let mut warnings: Vec<Diagnostic> =
            registry::drop_cluster_name(&mut service.metadata, self.profile)
                .map(|text| {
                    let source = self.positions.source_of("metadata.clusterName");
                    Diagnostic::warning(Some(service_ref(service)), "", "Warning", text).at(source)
                })
                .into_iter()
                .collect();
        let errors = self.validate(service);
        if !errors.is_empty() {
            allocators.revert(txn);
            let object = service_ref(service);
            warnings.extend(field_diagnostics(&errors, &object, self.positions, self.profile));
            return Err(warnings);
        }
        // The operator's policy judges what the apiserver accepted; a deny is a refusal like
        // any other.
        let subject = policy::ServiceSubject {
            service,
            old,
            requested: Some(txn.requested()),
            status: self.written_status,
        };
        match judge_service(
            scope,
            &subject,
            stored,
            Some(&*allocators),
            self.positions,
            self.profile,
        ) {
            Judged::Denied(diagnostics) => {
                allocators.revert(txn);
                warnings.extend(diagnostics);
                Err(warnings)
            }
            Judged::Allowed(diagnostics) => {
                // The etcd3 store refuses a create that names a resourceVersion last: the
                // strategy's warnings are already in the response.
                let Err(refusal) = old.map_or_else(
                    || registry::create_resource_version(&service.metadata),
                    |_| Ok(()),
                ) else {
                    return Ok((txn, warnings, diagnostics));
                };
                allocators.revert(txn);
                warnings.extend(service_warnings(self.profile, service, self.positions));
                warnings.extend(diagnostics);
                warnings.push(storage_diagnostic(refusal, service_ref(service), self.positions));
                Err(warnings)
            }
        }
    }

    /// Validation of the defaulted, allocated object, after the strategy's PrepareFor*.
    fn validate(&self, service: &mut Service) -> Vec<FieldError> {
        let Some(old) = self.old.map(|o| &*o.service) else {
            let mut errors = validation::validate_service_create(service, self.profile);
            validation::registry_causes(&mut errors, self.profile);
            return errors;
        };
        registry::drop_type_dependent_fields(service, old, self.profile);
        registry::carry_resource_version(&old.metadata, &mut service.metadata);
        let mut errors = validation::validate_common_update_fields(
            &service.metadata,
            &old.metadata,
            validation::Scope::Namespaced,
            self.profile,
        );
        errors.extend(validation::validate_service_update(service, old, self.profile));
        validation::registry_causes(&mut errors, self.profile);
        errors
    }
}

/// What the operator's policy made of an object.
enum Judged {
    /// Stored, with the policy's warnings and audit notes (none when no policy judges it).
    Allowed(Vec<Diagnostic>),
    /// Refused, with the denials (and the rest of the judgement).
    Denied(Vec<Diagnostic>),
}

/// The operator's policy on a Service the apiserver accepted, when a policy judges its document.
fn judge_service(
    scope: &PolicyScope<'_>,
    subject: &policy::ServiceSubject<'_>,
    stored: &BTreeMap<ServiceKey, StoredService>,
    allocators: Option<&Allocators>,
    positions: &Positions,
    profile: &Profile,
) -> Judged {
    if !scope.judges(positions) {
        return Judged::Allowed(Vec::new());
    }
    let env = scope.env(stored, allocators);
    let judgement =
        scope.policies.judge_service(subject, &env, positions, profile.json_field_values());
    if judgement.denied {
        Judged::Denied(judgement.diagnostics)
    } else {
        Judged::Allowed(judgement.diagnostics)
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
    let Located { value: service, positions, .. } = located;
    let document = positions.source_of("");
    let key = ServiceKey::of(&service.metadata);
    let previous = world.services.get(&key);
    let errors = match previous {
        Some(old) => validation::validate_service_update(&service, &old.service, &world.profile),
        None => validation::validate_service_create(&service, &world.profile),
    };
    let outcome = if previous.is_some() { "updated" } else { "validated" };
    if !errors.is_empty() {
        diags.extend(field_diagnostics(
            &errors,
            &service_ref(&service),
            &positions,
            &world.profile,
        ));
        return ServiceReport::rejected(None, &service, document);
    }
    let subject = policy::ServiceSubject {
        service: &service,
        old: previous.map(|old| &*old.service),
        requested: None,
        status: &service.status,
    };
    let judged = judge_service(scope, &subject, &world.services, None, &positions, &world.profile);
    let judged = match judged {
        Judged::Denied(diagnostics) => {
            diags.extend(diagnostics);
            return ServiceReport::rejected(None, &service, document);
        }
        Judged::Allowed(diagnostics) => diagnostics,
    };
    diags.extend(service_warnings(&world.profile, &service, &positions));
    diags.extend(judged);
    let none = ServiceAllocation::default();
    let report = ServiceReport::new(None, &service, outcome, &none, document);
    scope.stored(&key, &service);
    world
        .services
        .insert(key, StoredService { service: Arc::new(service), positions, allocation: none });
    report
}

/// Creates or updates an EndpointSlice: v1 defaulting and name generation (unless
/// `--no-defaults`), validation, warnings. A rejected slice is not stored.
fn store_endpoint_slice(
    world: &mut World,
    mut located: Located<EndpointSlice>,
    options: &CheckOptions,
    scope: &PolicyScope<'_>,
    diags: &mut Vec<Diagnostic>,
) {
    if !options.no_defaults {
        registry::default_endpoint_slice(&mut located.value, &world.profile);
        registry::generate_name(
            &mut located.value.metadata,
            &located.positions,
            world.profile.seed,
        );
        let meta = &located.value.metadata;
        let stored = world.endpoint_slice_position(&meta.namespace, &meta.name);
        let old = stored.map(|i| &world.endpoint_slices[i].value);
        match old {
            Some(old) => {
                // The storage's preconditions come before anything of the strategy.
                let checked =
                    registry::update_preconditions(registry::ENDPOINT_SLICES, meta, &old.metadata);
                if let Err(refusal) = checked {
                    let object = ObjectRef::new("EndpointSlice", &meta.namespace, &meta.name);
                    diags.push(storage_diagnostic(refusal, object, &located.positions));
                    return;
                }
            }
            None => {
                let document = located.positions.source_of("");
                let (meta, profile) = (&located.value.metadata, &world.profile);
                if let Some(refusal) =
                    namespace_lifecycle("EndpointSlice", meta, profile, &document)
                {
                    diags.push(refusal);
                    return;
                }
                registry::fill_uid(
                    &mut located.value.metadata,
                    &located.positions,
                    world.profile.seed,
                );
            }
        }
        registry::drop_disabled_endpoint_conditions(&mut located.value, old, &world.profile);
        if let Some(old) = old {
            registry::carry_resource_version(&old.metadata, &mut located.value.metadata);
            registry::meta_before_update(&old.metadata, &mut located.value.metadata);
        }
    }
    // BeforeCreate/BeforeUpdate, before the strategy's validation.
    let cluster_name = (!options.no_defaults)
        .then(|| registry::drop_cluster_name(&mut located.value.metadata, &world.profile))
        .flatten();
    let slice = &located.value;
    let meta = &slice.metadata;
    let object = ObjectRef::new("EndpointSlice", &meta.namespace, &meta.name);
    if let Some(text) = cluster_name {
        let source = located.positions.source_of("metadata.clusterName");
        diags.push(Diagnostic::warning(Some(object.clone()), "", "Warning", text).at(source));
    }
    let existing = world.endpoint_slice_position(&meta.namespace, &meta.name);
    let mut errors = match existing {
        Some(i) => {
            let old = &world.endpoint_slices[i].value;
            // `--no-defaults` calls the strategy's validation alone, as the Go unit tests do.
            let mut errors = if options.no_defaults {
                Vec::new()
            } else {
                validation::validate_common_update_fields(
                    &slice.metadata,
                    &old.metadata,
                    validation::Scope::Namespaced,
                    &world.profile,
                )
            };
            errors.extend(validation::validate_endpoint_slice_update(slice, old, &world.profile));
            errors
        }
        None => validation::validate_endpoint_slice_create(slice, &world.profile),
    };
    // The generic registry's declarative validation (1.37+); `--no-defaults` is the strategy's
    // validation alone.
    if !options.no_defaults {
        let old = existing.map(|i| &world.endpoint_slices[i].value);
        validation::registry_causes(&mut errors, &world.profile);
        validation::endpoint_slice_declarative(&mut errors, slice, old, &world.profile);
    }
    if !errors.is_empty() {
        diags.extend(field_diagnostics(&errors, &object, &located.positions, &world.profile));
        return;
    }
    let judgement = scope.judges(&located.positions).then(|| {
        let json = world.profile.json_field_values();
        scope.policies.judge_endpoint_slice(slice, scope.user_info, &located.positions, json)
    });
    if let Some(judgement) = &judgement
        && judgement.denied
    {
        diags.extend(judgement.diagnostics.iter().cloned());
        return;
    }
    let warnings = validation::endpoint_slice_warnings(slice, existing.is_none(), &world.profile);
    for w in warnings {
        let source = located.positions.source_of(&w.path);
        diags.push(
            Diagnostic::warning(Some(object.clone()), w.path, "Warning", w.message).at(source),
        );
    }
    diags.extend(judgement.into_iter().flat_map(|j| j.diagnostics));
    // The etcd3 store refuses a create that names a resourceVersion, last.
    if existing.is_none()
        && !options.no_defaults
        && let Err(refusal) = registry::create_resource_version(&slice.metadata)
    {
        diags.push(storage_diagnostic(refusal, object, &located.positions));
        return;
    }
    world.store_endpoint_slice(existing, Arc::new(located));
}

/// What the storage layer refuses, as the apiserver answers it: a 409 `Conflict`, or a plain
/// error (a 500 with an empty reason, `Unknown`), about the whole object.
fn storage_diagnostic(
    refusal: registry::StorageRefusal,
    object: ObjectRef,
    positions: &Positions,
) -> Diagnostic {
    let (reason, message) = match refusal {
        registry::StorageRefusal::Conflict(message) => ("Conflict", message),
        registry::StorageRefusal::Unknown(message) => ("Unknown", message),
    };
    Diagnostic::error(Some(object), "", reason, message).at(positions.source_of(""))
}

/// The object reference of a Service's diagnostics.
fn service_ref(service: &Service) -> ObjectRef {
    ObjectRef::new("Service", &service.metadata.namespace, &service.metadata.name)
}

/// Field errors as the report's diagnostics, each placed at its field.
fn field_diagnostics<'a>(
    errors: &'a [FieldError],
    object: &'a ObjectRef,
    positions: &'a Positions,
    profile: &Profile,
) -> impl Iterator<Item = Diagnostic> + 'a {
    let json = profile.json_field_values();
    errors.iter().map(move |e| e.to_diagnostic(object, positions, json))
}

/// Why the allocation of a Service failed, as the apiserver would answer: field errors
/// (`Invalid`), an internal error (HTTP 500 `InternalError`), or a plain Go error from the
/// storage (HTTP 500 with an empty, `Unknown` reason and the text as is).
fn allocation_diagnostics(
    failure: AllocFailure,
    service: &Service,
    positions: &Positions,
    profile: &Profile,
) -> Vec<Diagnostic> {
    let object = service_ref(service);
    let document = || positions.source_of("");
    match failure {
        AllocFailure::Invalid(errors) => {
            field_diagnostics(&errors, &object, positions, profile).collect()
        }
        AllocFailure::Internal(message) => {
            let message = format!("Internal error occurred: {message}");
            vec![Diagnostic::error(Some(object), "", "InternalError", message).at(document())]
        }
        AllocFailure::Unknown(message) => {
            vec![Diagnostic::error(Some(object), "", "Unknown", message).at(document())]
        }
        // What the client gets is the panic filter's 500; svclab says why beside it.
        AllocFailure::Panic(why) => vec![
            Diagnostic::error(Some(object.clone()), "", "InternalError", PANIC_RESPONSE)
                .at(document()),
            Diagnostic::warning(Some(object), "", "SvclabAdvisory", why).at(document()),
        ],
    }
}

/// Warnings of an accepted Service (`Warning`) and svclab's advisories (`SvclabAdvisory`).
fn service_warnings(
    profile: &Profile,
    service: &Service,
    positions: &Positions,
) -> Vec<Diagnostic> {
    let object = service_ref(service);
    let warnings =
        validation::service_warnings(service, profile).into_iter().map(|w| (w, "Warning"));
    let advisories =
        validation::service_advisories(service).into_iter().map(|w| (w, "SvclabAdvisory"));
    warnings
        .chain(advisories)
        .map(|(w, reason)| {
            let source = positions.source_of(&w.path);
            Diagnostic::warning(Some(object.clone()), w.path, reason, w.message).at(source)
        })
        .collect()
}

#[cfg(test)]
mod tests;
