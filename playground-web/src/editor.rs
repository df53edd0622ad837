//! The CodeMirror 6 editor (js/editor.js, bundled by `cargo xtask playground`) and its yew
//! component: YAML highlighting (off past VS Code's large-file line), lint markers at every
//! diagnostic, change events that carry the edits since the text the app last had ([`Change`]),
//! not the whole text, in a task after the frame that shows them (no debounce: the app's
//! evaluation in steps coalesces what comes while it runs, `state/evaluation.rs`).

use std::cell::RefCell;
use std::rc::Rc;

use crate::state::{Change, Shared};
use serde::Serialize;
use svclab_core::{Report, Severity};
use wasm_bindgen::prelude::*;
use yew::prelude::*;

#[wasm_bindgen(module = "/js/editor.js")]
extern "C" {
    #[wasm_bindgen(js_name = createEditor)]
    fn create_editor(
        parent: &web_sys::HtmlElement,
        text: &str,
        dark: bool,
        read_only: bool,
        on_change: &Closure<dyn Fn(String, String)>,
    ) -> JsValue;
    #[wasm_bindgen(js_name = getText)]
    fn get_text(handle: &JsValue) -> String;
    #[wasm_bindgen(js_name = setText)]
    fn set_text(handle: &JsValue, text: &str);
    #[wasm_bindgen(js_name = setDiagnostics)]
    fn set_diagnostics(handle: &JsValue, json: &str);
    #[wasm_bindgen(js_name = jumpTo)]
    fn jump_to(handle: &JsValue, line: u32, column: u32);
    #[wasm_bindgen(js_name = setDark)]
    fn set_dark(handle: &JsValue, dark: bool);
    /// Copies text to the clipboard.
    #[wasm_bindgen(js_name = copyText)]
    pub(crate) fn copy_text(text: &str) -> js_sys::Promise;
    /// Saves text as a file.
    #[wasm_bindgen(js_name = downloadText)]
    pub(crate) fn download_text(file_name: &str, text: &str, mime: &str);
    /// Calls `callback(dark)` whenever the system colour scheme changes.
    #[wasm_bindgen(js_name = onSystemThemeChange)]
    pub(crate) fn on_system_theme_change(callback: &Closure<dyn Fn(bool)>);
    /// Whether the system prefers a dark colour scheme.
    #[wasm_bindgen(js_name = systemPrefersDark)]
    pub(crate) fn system_prefers_dark() -> bool;
}

/// A lint marker as editor.js reads it.
#[derive(Serialize)]
struct Marker<'a> {
    line: u32,
    column: u32,
    severity: &'static str,
    message: &'a str,
}

/// Lint markers of a report, as JSON for editor.js.
fn markers_json(report: &Report) -> String {
    let markers: Vec<Marker<'_>> = report
        .diagnostics
        .iter()
        .filter_map(|d| {
            let source = d.source.as_ref()?;
            Some(Marker {
                line: source.line,
                column: source.column,
                severity: match d.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                    Severity::Info => "info",
                },
                message: &d.message,
            })
        })
        .collect();
    serde_json::to_string(&markers).unwrap_or_else(|_| "[]".to_owned())
}

/// Props of [`Editor`].
#[derive(Properties, Clone, PartialEq)]
pub(crate) struct EditorProps {
    /// The text.
    pub(crate) text: Shared<String>,
    /// Changes when `text` was replaced from outside the editor.
    pub(crate) revision: u64,
    /// The report whose diagnostics become markers.
    pub(crate) report: Shared<Report>,
    /// Dark theme.
    pub(crate) dark: bool,
    /// Read-only (embed view).
    pub(crate) read_only: bool,
    /// Cursor jump request (line, column, nonce).
    pub(crate) jump: Option<(u32, u32, u64)>,
    /// Called with what typing changed, in a task after the frame that shows it.
    pub(crate) on_change: Callback<Change>,
}

/// The editor component.
#[component]
pub(crate) fn Editor(props: &EditorProps) -> Html {
    let host = use_node_ref();
    let handle: Rc<RefCell<Option<JsValue>>> = use_mut_ref(|| None);

    {
        let host = host.clone();
        let handle = handle.clone();
        let text = props.text.clone();
        let (dark, read_only, on_change) = (props.dark, props.read_only, props.on_change.clone());
        let editor = handle.clone();
        use_effect_with((), move |_| {
            if let Some(element) = host.cast::<web_sys::HtmlElement>() {
                let closure =
                    Closure::<dyn Fn(String, String)>::new(move |kind: String, payload: String| {
                        let change = match kind.as_str() {
                            "edits" => match serde_json::from_str(&payload) {
                                Ok(edits) => Change::Edits(edits),
                                // editor.js writes them, so this would be a bug there: the
                                // whole text then, never a guess.
                                Err(_) => match editor.borrow().as_ref() {
                                    Some(h) => Change::Text(get_text(h)),
                                    None => return,
                                },
                            },
                            _ => Change::Text(payload),
                        };
                        on_change.emit(change);
                    });
                let created = create_editor(&element, &text, dark, read_only, &closure);
                // The editor lives as long as the page; so does its change listener.
                closure.forget();
                *handle.borrow_mut() = Some(created);
            }
        });
    }
    {
        let handle = handle.clone();
        let text = props.text.clone();
        use_effect_with(props.revision, move |_| {
            if let Some(h) = handle.borrow().as_ref() {
                set_text(h, &text);
            }
        });
    }
    {
        let handle = handle.clone();
        use_effect_with(props.report.clone(), move |report| {
            if let Some(h) = handle.borrow().as_ref() {
                set_diagnostics(h, &markers_json(report));
            }
        });
    }
    {
        let handle = handle.clone();
        use_effect_with(props.dark, move |dark| {
            if let Some(h) = handle.borrow().as_ref() {
                set_dark(h, *dark);
            }
        });
    }
    {
        let handle = handle.clone();
        use_effect_with(props.jump, move |jump| {
            if let (Some(h), Some((line, column, _))) = (handle.borrow().as_ref(), jump) {
                jump_to(h, *line, *column);
            }
        });
    }
    html! { <div class="editor" ref={host}></div> }
}
