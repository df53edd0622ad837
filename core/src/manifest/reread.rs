//! Reading an edited scenario again: what each document read to is kept, and a document whose
//! text is unchanged is not parsed or decoded again, only placed where it now is. Reading a
//! document depends on nothing but its text, its input's name and where it lies (its index,
//! its first line, its bytes in the input), so the objects and diagnostics it gave are the ones
//! a fresh reading gives, once their places are updated ([`ReadCache::reuse`]).
//!
//! Which kept document a piece of the new text is found two ways:
//! - **By where the edits left the text as it was.** A host that sends its edits
//!   (`Session::edit`) tells the cache which bytes they replaced, so the cache knows how much of
//!   the text's start and of its end no edit touched since the last reading ([`Kept`]). A piece
//!   within that start, at the same bytes as a kept document, has that document's text; a piece
//!   within that end has the text of the kept document at the same distance from the end. No
//!   byte of either is hashed or compared: a keystroke in a 10 MB scenario looks up its one
//!   document by text, not all 20,000.
//! - **By the text's hash**, confirmed by comparing the text itself: the pieces between (the
//!   edited ones, and every piece of a text replaced whole), among the kept documents not placed
//!   by the first way. A hash costs a pass over the text, a few milliseconds at 10 MB, against
//!   the tens of milliseconds of parsing it.

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
    /// The last reading's documents, in the order read; each is taken out when this reading
    /// places it.
    last: Vec<Option<ReadDocument>>,
    /// Where each of `last` starts in its input (ascending when the reading had one input).
    last_starts: Vec<usize>,
    /// Indices into `last` by the hash of their text, of those not found by where they are
    /// (built when a piece is first looked for by its text).
    by_hash: Option<BTreeMap<u64, Vec<usize>>>,
    /// This reading's, filled as it goes.
    this: Vec<ReadDocument>,
    /// The input of the last reading when it was its only one: its name and length in bytes.
    read_input: Option<(String, usize)>,
    /// What the edits since the last reading kept of its text.
    kept: Kept,
    /// Where this reading's one input is the last reading's text.
    window: Option<Window>,
    /// Documents placed from `last` and read anew in this reading, for tests and measurements.
    pub(crate) reused: usize,
    pub(crate) read: usize,
    /// Pieces this reading looked for by their text (hashed, then compared).
    pub(crate) by_text: usize,
    /// How many objects this reading took, in order from the first, from documents placed
    /// exactly where the last reading had them: the scenario is the same as last time up to
    /// there, so an evaluation may resume there (`pipeline/session.rs`).
    pub(crate) unchanged_objects: usize,
    /// Whether every document so far was placed where it was.
    unchanged: bool,
    /// How many objects the last reading took.
    pub(crate) objects: usize,
}

/// What the edits since the last reading kept of the text it read.
#[derive(Debug, Default, Clone, Copy)]
enum Kept {
    /// All of it: no edit since.
    #[default]
    All,
    /// Its first `head` bytes and its last `tail` bytes.
    Ends { head: usize, tail: usize },
    /// Nothing that is known: the text was replaced whole.
    Unknown,
}

impl Kept {
    /// The window of a text of `len` bytes, after a reading of one of `read_len`.
    fn window(self, read_len: usize, len: usize) -> Option<Window> {
        let (head, tail) = match self {
            Kept::All if read_len == len => (len, 0),
            Kept::Ends { head, tail } if head + tail <= read_len.min(len) => (head, tail),
            Kept::All | Kept::Ends { .. } | Kept::Unknown => return None,
        };
        let shift = isize::try_from(read_len).ok()? - isize::try_from(len).ok()?;
        Some(Window { head, tail: len - tail, shift })
    }
}

/// Where an input is the text of the last reading, byte for byte.
#[derive(Debug, Clone, Copy)]
struct Window {
    /// Its bytes `..head` are the same bytes of that text.
    head: usize,
    /// Its bytes `tail..` are that text's from `tail + shift` (as far from the end).
    tail: usize,
    shift: isize,
}

impl Window {
    /// Where the last reading's text had the bytes `range` of the input, when it had them.
    fn before(&self, range: &Range<usize>) -> Option<Range<usize>> {
        if range.end <= self.head {
            Some(range.clone())
        } else if range.start >= self.tail {
            let start = range.start.checked_add_signed(self.shift)?;
            Some(start..start + range.len())
        } else {
            None
        }
    }

    /// Whether bytes `range` of the last reading's text are where [`Window::before`] finds
    /// them.
    fn holds(&self, range: &Range<usize>) -> bool {
        range.end <= self.head
            || self.tail.checked_add_signed(self.shift).is_some_and(|tail| range.start >= tail)
    }
}

