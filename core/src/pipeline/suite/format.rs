//! The suite format: `TestSuite` documents read strictly from their positioned tree.
//!
//! Every key is known or an error, every value has the shape its key needs, a test without an
//! expectation is an error, and each expectation keeps where its value was written (for the
//! failure's line and for `--update`). Problems are collected, never fatal to the file: every
//! one is reported with its line and column.

use std::ops::Range;

use crate::net::IpFamily;
use crate::proxy::ProxyMode;
use crate::source::Pos;

use super::tree::{Node, Value};

/// `apiVersion` of a suite.
pub(crate) const API_VERSION: &str = "svclab.dev/v1alpha1";
/// `kind` of a suite.
pub(crate) const KIND: &str = "TestSuite";

pub(crate) const SUITE_KEYS: &[&str] =
    &["apiVersion", "kind", "metadata", "description", "scenario", "resources", "policy", "tests"];
pub(crate) const METADATA_KEYS: &[&str] = &["name", "labels", "annotations"];
pub(crate) const TEST_KEYS: &[&str] = &["name", "description", "resources", "policy", "expect"];
pub(crate) const EXPECT_KEYS: &[&str] = &["objects", "rules", "traces"];
pub(crate) const OBJECT_KEYS: &[&str] = &[
    "ref",
    "outcome",
    "clusterIPs",
    "band",
    "nodePorts",
    "ipFamilies",
    "ipFamilyPolicy",
    "errors",
    "warnings",
    "violations",
];
pub(crate) const RULES_KEYS: &[&str] =
    &["proxyMode", "node", "ipFamily", "includes", "excludes", "golden"];
pub(crate) const TRACE_KEYS: &[&str] = &[
    "src",
    "dst",
    "dport",
    "protocol",
    "node",
    "inInterface",
    "proxyMode",
    "endpoints",
    "verdict",
];

/// The outcomes an object expectation may name.
pub(crate) const OUTCOMES: &[&str] = &["created", "updated", "deleted", "rejected"];
/// The bands a ClusterIP may come from (`none`: the range has no bands).
pub(crate) const BANDS: &[&str] = &["static", "dynamic", "none"];
/// The verdicts a trace may end in, besides reaching endpoints.
pub(crate) const VERDICTS: &[&str] = &["DROP", "REJECT", "no-service", "endpoint"];
/// Kinds whose objects live in a namespace (a ref without one means `default`).
const NAMESPACED: &[&str] = &["Service", "EndpointSlice", "Endpoints"];

/// Something wrong with a suite: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub(crate) pos: Pos,
    pub(crate) message: String,
}

/// Where an expectation's value was written: what `--update` replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct At {
    /// The expectation's path in its test (`expect.objects[0].clusterIPs`).
    pub(crate) path: String,
    pub(crate) pos: Pos,
    /// The value's bytes.
    pub(crate) span: Range<usize>,
    /// Just past the key's text (its `:` follows), for a block list that becomes `[]`.
    pub(crate) key_end: Option<usize>,
    /// The column (0-based) of a block list's dashes; `None` for a flow list or a scalar.
    pub(crate) block_indent: Option<usize>,
}

/// One expected value and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field<T> {
    pub(crate) value: T,
    pub(crate) at: At,
}

/// A file a suite names, resolved against the suite's own folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileRef {
    pub(crate) path: String,
    pub(crate) pos: Pos,
}

/// Inline documents, laid out so their lines and columns are those of the suite file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) text: String,
    /// The suite file's lines the piece covers.
    pub(crate) lines: Range<u32>,
}

/// Where a policy comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PolicySource {
    File(FileRef),
    Inline(Piece),
}

/// One `TestSuite` document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Suite {
    pub(crate) name: String,
    pub(crate) line: u32,
    pub(crate) scenario: Vec<FileRef>,
    pub(crate) resources: Vec<Piece>,
    pub(crate) policy: Option<PolicySource>,
    pub(crate) tests: Vec<Test>,
    /// Problems of the suite itself (its tests are not run).
    pub(crate) problems: Vec<Problem>,
}

