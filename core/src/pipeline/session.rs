//! An evaluation kept between edits, for a host that evaluates as a user types (the
//! playground's editor): the scenario's text, changed by edits, and what each of its documents
//! read to, so that the next evaluation reads again only the documents whose text changed
//! (`manifest/reread.rs`). The result is the same as [`crate::evaluate`] of the same text, byte
//! for byte (`session/tests.rs` holds random edit sequences to that).
//!
//! The pipeline takes objects in stream order, so what the objects before the first changed
//! document did does not depend on anything after them: an evaluation resumes from the state
//! the pipeline had there ([`Checkpoint`]), kept from an earlier evaluation, and applies only the
//! objects from there on. A keystroke in the middle of a cluster-sized scenario applies about
//! half of its objects again, one near its end almost none.
//!
//! What is not incremental yet: the objects after the first changed document are applied again
//! even when the edit cannot reach them, and the rulesets are rendered whole.

#[cfg(test)]
mod tests;

use std::ops::{ControlFlow, Range};
use std::sync::Arc;

use ipnet::IpNet;

use super::{CheckOptions, Evaluation, at_own_release, evaluate_reading};
use crate::diagnostic::Diagnostic;
use crate::manifest::{Input, Object, ReadCache};
use crate::policy::{self, UserInfo};
use crate::profile::Profile;
use crate::registry;
use crate::report::{Report, ServiceReport};
use crate::world::World;

/// Objects applied between two pauses of [`Session::evaluate_pausing`]: a few milliseconds of
/// a cluster-sized scenario in a browser (about 20,000 objects take 70 ms there).
/// (Fewer in unit tests, whose scenarios are small, so that they pause in the middle too.)
const PAUSE_EVERY: usize = if cfg!(test) { 4 } else { 64 };

/// How many checkpoints an evaluation from the start keeps along the scenario.
const RUNGS: usize = 8;

/// A scenario being edited, evaluated again after each edit.
#[derive(Debug)]
pub struct Session {
    name: String,
    text: Arc<String>,
    options: CheckOptions,
    cache: ReadCache,
    /// States to resume from, ascending by where they are.
    checkpoints: Vec<Checkpoint>,
    /// States that no longer hold, freed one at each pause of an evaluation: freeing several
    /// copies of a cluster-sized state at once takes tens of milliseconds.
    discarded: Vec<Checkpoint>,
    /// Objects the last evaluation applied, of how many its scenario has.
    applied: (usize, usize),
}

/// The pipeline's state after the first `at` objects of an evaluation's scenario: the next
/// evaluation whose scenario is the same up to there, and starts the same, resumes from it.
#[derive(Debug, Clone)]
struct Checkpoint {
    at: usize,
    start: Start,
    world: World,
    policies: policy::Policies,
    selectors: policy::SelectorIndex,
    indexing: bool,
    /// The diagnostics of the first `at` objects (those of reading and of the start are the
    /// evaluation's own: reading sees every document).
    diags: Vec<Diagnostic>,
    services: Vec<ServiceReport>,
}

/// What the pipeline's start (`Evaluation::begin`) depends on besides the objects before a
/// checkpoint: the profile (the scenario's last ClusterProfile, wherever it is), the ranges of
/// its ServiceCIDRs (all of them, read before any Service), and the options.
#[derive(Debug, Clone, PartialEq)]
struct Start {
    profile: Profile,
    service_cidrs: Vec<IpNet>,
    no_defaults: bool,
    policy: Option<Input>,
    user_info: Option<UserInfo>,
}

impl Start {
    fn of(objects: &[Object], profile: &Profile, options: &CheckOptions) -> Start {
        Start {
            profile: profile.clone(),
            // Its diagnostics are the start's, which the evaluation makes itself.
            service_cidrs: registry::service_cidrs(objects, profile, &mut Vec::new()),
            no_defaults: options.no_defaults,
            policy: options.policy.clone(),
            user_info: options.user_info.clone(),
        }
    }
}

impl Checkpoint {
    /// The state of `run` after `at` objects; `begun` of its diagnostics came before the first.
    fn of(run: &Evaluation<'_>, at: usize, start: Start, begun: usize) -> Checkpoint {
        Checkpoint {
            at,
            start,
            world: run.world.clone(),
            policies: run.scope.policies.clone(),
            selectors: run.scope.selectors.clone(),
            indexing: run.scope.indexing,
            diags: run.diags[begun..].to_vec(),
            services: run.services.clone().unwrap_or_default(),
        }
    }

    /// Puts this state into `run`, which has just begun.
    fn restore(mut self, run: &mut Evaluation<'_>) {
        // Into the vector the start sized for all of the scenario's slices.
        let mut slices = std::mem::take(&mut run.world.endpoint_slices);
        slices.append(&mut self.world.endpoint_slices);
        run.world = self.world;
        run.world.endpoint_slices = slices;
        run.scope.policies = self.policies;
        run.scope.selectors = self.selectors;
        run.scope.indexing = self.indexing;
        run.diags.extend(self.diags);
        if let Some(services) = &mut run.services {
            services.extend(self.services);
        }
    }
}

