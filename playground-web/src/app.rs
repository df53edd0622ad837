//! The page: header (examples, share, downloads, theme), editor, profile bar and panels.

use wasm_bindgen::closure::Closure;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::editor::{
    Editor, copy_text, download_text, on_system_theme_change, system_prefers_dark,
};
use crate::examples::{EXAMPLES, default_example};
use crate::panels::allocations::AllocationsPanel;
use crate::panels::diagnostics::DiagnosticsPanel;
use crate::panels::profile_bar::ProfileBar;
use crate::panels::rules::RulesPanel;
use crate::panels::trace::TracePanel;
use crate::share::{self, SharedState};
use crate::state::{Action, State, Tab};

/// Where the page is and what its URL asks for.
struct PageUrl {
    /// `origin + pathname`.
    base: String,
    /// `?embed` present.
    embed: bool,
    /// The fragment without `#`.
    fragment: String,
}

fn page_url() -> PageUrl {
    let location = web_sys::window().map(|w| w.location());
    let get = |f: fn(&web_sys::Location) -> Result<String, wasm_bindgen::JsValue>| {
        location.as_ref().and_then(|l| f(l).ok()).unwrap_or_default()
    };
    let search = get(web_sys::Location::search);
    let embed =
        search.trim_start_matches('?').split('&').any(|p| p == "embed" || p.starts_with("embed="));
    PageUrl {
        base: format!("{}{}", get(web_sys::Location::origin), get(web_sys::Location::pathname)),
        embed,
        fragment: get(web_sys::Location::hash).trim_start_matches('#').to_owned(),
    }
}

/// The state the page opens with: the link's state, or the default example.
fn initial_state() -> State {
    let url = page_url();
    let dark = system_prefers_dark();
    let default =
        || SharedState { scenario: default_example().text.to_owned(), ..SharedState::default() };
    if url.fragment.is_empty() {
        return State::new(default(), dark, url.embed, None);
    }
    match share::decode(&url.fragment) {
        Ok(shared) => State::new(shared, dark, url.embed, None),
        Err(error) => State::new(
            default(),
            dark,
            url.embed,
            Some(format!(
                "This share link could not be opened: {error}. Showing the default example instead."
            )),
        ),
    }
}

fn set_document_theme(dark: bool) {
    if let Some(root) =
        web_sys::window().and_then(|w| w.document()).and_then(|d| d.document_element())
    {
        let _ = root.set_attribute("data-theme", if dark { "dark" } else { "light" });
    }
}

fn replace_url(url: &str) {
    if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(url));
    }
}

fn copy(text: &str) {
    // The promise reports failure by resolving false; the text is also shown on the page.
    let _ = copy_text(text);
}