/// One test of a suite.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Test {
    pub(crate) name: String,
    pub(crate) line: u32,
    pub(crate) resources: Vec<Piece>,
    pub(crate) policy: Option<PolicySource>,
    pub(crate) objects: Vec<ObjectExpect>,
    pub(crate) rules: Option<RulesExpect>,
    pub(crate) traces: Vec<TraceExpect>,
    /// Problems of this test (it is not run).
    pub(crate) problems: Vec<Problem>,
}

/// The object a `ref` names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Target {
    pub(crate) kind: String,
    pub(crate) namespace: String,
    pub(crate) name: String,
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.namespace.is_empty(), self.name.is_empty()) {
            (_, true) => write!(f, "{}", self.kind),
            (true, false) => write!(f, "{} {}", self.kind, self.name),
            (false, false) => write!(f, "{} {}/{}", self.kind, self.namespace, self.name),
        }
    }
}

/// What is expected of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ObjectExpect {
    pub(crate) path: String,
    pub(crate) target: Target,
    pub(crate) ref_pos: Pos,
    pub(crate) outcome: Option<Field<String>>,
    pub(crate) cluster_ips: Option<Field<Vec<String>>>,
    pub(crate) band: Option<Field<String>>,
    pub(crate) node_ports: Option<Field<Vec<u32>>>,
    pub(crate) ip_families: Option<Field<Vec<String>>>,
    pub(crate) ip_family_policy: Option<Field<String>>,
    pub(crate) errors: Option<Field<Vec<String>>>,
    pub(crate) warnings: Option<Field<Vec<String>>>,
    pub(crate) violations: Option<Field<Vec<String>>>,
}

/// What is expected of the ruleset kube-proxy programs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RulesExpect {
    pub(crate) path: String,
    pub(crate) pos: Pos,
    /// `None`: the scenario's KubeProxyConfiguration's mode, else iptables.
    pub(crate) mode: Option<ProxyMode>,
    pub(crate) node: Option<String>,
    pub(crate) family: Option<IpFamily>,
    /// Each line on its own: a failure names the line's own path.
    pub(crate) includes: Vec<Field<String>>,
    pub(crate) excludes: Vec<Field<String>>,
    pub(crate) golden: Option<Field<FileRef>>,
}

/// A packet and where it must end up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TraceExpect {
    pub(crate) path: String,
    pub(crate) pos: Pos,
    pub(crate) request: crate::trace::TraceRequest,
    pub(crate) mode: ProxyMode,
    pub(crate) endpoints: Option<Field<Vec<String>>>,
    pub(crate) verdict: Option<Field<String>>,
}

/// Reads every suite of one file's documents. `file` is the suite's name as the host gives
/// it; paths in the suite are resolved against its folder.
pub(crate) fn suites(file: &str, text: &str, roots: &[Node]) -> Vec<Suite> {
    roots.iter().map(|root| suite(file, text, root)).collect()
}

