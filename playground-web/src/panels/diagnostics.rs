//! Diagnostics panel: errors in kubectl's wording (grouped per object like `kubectl apply`
//! prints them), then warnings, then infos (policy audits and skipped policy rules) apart;
//! a Service policy's findings carry their rule id; clicking one moves the editor to its line.

use crate::state::Shared;
use svclab_core::{Diagnostic, ObjectRef, Report, Severity};
use yew::prelude::*;

/// Props of [`DiagnosticsPanel`].
#[derive(Properties, Clone, PartialEq)]
pub(crate) struct DiagnosticsProps {
    /// The report.
    pub(crate) report: Shared<Report>,
    /// Move the editor to (line, column).
    pub(crate) on_jump: Callback<(u32, u32)>,
}

/// The `reason` prefix of Service policy findings (`policy:externalIPs.allowedCIDRs`).
const POLICY_REASON_PREFIX: &str = "policy:";

/// What kubectl prints before the causes: `The Service "web" is invalid:` for the apiserver's
/// 422, and for a policy denial what the apiserver says when a webhook refuses (403).
fn headline(object: Option<&ObjectRef>, list: &[&Diagnostic]) -> String {
    let by_policy = list.iter().all(|d| d.reason.starts_with(POLICY_REASON_PREFIX));
    let verdict = if by_policy { "is forbidden by the Service policy" } else { "is invalid" };
    match object {
        Some(o) if !o.name.is_empty() => format!("The {} {:?} {verdict}:", o.kind, o.name),
        Some(o) => format!("The {} {verdict}:", o.kind),
        None => format!("The scenario {verdict}:"),
    }
}

fn item(diagnostic: &Diagnostic, text: String, on_jump: &Callback<(u32, u32)>) -> Html {
    let class = match diagnostic.severity {
        Severity::Error => "diag error",
        Severity::Warning => "diag warning",
        Severity::Info => "diag info",
    };
    // The rule id of a policy finding, shown apart so the message keeps kubectl's wording; it
    // may only break after a dot of its settings path.
    let rule = diagnostic.reason.starts_with(POLICY_REASON_PREFIX).then(|| {
        let mut parts = diagnostic.reason.split('.');
        let first = parts.next().unwrap_or_default().to_owned();
        html! {
            <span class="rule-id">
                {first}
                { for parts.map(|part| html! { <>{"."}<wbr/>{part.to_owned()}</> }) }
            </span>
        }
    });
    match &diagnostic.source {
        Some(source) => {
            let (line, column) = (source.line, source.column);
            let on_jump = on_jump.clone();
            let onclick = Callback::from(move |_: MouseEvent| on_jump.emit((line, column)));
            html! {
                <li>
                    <button class={class} {onclick} data-line={line.to_string()}
                        data-reason={diagnostic.reason.clone()}
                        title={format!("Go to line {line}, column {column}")}>
                        <span class="loc">{format!("{line}:{column}")}</span>
                        <span class="msg">{text}</span>
                        {rule}
                    </button>
                </li>
            }
        }
        None => {
            html! {
                <li>
                    <div class={class} data-reason={diagnostic.reason.clone()}>
                        <span class="loc">{"–"}</span><span class="msg">{text}</span>{rule}
                    </div>
                </li>
            }
        }
    }
}

/// The panel.
/// Diagnostics drawn at first in each list (errors, warnings, infos), and added by each "show
/// more": a broken cluster-sized dump has thousands, and every edit would redraw them all.
const ITEMS_PAGE: usize = 200;

/// The errors grouped by object, in the order their objects first come: one pass, however many
/// objects there are.
fn by_object(report: &Report) -> Vec<(Option<&ObjectRef>, Vec<&Diagnostic>)> {
    let mut groups: Vec<(Option<&ObjectRef>, Vec<&Diagnostic>)> = Vec::new();
    let mut index = std::collections::BTreeMap::new();
    for d in report.diagnostics.iter().filter(|d| d.severity == Severity::Error) {
        let at = *index.entry(d.object.as_ref()).or_insert_with(|| {
            groups.push((d.object.as_ref(), Vec::new()));
            groups.len() - 1
        });
        groups[at].1.push(d);
    }
    groups
}

/// The "show more" button under a list of which `shown` of `total` are drawn, if any are not.
fn more(id: &str, shown: &UseStateHandle<usize>, total: usize) -> Html {
    if total <= **shown {
        return Html::default();
    }
    let label =
        format!("Show {} more ({} of {total} shown)", ITEMS_PAGE.min(total - **shown), **shown);
    html! { <div class="diag-more">{ super::show_more(id, shown, ITEMS_PAGE, label) }</div> }
}

#[component]
pub(crate) fn DiagnosticsPanel(props: &DiagnosticsProps) -> Html {
    let report = &props.report;
    let shown_errors = use_state(|| ITEMS_PAGE);
    let shown_warnings = use_state(|| ITEMS_PAGE);
    let shown_infos = use_state(|| ITEMS_PAGE);
    let groups = by_object(report);
    let of = |severity: Severity| -> Vec<&Diagnostic> {
        report.diagnostics.iter().filter(|d| d.severity == severity).collect()
    };
    let (warnings, infos) = (of(Severity::Warning), of(Severity::Info));
    let n_errors: usize = groups.iter().map(|(_, l)| l.len()).sum();
    // The first groups whose errors fit in what is shown (a group is cut within, too).
    let mut budget = *shown_errors;
    let drawn: Vec<(Option<&ObjectRef>, &[&Diagnostic], usize)> = groups
        .iter()
        .map_while(|(object, list)| {
            (budget > 0).then(|| {
                let take = list.len().min(budget);
                budget -= take;
                (*object, list.as_slice(), take)
            })
        })
        .collect();
    html! {
        <div class="diagnostics">
            <h3 id="errors-heading">{format!("Errors ({n_errors})")}</h3>
            if groups.is_empty() {
                <p class="ok" id="no-errors">{"No errors: kube-apiserver would accept every object."}</p>
            }
            { for drawn.iter().map(|(object, list, take)| html! {
                <div class="diag-group">
                    <p class="headline">{headline(*object, list)}</p>
                    <ul class="diag-list" aria-labelledby="errors-heading">
                        { for list[..*take].iter().map(|d| {
                            let text = if list.len() == 1 { d.message.clone() } else { format!("* {}", d.message) };
                            item(d, text, &props.on_jump)
                        }) }
                    </ul>
                </div>
            }) }
            { more("errors-more", &shown_errors, n_errors) }
            <h3 id="warnings-heading">{format!("Warnings ({})", warnings.len())}</h3>
            if warnings.is_empty() {
                <p class="ok">{"No warnings."}</p>
            }
            <ul class="diag-list" aria-labelledby="warnings-heading">
                { for warnings.iter().take(*shown_warnings).map(|d| item(d, format!("Warning: {}", d.message), &props.on_jump)) }
            </ul>
            { more("warnings-more", &shown_warnings, warnings.len()) }
            if !infos.is_empty() {
                <h3 id="infos-heading">{format!("Info ({})", infos.len())}</h3>
                <ul class="diag-list" aria-labelledby="infos-heading">
                    { for infos.iter().take(*shown_infos).map(|d| item(d, d.message.clone(), &props.on_jump)) }
                </ul>
                { more("infos-more", &shown_infos, infos.len()) }
            }
        </div>
    }
}
