//! The result panels below (or beside) the editor, and the profile bar above them.

pub(crate) mod allocations;
pub(crate) mod compare;
pub(crate) mod diagnostics;
pub(crate) mod profile_bar;
pub(crate) mod rules;
pub(crate) mod trace;

use yew::prelude::*;

/// The button under a list drawn `page` items at a time, of which `shown` are drawn: it draws
/// `page` more. `label` says how many (each panel counts its own kind).
pub(crate) fn show_more(
    id: &str,
    shown: &UseStateHandle<usize>,
    page: usize,
    label: String,
) -> Html {
    let onclick = {
        let shown = shown.clone();
        Callback::from(move |_: MouseEvent| shown.set(*shown + page))
    };
    html! { <button id={id.to_owned()} {onclick}>{label}</button> }
}