/// Reads one document. What cannot be read is a problem of the suite or of its test.
fn suite(file: &str, text: &str, root: &Node) -> Suite {
    let mut problems = Vec::new();
    let mut suite = Suite {
        name: String::new(),
        line: root.pos.line,
        scenario: Vec::new(),
        resources: Vec::new(),
        policy: None,
        tests: Vec::new(),
        problems: Vec::new(),
    };
    if !matches!(root.value, Value::Map { .. }) {
        problems.push(Problem {
            pos: root.pos,
            message: format!("a test suite must be a mapping, not {}", root.shape()),
        });
        suite.problems = problems;
        return suite;
    }
    known_keys(root, SUITE_KEYS, "", &mut problems);
    match root.get("apiVersion").and_then(Node::scalar) {
        Some(API_VERSION) => {}
        Some(other) => problems.push(Problem {
            pos: at_key(root, "apiVersion"),
            message: format!("apiVersion must be {API_VERSION}, not {other}"),
        }),
        None => problems.push(required(root, "apiVersion", API_VERSION)),
    }
    match root.get("kind").and_then(Node::scalar) {
        Some(KIND) => {}
        Some(other) => problems.push(Problem {
            pos: at_key(root, "kind"),
            message: format!("kind must be {KIND}, not {other}"),
        }),
        None => problems.push(required(root, "kind", KIND)),
    }
    match root.get("metadata") {
        Some(metadata) if matches!(metadata.value, Value::Map { .. }) => {
            known_keys(metadata, METADATA_KEYS, "metadata.", &mut problems);
            match metadata.get("name").and_then(Node::scalar) {
                Some(name) if !name.trim().is_empty() => suite.name = name.to_owned(),
                _ => problems.push(Problem {
                    pos: metadata.pos,
                    message: "metadata.name is required: the suite's name prefixes its tests'"
                        .to_owned(),
                }),
            }
        }
        Some(other) => problems.push(must_be(other, "metadata", "a mapping")),
        None => problems.push(Problem {
            pos: root.pos,
            message: "metadata.name is required: the suite's name prefixes its tests'".to_owned(),
        }),
    }
    if let Some(node) = root.get("scenario") {
        suite.scenario = file_list(file, node, "scenario", &mut problems);
    }
    if let Some(node) = root.get("resources") {
        suite.resources = pieces(text, node, "resources", &mut problems);
    }
    if let Some(node) = root.get("policy") {
        suite.policy = policy(file, text, node, "policy", &mut problems);
    }
    match root.get("tests") {
        Some(Node { value: Value::Seq { items, .. }, pos, .. }) => {
            if items.is_empty() {
                problems.push(Problem {
                    pos: *pos,
                    message: "tests is empty: a suite without a test checks nothing".to_owned(),
                });
            }
            for (index, item) in items.iter().enumerate() {
                suite.tests.push(test(file, text, item, index));
            }
        }
        Some(other) => problems.push(must_be(other, "tests", "a list")),
        None => problems.push(Problem {
            pos: root.pos,
            message: "tests is required: a suite without a test checks nothing".to_owned(),
        }),
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut duplicates = Vec::new();
    for test in &suite.tests {
        if !test.name.is_empty() && seen.contains(&test.name.as_str()) {
            duplicates.push(Problem {
                pos: Pos { line: test.line, column: 1 },
                message: format!(
                    "a second test is named {:?}: test names must be unique",
                    test.name
                ),
            });
        }
        seen.push(&test.name);
    }
    problems.extend(duplicates);
    suite.problems = problems;
    suite
}

fn test(file: &str, text: &str, node: &Node, index: usize) -> Test {
    let mut problems = Vec::new();
    let mut test = Test {
        name: String::new(),
        line: node.pos.line,
        resources: Vec::new(),
        policy: None,
        objects: Vec::new(),
        rules: None,
        traces: Vec::new(),
        problems: Vec::new(),
    };
    if !matches!(node.value, Value::Map { .. }) {
        problems.push(must_be(node, &format!("tests[{index}]"), "a mapping"));
        test.name = format!("tests[{index}]");
        test.problems = problems;
        return test;
    }
    known_keys(node, TEST_KEYS, "", &mut problems);
    match node.get("name").and_then(Node::scalar) {
        Some(name) if !name.trim().is_empty() => test.name = name.to_owned(),
        _ => {
            test.name = format!("tests[{index}]");
            problems.push(Problem { pos: node.pos, message: "a test needs a name".to_owned() });
        }
    }
    if let Some(resources) = node.get("resources") {
        test.resources = pieces(text, resources, "resources", &mut problems);
    }
    if let Some(policy_node) = node.get("policy") {
        test.policy = policy(file, text, policy_node, "policy", &mut problems);
    }
    match node.get("expect") {
        Some(expect) if matches!(expect.value, Value::Map { .. }) => {
            known_keys(expect, EXPECT_KEYS, "expect.", &mut problems);
            if let Some(objects) = expect.get("objects") {
                for (i, item) in list(objects, "expect.objects", &mut problems).iter().enumerate() {
                    let path = format!("expect.objects[{i}]");
                    if let Some(object) = object_expect(item, path, &mut problems) {
                        test.objects.push(object);
                    }
                }
            }
            if let Some(rules) = expect.get("rules") {
                test.rules = rules_expect(file, rules, &mut problems);
            }
            if let Some(traces) = expect.get("traces") {
                for (i, item) in list(traces, "expect.traces", &mut problems).iter().enumerate() {
                    let path = format!("expect.traces[{i}]");
                    if let Some(trace) = trace_expect(item, path, &mut problems) {
                        test.traces.push(trace);
                    }
                }
            }
            if problems.is_empty()
                && test.objects.is_empty()
                && test.rules.is_none()
                && test.traces.is_empty()
            {
                problems.push(Problem {
                    pos: expect.pos,
                    message: "expect names no expectation (objects, rules or traces): the test would check nothing".to_owned(),
                });
            }
        }
        Some(other) if other.value == Value::Null => problems.push(Problem {
            pos: other.pos,
            message: "expect is empty: the test would check nothing".to_owned(),
        }),
        Some(other) => problems.push(must_be(other, "expect", "a mapping")),
        None => problems.push(Problem {
            pos: node.pos,
            message: "the test has no expect: it would check nothing".to_owned(),
        }),
    }
    test.problems = problems;
    test
}

fn object_expect(node: &Node, path: String, problems: &mut Vec<Problem>) -> Option<ObjectExpect> {
    if !matches!(node.value, Value::Map { .. }) {
        problems.push(must_be(node, &path, "a mapping"));
        return None;
    }
    known_keys(node, OBJECT_KEYS, &format!("{path}."), problems);
    let Some(ref_node) = node.get("ref") else {
        problems.push(Problem {
            pos: node.pos,
            message: format!("{path}.ref is required (\"Kind namespace/name\" or \"Kind name\")"),
        });
        return None;
    };
    let target = match ref_node.scalar().map(parse_ref) {
        Some(Ok(target)) => target,
        Some(Err(message)) => {
            problems.push(Problem { pos: ref_node.pos, message: format!("{path}.ref: {message}") });
            return None;
        }
        None => {
            problems.push(must_be(ref_node, &format!("{path}.ref"), "a string"));
            return None;
        }
    };
    let mut object = ObjectExpect {
        path: path.clone(),
        target,
        ref_pos: ref_node.pos,
        outcome: None,
        cluster_ips: None,
        band: None,
        node_ports: None,
        ip_families: None,
        ip_family_policy: None,
        errors: None,
        warnings: None,
        violations: None,
    };
    let before = problems.len();
    object.outcome = one_of(node, "outcome", &path, OUTCOMES, problems);
    object.cluster_ips = strings(node, "clusterIPs", &path, problems);
    object.band = one_of(node, "band", &path, BANDS, problems);
    object.node_ports = ports(node, "nodePorts", &path, problems);
    object.ip_families = strings(node, "ipFamilies", &path, problems);
    object.ip_family_policy = one_of(
        node,
        "ipFamilyPolicy",
        &path,
        &["SingleStack", "PreferDualStack", "RequireDualStack"],
        problems,
    );
    object.errors = strings(node, "errors", &path, problems);
    object.warnings = strings(node, "warnings", &path, problems);
    object.violations = strings(node, "violations", &path, problems);
    if problems.len() > before {
        return None;
    }
    let service_only = [
        ("clusterIPs", object.cluster_ips.is_some()),
        ("band", object.band.is_some()),
        ("nodePorts", object.node_ports.is_some()),
        ("ipFamilies", object.ip_families.is_some()),
        ("ipFamilyPolicy", object.ip_family_policy.is_some()),
    ];
    if object.target.kind != "Service" {
        for (key, given) in service_only {
            if given {
                problems.push(Problem {
                    pos: at_key(node, key),
                    message: format!(
                        "{path}.{key}: only a Service has {key}, not a {}",
                        object.target.kind
                    ),
                });
            }
        }
    }
    if node.entries().len() == 1 {
        problems.push(Problem {
            pos: node.pos,
            message: format!("{path} names an object but expects nothing of it"),
        });
    }
    Some(object)
}

fn rules_expect(file: &str, node: &Node, problems: &mut Vec<Problem>) -> Option<RulesExpect> {
    let path = "expect.rules";
    if !matches!(node.value, Value::Map { .. }) {
        problems.push(must_be(node, path, "a mapping"));
        return None;
    }
    known_keys(node, RULES_KEYS, "expect.rules.", problems);
    let before = problems.len();
    let mode = one_of(node, "proxyMode", path, &["iptables", "nftables"], problems)
        .map(|f| proxy_mode(&f.value));
    let family = one_of(node, "ipFamily", path, &["IPv4", "IPv6"], problems)
        .map(|f| if f.value == "IPv6" { IpFamily::V6 } else { IpFamily::V4 });
    let node_name = string(node, "node", path, problems).map(|f| f.value);
    let includes = line_list(node, "includes", path, problems);
    let excludes = line_list(node, "excludes", path, problems);
    let golden = string(node, "golden", path, problems).map(|f| Field {
        value: FileRef { path: resolve(file, &f.value), pos: f.at.pos },
        at: f.at,
    });
    if problems.len() > before {
        return None;
    }
    if node.get("includes").is_none() && node.get("excludes").is_none() && golden.is_none() {
        problems.push(Problem {
            pos: node.pos,
            message: "expect.rules needs includes, excludes or golden: it would check nothing"
                .to_owned(),
        });
        return None;
    }
    Some(RulesExpect {
        path: path.to_owned(),
        pos: node.pos,
        mode,
        node: node_name,
        family,
        includes,
        excludes,
        golden,
    })
}

fn trace_expect(node: &Node, path: String, problems: &mut Vec<Problem>) -> Option<TraceExpect> {
    if !matches!(node.value, Value::Map { .. }) {
        problems.push(must_be(node, &path, "a mapping"));
        return None;
    }
    known_keys(node, TRACE_KEYS, &format!("{path}."), problems);
    let before = problems.len();
    let src = string(node, "src", &path, problems);
    let dst = string(node, "dst", &path, problems);
    let dport = ports(node, "dport", &path, problems);
    let protocol =
        one_of(node, "protocol", &path, &["tcp", "udp", "sctp", "TCP", "UDP", "SCTP"], problems);
    let node_name = string(node, "node", &path, problems).map(|f| f.value);
    let in_interface = string(node, "inInterface", &path, problems).map(|f| f.value);
    let mode = one_of(node, "proxyMode", &path, &["iptables", "nftables"], problems)
        .map_or(ProxyMode::Iptables, |f| proxy_mode(&f.value));
    let endpoints = strings(node, "endpoints", &path, problems);
    let verdict = one_of(node, "verdict", &path, VERDICTS, problems);
    for (key, given) in [("src", src.is_some()), ("dst", dst.is_some()), ("dport", dport.is_some())]
    {
        if !given && node.get(key).is_none() {
            problems.push(Problem { pos: node.pos, message: format!("{path}.{key} is required") });
        }
    }
    let dport = match dport.map(|f| f.value) {
        Some(ports) if ports.len() == 1 && u16::try_from(ports[0]).is_ok() => {
            u16::try_from(ports[0]).unwrap_or_default()
        }
        Some(_) => {
            problems.push(Problem {
                pos: at_key(node, "dport"),
                message: format!("{path}.dport must be one port"),
            });
            0
        }
        None => 0,
    };
    if endpoints.is_none() && verdict.is_none() && problems.len() == before {
        problems.push(Problem {
            pos: node.pos,
            message: format!(
                "{path} needs endpoints or verdict: the packet would be checked for nothing"
            ),
        });
    }
    if problems.len() > before {
        return None;
    }
    Some(TraceExpect {
        pos: node.pos,
        request: crate::trace::TraceRequest {
            src: src.map(|f| f.value).unwrap_or_default(),
            dst: dst.map(|f| f.value).unwrap_or_default(),
            dport,
            protocol: protocol.map_or_else(|| "tcp".to_owned(), |f| f.value.to_lowercase()),
            node: node_name,
            in_interface,
        },
        path,
        mode,
        endpoints,
        verdict,
    })
}

fn proxy_mode(text: &str) -> ProxyMode {
    if text == "nftables" { ProxyMode::Nftables } else { ProxyMode::Iptables }
}

/// `Kind namespace/name`, `Kind name` (the default namespace for namespaced kinds), or a
/// bare `Kind` for the scenario's one object of a kind that has no name.
pub(crate) fn parse_ref(text: &str) -> Result<Target, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let (kind, rest) = match words.as_slice() {
        [kind] => (*kind, ""),
        [kind, rest] => (*kind, *rest),
        _ => {
            return Err(format!("{text:?} is not \"Kind namespace/name\" or \"Kind name\""));
        }
    };
    if !kind.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
        return Err(format!("{text:?} must start with a kind (Service, EndpointSlice, ...)"));
    }
    let namespaced = NAMESPACED.contains(&kind);
    let (namespace, name) = match rest.split_once('/') {
        Some((namespace, name)) if namespaced && !namespace.is_empty() && !name.is_empty() => {
            (namespace, name)
        }
        Some(_) if !namespaced => {
            return Err(format!("a {kind} has no namespace: write \"{kind} name\""));
        }
        Some(_) => return Err(format!("{text:?} is not \"Kind namespace/name\"")),
        None if namespaced && rest.is_empty() => {
            return Err(format!("{text:?} names no object: write \"{kind} namespace/name\""));
        }
        None if namespaced => ("default", rest),
        None => ("", rest),
    };
    Ok(Target { kind: kind.to_owned(), namespace: namespace.to_owned(), name: name.to_owned() })
}