/// The whole page.
#[component]
pub(crate) fn App() -> Html {
    let state = use_reducer(initial_state);
    let shared_link = use_state(String::new);
    let snippet = use_state(String::new);
    use_effect_with(state.dark, |dark| set_document_theme(*dark));
    {
        // Follow the system's colour scheme when it changes (the toggle overrides until then).
        let state = state.clone();
        use_effect_with((), move |_| {
            let listener =
                Closure::<dyn Fn(bool)>::new(move |dark| state.dispatch(Action::SystemTheme(dark)));
            on_system_theme_change(&listener);
            listener.forget();
        });
    }

    let dispatch = |make: fn(String) -> Action| {
        let state = state.clone();
        Callback::from(move |text: String| state.dispatch(make(text)))
    };
    let on_edit = dispatch(Action::Edited);
    let on_jump = {
        let state = state.clone();
        Callback::from(move |(line, column): (u32, u32)| state.dispatch(Action::Jump(line, column)))
    };
    let link_for = {
        let state = state.clone();
        move |embed: bool| {
            let url = page_url();
            let query = if embed { "?embed" } else { "" };
            format!("{}{query}#{}", url.base, share::encode(&state.shared()))
        }
    };
    let on_share = {
        let link_for = link_for.clone();
        let shared_link = shared_link.clone();
        let snippet = snippet.clone();
        Callback::from(move |_: MouseEvent| {
            let link = link_for(false);
            replace_url(&link);
            copy(&link);
            snippet.set(String::new());
            shared_link.set(link);
        })
    };
    let on_snippet = {
        let shared_link = shared_link.clone();
        let snippet = snippet.clone();
        Callback::from(move |_: MouseEvent| {
            let html = format!(
                "<iframe src=\"{}\" title=\"svclab playground\" width=\"100%\" height=\"480\" style=\"border:0\" loading=\"lazy\"></iframe>",
                link_for(true).replace('&', "&amp;").replace('"', "&quot;")
            );
            copy(&html);
            shared_link.set(String::new());
            snippet.set(html);
        })
    };
    let on_example = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let select = e.target_unchecked_into::<HtmlSelectElement>();
            state.dispatch(Action::LoadExample(select.value()));
        })
    };
    let on_download = |what: &'static str| {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| match what {
            "report" => {
                download_text("svclab-report.json", &state.report.to_json(), "application/json")
            }
            "iptables" => {
                if let Some(rules) = &state.report.rules {
                    download_text("kube-proxy.iptables", &rules.iptables, "text/plain");
                }
            }
            _ => {
                if let Some(rules) = &state.report.rules {
                    download_text("kube-proxy.nft", &rules.nftables, "text/plain");
                }
            }
        })
    };
    let on_theme = {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| state.dispatch(Action::ToggleTheme))
    };
    let on_dismiss = {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| state.dispatch(Action::Notice(None)))
    };
    let rules_available = crate::proxy_view::rules_available(&state.report);
    let count = |severity: svclab_core::Severity| {
        state.report.diagnostics.iter().filter(|d| d.severity == severity).count()
    };
    let n_errors = count(svclab_core::Severity::Error);
    let n_warnings = count(svclab_core::Severity::Warning);
    // Policy audits and skipped rules; said only when there are some.
    let infos = match count(svclab_core::Severity::Info) {
        0 => String::new(),
        n => format!(" · {n} info"),
    };
    let status = format!(
        "{} Service{} · {n_errors} error{} · {n_warnings} warning{}{infos} · evaluated in {:.1} ms",
        state.report.services.len(),
        if state.report.services.len() == 1 { "" } else { "s" },
        if n_errors == 1 { "" } else { "s" },
        if n_warnings == 1 { "" } else { "s" },
        state.eval_ms
    );

    let header = if state.embed {
        html! {
            <header class="top compact">
                <span class="brand">{"svclab"}</span>
                <span class="status" id="status" data-eval-ms={format!("{:.3}", state.eval_ms)} data-evaluations={state.evaluations.to_string()}>{status.clone()}</span>
                <a class="open-full" href={format!("{}#{}", page_url().base, share::encode(&state.shared()))} target="_blank" rel="noopener">{"Open in playground ↗"}</a>
            </header>
        }
    } else {
        html! {
            <header class="top">
                <h1 class="brand">{"svclab "}<small>{"playground"}</small></h1>
                <label class="examples">{"Example "}
                    <select id="examples" onchange={on_example}>
                        <option value="" selected=true disabled=true>{"choose…"}</option>
                        { for EXAMPLES.iter().map(|e| html! { <option value={e.id}>{e.title}</option> }) }
                    </select>
                </label>
                <nav class="actions" aria-label="Share and download">
                    <button id="share" onclick={on_share} title="Put the whole state in the URL and copy the link">{"Share link"}</button>
                    <button id="embed-snippet" onclick={on_snippet} title="Copy an iframe snippet for docs">{"Embed snippet"}</button>
                    <button id="download-report" onclick={on_download("report")}>{"Report JSON"}</button>
                    <button id="download-iptables" onclick={on_download("iptables")} disabled={!rules_available}>{"iptables"}</button>
                    <button id="download-nftables" onclick={on_download("nftables")} disabled={!rules_available}>{"nftables"}</button>
                    <button id="theme-toggle" onclick={on_theme} aria-pressed={state.dark.to_string()} title="Switch light/dark theme">
                        {if state.dark { "☀ Light" } else { "☾ Dark" }}
                    </button>
                </nav>
            </header>
        }
    };
    let nodes: Vec<String> =
        state.world.nodes.iter().map(|n| n.value.metadata.name.clone()).collect();
    let suggestion = crate::proxy_view::suggestion(&state.report);
    let panel = match state.tab {
        Tab::Diagnostics => {
            html! { <DiagnosticsPanel report={state.report.clone()} on_jump={on_jump.clone()} /> }
        }
        Tab::Allocations => html! { <AllocationsPanel report={state.report.clone()} /> },
        Tab::Rules => {
            let dispatcher = state.clone();
            let on_filter =
                Callback::from(move |f: String| dispatcher.dispatch(Action::SetRulesFilter(f)));
            html! { <RulesPanel report={state.report.clone()} filter={state.rules_filter.clone()} {on_filter} /> }
        }
        Tab::Trace => {
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
    };
    let on_profile = {
        let state = state.clone();
        Callback::from(move |change| state.dispatch(Action::Profile(change)))
    };
    html! {
        <div class={classes!("page", state.embed.then_some("embed"))}>
            { header }
            if let Some(notice) = &state.notice {
                <div class="notice" id="notice" role="alert">
                    <span>{notice.clone()}</span>
                    <button onclick={on_dismiss} aria-label="Dismiss">{"×"}</button>
                </div>
            }
            if !shared_link.is_empty() {
                <div class="share-out"><label>{"Link (copied) "}<input id="share-link" readonly=true value={(*shared_link).clone()} /></label></div>
            }
            if !snippet.is_empty() {
                <div class="share-out"><label>{"Embed (copied) "}<input id="snippet-text" readonly=true value={(*snippet).clone()} /></label></div>
            }
            <main class="workbench">
                <section class="editor-pane" aria-label="Scenario">
                    <Editor text={state.scenario.clone()} revision={state.revision} report={state.report.clone()}
                        dark={state.dark} read_only={state.embed} jump={state.jump} on_change={on_edit} />
                </section>
                <section class="results" aria-label="Results">
                    if !state.embed {
                        <ProfileBar profile={state.report.profile.clone()} {nodes} node={state.node()}
                            proxy_mode={state.proxy_mode()} on_change={on_profile} />
                        <p class="status" id="status" data-eval-ms={format!("{:.3}", state.eval_ms)}
                            data-evaluations={state.evaluations.to_string()} aria-live="polite">{status}</p>
                    }
                    <div class="tabs" role="tablist" aria-label="Panels">
                        { for Tab::ALL.into_iter().map(|tab| {
                            let state = state.clone();
                            let selected = state.tab == tab;
                            let onclick = Callback::from(move |_: MouseEvent| state.dispatch(Action::SetTab(tab)));
                            html! {
                                <button role="tab" id={format!("tab-{}", tab.id())} aria-selected={selected.to_string()}
                                    aria-controls="panel" class={classes!("tab", selected.then_some("selected"))} {onclick}>
                                    {tab.title()}
                                </button>
                            }
                        }) }
                    </div>
                    <div class="panel" id="panel" role="tabpanel" aria-labelledby={format!("tab-{}", state.tab.id())}
                        data-tab={state.tab.id()}>
                        { panel }
                    </div>
                </section>
            </main>
            if !state.embed {
                <footer class="foot">
                    {format!("svclab-core {} · Kubernetes 1.{}–1.{} · runs entirely in your browser; nothing leaves this page",
                        env!("CARGO_PKG_VERSION"), svclab_core::OLDEST_MINOR, svclab_core::NEWEST_MINOR)}
                </footer>
            }
        </div>
    }
}
