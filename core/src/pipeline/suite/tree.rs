//! A test suite file's YAML, as a tree whose every node knows its line, column and byte span.
//!
//! The scenario reader's tree (`crate::yaml`) keeps only where a node starts, which is all a
//! diagnostic needs; `svclab test --update` also has to know where an expectation's value ends,
//! to replace exactly its text and keep every comment and key around it. Scalars keep their text
//! as written (no YAML 1.1 resolution): the suite reader decides per key what a value means.

use std::collections::BTreeMap;
use std::ops::Range;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

use crate::limits::MAX_DEPTH;
use crate::source::Pos;

/// One node with where it was written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub(crate) value: Value,
    pub(crate) pos: Pos,
    /// Byte range of the node's text in the file (a block scalar's ends after its last line).
    pub(crate) span: Range<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// A scalar, as written (`quoted` for single- and double-quoted ones); an empty plain
    /// scalar (`key:` with nothing after it) is `Null`.
    Scalar {
        text: String,
        quoted: bool,
    },
    Null,
    Seq {
        items: Vec<Node>,
        flow: bool,
    },
    /// Invariant: keys are unique (a repeated key is an error, not a silent last-wins).
    Map {
        entries: Vec<Entry>,
        flow: bool,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub(crate) key: String,
    pub(crate) key_pos: Pos,
    /// Byte offset just past the key's text (where `:` follows).
    pub(crate) key_end: usize,
    pub(crate) value: Node,
}

/// A file that does not parse: where, and the parser's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub(crate) pos: Pos,
    pub(crate) message: String,
}

impl Node {
    /// The value of `key` in a mapping.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map { entries, .. } => entries.iter().find(|e| e.key == key).map(|e| &e.value),
            _ => None,
        }
    }

    /// A mapping's entries (none for other nodes).
    pub(crate) fn entries(&self) -> &[Entry] {
        match &self.value {
            Value::Map { entries, .. } => entries,
            _ => &[],
        }
    }

    /// The text of a scalar.
    pub(crate) fn scalar(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// What the node is, in the words a "must be" message uses.
    pub(crate) fn shape(&self) -> &'static str {
        match self.value {
            Value::Scalar { .. } => "a scalar",
            Value::Null => "empty",
            Value::Seq { .. } => "a list",
            Value::Map { .. } => "a mapping",
        }
    }
}

/// Where lines start, to turn the parser's character positions into byte offsets.
struct Lines<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(at, _)| at + 1));
        Lines { text, starts }
    }

    /// The byte offset of a 1-based line and 0-based character column.
    fn offset(&self, line: usize, col: usize) -> usize {
        let Some(&start) = self.starts.get(line.saturating_sub(1)) else {
            return self.text.len();
        };
        let rest = &self.text[start..];
        rest.char_indices().nth(col).map_or(self.text.len(), |(at, _)| start + at)
    }
}

/// An open collection while the events arrive.
enum Frame {
    Seq {
        anchor: usize,
        start: usize,
        pos: Pos,
        flow: bool,
        items: Vec<Node>,
    },
    Map {
        anchor: usize,
        start: usize,
        pos: Pos,
        flow: bool,
        entries: Vec<Entry>,
        key: Option<Node>,
    },
}

