//! The rehearsal's report: the public JSON contract of `svclab upgrade --output json`
//! (`apiVersion: svclab.dev/v1alpha1`, `kind: UpgradeReport`) and its text.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::sides::{Side, Sides};
use crate::report::REPORT_API_VERSION;
use crate::source::Source;

/// The rehearsal of one upgrade, rollback, mode switch or range change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpgradeReport {
    /// `svclab.dev/v1alpha1`.
    pub api_version: String,
    /// `UpgradeReport`.
    pub kind: String,
    /// The cluster today.
    pub from: UpgradeSide,
    /// The target.
    pub to: UpgradeSide,
    /// Every finding, by area (`featureGates`, `apiserver`, `allocation`, `kubeProxy`, `ranges`),
    /// in the order each area found them.
    pub findings: Vec<Finding>,
    /// How many findings of each severity.
    pub summary: Summary,
    /// `--diff`: both rulesets of every family and node rendered, and their diff.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RulesComparison>,
}

/// One side of the rehearsal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpgradeSide {
    /// The release as given (`1.33`, `1.33.5`).
    pub kubernetes_version: String,
    /// The patch release modelled (`1.33.13` for a bare `1.33`).
    pub modelled_release: String,
    /// kube-proxy's mode: `iptables` or `nftables`.
    pub proxy_mode: String,
    /// `--service-cluster-ip-range`, primary first.
    #[serde(rename = "serviceClusterIPRanges")]
    pub service_cluster_ip_ranges: Vec<String>,
    /// `--service-node-port-range`.
    pub service_node_port_range: String,
    /// The ServiceCIDR objects, `name=cidr[,cidr]`, in stream order.
    #[serde(rename = "serviceCIDRs", default, skip_serializing_if = "Vec::is_empty")]
    pub service_cidrs: Vec<String>,
    /// Where ClusterIPs come from: `bitmap`, or `ipaddress` (ServiceCIDR and IPAddress objects).
    pub allocator: String,
}

/// Which part of the cluster a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Area {
    /// Feature gates of kube-apiserver and kube-proxy.
    FeatureGates,
    /// What kube-apiserver answers for the stored objects.
    Apiserver,
    /// ClusterIPs and node ports under the target's allocators.
    Allocation,
    /// The rules kube-proxy programs and what packets meet.
    KubeProxy,
    /// A range migration, step by step.
    Ranges,
}

impl Area {
    /// The contract's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Area::FeatureGates => "featureGates",
            Area::Apiserver => "apiserver",
            Area::Allocation => "allocation",
            Area::KubeProxy => "kubeProxy",
            Area::Ranges => "ranges",
        }
    }
}

/// What a finding means for the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Impact {
    /// Something stops working: a component does not start, a write is refused, a packet that
    /// was served is not, two Services hold one address.
    Breaks,
    /// Behaviour changes: other rules, another endpoint set, a new warning, a default.
    Changes,
    /// Worth knowing; nothing a client sees changes for the worse.
    Note,
}

impl Impact {
    /// The contract's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Impact::Breaks => "breaks",
            Impact::Changes => "changes",
            Impact::Note => "note",
        }
    }
}

/// One thing the upgrade does to the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// The area.
    pub area: Area,
    /// `breaks`, `changes` or `note`.
    pub severity: Impact,
    /// `Service ns/name` (or `EndpointSlice ns/name`, `ServiceCIDR name`,
    /// `KubeProxyConfiguration`, `ClusterProfile`); `null` when about the cluster.
    pub object: Option<String>,
    /// What happens, with kube-apiserver's or kube-proxy's exact text where one is printed.
    pub message: String,
    /// The release-table rows, gates or upstream changes behind it.
    pub upstream: String,
    /// Machine names of the causes: `validation:<Rule>`, `proxy:<Behaviour>`, `gate:<Gate>`,
    /// `proxyGate:<Gate>`, `allocation:<what>`, `mode`, `profile:<field>`.
    pub causes: Vec<String>,
    /// kube-proxy's name of the Service port (`ns/name:port`), for `kubeProxy` findings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_port: Option<String>,
    /// The migration step (1-based), for `ranges` findings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    /// Where the object was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
}

/// How many findings of each severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// `breaks`.
    pub breaks: usize,
    /// `changes`.
    pub changes: usize,
    /// `note`.
    pub notes: usize,
}

/// Both rulesets of one family and node, and their diff (`--diff`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RulesComparison {
    /// `IPv4` or `IPv6`.
    pub family: String,
    /// The node kube-proxy runs on (empty: the default node).
    pub node: String,
    /// Today's mode.
    pub before_mode: String,
    /// The target's mode.
    pub after_mode: String,
    /// Today's ruleset (empty when kube-proxy does not start).
    pub before: String,
    /// The target's ruleset (empty when kube-proxy does not start).
    pub after: String,
    /// The unified diff, `before` to `after`.
    pub diff: String,
}

