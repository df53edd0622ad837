//! The report: the public JSON contract of `svclab check` (`apiVersion: svclab.dev/v1alpha1`),
//! and its kubectl-like text rendering.

use serde::{Deserialize, Serialize};

use crate::diagnostic::{Diagnostic, Severity};
use crate::profile::ProfileSummary;

/// `apiVersion` of the report.
pub(crate) const REPORT_API_VERSION: &str = "svclab.dev/v1alpha1";

/// Everything svclab found for a scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// `svclab.dev/v1alpha1`.
    pub api_version: String,
    /// `Report`.
    pub kind: String,
    /// The profile in force.
    pub profile: ProfileSummary,
    /// Every Service document, in stream order, with its outcome.
    pub services: Vec<ServiceReport>,
    /// Service IP ranges after the whole stream.
    pub ranges: Vec<RangeReport>,
    /// The NodePort range after the whole stream.
    pub node_port_range: PortRangeReport,
    /// Errors and warnings, in stream order.
    pub diagnostics: Vec<Diagnostic>,
    /// kube-proxy rulesets, when rendered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<Rules>,
}

/// One Service document and what happened to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceReport {
    /// `metadata.namespace` after defaulting.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.type` after defaulting.
    #[serde(rename = "type")]
    pub type_: String,
    /// `created`, `updated`, `deleted` or `rejected`.
    pub outcome: String,
    /// `spec.clusterIPs` as stored.
    #[serde(rename = "clusterIPs")]
    pub cluster_ips: Vec<String>,
    /// `spec.ipFamilies` as stored.
    pub ip_families: Vec<String>,
    /// `spec.ipFamilyPolicy` as stored (empty for ExternalName).
    pub ip_family_policy: String,
    /// Every address this Service holds.
    pub allocations: Vec<AllocationReport>,
    /// `spec.ports` with node ports.
    pub ports: Vec<PortReport>,
    /// `spec.healthCheckNodePort` (0 when none).
    pub health_check_node_port: u32,
    /// Where the document is.
    pub source: crate::source::Source,
}

/// One allocated address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllocationReport {
    /// The address.
    pub ip: String,
    /// `static`, `dynamic` or `none` (the range has no bands).
    pub band: String,
    /// Whether the user asked for this address.
    pub requested: bool,
}

/// One Service port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PortReport {
    /// `name`.
    pub name: String,
    /// `port`.
    pub port: i32,
    /// `protocol`.
    pub protocol: String,
    /// `targetPort` as text.
    pub target_port: String,
    /// `nodePort` (0 when none).
    pub node_port: u32,
    /// Band of the node port (`static`, `dynamic`, `none`), empty when no node port.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node_port_band: String,
}

/// Inclusive bounds of a band.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BandReport {
    /// First address or port.
    pub first: String,
    /// Last address or port.
    pub last: String,
}

/// One service IP range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RangeReport {
    /// The CIDR.
    pub cidr: String,
    /// `IPv4` or `IPv6`.
    pub family: String,
    /// `bitmap` or `ipaddress` (KEP-1880 objects).
    pub allocator: String,
    /// Allocatable addresses.
    pub size: u64,
    /// Allocated.
    pub used: u64,
    /// Free.
    pub free: u64,
    /// Static (lower) band.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_band: Option<BandReport>,
    /// Dynamic (upper) band.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_band: Option<BandReport>,
}

/// The NodePort range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PortRangeReport {
    /// `30000-32767`.
    pub range: String,
    /// Ports in the range.
    pub size: u32,
    /// Allocated.
    pub used: u32,
    /// Free.
    pub free: u32,
    /// Static (lower) band.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_band: Option<BandReport>,
    /// Dynamic (upper) band.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_band: Option<BandReport>,
}

/// kube-proxy rulesets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    /// iptables-restore input.
    #[serde(default)]
    pub iptables: String,
    /// nft transaction.
    #[serde(default)]
    pub nftables: String,
    /// Figures kube-proxy exposes for the sync (no-local-endpoint counts, rule and chain counts).
    #[serde(default)]
    pub figures: crate::proxy::RuleStats,
}

impl Report {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }

    /// Canonical JSON (pretty, two-space indent, trailing newline).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Parses a report produced by [`Report::to_json`].
    pub fn from_json(text: &str) -> Result<Report, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// kubectl-like text: per object the apply outcome, errors and warnings, then tables.
    pub fn to_text(&self) -> String {
        crate::report::text::render(self)
    }
}

mod build;
mod text;

pub use build::{report_rules, report_rules_pausing};
