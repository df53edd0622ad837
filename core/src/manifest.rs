//! Turns scenario text (multi-document YAML or JSON, `List`s, several files) into typed objects
//! with field positions, plus diagnostics for everything that could not be read.

mod decode;
mod reread;

use decode::{Decoded, Releases, Typed};
pub(crate) use reread::ReadCache;

use std::sync::Arc;

use crate::diagnostic::{Diagnostic, ObjectRef, Severity};
use crate::limits::{MAX_INPUT_BYTES, MAX_LIST_DEPTH, MAX_OBJECTS};
use crate::model::well_known::OPERATION_ANNOTATION;
use crate::model::{
    ClusterProfile, DocumentText, EndpointSlice, Endpoints, KubeProxyConfiguration, Located,
    Node as KubeNode, Origin, Positions, Service, ServiceCidr, ServicePolicy,
};
use crate::profile::{Feature, Profile};
use crate::source::{Pos, Source};
use crate::yaml::{self, Node, Value};

/// One named input text (a file, or `-` for standard input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// Name shown in diagnostics.
    pub name: String,
    /// The text, shared with the positions of the objects read from it (so a diagnostic can
    /// point into it after reading without a copy of the input). An `Arc<String>` rather than
    /// an `Arc<str>`: a host's `String` (a file read, a plugin call's argument) becomes an
    /// input without a copy, which at 100,000 Services is 100 MB and 25,000 fresh pages.
    pub text: Arc<String>,
}

impl Input {
    /// An input with a name and text (a `String` is taken as it is, not copied).
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        Input { name: name.into(), text: Arc::new(text.into()) }
    }
}

/// One recognised object of a scenario, in stream order. Shared (`Arc`), so that a reading
/// cache (`crate::Session`) hands an unchanged document's objects to the next evaluation
/// without copying them.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Object {
    /// `v1 Service`.
    Service(Arc<Located<Service>>),
    /// `discovery.k8s.io/v1 EndpointSlice`.
    EndpointSlice(Arc<Located<EndpointSlice>>),
    /// `v1 Endpoints`.
    Endpoints(Arc<Located<Endpoints>>),
    /// `v1 Node`.
    Node(Arc<Located<KubeNode>>),
    /// `networking.k8s.io/v1 ServiceCIDR`.
    ServiceCidr(Arc<Located<ServiceCidr>>),
    /// `kubeproxy.config.k8s.io/v1alpha1 KubeProxyConfiguration`.
    KubeProxyConfiguration(Arc<Located<KubeProxyConfiguration>>),
    /// `svclab.dev/v1alpha1 ClusterProfile`.
    ClusterProfile(Arc<Located<ClusterProfile>>),
    /// `svclab.dev/v1alpha1 ServicePolicy` (its settings stay in the positioned tree).
    ServicePolicy(Arc<Located<ServicePolicy>>),
    /// A plain `iptables-save` dump pasted as a scenario document.
    IptablesSave {
        /// The dump text.
        text: String,
        /// Where it starts.
        source: Source,
    },
}

/// Everything read from the inputs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scenario {
    /// Recognised objects in stream order.
    pub objects: Vec<Object>,
    /// Syntax errors, decode errors, unknown kinds and fields.
    pub diagnostics: Vec<Diagnostic>,
    /// The unknown-field warnings of `diagnostics` about fields some releases have: (index into
    /// `diagnostics`, the releases that have the field). [`Scenario::at_release`] keeps a
    /// warning only where its release lacks the field, and empties this.
    release_fields: Vec<(usize, Releases)>,
}

/// Parses every input in order, within svclab's limits: an input that would take the text
/// read past [`MAX_INPUT_BYTES`] is skipped whole, and once [`MAX_OBJECTS`] objects are read
/// the documents after are skipped; each is one error diagnostic saying where reading stopped.
/// Unknown fields are warned about as the release of the scenario's own ClusterProfile does.
pub fn parse(inputs: &[Input]) -> Scenario {
    let scenario = read(inputs);
    let profile = Profile::from_scenario(scenario.cluster_profile(), &mut Vec::new());
    scenario.at_release(&profile)
}

