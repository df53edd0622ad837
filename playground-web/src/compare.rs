//! The Compare panel's model: the rehearsal `svclab upgrade` makes (`svclab_core::upgrade`) of
//! the editor's scenario against a target release, kube-proxy mode and ranges, and the rows of a
//! side-by-side view of each ruleset's diff (`svclab_core::diff_lines`).

use svclab_core::{
    DiffLine, DiffTag, Input, ProxyMode, RulesComparison, UpgradeOptions, UpgradeReport,
    diff_lines, target_release,
};

use crate::profile_document::{self, CLUSTER_PROFILE};
use crate::share::SharedCompare;

/// Name given to the target profile in messages (`--to-profile`'s file).
const TARGET_PROFILE_NAME: &str = "target-profile.yaml";

/// Unchanged lines shown around each changed one; longer unchanged stretches are folded.
const CONTEXT_LINES: usize = 3;

/// A rehearsal the panel shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Compared {
    /// The report, as `svclab upgrade --output json --diff` gives it.
    pub(crate) report: UpgradeReport,
    /// One side-by-side view per family and node.
    pub(crate) panes: Vec<Pane>,
}

/// Both rulesets of one family and node, side by side.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pane {
    /// `IPv4 · iptables → nftables` and the node, for the heading.
    pub(crate) title: String,
    /// Lines only before.
    pub(crate) removed: usize,
    /// Lines only after.
    pub(crate) added: usize,
    /// The rows, unchanged stretches folded.
    pub(crate) rows: Vec<Row>,
}

/// One line of one side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cell {
    /// 1-based line number on its side.
    pub(crate) line: usize,
    /// The text.
    pub(crate) text: String,
    /// Only on this side (removed before, added after).
    pub(crate) changed: bool,
}

/// A row of the side-by-side view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Row {
    /// A line before and a line after (either may be missing where one side has more).
    Lines(Option<Cell>, Option<Cell>),
    /// This many unchanged lines, folded.
    Folded(usize),
}

/// Rehearses the upgrade of the scenario (`inputs`, whose text is `scenario`) to `target`, with
/// the rule diff; an error is what `svclab upgrade` would print instead of a report.
pub(crate) fn rehearse(
    inputs: &[Input],
    scenario: &str,
    target: &SharedCompare,
) -> Result<Compared, String> {
    let to = target_release(target.to.trim()).map_err(|e| e.to_string())?;
    let proxy_mode = match target.proxy_mode.trim() {
        "" => None,
        mode => Some(
            ProxyMode::parse(mode).ok_or_else(|| format!("unknown kube-proxy mode {mode:?}"))?,
        ),
    };
    let options =
        UpgradeOptions { to, proxy_mode, to_profile: target_profile(scenario, target), diff: true };
    let report = svclab_core::upgrade(inputs, &options).map_err(|e| e.to_string())?;
    let panes = report.rules.iter().map(pane).collect();
    Ok(Compared { report, panes })
}