/// Parses every document of a file; each document's root, in order (empty documents are
/// left out). The first syntax error ends the file.
pub(crate) fn parse(text: &str) -> Result<Vec<Node>, SyntaxError> {
    let lines = Lines::new(text);
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: BTreeMap<usize, Node> = BTreeMap::new();
    let mut roots = Vec::new();
    while let Some(event) = parser.next_event() {
        let (event, span) = event.map_err(|e| SyntaxError {
            pos: Pos {
                line: u32::try_from(e.marker().line()).unwrap_or(u32::MAX),
                column: u32::try_from(e.marker().col()).unwrap_or(u32::MAX).saturating_add(1),
            },
            message: e.info().to_owned(),
        })?;
        let pos = pos_of(&span);
        let start = lines.offset(span.start.line(), span.start.col());
        let complete = match event {
            Event::Scalar(value, style, anchor, _) => {
                let end = scalar_end(text, start, &lines, &span, style);
                let value = match style {
                    ScalarStyle::Plain if value.is_empty() || value == "~" || value == "null" => {
                        Value::Null
                    }
                    ScalarStyle::Plain => Value::Scalar { text: value.into_owned(), quoted: false },
                    ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
                        Value::Scalar { text: value.into_owned(), quoted: true }
                    }
                    ScalarStyle::Literal | ScalarStyle::Folded => {
                        Value::Scalar { text: value.into_owned(), quoted: false }
                    }
                };
                Some((Node { value, pos, span: start..end }, anchor))
            }
            Event::Alias(id) => match anchors.get(&id) {
                Some(node) => {
                    let end = lines.offset(span.end.line(), span.end.col());
                    Some((Node { value: node.value.clone(), pos, span: start..end }, 0))
                }
                None => return Err(SyntaxError { pos, message: "unknown anchor".to_owned() }),
            },
            Event::SequenceStart(..) | Event::MappingStart(..) if stack.len() >= MAX_DEPTH => {
                return Err(SyntaxError {
                    pos,
                    message: format!("nesting deeper than {MAX_DEPTH} levels"),
                });
            }
            Event::SequenceStart(anchor, _) => {
                let flow = text[start..].starts_with('[');
                // A block list written at its key's own indentation starts, for the parser,
                // after its first dash: the span and column start at the dash.
                let (start, pos) = match dash_before(text, start) {
                    Some(dash) if !flow => {
                        let back = u32::try_from(text[dash..start].chars().count()).unwrap_or(0);
                        (dash, Pos { column: pos.column.saturating_sub(back), ..pos })
                    }
                    _ => (start, pos),
                };
                stack.push(Frame::Seq { anchor, start, pos, flow, items: Vec::new() });
                None
            }
            Event::MappingStart(anchor, _) => {
                let flow = text[start..].starts_with('{');
                let entries = Vec::new();
                stack.push(Frame::Map { anchor, start, pos, flow, entries, key: None });
                None
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Frame::Seq { anchor, start, pos, flow, items }) => {
                    let end = collection_end(flow, start, items.last().map(|n| n.span.end));
                    let end = if flow { close_after(text, end) } else { end };
                    Some((
                        Node { value: Value::Seq { items, flow }, pos, span: start..end },
                        anchor,
                    ))
                }
                _ => return Err(SyntaxError { pos, message: "unbalanced sequence".into() }),
            },
            Event::MappingEnd => match stack.pop() {
                Some(Frame::Map { anchor, start, pos, flow, entries, .. }) => {
                    let last = entries.last().map(|e| e.value.span.end);
                    let end = collection_end(flow, start, last);
                    let end = if flow { close_after(text, end) } else { end };
                    let value = Value::Map { entries, flow };
                    Some((Node { value, pos, span: start..end }, anchor))
                }
                _ => return Err(SyntaxError { pos, message: "unbalanced mapping".into() }),
            },
            Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart(_)
            | Event::DocumentEnd
            | Event::Nothing => None,
        };
        let Some((node, anchor)) = complete else { continue };
        if anchor != 0 {
            anchors.insert(anchor, node.clone());
        }
        match stack.last_mut() {
            None => {
                if node.value != Value::Null {
                    roots.push(node);
                }
            }
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => *key = Some(node),
                Some(key_node) => {
                    let Value::Scalar { text: key, .. } = key_node.value else {
                        return Err(SyntaxError {
                            pos: key_node.pos,
                            message: "a key must be a string".to_owned(),
                        });
                    };
                    if entries.iter().any(|e| e.key == key) {
                        return Err(SyntaxError {
                            pos: key_node.pos,
                            message: format!("duplicate key `{key}`"),
                        });
                    }
                    let key_end = key_node.span.end;
                    entries.push(Entry { key, key_pos: key_node.pos, key_end, value: node });
                }
            },
        }
    }
    Ok(roots)
}

/// The dash before `at` on its line, when only spaces lie between them.
fn dash_before(text: &str, at: usize) -> Option<usize> {
    if text[at..].starts_with('-') {
        return None;
    }
    let before = text[..at].trim_end_matches(' ');
    before.ends_with('-').then(|| before.len() - 1)
}

fn pos_of(span: &Span) -> Pos {
    Pos {
        line: u32::try_from(span.start.line()).unwrap_or(u32::MAX),
        column: u32::try_from(span.start.col()).unwrap_or(u32::MAX).saturating_add(1),
    }
}

/// Where a collection's text ends before its closing bracket: after its last child, else at
/// its start.
fn collection_end(flow: bool, start: usize, last_child: Option<usize>) -> usize {
    match last_child {
        Some(end) => end,
        None if flow => start + 1,
        None => start,
    }
}

/// Past the closing bracket of a flow collection whose content ends at `from`.
fn close_after(text: &str, from: usize) -> usize {
    let rest = &text[from.min(text.len())..];
    let mut depth = 0usize;
    for (at, c) in rest.char_indices() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' if depth == 0 => return from + at + 1,
            ']' | '}' => depth -= 1,
            _ => {}
        }
    }
    text.len()
}

/// Where a scalar's text ends. The parser's spans of quoted scalars in block context run on
/// over a trailing comment, so quotes are matched here; a plain scalar's span is right.
fn scalar_end(
    text: &str,
    start: usize,
    lines: &Lines<'_>,
    span: &Span,
    style: ScalarStyle,
) -> usize {
    let given = lines.offset(span.end.line(), span.end.col());
    match style {
        ScalarStyle::DoubleQuoted => {
            let mut escaped = false;
            for (at, c) in text[start..].char_indices().skip(1) {
                match c {
                    '\\' if !escaped => escaped = true,
                    '"' if !escaped => return start + at + 1,
                    _ => escaped = false,
                }
            }
            given
        }
        ScalarStyle::SingleQuoted => {
            let bytes = text.as_bytes();
            let mut at = start + 1;
            while at < bytes.len() {
                if bytes[at] == b'\'' {
                    if bytes.get(at + 1) == Some(&b'\'') {
                        at += 2;
                        continue;
                    }
                    return at + 1;
                }
                at += 1;
            }
            given
        }
        ScalarStyle::Plain | ScalarStyle::Literal | ScalarStyle::Folded => given.max(start),
    }
}
