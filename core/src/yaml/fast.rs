//! A fast reader for the plain block YAML that manifests and `kubectl get -o yaml` are mostly
//! made of: block mappings and sequences, one-line plain and quoted scalars, one-line flow
//! sequences and mappings of scalars. It builds exactly the tree the general reader builds
//! (same values, keys and positions) or gives up on the whole document at the first thing
//! outside that subset (anchors, tags, block scalars, multi-line scalars, escapes, comments
//! after content, tabs, non-ASCII text, anything malformed), and the general reader takes it:
//! every error message still comes from there. At 10,000 Services it reads a scenario several
//! times faster than the general event parser.

use std::borrow::Cow;

use super::{Entry, Node, Value, key, resolve_plain, same_key, scan};
use crate::limits::{MAX_DEPTH, MAX_NODES};
use crate::source::Pos;

/// What the fast reader keeps from one document to the next: its line table, and the stacks
/// its collections are built on (a mapping's entries wait there and move into a vector of
/// exactly their number when it closes), so a document allocates only what its tree keeps.
#[derive(Default)]
pub(super) struct Scratch {
    /// Always empty between documents: kept for its allocation.
    lines: Vec<Line<'static>>,
    /// The entries of the open mappings, innermost last.
    entries: Vec<Entry>,
    /// The items of the open sequences, innermost last.
    items: Vec<Node>,
}

/// The tree of a document whose text starts at `first_line`, or `None` when the document is
/// empty or not in the subset.
pub(super) fn parse(text: &str, first_line: u32, scratch: &mut Scratch) -> Option<Node> {
    let mut lines = recycle(std::mem::take(&mut scratch.lines));
    let root = read(text, first_line, &mut lines, scratch);
    lines.clear();
    scratch.lines = recycle(lines);
    root
}

/// An empty vector for lines of another text, in the same allocation: lines of any two texts
/// have one layout, and the standard library collects such a vector in place.
#[allow(clippy::unnecessary_filter_map, reason = "`filter` cannot change the element type")]
fn recycle<'b>(lines: Vec<Line<'_>>) -> Vec<Line<'b>> {
    lines.into_iter().filter_map(|_| None).collect()
}

fn read<'t>(
    text: &'t str,
    first_line: u32,
    lines: &mut Vec<Line<'t>>,
    scratch: &mut Scratch,
) -> Option<Node> {
    split_lines(text, first_line, lines)?;
    let indent = lines.first()?.indent;
    scratch.entries.clear();
    scratch.items.clear();
    let mut reader = Reader {
        lines,
        next: 0,
        nodes: 0,
        entries: &mut scratch.entries,
        items: &mut scratch.items,
    };
    let root = reader.block(indent, 0)?;
    // Everything must have been read (a less indented line after the root is an error).
    (reader.next == reader.lines.len()).then_some(root)
}

/// The lines of `text` that have content, numbered from `first_line`; `None` at the first byte
/// other than printable ASCII and line feeds (saphyr-parser refuses other control characters,
/// "found unprintable character", YAML 1.2 `c-printable`, even inside comments) or at a line
/// outside the subset.
fn split_lines<'t>(text: &'t str, first_line: u32, lines: &mut Vec<Line<'t>>) -> Option<()> {
    let bytes = text.as_bytes();
    let (mut start, mut no) = (0, first_line);
    loop {
        let end = scan::line_feed_or_unprintable(bytes, start);
        let at_line_feed = match bytes.get(end) {
            None => false,
            Some(b'\n') => true,
            Some(_) => return None,
        };
        push_line(lines, text.get(start..end)?, no)?;
        if !at_line_feed {
            return Some(());
        }
        start = end + 1;
        no = no.checked_add(1)?;
    }
}

/// Adds line `no` to `lines` when it has content; `None` when the line is outside the subset.
fn push_line<'t>(lines: &mut Vec<Line<'t>>, line: &'t str, no: u32) -> Option<()> {
    let content = line.trim_start_matches(' ');
    let bytes = content.as_bytes();
    match bytes.first() {
        None | Some(b'#') => return Some(()),
        // Separator-like lines, directives and trailing spaces are left to the general reader.
        Some(b'-') if content.starts_with("---") => return None,
        Some(b'.') if content.starts_with("...") => return None,
        Some(b'%') => return None,
        Some(_) if bytes.last() == Some(&b' ') => return None,
        Some(_) => {}
    }
    lines.push(Line { line: no, indent: line.len() - content.len(), content });
    Some(())
}

