//! Unit tests of `validation`, checked through the whole pipeline and the kubectl-shaped text:
//! a topic per child module (quirks, updates, releases); the helpers they share are here.

use expect_test::{Expect, expect};

use crate::{CheckOptions, Input, check as run};

mod quirks;
mod releases;
mod updates;

/// Runs a scenario (`no_defaults` = the vectors' `validate` mode) and prints every diagnostic
/// (`severity reason message @line:column`), then kubectl's error and warning lines.
fn check(no_defaults: bool, input: &str, expect: Expect) {
    let report = run(
        &[Input::new("s.yaml", input)],
        &CheckOptions { no_defaults, ..CheckOptions::default() },
    );
    let mut out = String::new();
    for d in &report.diagnostics {
        let at = d.source.as_ref().map_or(String::new(), |s| format!(" @{}:{}", s.line, s.column));
        out.push_str(&format!("{:?} {} {}{at}\n", d.severity, d.reason, d.message));
    }
    for s in &report.services {
        out.push_str(&format!("service {} {}\n", s.name, s.outcome));
    }
    out.push_str("--- text\n");
    for line in report.to_text().lines() {
        if line.starts_with("The ")
            || line.starts_with("Error from server")
            || line.starts_with("* ")
            || line.starts_with("Warning")
            || line.starts_with("svclab")
        {
            out.push_str(line);
            out.push('\n');
        }
    }
    expect.assert_eq(&out);
}

/// A Service that passes validation exactly as written (every field the defaulter would set).
const AS_WRITTEN: &str = "apiVersion: v1
kind: Service
metadata: {name: s, namespace: ns, resourceVersion: '1'}
spec:
  type: ClusterIP
  sessionAffinity: None
  internalTrafficPolicy: Cluster
  selector: {app: s}
  ports: [{name: p, protocol: TCP, port: 80, targetPort: 80}]
";

fn profile(version: &str) -> String {
    format!(
        "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: '{version}'\n---\n"
    )
}

/// k8s.io/apimachinery `pkg/util/validation/validation.go` at the tags, as Service validation
/// shows it: `IsValidPortName` said "letter or number" in v0.24 only; `IsDNS1123Label` says
/// "must not contain dots" from v0.27; from v0.35 `IsQualifiedName` / `IsValidLabelValue` are
/// `pkg/api/validate/content`'s `IsLabelKey` / `IsLabelValue` ("a valid label key", lengths in
/// "bytes"), before it "a qualified name" and "characters".
fn texts_scenario(version: &str) -> String {
    let long = "v".repeat(64);
    let prefix = "p".repeat(254);
    format!(
        "{}apiVersion: v1
kind: Service
metadata:
  name: s
  namespace: ns
  labels: {{a/b/c: x, k: {long}, {prefix}/{long}: v}}
spec:
  selector: {{app: s}}
  ports: [{{name: a.b, port: 80, targetPort: '1-2'}}]
",
        profile(version)
    )
}
