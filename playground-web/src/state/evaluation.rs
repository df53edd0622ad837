//! Where the scenario is evaluated: one core [`Session`] for the page, fed every change of the
//! text in order. In the browser an evaluation runs in steps, yielding to the event loop
//! whenever it has held the main thread for [`SLICE_MS`], so that typing, scrolling and
//! painting go on while a cluster-sized scenario is evaluated; changes that arrive meanwhile
//! wait, coalesce, and are evaluated together once it is done (a whole new text abandons it:
//! its result would be replaced wholesale). The result reaches the state as
//! [`super::Action::Evaluated`]. The rulesets, which the Rules panel alone shows, are rendered
//! after it, in steps too ([`render_rules`]), and reach the state as
//! [`super::Action::RulesRendered`]. Outside the browser (unit tests) there is no event loop to
//! yield to, and [`submit`] and [`render_rules`] give their result at once.

use std::cell::{Cell, RefCell};
use std::ops::ControlFlow;
use std::rc::Rc;

use svclab_core::{CheckOptions, EditError, Report, Rules, Session, World};
use wasm_bindgen::JsCast as _;
use yew::Callback;

use super::{Action, Change, SCENARIO_NAME, Shared};
use crate::proxy_view::RulesIndex;

/// How long one step of an evaluation holds the main thread before it yields: about a frame,
/// well under the 50 ms of a long task, with room for the step that ends the evaluation (the
/// report, and the panels drawn from it) and for one that keeps a state.
const SLICE_MS: f64 = 20.0;

/// What one evaluation gave.
#[derive(Debug)]
pub(crate) struct Evaluated {
    /// The text evaluated.
    pub(crate) text: Shared<String>,
    pub(crate) world: Rc<World>,
    /// The report, without its rulesets.
    pub(crate) report: Shared<Report>,
    /// Milliseconds the evaluation held the main thread, its steps added up (0 when no clock).
    pub(crate) eval_ms: f64,
    /// Whether the editor's changes fitted the text they were made to; when not, the text is
    /// the one last evaluated before them.
    pub(crate) applied: bool,
}

/// The rulesets of an evaluation's cluster state.
#[derive(Debug)]
pub(crate) struct RulesRendered {
    /// The state they are of: the page shows them only while it still shows that state.
    pub(crate) world: Rc<World>,
    /// `None` where the report has none (past svclab's rendering limit, say).
    pub(crate) rules: Option<Rules>,
    /// What the Rules panel reads off them.
    pub(crate) index: Shared<RulesIndex>,
}

impl RulesRendered {
    /// The rulesets of `world`, rendered at once.
    pub(crate) fn now(world: Rc<World>) -> RulesRendered {
        let rules = svclab_core::report_rules(&world);
        let index = Shared::new(rules.as_ref().map(RulesIndex::of).unwrap_or_default());
        RulesRendered { world, rules, index }
    }
}

/// Ruleset lines indexed between two pauses of [`render_rules`].
const LINES_PER_STEP: usize = 20_000;

/// The session and the text it last evaluated.
struct Editing {
    session: Session,
    /// The text of the last evaluation, shared with the state that shows it.
    text: Option<Shared<String>>,
}

impl Default for Editing {
    fn default() -> Self {
        // The rulesets are rendered apart, for the Rules panel only (`render_rules`).
        let options = CheckOptions { omit_rules: true, ..CheckOptions::default() };
        Editing { session: Session::new(SCENARIO_NAME, String::new(), options), text: None }
    }
}

/// Changes waiting for the evaluation under way, and where its results go.
#[derive(Default)]
struct Queue {
    waiting: Vec<Change>,
    running: bool,
    results: Option<Callback<Action>>,
    /// Results that came before there was a callback to send them to (the rulesets of the
    /// first state, when its link opens the Rules panel, may).
    undelivered: Vec<Action>,
}

thread_local! {
    /// The editor's text as the core last read it: an edit's evaluation reads again only the
    /// documents whose text changed (a pasted cluster is 20,000 documents; a keystroke changes
    /// one). Taken out by the evaluation under way, and put back after it.
    static EDITING: RefCell<Editing> = RefCell::default();
    static QUEUE: RefCell<Queue> = RefCell::default();
    /// Bumped by each [`render_rules`]: a rendering under way that finds it changed gives up.
    static RULES_ASKED: Cell<u64> = const { Cell::new(0) };
}