/// A line with content.
struct Line<'t> {
    /// 1-based line in the input.
    line: u32,
    /// Spaces before the content.
    indent: usize,
    content: &'t str,
}

struct Reader<'t, 's> {
    lines: &'s mut [Line<'t>],
    /// The next line to read.
    next: usize,
    /// Nodes built, as the general reader counts them (keys included).
    nodes: usize,
    /// [`Scratch::entries`].
    entries: &'s mut Vec<Entry>,
    /// [`Scratch::items`].
    items: &'s mut Vec<Node>,
}

/// Byte classes: one table lookup per byte instead of a chain of compares.
const CLASSES: [u8; 256] = classes();
/// May be part of a key read here (field names, label and annotation keys).
const KEY: u8 = 1;
/// Ends or changes a plain scalar somewhere, so the scalar is left to the general reader.
const INDICATOR: u8 = 2;
/// `:` and space: they end a plain scalar only next to certain bytes.
const COLON_OR_SPACE: u8 = 4;
/// Ends or nests an item of a flow collection, or quotes it.
const FLOW: u8 = 8;

const fn classes() -> [u8; 256] {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() || matches!(c, b'.' | b'/' | b'_' | b'-') {
            table[b] |= KEY;
        }
        if matches!(
            c,
            b'#' | b'"'
                | b'\''
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b','
                | b'&'
                | b'*'
                | b'!'
                | b'|'
                | b'>'
                | b'%'
                | b'@'
                | b'`'
                | b'\\'
                | b'?'
        ) {
            table[b] |= INDICATOR;
        }
        if matches!(c, b':' | b' ') {
            table[b] |= COLON_OR_SPACE;
        }
        if matches!(c, b',' | b'[' | b']' | b'{' | b'}' | b'"' | b'\'') {
            table[b] |= FLOW;
        }
        b += 1;
    }
    table
}

fn class(b: u8) -> u8 {
    CLASSES[usize::from(b)]
}

/// A block sequence item: `-` then a space or the end of the line.
fn is_item(content: &str) -> bool {
    let bytes = content.as_bytes();
    bytes.first() == Some(&b'-') && bytes.get(1).is_none_or(|&b| b == b' ')
}

/// The key of a `key: value` or `key:` line, when the line is one.
fn key_of(content: &str) -> Option<&str> {
    // `:` is no key character: the name ends at the first byte that is not one, which must be
    // the colon.
    let bytes = content.as_bytes();
    let colon = bytes.iter().position(|&b| class(b) & KEY == 0)?;
    if bytes[colon] != b':' || !bytes.first()?.is_ascii_alphanumeric() {
        return None;
    }
    let after = bytes.get(colon + 1..)?;
    (after.is_empty() || after[0] == b' ').then(|| &content[..colon])
}

/// Whether a plain scalar's `text` (not empty) is one the fast reader reads as the general
/// reader does: it starts like a plain scalar and holds no indicator, no `: ` (a mapping, or an
/// error) and, inside a flow collection, no `:` at all and no ` - ` chunk.
fn plain_in_subset(text: &str, flow: bool) -> bool {
    let bytes = text.as_bytes();
    let Some(&first) = bytes.first() else { return false };
    let starts_plain = first.is_ascii_alphanumeric()
        || matches!(first, b'.' | b'/' | b'_' | b'+' | b'~')
        // `- ` opens a block sequence entry, never a plain scalar.
        || (first == b'-' && bytes.get(1).is_some_and(|&b| b != b' '));
    if !starts_plain || bytes.last() == Some(&b':') {
        return false;
    }
    for (i, &c) in bytes.iter().enumerate() {
        if class(c) & (INDICATOR | COLON_OR_SPACE) == 0 {
            continue;
        }
        let next = bytes.get(i + 1).copied();
        match c {
            // `a: b` inside a value is a mapping (or an error); a flow scalar ends at `:`.
            b':' if flow || next == Some(b' ') => return false,
            // saphyr starts a new chunk of a flow plain scalar after a space and refuses one
            // that opens with `-` before `,]}` ("plain scalar cannot start with '-' followed
            // by ,[]{}"); ` - ` is left to it too rather than guessed.
            b' ' if flow && next == Some(b'-') && matches!(bytes.get(i + 2), None | Some(b' ')) => {
                return false;
            }
            b':' | b' ' => {}
            _ => return false,
        }
    }
    true
}