/// Whether objects of `kind` live in a namespace.
pub(crate) fn namespaced(kind: &str) -> bool {
    NAMESPACED.contains(&kind)
}

/// A path written in a suite, resolved against the suite file's folder (with `/` separators;
/// `.` and `..` steps folded), as the host will open it.
pub(crate) fn resolve(suite_file: &str, path: &str) -> String {
    if path.starts_with('/') {
        return normalize(path);
    }
    let folder = match suite_file.rfind('/') {
        Some(at) => &suite_file[..=at],
        None => "",
    };
    normalize(&format!("{folder}{path}"))
}

fn normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut steps: Vec<&str> = Vec::new();
    for step in path.split('/') {
        match step {
            "" | "." => {}
            ".." if steps.last().is_some_and(|s| *s != "..") => {
                steps.pop();
            }
            ".." if absolute => {}
            step => steps.push(step),
        }
    }
    let joined = steps.join("/");
    if absolute { format!("/{joined}") } else { joined }
}

fn known_keys(node: &Node, known: &[&str], prefix: &str, problems: &mut Vec<Problem>) {
    for entry in node.entries() {
        if !known.contains(&entry.key.as_str()) {
            problems.push(Problem {
                pos: entry.key_pos,
                message: format!(
                    "unknown key `{prefix}{}` (known here: {})",
                    entry.key,
                    known.join(", ")
                ),
            });
        }
    }
}

