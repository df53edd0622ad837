//! The playground's state: one [`Reducible`] with an [`Action`] enum. Every change of the
//! scenario text re-runs the core pipeline here, so the panels only read.

use std::rc::Rc;
use std::sync::Arc;

use svclab_core::{Input, Report, World};
use wasm_bindgen::JsCast as _;
use wasm_bindgen::prelude::Closure;
use yew::Reducible;

use crate::compare::{self, Compared};
use crate::profile_document::{self, CLUSTER_PROFILE, KUBE_PROXY_CONFIGURATION};
use crate::proxy_view::{self, RulesIndex, TraceOutcome};
use crate::share::{SharedCompare, SharedState, SharedTrace};

/// Name given to the editor text in diagnostics.
pub(crate) const SCENARIO_NAME: &str = "scenario.yaml";

/// Services and EndpointSlices up to which the rulesets are rendered with the result, in its
/// task, rather than in steps after it: a few milliseconds of rendering, less than the frame
/// the panel would otherwise show the last text's rulesets for.
const RULES_AT_ONCE: usize = 1_000;

mod evaluation;

pub(crate) use evaluation::{Evaluated, RulesRendered, on_evaluated};

/// The panels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tab {
    /// Errors and warnings.
    Diagnostics,
    /// Allocation table and range maps.
    Allocations,
    /// iptables and nftables rulesets.
    Rules,
    /// Packet trace.
    Trace,
    /// The scenario against another release, kube-proxy mode or ranges (`svclab upgrade`).
    Compare,
}

impl Tab {
    /// Every tab in display order.
    pub(crate) const ALL: [Tab; 5] =
        [Tab::Diagnostics, Tab::Allocations, Tab::Rules, Tab::Trace, Tab::Compare];

    /// Identifier used in share links and element ids.
    pub(crate) fn id(self) -> &'static str {
        match self {
            Tab::Diagnostics => "diagnostics",
            Tab::Allocations => "allocations",
            Tab::Rules => "rules",
            Tab::Trace => "trace",
            Tab::Compare => "compare",
        }
    }

    /// Label of the tab.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Tab::Diagnostics => "Diagnostics",
            Tab::Allocations => "Allocations",
            Tab::Rules => "Rules",
            Tab::Trace => "Trace",
            Tab::Compare => "Compare",
        }
    }

    fn from_id(id: &str) -> Option<Tab> {
        Tab::ALL.into_iter().find(|t| t.id() == id)
    }
}

/// A change the profile bar makes to the scenario text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProfileChange {
    /// `kubernetesVersion`.
    Version(String),
    /// One apiserver feature gate.
    Gate(String, bool),
    /// `serviceClusterIPRanges`, comma separated.
    ServiceCidrs(String),
    /// `serviceNodePortRange`.
    NodePortRange(String),
    /// `seed`.
    Seed(String),
    /// KubeProxyConfiguration `hostnameOverride`.
    Node(String),
    /// KubeProxyConfiguration `mode`.
    ProxyMode(String),
}

/// What one evaluation gave (its report, the text it read), shared by the panels: equal only to
/// itself, the same `Arc` (the text is the core session's own), because yew compares props on
/// every render and a deep comparison of a cluster-sized report, which differs from the last
/// one in one Service, walks half of it.
#[derive(Debug)]
pub(crate) struct Shared<T: ?Sized>(Arc<T>);

impl<T: ?Sized> Shared<T> {
    pub(crate) fn new(value: impl Into<Arc<T>>) -> Self {
        Shared(value.into())
    }
}

impl<T: ?Sized> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T: ?Sized> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<T: ?Sized> std::ops::Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// What typing changed, as the editor hands it over.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Change {
    /// The whole new text.
    Text(String),
    /// Replacements of the text the state holds, in its UTF-16 offsets (the editor's), each
    /// `(from, to, inserted)`, ascending and apart.
    Edits(Vec<(usize, usize, String)>),
}

