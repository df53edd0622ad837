//! Two more entrances to one [`Evaluation`], for callers that evaluate a scenario under a profile
//! of their own or carry a cluster further (`upgrade`): the parsed objects under a given
//! profile, and more objects written into a cluster state that already exists. Both are the
//! pipeline's own write path, object by object, with nothing decided here.

use super::{CheckOptions, Evaluation, PolicyScope};
use crate::diagnostic::Diagnostic;
use crate::manifest::Object;
use crate::policy;
use crate::profile::Profile;
use crate::report::Report;
use crate::world::World;

/// The report options of both entrances: the world alone is read for rules, never the report's.
const OPTIONS: CheckOptions = CheckOptions::WORLD_ONLY;

/// Evaluates parsed objects (a scenario's, perhaps with its ClusterProfile, ServiceCIDRs or
/// KubeProxyConfiguration replaced) under `profile`: the cluster state and the report, with a
/// Service report per Service document and without rulesets. `diags` are what reading the
/// objects and the profile said.
pub(crate) fn evaluate_objects(
    objects: Vec<Object>,
    profile: Profile,
    diags: Vec<Diagnostic>,
) -> (World, Report) {
    let context = policy::Context::default();
    let mut run = Evaluation::begin(&objects, profile, diags, &OPTIONS, &context, None);
    run.keep_service_reports(&objects);
    run.apply_all(objects);
    run.finish()
}

/// Writes `objects` into an existing cluster state, in order, as the pipeline writes any
/// object (a Service whose key is stored is an update of the stored one): the state afterwards
/// and the report of these writes alone (their Service reports and diagnostics, no rulesets).
/// No operator policy is in effect.
pub(crate) fn write_onward(world: World, objects: Vec<Object>) -> (World, Report) {
    let context = policy::Context::default();
    let scope = PolicyScope {
        policies: policy::Policies::default(),
        context: &context,
        user_info: None,
        selectors: policy::SelectorIndex::default(),
        indexing: false,
    };
    let mut run = Evaluation { world, scope, options: &OPTIONS, diags: Vec::new(), services: None };
    run.keep_service_reports(&objects);
    run.apply_all(objects);
    run.finish()
}
