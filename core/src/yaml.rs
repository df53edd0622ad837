//! A YAML/JSON document tree that remembers the line and column of every node.
//!
//! Kubernetes decodes manifests with `sigs.k8s.io/yaml`, which resolves plain scalars with the
//! YAML 1.1 rules of go-yaml v2 (`yes`, `on`, `0777`, ...). We parse with `saphyr-parser` and apply
//! those rules ourselves, so `publishNotReadyAddresses: yes` means what kubectl thinks it means.

use std::borrow::Cow;
use std::collections::BTreeMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

use crate::limits::{self, MAX_DEPTH, MAX_NODES};
use crate::source::Pos;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub(crate) value: Value,
    pub(crate) pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    /// Invariant: keys are unique and in document order; a duplicate key keeps its first place
    /// and its last value (like encoding/json).
    Map(Vec<Entry>),
}

/// A mapping key: field names Kubernetes objects repeat in every document are shared
/// `'static` strings, so only unusual keys cost an allocation.
pub(crate) type Key = Cow<'static, str>;

/// Keys of Kubernetes manifests (and `kubectl get -o yaml` output) that are not allocated
/// per occurrence (sorted by length, then byte-wise, for the reader's eye).
const COMMON_KEYS: &[&str] = &[
    "ip",
    "app",
    "uid",
    "kind",
    "name",
    "port",
    "spec",
    "tier",
    "time",
    "type",
    "zone",
    "hints",
    "items",
    "ports",
    "ready",
    "ipMode",
    "labels",
    "status",
    "address",
    "ingress",
    "k8s-app",
    "manager",
    "serving",
    "subsets",
    "apiGroup",
    "clientIP",
    "fieldsV1",
    "forNodes",
    "forZones",
    "hostname",
    "metadata",
    "nodeName",
    "nodePort",
    "protocol",
    "selector",
    "addresses",
    "clusterIP",
    "component",
    "endpoints",
    "namespace",
    "operation",
    "targetRef",
    "apiVersion",
    "clusterIPs",
    "conditions",
    "controller",
    "fieldsType",
    "finalizers",
    "generation",
    "ipFamilies",
    "targetPort",
    "addressType",
    "annotations",
    "appProtocol",
    "clusterCIDR",
    "externalIPs",
    "subresource",
    "terminating",
    "externalName",
    "generateName",
    "loadBalancer",
    "managedFields",
    "ipFamilyPolicy",
    "loadBalancerIP",
    "timeoutSeconds",
    "ownerReferences",
    "resourceVersion",
    "sessionAffinity",
    "creationTimestamp",
    "deletionTimestamp",
    "loadBalancerClass",
    "notReadyAddresses",
    "blockOwnerDeletion",
    "healthCheckNodePort",
    "trafficDistribution",
    "externalTrafficPolicy",
    "internalTrafficPolicy",
    "sessionAffinityConfig",
    "app.kubernetes.io/name",
    "kubernetes.io/hostname",
    "loadBalancerSourceRanges",
    "publishNotReadyAddresses",
    "app.kubernetes.io/part-of",
    "app.kubernetes.io/instance",
    "kubernetes.io/service-name",
    "app.kubernetes.io/component",
    "topology.kubernetes.io/zone",
    "app.kubernetes.io/managed-by",
    "allocateLoadBalancerNodePorts",
    "endpointslice.kubernetes.io/managed-by",
];

/// The key for a scalar's text: a shared string when it is common.
fn key(text: Cow<'_, str>) -> Key {
    match common_key(&text) {
        Some(i) => Cow::Borrowed(COMMON_KEYS[i]),
        None => Cow::Owned(text.into_owned()),
    }
}

/// The index of a common key in [`COMMON_KEYS`]: a hash set built at compile time, probed
/// with a few of the text's bytes, so a key costs one or two integer comparisons and at most
/// one text comparison (a `memcmp` call in the WebAssembly build) instead of a search.
fn common_key(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let probe = key_probe(bytes)?;
    let mut slot = key_slot(probe);
    loop {
        let i = usize::from(KEY_SLOTS[slot]).checked_sub(1)?;
        if KEY_PROBES[i] == probe && same_bytes(COMMON_KEYS[i].as_bytes(), bytes) {
            return Some(i);
        }
        slot = (slot + 1) % KEY_SLOTS.len();
    }
}