/// Everything the page shows.
#[derive(Clone)]
pub(crate) struct State {
    /// The editor text.
    pub(crate) scenario: Shared<String>,
    /// Bumped when the text changes from outside the editor (examples, profile bar, links).
    pub(crate) revision: u64,
    /// The pipeline's report for `scenario`; its rulesets only once [`State::rules_computed`].
    pub(crate) report: Shared<Report>,
    /// The last report that carries the rulesets, and what the panel reads off them: `report`
    /// itself once they are rendered ([`State::rules_computed`]); while the Rules panel is
    /// open, an earlier one until then (the panel shows its rulesets, of an earlier text, and
    /// says so).
    pub(crate) rules_report: Option<(Shared<Report>, Shared<RulesIndex>)>,
    /// The cluster state behind the report (for rules and traces).
    pub(crate) world: Rc<World>,
    /// Milliseconds the last evaluation took (0 when no clock).
    pub(crate) eval_ms: f64,
    /// Number of evaluations so far.
    pub(crate) evaluations: u64,
    /// The open panel.
    pub(crate) tab: Tab,
    /// Dark theme on.
    pub(crate) dark: bool,
    /// `?embed`: read-only compact view.
    pub(crate) embed: bool,
    /// A message above the panels (e.g. a malformed share link).
    pub(crate) notice: Option<String>,
    /// Rules panel filter (`namespace/name`, empty for all).
    pub(crate) rules_filter: String,
    /// The Trace panel's packet.
    pub(crate) trace: SharedTrace,
    /// The last trace.
    pub(crate) trace_outcome: Option<Rc<TraceOutcome>>,
    /// The Compare panel's target.
    pub(crate) compare: SharedCompare,
    /// The last rehearsal, or why there is none.
    pub(crate) compare_outcome: Option<Rc<Result<Compared, String>>>,
    /// Editor jump request: (line, column, nonce).
    pub(crate) jump: Option<(u32, u32, u64)>,
}

impl PartialEq for State {
    fn eq(&self, other: &Self) -> bool {
        self.scenario == other.scenario
            && self.revision == other.revision
            && self.evaluations == other.evaluations
            && self.report == other.report
            && self.rules_report == other.rules_report
            && self.tab == other.tab
            && self.dark == other.dark
            && self.notice == other.notice
            && self.rules_filter == other.rules_filter
            && self.trace == other.trace
            && self.compare == other.compare
            && self.compare_outcome.as_ref().map(Rc::as_ptr)
                == other.compare_outcome.as_ref().map(Rc::as_ptr)
            && self.jump == other.jump
    }
}

/// What can happen.
pub(crate) enum Action {
    /// The user edited the text (the editor's changes since it last said).
    Edited(Change),
    /// An evaluation of the text is done.
    Evaluated(Evaluated),
    /// The rulesets of an evaluation's cluster state are rendered.
    RulesRendered(RulesRendered),
    /// Open an example.
    LoadExample(String),
    /// A profile bar control changed.
    Profile(ProfileChange),
    /// Open a panel.
    SetTab(Tab),
    /// Switch light/dark.
    ToggleTheme,
    /// The system colour scheme changed (dark or not).
    SystemTheme(bool),
    /// Show or clear the notice.
    Notice(Option<String>),
    /// Rules panel filter.
    SetRulesFilter(String),
    /// Trace form changed.
    SetTrace(SharedTrace),
    /// Run the trace.
    RunTrace,
    /// Compare form changed: rehearse again.
    SetCompare(SharedCompare),
    /// Rehearse the upgrade again.
    RunCompare,
    /// Move the editor cursor to a line and column.
    Jump(u32, u32),
}

