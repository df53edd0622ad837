//! Rules panel: the iptables-restore input and the nft transaction kube-proxy would write,
//! side by side, filtered by Service; every chain name links to the chain's definition.

use std::collections::BTreeSet;
use std::hash::{Hash as _, Hasher as _};

use crate::proxy_view::{RulesIndex, defined};
use crate::state::Shared;
use svclab_core::Report;
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// Props of [`RulesPanel`].
#[derive(Properties, Clone, PartialEq)]
pub(crate) struct RulesProps {
    /// The report (its `rules`).
    pub(crate) report: Shared<Report>,
    /// What the panel reads off its rulesets.
    pub(crate) index: Shared<RulesIndex>,
    /// The rulesets of the text are being rendered (a cluster's take a while): the report's,
    /// if it has any, are of an earlier text.
    pub(crate) rendering: bool,
    /// `namespace/name` or empty.
    pub(crate) filter: String,
    /// Called with a new filter.
    pub(crate) on_filter: Callback<String>,
}

/// Which chain a line defines, if it is a definition of one of `chains`.
fn defines(line: &str, chains: &BTreeSet<String>) -> Option<String> {
    defined(line).filter(|name| chains.contains(*name)).map(str::to_owned)
}

fn element_id(mode: &str, chain: &str) -> String {
    format!("rules-{mode}-{chain}")
}

fn scroll_to(id: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else { return };
    if let Some(element) = document.get_element_by_id(id) {
        element.scroll_into_view();
        if let Some(html) = wasm_bindgen::JsCast::dyn_ref::<web_sys::HtmlElement>(&element) {
            let _ = html.focus();
        }
    }
}

fn render_line(
    line: &str,
    mode: &'static str,
    chains: &BTreeSet<String>,
    go_to: &Callback<String>,
) -> Html {
    let definition = defines(line, chains);
    let mut parts: Vec<Html> = Vec::new();
    for (i, word) in line.split(' ').enumerate() {
        if i > 0 {
            parts.push(html! { {" "} });
        }
        let bare =
            word.trim_matches(|c: char| c == '"' || c == ',' || c == ';' || c == '{' || c == '}');
        if chains.contains(bare) && definition.as_deref() != Some(bare) {
            let (go_to, chain) = (go_to.clone(), bare.to_owned());
            let onclick = Callback::from(move |e: MouseEvent| {
                e.prevent_default();
                go_to.emit(chain.clone());
            });
            parts.push(html! { <a href="" class="chain-link" {onclick}>{word.to_owned()}</a> });
        } else {
            parts.push(html! { {word.to_owned()} });
        }
    }
    match definition {
        Some(chain) => {
            html! { <div class="rule def" id={element_id(mode, &chain)} tabindex="-1">{ for parts }</div> }
        }
        None => html! { <div class="rule">{ for parts }</div> },
    }
}

/// Lines about a Service (their comment names it) plus the lines that give them context.
fn filtered<'a>(text: &'a str, filter: &'a str) -> impl Iterator<Item = &'a str> {
    text.lines().filter(move |l| {
        let t = l.trim_start();
        filter.is_empty()
            || l.contains(filter)
            || t.starts_with('*')
            || t == "COMMIT"
            || t.starts_with("table ")
            || t.starts_with("add table")
            || t == "}"
    })
}

/// Lines of a ruleset drawn at first, and added by each "show more": a cluster's rulesets are
/// hundreds of thousands of lines, each a row of the page with a node per word, and every
/// result redraws them; a window shows about fifty.
const LINES_PAGE: usize = 500;

/// How many lines to draw, in whole pages, for the definition of `chain` to be among them;
/// `None` when it is among the `shown` ones already, or nowhere.
fn lines_to_draw<'a>(
    mut lines: impl Iterator<Item = &'a str>,
    chain: &str,
    shown: usize,
) -> Option<usize> {
    let at = lines.position(|line| defined(line) == Some(chain))?;
    (at >= shown).then(|| (at / LINES_PAGE + 1) * LINES_PAGE)
}

/// The report's ruleset of `mode` (`iptables` or `nftables`), when it carries the rulesets.
fn ruleset_text<'a>(report: &'a Report, mode: &str) -> Option<&'a str> {
    let rules = report.rules.as_ref()?;
    Some(if mode == "nftables" { &rules.nftables } else { &rules.iptables })
}

