//! The JSON Schema (draft 2020-12) of the settings object, for editors and for Kubewarden's
//! questions UI. It mirrors the strict decoder: `additionalProperties: false` everywhere.

use serde_json::{Value, json};

fn action() -> Value {
    json!({
        "description": "What a violation of this block does (overrides the top-level action).",
        "enum": ["deny", "warn", "audit"]
    })
}

fn level(description: &str) -> Value {
    json!({ "description": description, "enum": ["allow", "warn", "deny"], "default": "allow" })
}

fn strings(description: &str) -> Value {
    json!({ "description": description, "type": "array", "items": { "type": "string" } })
}

fn cidrs(description: &str) -> Value {
    json!({
        "description": description,
        "type": "array",
        "items": { "$ref": "#/$defs/cidr" }
    })
}

fn flag(description: &str) -> Value {
    json!({ "description": description, "type": "boolean", "default": false })
}

fn block(properties: Value) -> Value {
    json!({ "type": "object", "additionalProperties": false, "properties": properties })
}

fn schema() -> Value {
    let service_ref = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["namespace", "name"],
        "properties": { "namespace": { "type": "string" }, "name": { "type": "string" } }
    });
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://svclab.dev/schemas/v1alpha1/service-policy-settings.json",
        "title": "svclab Service policy settings",
        "description": "Every block is optional; {} enforces nothing. Unknown keys are errors.",
        "type": "object",
        "additionalProperties": false,
        "$defs": {
            "cidr": {
                "description": "A CIDR, or a bare IP (a /32 or /128), compared as addresses.",
                "type": "string"
            },
            "portRange": {
                "description": "A port (30443 or \"30443\") or an inclusive range \"30000-30100\".",
                "oneOf": [
                    { "type": "integer", "minimum": 1, "maximum": 65535 },
                    { "type": "string", "pattern": "^[0-9]{1,5}(-[0-9]{1,5})?$" }
                ]
            },
            "namespacePattern": {
                "description": "A namespace name with an optional leading or trailing *.",
                "type": "string",
                "pattern": "^\\*?[^*]*\\*?$"
            },
            "explicit": { "enum": ["allow", "forbid", "staticBandOnly"], "default": "allow" }
        },
        "properties": {
            "action": {
                "description": "What a violation does: deny, warn or audit.",
                "enum": ["deny", "warn", "audit"],
                "default": "deny"
            },
            "exemptions": block(json!({
                "namespaces": { "type": "array", "items": { "$ref": "#/$defs/namespacePattern" } },
                "usernames": strings("request.userInfo.username values that skip the policy."),
                "groups": strings("request.userInfo.groups values that skip the policy."),
                "services": { "type": "array", "items": service_ref }
            })),
            "types": block(json!({
                "action": action(),
                "allowed": {
                    "description": "Allowed spec.type values; empty allows every type.",
                    "type": "array",
                    "items": { "enum": ["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"] }
                }
            })),
            "externalIPs": block(json!({
                "action": action(),
                "mode": {
                    "description": "CVE-2020-8554: allow, forbid, forbidNew (only IPs already on the old object) or allowlist.",
                    "enum": ["allow", "forbid", "forbidNew", "allowlist"],
                    "default": "allow"
                },
                "allowedCIDRs": cidrs("With mode allowlist: the ranges external IPs must lie in."),
                "allowedUsernames": strings("Only these users may set external IPs."),
                "allowedGroups": strings("Only members of these groups may set external IPs."),
                "alsoCheckAnnotations": strings("Annotation keys holding comma-separated IPs, judged like spec.externalIPs.")
            })),
            "nodePorts": block(json!({
                "action": action(),
                "forbid": flag("No node ports."),
                "countLoadBalancerNodePorts": {
                    "description": "A LoadBalancer without allocateLoadBalancerNodePorts: false uses node ports (counts for forbid).",
                    "type": "boolean",
                    "default": true
                },
                "allowedRanges": { "type": "array", "items": { "$ref": "#/$defs/portRange" } },
                "explicit": { "$ref": "#/$defs/explicit", "description": "Explicit node ports: allow, forbid, or staticBandOnly (KEP-3668)." },
                "namespaceRanges": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["namespaces", "ranges"],
                        "properties": {
                            "namespaces": { "type": "array", "items": { "$ref": "#/$defs/namespacePattern" } },
                            "ranges": { "type": "array", "items": { "$ref": "#/$defs/portRange" } }
                        }
                    }
                },
                "reservations": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["port", "namespace", "name"],
                        "properties": {
                            "port": { "type": "integer", "minimum": 1, "maximum": 65535 },
                            "protocol": { "enum": ["TCP", "UDP", "SCTP"], "default": "TCP" },
                            "namespace": { "type": "string" },
                            "name": { "type": "string" }
                        }
                    }
                }
            })),
            "loadBalancer": block(json!({
                "action": action(),
                "forbid": flag("No LoadBalancer Services."),
                "requireInternal": flag("LoadBalancers must carry one of internalAnnotations."),
                "internalAnnotations": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["key"],
                        "properties": { "key": { "type": "string" }, "value": { "type": "string" } }
                    }
                },
                "allowedClasses": strings("spec.loadBalancerClass values; empty allows any."),
                "requireSourceRanges": flag("LoadBalancers must set loadBalancerSourceRanges."),
                "forbidOpenSourceRanges": flag("No 0.0.0.0/0 or ::/0 source range."),
                "allowedSourceRangeCIDRs": cidrs("Source ranges must lie in these."),
                "loadBalancerIP": {
                    "description": "The deprecated spec.loadBalancerIP: allow, forbid or allowlist.",
                    "enum": ["allow", "forbid", "allowlist"],
                    "default": "allow"
                },
                "allowedLoadBalancerIPCIDRs": cidrs("With loadBalancerIP allowlist: the allowed ranges."),
                "statusIngressAllowedCIDRs": cidrs("status.loadBalancer.ingress[].ip must lie in these.")
            })),
            "clusterIP": block(json!({
                "action": action(),
                "explicit": { "$ref": "#/$defs/explicit", "description": "Explicit cluster IPs: allow, forbid, or staticBandOnly (KEP-3070)." },
                "explicitNamespaces": { "type": "array", "items": { "$ref": "#/$defs/namespacePattern" } },
                "namespaceCIDRs": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["namespaces", "cidrs"],
                        "properties": {
                            "namespaces": { "type": "array", "items": { "$ref": "#/$defs/namespacePattern" } },
                            "cidrs": { "type": "array", "items": { "$ref": "#/$defs/cidr" } }
                        }
                    }
                },
                "reservations": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["ip", "namespace", "name"],
                        "properties": {
                            "ip": { "type": "string" },
                            "namespace": { "type": "string" },
                            "name": { "type": "string" }
                        }
                    }
                },
                "headless": { "enum": ["allow", "forbid"], "default": "allow" }
            })),
            "externalName": block(json!({
                "action": action(),
                "forbid": flag("No ExternalName Services."),
                "deniedNames": strings("Globs (* matches one or more characters), lower-cased, trailing dot ignored."),
                "allowedNames": strings("Globs; when not empty, externalName must match one."),
                "forbidIPLiterals": flag("No IPv4 or IPv6 literal as externalName.")
            })),
            "selector": block(json!({
                "action": action(),
                "require": flag("Services must have a selector."),
                "uniqueInNamespace": flag("No two Services of a namespace with the same selector.")
            })),
            "ports": block(json!({
                "action": action(),
                "allowedPorts": { "type": "array", "items": { "$ref": "#/$defs/portRange" } },
                "deniedPorts": { "type": "array", "items": { "$ref": "#/$defs/portRange" } },
                "allowedProtocols": { "type": "array", "items": { "enum": ["TCP", "UDP", "SCTP"] } },
                "requireNames": flag("Every port must be named.")
            })),
            "endpointSlices": block(json!({
                "action": action(),
                "manual": {
                    "description": "Hand-written EndpointSlices (CVE-2021-25740): allow, forbid or restrictAddresses.",
                    "enum": ["allow", "forbid", "restrictAddresses"],
                    "default": "allow"
                },
                "managedBy": {
                    "type": "array",
                    "items": { "type": "string" },
                    "default": ["endpointslice-controller.k8s.io", "endpointslicemirroring-controller.k8s.io"]
                },
                "allowedAddressCIDRs": cidrs("With restrictAddresses: addresses must lie in these."),
                "deniedAddressCIDRs": cidrs("With restrictAddresses: addresses must not lie in these.")
            })),
            "deprecations": block(json!({
                "externalIPs": level("spec.externalIPs."),
                "loadBalancerIP": level("spec.loadBalancerIP."),
                "topologyAwareHintsAnnotation": level("service.kubernetes.io/topology-aware-hints."),
                "tolerateUnreadyEndpointsAnnotation": level("service.alpha.kubernetes.io/tolerate-unready-endpoints.")
            })),
            "nonCanonicalIPs": level("Leading zeros, IPv4-mapped IPv6, non-RFC-5952 IPv6 (CVE-2021-29923).")
        }
    })
}

/// `svclab policy schema`: the JSON Schema (draft 2020-12) of the settings object, pretty
/// printed with a trailing newline.
///
/// ```
/// let schema: serde_json::Value = serde_json::from_str(&svclab_core::settings_schema()).unwrap();
/// assert_eq!(schema["additionalProperties"], false);
/// assert!(schema["properties"]["externalIPs"]["properties"]["allowedCIDRs"].is_object());
/// ```
pub fn settings_schema() -> String {
    let mut text = serde_json::to_string_pretty(&schema()).unwrap_or_default();
    text.push('\n');
    text
}