/// The length and five bytes of a key (first, last and three in between) in one integer: the
/// common keys all differ in it, and reading it costs no loop.
const fn key_probe(bytes: &[u8]) -> Option<u64> {
    let n = bytes.len();
    if n == 0 || n > 255 {
        return None;
    }
    Some(
        n as u64
            | (bytes[0] as u64) << 8
            | (bytes[n - 1] as u64) << 16
            | (bytes[n / 2] as u64) << 24
            | (bytes[(n - 1) / 3] as u64) << 32
            | (bytes[2 * n / 3] as u64) << 40,
    )
}

/// Where a probe's search starts: the top bits of a multiplicative hash.
const fn key_slot(probe: u64) -> usize {
    (probe.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - KEY_SLOT_BITS)) as usize
}

/// The hash set holds up to a quarter as many keys as it has slots.
const KEY_SLOT_BITS: u32 = 9;

/// [`key_probe`] of each common key.
const KEY_PROBES: [u64; COMMON_KEYS.len()] = {
    let mut probes = [0; COMMON_KEYS.len()];
    let mut i = 0;
    while i < COMMON_KEYS.len() {
        match key_probe(COMMON_KEYS[i].as_bytes()) {
            Some(probe) => probes[i] = probe,
            None => panic!("a common key is empty or too long"),
        }
        i += 1;
    }
    probes
};

/// The hash set (open addressing, linear probing): 1 + the index of the key in a slot, 0 for
/// none.
const KEY_SLOTS: [u8; 1 << KEY_SLOT_BITS] = {
    assert!(COMMON_KEYS.len() * 4 <= 1 << KEY_SLOT_BITS && COMMON_KEYS.len() < 255);
    let mut slots = [0u8; 1 << KEY_SLOT_BITS];
    let mut i = 0;
    while i < COMMON_KEYS.len() {
        let mut j = 0;
        while j < i {
            assert!(KEY_PROBES[i] != KEY_PROBES[j], "two common keys have the same probe");
            j += 1;
        }
        let mut slot = key_slot(KEY_PROBES[i]);
        while slots[slot] != 0 {
            slot = (slot + 1) % slots.len();
        }
        slots[slot] = (i + 1) as u8;
        i += 1;
    }
    slots
};

/// Whether two byte strings are equal, compared a word at a time without a call up to 32 bytes.
///
/// Field names are compared with lists of known ones for every key of every document. `==` on
/// slices whose length is not a constant calls `bcmp`; in the WebAssembly plugin that call, with
/// its prologue and wasmtime's epoch check, cost more than the comparison (a million calls for
/// 10,000 Services and their EndpointSlices).
#[inline]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| {
        s.get(at..at + 8).and_then(|w| w.try_into().ok()).map(u64::from_ne_bytes)
    };
    let half = |s: &[u8], at: usize| {
        s.get(at..at + 4).and_then(|w| w.try_into().ok()).map(u32::from_ne_bytes)
    };
    match n {
        0 => true,
        // The first, middle and last byte cover one to three bytes.
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        // Whole words before the last one (at most three), then the last, overlapping them.
        8..=32 => {
            [0, 8, 16].into_iter().take_while(|at| at + 8 < n).all(|at| word(a, at) == word(b, at))
                && word(a, n - 8) == word(b, n - 8)
        }
        _ => a == b,
    }
}

/// Whether two keys made by [`key`] are equal: common keys are the same `'static` string, so
/// two borrowed keys compare by address.
fn same_key(a: &Key, b: &Key) -> bool {
    match (a, b) {
        (Cow::Borrowed(a), Cow::Borrowed(b)) => std::ptr::eq(*a, *b),
        _ => a == b,
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub(crate) key: Key,
    pub(crate) key_pos: Pos,
    pub(crate) value: Node,
}

impl Node {
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries.iter().rev().find(|e| e.key == key).map(|e| &e.value),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The JSON type name Go's encoding/json uses in "cannot unmarshal X into ..." errors.
    pub(crate) fn json_type(&self) -> &'static str {
        match self.value {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::Float(_) => "number",
            Value::Str(_) => "string",
            Value::Seq(_) => "array",
            Value::Map(_) => "object",
        }
    }

    /// Renders the node as compact JSON (used for echoing values in diagnostics).
    pub(crate) fn to_json(&self) -> serde_json::Value {
        match &self.value {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(i) => serde_json::Value::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map_or(serde_json::Value::Null, serde_json::Value::Number),
            Value::Str(s) => serde_json::Value::String(s.clone()),
            Value::Seq(items) => items.iter().map(Node::to_json).collect(),
            Value::Map(entries) => {
                let mut map = serde_json::Map::new();
                for e in entries {
                    map.insert(e.key.to_string(), e.value.to_json());
                }
                serde_json::Value::Object(map)
            }
        }
    }
}