impl State {
    /// The first state: a scenario, the panel and options from a share link, theme, embed.
    pub(crate) fn new(
        shared: SharedState,
        dark: bool,
        embed: bool,
        notice: Option<String>,
    ) -> State {
        let tab = Tab::from_id(&shared.tab).unwrap_or(Tab::Allocations);
        let Evaluated { text: scenario, world, report, eval_ms, .. } =
            evaluation::evaluate_now(Change::Text(shared.scenario));
        let mut state = State {
            scenario,
            revision: 0,
            report,
            rules_report: None,
            world,
            eval_ms,
            evaluations: 1,
            tab,
            dark,
            embed,
            notice,
            rules_filter: shared.rules_filter,
            trace: shared.trace.unwrap_or_else(default_trace),
            trace_outcome: None,
            compare: shared.compare.unwrap_or_else(default_compare),
            compare_outcome: None,
            jump: None,
        };
        state.want_rules();
        if state.tab == Tab::Trace {
            state.run_trace();
        }
        if state.tab == Tab::Compare {
            state.run_compare();
        }
        state
    }

    /// What a share link carries.
    pub(crate) fn shared(&self) -> SharedState {
        SharedState {
            scenario: self.scenario.to_string(),
            tab: self.tab.id().to_owned(),
            rules_filter: self.rules_filter.clone(),
            trace: Some(self.trace.clone()),
            compare: Some(self.compare.clone()),
        }
    }