/// Props of [`Ruleset`].
#[derive(Properties, Clone, PartialEq)]
struct RulesetProps {
    title: &'static str,
    /// `iptables` or `nftables`: which of the report's rulesets.
    mode: &'static str,
    report: Shared<Report>,
    index: Shared<RulesIndex>,
    filter: String,
}

/// One ruleset, [`LINES_PAGE`] lines at a time; a link to a chain defined further down draws
/// the lines up to its definition, then goes there.
#[component]
fn Ruleset(props: &RulesetProps) -> Html {
    let shown = use_state(|| LINES_PAGE);
    // The chain definition to go to once it is drawn.
    let target = use_state(|| None::<String>);
    use_effect_with((*target).clone(), |target| {
        if let Some(id) = target {
            scroll_to(id);
        }
    });
    let (title, mode) = (props.title, props.mode);
    // The lines a filter leaves, counted once per report and filter (all of them are in the
    // index).
    let counted =
        use_memo((props.report.clone(), props.filter.clone()), move |(report, filter)| {
            let text = ruleset_text(report, mode).unwrap_or_default();
            if filter.is_empty() { 0 } else { filtered(text, filter).count() }
        });
    let index = props.index.of_mode(mode);
    let chains = &index.chains;
    let total = if props.filter.is_empty() { index.lines } else { *counted };
    let Some(text) = ruleset_text(&props.report, mode) else { return Html::default() };
    if text.is_empty() && mode == "nftables" {
        // The report leaves the nftables ruleset out where kube-proxy would refuse the mode
        // (pkg/proxy/apis/config/validation/validation.go `validateProxyModeLinux`).
        return html! {
            <section class="ruleset" aria-label={title}>
                <h3>{title}</h3>
                <p class="note" id="ruleset-nftables-refused" role="status">
                    {"kube-proxy at this release refuses --proxy-mode nftables: the mode is new in 1.29 and needs kube-proxy's NFTablesProxyMode feature gate in 1.29 and 1.30."}
                </p>
            </section>
        };
    }
    let go_to = {
        let (report, filter) = (props.report.clone(), props.filter.clone());
        let (shown, target) = (shown.clone(), target.clone());
        Callback::from(move |chain: String| {
            let Some(text) = ruleset_text(&report, mode) else { return };
            let id = element_id(mode, &chain);
            match lines_to_draw(filtered(text, &filter), &chain, *shown) {
                Some(lines) => {
                    shown.set(lines);
                    target.set(Some(id));
                }
                None => scroll_to(&id),
            }
        })
    };
    html! {
        <section class="ruleset" aria-label={title}>
            <h3>{title}</h3>
            <pre id={format!("ruleset-{mode}")}>
                { for filtered(text, &props.filter).take(*shown).map(|l| render_line(l, mode, chains, &go_to)) }
            </pre>
            if total > *shown {
                { super::show_more(&format!("ruleset-{mode}-more"), &shown, LINES_PAGE,
                    format!("Show {} more lines ({} of {total} shown)", LINES_PAGE.min(total - *shown), *shown)) }
            }
        </section>
    }
}

