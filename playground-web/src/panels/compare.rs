//! Compare panel: the scenario rehearsed against a target release, kube-proxy mode and ranges
//! (what `svclab upgrade --diff` answers): the findings with their upstream rows, then each
//! ruleset before and after side by side, changed lines marked.

use std::rc::Rc;

use svclab_core::{Finding, NEWEST_MINOR, OLDEST_MINOR, ProfileSummary, UpgradeSide};
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use crate::compare::{Cell, Compared, Pane, Row};
use crate::share::SharedCompare;

/// Props of [`ComparePanel`].
#[derive(Properties, Clone, PartialEq)]
pub(crate) struct CompareProps {
    /// The target.
    pub(crate) target: SharedCompare,
    /// The last rehearsal, or why there is none.
    pub(crate) outcome: Option<Rc<Result<Compared, String>>>,
    /// Today's profile (the placeholders).
    pub(crate) today: ProfileSummary,
    /// Today's kube-proxy mode.
    pub(crate) proxy_mode: String,
    /// Form edits.
    pub(crate) on_change: Callback<SharedCompare>,
    /// Rehearse again.
    pub(crate) on_run: Callback<()>,
}

fn side(side: &UpgradeSide) -> String {
    let version = if side.kubernetes_version == side.modelled_release {
        side.kubernetes_version.clone()
    } else {
        format!("{} ({})", side.kubernetes_version, side.modelled_release)
    };
    format!(
        "{version} · {} · {} · NodePorts {} · {} allocator",
        side.proxy_mode,
        side.service_cluster_ip_ranges.join(", "),
        side.service_node_port_range,
        side.allocator
    )
}

fn finding(f: &Finding) -> Html {
    let object = f.object.clone().unwrap_or_else(|| "(cluster)".to_owned());
    let detail = [f.service_port.clone(), f.step.map(|s| format!("step {s}"))]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" · ");
    html! {
        <tr class={classes!("finding", f.severity.as_str())} data-area={f.area.as_str()} data-severity={f.severity.as_str()}>
            <td class="area">{f.area.as_str()}</td>
            <td class="severity"><span class="badge">{f.severity.as_str()}</span></td>
            <td class="object">{object}
                if !detail.is_empty() { <div class="note">{detail}</div> }
            </td>
            <td class="message">{f.message.clone()}
                <div class="upstream">{f.upstream.clone()}</div>
            </td>
        </tr>
    }
}

fn cell(cell: &Option<Cell>, class: &'static str) -> Html {
    match cell {
        Some(c) => html! {
            <>
                <td class="ln">{c.line}</td>
                <td class={classes!("text", c.changed.then_some(class))}>{c.text.clone()}</td>
            </>
        },
        None => html! { <><td class="ln"></td><td class="text blank"></td></> },
    }
}

fn pane(index: usize, pane: &Pane) -> Html {
    let unchanged = pane.removed == 0 && pane.added == 0;
    html! {
        <section class="diff-pane" aria-label={pane.title.clone()}>
            <h4>{pane.title.clone()}
                <span class="note">{if unchanged { " · the same rules".to_owned() } else { format!(" · −{} +{} lines", pane.removed, pane.added) }}</span>
            </h4>
            <table class="diff" id={format!("rules-diff-{index}")}>
                <colgroup><col class="ln" /><col /><col class="ln" /><col /></colgroup>
                <thead><tr><th colspan="2">{"before"}</th><th colspan="2">{"after"}</th></tr></thead>
                <tbody>
                    { for pane.rows.iter().map(|row| match row {
                        Row::Lines(before, after) => html! {
                            <tr>{ cell(before, "removed") }{ cell(after, "added") }</tr>
                        },
                        Row::Folded(n) => html! {
                            <tr class="folded"><td colspan="4">{format!("⋯ {n} unchanged line{}", if *n == 1 { "" } else { "s" })}</td></tr>
                        },
                    }) }
                </tbody>
            </table>
        </section>
    }
}