impl Scenario {
    /// The scenario's ClusterProfile: the last one wins.
    pub(crate) fn cluster_profile(&self) -> Option<&Located<ClusterProfile>> {
        self.objects.iter().rev().find_map(|o| match o {
            Object::ClusterProfile(p) => Some(&**p),
            _ => None,
        })
    }

    /// The scenario as kube-apiserver of the profile's release decodes it: a field its API
    /// type has is no unknown field, and without ServerSideFieldValidation (1.24's default)
    /// the create and update handlers decode with `fieldValidation=Ignore`, so the objects the
    /// apiserver stores get no unknown-field warnings at all (apiserver
    /// `pkg/endpoints/handlers/rest.go` `fieldValidation`, v0.24.17).
    pub(crate) fn at_release(mut self, profile: &Profile) -> Scenario {
        let minor = profile.version.minor;
        let ignore = !profile.gate(Feature::ServerSideFieldValidation);
        let mut known_at = vec![false; self.diagnostics.len()];
        for (index, releases) in self.release_fields.drain(..) {
            if let Some(known) = known_at.get_mut(index) {
                *known = releases.holds(minor);
            }
        }
        let mut index = 0;
        self.diagnostics.retain(|d| {
            let known = known_at.get(index).copied().unwrap_or(false);
            index += 1;
            let unknown_field = d.reason == "UnknownField" && d.severity == Severity::Warning;
            !(unknown_field && (known || (ignore && decoded_by_the_apiserver(d))))
        });
        self
    }
}

/// Whether a diagnostic's object is one kube-apiserver decodes (not svclab's own kinds or
/// kube-proxy's configuration file).
fn decoded_by_the_apiserver(d: &Diagnostic) -> bool {
    d.object.as_ref().is_some_and(|o| {
        matches!(
            o.kind.as_str(),
            "Service" | "EndpointSlice" | "Endpoints" | "Node" | "ServiceCIDR"
        )
    })
}

/// [`parse`] before the release is known: every unknown-field warning a release could give
/// is in, marked for [`Scenario::at_release`].
pub(crate) fn read(inputs: &[Input]) -> Scenario {
    read_with(inputs, None)
}

/// [`read`], reusing what `cache` kept of the documents of an earlier reading whose text is
/// unchanged, and keeping this reading's for the next (`crate::Session`).
pub(crate) fn read_with(inputs: &[Input], cache: Option<&mut ReadCache>) -> Scenario {
    let mut go_on = || std::future::ready(());
    crate::steps::without_pauses(read_pausing(inputs, cache, &mut go_on)).unwrap_or_default()
}

/// [`read_with`] in steps: it awaits `pause()` after every [`PAUSE_EVERY`] documents (what
/// the pause gives is not asked: a reading, once begun, ends, so that the cache it fills
/// always holds a whole reading).
pub(crate) async fn read_pausing<F: Future>(
    inputs: &[Input],
    mut cache: Option<&mut ReadCache>,
    pause: &mut impl FnMut() -> F,
) -> Scenario {
    if let Some(cache) = cache.as_deref_mut() {
        cache.begin(inputs);
    }
    let mut scenario = Scenario::default();
    // One object per document, mostly: room for them all up front spares the copies of a
    // vector that doubles as it grows (and a large allocation's cost, each time). An edited
    // scenario has about as many as the last reading; another is counted, a pass over its text.
    let expected = match cache.as_deref() {
        Some(cache) if cache.objects > 0 => cache.objects + cache.objects / 16,
        _ => inputs.iter().map(|input| input.text.matches("\n---").count() + 1).sum(),
    };
    scenario.objects.reserve(expected.min(MAX_OBJECTS));
    let mut bytes = 0usize;
    for input in inputs {
        bytes = bytes.saturating_add(input.text.len());
        if bytes > MAX_INPUT_BYTES {
            let message = format!(
                "svclab reads at most {MAX_INPUT_BYTES} bytes of scenario text; this input \
                 ({} bytes) takes it to {bytes} and is skipped",
                input.text.len()
            );
            let source = Source { file: input.name.clone(), document: 0, line: 1, column: 1 };
            scenario
                .diagnostics
                .push(Diagnostic::error(None, "", "RequestEntityTooLarge", message).at(source));
            bytes -= input.text.len();
            if let Some(cache) = cache.as_deref_mut() {
                cache.changed_here();
            }
            continue;
        }
        if !parse_input(input, &mut scenario, cache.as_deref_mut(), pause).await {
            break;
        }
    }
    if let Some(cache) = cache {
        cache.end(&scenario);
    }
    scenario
}