/// The panel.
#[component]
pub(crate) fn RulesPanel(props: &RulesProps) -> Html {
    let wrap = use_state(|| false);
    // The filter's choices, once per report.
    // The filter's suggestions, made once the field is first focused, and again only when the
    // Services' names change (a cluster has ten thousand, and typing rarely renames one). A
    // search field with a datalist rather than a select: a select's ten thousand options made
    // two tasks of over 250 ms when the panel opened (65-80 ms with a hundred).
    let names = {
        let mut hasher = std::hash::DefaultHasher::new();
        for s in &props.report.services {
            (s.namespace.as_str(), s.name.as_str()).hash(&mut hasher);
        }
        hasher.finish()
    };
    let suggest = use_state(|| false);
    let report = props.report.clone();
    let suggestions = use_memo((names, *suggest), move |&(_, suggest)| {
        if !suggest {
            return Html::default();
        }
        let mut services: Vec<String> =
            report.services.iter().map(|s| format!("{}/{}", s.namespace, s.name)).collect();
        services.sort();
        services.dedup();
        html! { { for services.into_iter().map(|s| html! { <option value={s} /> }) } }
    });
    if props.rendering && props.report.rules.is_none() {
        return html! {
            <div class="unavailable" id="rules-rendering" role="status">
                <p><strong>{"Rendering the rulesets…"}</strong></p>
                <p>{"Both kube-proxy rulesets of a cluster-sized scenario take a moment; the other panels are up to date."}</p>
            </div>
        };
    }
    let Some(rules) = props.report.rules.as_ref() else {
        return html! {
            <div class="unavailable" id="rules-unavailable" role="status">
                <p><strong>{"Rules are not available yet."}</strong></p>
                <p>{"This build of the engine does not render kube-proxy rules; allocation and validation results are complete."}</p>
            </div>
        };
    };
    // On a committed value (Enter, leaving the field, a suggestion picked), not on every key:
    // a filter reads the whole text.
    let on_filter =
        props.on_filter.reform(|e: Event| e.target_unchecked_into::<HtmlInputElement>().value());
    let on_wrap = {
        let wrap = wrap.clone();
        Callback::from(move |e: Event| {
            wrap.set(e.target_unchecked_into::<HtmlInputElement>().checked())
        })
    };
    let figures = &rules.figures;
    let counts = |map: &std::collections::BTreeMap<String, u64>, prefix: &str| {
        map.iter()
            .filter(|(k, _)| k.starts_with("nftables-") != prefix.is_empty())
            .map(|(k, v)| format!("{} {v}", k.trim_start_matches(prefix)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    html! {
        <div class={classes!("rules", wrap.then_some("wrap"))}>
            <div class="rules-bar">
                <label>{"Service "}
                    <input id="rules-filter" type="search" list="rules-services"
                        placeholder="all Services (namespace/name)" value={props.filter.clone()}
                        onchange={on_filter} onfocus={move |_| suggest.set(true)} />
                    <datalist id="rules-services">{ (*suggestions).clone() }</datalist>
                </label>
                <label><input id="rules-wrap" type="checkbox" checked={*wrap} onchange={on_wrap} />{" wrap long lines"}</label>
            </div>
            if props.rendering {
                <p class="note" id="rules-updating" role="status">
                    {"Rendering the rulesets of the last edit; these are of the text before it."}
                </p>
            }
            <p class="note figures" id="rules-figures">
                {format!(
                    "{} service ports · {} endpoints · iptables rules: {} (chains: {}) · {} · sync_proxy_rules_no_local_endpoints_total: internal {}, external {}",
                    figures.service_ports,
                    figures.endpoints,
                    counts(&figures.rules, ""),
                    counts(&figures.chains, ""),
                    if rules.nftables.is_empty() {
                        "no nftables rules at this release".to_owned()
                    } else {
                        format!(
                            "nftables rules: {} (chains: {})",
                            counts(&figures.rules, "nftables-"),
                            counts(&figures.chains, "nftables-"),
                        )
                    },
                    figures.no_local_endpoints_internal,
                    figures.no_local_endpoints_external,
                )}
            </p>
            <div class="side-by-side">
                <Ruleset title="iptables (iptables-restore input)" mode="iptables"
                    report={props.report.clone()} index={props.index.clone()}
                    filter={props.filter.clone()} />
                <Ruleset title="nftables (nft -f input)" mode="nftables"
                    report={props.report.clone()} index={props.index.clone()}
                    filter={props.filter.clone()} />
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expected: &[&str]) {
        let mut index = crate::proxy_view::RulesetIndex::default();
        assert!(!index.read(text.lines(), usize::MAX));
        assert_eq!(index.chains.iter().map(String::as_str).collect::<Vec<_>>(), expected);
        assert_eq!(index.lines, text.lines().count());
    }

    #[test]
    fn finds_chain_definitions_of_both_formats() {
        check(
            "*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-ABC - [0:0]\n-A KUBE-SERVICES -j KUBE-SVC-ABC\nCOMMIT\n",
            &["KUBE-SERVICES", "KUBE-SVC-ABC"],
        );
        check(
            "table ip kube-proxy {\n\tchain services {\n\t}\n}\nadd chain ip kube-proxy service-X\n",
            &["service-X", "services"],
        );
    }

    #[test]
    fn a_link_past_the_drawn_lines_draws_whole_pages_up_to_the_definition() {
        let mut lines = vec!["-A KUBE-SERVICES -j KUBE-SVC-ABC"; 2 * LINES_PAGE];
        lines.push(":KUBE-SVC-ABC - [0:0]");
        let draw = |chain: &str, shown: usize| lines_to_draw(lines.iter().copied(), chain, shown);
        assert_eq!(draw("KUBE-SVC-ABC", LINES_PAGE), Some(3 * LINES_PAGE));
        assert_eq!(draw("KUBE-SVC-ABC", 3 * LINES_PAGE), None, "drawn already");
        assert_eq!(draw("KUBE-SVC-XYZ", LINES_PAGE), None, "defined nowhere");
    }
}
