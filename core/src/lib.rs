//! svclab's sans-I/O core: what a real cluster does to a Kubernetes Service.
//!
//! # Core concepts
//!
//! - [`Input`]: one named text (a file, stdin, a request body): YAML or JSON, several documents.
//! - [`Object`]: a typed Kubernetes object read from an input ([`parse`] gives a [`Scenario`]),
//!   [`Located`]: with the [`Positions`] of its fields, so every diagnostic names a line.
//! - [`Profile`]: what no object says: the Kubernetes release, feature gates, service ranges,
//!   seed and host facts (from the scenario's `ClusterProfile`); every release-dependent
//!   behaviour asks it.
//! - [`World`]: the cluster state after the scenario: the stored Services (by [`ServiceKey`])
//!   with what the allocators gave them, EndpointSlices, Nodes, the KubeProxyConfiguration.
//!   [`render`] and [`trace`] read it whole.
//! - [`Report`]: what a user sees: each Service's outcome, addresses, ports and bands, the ranges,
//!   every [`Diagnostic`] (errors and warnings in kube-apiserver's words), the rulesets.
//!
//! The pipeline ([`evaluate`], [`check`]) takes the objects in stream order, as a cluster takes
//! them: defaulting, the registry's preparation, allocation, validation, the operator's policy,
//! then commit or rollback; the report is built from the world. Everything is deterministic: no
//! clock, no global RNG, no hash iteration into outputs; the random seed is part of the profile.
//!
//! ```
//! use svclab_core::{check, CheckOptions, Input};
//! let yaml = "apiVersion: v1\nkind: Service\nmetadata: {name: dns}\nspec:\n  clusterIP: 10.96.0.10\n  ports: [{port: 53}]\n";
//! let report = check(&[Input::new("dns.yaml", yaml)], &CheckOptions::default());
//! assert_eq!(report.services[0].cluster_ips, ["10.96.0.10"]);
//! assert_eq!(report.services[0].allocations[0].band, "static");
//!
//! let twice = format!("{yaml}---\n{}", yaml.replace("name: dns", "name: dns2"));
//! let report = check(&[Input::new("dns.yaml", &twice)], &CheckOptions::default());
//! assert!(report.diagnostics[0].message.ends_with("provided IP is already allocated"));
//! ```

#![forbid(unsafe_code)]

mod admission;
mod allocation;
mod defaulting;
mod diagnostic;
mod field;
pub mod gateway;
mod limits;
mod manifest;
mod model;
mod net;
mod pipeline;
mod policy;
mod profile;
mod proxy;
mod registry;
mod report;
mod source;
mod steps;
mod trace;
mod upgrade;
mod validation;
mod world;
mod yaml;

// The public surface, what hosts (the `svclab` command, the plugin, the playground) use: inputs,
// the pipeline, the report and the types it is built from, rendering and tracing.
pub use admission::{
    ADMISSION_API_VERSION, AdmissionError, AdmissionOptions, AdmissionRequest, Verdict, admit,
    validate_admission,
};
pub use diagnostic::{Diagnostic, ObjectRef, ReleaseChange, ReleaseExplanation, Severity};
pub use manifest::{Input, Object, Scenario, parse};
pub use model::well_known::OPERATION_ANNOTATION;
pub use model::{
    ClusterProfile, Endpoint, EndpointHints, EndpointPort, EndpointSlice, Endpoints, IntOrString,
    KubeProxyChecked, KubeProxyConfiguration, Located, Node, ObjectMeta, Positions, Service,
    ServiceKey, ServicePolicy, ServicePort, ServiceSpec, StringMap,
};
pub use net::{IpFamily, PortRange};
pub use pipeline::suite::{
    ExportError, ExportOptions, Failure, SUITE_SUFFIX, SuiteResult, TestError, TestOptions,
    TestResult, TestRun, TestStatus, export_test, run_tests, test_files, test_schema,
};
pub use pipeline::{CheckOptions, EditError, Session, check, evaluate, render_ruleset, render_to};
pub use policy::{UserInfo, check_settings, settings_schema};
pub use profile::{
    CHECKED_RELEASES, DynamicPicks, HostFacts, NEWEST_MINOR, OLDEST_MINOR, Profile, ProfileSummary,
    SmallRangeRule, Version,
};
pub use proxy::{ProxyMode, RenderError, RenderOptions, RuleStats, RulesetWriter};
pub use report::{
    AllocationReport, BandReport, PortRangeReport, PortReport, RangeReport, Report, Rules,
    ServiceReport, report_rules, report_rules_pausing,
};
pub use source::{Pos, Source};
pub use trace::{TraceOutcome, TraceReport, TraceRequest, TraceStep};
pub use upgrade::{
    Area, DiffLine, DiffTag, Finding, Impact, RulesComparison, UpgradeError, UpgradeOptions,
    UpgradeReport, UpgradeSide, diff_lines, target_release, upgrade,
};
pub use world::{StoredService, World, render, trace};

/// The internal door: what svclab's own conformance vectors, goldens, dataplane tests and
/// benchmarks drive directly (allocators, validation functions, the renderer and tracer on
/// plain objects and text). Not a supported API: names and signatures change without notice.
#[doc(hidden)]
pub mod testing {
    /// The allocators (bitmap ranges, the IPAddress allocator, NodePort bands).
    pub mod allocation {
        pub use crate::allocation::*;
    }
    pub use crate::field::{ErrorType, FieldError, GoValue};
    pub use crate::net::{parse_cidr_sloppy, parse_ip_sloppy};
    pub use crate::proxy::{
        DetectLocal, EndpointSelection, NftablesMasquerade, NftablesTable, ProxyConfig, Rendered,
        TopologyHints, render_objects, select_endpoints,
    };
    pub use crate::trace::{trace_nft_text, trace_text};

    /// Applies kube-proxy's release table (proxy/release.rs `configure_release`) to a
    /// configuration, its gates at the release's defaults: for goldens taken from kube-proxy's
    /// tests of an older release.
    pub fn configure_proxy_release(config: &mut ProxyConfig, version: crate::profile::Version) {
        let profile = crate::profile::Profile::for_version(version);
        let gate = |name: &str| {
            crate::proxy::own_gate_default(name, version.minor)
                .unwrap_or_else(|| profile.gate_named(name))
        };
        crate::proxy::configure_release(config, crate::proxy::Rows::at(version), &gate);
    }
    pub use crate::validation::{
        validate_endpoint_slice_create, validate_endpoint_slice_update, validate_service_create,
        validate_service_update,
    };
    pub use crate::world::trace_mode;

    /// Where the fast YAML reader and the general one build different trees (see
    /// `yaml::fast_reader_disagreement`), for the `yaml_readers` fuzz target.
    pub fn yaml_fast_reader_disagreement(text: &str) -> Option<String> {
        crate::yaml::fast_reader_disagreement(text)
    }
}
