//! Rules panel: the iptables-restore input and the nft transaction kube-proxy would write,
//! side by side, filtered by Service; every chain name links to the chain's definition.

use std::collections::BTreeSet;

use crate::state::Shared;
use svclab_core::Report;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

/// Props of [`RulesPanel`].
#[derive(Properties, Clone, PartialEq)]
pub(crate) struct RulesProps {
    /// The report (its `rules`).
    pub(crate) report: Shared<Report>,
    /// `namespace/name` or empty.
    pub(crate) filter: String,
    /// Called with a new filter.
    pub(crate) on_filter: Callback<String>,
}

/// Chains defined in a ruleset: iptables `:NAME policy [0:0]` lines, nft `chain NAME {` blocks
/// and `add chain <family> <table> NAME` commands.
fn chain_definitions(text: &str) -> BTreeSet<String> {
    let mut chains = BTreeSet::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        let words: Vec<&str> = trimmed.split_whitespace().collect();
        if let Some(rest) = trimmed.strip_prefix(':') {
            if let Some(name) = rest.split_whitespace().next() {
                chains.insert(name.to_owned());
            }
        } else if words.first() == Some(&"chain") && words.len() >= 2 {
            chains.insert(words[1].to_owned());
        } else if words.len() >= 5 && words[0] == "add" && words[1] == "chain" {
            chains.insert(words[4].to_owned());
        }
    }
    chains
}

/// Which chain a line defines, if it is a definition.
fn defines(line: &str, chains: &BTreeSet<String>) -> Option<String> {
    let trimmed = line.trim_start();
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    let name = if let Some(rest) = trimmed.strip_prefix(':') {
        rest.split_whitespace().next()
    } else if words.first() == Some(&"chain") {
        words.get(1).copied()
    } else if words.len() >= 5 && words[0] == "add" && words[1] == "chain" {
        words.get(4).copied()
    } else {
        None
    }?;
    chains.contains(name).then(|| name.to_owned())
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

fn render_line(line: &str, mode: &'static str, chains: &BTreeSet<String>) -> Html {
    let definition = defines(line, chains);
    let mut parts: Vec<Html> = Vec::new();
    for (i, word) in line.split(' ').enumerate() {
        if i > 0 {
            parts.push(html! { {" "} });
        }
        let bare =
            word.trim_matches(|c: char| c == '"' || c == ',' || c == ';' || c == '{' || c == '}');
        if chains.contains(bare) && definition.as_deref() != Some(bare) {
            let target = element_id(mode, bare);
            let onclick = Callback::from(move |e: MouseEvent| {
                e.prevent_default();
                scroll_to(&target);
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
fn filtered<'a>(text: &'a str, filter: &str) -> Vec<&'a str> {
    if filter.is_empty() {
        return text.lines().collect();
    }
    text.lines()
        .filter(|l| {
            let t = l.trim_start();
            l.contains(filter)
                || t.starts_with('*')
                || t == "COMMIT"
                || t.starts_with("table ")
                || t.starts_with("add table")
                || t == "}"
        })
        .collect()
}

fn ruleset(title: &str, mode: &'static str, text: &str, filter: &str) -> Html {
    if text.is_empty() && mode == "nftables" {
        // The report leaves the nftables ruleset out where kube-proxy would refuse the mode
        // (pkg/proxy/apis/config/validation/validation.go `validateProxyModeLinux`).
        return html! {
            <section class="ruleset" aria-label={title.to_owned()}>
                <h3>{title.to_owned()}</h3>
                <p class="note" id="ruleset-nftables-refused" role="status">
                    {"kube-proxy at this release refuses --proxy-mode nftables: the mode is new in 1.29 and needs kube-proxy's NFTablesProxyMode feature gate in 1.29 and 1.30."}
                </p>
            </section>
        };
    }
    let chains = chain_definitions(text);
    let lines = filtered(text, filter);
    html! {
        <section class="ruleset" aria-label={title.to_owned()}>
            <h3>{title.to_owned()}</h3>
            <pre id={format!("ruleset-{mode}")}>{ for lines.iter().map(|l| render_line(l, mode, &chains)) }</pre>
        </section>
    }
}

/// The panel.
#[component]
pub(crate) fn RulesPanel(props: &RulesProps) -> Html {
    let Some(rules) = props.report.rules.as_ref() else {
        return html! {
            <div class="unavailable" id="rules-unavailable" role="status">
                <p><strong>{"Rules are not available yet."}</strong></p>
                <p>{"This build of the engine does not render kube-proxy rules; allocation and validation results are complete."}</p>
            </div>
        };
    };
    let mut services: Vec<String> =
        props.report.services.iter().map(|s| format!("{}/{}", s.namespace, s.name)).collect();
    services.sort();
    services.dedup();
    let on_filter =
        props.on_filter.reform(|e: Event| e.target_unchecked_into::<HtmlSelectElement>().value());
    let wrap = use_state(|| false);
    let on_wrap = {
        let wrap = wrap.clone();
        Callback::from(move |e: Event| {
            wrap.set(e.target_unchecked_into::<web_sys::HtmlInputElement>().checked())
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
                    <select id="rules-filter" onchange={on_filter}>
                        <option value="" selected={props.filter.is_empty()}>{"all Services"}</option>
                        { for services.iter().map(|s| html! { <option value={s.clone()} selected={*s == props.filter}>{s.clone()}</option> }) }
                    </select>
                </label>
                <label><input id="rules-wrap" type="checkbox" checked={*wrap} onchange={on_wrap} />{" wrap long lines"}</label>
            </div>
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
                { ruleset("iptables (iptables-restore input)", "iptables", &rules.iptables, &props.filter) }
                { ruleset("nftables (nft -f input)", "nftables", &rules.nftables, &props.filter) }
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expected: &[&str]) {
        let chains = chain_definitions(text);
        assert_eq!(chains.iter().map(String::as_str).collect::<Vec<_>>(), expected);
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
}