fn at_key(node: &Node, key: &str) -> Pos {
    node.entries().iter().find(|e| e.key == key).map_or(node.pos, |e| e.key_pos)
}

fn required(node: &Node, key: &str, value: &str) -> Problem {
    Problem { pos: node.pos, message: format!("{key} is required ({key}: {value})") }
}

fn must_be(node: &Node, path: &str, shape: &str) -> Problem {
    Problem { pos: node.pos, message: format!("{path} must be {shape}, not {}", node.shape()) }
}

fn list<'n>(node: &'n Node, path: &str, problems: &mut Vec<Problem>) -> &'n [Node] {
    match &node.value {
        Value::Seq { items, .. } => items,
        _ => {
            problems.push(must_be(node, path, "a list"));
            &[]
        }
    }
}

fn at_of(parent: &Node, key: &str, node: &Node, path: String) -> At {
    let entry = parent.entries().iter().find(|e| e.key == key);
    let block_indent = match &node.value {
        Value::Seq { items, flow: false } => items.first().map(|_| dash_column(node)),
        _ => None,
    };
    At {
        path,
        pos: node.pos,
        span: node.span.clone(),
        key_end: entry.map(|e| e.key_end),
        block_indent,
    }
}

/// A block list's span starts at its first dash.
fn dash_column(node: &Node) -> usize {
    node.pos.column.saturating_sub(1) as usize
}