/// Why an edit could not be applied; the text is left as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EditError {
    /// The range does not lie within the text, or ends before it starts.
    OutOfRange {
        /// The range asked for.
        range: Range<usize>,
        /// The text's length in bytes.
        len: usize,
    },
    /// An end of the range falls inside a character's UTF-8 bytes.
    NotCharBoundary {
        /// The byte offset.
        offset: usize,
    },
}

impl std::fmt::Display for EditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::OutOfRange { range, len } => {
                write!(f, "edit of bytes {range:?} outside a text of {len} bytes")
            }
            Self::NotCharBoundary { offset } => {
                write!(f, "edit at byte {offset}, inside a character")
            }
        }
    }
}

impl std::error::Error for EditError {}

impl Session {
    /// A session over the input `name` holding `text`, evaluated with `options`.
    pub fn new(name: impl Into<String>, text: impl Into<String>, options: CheckOptions) -> Self {
        Session {
            name: name.into(),
            text: Arc::new(text.into()),
            options,
            cache: ReadCache::default(),
            checkpoints: Vec::new(),
            discarded: Vec::new(),
            applied: (0, 0),
        }
    }

    /// The text as edited so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text as edited so far, shared (a host that keeps it, as the playground's state
    /// does, need not copy it; the next edit then makes a new one).
    pub fn shared_text(&self) -> Arc<String> {
        Arc::clone(&self.text)
    }

    /// Replaces bytes `range` of the text with `replacement`.
    pub fn edit(&mut self, range: Range<usize>, replacement: &str) -> Result<(), EditError> {
        let len = self.text.len();
        if range.start > range.end || range.end > len {
            return Err(EditError::OutOfRange { range, len });
        }
        for offset in [range.start, range.end] {
            if !self.text.is_char_boundary(offset) {
                return Err(EditError::NotCharBoundary { offset });
            }
        }
        self.cache.edited(&range, len);
        match Arc::get_mut(&mut self.text) {
            Some(text) => text.replace_range(range, replacement),
            None => {
                // The last reading's documents share the old text: the edited one is a new
                // string, copied once (not copied, then its tail moved).
                let mut text = String::with_capacity(len - range.len() + replacement.len());
                text.push_str(&self.text[..range.start]);
                text.push_str(replacement);
                text.push_str(&self.text[range.end..]);
                self.text = Arc::new(text);
            }
        }
        Ok(())
    }

    /// [`Session::edit`] with the range in UTF-16 code units, as editors and JavaScript count
    /// (CodeMirror's and Monaco's offsets, a JS string's indices, LSP's default position
    /// encoding). An end inside a surrogate pair is [`EditError::NotCharBoundary`] at the byte
    /// where that character starts.
    pub fn edit_utf16(&mut self, range: Range<usize>, replacement: &str) -> Result<(), EditError> {
        let bytes = utf16_to_byte(&self.text, range.start)
            .and_then(|start| Ok(start..utf16_to_byte(&self.text, range.end)?));
        match bytes {
            Ok(bytes) => self.edit(bytes, replacement),
            Err(EditError::OutOfRange { .. }) => {
                Err(EditError::OutOfRange { range, len: self.text.encode_utf16().count() })
            }
            Err(err) => Err(err),
        }
    }

    /// Replaces the whole text (a paste over everything, or a host that sends no edits): the
    /// documents whose text is unchanged are still not read again.
    pub fn set_text(&mut self, text: impl Into<String>) {
        self.cache.replaced();
        self.text = Arc::new(text.into());
    }

    /// The options evaluations use.
    pub fn options_mut(&mut self) -> &mut CheckOptions {
        &mut self.options
    }

    /// Evaluates the text as it is: [`crate::evaluate`] of it, reading only the documents
    /// changed since the last evaluation, and resuming the pipeline where the scenario first
    /// differs from an earlier evaluation's.
    pub fn evaluate(&mut self) -> (World, Report) {
        let go_on = || std::future::ready(ControlFlow::Continue(()));
        match crate::steps::without_pauses(self.evaluate_pausing(go_on)) {
            Some(Some(evaluated)) => evaluated,
            // Not when every pause goes on at once; were it to happen, a fresh evaluation of
            // the same text is the same answer.
            Some(None) | None => {
                let input = Input { name: self.name.clone(), text: Arc::clone(&self.text) };
                super::evaluate(&[input], &self.options)
            }
        }
    }

