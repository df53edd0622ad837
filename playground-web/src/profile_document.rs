//! Edits of the scenario text made by the profile bar: the bar writes into the `ClusterProfile`
//! (and `KubeProxyConfiguration`) document of the editor text, so the text stays the whole truth.
//!
//! Edits are line based and keep everything else (comments, other fields, other documents):
//! a top-level `key:` line and its indented continuation lines are replaced by one flow-style
//! line, a missing key is appended to the document, a missing document is put first.

/// The svclab document with the apiserver facts.
pub(crate) const CLUSTER_PROFILE: (&str, &str) = ("svclab.dev/v1alpha1", "ClusterProfile");
/// kube-proxy's configuration (mode, node name).
pub(crate) const KUBE_PROXY_CONFIGURATION: (&str, &str) =
    ("kubeproxy.config.k8s.io/v1alpha1", "KubeProxyConfiguration");

/// Sets top-level `key` of the last document of `kind` to `value` (a YAML flow value).
pub(crate) fn set_field(text: &str, document: (&str, &str), key: &str, value: &str) -> String {
    let (api_version, kind) = document;
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let new_line = format!("{key}: {value}");
    let Some((start, end)) = find_document(&lines, kind) else {
        let mut header =
            vec![format!("apiVersion: {api_version}"), format!("kind: {kind}"), new_line];
        let starts_with_separator =
            lines.iter().find(|l| !is_blank_or_comment(l)).is_some_and(|l| is_separator(l));
        if !starts_with_separator {
            header.push("---".to_owned());
        }
        header.extend(lines);
        return join(&header);
    };
    let key_prefix = format!("{key}:");
    match (start..end).find(|&i| lines[i].starts_with(&key_prefix)) {
        Some(at) => {
            let mut stop = at + 1;
            while stop < end && is_continuation(&lines[stop]) {
                stop += 1;
            }
            lines.splice(at..stop, [new_line]);
        }
        None => {
            let mut at = end;
            while at > start && lines[at - 1].trim().is_empty() {
                at -= 1;
            }
            lines.insert(at, new_line);
        }
    }
    join(&lines)
}

/// The text of the last document of `kind` (its lines, without separators), if there is one.
pub(crate) fn document(text: &str, document: (&str, &str)) -> Option<String> {
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let (start, end) = find_document(&lines, document.1)?;
    Some(join(&lines[start..end]))
}

/// Quotes a string as a YAML double-quoted scalar.
pub(crate) fn quoted(value: &str) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// A YAML flow sequence of quoted strings.
pub(crate) fn quoted_list<'a>(values: impl IntoIterator<Item = &'a str>) -> String {
    let items: Vec<String> = values.into_iter().map(quoted).collect();
    format!("[{}]", items.join(", "))
}

/// A YAML flow map of booleans.
pub(crate) fn bool_map<'a>(values: impl IntoIterator<Item = (&'a str, bool)>) -> String {
    let items: Vec<String> = values.into_iter().map(|(k, v)| format!("{k}: {v}")).collect();
    format!("{{{}}}", items.join(", "))
}

fn join(lines: &[String]) -> String {
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

fn is_separator(line: &str) -> bool {
    line == "---" || line.starts_with("--- ") || line.starts_with("---\t")
}

fn is_blank_or_comment(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.is_empty() || trimmed.starts_with('#')
}

/// Lines that belong to the previous top-level key: indented lines and block-sequence items.
fn is_continuation(line: &str) -> bool {
    line.starts_with(' ') || line.starts_with('\t') || line.starts_with("- ") || line == "-"
}

/// Line range `[start, end)` of the last document whose top-level `kind` is `kind`.
fn find_document(lines: &[String], kind: &str) -> Option<(usize, usize)> {
    let mut found = None;
    let mut start = 0;
    for i in 0..=lines.len() {
        if i == lines.len() || is_separator(&lines[i]) {
            let is_kind = lines[start..i].iter().any(|l| {
                l.strip_prefix("kind:").is_some_and(|v| {
                    let v = v.split(" #").next().unwrap_or_default().trim();
                    v.trim_matches(|c| c == '"' || c == '\'') == kind
                })
            });
            if is_kind {
                found = Some((start, i));
            }
            start = i + 1;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, key: &str, value: &str, expected: &str) {
        assert_eq!(set_field(text, CLUSTER_PROFILE, key, value), expected);
    }

    #[test]
    fn edits_keep_the_rest_of_the_text() {
        let service = "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n";
        check(
            service,
            "seed",
            "7",
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nseed: 7\n---\napiVersion: v1\nkind: Service\nmetadata: {name: a}\n",
        );
        let profile = "# cluster\napiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nserviceClusterIPRanges:\n  - 10.0.0.0/24\n  - fd00::/108\nseed: 1 # keep\n\n---\nkind: Service\n";
        check(
            profile,
            "serviceClusterIPRanges",
            "[\"10.1.0.0/24\"]",
            "# cluster\napiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nserviceClusterIPRanges: [\"10.1.0.0/24\"]\nseed: 1 # keep\n\n---\nkind: Service\n",
        );
        check(
            profile,
            "kubernetesVersion",
            "\"1.24\"",
            "# cluster\napiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nserviceClusterIPRanges:\n  - 10.0.0.0/24\n  - fd00::/108\nseed: 1 # keep\nkubernetesVersion: \"1.24\"\n\n---\nkind: Service\n",
        );
        check(
            "---\nkind: Service\n",
            "seed",
            "2",
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nseed: 2\n---\nkind: Service\n",
        );
    }

    #[test]
    fn the_last_document_of_a_kind_is_cut_out() {
        let text = "kind: ClusterProfile\nseed: 1\n---\nkind: Service\n---\nkind: ClusterProfile\nseed: 2\n";
        assert_eq!(
            document(text, CLUSTER_PROFILE).as_deref(),
            Some("kind: ClusterProfile\nseed: 2\n")
        );
        assert_eq!(document(text, KUBE_PROXY_CONFIGURATION), None);
    }

    #[test]
    fn flow_values_are_valid_yaml() {
        assert_eq!(
            quoted_list(["10.96.0.0/12", "fd00::/108"]),
            "[\"10.96.0.0/12\", \"fd00::/108\"]"
        );
        assert_eq!(
            bool_map([("ServiceIPStaticSubrange", false)]),
            "{ServiceIPStaticSubrange: false}"
        );
        assert_eq!(
            set_field(
                "kind: KubeProxyConfiguration\nmode: iptables\n",
                KUBE_PROXY_CONFIGURATION,
                "mode",
                "nftables"
            ),
            "kind: KubeProxyConfiguration\nmode: nftables\n"
        );
    }
}