fn looks_like_iptables_save(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("# ") && *l != "#")
        .is_some_and(|l| {
            l.starts_with("*filter")
                || l.starts_with("*nat")
                || l.starts_with("*mangle")
                || l.starts_with("*raw")
        })
}

/// Where reading stopped at [`MAX_OBJECTS`].
fn too_many_objects(at: Source) -> Diagnostic {
    let message = format!(
        "svclab reads at most {MAX_OBJECTS} objects; this document and the rest are skipped"
    );
    Diagnostic::error(None, "", "RequestEntityTooLarge", message).at(at)
}

/// Documents read between two pauses of [`read_pausing`]: about a millisecond of a
/// cluster-sized scenario's in a browser. (Fewer in unit tests, so that their small scenarios
/// pause while read too.)
const PAUSE_EVERY: usize = if cfg!(test) { 2 } else { 256 };

/// Reads one input; `false` when [`MAX_OBJECTS`] stopped the reading.
async fn parse_input<F: Future>(
    input: &Input,
    scenario: &mut Scenario,
    mut cache: Option<&mut ReadCache>,
    pause: &mut impl FnMut() -> F,
) -> bool {
    if looks_like_iptables_save(&input.text) {
        if let Some(cache) = cache {
            cache.changed_here();
        }
        if scenario.objects.len() >= MAX_OBJECTS {
            let at = Source { file: input.name.clone(), document: 0, line: 1, column: 1 };
            scenario.diagnostics.push(too_many_objects(at));
            return false;
        }
        scenario.objects.push(Object::IptablesSave {
            text: input.text.to_string(),
            source: Source { file: input.name.clone(), document: 0, line: 1, column: 1 },
        });
        return true;
    }
    // The input's name, shared by the positions of its objects (made on the first one).
    let mut file: Option<Arc<str>> = None;
    // One document at a time: each tree is dropped once its object is decoded.
    let mut documents = yaml::documents(&input.text);
    while let Some(piece) = documents.next_piece() {
        if piece.index > 0 && piece.index % PAUSE_EVERY == 0 {
            pause().await;
        }
        if scenario.objects.len() >= MAX_OBJECTS {
            let at = Source {
                file: input.name.clone(),
                document: piece.index,
                line: piece.first_line,
                column: 1,
            };
            scenario.diagnostics.push(too_many_objects(at));
            return false;
        }
        let remembered = match cache.as_deref_mut().map(|c| (c, reread::Place::of(&piece))) {
            Some((cache, Some(mut place))) => {
                if cache.reuse(&piece, &mut place, input, scenario) {
                    continue;
                }
                Some((cache, place, reread::Mark::of(scenario)))
            }
            Some((cache, None)) => {
                cache.changed_here();
                None
            }
            None => None,
        };
        read_document(documents.parse(piece), input, &mut file, scenario);
        if let Some((cache, place, mark)) = remembered {
            cache.remember(place, input, scenario, mark);
        }
    }
    true
}

