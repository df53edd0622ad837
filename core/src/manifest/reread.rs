//! Reading an edited scenario again: what each document read to is kept, by its text, and a
//! document whose text is unchanged is not parsed or decoded again, only placed where it now
//! is. Reading a document depends on nothing but its text, its input's name and where it lies
//! (its index, its first line, its bytes in the input), so the objects and diagnostics it gave
//! are the ones a fresh reading gives, once their places are updated ([`ReadCache::reuse`]).
//!
//! Found by the text's hash, confirmed by comparing the text itself; a hash costs a pass over
//! the text, a few milliseconds at 10 MB, against the tens of milliseconds of parsing it.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use super::{Input, Object, Scenario, decode::Releases};
use crate::diagnostic::Diagnostic;
use crate::model::{Origin, Positions};
use crate::yaml::Piece;

/// What the documents of the last reading gave, kept for the next one.
#[derive(Debug, Default)]
pub(crate) struct ReadCache {
    /// The last reading's documents, by the hash of their text.
    last: BTreeMap<u64, Vec<ReadDocument>>,
    /// This reading's, filled as it goes.
    this: BTreeMap<u64, Vec<ReadDocument>>,
    /// Documents placed from `last` and read anew in this reading, for tests and measurements.
    pub(crate) reused: usize,
    pub(crate) read: usize,
    /// How many objects this reading took, in order from the first, from documents placed
    /// exactly where the last reading had them: the scenario is the same as last time up to
    /// there, so an evaluation may resume there (`pipeline/session.rs`).
    pub(crate) unchanged_objects: usize,
    /// Whether every document so far was placed where it was.
    unchanged: bool,
    /// How many objects the last reading took.
    pub(crate) objects: usize,
}

/// One document as it was read.
#[derive(Debug)]
struct ReadDocument {
    /// Its input's name and text, and where in the text it lies.
    file: String,
    text: Arc<String>,
    range: Range<usize>,
    index: usize,
    first_line: u32,
    objects: Vec<Object>,
    diagnostics: Vec<Diagnostic>,
    /// `Scenario::release_fields` of `diagnostics`, indexed into them.
    release_fields: Vec<(usize, Releases)>,
}

/// How much of the scenario there was before a document was read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    objects: usize,
    diagnostics: usize,
    release_fields: usize,
}

impl Mark {
    pub(crate) fn of(scenario: &Scenario) -> Mark {
        Mark {
            objects: scenario.objects.len(),
            diagnostics: scenario.diagnostics.len(),
            release_fields: scenario.release_fields.len(),
        }
    }
}

impl ReadCache {
    /// Starts a reading: what the last one kept is what this one may reuse.
    pub(crate) fn begin(&mut self) {
        self.last = std::mem::take(&mut self.this);
        self.reused = 0;
        self.read = 0;
        self.unchanged_objects = 0;
        self.unchanged = true;
    }

    /// A document was not placed where the last reading had it and will not be remembered
    /// (not cached, or not read from the cache's input): the scenario differs from the last one
    /// from here on. [`ReadCache::reuse`] of a moved document and [`ReadCache::remember`] say
    /// so themselves.
    pub(crate) fn changed_here(&mut self) {
        self.unchanged = false;
    }

    /// Ends a reading of `scenario`: documents of the last one not met again are dropped.
    pub(crate) fn end(&mut self, scenario: &Scenario) {
        self.last.clear();
        self.objects = scenario.objects.len();
    }

    /// Places what `piece` read to last time into `scenario`, if its text was read before and
    /// what it gave can move to where the piece is now; `false` when it must be read.
    pub(crate) fn reuse(
        &mut self,
        piece: &Piece<'_>,
        place: &Place,
        input: &Input,
        scenario: &mut Scenario,
    ) -> bool {
        let Some(candidates) = self.last.get_mut(&place.hash) else { return false };
        let found = candidates.iter().position(|document| {
            document.file == input.name
                && document.text.get(document.range.clone()) == Some(&*piece.text)
        });
        let Some(at) = found else { return false };
        let moved =
            candidates[at].index != place.index || candidates[at].first_line != place.first_line;
        if moved && !candidates[at].movable() {
            return false;
        }
        let mut document = candidates.swap_remove(at);
        if moved {
            self.unchanged = false;
        } else if self.unchanged {
            self.unchanged_objects += document.objects.len();
        }
        let line_shift = i64::from(place.first_line) - i64::from(document.first_line);
        for object in &mut document.objects {
            if let Some(positions) = object.positions_mut() {
                positions.document = place.index;
                positions.object.line = shifted(positions.object.line, line_shift);
                if let Origin::Text(text) = &mut positions.origin {
                    text.text = Arc::clone(&input.text);
                    text.range = place.range.clone();
                    text.first_line = place.first_line;
                }
            }
        }
        document.text = Arc::clone(&input.text);
        document.range = place.range.clone();
        document.index = place.index;
        document.first_line = place.first_line;
        let diagnostics = scenario.diagnostics.len();
        scenario.release_fields.extend(
            document
                .release_fields
                .iter()
                .map(|&(index, releases)| (diagnostics + index, releases)),
        );
        scenario.diagnostics.extend_from_slice(&document.diagnostics);
        scenario.objects.extend_from_slice(&document.objects);
        self.this.entry(place.hash).or_default().push(document);
        self.reused += 1;
        true
    }