impl<'t> Reader<'t, '_> {
    fn pos(&self, line: u32, column: usize) -> Option<Pos> {
        Some(Pos { line, column: u32::try_from(column + 1).ok()? })
    }

    /// Counts one more node; past [`MAX_NODES`] the general reader says so.
    fn count(&mut self) -> Option<()> {
        self.nodes += 1;
        (self.nodes <= MAX_NODES).then_some(())
    }

    /// The block collection whose first line is the next one, at `indent`.
    fn block(&mut self, indent: usize, depth: usize) -> Option<Node> {
        if depth + 2 >= MAX_DEPTH {
            return None;
        }
        let line = self.lines.get(self.next)?;
        if is_item(line.content) {
            self.sequence(indent, depth, false)
        } else if key_of(line.content).is_some() {
            self.mapping(indent, depth)
        } else {
            None
        }
    }

    fn mapping(&mut self, indent: usize, depth: usize) -> Option<Node> {
        let first = self.lines.get(self.next)?;
        let pos = self.pos(first.line, indent)?;
        let start = self.entries.len();
        while let Some(line) = self.lines.get(self.next) {
            if line.indent < indent {
                break;
            }
            if line.indent > indent || is_item(line.content) {
                return None;
            }
            let (line_no, content) = (line.line, line.content);
            let name = key_of(content)?;
            if resolve_plain(name).is_some() {
                return None;
            }
            let key_pos = self.pos(line_no, indent)?;
            self.count()?;
            let after = &content[name.len() + 1..];
            let rest = after.trim_start_matches(' ');
            self.next += 1;
            let value = if rest.is_empty() {
                match self.lines.get(self.next) {
                    Some(next) if next.indent > indent => self.block(next.indent, depth + 1)?,
                    Some(next) if next.indent == indent && is_item(next.content) => {
                        self.sequence(indent, depth + 1, true)?
                    }
                    // An empty value (null at a position only the general reader knows).
                    _ => return None,
                }
            } else {
                let column = indent + name.len() + 1 + (after.len() - rest.len());
                let value = self.inline(rest, line_no, column)?;
                if self.lines.get(self.next).is_some_and(|next| next.indent > indent) {
                    return None;
                }
                value
            };
            let key = key(Cow::Borrowed(name));
            // Later duplicates win, like encoding/json (as the general reader does).
            let open = self.entries.get_mut(start..)?;
            if let Some(existing) = open.iter_mut().find(|e| same_key(&e.key, &key)) {
                *existing = Entry { key, key_pos, value };
            } else {
                self.entries.push(Entry { key, key_pos, value });
            }
        }
        self.count()?;
        // The nested collections read above took only their own entries off the stack.
        Some(Node { value: Value::Map(self.entries.drain(start..).collect()), pos })
    }

    fn sequence(&mut self, indent: usize, depth: usize, indentless: bool) -> Option<Node> {
        // As the general reader places them: a sequence at its first dash, an indentless one
        // (items at their key's indentation) where its first item's content starts.
        let first = self.lines.get(self.next)?;
        let after = first.content.get(1..)?;
        let column = if indentless {
            indent + 1 + (after.len() - after.trim_start_matches(' ').len())
        } else {
            indent
        };
        let pos = self.pos(first.line, column)?;
        let start = self.items.len();
        while let Some(line) = self.lines.get(self.next) {
            if line.indent < indent || (line.indent == indent && !is_item(line.content)) {
                break;
            }
            if line.indent > indent {
                return None;
            }
            let (line_no, content) = (line.line, line.content);
            let after = content.get(1..)?;
            let rest = after.trim_start_matches(' ');
            if rest.is_empty() || is_item(rest) {
                return None;
            }
            let column = indent + 1 + (after.len() - rest.len());
            let item = if key_of(rest).is_some() {
                // `- key: value` opens a mapping at the key's column: read the line as if the
                // dash were a space.
                let line = self.lines.get_mut(self.next)?;
                line.indent = column;
                line.content = rest;
                self.mapping(column, depth + 1)?
            } else {
                let item = self.inline(rest, line_no, column)?;
                self.next += 1;
                if self.lines.get(self.next).is_some_and(|next| next.indent > indent) {
                    return None;
                }
                item
            };
            self.items.push(item);
        }
        self.count()?;
        // The nested collections read above took only their own items off the stack.
        Some(Node { value: Value::Seq(self.items.drain(start..).collect()), pos })
    }

    /// A value written on its key's or dash's line, at 0-based `column`.
    fn inline(&mut self, text: &str, line: u32, column: usize) -> Option<Node> {
        let pos = self.pos(line, column)?;
        match text.as_bytes()[0] {
            b'[' => {
                let inner = text.strip_prefix('[')?.strip_suffix(']')?;
                let start = self.items.len();
                for item in flow_items(inner) {
                    let (offset, item) = item?;
                    let node = self.flow_scalar(item, line, column + 1 + offset)?;
                    self.items.push(node);
                }
                self.count()?;
                Some(Node { value: Value::Seq(self.items.drain(start..).collect()), pos })
            }
            b'{' => {
                let inner = text.strip_prefix('{')?.strip_suffix('}')?;
                let start = self.entries.len();
                for item in flow_items(inner) {
                    let (offset, item) = item?;
                    let name = key_of(item)?;
                    if resolve_plain(name).is_some() {
                        return None;
                    }
                    let after = &item[name.len() + 1..];
                    let value_text = after.trim_start_matches(' ');
                    if value_text.is_empty() {
                        return None;
                    }
                    let key_pos = self.pos(line, column + 1 + offset)?;
                    self.count()?;
                    let value_column =
                        column + 1 + offset + name.len() + 1 + (after.len() - value_text.len());
                    let value = self.flow_scalar(value_text, line, value_column)?;
                    let key = key(Cow::Borrowed(name));
                    if self.entries.get(start..)?.iter().any(|e| same_key(&e.key, &key)) {
                        return None;
                    }
                    self.entries.push(Entry { key, key_pos, value });
                }
                self.count()?;
                Some(Node { value: Value::Map(self.entries.drain(start..).collect()), pos })
            }
            _ => self.scalar(text, pos, false),
        }
    }

    /// A scalar inside a flow collection.
    fn flow_scalar(&mut self, text: &str, line: u32, column: usize) -> Option<Node> {
        let pos = self.pos(line, column)?;
        self.scalar(text, pos, true)
    }

    /// A quoted scalar without escapes, or a plain scalar of ordinary characters.
    fn scalar(&mut self, text: &str, pos: Pos, flow: bool) -> Option<Node> {
        let value = match text.as_bytes()[0] {
            quote @ (b'"' | b'\'') => {
                let inner = text.get(1..text.len().checked_sub(1)?)?;
                let closed = text.len() >= 2 && text.as_bytes()[text.len() - 1] == quote;
                if !closed || inner.bytes().any(|c| c == quote || c == b'\\') {
                    return None;
                }
                Value::Str(inner.to_owned())
            }
            _ => {
                if !plain_in_subset(text, flow) {
                    return None;
                }
                resolve_plain(text).unwrap_or_else(|| Value::Str(text.to_owned()))
            }
        };
        self.count()?;
        Some(Node { value, pos })
    }
}