    /// The proxy mode the scenario asks for (`iptables` unless a KubeProxyConfiguration says).
    pub(crate) fn proxy_mode(&self) -> String {
        self.world
            .kube_proxy
            .as_ref()
            .map(|k| k.value.mode.clone())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "iptables".to_owned())
    }

    /// The node kube-proxy renders for (KubeProxyConfiguration `hostnameOverride`).
    pub(crate) fn node(&self) -> String {
        self.world
            .kube_proxy
            .as_ref()
            .map(|k| k.value.hostname_override.clone())
            .unwrap_or_default()
    }

    /// Whether `report` carries the rulesets (or `None` because there are none): they are
    /// rendered for the Rules panel, a download or an export, not on every edit (both modes of
    /// a 10,000-Service cluster are tens of megabytes).
    pub(crate) fn rules_computed(&self) -> bool {
        self.rules_report.as_ref().is_some_and(|(report, _)| *report == self.report)
    }

    /// Has the rulesets rendered when the Rules panel is open and the report does not carry
    /// them yet: at once outside the browser, in steps in it ([`Action::RulesRendered`]; the
    /// panel says they are being rendered meanwhile).
    fn want_rules(&mut self) {
        if self.tab != Tab::Rules || self.rules_computed() {
            return;
        }
        // A small scenario's take a few milliseconds: at once, as part of the result.
        let world = Rc::clone(&self.world);
        if world.services.len() + world.endpoint_slices.len() <= RULES_AT_ONCE {
            return self.take_rules(RulesRendered::now(world));
        }
        if let Some(rendered) = evaluation::render_rules(world) {
            self.take_rules(rendered);
        }
    }

    /// Puts rulesets into the report, if they are of the cluster state it shows.
    fn take_rules(&mut self, rendered: RulesRendered) {
        if self.rules_computed() || !Rc::ptr_eq(&self.world, &rendered.world) {
            return;
        }
        let mut report = (*self.report).clone();
        report.rules = rendered.rules;
        let replaced = std::mem::replace(&mut self.report, Shared::new(report));
        // Its text and world are this one's: only the report is let go of.
        retire((self.scenario.clone(), Rc::clone(&self.world), replaced));
        self.rules_report = Some((self.report.clone(), rendered.index));
    }

    /// The rulesets, rendered now if the report does not carry them yet (a download, an export).
    pub(crate) fn rules(&self) -> Option<std::borrow::Cow<'_, svclab_core::Rules>> {
        if self.rules_computed() {
            return self.report.rules.as_ref().map(std::borrow::Cow::Borrowed);
        }
        svclab_core::report_rules(&self.world).map(std::borrow::Cow::Owned)
    }

    /// Has the text `change` makes of the scenario evaluated: a whole text (the editor's on a
    /// large paste, an example, the profile bar), or the editor's edits, which the core session
    /// applies to the text it last read, reading again only the documents they touch. A text
    /// written into the editor from here is shown at once; the panels follow with the result
    /// ([`State::show`]: now outside the browser, in an [`Action::Evaluated`] in it).
    fn set_scenario(&mut self, change: Change, from_editor: bool) {
        if let (false, Change::Text(text)) = (from_editor, &change) {
            self.scenario = Shared::new(text.clone());
            self.revision += 1;
        }
        if let Some(evaluated) = evaluation::submit(change) {
            self.show(evaluated);
        }
    }

    /// Shows an evaluation's result.
    fn show(&mut self, evaluated: Evaluated) {
        let Evaluated { text, world, report, eval_ms, applied } = evaluated;
        if !applied {
            // The editor then shows the state's text again (a new revision), and says why.
            self.notice = Some(
                "The editor's last change did not fit the text it was made to; the text is \
                 shown as it was before it."
                    .to_owned(),
            );
        }
        retire((
            std::mem::replace(&mut self.scenario, text),
            std::mem::replace(&mut self.world, world),
            std::mem::replace(&mut self.report, report),
        ));
        if self.tab != Tab::Rules {
            // No panel shows the last rulesets while these are rendered.
            self.rules_report = None;
        }
        self.want_rules();
        self.eval_ms = eval_ms;
        self.evaluations += 1;
        // A text written into the editor was shown when it was submitted (the editor may have
        // changed it since); the editor's own changes it shows already.
        if !applied {
            self.revision += 1;
        }
        if self.trace_outcome.is_some() {
            self.run_trace();
        }
        if self.compare_outcome.is_some() {
            self.run_compare();
        }
    }

    fn run_trace(&mut self) {
        let outcome = proxy_view::trace(&self.world, &self.report, &self.trace, &self.node());
        self.trace_outcome = Some(Rc::new(outcome));
    }

    fn run_compare(&mut self) {
        let inputs = [Input::new(SCENARIO_NAME, self.scenario.to_string())];
        let outcome = compare::rehearse(&inputs, &self.scenario, &self.compare);
        self.compare_outcome = Some(Rc::new(outcome));
    }

    fn apply_profile(&self, change: ProfileChange) -> String {
        let text = &*self.scenario;
        match change {
            ProfileChange::Version(v) => {
                let text = profile_document::set_field(
                    text,
                    CLUSTER_PROFILE,
                    "kubernetesVersion",
                    &profile_document::quoted(&v),
                );
                // Gates the new release no longer accepts (e.g. ServiceIPStaticSubrange after
                // 1.27) or locks to another value would make kube-apiserver refuse to start;
                // the bar drops them so that switching releases keeps the scenario valid.
                let gates = explicit_gates(&text);
                let Some(version) = svclab_core::Version::parse(&v) else { return text };
                let mut profile = svclab_core::Profile::for_version(version);
                let kept: Vec<(&str, bool)> = gates
                    .iter()
                    .filter(|(name, value)| profile.set_gate(name, **value).is_ok())
                    .map(|(name, value)| (name.as_str(), *value))
                    .collect();
                if kept.len() == gates.len() {
                    return text;
                }
                profile_document::set_field(
                    &text,
                    CLUSTER_PROFILE,
                    "featureGates",
                    &profile_document::bool_map(kept),
                )
            }
            ProfileChange::Gate(name, value) => {
                let mut gates = explicit_gates(text);
                gates.insert(name, value);
                let map = profile_document::bool_map(gates.iter().map(|(k, v)| (k.as_str(), *v)));
                profile_document::set_field(text, CLUSTER_PROFILE, "featureGates", &map)
            }
            ProfileChange::ServiceCidrs(list) => {
                let items: Vec<&str> =
                    list.split([',', ' ']).map(str::trim).filter(|s| !s.is_empty()).collect();
                profile_document::set_field(
                    text,
                    CLUSTER_PROFILE,
                    "serviceClusterIPRanges",
                    &profile_document::quoted_list(items),
                )
            }
            ProfileChange::NodePortRange(range) => profile_document::set_field(
                text,
                CLUSTER_PROFILE,
                "serviceNodePortRange",
                &profile_document::quoted(range.trim()),
            ),
            ProfileChange::Seed(seed) => {
                let seed = seed.trim();
                let value = if seed.parse::<u64>().is_ok() {
                    seed.to_owned()
                } else {
                    profile_document::quoted(seed)
                };
                profile_document::set_field(text, CLUSTER_PROFILE, "seed", &value)
            }
            ProfileChange::Node(node) => profile_document::set_field(
                text,
                KUBE_PROXY_CONFIGURATION,
                "hostnameOverride",
                &profile_document::quoted(&node),
            ),
            ProfileChange::ProxyMode(mode) => profile_document::set_field(
                text,
                KUBE_PROXY_CONFIGURATION,
                "mode",
                &profile_document::quoted(&mode),
            ),
        }
    }
}