/// Sends every later result, as an action, to `results` (the page's reducer).
pub(crate) fn on_evaluated(results: Callback<Action>) {
    let undelivered = QUEUE.with_borrow_mut(|queue| {
        queue.results = Some(results.clone());
        std::mem::take(&mut queue.undelivered)
    });
    for action in undelivered {
        results.emit(action);
    }
}

/// Sends a result to [`on_evaluated`]'s callback, or keeps it for the callback to come.
fn deliver(action: Action) {
    match QUEUE.with_borrow(|queue| queue.results.clone()) {
        Some(results) => results.emit(action),
        None => QUEUE.with_borrow_mut(|queue| queue.undelivered.push(action)),
    }
}

/// Evaluates the text `change` makes: at once outside the browser (the result), in steps in it
/// (`None`; the result goes to [`on_evaluated`]'s callback).
pub(crate) fn submit(change: Change) -> Option<Evaluated> {
    if !cfg!(target_arch = "wasm32") {
        return Some(evaluate_now(change));
    }
    let start = QUEUE.with_borrow_mut(|queue| {
        queue.waiting.push(change);
        !std::mem::replace(&mut queue.running, true)
    });
    if start {
        wasm_bindgen_futures::spawn_local(run());
    }
    None
}

/// Evaluates the text `change` makes in one go: the first state's scenario, and every change
/// outside the browser.
pub(crate) fn evaluate_now(change: Change) -> Evaluated {
    let mut editing = EDITING.take();
    let started = super::now_ms();
    let applied = take_in(&mut editing, vec![change]);
    let (world, report) = editing.session.evaluate();
    let held = super::now_ms() - started;
    let evaluated = finish(&mut editing, world, report, held, applied);
    EDITING.set(editing);
    evaluated
}

/// Renders the rulesets of `world`: at once outside the browser (the result), in steps in it
/// (`None`; the result goes to [`on_evaluated`]'s callback as [`Action::RulesRendered`], unless
/// the rulesets of another state were asked for, or the text changed, before they were done:
/// then the next result asks again).
pub(crate) fn render_rules(world: Rc<World>) -> Option<RulesRendered> {
    if !cfg!(target_arch = "wasm32") {
        return Some(RulesRendered::now(world));
    }
    let asked = RULES_ASKED.get() + 1;
    RULES_ASKED.set(asked);
    wasm_bindgen_futures::spawn_local(async move {
        // Stale once other rulesets are asked for, or an evaluation is under way or waits (its
        // result will ask for its own).
        let steps = Steps::new(move || {
            RULES_ASKED.get() != asked
                || QUEUE.with_borrow(|queue| queue.running || !queue.waiting.is_empty())
        });
        // A task of its own: it is asked for while a result is shown.
        steps.yield_now().await;
        if (steps.stale)() {
            return;
        }
        let mut pause = || steps.pause();
        let rendered = async {
            let rules = svclab_core::report_rules_pausing(&world, &mut pause).await?;
            let mut index = RulesIndex::default();
            if let Some(rules) = &rules {
                for (into, text) in
                    [(&mut index.iptables, &rules.iptables), (&mut index.nftables, &rules.nftables)]
                {
                    let mut lines = text.lines();
                    while into.read(lines.by_ref(), LINES_PER_STEP) {
                        pause().await?;
                    }
                }
            }
            ControlFlow::Continue((rules, index))
        };
        let ControlFlow::Continue((rules, index)) = rendered.await else { return };
        let index = Shared::new(index);
        deliver(Action::RulesRendered(RulesRendered { world, rules, index }));
    });
    None
}

/// Evaluates what waits until nothing does, in steps; sends each result.
async fn run() {
    let mut editing = EDITING.take();
    loop {
        let batch = QUEUE.with_borrow_mut(|queue| std::mem::take(&mut queue.waiting));
        if batch.is_empty() {
            break;
        }
        // Stale once a whole new text came: its result replaces this one wholesale.
        let steps = Steps::new(|| {
            QUEUE.with_borrow(|queue| {
                queue.waiting.iter().any(|change| matches!(change, Change::Text(_)))
            })
        });
        let applied = take_in(&mut editing, batch);
        // Reading is one step, tens of milliseconds at cluster scale: it starts a task of its
        // own when taking the changes in (copying a large text) already held the thread.
        if steps.in_step() >= SLICE_MS / 4.0 {
            steps.yield_now().await;
        }
        let Some((world, report)) = editing.session.evaluate_pausing(|| steps.pause()).await else {
            // A whole new text came: it is next.
            continue;
        };
        let evaluated = finish(&mut editing, world, report, steps.held(), applied);
        deliver(Action::Evaluated(evaluated));
    }
    EDITING.set(editing);
    QUEUE.with_borrow_mut(|queue| queue.running = false);
}