/// The items of a one-line flow collection's inside, each with its byte offset: split on
/// commas, trimmed of spaces. An item is `None` when it is empty (a trailing comma) or nested,
/// or when a quoted item was split apart at a comma inside it: the caller gives up.
fn flow_items(inner: &str) -> FlowItems<'_> {
    FlowItems { rest: inner, offset: 0, done: inner.bytes().all(|b| b == b' ') }
}

/// The iterator of [`flow_items`].
struct FlowItems<'t> {
    /// What follows the items handed out.
    rest: &'t str,
    /// Where `rest` starts in the collection's inside.
    offset: usize,
    done: bool,
}

impl<'t> Iterator for FlowItems<'t> {
    type Item = Option<(usize, &'t str)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        // One pass over the item: where it ends, and what it holds.
        let bytes = self.rest.as_bytes();
        let (mut end, mut quotes, mut nested) = (0, 0, false);
        while let Some(&c) = bytes.get(end) {
            if class(c) & FLOW != 0 {
                match c {
                    b',' => break,
                    b'"' | b'\'' => quotes += 1,
                    _ => nested = true,
                }
            }
            end += 1;
        }
        let part = self.rest.get(..end)?;
        let trimmed = part.trim_start_matches(' ');
        let start = self.offset + (part.len() - trimmed.len());
        let item = trimmed.trim_end_matches(' ');
        match self.rest.get(end + 1..) {
            Some(rest) => {
                self.rest = rest;
                self.offset += end + 1;
            }
            None => self.done = true,
        }
        let whole = !item.is_empty() && !nested && (quotes == 0 || quotes == 2);
        Some(whole.then_some((start, item)))
    }
}