impl Reducible for State {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            Action::Edited(Change::Text(text)) => {
                if *text == *self.scenario {
                    return self;
                }
                next.set_scenario(Change::Text(text), true);
            }
            Action::Edited(Change::Edits(edits)) => {
                if edits.is_empty() {
                    return self;
                }
                next.set_scenario(Change::Edits(edits), true);
            }
            Action::Evaluated(evaluated) => next.show(evaluated),
            Action::RulesRendered(rendered) => next.take_rules(rendered),
            Action::LoadExample(id) => {
                let Some(example) = crate::examples::EXAMPLES.iter().find(|e| e.id == id) else {
                    return self;
                };
                next.notice = None;
                next.trace_outcome = None;
                next.set_scenario(Change::Text(example.text.to_owned()), false);
            }
            Action::Profile(change) => {
                let text = self.apply_profile(change);
                next.set_scenario(Change::Text(text), false);
            }
            Action::SetTab(tab) => {
                next.tab = tab;
                next.want_rules();
                if tab == Tab::Compare && next.compare_outcome.is_none() {
                    next.run_compare();
                }
            }
            Action::ToggleTheme => next.dark = !next.dark,
            Action::SystemTheme(dark) => next.dark = dark,
            Action::Notice(notice) => next.notice = notice,
            Action::SetRulesFilter(filter) => next.rules_filter = filter,
            Action::SetTrace(trace) => next.trace = trace,
            Action::RunTrace => next.run_trace(),
            Action::SetCompare(target) => {
                next.compare = target;
                next.run_compare();
            }
            Action::RunCompare => next.run_compare(),
            Action::Jump(line, column) => {
                let nonce = self.jump.map_or(1, |(_, _, n)| n + 1);
                next.jump = Some((line, column, nonce));
            }
        }
        Rc::new(next)
    }
}

fn default_trace() -> SharedTrace {
    SharedTrace {
        src: "10.244.0.5".to_owned(),
        dst: String::new(),
        port: String::new(),
        protocol: "TCP".to_owned(),
    }
}

/// The Compare panel's first target: the newest release, kube-proxy's mode and the ranges kept.
fn default_compare() -> SharedCompare {
    SharedCompare { to: format!("1.{}", svclab_core::NEWEST_MINOR), ..SharedCompare::default() }
}

