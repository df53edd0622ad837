//! Profile bar: Kubernetes version, the gates that matter, service CIDRs, NodePort range, seed,
//! node and proxy mode. Every change is written into the scenario text (see
//! `profile_document`), never kept beside it.

use svclab_core::{NEWEST_MINOR, OLDEST_MINOR, ProfileSummary};
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use crate::state::ProfileChange;

/// Props of [`ProfileBar`].
#[derive(Properties, Clone, PartialEq)]
pub(crate) struct ProfileBarProps {
    /// The profile in force.
    pub(crate) profile: ProfileSummary,
    /// Names of the scenario's Nodes.
    pub(crate) nodes: Vec<String>,
    /// The node kube-proxy renders for.
    pub(crate) node: String,
    /// `iptables` or `nftables`.
    pub(crate) proxy_mode: String,
    /// Called with each change.
    pub(crate) on_change: Callback<ProfileChange>,
}

/// Minor version of `1.24` / `1.24.3`.
fn minor_of(version: &str) -> u32 {
    version.split('.').nth(1).and_then(|m| m.parse().ok()).unwrap_or(NEWEST_MINOR)
}

fn on_select(
    on_change: &Callback<ProfileChange>,
    make: fn(String) -> ProfileChange,
) -> Callback<Event> {
    on_change.reform(move |e: Event| make(e.target_unchecked_into::<HtmlSelectElement>().value()))
}

fn on_input(
    on_change: &Callback<ProfileChange>,
    make: fn(String) -> ProfileChange,
) -> Callback<Event> {
    on_change.reform(move |e: Event| make(e.target_unchecked_into::<HtmlInputElement>().value()))
}

/// The bar.
#[component]
pub(crate) fn ProfileBar(props: &ProfileBarProps) -> Html {
    let profile = &props.profile;
    let minor = minor_of(&profile.kubernetes_version);
    let gate = profile.feature_gates.get("ServiceIPStaticSubrange").copied().unwrap_or(true);
    // Alpha in 1.24, beta in 1.25, GA (locked on) from 1.26.
    let gate_locked = minor >= 26;
    let on_gate = props.on_change.reform(|e: Event| {
        ProfileChange::Gate(
            "ServiceIPStaticSubrange".to_owned(),
            e.target_unchecked_into::<HtmlInputElement>().checked(),
        )
    });
    let mut nodes = props.nodes.clone();
    if !props.node.is_empty() && !nodes.contains(&props.node) {
        nodes.push(props.node.clone());
    }
    html! {
        <form class="profile-bar" aria-label="Cluster profile" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
            <label>{"Kubernetes "}
                <select id="profile-version" onchange={on_select(&props.on_change, ProfileChange::Version)}>
                    { for (OLDEST_MINOR..=NEWEST_MINOR).rev().map(|m| html! {
                        <option value={format!("1.{m}")} selected={m == minor}>{format!("1.{m}")}</option>
                    }) }
                </select>
            </label>
            <label class="gate" title={if gate_locked { "GA since 1.26: always on" } else { "KEP-3070 static/dynamic bands (alpha in 1.24, beta in 1.25)" }}>
                <input id="gate-static-subrange" type="checkbox" checked={gate} disabled={gate_locked} onchange={on_gate} />
                {" ServiceIPStaticSubrange"}
                if gate_locked { <small class="locked">{" (GA)"}</small> }
            </label>
            <label>{"Service CIDRs "}
                <input id="profile-cidrs" type="text" size="22" spellcheck="false"
                    value={profile.service_cluster_ip_ranges.join(", ")}
                    onchange={on_input(&props.on_change, ProfileChange::ServiceCidrs)} />
            </label>
            <label>{"NodePorts "}
                <input id="profile-node-ports" type="text" size="11" spellcheck="false"
                    value={profile.service_node_port_range.clone()}
                    onchange={on_input(&props.on_change, ProfileChange::NodePortRange)} />
            </label>
            <label>{"Seed "}
                <input id="profile-seed" type="number" min="0" class="seed" value={profile.seed.to_string()}
                    onchange={on_input(&props.on_change, ProfileChange::Seed)} />
            </label>
            <label>{"Node "}
                <select id="profile-node" onchange={on_select(&props.on_change, ProfileChange::Node)}>
                    <option value="" selected={props.node.is_empty()}>{"(any)"}</option>
                    { for nodes.iter().map(|n| html! { <option value={n.clone()} selected={*n == props.node}>{n.clone()}</option> }) }
                </select>
            </label>
            <label>{"Proxy "}
                <select id="profile-proxy-mode" onchange={on_select(&props.on_change, ProfileChange::ProxyMode)}>
                    { for ["iptables", "nftables"].into_iter().map(|m| html! {
                        <option value={m} selected={props.proxy_mode == m}>{m}</option>
                    }) }
                </select>
            </label>
        </form>
    }
}