/// One document of a multi-document stream.
#[derive(Debug)]
pub(crate) struct Document<'t> {
    /// Index of the document in its file (0-based).
    pub(crate) index: usize,
    /// 1-based line where the document's text starts.
    pub(crate) first_line: u32,
    /// The document's text: a slice of the stream, except when content follows the `---`.
    pub(crate) text: Cow<'t, str>,
    /// Where `text` lies in the stream, when it is a slice of it.
    pub(crate) range: Option<std::ops::Range<usize>>,
    pub(crate) root: Result<Option<Node>, SyntaxError>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub(crate) pos: Pos,
    pub(crate) message: String,
}

/// Splits a stream on `---` lines and parses every document on its own, so one malformed
/// document never hides the others. Documents borrow the stream's text. After
/// [`limits::MAX_DOCUMENTS`] documents, one more stands for the rest of the stream: a syntax
/// error at its first line, and nothing after it is read.
pub(crate) fn parse_stream(text: &str) -> Vec<Document<'_>> {
    documents(text).collect()
}

/// [`parse_stream`] one document at a time, so a reader can drop each tree before the next
/// one is built.
pub(crate) fn documents(text: &str) -> Documents<'_> {
    Documents {
        text,
        lines: InclusiveLines { text, at: 0 },
        prefix: None,
        start: 0,
        offset: 0,
        first_line: 1,
        line_no: 0,
        saw_content: false,
        count: 0,
        done: false,
        scratch: Scratch::default(),
    }
}

/// The iterator of [`documents`].
pub(crate) struct Documents<'t> {
    text: &'t str,
    lines: InclusiveLines<'t>,
    /// The current document is `prefix` (content written on its `---` line) followed by
    /// `text[start..]` up to the next separator.
    prefix: Option<String>,
    start: usize,
    /// Byte offset of the next line.
    offset: usize,
    first_line: u32,
    line_no: u32,
    saw_content: bool,
    /// Documents handed out.
    count: usize,
    done: bool,
    /// Reused by every document's builder.
    scratch: Scratch,
}

/// A document of the stream before it is parsed: where it lies and its text, for a reader
/// that may already know what the text reads to ([`Documents::next_piece`]).
#[derive(Debug)]
pub(crate) struct Piece<'t> {
    /// Index of the document in its file (0-based).
    pub(crate) index: usize,
    /// 1-based line where the document's text starts.
    pub(crate) first_line: u32,
    /// The document's text: a slice of the stream, except when content follows the `---`.
    pub(crate) text: Cow<'t, str>,
    /// Where `text` lies in the stream, when it is a slice of it.
    pub(crate) range: Option<std::ops::Range<usize>>,
    /// The piece that stands for what is skipped past [`limits::MAX_DOCUMENTS`].
    pub(crate) past_limit: bool,
}

