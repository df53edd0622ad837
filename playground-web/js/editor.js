// The playground's CodeMirror 6 editor and the few browser calls the Rust app makes through
// wasm-bindgen (`#[wasm_bindgen(module = "/js/editor.js")]` in src/editor.rs).
//
// `cargo xtask playground` bundles this file with esbuild into one ES module and puts the bundle
// where wasm-bindgen placed this snippet, so the page loads nothing from other origins.

import { basicSetup } from "codemirror";
import { EditorView, keymap } from "@codemirror/view";
import { EditorState, Compartment } from "@codemirror/state";
import { indentWithTab } from "@codemirror/commands";
import { yaml } from "@codemirror/lang-yaml";
import { lintGutter, setDiagnostics as setLintDiagnostics } from "@codemirror/lint";
import { oneDark } from "@codemirror/theme-one-dark";

const lightTheme = EditorView.theme({}, { dark: false });

/// The most text an edit hands over as edits; past it (a paste of a cluster) the whole text goes.
const MAX_EDITS_TEXT = 65536;

/// Past these, the editor does not highlight YAML: its parser, run over a cluster-sized text,
/// takes tens of milliseconds of every keystroke and fills the page's idle time for seconds
/// after a paste. VS Code's own large-file line (`editor.largeFileOptimizations`: 20 MB or
/// 300,000 lines: `TextModel.LARGE_FILE_SIZE_THRESHOLD` and `LARGE_FILE_LINE_COUNT_THRESHOLD`,
/// which set `_isTooLargeForTokenization` in src/vs/editor/common/model/textModel.ts) turns its
/// tokenizer off the same way; a 10,000-Service dump with slices is 470,000 lines.
const LARGE_FILE_BYTES = 20 * 1024 * 1024;
const LARGE_FILE_LINES = 300000;

/// Whether `doc` (a CodeMirror Text) is large enough to go without highlighting.
const isLarge = (doc) => doc.lines > LARGE_FILE_LINES || doc.length > LARGE_FILE_BYTES;

/// Creates an editor in `parent`; `onChange(kind, payload)` is called after user edits:
/// `("edits", json)` with what changed since the text the app last had, `[[from, to, inserted],
/// ...]` in UTF-16 offsets of that text, ascending and apart (a 10 MB text is then not copied
/// into the app on every key), or `("text", text)` when the edits would be larger than the text
/// is worth copying.
///
/// When: in a task after the frame that shows the change (the changes of one frame go
/// together), with no debounce: the app evaluates in short steps that leave the page
/// responsive, and changes made while it evaluates wait there and go together.
export function createEditor(parent, text, dark, readOnly, onChange) {
  const theme = new Compartment();
  const editable = new Compartment();
  const language = new Compartment();
  // Whether a flush is asked for.
  let scheduled = false;
  let silent = false;
  // The changes since the text the app last had (a ChangeSet), or null.
  let pending = null;
  const flush = () => {
    scheduled = false;
    const changes = pending;
    pending = null;
    if (changes === null) return;
    const edits = [];
    let inserted = 0;
    changes.iterChanges((fromA, toA, _fromB, _toB, text) => {
      inserted += text.length;
      edits.push([fromA, toA, text.toString()]);
    });
    if (inserted > MAX_EDITS_TEXT) onChange("text", view.state.doc.toString());
    else onChange("edits", JSON.stringify(edits));
  };
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: text,
      extensions: [
        basicSetup,
        // Tab indents inside the editor; Escape then Tab leaves it (CodeMirror's
        // documented keyboard escape hatch), so the page stays keyboard usable.
        keymap.of([indentWithTab]),
        // Highlighting is switched on below, once the text's size is known.
        language.of([]),
        EditorView.lineWrapping,
        lintGutter(),
        theme.of(dark ? oneDark : lightTheme),
        editable.of([EditorState.readOnly.of(readOnly), EditorView.editable.of(!readOnly)]),
        EditorView.contentAttributes.of({ "aria-label": "Scenario (Kubernetes YAML)" }),
        EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          const large = isLarge(update.state.doc);
          if (large !== isLarge(update.startState.doc)) {
            // Not inside this update's dispatch.
            queueMicrotask(() => update.view.dispatch({ effects: language.reconfigure(large ? [] : yaml()) }));
          }
          if (silent) {
            // The app set this text: what was typed before it is replaced, not pending.
            pending = null;
            return;
          }
          pending = pending === null ? update.changes : pending.compose(update.changes);
          if (!scheduled) {
            scheduled = true;
            // After the frame that shows the change: typing is painted before any evaluation.
            requestAnimationFrame(() => setTimeout(flush, 0));
          }
        }),
      ],
    }),
  });
  if (!isLarge(view.state.doc)) view.dispatch({ effects: language.reconfigure(yaml()) });
  return { view, theme, editable, setSilent: (v) => { silent = v; } };
}

/// The editor's text.
export function getText(handle) {
  return handle.view.state.doc.toString();
}

/// Replaces the whole text without calling `onChange` (the app already knows it).
export function setText(handle, text) {
  const view = handle.view;
  if (view.state.doc.toString() === text) return;
  handle.setSilent(true);
  try {
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
  } finally {
    handle.setSilent(false);
  }
}

/// Shows lint markers. `json` is `[{line, column, severity, message}]`, 1-based.
export function setDiagnostics(handle, json) {
  const view = handle.view;
  const doc = view.state.doc;
  const items = JSON.parse(json);
  const diagnostics = [];
  for (const d of items) {
    if (!(d.line >= 1)) continue;
    const line = doc.line(Math.min(d.line, doc.lines));
    let from = Math.min(line.from + Math.max(d.column, 1) - 1, line.to);
    let to = line.to;
    if (from === to) {
      from = line.from;
    }
    diagnostics.push({ from, to, severity: d.severity, message: d.message, source: "svclab" });
  }
  view.dispatch(setLintDiagnostics(view.state, diagnostics));
}

/// Moves the cursor to a 1-based line and column, scrolls there and focuses the editor.
export function jumpTo(handle, lineNumber, column) {
  const view = handle.view;
  const doc = view.state.doc;
  const line = doc.line(Math.max(1, Math.min(lineNumber, doc.lines)));
  const pos = Math.min(line.from + Math.max(column, 1) - 1, line.to);
  view.dispatch({ selection: { anchor: pos }, effects: EditorView.scrollIntoView(pos, { y: "center" }) });
  view.focus();
}

/// Switches between the light and the One Dark theme.
export function setDark(handle, dark) {
  handle.view.dispatch({ effects: handle.theme.reconfigure(dark ? oneDark : lightTheme) });
}

/// Copies text to the clipboard; resolves to true when it worked.
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch (_) {
    const area = document.createElement("textarea");
    area.value = text;
    document.body.appendChild(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok;
  }
}

/// Saves text as a file through a temporary object URL (never leaves the page).
export function downloadText(fileName, text, mime) {
  const url = URL.createObjectURL(new Blob([text], { type: mime }));
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/// Whether the system prefers a dark colour scheme.
export function systemPrefersDark() {
  return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
}

/// Calls `callback(dark)` whenever the system colour scheme changes.
export function onSystemThemeChange(callback) {
  if (!window.matchMedia) return;
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", (e) => callback(e.matches));
}