/// A string value (any scalar, as written).
fn string(
    parent: &Node,
    key: &str,
    path: &str,
    problems: &mut Vec<Problem>,
) -> Option<Field<String>> {
    let node = parent.get(key)?;
    let path = format!("{path}.{key}");
    match node.scalar() {
        Some(text) => Some(Field { value: text.to_owned(), at: at_of(parent, key, node, path) }),
        None => {
            problems.push(must_be(node, &path, "a string"));
            None
        }
    }
}

/// A string value from a closed set.
fn one_of(
    parent: &Node,
    key: &str,
    path: &str,
    allowed: &[&str],
    problems: &mut Vec<Problem>,
) -> Option<Field<String>> {
    let field = string(parent, key, path, problems)?;
    if allowed.contains(&field.value.as_str()) {
        return Some(field);
    }
    problems.push(Problem {
        pos: field.at.pos,
        message: format!(
            "{}: {:?} is not one of {}",
            field.at.path,
            field.value,
            allowed.join(", ")
        ),
    });
    None
}

/// A list of strings (a single scalar is not taken for a list of one: `[]` means none).
fn strings(
    parent: &Node,
    key: &str,
    path: &str,
    problems: &mut Vec<Problem>,
) -> Option<Field<Vec<String>>> {
    let node = parent.get(key)?;
    let path = format!("{path}.{key}");
    let Value::Seq { items, .. } = &node.value else {
        problems.push(must_be(node, &path, "a list (`[]` for none)"));
        return None;
    };
    let mut values = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item.scalar() {
            Some(text) => values.push(text.to_owned()),
            None => {
                problems.push(must_be(item, &format!("{path}[{i}]"), "a string"));
                return None;
            }
        }
    }
    Some(Field { value: values, at: at_of(parent, key, node, path) })
}