impl<'t> Documents<'t> {
    /// The current document, which ends at byte `end`.
    fn piece(&mut self, end: usize) -> Piece<'t> {
        if self.count == limits::MAX_DOCUMENTS {
            self.done = true;
            let (index, first_line) = (limits::MAX_DOCUMENTS, self.first_line);
            return Piece {
                index,
                first_line,
                text: Cow::Borrowed(""),
                range: None,
                past_limit: true,
            };
        }
        let index = self.count;
        self.count += 1;
        let body = &self.text[self.start..end];
        let (text, range) = match self.prefix.take() {
            None => (Cow::Borrowed(body), Some(self.start..end)),
            Some(mut p) => {
                p.push_str(body);
                (Cow::Owned(p), None)
            }
        };
        Piece { index, first_line: self.first_line, text, range, past_limit: false }
    }

    /// Parses a piece [`Documents::next_piece`] handed out.
    pub(crate) fn parse(&mut self, piece: Piece<'t>) -> Document<'t> {
        if piece.past_limit {
            return too_many_documents(piece.first_line);
        }
        let root = Builder::new(piece.first_line).run(&piece.text, &mut self.scratch);
        let Piece { index, first_line, text, range, .. } = piece;
        Document { index, first_line, text, range, root }
    }

    /// The next document, not yet parsed.
    pub(crate) fn next_piece(&mut self) -> Option<Piece<'t>> {
        if self.done {
            return None;
        }
        while let Some(line) = self.lines.next() {
            let line_start = self.offset;
            self.offset += line.len();
            self.line_no += 1;
            // Only a line that starts with `-` or `.` can be a separator: the others skip the
            // comparisons below.
            if !matches!(line.as_bytes().first(), Some(b'-' | b'.')) {
                if !self.saw_content && !is_blank_or_comment(line) {
                    self.saw_content = true;
                }
                continue;
            }
            let trimmed = line.trim_end_matches(['\n', '\r']);
            let is_separator = trimmed == "---"
                || trimmed.starts_with("--- ")
                || trimmed.starts_with("---\t")
                || trimmed == "...";
            if !is_separator {
                if !self.saw_content && !is_blank_or_comment(trimmed) {
                    self.saw_content = true;
                }
                continue;
            }
            let finished = self.saw_content.then(|| self.piece(line_start));
            self.prefix = None;
            self.start = self.offset;
            self.saw_content = false;
            // `--- {a: 1}` carries content on the separator line itself.
            let rest = trimmed.strip_prefix("---").unwrap_or("").trim();
            if !rest.is_empty() && trimmed != "..." {
                self.prefix = Some(format!("    {rest}\n"));
                self.saw_content = true;
                self.first_line = self.line_no;
            } else {
                self.first_line = self.line_no + 1;
            }
            if finished.is_some() {
                return finished;
            }
        }
        self.done = true;
        if self.saw_content {
            let end = self.text.len();
            return Some(self.piece(end));
        }
        None
    }
}

impl<'t> Iterator for Documents<'t> {
    type Item = Document<'t>;

    fn next(&mut self) -> Option<Document<'t>> {
        let piece = self.next_piece()?;
        Some(self.parse(piece))
    }
}

/// `str::split_inclusive('\n')`, eight bytes at a time ([`scan`]): a line is a few dozen bytes,
/// too short for the `char` searcher's `memchr` and comparison calls to pay off.
struct InclusiveLines<'t> {
    text: &'t str,
    /// Byte offset of the next line.
    at: usize,
}

impl<'t> Iterator for InclusiveLines<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        let start = self.at;
        if start >= self.text.len() {
            return None;
        }
        let end = scan::line_feed(self.text.as_bytes(), start).saturating_add(1);
        let end = end.min(self.text.len());
        self.at = end;
        self.text.get(start..end)
    }
}

/// The document that stands for what is skipped past [`limits::MAX_DOCUMENTS`].
fn too_many_documents(first_line: u32) -> Document<'static> {
    let message = format!(
        "more than {} documents in one input; this one and the rest are skipped",
        limits::MAX_DOCUMENTS
    );
    Document {
        index: limits::MAX_DOCUMENTS,
        first_line,
        text: Cow::Borrowed(""),
        range: None,
        root: Err(SyntaxError { pos: Pos { line: first_line, column: 1 }, message }),
    }
}

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#') || t.starts_with('%')
}

/// The tree of one document's text that starts at `first_line` of its input, as [`documents`]
/// built it (`None` when it has a syntax error or is empty).
pub(crate) fn parse_one(text: &str, first_line: u32) -> Option<Node> {
    Builder::new(first_line).run(text, &mut Scratch::default()).ok().flatten()
}

/// The builder's stacks, kept from one document to the next.
#[derive(Default)]
struct Scratch {
    frames: Vec<Frame>,
    items: Vec<Node>,
    entries: Vec<Entry>,
    fast: fast::Scratch,
}

struct Builder {
    line_offset: u32,
    /// Anchored nodes with their node count and height (what an alias to them adds).
    anchors: BTreeMap<usize, (Node, usize, usize)>,
    /// Nodes decoded so far, alias expansions included.
    nodes: usize,
    /// Of those, nodes that came from alias expansions.
    alias_nodes: usize,
}

