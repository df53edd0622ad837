//! Trace panel: a packet (source, destination, port, protocol) walked through the ruleset,
//! rule by rule, with DNAT choices and their probabilities and the final verdict.

use std::rc::Rc;

use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use crate::proxy_view::TraceOutcome;
use crate::share::SharedTrace;

/// Props of [`TracePanel`].
#[derive(Properties, Clone, PartialEq)]
pub(crate) struct TraceProps {
    /// The packet.
    pub(crate) packet: SharedTrace,
    /// The last result.
    pub(crate) outcome: Option<Rc<TraceOutcome>>,
    /// A suggested destination (`ip:port` of the first Service) for the placeholder.
    pub(crate) suggestion: (String, String),
    /// The scenario's proxy mode.
    pub(crate) proxy_mode: String,
    /// Form edits.
    pub(crate) on_change: Callback<SharedTrace>,
    /// Run the trace.
    pub(crate) on_run: Callback<()>,
}

fn outcome_view(outcome: &TraceOutcome, proxy_mode: &str) -> Html {
    match outcome {
        TraceOutcome::Invalid(message) => {
            html! { <p class="reason" id="trace-error" role="alert">{message.clone()}</p> }
        }
        TraceOutcome::Walk(report) => {
            let request = &report.request;
            html! {
                <div id="trace-result">
                    <p class="trace-head">
                        {format!("{} {} → {}:{} · path {} · {}", request.protocol, request.src, request.dst, request.dport,
                            if report.path.is_empty() { "–" } else { report.path.as_str() }, report.ruleset)}
                    </p>
                    if proxy_mode == "nftables" {
                        <p class="note">{"The walk interprets the iptables ruleset; kube-proxy's nftables backend makes the same decisions."}</p>
                    }
                    { for report.warnings.iter().map(|w| html! { <p class="reason" role="alert">{format!("warning: {w}")}</p> }) }
                    if report.outcomes.is_empty() && report.warnings.is_empty() {
                        <p class="reason">{"No outcome."}</p>
                    }
                    { for report.outcomes.iter().enumerate().map(|(i, o)| {
                        let target = o.endpoint.as_deref().map(|e| format!(" {e}")).unwrap_or_default();
                        let masquerade = if o.masquerade { ", masqueraded" } else { "" };
                        html! {
                            <details class="trace-outcome" open={report.outcomes.len() <= 2}>
                                <summary class="verdict" id={format!("trace-verdict-{i}")}>
                                    {format!("Outcome {} (p = {:.4}): {}{target}{masquerade}", i + 1, o.probability, o.verdict)}
                                </summary>
                                <ol class="trace-steps">
                                    { for o.steps.iter().map(|s| html! {
                                        <li>
                                            <div class="chain">{format!("{} / {}", s.table, s.chain)}</div>
                                            <code class="rule">{s.rule.clone()}</code>
                                            if !s.effect.is_empty() { <div class="note">{format!("⇒ {}", s.effect)}</div> }
                                        </li>
                                    }) }
                                </ol>
                            </details>
                        }
                    }) }
                </div>
            }
        }
    }
}

/// The panel.
#[component]
pub(crate) fn TracePanel(props: &TraceProps) -> Html {
    let field = |make: fn(&mut SharedTrace, String)| {
        let packet = props.packet.clone();
        props.on_change.reform(move |e: Event| {
            let mut next = packet.clone();
            make(&mut next, e.target_unchecked_into::<HtmlInputElement>().value());
            next
        })
    };
    let on_protocol = {
        let packet = props.packet.clone();
        props.on_change.reform(move |e: Event| {
            let mut next = packet.clone();
            next.protocol = e.target_unchecked_into::<HtmlSelectElement>().value();
            next
        })
    };
    let on_run = props.on_run.clone();
    let onsubmit = Callback::from(move |e: SubmitEvent| {
        e.prevent_default();
        on_run.emit(());
    });
    html! {
        <div class="trace">
            <form class="trace-form" {onsubmit} aria-label="Packet">
                <label>{"Source "}<input id="trace-src" type="text" size="15" spellcheck="false" value={props.packet.src.clone()} onchange={field(|p, v| p.src = v)} /></label>
                <label>{"Destination "}<input id="trace-dst" type="text" size="15" spellcheck="false" placeholder={props.suggestion.0.clone()} value={props.packet.dst.clone()} onchange={field(|p, v| p.dst = v)} /></label>
                <label>{"Port "}<input id="trace-port" type="text" size="5" placeholder={props.suggestion.1.clone()} value={props.packet.port.clone()} onchange={field(|p, v| p.port = v)} /></label>
                <label>{"Protocol "}
                    <select id="trace-protocol" onchange={on_protocol}>
                        { for ["TCP", "UDP", "SCTP"].into_iter().map(|p| html! { <option value={p} selected={props.packet.protocol == p}>{p}</option> }) }
                    </select>
                </label>
                <button id="trace-run" type="submit">{"Trace"}</button>
            </form>
            { props.outcome.as_deref().map(|o| outcome_view(o, &props.proxy_mode)).unwrap_or_default() }
        </div>
    }
}