/// Gates written in the scenario's ClusterProfile (not the defaults).
fn explicit_gates(text: &str) -> std::collections::BTreeMap<String, bool> {
    let scenario = svclab_core::parse(&[Input::new(SCENARIO_NAME, text)]);
    scenario
        .objects
        .iter()
        .rev()
        .find_map(|o| match o {
            svclab_core::Object::ClusterProfile(p) => Some(p.value.feature_gates.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// An evaluation replaced by a newer one: its text, world and report, held to be dropped later.
type Retired = (Shared<String>, Rc<World>, Shared<Report>);

thread_local! {
    /// Replaced evaluations, dropped when the page is idle: freeing a cluster-sized world and
    /// report is tens of milliseconds that need not delay the answer to a keystroke, nor the
    /// next one.
    static RETIRED: std::cell::RefCell<Vec<Retired>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The longest a replaced evaluation waits for the page to be idle before it is freed anyway
/// (while evaluations follow each other, each holds the main thread a slice at a time).
const RETIRED_WAIT_MS: u32 = 250;

/// Drops `retired` when the page is next idle (at once outside the browser).
fn retire(retired: Retired) {
    if !cfg!(target_arch = "wasm32") {
        return;
    }
    let first = RETIRED.with_borrow_mut(|list| {
        list.push(retired);
        list.len() == 1
    });
    if first {
        drop_retired_when_idle();
    }
}

/// Drops the oldest retired evaluation when the page is next idle (at most [`RETIRED_WAIT_MS`]
/// later), after the frame that shows the new one and the input that came meanwhile, and asks
/// again while more wait (one at a time: each is tens of milliseconds); all at once where no
/// idle callback can be asked for.
fn drop_retired_when_idle() {
    let Some(window) = web_sys::window() else { return drop(RETIRED.take()) };
    let idle = Closure::once_into_js(|| {
        let (oldest, more) = RETIRED.with_borrow_mut(|list| {
            let oldest = (!list.is_empty()).then(|| list.remove(0));
            (oldest, !list.is_empty())
        });
        drop(oldest);
        if more {
            drop_retired_when_idle();
        }
    });
    let options = web_sys::IdleRequestOptions::new();
    options.set_timeout(RETIRED_WAIT_MS);
    if window.request_idle_callback_with_options(idle.unchecked_ref(), &options).is_err() {
        drop(RETIRED.take());
    }
}

/// `performance.now()` in the browser, 0 elsewhere (native unit tests).
pub(crate) fn now_ms() -> f64 {
    if cfg!(target_arch = "wasm32") {
        web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(state: &State, change: ProfileChange, expected_line: &str) {
        let text = state.apply_profile(change);
        assert!(text.lines().any(|l| l == expected_line), "{expected_line:?} not in\n{text}");
        let report = evaluation::evaluate_now(Change::Text(text)).report;
        let profile_errors: Vec<_> = report
            .diagnostics
            .iter()
            .filter(|d| d.object.as_ref().is_some_and(|o| o.kind == "ClusterProfile"))
            .collect();
        assert!(profile_errors.is_empty(), "{profile_errors:?}");
    }

    /// The editor's edits, in its UTF-16 offsets, give the text a whole-text change gives, and
    /// the same report; edits that do not fit the text leave it, say so, and show it again.
    #[test]
    fn edits_in_utf16_offsets_change_the_text_as_the_editor_did() {
        let text = "apiVersion: v1\nkind: Service\nmetadata: {name: web, annotations: {note: \"é😀\"}}\nspec:\n  ports: [{port: 80}]\n";
        let state = Rc::new(State::new(
            SharedState { scenario: text.to_owned(), ..SharedState::default() },
            false,
            false,
            None,
        ));
        // In UTF-16 units: "é" is one, "😀" two; the port is after both.
        let at = |needle: &str| {
            let byte = text.find(needle).expect("in the text");
            text[..byte].encode_utf16().count()
        };
        assert!(at("80") < text.find("80").expect("a port"), "UTF-16 offsets, not bytes");
        let edits = vec![
            (at("web"), at("web") + 3, "api".to_owned()),
            (at("80"), at("80") + 2, "8080".to_owned()),
        ];
        let edited = Rc::clone(&state).reduce(Action::Edited(Change::Edits(edits)));
        let expected = text.replace("web", "api").replace("80}", "8080}");
        assert_eq!(&*edited.scenario, expected.as_str());
        let fresh = Rc::clone(&state).reduce(Action::Edited(Change::Text(expected.clone())));
        assert_eq!(edited.report.to_json(), fresh.report.to_json());
        assert_eq!(edited.revision, state.revision, "the editor already shows it");
        // Past the end of the text: nothing changes but the revision, and a notice says why.
        let misfit = vec![(text.len() + 5, text.len() + 6, "x".to_owned())];
        let refused = Rc::clone(&edited).reduce(Action::Edited(Change::Edits(misfit)));
        assert_eq!(&*refused.scenario, expected.as_str());
        assert_eq!(refused.revision, edited.revision + 1);
        assert!(refused.notice.is_some());
    }

    #[test]
    fn rulesets_are_rendered_for_the_rules_panel_a_download_or_an_export_only() {
        let text = crate::examples::EXAMPLES
            .iter()
            .find(|e| e.id == "iptables-vs-nftables")
            .map(|e| e.text)
            .unwrap_or_default();
        let state = Rc::new(State::new(
            SharedState { scenario: text.to_owned(), ..SharedState::default() },
            false,
            false,
            None,
        ));
        assert!(!state.rules_computed() && state.report.rules.is_none());
        // A download or an export renders them on the spot, the same as the panel's.
        let on_demand = state.rules().map(|r| r.into_owned()).expect("rules");
        let edited = state.reduce(Action::Edited(Change::Text(format!("{text}\n"))));
        assert!(!edited.rules_computed() && edited.report.rules.is_none());
        let rules = edited.reduce(Action::SetTab(Tab::Rules));
        assert!(rules.rules_computed());
        assert_eq!(rules.report.rules.as_ref(), Some(&on_demand));
        // While the panel is open, every edit renders them.
        let typed = rules.reduce(Action::Edited(Change::Text(format!("{text}\n\n"))));
        assert!(typed.rules_computed() && typed.report.rules.is_some());
        assert!(typed.rules_report.as_ref().is_some_and(|(report, _)| *report == typed.report));
        // Rulesets rendered in steps (in the browser) are taken only for the state they are
        // of: not once a newer result is shown.
        let closed = typed.reduce(Action::SetTab(Tab::Diagnostics));
        let older = Rc::clone(&closed.world);
        let newer = closed.reduce(Action::Edited(Change::Text(format!("{text}\n\n\n"))));
        assert!(!newer.rules_computed() && newer.rules_report.is_none());
        let rules = Some(on_demand);
        let stale = RulesRendered::now(older);
        let newer = newer.reduce(Action::RulesRendered(stale));
        assert!(!newer.rules_computed() && newer.report.rules.is_none());
        let own = RulesRendered::now(Rc::clone(&newer.world));
        let newer = newer.reduce(Action::RulesRendered(own));
        assert!(newer.rules_computed() && newer.report.rules == rules);
    }

    #[test]
    fn profile_bar_changes_are_written_into_the_text() {
        let example = |id: &str| {
            let text = crate::examples::EXAMPLES
                .iter()
                .find(|e| e.id == id)
                .map(|e| e.text)
                .unwrap_or_default();
            State::new(
                SharedState { scenario: text.to_owned(), ..SharedState::default() },
                false,
                false,
                None,
            )
        };
        let newest = example("static-band-dns");
        check(&newest, ProfileChange::Version("1.24".into()), "kubernetesVersion: \"1.24\"");
        check(
            &newest,
            ProfileChange::ServiceCidrs("10.0.0.0/16, fd00::/108".into()),
            "serviceClusterIPRanges: [\"10.0.0.0/16\", \"fd00::/108\"]",
        );
        check(&newest, ProfileChange::Seed("9".into()), "seed: 9");
        check(&newest, ProfileChange::ProxyMode("nftables".into()), "mode: \"nftables\"");
        let old = example("gate-off-1-24");
        check(
            &old,
            ProfileChange::Gate("ServiceIPStaticSubrange".into(), true),
            "featureGates: {ServiceIPStaticSubrange: true}",
        );
        // The gate is gone in the newest release: switching there drops it.
        check(&old, ProfileChange::Version("1.37".into()), "featureGates: {}");
    }
}