/// Each line of a list on its own, with its own path.
fn line_list(
    parent: &Node,
    key: &str,
    path: &str,
    problems: &mut Vec<Problem>,
) -> Vec<Field<String>> {
    let Some(node) = parent.get(key) else { return Vec::new() };
    let path = format!("{path}.{key}");
    let Value::Seq { items, .. } = &node.value else {
        problems.push(must_be(node, &path, "a list of lines"));
        return Vec::new();
    };
    let mut lines = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let item_path = format!("{path}[{i}]");
        match item.scalar() {
            Some(text) => lines.push(Field {
                value: text.to_owned(),
                at: At {
                    path: item_path,
                    pos: item.pos,
                    span: item.span.clone(),
                    key_end: None,
                    block_indent: None,
                },
            }),
            None => problems.push(must_be(item, &item_path, "a line (a string)")),
        }
    }
    lines
}

/// Port numbers: a list (`nodePorts`), or one number (`dport`, read as a list of one).
fn ports(
    parent: &Node,
    key: &str,
    path: &str,
    problems: &mut Vec<Problem>,
) -> Option<Field<Vec<u32>>> {
    let node = parent.get(key)?;
    let path = format!("{path}.{key}");
    let items: Vec<&Node> = match &node.value {
        Value::Seq { items, .. } => items.iter().collect(),
        Value::Scalar { .. } if key == "dport" => vec![node],
        _ => {
            problems.push(must_be(node, &path, "a list of ports (`[]` for none)"));
            return None;
        }
    };
    let mut values = Vec::with_capacity(items.len());
    for item in items {
        match item.scalar().and_then(|t| t.parse::<u32>().ok()).filter(|p| *p <= 65535) {
            Some(port) => values.push(port),
            None => {
                problems.push(Problem {
                    pos: item.pos,
                    message: format!("{path}: {} is not a port number", item_text(item)),
                });
                return None;
            }
        }
    }
    Some(Field { value: values, at: at_of(parent, key, node, path) })
}

