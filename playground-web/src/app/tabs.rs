//! The tab bar (`#tab-<id>`, ARIA `tablist`) and the panel of the open tab (`#panel`,
//! `tabpanel`, `data-tab`).

use yew::prelude::*;

use crate::panels::allocations::AllocationsPanel;
use crate::panels::compare::ComparePanel;
use crate::panels::diagnostics::DiagnosticsPanel;
use crate::panels::rules::RulesPanel;
use crate::panels::trace::TracePanel;
use crate::proxy_view::RulesIndex;
use crate::state::{Action, State, Tab};

/// One button per tab, the open one selected.
pub(super) fn tab_bar(state: &UseReducerHandle<State>) -> Html {
    html! {
        <div class="tabs" role="tablist" aria-label="Panels">
            { for Tab::ALL.into_iter().map(|tab| tab_button(state, tab)) }
        </div>
    }
}

fn tab_button(state: &UseReducerHandle<State>, tab: Tab) -> Html {
    let selected = state.tab == tab;
    let onclick = {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| state.dispatch(Action::SetTab(tab)))
    };
    html! {
        <button role="tab" id={format!("tab-{}", tab.id())} aria-selected={selected.to_string()}
            aria-controls="panel" class={classes!("tab", selected.then_some("selected"))} {onclick}>
            {tab.title()}
        </button>
    }
}

/// The open tab's panel.
pub(super) fn panel(state: &UseReducerHandle<State>) -> Html {
    let content = match state.tab {
        Tab::Diagnostics => diagnostics(state),
        Tab::Allocations => html! { <AllocationsPanel report={state.report.clone()} /> },
        Tab::Rules => rules(state),
        Tab::Trace => trace(state),
        Tab::Compare => compare(state),
    };
    html! {
        <div class="panel" id="panel" role="tabpanel" aria-labelledby={format!("tab-{}", state.tab.id())}
            data-tab={state.tab.id()}>
            { content }
        </div>
    }
}

/// Diagnostics; a click on one moves the editor's cursor to it.
fn diagnostics(state: &UseReducerHandle<State>) -> Html {
    let on_jump = {
        let state = state.clone();
        Callback::from(move |(line, column): (u32, u32)| state.dispatch(Action::Jump(line, column)))
    };
    html! { <DiagnosticsPanel report={state.report.clone()} {on_jump} /> }
}

fn rules(state: &UseReducerHandle<State>) -> Html {
    let on_filter = {
        let state = state.clone();
        Callback::from(move |f: String| state.dispatch(Action::SetRulesFilter(f)))
    };
    let rendering = !state.rules_computed();
    // The text's rulesets, or while they are rendered the last ones rendered, if any.
    let (report, index) = match &state.rules_report {
        Some((report, index)) => (report.clone(), index.clone()),
        None => (state.report.clone(), crate::state::Shared::new(RulesIndex::default())),
    };
    html! { <RulesPanel {report} {index} {rendering} filter={state.rules_filter.clone()} {on_filter} /> }
}

fn trace(state: &UseReducerHandle<State>) -> Html {
    let suggestion = crate::proxy_view::suggestion(&state.report);
    let on_change = {
        let state = state.clone();
        Callback::from(move |t| state.dispatch(Action::SetTrace(t)))
    };
    let on_run = {
        let state = state.clone();
        Callback::from(move |()| state.dispatch(Action::RunTrace))
    };
    html! { <TracePanel packet={state.trace.clone()} outcome={state.trace_outcome.clone()} {suggestion} proxy_mode={state.proxy_mode()} {on_change} {on_run} /> }
}

fn compare(state: &UseReducerHandle<State>) -> Html {
    let on_change = {
        let state = state.clone();
        Callback::from(move |t| state.dispatch(Action::SetCompare(t)))
    };
    let on_run = {
        let state = state.clone();
        Callback::from(move |()| state.dispatch(Action::RunCompare))
    };
    html! {
        <ComparePanel target={state.compare.clone()} outcome={state.compare_outcome.clone()}
            today={state.report.profile.clone()} proxy_mode={state.proxy_mode()} {on_change} {on_run} />
    }
}
