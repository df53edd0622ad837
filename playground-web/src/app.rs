//! The page: header, notice, editor, results (profile bar, status line, tabs and the open
//! panel), footer. [`App`] owns the state and lays the parts out; each part is a function of the
//! state in its own module.

mod header;
mod status;
mod tabs;

use wasm_bindgen::closure::Closure;
use yew::prelude::*;

use crate::editor::{Editor, on_system_theme_change, system_prefers_dark};
use crate::examples::default_example;
use crate::panels::profile_bar::ProfileBar;
use crate::share::{self, SharedState};
use crate::state::{Action, Change, State, on_evaluated};
use header::Copied;
use status::StatusLine;

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

/// The document's theme follows the state, and the state follows the system's colour scheme
/// when it changes (the toggle overrides until then).
#[hook]
fn use_theme(state: &UseReducerHandle<State>) {
    use_effect_with(state.dark, |dark| set_document_theme(*dark));
    let state = state.clone();
    use_effect_with((), move |_| {
        let listener =
            Closure::<dyn Fn(bool)>::new(move |dark| state.dispatch(Action::SystemTheme(dark)));
        on_system_theme_change(&listener);
        listener.forget();
    });
}

/// The whole page.
#[component]
pub(crate) fn App() -> Html {
    let state = use_reducer(initial_state);
    {
        // Evaluations after the first one end in a later task, and come back as an action.
        let dispatcher = state.dispatcher();
        use_effect_with((), move |_| {
            on_evaluated(Callback::from(move |done| dispatcher.dispatch(done)));
        });
    }
    let copied = use_state(|| None::<Copied>);
    use_theme(&state);
    let header = if state.embed { header::compact(&state) } else { header::full(&state, &copied) };
    html! {
        <div class={classes!("page", state.embed.then_some("embed"))}>
            { header }
            { notice(&state) }
            if let Some(copied) = &*copied {
                { copied.view() }
            }
            <main class="workbench">
                <section class="editor-pane" aria-label="Scenario">
                    { editor(&state) }
                </section>
                <section class="results" aria-label="Results">
                    if !state.embed {
                        { profile_bar(&state) }
                        { StatusLine::of(&state).line() }
                    }
                    { tabs::tab_bar(&state) }
                    { tabs::panel(&state) }
                </section>
            </main>
            if !state.embed {
                { footer() }
            }
        </div>
    }
}

/// The notice above the workbench (a share link that did not open), with its dismiss button.
fn notice(state: &UseReducerHandle<State>) -> Html {
    let Some(notice) = &state.notice else { return Html::default() };
    let on_dismiss = {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| state.dispatch(Action::Notice(None)))
    };
    html! {
        <div class="notice" id="notice" role="alert">
            <span>{notice.clone()}</span>
            <button onclick={on_dismiss} aria-label="Dismiss">{"×"}</button>
        </div>
    }
}

/// The scenario editor; read-only in the embed view.
fn editor(state: &UseReducerHandle<State>) -> Html {
    let on_edit = {
        let state = state.clone();
        Callback::from(move |change: Change| state.dispatch(Action::Edited(change)))
    };
    html! {
        <Editor text={state.scenario.clone()} revision={state.revision} report={state.report.clone()}
            dark={state.dark} read_only={state.embed} jump={state.jump} on_change={on_edit} />
    }
}

/// The profile bar, which writes into the scenario's profile documents.
fn profile_bar(state: &UseReducerHandle<State>) -> Html {
    let nodes: Vec<String> =
        state.world.nodes.iter().map(|n| n.value.metadata.name.clone()).collect();
    let on_profile = {
        let state = state.clone();
        Callback::from(move |change| state.dispatch(Action::Profile(change)))
    };
    html! {
        <ProfileBar profile={state.report.profile.clone()} {nodes} node={state.node()}
            proxy_mode={state.proxy_mode()} on_change={on_profile} />
    }
}

fn footer() -> Html {
    html! {
        <footer class="foot">
            {format!("svclab-core {} · Kubernetes 1.{}–1.{} · runs entirely in your browser; nothing leaves this page",
                env!("CARGO_PKG_VERSION"), svclab_core::OLDEST_MINOR, svclab_core::NEWEST_MINOR)}
        </footer>
    }
}