fn item_text(node: &Node) -> String {
    node.scalar().map_or_else(|| node.shape().to_owned(), |t| format!("{t:?}"))
}

/// `scenario`: one path or a list of paths.
fn file_list(file: &str, node: &Node, path: &str, problems: &mut Vec<Problem>) -> Vec<FileRef> {
    let items: Vec<&Node> = match &node.value {
        Value::Scalar { .. } => vec![node],
        Value::Seq { items, .. } => items.iter().collect(),
        _ => {
            problems.push(must_be(node, path, "a file or a list of files"));
            return Vec::new();
        }
    };
    let mut files = Vec::new();
    for item in items {
        match item.scalar() {
            Some(text) if !text.is_empty() => {
                files.push(FileRef { path: resolve(file, text), pos: item.pos });
            }
            _ => problems.push(must_be(item, path, "a file name")),
        }
    }
    files
}

/// `policy`: a file, or the settings (a ServicePolicy or bare settings) written inline.
fn policy(
    file: &str,
    text: &str,
    node: &Node,
    path: &str,
    problems: &mut Vec<Problem>,
) -> Option<PolicySource> {
    match &node.value {
        Value::Scalar { text: name, quoted: _ } if !name.contains('\n') => {
            Some(PolicySource::File(FileRef { path: resolve(file, name), pos: node.pos }))
        }
        Value::Map { .. } => Some(PolicySource::Inline(isolate(text, node))),
        _ => {
            problems.push(must_be(node, path, "a file or the settings"));
            None
        }
    }
}

/// `resources`: documents in a string (`|` block), or a list of objects.
fn pieces(text: &str, node: &Node, path: &str, problems: &mut Vec<Problem>) -> Vec<Piece> {
    match &node.value {
        Value::Scalar { text: content, .. } => vec![block_piece(text, node, content)],
        Value::Seq { items, .. } => items
            .iter()
            .filter_map(|item| match item.value {
                Value::Map { .. } => Some(isolate(text, item)),
                _ => {
                    problems.push(must_be(item, path, "a list of objects"));
                    None
                }
            })
            .collect(),
        _ => {
            problems.push(must_be(node, path, "documents (a `|` block) or a list of objects"));
            Vec::new()
        }
    }
}

/// A node's own text, everything else on its lines blanked, so the lines and columns of what
/// is read from it are the suite file's.
pub(crate) fn isolate(text: &str, node: &Node) -> Piece {
    let span = node.span.clone();
    let mut out = String::with_capacity(span.end);
    for (at, c) in text[..span.end.min(text.len())].char_indices() {
        if c == '\n' || at >= span.start {
            out.push(c);
        } else if at >= line_start(text, span.start) {
            out.push(' ');
        }
    }
    out.push('\n');
    let first = node.pos.line;
    let last = first + u32::try_from(text[span.clone()].matches('\n').count()).unwrap_or(0);
    Piece { text: out, lines: first..last + 1 }
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// The documents of a block string, laid out at the lines (and, for a `|` block, the columns)
/// they have in the suite: the parser gives the content without its indentation, which is put
/// back on every line but the `---` separators (a separator must start its line).
fn block_piece(text: &str, node: &Node, content: &str) -> Piece {
    let literal = text[line_start(text, node.span.start)..node.span.start].trim().is_empty()
        && !text[node.span.start..].starts_with(['"', '\'']);
    let indent = if literal { node.pos.column.saturating_sub(1) as usize } else { 0 };
    let first = node.pos.line;
    let mut out = "\n".repeat(first.saturating_sub(1) as usize);
    let mut count = 0u32;
    for line in content.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        let separator = bare == "---" || bare.starts_with("--- ") || bare == "...";
        if !separator && !bare.trim().is_empty() {
            out.extend(std::iter::repeat_n(' ', indent));
        }
        out.push_str(line);
        count += 1;
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Piece { text: out, lines: first..first + count.max(1) }
}
