//! Text rendering of a report in kubectl's words: `service/x created`, `The Service "x" is
//! invalid: ...`, `Warning: ...`, compiler-style locations, then allocation tables.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::diagnostic::{Diagnostic, Severity};
use crate::report::{Report, ServiceReport};
use crate::source::Source;

/// Key of one document in the stream: (file rank, document index).
type DocKey = (usize, usize);

pub(crate) fn render(report: &Report) -> String {
    let mut file_rank: BTreeMap<String, usize> = BTreeMap::new();
    let mut rank_of = |file: &str| -> usize {
        let next = file_rank.len();
        *file_rank.entry(file.to_owned()).or_insert(next)
    };
    let mut order: Vec<DocKey> = Vec::new();
    let mut services: BTreeMap<DocKey, Vec<&ServiceReport>> = BTreeMap::new();
    let mut diagnostics: BTreeMap<DocKey, Vec<&Diagnostic>> = BTreeMap::new();
    let mut loose: Vec<&Diagnostic> = Vec::new();
    for s in &report.services {
        let key = (rank_of(&s.source.file), s.source.document);
        services.entry(key).or_default().push(s);
        order.push(key);
    }
    for d in &report.diagnostics {
        match &d.source {
            Some(src) => {
                let key = (rank_of(&src.file), src.document);
                diagnostics.entry(key).or_default().push(d);
                order.push(key);
            }
            None => loose.push(d),
        }
    }
    order.sort_unstable();
    order.dedup();

    let mut out = String::new();
    for d in &loose {
        render_block(&mut out, &[d]);
    }
    for key in &order {
        let diags = diagnostics.get(key).map(Vec::as_slice).unwrap_or(&[]);
        // Warnings first, as kubectl prints them before the outcome.
        for d in diags.iter().filter(|d| d.severity == Severity::Warning) {
            let prefix = if d.reason == "Warning" || d.reason == "UnknownField" {
                "Warning"
            } else {
                "svclab"
            };
            let _ = writeln!(out, "{prefix}: {}", d.message);
        }
        // Policy audits and rules skipped for lack of an input.
        for d in diags.iter().filter(|d| d.severity == Severity::Info) {
            let _ = writeln!(out, "Info: {}", d.message);
        }
        let errors: Vec<&Diagnostic> =
            diags.iter().copied().filter(|d| d.severity == Severity::Error).collect();
        if !errors.is_empty() {
            render_block(&mut out, &errors);
        }
        for s in services.get(key).map(Vec::as_slice).unwrap_or(&[]) {
            if s.outcome != "rejected" {
                let _ = writeln!(out, "service/{} {}", s.name, s.outcome);
            }
        }
    }
    render_releases(&mut out, report);
    render_tables(&mut out, report);
    out
}

/// `--explain-release`: each explained diagnostic, the releases that give exactly its text, and
/// the release-table rows behind it (rows whose boundaries were not read in the source say so).
fn render_releases(out: &mut String, report: &Report) {
    let explained: Vec<&Diagnostic> =
        report.diagnostics.iter().filter(|d| d.releases.is_some()).collect();
    if explained.is_empty() {
        return;
    }
    out.push_str("\nReleases in which upstream gives exactly these texts:\n");
    for d in explained {
        let Some(explanation) = &d.releases else { continue };
        let releases = if explanation.releases.is_empty() {
            "none".to_owned()
        } else {
            explanation.releases.join(", ")
        };
        let _ = writeln!(out, "  {releases}: {}", d.message);
        for change in &explanation.changes {
            let pinned = if change.pinned { "" } else { " [not pinned]" };
            let _ = writeln!(
                out,
                "      {} ({}): {}; {}{pinned}",
                change.releases, change.table, change.change, change.upstream
            );
        }
    }
}