    /// Keeps what the document at `place` read to: what `scenario` gained since `mark`.
    pub(crate) fn remember(
        &mut self,
        place: Place,
        input: &Input,
        scenario: &Scenario,
        mark: Mark,
    ) {
        self.read += 1;
        self.unchanged = false;
        let document = ReadDocument {
            file: input.name.clone(),
            text: Arc::clone(&input.text),
            range: place.range,
            index: place.index,
            first_line: place.first_line,
            objects: scenario.objects[mark.objects..].to_vec(),
            diagnostics: scenario.diagnostics[mark.diagnostics..].to_vec(),
            release_fields: scenario.release_fields[mark.release_fields..]
                .iter()
                .map(|&(index, releases)| (index - mark.diagnostics, releases))
                .collect(),
        };
        self.this.entry(place.hash).or_default().push(document);
    }
}

/// Where a document lies, and the hash of its text.
#[derive(Debug)]
pub(crate) struct Place {
    index: usize,
    first_line: u32,
    range: Range<usize>,
    hash: u64,
}

impl Place {
    /// The place of a piece that is a slice of its input (not one whose content starts on its
    /// `---` line, nor the one that stands for what is past the limit).
    pub(crate) fn of(piece: &Piece<'_>) -> Option<Place> {
        let range = piece.range.clone().filter(|_| !piece.past_limit)?;
        Some(Place {
            index: piece.index,
            first_line: piece.first_line,
            range,
            hash: text_hash(&piece.text),
        })
    }
}

impl ReadDocument {
    /// Whether what it read to can move to another index or line: its diagnostics name both
    /// (in their sources, and a syntax error in its message), and so do an `iptables-save`
    /// dump's source and a tree's positions; an object positioned by its document's text moves
    /// with it.
    fn movable(&self) -> bool {
        self.diagnostics.is_empty()
            && self.objects.iter().all(|object| {
                object
                    .positions()
                    .is_some_and(|positions| matches!(positions.origin, Origin::Text(_)))
            })
    }
}

fn shifted(line: u32, by: i64) -> u32 {
    u32::try_from(i64::from(line) + by).unwrap_or(line)
}

/// FxHash's step over eight bytes at a time (rustc's `FxHasher`): fast, and enough for a key
/// whose every hit is confirmed by comparing the text.
fn text_hash(text: &str) -> u64 {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let step = |hash: u64, word: u64| (hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    let bytes = text.as_bytes();
    let mut chunks = bytes.chunks_exact(8);
    let mut hash = (&mut chunks).fold(bytes.len() as u64, |hash, chunk| {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        step(hash, u64::from_le_bytes(word))
    });
    for &byte in chunks.remainder() {
        hash = step(hash, u64::from(byte));
    }
    hash
}

impl Object {
    /// Where the object's fields are, for every kind but an `iptables-save` dump.
    pub(crate) fn positions(&self) -> Option<&Positions> {
        match self {
            Object::Service(o) => Some(&o.positions),
            Object::EndpointSlice(o) => Some(&o.positions),
            Object::Endpoints(o) => Some(&o.positions),
            Object::Node(o) => Some(&o.positions),
            Object::ServiceCidr(o) => Some(&o.positions),
            Object::KubeProxyConfiguration(o) => Some(&o.positions),
            Object::ClusterProfile(o) => Some(&o.positions),
            Object::ServicePolicy(o) => Some(&o.positions),
            Object::IptablesSave { .. } => None,
        }
    }

    /// Where the object's fields are, to move them: the object is copied first if it is
    /// shared (a cached document's objects are not, once the evaluation that read them ended).
    fn positions_mut(&mut self) -> Option<&mut Positions> {
        match self {
            Object::Service(o) => Some(&mut Arc::make_mut(o).positions),
            Object::EndpointSlice(o) => Some(&mut Arc::make_mut(o).positions),
            Object::Endpoints(o) => Some(&mut Arc::make_mut(o).positions),
            Object::Node(o) => Some(&mut Arc::make_mut(o).positions),
            Object::ServiceCidr(o) => Some(&mut Arc::make_mut(o).positions),
            Object::KubeProxyConfiguration(o) => Some(&mut Arc::make_mut(o).positions),
            Object::ClusterProfile(o) => Some(&mut Arc::make_mut(o).positions),
            Object::ServicePolicy(o) => Some(&mut Arc::make_mut(o).positions),
            Object::IptablesSave { .. } => None,
        }
    }
}