/// An open collection. Its children wait on the builder's shared `items` or `entries` stack
/// from `start` on, and move into a vector of exactly their number when it closes (one
/// allocation per collection, none while it grows).
enum Frame {
    Seq { anchor: usize, pos: Pos, start: usize },
    Map { anchor: usize, pos: Pos, start: usize, pending_key: Option<(Key, Pos)> },
}

impl Builder {
    fn new(first_line: u32) -> Self {
        Builder {
            line_offset: first_line.saturating_sub(1),
            anchors: BTreeMap::new(),
            nodes: 0,
            alias_nodes: 0,
        }
    }

    fn pos(&self, span: &Span) -> Pos {
        let line = u32::try_from(span.start.line()).unwrap_or(u32::MAX);
        let col = u32::try_from(span.start.col()).unwrap_or(u32::MAX);
        Pos { line: line.saturating_add(self.line_offset), column: col.saturating_add(1) }
    }

    /// Counts one more node; a document past [`MAX_NODES`] is an error.
    fn count(&mut self, pos: Pos) -> Result<(), SyntaxError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(SyntaxError {
                pos,
                message: format!("document has more than {MAX_NODES} nodes"),
            });
        }
        Ok(())
    }

    fn run(self, text: &str, scratch: &mut Scratch) -> Result<Option<Node>, SyntaxError> {
        match fast::parse(text, self.line_offset.saturating_add(1), &mut scratch.fast) {
            Some(root) => Ok(Some(root)),
            None => self.run_events(text, scratch),
        }
    }

    /// [`Builder::run`] through `saphyr-parser`'s events: every document the fast reader
    /// leaves alone.
    fn run_events(
        mut self,
        text: &str,
        scratch: &mut Scratch,
    ) -> Result<Option<Node>, SyntaxError> {
        let mut parser = Parser::new_from_str(text);
        // A document that failed half-way left its open collections behind.
        scratch.frames.clear();
        scratch.items.clear();
        scratch.entries.clear();
        let Scratch { frames: stack, items, entries, .. } = scratch;
        let mut root: Option<Node> = None;
        while let Some(event) = parser.next_event() {
            let (event, span) = event.map_err(|e| SyntaxError {
                pos: Pos {
                    line: u32::try_from(e.marker().line()).unwrap_or(u32::MAX) + self.line_offset,
                    column: u32::try_from(e.marker().col()).unwrap_or(u32::MAX) + 1,
                },
                message: e.info().to_owned(),
            })?;
            let pos = self.pos(&span);
            let complete: Option<(Node, usize)> = match event {
                Event::Scalar(text, style, anchor, tag) => {
                    let explicit_str = tag.as_ref().is_some_and(|t| t.suffix == "str");
                    let resolved = if style == ScalarStyle::Plain && !explicit_str {
                        resolve_plain(&text)
                    } else {
                        None
                    };
                    // A string in key position becomes the key directly (most keys are
                    // common field names and cost no allocation).
                    if let (None, 0, Some(Frame::Map { pending_key: pending @ None, .. })) =
                        (&resolved, anchor, stack.last_mut())
                    {
                        *pending = Some((key(text), pos));
                        self.count(pos)?;
                        continue;
                    }
                    let value = resolved.unwrap_or_else(|| Value::Str(text.into_owned()));
                    Some((Node { value, pos }, anchor))
                }
                Event::Alias(id) => match self.anchors.get(&id) {
                    Some((node, count, height)) => {
                        // Checked before the copy is made, so a bomb never allocates.
                        if stack.len() + height > MAX_DEPTH {
                            return Err(too_deep(pos));
                        }
                        self.nodes += count - 1;
                        self.alias_nodes += count;
                        if limits::excessive_aliasing(self.nodes, self.alias_nodes) {
                            return Err(SyntaxError {
                                pos,
                                message: "document contains excessive aliasing".to_owned(),
                            });
                        }
                        Some((Node { value: node.value.clone(), pos }, 0))
                    }
                    None => {
                        return Err(SyntaxError { pos, message: "unknown anchor".to_owned() });
                    }
                },
                Event::SequenceStart(..) | Event::MappingStart(..) if stack.len() >= MAX_DEPTH => {
                    return Err(too_deep(pos));
                }
                Event::SequenceStart(anchor, _) => {
                    stack.push(Frame::Seq { anchor, pos, start: items.len() });
                    None
                }
                Event::MappingStart(anchor, _) => {
                    stack.push(Frame::Map { anchor, pos, start: entries.len(), pending_key: None });
                    None
                }
                Event::SequenceEnd => match stack.pop() {
                    Some(Frame::Seq { anchor, pos, start }) => Some((
                        Node { value: Value::Seq(items.drain(start..).collect()), pos },
                        anchor,
                    )),
                    _ => return Err(SyntaxError { pos, message: "unbalanced sequence".into() }),
                },
                Event::MappingEnd => match stack.pop() {
                    Some(Frame::Map { anchor, pos, start, .. }) => Some((
                        Node { value: Value::Map(entries.drain(start..).collect()), pos },
                        anchor,
                    )),
                    _ => return Err(SyntaxError { pos, message: "unbalanced mapping".into() }),
                },
                Event::StreamStart
                | Event::StreamEnd
                | Event::DocumentStart(_)
                | Event::DocumentEnd
                | Event::Nothing => None,
            };
            let Some((node, anchor)) = complete else { continue };
            self.count(pos)?;
            if anchor != 0 {
                let (count, height) = size(&node);
                self.anchors.insert(anchor, (node.clone(), count, height));
            }
            match stack.last_mut() {
                None => {
                    if root.is_none() {
                        root = Some(node);
                    }
                }
                Some(Frame::Seq { .. }) => items.push(node),
                Some(Frame::Map { start, pending_key, .. }) => match pending_key.take() {
                    None => {
                        let key_pos = node.pos;
                        // Other scalars stand for their text (`1: a` is the key "1").
                        let key = match node.value {
                            Value::Str(text) => key(Cow::Owned(text)),
                            Value::Null => Cow::Owned("null".to_owned()),
                            Value::Bool(b) => Cow::Owned(b.to_string()),
                            Value::Int(i) => Cow::Owned(i.to_string()),
                            Value::Float(f) => Cow::Owned(f.to_string()),
                            Value::Seq(_) | Value::Map(_) => return Err(collection_key(&node)),
                        };
                        *pending_key = Some((key, key_pos));
                    }
                    Some((key, key_pos)) => {
                        // Later duplicates win, like encoding/json.
                        if let Some(existing) =
                            entries[*start..].iter_mut().find(|e| same_key(&e.key, &key))
                        {
                            *existing = Entry { key, key_pos, value: node };
                        } else {
                            entries.push(Entry { key, key_pos, value: node });
                        }
                    }
                },
            }
        }
        Ok(root)
    }
}