impl Finding {
    /// A finding about the cluster as a whole.
    pub(crate) fn new(area: Area, severity: Impact, message: impl Into<String>) -> Finding {
        Finding {
            area,
            severity,
            object: None,
            message: message.into(),
            upstream: String::new(),
            causes: Vec::new(),
            service_port: None,
            step: None,
            source: None,
        }
    }

    /// The same finding about an object (`Service ns/name`).
    pub(crate) fn about(self, object: impl Into<String>) -> Finding {
        Finding { object: Some(object.into()), ..self }
    }

    /// The same finding with its causes: `(id, upstream text)` pairs.
    pub(crate) fn caused_by(mut self, causes: &[super::cause::Cause]) -> Finding {
        for cause in causes {
            if !self.causes.contains(&cause.id) {
                self.causes.push(cause.id.clone());
                if !self.upstream.is_empty() {
                    self.upstream.push_str("; ");
                }
                self.upstream.push_str(&cause.upstream);
            }
        }
        self
    }

    /// The same finding, placed where its object was written.
    pub(crate) fn at(self, source: Option<Source>) -> Finding {
        Finding { source, ..self }
    }
}

impl UpgradeSide {
    fn new(side: &Side) -> UpgradeSide {
        let profile = &side.profile;
        UpgradeSide {
            kubernetes_version: side.version.to_string(),
            modelled_release: side.version.modelled().to_string(),
            proxy_mode: side.mode.as_str().to_owned(),
            service_cluster_ip_ranges: profile
                .service_cluster_ip_ranges
                .iter()
                .map(ToString::to_string)
                .collect(),
            service_node_port_range: profile.service_node_port_range.to_string(),
            service_cidrs: side
                .service_cidrs
                .iter()
                .map(|(name, cidrs)| format!("{name}={}", cidrs.join(",")))
                .collect(),
            allocator: if profile.multi_cidr() { "ipaddress" } else { "bitmap" }.to_owned(),
        }
    }
}

impl UpgradeReport {
    /// The report of a rehearsal: the findings in area order (each area's in the order found).
    pub(crate) fn new(
        sides: &Sides,
        mut findings: Vec<Finding>,
        rules: Vec<RulesComparison>,
    ) -> UpgradeReport {
        findings.sort_by_key(|f| f.area);
        let count = |impact| findings.iter().filter(|f| f.severity == impact).count();
        let summary = Summary {
            breaks: count(Impact::Breaks),
            changes: count(Impact::Changes),
            notes: count(Impact::Note),
        };
        UpgradeReport {
            api_version: REPORT_API_VERSION.to_owned(),
            kind: "UpgradeReport".to_owned(),
            from: UpgradeSide::new(&sides.from),
            to: UpgradeSide::new(&sides.to),
            findings,
            summary,
            rules,
        }
    }

    /// Whether any finding breaks something (`svclab upgrade` exits with 1).
    pub fn breaks(&self) -> bool {
        self.summary.breaks > 0
    }

    /// Canonical JSON (pretty, two-space indent, trailing newline).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Parses a report produced by [`UpgradeReport::to_json`].
    pub fn from_json(text: &str) -> Result<UpgradeReport, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The text `svclab upgrade` prints: the two sides, the findings by area, a summary line,
    /// and the rule diffs when asked for.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let side = |s: &UpgradeSide| {
            let release = if s.kubernetes_version == s.modelled_release {
                s.kubernetes_version.clone()
            } else {
                format!("{} ({})", s.kubernetes_version, s.modelled_release)
            };
            format!("Kubernetes {release}, kube-proxy {}", s.proxy_mode)
        };
        let _ = writeln!(out, "from: {}", side(&self.from));
        let _ = writeln!(out, "to:   {}", side(&self.to));
        let mut area = None;
        for finding in &self.findings {
            if area != Some(finding.area) {
                area = Some(finding.area);
                let _ = writeln!(out, "\n{}:", finding.area.as_str());
            }
            let step = finding.step.map(|s| format!("step {s}: ")).unwrap_or_default();
            let object = finding.object.as_deref().map(|o| format!("{o}: ")).unwrap_or_default();
            let _ = writeln!(
                out,
                "  {:<8}{step}{object}{}",
                finding.severity.as_str(),
                finding.message.replace('\n', "\n          ")
            );
            if let Some(source) = &finding.source {
                let _ =
                    writeln!(out, "          at {}:{}:{}", source.file, source.line, source.column);
            }
            if !finding.upstream.is_empty() {
                let _ = writeln!(out, "          upstream: {}", finding.upstream);
            }
        }
        if self.findings.is_empty() {
            let _ = writeln!(out, "\nno findings: nothing this scenario holds meets a change");
        }
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let s = &self.summary;
        let _ = writeln!(
            out,
            "\n{}, {}, {}",
            plural(s.breaks, "finding breaks something", "findings break something"),
            plural(s.changes, "changes behaviour", "change behaviour"),
            plural(s.notes, "note", "notes")
        );
        for rules in &self.rules {
            if !rules.diff.is_empty() {
                let _ = write!(out, "\n{}", rules.diff);
            }
        }
        out
    }
}