    /// [`Session::evaluate`] in steps, for a host that must not be blocked for a whole
    /// evaluation (a browser's main thread): after every 256 documents read, after reading,
    /// and after every 64 objects applied, it awaits `pause()`, where the host may yield to
    /// its event loop.
    /// `Break` abandons the evaluation (the text changed meanwhile: the latest wins) and gives
    /// `None`; the session stays as good for the next evaluation as if it had not begun.
    pub async fn evaluate_pausing<F>(
        &mut self,
        mut pause: impl FnMut() -> F,
    ) -> Option<(World, Report)>
    where
        F: Future<Output = ControlFlow<()>>,
    {
        let input = Input { name: self.name.clone(), text: Arc::clone(&self.text) };
        let context = policy::Context::default();
        if self.options.explain_release {
            // Every release's evaluation is a fresh one.
            self.checkpoints.clear();
            self.applied = (0, 0);
            return Some(evaluate_reading(
                &[input],
                &self.options,
                &context,
                Some(&mut self.cache),
            ));
        }
        // The reading pauses too, but goes on to its end (its cache must hold a whole one).
        let inputs = [input];
        let read = crate::manifest::read_pausing(&inputs, Some(&mut self.cache), &mut pause).await;
        let (scenario, profile, diags) = at_own_release(read);
        let unchanged = self.cache.unchanged_objects;
        let start = Start::of(&scenario.objects, &profile, &self.options);
        // A checkpoint holds while the scenario before it and the start are unchanged. They
        // are judged against this reading at once, and kept until this evaluation replaces
        // them, so that at every pause they hold for what the cache last read.
        let (kept, discarded) = std::mem::take(&mut self.checkpoints)
            .into_iter()
            .partition(|c| c.at <= unchanged && c.start == start);
        self.checkpoints = kept;
        self.discarded.extend::<Vec<_>>(discarded);
        // At every pause: the host's, then one state that no longer holds freed.
        macro_rules! pause {
            () => {
                pause().await.continue_value()?;
                drop(self.discarded.pop());
            };
        }
        pause!();
        let objects = scenario.objects;
        let total = objects.len();
        let mut run = Evaluation::begin(&objects, profile, diags, &self.options, &context, None);
        run.keep_service_reports(&objects);
        let begun = run.diags.len();
        let from = match self.checkpoints.last() {
            Some(checkpoint) => {
                checkpoint.clone().restore(&mut run);
                checkpoint.at
            }
            None => 0,
        };
        // The states kept are at least `spacing` objects apart: an evaluation from the start
        // (a paste, a new text) keeps one every `spacing` objects, so that the first keystroke
        // after it, wherever it is, resumes nearby instead of from the start (the copies cost a
        // few times one copy of the whole state, against an evaluation of everything); the
        // state before the first changed document (`unchanged`, at least `from`) is kept so
        // that the next keystroke in the same document starts there, and replaces those less
        // than `spacing` before it, so that typing document after document does not pile them
        // up.
        let spacing = (total / RUNGS).max(PAUSE_EVERY);
        let mut rung = (from == 0).then(|| unchanged + spacing);
        self.applied = (total - from, total);
        let mut objects = objects.into_iter().skip(from);
        let mut at = from;
        while at < total {
            // A step ends at the first changed document, if it comes first.
            let end = if at < unchanged { unchanged } else { total };
            let step = (end - at).min(PAUSE_EVERY);
            run.apply_all(objects.by_ref().take(step));
            at += step;
            if at == unchanged && unchanged > from {
                while self.checkpoints.last().is_some_and(|last| unchanged - last.at < spacing) {
                    self.discarded.extend(self.checkpoints.pop());
                }
                self.checkpoints.push(Checkpoint::of(&run, at, start.clone(), begun));
            } else if let Some(next) = rung.filter(|&next| at >= next && at < total) {
                self.checkpoints.push(Checkpoint::of(&run, at, start.clone(), begun));
                rung = Some(next + spacing);
            }
            pause!();
        }
        Some(run.finish())
    }

    /// How many objects the last evaluation applied, of how many its scenario has: the
    /// pipeline resumed after the rest.
    pub fn objects_applied(&self) -> (usize, usize) {
        self.applied
    }

    /// How many documents the last evaluation read, and how many it took as they were read
    /// before.
    pub fn documents_read(&self) -> (usize, usize) {
        (self.cache.read, self.cache.reused)
    }
}

/// The byte offset of the UTF-16 offset `units` into `text`.
fn utf16_to_byte(text: &str, units: usize) -> Result<usize, EditError> {
    // All ASCII up to there (a YAML scenario, mostly): one byte a unit.
    if text.as_bytes().get(..units).is_some_and(<[u8]>::is_ascii) {
        return Ok(units);
    }
    let mut count = 0;
    for (byte, c) in text.char_indices() {
        if count == units {
            return Ok(byte);
        }
        count += c.len_utf16();
        if count > units {
            return Err(EditError::NotCharBoundary { offset: byte });
        }
    }
    if count == units {
        Ok(text.len())
    } else {
        Err(EditError::OutOfRange { range: units..units, len: count })
    }
}