/// Replaces every string scalar with null, keeping keys, structure and positions (what field
/// positions need once an object is decoded). Iterative: nesting depth is the input's choice.
pub(crate) fn drop_scalars(node: &mut Node) {
    let mut pending: Vec<&mut Node> = vec![node];
    while let Some(node) = pending.pop() {
        if let Value::Str(_) = node.value {
            node.value = Value::Null;
            continue;
        }
        match &mut node.value {
            Value::Seq(items) => pending.extend(items.iter_mut()),
            Value::Map(entries) => pending.extend(entries.iter_mut().map(|e| &mut e.value)),
            Value::Str(_) | Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => {}
        }
    }
}

/// A document nested past [`MAX_DEPTH`].
fn too_deep(pos: Pos) -> SyntaxError {
    SyntaxError { pos, message: format!("document nests deeper than {MAX_DEPTH} levels") }
}

/// The node count and height of a tree (recursion bounded by [`MAX_DEPTH`]).
fn size(node: &Node) -> (usize, usize) {
    let children: Box<dyn Iterator<Item = &Node>> = match &node.value {
        Value::Seq(items) => Box::new(items.iter()),
        Value::Map(entries) => Box::new(entries.iter().map(|e| &e.value)),
        _ => return (1, 0),
    };
    children.map(size).fold((1, 1), |(count, height), (c, h)| (count + c, height.max(h + 1)))
}

/// A sequence or mapping in key position (`? [a]: b`), which sigs.k8s.io/yaml refuses: JSON keys
/// are strings (`convertToJSONableObject`: "unsupported map key of type: %s, key: %+#v, value:
/// %+#v"; svclab names the type and leaves out Go's rendering of key and value). Before,
/// svclab read such a key as its JSON text, which a key nested in keys re-escaped at every
/// level: a hundred bytes took seconds.
fn collection_key(node: &Node) -> SyntaxError {
    let go_type = match node.value {
        Value::Seq(_) => "[]interface {}",
        _ => "map[interface {}]interface {}",
    };
    SyntaxError { pos: node.pos, message: format!("unsupported map key of type: {go_type}") }
}

