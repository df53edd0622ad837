//! The page's header: examples, share link and embed snippet, downloads (the export as a test
//! suite among them) and the theme toggle; in the embed view a compact one with the status and
//! a link to the full playground.

use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::page_url;
use super::status::StatusLine;
use crate::editor::{copy_text, download_text};
use crate::examples::EXAMPLES;
use crate::export;
use crate::proxy_view::rules_available;
use crate::share;
use crate::state::{Action, State};

/// What a share button put on the clipboard, shown under the header until the next one.
pub(super) enum Copied {
    /// The playground's URL with the whole state in its fragment.
    Link(String),
    /// An `<iframe>` of the embed view.
    Snippet(String),
}

impl Copied {
    pub(super) fn view(&self) -> Html {
        match self {
            Copied::Link(link) => html! {
                <div class="share-out"><label>{"Link (copied) "}<input id="share-link" readonly=true value={link.clone()} /></label></div>
            },
            Copied::Snippet(html) => html! {
                <div class="share-out"><label>{"Embed (copied) "}<input id="snippet-text" readonly=true value={html.clone()} /></label></div>
            },
        }
    }
}

/// The header of the full page.
pub(super) fn full(
    state: &UseReducerHandle<State>,
    copied: &UseStateHandle<Option<Copied>>,
) -> Html {
    let on_theme = {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| state.dispatch(Action::ToggleTheme))
    };
    // Rendered on demand: until then a download renders them (and says so if there are none).
    let rules_available = !state.rules_computed() || rules_available(&state.report);
    html! {
        <header class="top">
            <h1 class="brand">{"svclab "}<small>{"playground"}</small></h1>
            { examples(state) }
            <nav class="actions" aria-label="Share and download">
                <button id="share" onclick={on_share(state, copied)} title="Put the whole state in the URL and copy the link">{"Share link"}</button>
                <button id="embed-snippet" onclick={on_snippet(state, copied)} title="Copy an iframe snippet for docs">{"Embed snippet"}</button>
                <button id="download-report" onclick={on_download(state, Download::Report)}>{"Report JSON"}</button>
                <button id="download-iptables" onclick={on_download(state, Download::Iptables)} disabled={!rules_available}>{"iptables"}</button>
                <button id="download-nftables" onclick={on_download(state, Download::Nftables)} disabled={!rules_available}>{"nftables"}</button>
                <button id="export-test" onclick={on_export(state)} title="Download a svclab test suite of this scenario whose expectations are the current results">{"Export as test"}</button>
                <button id="theme-toggle" onclick={on_theme} aria-pressed={state.dark.to_string()} title="Switch light/dark theme">
                    {if state.dark { "☀ Light" } else { "☾ Dark" }}
                </button>
            </nav>
        </header>
    }
}

/// The header of the embed view.
pub(super) fn compact(state: &State) -> Html {
    html! {
        <header class="top compact">
            <span class="brand">{"svclab"}</span>
            { StatusLine::of(state).compact() }
            <a class="open-full" href={format!("{}#{}", page_url().base, share::encode(&state.shared()))} target="_blank" rel="noopener">{"Open in playground ↗"}</a>
        </header>
    }
}

/// The examples menu.
fn examples(state: &UseReducerHandle<State>) -> Html {
    let on_example = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let select = e.target_unchecked_into::<HtmlSelectElement>();
            state.dispatch(Action::LoadExample(select.value()));
        })
    };
    html! {
        <label class="examples">{"Example "}
            <select id="examples" onchange={on_example}>
                <option value="" selected=true disabled=true>{"choose…"}</option>
                { for EXAMPLES.iter().map(|e| html! { <option value={e.id}>{e.title}</option> }) }
            </select>
        </label>
    }
}

/// The page's URL with the state in its fragment (`?embed` for the embed view).
fn link(state: &State, embed: bool) -> String {
    let query = if embed { "?embed" } else { "" };
    format!("{}{query}#{}", page_url().base, share::encode(&state.shared()))
}

/// Share link: the state goes into the address bar and onto the clipboard.
fn on_share(
    state: &UseReducerHandle<State>,
    copied: &UseStateHandle<Option<Copied>>,
) -> Callback<MouseEvent> {
    let state = state.clone();
    let copied = copied.clone();
    Callback::from(move |_: MouseEvent| {
        let link = link(&state, false);
        replace_url(&link);
        copy(&link);
        copied.set(Some(Copied::Link(link)));
    })
}

/// Embed snippet: an `<iframe>` of the embed view onto the clipboard.
fn on_snippet(
    state: &UseReducerHandle<State>,
    copied: &UseStateHandle<Option<Copied>>,
) -> Callback<MouseEvent> {
    let state = state.clone();
    let copied = copied.clone();
    Callback::from(move |_: MouseEvent| {
        let html = format!(
            "<iframe src=\"{}\" title=\"svclab playground\" width=\"100%\" height=\"480\" style=\"border:0\" loading=\"lazy\"></iframe>",
            link(&state, true).replace('&', "&amp;").replace('"', "&quot;")
        );
        copy(&html);
        copied.set(Some(Copied::Snippet(html)));
    })
}

/// What a download button saves.
#[derive(Clone, Copy)]
enum Download {
    Report,
    Iptables,
    Nftables,
}

fn on_download(state: &UseReducerHandle<State>, what: Download) -> Callback<MouseEvent> {
    let state = state.clone();
    Callback::from(move |_: MouseEvent| {
        let rules = state.rules();
        let rules = rules.as_deref();
        match what {
            Download::Report => {
                download_text("svclab-report.json", &state.report.to_json(), "application/json");
            }
            Download::Iptables | Download::Nftables => {
                let Some(rules) = rules else {
                    let why = "No rulesets to download: kube-proxy refuses this configuration, or \
                               the cluster is past what svclab renders.";
                    state.dispatch(Action::Notice(Some(why.to_owned())));
                    return;
                };
                match what {
                    Download::Iptables => {
                        download_text("kube-proxy.iptables", &rules.iptables, "text/plain");
                    }
                    _ => download_text("kube-proxy.nft", &rules.nftables, "text/plain"),
                }
            }
        }
    })
}

/// Export as test: the suite is downloaded, or the notice says why there is none.
fn on_export(state: &UseReducerHandle<State>) -> Callback<MouseEvent> {
    let state = state.clone();
    Callback::from(move |_: MouseEvent| match export::suite(&state) {
        Ok(suite) => download_text(&export::file_name(), &suite, "application/yaml"),
        Err(err) => {
            state.dispatch(Action::Notice(Some(format!("Nothing to export as a test: {err}."))))
        }
    })
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