/// Reads one document of `input` into `scenario`.
fn read_document(
    doc: yaml::Document<'_>,
    input: &Input,
    file: &mut Option<Arc<str>>,
    scenario: &mut Scenario,
) {
    let source = |pos: Pos| Source {
        file: input.name.clone(),
        document: doc.index,
        line: pos.line,
        column: pos.column,
    };
    match doc.root {
        Err(err) => {
            let message = format!(
                "error converting YAML to JSON: yaml: line {}: {}",
                err.pos.line, err.message
            );
            scenario
                .diagnostics
                .push(Diagnostic::error(None, "", "InvalidSyntax", message).at(source(err.pos)));
        }
        Ok(None) => {}
        Ok(Some(root)) => {
            if looks_like_iptables_save(&doc.text) {
                scenario.objects.push(Object::IptablesSave {
                    text: doc.text.clone().into_owned(),
                    source: source(Pos { line: doc.first_line, column: 1 }),
                });
                return;
            }
            let text = match doc.range {
                Some(range) => DocumentText {
                    text: Arc::clone(&input.text),
                    range,
                    first_line: doc.first_line,
                },
                None => DocumentText {
                    range: 0..doc.text.len(),
                    text: Arc::new(doc.text.clone().into_owned()),
                    first_line: doc.first_line,
                },
            };
            let file = file.get_or_insert_with(|| Arc::from(input.name.as_str()));
            read_object(root, file, doc.index, scenario, 0, Some(text));
        }
    }
}

/// Reads one object: a whole document (`text` is its text) or an item of a `List` (`depth`
/// Lists deep, `text` is `None`: its positions keep its tree).
fn read_object(
    root: Node,
    file: &Arc<str>,
    document: usize,
    scenario: &mut Scenario,
    depth: usize,
    text: Option<DocumentText>,
) {
    let source =
        |pos: Pos| Source { file: file.to_string(), document, line: pos.line, column: pos.column };
    let Value::Map(_) = root.value else {
        let message = format!(
            "error unmarshaling JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            root.json_type()
        );
        scenario
            .diagnostics
            .push(Diagnostic::error(None, "", "InvalidObject", message).at(source(root.pos)));
        return;
    };
    let api_version = root.get("apiVersion").and_then(Node::as_str).unwrap_or("").to_owned();
    let kind = root.get("kind").and_then(Node::as_str).unwrap_or("").to_owned();
    if api_version.is_empty() || kind.is_empty() {
        let mut missing = Vec::new();
        if api_version.is_empty() {
            missing.push("apiVersion not set");
        }
        if kind.is_empty() {
            missing.push("kind not set");
        }
        let message = format!("error validating data: [{}]", missing.join(", "));
        scenario
            .diagnostics
            .push(Diagnostic::error(None, "", "InvalidObject", message).at(source(root.pos)));
        return;
    }
    if kind == "List" || (kind.ends_with("List") && root.get("items").is_some()) {
        if depth >= MAX_LIST_DEPTH {
            let message =
                format!("{kind} nests deeper than {MAX_LIST_DEPTH} Lists; its items are skipped");
            let object = ObjectRef::kind(&kind);
            scenario.diagnostics.push(
                Diagnostic::error(Some(object), "items", "RequestEntityTooLarge", message)
                    .at(source(root.pos)),
            );
            return;
        }
        let items = match root.value {
            Value::Map(entries) => {
                entries.into_iter().rev().find(|e| e.key == "items").map(|e| e.value)
            }
            _ => None,
        };
        if let Some(Node { value: Value::Seq(items), .. }) = items {
            for item in items {
                read_object(item, file, document, scenario, depth + 1, None);
            }
        }
        return;
    }
    let Some(decoded) = decode::object(&root, &api_version, &kind) else {
        let meta = |field: &str| {
            root.get("metadata").and_then(|m| m.get(field)).and_then(Node::as_str).unwrap_or("")
        };
        let object = ObjectRef::new(&kind, meta("namespace"), meta("name"));
        let message = format!("svclab does not model {api_version} {kind}; the object is skipped");
        scenario.diagnostics.push(
            Diagnostic::warning(Some(object), "", "UnknownKind", message).at(source(root.pos)),
        );
        return;
    };
    // Unknown fields of a scenario's objects are warnings, as kubectl's field validation
    // (`Warn`) gives them.
    let (typed, findings) = decoded.into_parts(Severity::Warning, source);
    for (finding, known_in) in findings {
        if let Some(releases) = known_in {
            scenario.release_fields.push((scenario.diagnostics.len(), releases));
        }
        scenario.diagnostics.push(finding);
    }
    let Some(typed) = typed else { return };
    // For most kinds positions only walk keys and containers and the decoded object holds the
    // values: a whole document keeps its text (parsed again when a diagnostic asks), a List item
    // its tree without strings. A ServicePolicy's rules read values from its tree.
    let object = root.pos;
    let origin = match text {
        Some(text) if !typed.reads_values() => Origin::Text(text),
        _ => {
            let mut tree = root;
            if !typed.reads_values() {
                yaml::drop_scalars(&mut tree);
            }
            Origin::Tree(Arc::new(tree))
        }
    };
    let positions = Positions { object, document, file: Arc::clone(file), origin };
    scenario.objects.push(typed.located(api_version, positions));
}