/// `--to-profile` for the ranges the form changes: today's ClusterProfile document (its gates,
/// seed and everything else kept, because a target profile replaces today's whole) with the
/// target release and the new ranges; `None` when the form keeps today's ranges.
fn target_profile(scenario: &str, target: &SharedCompare) -> Option<Input> {
    let ranges: Vec<&str> = target
        .service_cluster_ip_ranges
        .split([',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let node_ports = target.service_node_port_range.trim();
    if ranges.is_empty() && node_ports.is_empty() {
        return None;
    }
    let mut text = profile_document::document(scenario, CLUSTER_PROFILE).unwrap_or_default();
    let mut set = |key: &str, value: String| {
        text = profile_document::set_field(&text, CLUSTER_PROFILE, key, &value);
    };
    set("kubernetesVersion", profile_document::quoted(target.to.trim()));
    if !ranges.is_empty() {
        set("serviceClusterIPRanges", profile_document::quoted_list(ranges));
    }
    if !node_ports.is_empty() {
        set("serviceNodePortRange", profile_document::quoted(node_ports));
    }
    Some(Input::new(TARGET_PROFILE_NAME, text))
}

fn pane(rules: &RulesComparison) -> Pane {
    let diff = diff_lines(&rules.before, &rules.after);
    let count = |tag| diff.iter().filter(|l| l.tag == tag).count();
    let node =
        if rules.node.is_empty() { String::new() } else { format!(" · node {}", rules.node) };
    Pane {
        title: format!("{} · {} → {}{node}", rules.family, rules.before_mode, rules.after_mode),
        removed: count(DiffTag::Removed),
        added: count(DiffTag::Added),
        rows: fold(side_by_side(&diff), CONTEXT_LINES),
    }
}

/// The diff as rows: a line on both sides is one row; a run of changed lines puts its removed
/// lines on the left and its added lines on the right, row by row.
fn side_by_side(diff: &[DiffLine]) -> Vec<Row> {
    let cell = |l: &DiffLine, line: Option<usize>| Cell {
        line: line.unwrap_or_default(),
        text: l.text.clone(),
        changed: l.tag != DiffTag::Same,
    };
    let mut rows = Vec::with_capacity(diff.len());
    let mut at = 0;
    while at < diff.len() {
        let line = &diff[at];
        if line.tag == DiffTag::Same {
            rows.push(Row::Lines(Some(cell(line, line.before)), Some(cell(line, line.after))));
            at += 1;
            continue;
        }
        let end =
            diff[at..].iter().position(|l| l.tag == DiffTag::Same).map_or(diff.len(), |n| at + n);
        let run = &diff[at..end];
        let removed: Vec<Cell> =
            run.iter().filter(|l| l.tag == DiffTag::Removed).map(|l| cell(l, l.before)).collect();
        let added: Vec<Cell> =
            run.iter().filter(|l| l.tag == DiffTag::Added).map(|l| cell(l, l.after)).collect();
        for k in 0..removed.len().max(added.len()) {
            rows.push(Row::Lines(removed.get(k).cloned(), added.get(k).cloned()));
        }
        at = end;
    }
    rows
}

/// Keeps the rows within `context` of a changed one and folds each longer unchanged stretch.
fn fold(rows: Vec<Row>, context: usize) -> Vec<Row> {
    let changed = |row: &Row| match row {
        Row::Lines(before, after) => {
            before.as_ref().is_some_and(|c| c.changed) || after.as_ref().is_some_and(|c| c.changed)
        }
        Row::Folded(_) => false,
    };
    let mut keep = vec![false; rows.len()];
    for (at, row) in rows.iter().enumerate() {
        if changed(row) {
            let end = (at + context + 1).min(rows.len());
            keep[at.saturating_sub(context)..end].fill(true);
        }
    }
    let mut out = Vec::new();
    let mut folded = 0;
    for (row, keep) in rows.into_iter().zip(keep) {
        if keep {
            if folded > 0 {
                out.push(Row::Folded(folded));
                folded = 0;
            }
            out.push(row);
        } else {
            folded += 1;
        }
    }
    if folded > 0 {
        out.push(Row::Folded(folded));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row as `left | right`: a changed cell is marked `-` or `+`, a missing one is blank,
    /// a fold is `... N`.
    fn check(before: &str, after: &str, context: usize, expected: &[&str]) {
        let rows = fold(side_by_side(&diff_lines(before, after)), context);
        let side = |cell: &Option<Cell>, mark: char| match cell {
            Some(c) if c.changed => format!("{mark}{}:{}", c.line, c.text),
            Some(c) => format!(" {}:{}", c.line, c.text),
            None => String::new(),
        };
        let shown: Vec<String> = rows
            .iter()
            .map(|r| match r {
                Row::Lines(b, a) => format!("{} | {}", side(b, '-'), side(a, '+')),
                Row::Folded(n) => format!("... {n}"),
            })
            .collect();
        assert_eq!(shown, expected);
    }

    #[test]
    fn changed_lines_face_each_other_and_unchanged_stretches_fold() {
        check(
            "a\nb\nc\nd\ne\nf\n",
            "a\nb\nC\nd\ne\nf\nG\n",
            1,
            &[
                "... 1",
                " 2:b |  2:b",
                "-3:c | +3:C",
                " 4:d |  4:d",
                "... 1",
                " 6:f |  6:f",
                " | +7:G",
            ],
        );
        // A ruleset kube-proxy does not write before (a refused mode): all added.
        check("", "x\ny\n", 3, &[" | +1:x", " | +2:y"]);
        check("same\n", "same\n", 3, &["... 1"]);
    }

    #[test]
    fn a_rehearsal_gives_the_findings_and_faces_the_changed_rule_with_its_new_self() {
        let scenario = "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"1.27\"\nfeatureGates: {ServiceIPStaticSubrange: true}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec:\n  selector: {app: web}\n  ports: [{port: 80, targetPort: 8080}]\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web-1, namespace: default, labels: {kubernetes.io/service-name: web}}\naddressType: IPv4\nports: [{port: 8080, protocol: TCP}]\nendpoints: [{addresses: [10.244.1.5]}]\n";
        let inputs = [Input::new("scenario.yaml", scenario)];
        let target = SharedCompare { to: "1.37".into(), ..SharedCompare::default() };
        let compared = rehearse(&inputs, scenario, &target).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            compared
                .report
                .findings
                .iter()
                .any(|f| f.message.contains("unrecognized feature gate: ServiceIPStaticSubrange"))
        );
        // iptables at 1.27 and 1.37: 1.37 always writes --random-fully.
        let changed: Vec<(String, String)> = compared.panes[0]
            .rows
            .iter()
            .filter_map(|r| match r {
                Row::Lines(Some(b), Some(a)) if b.changed && a.changed => {
                    Some((b.text.clone(), a.text.clone()))
                }
                _ => None,
            })
            .collect();
        let masquerade = "-A KUBE-POSTROUTING -m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE";
        assert_eq!(changed, [(masquerade.to_owned(), format!("{masquerade} --random-fully"))]);
        let ipvs = SharedCompare { proxy_mode: "ipvs".into(), ..target };
        assert_eq!(
            rehearse(&inputs, scenario, &ipvs).map(|_| ()),
            Err("unknown kube-proxy mode \"ipvs\"".to_owned())
        );
    }

    #[test]
    fn a_range_change_is_a_target_profile_that_keeps_the_rest_of_today() {
        let scenario = "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"1.30\"\nseed: 4\nserviceClusterIPRanges: [\"10.0.0.0/24\"]\n---\nkind: Service\n";
        let mut target = SharedCompare { to: "1.33".into(), ..SharedCompare::default() };
        assert!(target_profile(scenario, &target).is_none());
        target.service_cluster_ip_ranges = "10.1.0.0/24, fd00::/108".into();
        let profile = target_profile(scenario, &target).map(|i| i.text.to_string());
        assert_eq!(
            profile.as_deref(),
            Some(
                "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"1.33\"\nseed: 4\nserviceClusterIPRanges: [\"10.1.0.0/24\", \"fd00::/108\"]\n"
            )
        );
    }
}