/// One piece of work done in steps on the main thread (an evaluation, the rulesets): when its
/// step began, how long its steps held the thread, and when it is no longer wanted.
struct Steps {
    /// Milliseconds the steps before this one held the thread.
    busy: Cell<f64>,
    /// When this step began.
    slice: Cell<f64>,
    stale: Box<dyn Fn() -> bool>,
}

impl Steps {
    /// Work that begins its first step now, and becomes stale when `stale` says.
    fn new(stale: impl Fn() -> bool + 'static) -> Rc<Steps> {
        Rc::new(Steps {
            busy: Cell::new(0.0),
            slice: Cell::new(super::now_ms()),
            stale: Box::new(stale),
        })
    }

    /// Milliseconds the step under way has held the thread.
    fn in_step(&self) -> f64 {
        super::now_ms() - self.slice.get()
    }

    /// Milliseconds all the steps held the thread, this one's so far included.
    fn held(&self) -> f64 {
        self.busy.get() + self.in_step()
    }

    /// A pause: on at once within the step's [`SLICE_MS`]; past it, on after the browser's
    /// other tasks, unless the work became stale meanwhile.
    fn pause(self: &Rc<Self>) -> std::pin::Pin<Box<dyn Future<Output = ControlFlow<()>>>> {
        if self.in_step() < SLICE_MS {
            return Box::pin(std::future::ready(ControlFlow::Continue(())));
        }
        let steps = Rc::clone(self);
        Box::pin(async move {
            steps.yield_now().await;
            if (steps.stale)() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        })
    }

    /// Ends the step under way and begins the next in a later task.
    async fn yield_now(&self) {
        self.busy.set(self.held());
        let _ = wasm_bindgen_futures::JsFuture::from(next_task()).await;
        self.slice.set(super::now_ms());
    }
}

/// A promise resolved in a later task: `scheduler.yield()` where the browser has it (the
/// continuation goes before other tasks of its priority), else a timeout of 0.
fn next_task() -> js_sys::Promise {
    let global = js_sys::global();
    let scheduler = js_sys::Reflect::get(&global, &"scheduler".into()).ok();
    let yield_now = scheduler
        .as_ref()
        .and_then(|s| js_sys::Reflect::get(s, &"yield".into()).ok())
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    if let (Some(scheduler), Some(yield_now)) = (scheduler, yield_now)
        && let Ok(promise) = yield_now.call0(&scheduler).and_then(|p| p.dyn_into())
    {
        return promise;
    }
    js_sys::Promise::new(&mut |resolve, _| {
        let timeout = web_sys::window()
            .map(|window| window.set_timeout_with_callback(resolve.unchecked_ref()));
        if !matches!(timeout, Some(Ok(_))) {
            let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
        }
    })
}

/// Applies the batch's changes to the session in order: `false` when an editor's edits did not
/// fit the text, which then goes back to the text last evaluated (an editor bug: the state
/// shows that text again rather than a guess at what was meant).
fn take_in(editing: &mut Editing, batch: Vec<Change>) -> bool {
    let mut applied = true;
    for change in batch {
        match change {
            Change::Text(text) => editing.session.set_text(text),
            // After edits that did not fit, the editor's next ones do not either: it is shown
            // the state's text again.
            Change::Edits(_) if !applied => {}
            Change::Edits(edits) => {
                if apply(&mut editing.session, &edits).is_err() {
                    applied = false;
                    let last = editing.text.as_deref().map_or("", String::as_str);
                    editing.session.set_text(last);
                }
            }
        }
    }
    applied
}

/// The result of an evaluation of the session's text that held the main thread `eval_ms`.
fn finish(
    editing: &mut Editing,
    world: World,
    report: Report,
    eval_ms: f64,
    applied: bool,
) -> Evaluated {
    let text: Shared<String> = Shared::new(editing.session.shared_text());
    editing.text = Some(text.clone());
    Evaluated { text, world: Rc::new(world), report: Shared::new(report), eval_ms, applied }
}

/// Applies the editor's edits (UTF-16 offsets of the session's text, ascending and apart), the
/// last first so that each one's offsets still hold.
fn apply(session: &mut Session, edits: &[(usize, usize, String)]) -> Result<(), EditError> {
    for (from, to, inserted) in edits.iter().rev() {
        session.edit_utf16(*from..*to, inserted)?;
    }
    Ok(())
}