/// A decoder finding: the diagnostic, and for an unknown field some releases have, which.
type Finding = (Diagnostic, Option<Releases>);

impl Decoded {
    /// The typed object (`None` when a type error rejected it) and the decoder's findings as
    /// diagnostics: unknown fields at `unknown` severity, in document order as Go's strict
    /// decoder meets them (svclab's decoder visits a map's keys before its children), then the
    /// type error (alone, when unknown fields are warnings).
    fn into_parts(
        mut self,
        unknown: Severity,
        source: impl Fn(Pos) -> Source,
    ) -> (Option<Typed>, Vec<Finding>) {
        let object = Some(self.object_ref);
        self.unknown_fields.sort_by_key(|field| (field.pos.line, field.pos.column));
        let mut findings: Vec<Finding> = self
            .unknown_fields
            .into_iter()
            .map(|field| {
                let message = format!("unknown field \"{}\"", field.path);
                let finding =
                    Diagnostic::error(object.clone(), field.path, "UnknownField", message);
                (Diagnostic { severity: unknown, ..finding }.at(source(field.pos)), field.known_in)
            })
            .collect();
        match self.object {
            Ok(typed) => {
                // A Service document that asks for a delete is a DELETE by name: kube-apiserver
                // decodes no body, so its fields give no warnings (svclab's configuration kinds,
                // `unknown` errors, keep them).
                if unknown == Severity::Warning
                    && let Typed::Service(service) = &typed
                    && service
                        .metadata
                        .annotations
                        .get(OPERATION_ANNOTATION)
                        .is_some_and(|v| v == "delete")
                {
                    findings.clear();
                }
                (Some(typed), findings)
            }
            Err(error) => {
                let refusal =
                    Diagnostic::error(object, error.path, "FieldValueTypeInvalid", error.message)
                        .at(source(error.pos));
                // The apiserver answers a decoding error with its 400 alone: strict decoding's
                // warnings come only with a decoded object. svclab's own configuration (errors)
                // keeps them.
                if unknown == Severity::Warning {
                    findings.clear();
                }
                findings.push((refusal, None));
                (None, findings)
            }
        }
    }
}

/// A ClusterProfile from a positioned node (a whole document or its bare fields, as the
/// admission hosts and Kubewarden's settings carry them), with decode errors as diagnostics:
/// unknown fields are errors here (a typo in a host's configuration must not pass).
pub(crate) fn cluster_profile_from(
    root: Node,
    file: &str,
    document: usize,
    diags: &mut Vec<Diagnostic>,
) -> Option<Located<ClusterProfile>> {
    let source =
        |pos: Pos| Source { file: file.to_owned(), document, line: pos.line, column: pos.column };
    let api_version = "svclab.dev/v1alpha1";
    let decoded = decode::object(&root, api_version, "ClusterProfile")?;
    let (typed, findings) = decoded.into_parts(Severity::Error, source);
    diags.extend(findings.into_iter().map(|(finding, _)| finding));
    let Some(Typed::ClusterProfile(value)) = typed else { return None };
    let object = root.pos;
    let origin = Origin::Tree(Arc::new(root));
    let positions = Positions { object, document, file: Arc::from(file), origin };
    Some(Located { value, api_version: api_version.to_owned(), positions })
}

#[cfg(test)]
mod tests;