/// One document as it was read.
#[derive(Debug)]
struct ReadDocument {
    /// Its input's name and text, where in the text it lies, and the hash of what lies there.
    file: String,
    text: Arc<String>,
    range: Range<usize>,
    hash: u64,
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
    /// The bytes `range` of the text, `len` bytes long, were replaced (`Session::edit`): what
    /// the next reading can place without comparing text.
    pub(crate) fn edited(&mut self, range: &Range<usize>, len: usize) {
        let (head, tail) = match self.kept {
            Kept::All => (len, len),
            Kept::Ends { head, tail } => (head, tail),
            Kept::Unknown => return,
        };
        self.kept = Kept::Ends { head: head.min(range.start), tail: tail.min(len - range.end) };
    }

    /// The text was replaced whole (`Session::set_text`): its documents are found by their
    /// text.
    pub(crate) fn replaced(&mut self) {
        self.kept = Kept::Unknown;
    }

    /// Starts a reading of `inputs`: what the last one kept is what this one may reuse.
    pub(crate) fn begin(&mut self, inputs: &[Input]) {
        self.last_starts = self.this.iter().map(|document| document.range.start).collect();
        self.last = std::mem::take(&mut self.this).into_iter().map(Some).collect();
        self.by_hash = None;
        self.window = match (inputs, self.read_input.take()) {
            ([input], Some((name, len))) if name == input.name => {
                self.kept.window(len, input.text.len())
            }
            _ => None,
        };
        self.kept = Kept::All;
        if let [input] = inputs {
            self.read_input = Some((input.name.clone(), input.text.len()));
        }
        self.reused = 0;
        self.read = 0;
        self.by_text = 0;
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
        self.last_starts.clear();
        self.by_hash = None;
        self.window = None;
        self.objects = scenario.objects.len();
    }

    /// Places what `piece` read to last time into `scenario`, if its text was read before and
    /// what it gave can move to where the piece is now; `false` when it must be read.
    pub(crate) fn reuse(
        &mut self,
        piece: &Piece<'_>,
        place: &mut Place,
        input: &Input,
        scenario: &mut Scenario,
    ) -> bool {
        let found = self.where_kept(place, input).or_else(|| self.with_text(piece, place, input));
        let Some(at) = found else { return false };
        let Some(candidate) = self.last[at].as_ref() else { return false };
        let moved = candidate.index != place.index || candidate.first_line != place.first_line;
        if moved && !candidate.movable() {
            return false;
        }
        let Some(mut document) = self.last[at].take() else { return false };
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
        self.this.push(document);
        self.reused += 1;
        true
    }

    /// The document of the last reading at the bytes that were the piece's then, when the
    /// edits since kept them: its text is the piece's.
    fn where_kept(&self, place: &Place, input: &Input) -> Option<usize> {
        let before = self.window?.before(&place.range)?;
        let at = self.last_starts.partition_point(|&start| start < before.start);
        let document = self.last.get(at)?.as_ref()?;
        (document.range == before && document.file == input.name).then_some(at)
    }

    /// A document of the last reading with the piece's text, among those not found by where
    /// they were.
    fn with_text(&mut self, piece: &Piece<'_>, place: &mut Place, input: &Input) -> Option<usize> {
        self.by_text += 1;
        let hash = *place.hash.get_or_insert_with(|| text_hash(&piece.text));
        let (last, window) = (&self.last, self.window);
        let by_hash = self.by_hash.get_or_insert_with(|| {
            let mut by_hash = BTreeMap::<u64, Vec<usize>>::new();
            for (at, document) in last.iter().enumerate() {
                let Some(document) = document else { continue };
                if !window.is_some_and(|window| window.holds(&document.range)) {
                    by_hash.entry(document.hash).or_default().push(at);
                }
            }
            by_hash
        });
        by_hash.get(&hash)?.iter().copied().find(|&at| {
            last[at].as_ref().is_some_and(|document| {
                document.file == input.name
                    && document.text.get(document.range.clone()) == Some(&*piece.text)
            })
        })
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
        let hash = place
            .hash
            .unwrap_or_else(|| text_hash(input.text.get(place.range.clone()).unwrap_or_default()));
        let document = ReadDocument {
            file: input.name.clone(),
            text: Arc::clone(&input.text),
            range: place.range,
            hash,
            index: place.index,
            first_line: place.first_line,
            objects: scenario.objects[mark.objects..].to_vec(),
            diagnostics: scenario.diagnostics[mark.diagnostics..].to_vec(),
            release_fields: scenario.release_fields[mark.release_fields..]
                .iter()
                .map(|&(index, releases)| (index - mark.diagnostics, releases))
                .collect(),
        };
        self.this.push(document);
    }
}

/// Where a document lies, and the hash of its text once it was looked for by it.
#[derive(Debug)]
pub(crate) struct Place {
    index: usize,
    first_line: u32,
    range: Range<usize>,
    hash: Option<u64>,
}

impl Place {
    /// The place of a piece that is a slice of its input (not one whose content starts on its
    /// `---` line, nor the one that stands for what is past the limit).
    pub(crate) fn of(piece: &Piece<'_>) -> Option<Place> {
        let range = piece.range.clone().filter(|_| !piece.past_limit)?;
        Some(Place { index: piece.index, first_line: piece.first_line, range, hash: None })
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
