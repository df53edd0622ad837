//! Text rendering of a report in kubectl's words: `service/x created`, `The Service "x" is
//! invalid: ...`, `Warning: ...`, compiler-style locations, then allocation tables.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::diagnostic::{Diagnostic, Severity};
use crate::net::{push_decimal, push_signed};
use crate::report::{Report, ServiceReport};
use crate::source::Source;

/// Key of one document in the stream: (file rank, document index).
type DocKey = (usize, usize);

pub(crate) fn render(report: &Report) -> String {
    let mut file_rank: BTreeMap<String, usize> = BTreeMap::new();
    let mut rank_of = |file: &str| -> usize {
        if let Some(&rank) = file_rank.get(file) {
            return rank;
        }
        let next = file_rank.len();
        file_rank.insert(file.to_owned(), next);
        next
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
                for part in ["service/", &s.name, " ", &s.outcome, "\n"] {
                    out.push_str(part);
                }
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
            // A create in a namespace that does not exist (NamespaceLifecycle admission).
            "NotFound" if d.message.starts_with("namespaces ") => format!(
                "Error from server (NotFound): error when creating {}: {}",
                crate::field::go_quote(file),
                d.message
            ),
            "NotFound" => format!("Error from server (NotFound): {}", d.message),
            "Conflict" => format!(
                "Error from server (Conflict): error when replacing {}: {}",
                crate::field::go_quote(file),
                d.message
            ),
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

/// The tables at the end: the Services the stream left stored, then the ranges. Cells borrow
/// from the report where they can (a 10,000-Service report has 60,000 of them).
fn render_tables(out: &mut String, report: &Report) {
    let live: Vec<&ServiceReport> = report
        .services
        .iter()
        .filter(|s| s.outcome == "created" || s.outcome == "updated")
        .collect();
    if !live.is_empty() {
        out.push('\n');
        let mut rows: Vec<[Cow<'_, str>; 6]> = Vec::with_capacity(live.len() + 1);
        rows.push(
            ["NAMESPACE", "NAME", "TYPE", "CLUSTER-IP(S)", "BAND", "PORT(S)"].map(Cow::Borrowed),
        );
        for s in live {
            let ips = match s.cluster_ips.as_slice() {
                [] => Cow::Borrowed("<none>"),
                [ip] => Cow::Borrowed(ip.as_str()),
                ips => Cow::Owned(ips.join(",")),
            };
            let bands = if s.allocations.is_empty() {
                Cow::Borrowed("-")
            } else {
                let mut cell = String::new();
                for (i, a) in s.allocations.iter().enumerate() {
                    if i > 0 {
                        cell.push(',');
                    }
                    cell.push_str(&a.band);
                    if a.requested {
                        cell.push('*');
                    }
                }
                Cow::Owned(cell)
            };
            let ports = if s.ports.is_empty() {
                Cow::Borrowed("<none>")
            } else {
                let mut cell = String::new();
                for (i, p) in s.ports.iter().enumerate() {
                    if i > 0 {
                        cell.push(',');
                    }
                    push_signed(&mut cell, i64::from(p.port));
                    if p.node_port != 0 {
                        cell.push(':');
                        push_decimal(&mut cell, u64::from(p.node_port));
                    }
                    cell.push('/');
                    cell.push_str(&p.protocol);
                }
                Cow::Owned(cell)
            };
            rows.push([
                Cow::Borrowed(s.namespace.as_str()),
                Cow::Borrowed(s.name.as_str()),
                Cow::Borrowed(s.type_.as_str()),
                ips,
                bands,
                ports,
            ]);
        }
        write_table(out, &rows);
        out.push_str("(* = requested by the manifest)\n");
    }
    out.push('\n');
    let mut rows: Vec<[Cow<'_, str>; 7]> = vec![
        ["RANGE", "ALLOCATOR", "SIZE", "USED", "FREE", "STATIC-BAND", "DYNAMIC-BAND"]
            .map(Cow::Borrowed),
    ];
    let band = |b: &Option<crate::report::BandReport>| {
        b.as_ref().map_or(Cow::Borrowed("-"), |b| Cow::Owned(format!("{}-{}", b.first, b.last)))
    };
    for r in &report.ranges {
        rows.push([
            Cow::Borrowed(r.cidr.as_str()),
            Cow::Borrowed(r.allocator.as_str()),
            Cow::Owned(r.size.to_string()),
            Cow::Owned(r.used.to_string()),
            Cow::Owned(r.free.to_string()),
            band(&r.static_band),
            band(&r.dynamic_band),
        ]);
    }
    let n = &report.node_port_range;
    rows.push([
        Cow::Borrowed(n.range.as_str()),
        Cow::Borrowed("nodeport"),
        Cow::Owned(n.size.to_string()),
        Cow::Owned(n.used.to_string()),
        Cow::Owned(n.free.to_string()),
        band(&n.static_band),
        band(&n.dynamic_band),
    ]);
    write_table(out, &rows);
}

/// Columns padded to their widest cell (in characters) and three spaces apart, like
/// `{cell:<width$}`, each line without its trailing whitespace.
fn write_table<const N: usize>(out: &mut String, rows: &[[Cow<'_, str>; N]]) {
    // Counted once per cell: Service names and addresses are ASCII, where characters are bytes.
    let width = |cell: &str| if cell.is_ascii() { cell.len() } else { cell.chars().count() };
    let cells: Vec<[usize; N]> = rows.iter().map(|row| row.each_ref().map(|c| width(c))).collect();
    let widths: [usize; N] = std::array::from_fn(|c| cells.iter().map(|w| w[c]).max().unwrap_or(0));
    for (row, cell_widths) in rows.iter().zip(&cells) {
        let line = out.len();
        for (c, cell) in row.iter().enumerate() {
            out.push_str(cell);
            if c + 1 < N {
                push_spaces(out, widths[c] - cell_widths[c] + 3);
            }
        }
        let kept = out[line..].trim_end().len();
        out.truncate(line + kept);
        out.push('\n');
    }
}

fn push_spaces(out: &mut String, mut n: usize) {
    const SPACES: &str = "                                ";
    while n > 0 {
        let step = n.min(SPACES.len());
        out.push_str(&SPACES[..step]);
        n -= step;
    }
}