/// Resolves an untagged plain scalar the way go-yaml v2 (YAML 1.1) does; `None` when it is a
/// string (the caller keeps the text it already has).
#[inline(always)]
fn resolve_plain(text: &str) -> Option<Value> {
    // Most scalars (field names, names, addresses) start with a letter no YAML 1.1 word or
    // number starts with: they are strings, decided here without a call (the readers ask for
    // every key and scalar).
    match text.as_bytes().first() {
        None => Some(Value::Null),
        Some(&first) if WORD_STARTS[usize::from(first)] || first.is_ascii_digit() => {
            resolve_word_or_number(text, first)
        }
        Some(_) => None,
    }
}

/// [`resolve_plain`] for a text that starts like a word or a number.
#[inline(never)]
fn resolve_word_or_number(text: &str, first: u8) -> Option<Value> {
    if first.is_ascii_digit() {
        return resolve_number(text);
    }
    if let Some(value) = resolve_word(text) {
        return Some(value);
    }
    if matches!(first, b'-' | b'+' | b'.') { resolve_number(text) } else { None }
}

/// The first bytes of the words of [`WORDS`] and of signed or fractional numbers, as a table.
const WORD_STARTS: [bool; 256] = {
    let mut table = [false; 256];
    table[b'+' as usize] = true;
    table[b'-' as usize] = true;
    table[b'.' as usize] = true;
    let mut i = 0;
    while i < WORDS.len() {
        table[WORDS[i].0.as_bytes()[0] as usize] = true;
        i += 1;
    }
    table
};

/// The words of YAML 1.1 that go-yaml v2 resolves.
fn resolve_word(text: &str) -> Option<Value> {
    if text.len() > MAX_WORD {
        return None;
    }
    // A search over integers: no text comparison (a `memcmp` call in the WebAssembly build) per
    // candidate word.
    let packed = word(text.as_bytes());
    let i = PACKED_WORDS.binary_search_by_key(&packed, |&(w, _)| w).ok()?;
    Some(match PACKED_WORDS[i].1 {
        Word::Null => Value::Null,
        Word::True => Value::Bool(true),
        Word::False => Value::Bool(false),
        Word::Infinity => Value::Float(f64::INFINITY),
        Word::NegativeInfinity => Value::Float(f64::NEG_INFINITY),
        Word::NaN => Value::Float(f64::NAN),
    })
}

/// What a YAML 1.1 word means.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Word {
    Null,
    True,
    False,
    Infinity,
    NegativeInfinity,
    NaN,
}

/// go-yaml v2's words (`resolve.go`'s table; the empty text is null too, decided before).
const WORDS: [(&str, Word); 38] = [
    ("~", Word::Null),
    ("null", Word::Null),
    ("Null", Word::Null),
    ("NULL", Word::Null),
    ("y", Word::True),
    ("Y", Word::True),
    ("yes", Word::True),
    ("Yes", Word::True),
    ("YES", Word::True),
    ("true", Word::True),
    ("True", Word::True),
    ("TRUE", Word::True),
    ("on", Word::True),
    ("On", Word::True),
    ("ON", Word::True),
    ("n", Word::False),
    ("N", Word::False),
    ("no", Word::False),
    ("No", Word::False),
    ("NO", Word::False),
    ("false", Word::False),
    ("False", Word::False),
    ("FALSE", Word::False),
    ("off", Word::False),
    ("Off", Word::False),
    ("OFF", Word::False),
    (".inf", Word::Infinity),
    (".Inf", Word::Infinity),
    (".INF", Word::Infinity),
    ("+.inf", Word::Infinity),
    ("+.Inf", Word::Infinity),
    ("+.INF", Word::Infinity),
    ("-.inf", Word::NegativeInfinity),
    ("-.Inf", Word::NegativeInfinity),
    ("-.INF", Word::NegativeInfinity),
    (".nan", Word::NaN),
    (".NaN", Word::NaN),
    (".NAN", Word::NaN),
];

