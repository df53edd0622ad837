//! The JSON Schema (draft 2020-12) of a `TestSuite` document (`svclab test schema`), for
//! editors and linters. The reader (`format.rs`) is the authority; a test holds the two to the
//! same keys.
//!
//! Hosts get the checked-in `schema.json`: the builder below runs only in the tests, which hold
//! the file to it (`UPDATE_EXPECT=1` rewrites it), because its `json!` expansions cost the
//! WebAssembly component tens of kilobytes for one constant string.

/// The schema as pretty JSON with a trailing newline.
pub(crate) const SCHEMA: &str = include_str!("schema.json");

#[cfg(test)]
use serde_json::{Value, json};

#[cfg(test)]
use super::format::{API_VERSION, BANDS, KIND, OUTCOMES, VERDICTS};

#[cfg(test)]
fn strings(description: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "description": description})
}

#[cfg(test)]
fn documents(description: &str) -> Value {
    json!({
        "description": description,
        "oneOf": [
            {"type": "string", "description": "YAML or JSON documents, separated by `---` lines"},
            {"type": "array", "items": {"type": "object"}, "description": "Kubernetes objects"}
        ]
    })
}

#[cfg(test)]
fn policy() -> Value {
    json!({
        "description": "The operator's Service policy in effect before every object: a file (relative to the suite) holding ServicePolicy documents or the bare settings, or the settings written here (see `svclab policy schema`)",
        "oneOf": [{"type": "string"}, {"type": "object"}]
    })
}

/// The schema built from the reader's constants, as pretty JSON with a trailing newline.
#[cfg(test)]
pub(crate) fn schema() -> String {
    let object = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["ref"],
        "minProperties": 2,
        "properties": {
            "ref": {"type": "string", "pattern": "^[A-Z][A-Za-z]*( [^ /]+(/[^ /]+)?)?$", "description": "\"Kind namespace/name\", or \"Kind name\" (the default namespace for Services, EndpointSlices and Endpoints); the object's last document in the scenario"},
            "outcome": {"enum": OUTCOMES, "description": "What the apiserver did with the object's last document"},
            "clusterIPs": strings("spec.clusterIPs as stored, in order (Services)"),
            "band": {"enum": BANDS, "description": "The band every ClusterIP came from (Services; `none`: the range has no bands)"},
            "nodePorts": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 65535}, "description": "The node ports of spec.ports, in order (Services; [] means none)"},
            "ipFamilies": strings("spec.ipFamilies as stored (Services)"),
            "ipFamilyPolicy": {"enum": ["SingleStack", "PreferDualStack", "RequireDualStack"]},
            "errors": strings("Each cause's message, exactly, in order; [] means none"),
            "warnings": strings("Each warning's message (apiserver warnings and svclab's advisories), exactly, in order; [] means none"),
            "violations": strings("The policy rules the object violates (settings paths such as nodePorts.forbid), in the order first reported; [] means none")
        }
    });
    let rules = json!({
        "type": "object",
        "additionalProperties": false,
        "anyOf": [{"required": ["includes"]}, {"required": ["excludes"]}, {"required": ["golden"]}],
        "properties": {
            "proxyMode": {"enum": ["iptables", "nftables"], "description": "Default: the scenario's KubeProxyConfiguration mode, else iptables"},
            "node": {"type": "string", "description": "The node kube-proxy runs on (default: hostnameOverride, else the first Node)"},
            "ipFamily": {"enum": ["IPv4", "IPv6"]},
            "includes": strings("Lines the ruleset must hold, each exactly"),
            "excludes": strings("Lines the ruleset must not hold"),
            "golden": {"type": "string", "description": "A file (relative to the suite) holding the whole ruleset"}
        }
    });
    let trace = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["src", "dst", "dport"],
        "anyOf": [{"required": ["endpoints"]}, {"required": ["verdict"]}],
        "properties": {
            "src": {"type": "string"},
            "dst": {"type": "string"},
            "dport": {"type": "integer", "minimum": 0, "maximum": 65535},
            "protocol": {"enum": ["tcp", "udp", "sctp", "TCP", "UDP", "SCTP"]},
            "node": {"type": "string", "description": "The node the packet arrives at"},
            "inInterface": {"type": "string"},
            "proxyMode": {"enum": ["iptables", "nftables"], "description": "Default: iptables"},
            "endpoints": strings("Every ip:port the packet can reach, as a set ([] means none)"),
            "verdict": {"enum": VERDICTS, "description": "What happens to the packet (`no-service`: no rule takes it; `endpoint`: it reaches an endpoint)"}
        }
    });
    let test = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["name", "expect"],
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "description": {"type": "string"},
            "resources": documents("Documents added after the suite's, for this test"),
            "policy": policy(),
            "expect": {
                "type": "object",
                "additionalProperties": false,
                "minProperties": 1,
                "properties": {
                    "objects": {"type": "array", "items": object},
                    "rules": rules,
                    "traces": {"type": "array", "items": trace}
                }
            }
        }
    });
    let suite = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://svclab.dev/schemas/testsuite.json",
        "title": "svclab TestSuite",
        "description": "A test suite of `svclab test` (files named *.svclab-test.yaml, one or more suites per file)",
        "type": "object",
        "additionalProperties": false,
        "required": ["apiVersion", "kind", "metadata", "tests"],
        "properties": {
            "apiVersion": {"const": API_VERSION},
            "kind": {"const": KIND},
            "metadata": {
                "type": "object",
                "additionalProperties": false,
                "required": ["name"],
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "annotations": {"type": "object", "additionalProperties": {"type": "string"}}
                }
            },
            "description": {"type": "string"},
            "scenario": {
                "description": "Scenario files, relative to this file, read before the inline resources",
                "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
            },
            "resources": documents("Documents after the scenario files, in every test"),
            "policy": policy(),
            "tests": {"type": "array", "minItems": 1, "items": test}
        }
    });
    let mut text = serde_json::to_string_pretty(&suite).unwrap_or_default();
    text.push('\n');
    text
}
