//! svclab's browser playground: paste manifests, see allocations, errors, rules and packet
//! paths, compare with another release, share a link. A yew (csr) app that links `svclab-core`
//! directly; `cargo xtask playground` builds it into a static site.

mod app;
mod compare;
mod editor;
mod examples;
mod export;
mod panels;
mod profile_document;
mod proxy_view;
mod share;
mod state;

fn main() {
    yew::Renderer::<app::App>::new().render();
}