/// [`WORDS`] packed by [`word`] and sorted, for a binary search.
const PACKED_WORDS: [(u64, Word); WORDS.len()] = {
    let mut packed = [(0, Word::Null); WORDS.len()];
    let mut i = 0;
    while i < WORDS.len() {
        // Insertion sort: the table is small and this runs at compile time.
        let entry = (word(WORDS[i].0.as_bytes()), WORDS[i].1);
        let mut j = i;
        while j > 0 && packed[j - 1].0 > entry.0 {
            packed[j] = packed[j - 1];
            j -= 1;
        }
        packed[j] = entry;
        i += 1;
    }
    packed
};

/// The longest word of [`WORDS`]: at most the seven bytes [`word`] packs.
const MAX_WORD: usize = {
    let mut longest = 0;
    let mut i = 0;
    while i < WORDS.len() {
        if WORDS[i].0.len() > longest {
            longest = WORDS[i].0.len();
        }
        i += 1;
    }
    assert!(longest <= 7);
    longest
};

/// Up to seven bytes and their number in one integer: for texts of at most seven bytes, equal
/// integers are equal texts.
const fn word(bytes: &[u8]) -> u64 {
    let mut packed = (bytes.len() as u64) << 56;
    let mut i = 0;
    while i < bytes.len() && i < 7 {
        packed |= (bytes[i] as u64) << (8 * i);
        i += 1;
    }
    packed
}

/// An int or float of go-yaml v2's resolver, or `None` for a string.
fn resolve_number(text: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    // Decimal digits without a leading zero (ports, counts) are the common case: parsed here in
    // one pass. Eighteen digits always fit an i64.
    if bytes.len() <= 18
        && (bytes.len() == 1 || bytes[0] != b'0')
        && bytes.iter().all(u8::is_ascii_digit)
    {
        let value = bytes.iter().fold(0_i64, |value, &b| value * 10 + i64::from(b - b'0'));
        return Some(Value::Int(value));
    }
    // Two dots make neither an int nor a float (IPv4 addresses, versions).
    if bytes.iter().filter(|&&b| b == b'.').nth(1).is_some() {
        return None;
    }
    // Underscores are digit separators in YAML 1.1; most numbers have none.
    let plain: Cow<'_, str> =
        if text.contains('_') { Cow::Owned(text.replace('_', "")) } else { Cow::Borrowed(text) };
    if let Some(i) = parse_go_int(&plain) {
        return Some(Value::Int(i));
    }
    if looks_like_float(&plain)
        && let Ok(f) = plain.parse::<f64>()
    {
        return Some(Value::Float(f));
    }
    None
}

/// `strconv.ParseInt(s, 0, 64)`: optional sign, then `0x`, `0o`, `0b` or a leading-zero octal.
fn parse_go_int(s: &str) -> Option<i64> {
    let (negative, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let (radix, body) = if let Some(rest) = digits.strip_prefix("0x").or(digits.strip_prefix("0X"))
    {
        (16, rest)
    } else if let Some(rest) = digits.strip_prefix("0o").or(digits.strip_prefix("0O")) {
        (8, rest)
    } else if let Some(rest) = digits.strip_prefix("0b").or(digits.strip_prefix("0B")) {
        (2, rest)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = i128::from_str_radix(body, radix).ok()?;
    let value = if negative { -magnitude } else { magnitude };
    i64::try_from(value).ok()
}

fn looks_like_float(s: &str) -> bool {
    let body = s.trim_start_matches(['-', '+']);
    !body.is_empty()
        && body.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'))
        && body.chars().any(|c| c.is_ascii_digit())
}

/// The first document of `text` the fast reader reads differently from the general one (its
/// tree next to the general reader's answer), or `None` when they agree on every document the
/// fast reader takes. The fast reader may leave any document to the general one, but what it
/// takes it must read exactly as `saphyr-parser`'s events do: the `yaml_readers` fuzz target
/// and the tests hold it to that.
pub(crate) fn fast_reader_disagreement(text: &str) -> Option<String> {
    documents(text).find_map(|doc| {
        let fast = fast::parse(&doc.text, doc.first_line, &mut fast::Scratch::default())?;
        let events = Builder::new(doc.first_line).run_events(&doc.text, &mut Scratch::default());
        let fast = format!("{:?}", Ok::<_, SyntaxError>(Some(fast)));
        let events = format!("{events:?}");
        (fast != events)
            .then(|| format!("document {}: fast reader {fast}, event reader {events}", doc.index))
    })
}

mod fast;
mod scan;

#[cfg(test)]
mod tests;
