//! What svclab answered about each object of one test's scenario, found by the suite's refs.
//!
//! A ref names an object by kind, namespace and name; when the scenario holds it several times
//! (created, then updated or deleted), the ref means its last document, the state a test's own
//! resources usually bring. Diagnostics belong to the document they point into: among the
//! objects of the same file and document, the one that starts last at or before the
//! diagnostic's line (inline resources share the suite file's name, but never its lines).

use crate::diagnostic::{Diagnostic, Severity};
use crate::manifest::Object;
use crate::model::well_known::OPERATION_ANNOTATION;
use crate::model::{Located, ObjectMeta};
use crate::report::{Report, ServiceReport};

use super::format::{Target, namespaced};

/// The reason prefix of the operator's policy violations (`policy:nodePorts.forbid`).
const POLICY_REASON: &str = "policy:";
/// A policy rule that could not run for lack of an input: not a violation.
const POLICY_SKIPPED: &str = "policy:skipped";

/// One document of an object in the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Occurrence {
    target: Target,
    file: String,
    document: usize,
    line: u32,
    delete: bool,
}

/// The answers of one evaluated scenario.
pub(crate) struct Answers<'a> {
    report: &'a Report,
    occurrences: Vec<Occurrence>,
}

/// What svclab answered about one object (its last document in the stream).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ObjectAnswer {
    pub(crate) outcome: String,
    /// The Service's report (other kinds have none).
    pub(crate) service: Option<ServiceReport>,
    pub(crate) errors: Vec<String>,
    pub(crate) warnings: Vec<String>,
    /// Distinct rule ids, in the order first reported.
    pub(crate) violations: Vec<String>,
}

impl<'a> Answers<'a> {
    pub(crate) fn new(objects: &[Object], report: &'a Report) -> Answers<'a> {
        let occurrences = objects.iter().filter_map(occurrence).collect();
        Answers { report, occurrences }
    }

    /// Every object of the scenario, once each, in the order of its last document.
    pub(crate) fn targets(&self) -> Vec<Target> {
        let mut targets: Vec<Target> = Vec::new();
        for occurrence in self.occurrences.iter().rev() {
            if !targets.contains(&occurrence.target) {
                targets.push(occurrence.target.clone());
            }
        }
        targets.reverse();
        targets
    }

    /// The answer about the object a ref names; `None` when the scenario holds no such object.
    pub(crate) fn object(&self, target: &Target) -> Option<ObjectAnswer> {
        let indices: Vec<usize> = (0..self.occurrences.len())
            .filter(|&i| self.occurrences[i].target == *target)
            .collect();
        let last = *indices.last()?;
        let mine: Vec<&Diagnostic> =
            self.report.diagnostics.iter().filter(|d| self.belongs(d, last)).collect();
        let messages = |keep: &dyn Fn(&Diagnostic) -> bool| -> Vec<String> {
            mine.iter().filter(|d| keep(d)).map(|d| d.message.clone()).collect()
        };
        let errors = messages(&|d| d.severity == Severity::Error && !is_policy(d));
        let warnings = messages(&|d| d.severity == Severity::Warning && !is_policy(d));
        let mut violations: Vec<String> = Vec::new();
        for d in &mine {
            if let Some(rule) = d.reason.strip_prefix(POLICY_REASON)
                && d.reason != POLICY_SKIPPED
                && !violations.iter().any(|v| v == rule)
            {
                violations.push(rule.to_owned());
            }
        }
        let service = (target.kind == "Service")
            .then(|| {
                self.report
                    .services
                    .iter()
                    .rev()
                    .find(|s| s.namespace == target.namespace && s.name == target.name)
                    .cloned()
            })
            .flatten();
        let outcome = match &service {
            Some(service) => service.outcome.clone(),
            None => self.walked_outcome(&indices),
        };
        Some(ObjectAnswer { outcome, service, errors, warnings, violations })
    }

    /// The outcome of a kind the report lists no outcomes for: each document of the object in
    /// turn is rejected (an error points into it), deleted (the operation annotation), an
    /// update (an earlier document is in effect) or a create.
    fn walked_outcome(&self, indices: &[usize]) -> String {
        let mut exists = false;
        let mut outcome = "created";
        for &index in indices {
            let rejected = self
                .report
                .diagnostics
                .iter()
                .any(|d| d.severity == Severity::Error && self.belongs(d, index));
            outcome = match (rejected, self.occurrences[index].delete, exists) {
                (true, _, _) => "rejected",
                (false, true, _) => "deleted",
                (false, false, true) => "updated",
                (false, false, false) => "created",
            };
            exists = match outcome {
                "deleted" => false,
                "rejected" => exists,
                _ => true,
            };
        }
        outcome.to_owned()
    }

    /// Whether a diagnostic is about the document `index`.
    fn belongs(&self, diagnostic: &Diagnostic, index: usize) -> bool {
        let occurrence = &self.occurrences[index];
        let Some(object) = &diagnostic.object else { return false };
        let namespace = if object.namespace.is_empty() && namespaced(&object.kind) {
            "default"
        } else {
            object.namespace.as_str()
        };
        if object.kind != occurrence.target.kind
            || namespace != occurrence.target.namespace
            || object.name != occurrence.target.name
        {
            return false;
        }
        let Some(source) = &diagnostic.source else { return true };
        // The object of this file and document that starts last at or before the line.
        let owner = self
            .occurrences
            .iter()
            .enumerate()
            .filter(|(_, o)| {
                o.file == source.file && o.document == source.document && o.line <= source.line
            })
            .max_by_key(|(i, o)| (o.line, *i))
            .map(|(i, _)| i);
        match owner {
            Some(owner) => self.occurrences[owner].target == occurrence.target && owner == index,
            // Before every object (a document-level finding): the last document of the object.
            None => true,
        }
    }
}

fn is_policy(diagnostic: &Diagnostic) -> bool {
    diagnostic.reason.starts_with(POLICY_REASON)
}

fn occurrence(object: &Object) -> Option<Occurrence> {
    fn of<T>(kind: &str, located: &Located<T>, metadata: Option<&ObjectMeta>) -> Occurrence {
        let (namespace, name, delete) = match metadata {
            Some(metadata) => (
                metadata.namespace.clone(),
                metadata.name.clone(),
                metadata.annotations.get(OPERATION_ANNOTATION).is_some_and(|v| v == "delete"),
            ),
            None => (String::new(), String::new(), false),
        };
        let namespace = if namespace.is_empty() && namespaced(kind) {
            "default".to_owned()
        } else if namespaced(kind) {
            namespace
        } else {
            String::new()
        };
        Occurrence {
            target: Target { kind: kind.to_owned(), namespace, name },
            file: located.positions.file().to_owned(),
            document: located.positions.document(),
            line: located.positions.object().line,
            delete,
        }
    }
    Some(match object {
        Object::Service(o) => of("Service", o, Some(&o.value.metadata)),
        Object::EndpointSlice(o) => of("EndpointSlice", o, Some(&o.value.metadata)),
        Object::Endpoints(o) => of("Endpoints", o, Some(&o.value.metadata)),
        Object::Node(o) => of("Node", o, Some(&o.value.metadata)),
        Object::ServiceCidr(o) => of("ServiceCIDR", o, Some(&o.value.metadata)),
        Object::ServicePolicy(o) => of("ServicePolicy", o, Some(&o.value.metadata)),
        Object::KubeProxyConfiguration(o) => of("KubeProxyConfiguration", o, None),
        Object::ClusterProfile(o) => of("ClusterProfile", o, None),
        Object::IptablesSave { .. } => return None,
    })
}