/// kubectl's rendering of the errors of one object, then compiler-style locations.
fn render_block(out: &mut String, errors: &[&Diagnostic]) {
    // Group by the kind of failure the apiserver would return.
    let field_errors: Vec<&&Diagnostic> = errors
        .iter()
        .filter(|d| d.reason.starts_with("FieldValue") && d.reason != "FieldValueTypeInvalid")
        .collect();
    if let Some(first) = field_errors.first() {
        let (kind, name) = first
            .object
            .as_ref()
            // kubectl prints `details.kind`, the bare kind (`EndpointSlice`), not the
            // group-qualified kind of `Status.message`.
            .map(|o| (o.kind.clone(), o.name.clone()))
            .unwrap_or_default();
        let mut lines: Vec<&str> = Vec::new();
        for d in &field_errors {
            if !lines.contains(&d.message.as_str()) {
                lines.push(&d.message);
            }
        }
        if lines.len() == 1 {
            let _ = writeln!(
                out,
                "The {kind} {} is invalid: {}",
                crate::field::go_quote(&name),
                lines[0]
            );
        } else {
            // kubectl ends the header with ": " before the newline (a trailing space).
            let _ = writeln!(out, "The {kind} {} is invalid: ", crate::field::go_quote(&name));
            for line in &lines {
                let _ = writeln!(out, "* {line}");
            }
        }
    }
    for d in errors
        .iter()
        .filter(|d| !(d.reason.starts_with("FieldValue") && d.reason != "FieldValueTypeInvalid"))
    {
        // `kubectl apply -f` wraps server errors other than Invalid with the file
        // (`STDIN` for standard input).
        let file = match d.source.as_ref().map(|s| s.file.as_str()) {
            None | Some("" | "-") => "STDIN",
            Some(f) => f,
        };
        let line = match d.reason.as_str() {
            "InternalError" => {
                format!(
                    "Error from server (InternalError): error when creating {}: {}",
                    crate::field::go_quote(file),
                    d.message
                )
            }
            "FieldValueTypeInvalid" => {
                format!(
                    "Error from server (BadRequest): error when creating {}: {}",
                    crate::field::go_quote(file),
                    d.message
                )
            }
            // A plain Go error from the REST storage becomes a 500 with reason Unknown.
            "Unknown" => format!(
                "Error from server: error when creating {}: {}",
                crate::field::go_quote(file),
                d.message
            ),
            "NotFound" => format!("Error from server (NotFound): {}", d.message),
            _ => format!("error: {}", d.message),
        };
        let _ = writeln!(out, "{line}");
    }
    for d in errors {
        if let Some(src) = &d.source {
            let _ = writeln!(out, "  --> {}: {}", location(src), d.field_or_object());
        }
    }
}

fn location(src: &Source) -> String {
    let file = if src.file.is_empty() { "<input>" } else { &src.file };
    format!("{file}:{}:{}", src.line, src.column)
}

impl Diagnostic {
    fn field_or_object(&self) -> String {
        if !self.field.is_empty() {
            return self.field.clone();
        }
        match &self.object {
            Some(o) if !o.name.is_empty() => format!("{} {}", o.kind, o.name),
            Some(o) => o.kind.clone(),
            None => "document".to_owned(),
        }
    }
}

fn render_tables(out: &mut String, report: &Report) {
    let live: Vec<&ServiceReport> = report
        .services
        .iter()
        .filter(|s| s.outcome == "created" || s.outcome == "updated")
        .collect();
    if !live.is_empty() {
        out.push('\n');
        let mut rows = vec![vec![
            "NAMESPACE".to_owned(),
            "NAME".to_owned(),
            "TYPE".to_owned(),
            "CLUSTER-IP(S)".to_owned(),
            "BAND".to_owned(),
            "PORT(S)".to_owned(),
        ]];
        for s in live {
            let ips = if s.cluster_ips.is_empty() {
                "<none>".to_owned()
            } else {
                s.cluster_ips.join(",")
            };
            let bands = if s.allocations.is_empty() {
                "-".to_owned()
            } else {
                s.allocations
                    .iter()
                    .map(|a| format!("{}{}", a.band, if a.requested { "*" } else { "" }))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let ports = if s.ports.is_empty() {
                "<none>".to_owned()
            } else {
                s.ports
                    .iter()
                    .map(|p| {
                        if p.node_port != 0 {
                            format!("{}:{}/{}", p.port, p.node_port, p.protocol)
                        } else {
                            format!("{}/{}", p.port, p.protocol)
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            };
            rows.push(vec![
                s.namespace.clone(),
                s.name.clone(),
                s.type_.clone(),
                ips,
                bands,
                ports,
            ]);
        }
        write_table(out, &rows);
        out.push_str("(* = requested by the manifest)\n");
    }
    out.push('\n');
    let mut rows = vec![vec![
        "RANGE".to_owned(),
        "ALLOCATOR".to_owned(),
        "SIZE".to_owned(),
        "USED".to_owned(),
        "FREE".to_owned(),
        "STATIC-BAND".to_owned(),
        "DYNAMIC-BAND".to_owned(),
    ]];
    let band = |b: &Option<crate::report::BandReport>| {
        b.as_ref().map_or("-".to_owned(), |b| format!("{}-{}", b.first, b.last))
    };
    for r in &report.ranges {
        rows.push(vec![
            r.cidr.clone(),
            r.allocator.clone(),
            r.size.to_string(),
            r.used.to_string(),
            r.free.to_string(),
            band(&r.static_band),
            band(&r.dynamic_band),
        ]);
    }
    let n = &report.node_port_range;
    rows.push(vec![
        n.range.clone(),
        "nodeport".to_owned(),
        n.size.to_string(),
        n.used.to_string(),
        n.free.to_string(),
        band(&n.static_band),
        band(&n.dynamic_band),
    ]);
    write_table(out, &rows);
}

fn write_table(out: &mut String, rows: &[Vec<String>]) {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 == columns {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<width$}   ", width = widths[c]);
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}