fn outcome(compared: &Compared) -> Html {
    let report = &compared.report;
    let summary = &report.summary;
    html! {
        <div id="compare-result">
            <p class="compare-sides" id="compare-sides">
                <span>{format!("from {}", side(&report.from))}</span><br />
                <span>{format!("to {}", side(&report.to))}</span>
            </p>
            <p class={classes!("compare-summary", (summary.breaks > 0).then_some("breaks"))} id="compare-summary" role="status">
                {format!("{} break{} · {} change{} · {} note{}",
                    summary.breaks, if summary.breaks == 1 { "" } else { "s" },
                    summary.changes, if summary.changes == 1 { "" } else { "s" },
                    summary.notes, if summary.notes == 1 { "" } else { "s" })}
                if summary.breaks > 0 { {" — svclab upgrade would exit with 1"} }
            </p>
            if report.findings.is_empty() {
                <p class="note" id="compare-no-findings">{"No finding: nothing the scenario holds meets a change between these two sides."}</p>
            } else {
                <div class="table-scroll">
                    <table class="findings" id="compare-findings">
                        <thead><tr><th>{"Area"}</th><th>{"Severity"}</th><th>{"Object"}</th><th>{"What happens, and the upstream change behind it"}</th></tr></thead>
                        <tbody>{ for report.findings.iter().map(finding) }</tbody>
                    </table>
                </div>
            }
            <h3>{"Rules before and after"}</h3>
            if compared.panes.is_empty() {
                <p class="note">{"No ruleset on either side."}</p>
            }
            { for compared.panes.iter().enumerate().map(|(i, p)| pane(i, p)) }
        </div>
    }
}

/// The panel.
#[component]
pub(crate) fn ComparePanel(props: &CompareProps) -> Html {
    let edit = |make: fn(&mut SharedCompare, String), select: bool| {
        let target = props.target.clone();
        props.on_change.reform(move |e: Event| {
            let value = if select {
                e.target_unchecked_into::<HtmlSelectElement>().value()
            } else {
                e.target_unchecked_into::<HtmlInputElement>().value()
            };
            let mut next = target.clone();
            make(&mut next, value);
            next
        })
    };
    let on_run = props.on_run.clone();
    let onsubmit = Callback::from(move |e: SubmitEvent| {
        e.prevent_default();
        on_run.emit(());
    });
    let to = props.target.to.trim();
    html! {
        <div class="compare">
            <form class="compare-form" {onsubmit} aria-label="Target">
                <label>{"Target release "}
                    <select id="compare-to" onchange={edit(|t, v| t.to = v, true)}>
                        { for (OLDEST_MINOR..=NEWEST_MINOR).rev().map(|m| {
                            let v = format!("1.{m}");
                            html! { <option value={v.clone()} selected={v == to}>{v.clone()}</option> }
                        }) }
                    </select>
                </label>
                <label>{"kube-proxy "}
                    <select id="compare-mode" onchange={edit(|t, v| t.proxy_mode = v, true)}>
                        <option value="" selected={props.target.proxy_mode.is_empty()}>{format!("as today ({})", props.proxy_mode)}</option>
                        { for ["iptables", "nftables"].into_iter().map(|m| html! {
                            <option value={m} selected={props.target.proxy_mode == m}>{m}</option>
                        }) }
                    </select>
                </label>
                <label>{"Service CIDRs "}
                    <input id="compare-cidrs" type="text" size="22" spellcheck="false"
                        placeholder={props.today.service_cluster_ip_ranges.join(", ")}
                        value={props.target.service_cluster_ip_ranges.clone()}
                        onchange={edit(|t, v| t.service_cluster_ip_ranges = v, false)} />
                </label>
                <label>{"NodePorts "}
                    <input id="compare-node-ports" type="text" size="11" spellcheck="false"
                        placeholder={props.today.service_node_port_range.clone()}
                        value={props.target.service_node_port_range.clone()}
                        onchange={edit(|t, v| t.service_node_port_range = v, false)} />
                </label>
                <button id="compare-run" type="submit">{"Compare"}</button>
            </form>
            <p class="note">{format!("The editor's scenario is the cluster today (Kubernetes {}); empty ranges keep today's. The same rehearsal as `svclab upgrade --diff`.", props.today.kubernetes_version)}</p>
            { match props.outcome.as_deref() {
                None => Html::default(),
                Some(Err(message)) => html! { <p class="reason" id="compare-error" role="alert">{message.clone()}</p> },
                Some(Ok(compared)) => outcome(compared),
            } }
        </div>
    }
}
