//! A fast reader for the plain block YAML that manifests and `kubectl get -o yaml` are mostly
//! made of: block mappings and sequences, one-line plain and quoted scalars, one-line flow
//! sequences and mappings of scalars. It builds exactly the tree the general reader builds
//! (same values, keys and positions) or gives up on the whole document at the first thing
//! outside that subset (anchors, tags, block scalars, multi-line scalars, escapes, comments
//! after content, tabs, non-ASCII text, anything malformed), and the general reader takes it:
//! every error message still comes from there. At 10,000 Services it reads a scenario several
//! times faster than the general event parser.

use std::borrow::Cow;

use super::{Entry, Node, Value, key, resolve_plain, same_key};
use crate::limits::{MAX_DEPTH, MAX_NODES};
use crate::source::Pos;

/// The tree of a document whose text starts at `first_line`, or `None` when the document is
/// empty or not in the subset.
pub(super) fn parse(text: &str, first_line: u32) -> Option<Node> {
    // One pass over the bytes both checks them and splits the lines. Printable ASCII and line
    // feeds only: saphyr-parser refuses other control characters ("found unprintable
    // character", YAML 1.2 `c-printable`), even inside comments.
    let mut lines = Vec::new();
    let (mut start, mut no) = (0, first_line);
    for (at, &b) in text.as_bytes().iter().enumerate() {
        if b == b'\n' {
            push_line(&mut lines, text.get(start..at)?, no)?;
            start = at + 1;
            no = no.checked_add(1)?;
        } else if !(b' '..=b'~').contains(&b) {
            return None;
        }
    }
    push_line(&mut lines, text.get(start..)?, no)?;
    let first = lines.first()?;
    let indent = first.indent;
    let mut reader = Reader { lines, next: 0, nodes: 0 };
    let root = reader.block(indent, 0)?;
    // Everything must have been read (a less indented line after the root is an error).
    (reader.next == reader.lines.len()).then_some(root)
}

/// Adds line `no` to `lines` when it has content; `None` when the line is outside the subset.
fn push_line<'t>(lines: &mut Vec<Line<'t>>, line: &'t str, no: u32) -> Option<()> {
    let content = line.trim_start_matches(' ');
    if content.is_empty() || content.starts_with('#') {
        return Some(());
    }
    // Separator-like lines, directives and trailing spaces are left to the general reader.
    if content.starts_with("---") || content.starts_with("...") || content.starts_with('%') {
        return None;
    }
    if content.ends_with(' ') {
        return None;
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

struct Reader<'t> {
    lines: Vec<Line<'t>>,
    /// The next line to read.
    next: usize,
    /// Nodes built, as the general reader counts them (keys included).
    nodes: usize,
}

/// A block sequence item: `-` then a space or the end of the line.
fn is_item(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

/// Characters of the keys read here (field names, label and annotation keys).
fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'.' | b'/' | b'_' | b'-')
}

/// The key of a `key: value` or `key:` line, when the line is one.
fn key_of(content: &str) -> Option<&str> {
    // `:` is no key character: the name ends at the first byte that is not one, which must be
    // the colon.
    let bytes = content.as_bytes();
    let colon = bytes.iter().position(|&b| !is_key_char(b))?;
    if bytes[colon] != b':' || !bytes.first()?.is_ascii_alphanumeric() {
        return None;
    }
    let after = bytes.get(colon + 1..)?;
    (after.is_empty() || after[0] == b' ').then(|| &content[..colon])
}

impl<'t> Reader<'t> {
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
        let mut entries: Vec<Entry> = Vec::new();
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
            if let Some(existing) = entries.iter_mut().find(|e| same_key(&e.key, &key)) {
                *existing = Entry { key, key_pos, value };
            } else {
                entries.push(Entry { key, key_pos, value });
            }
        }
        self.count()?;
        entries.shrink_to_fit();
        Some(Node { value: Value::Map(entries), pos })
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
        let mut items = Vec::new();
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
            items.push(item);
        }
        self.count()?;
        items.shrink_to_fit();
        Some(Node { value: Value::Seq(items), pos })
    }

    /// A value written on its key's or dash's line, at 0-based `column`.
    fn inline(&mut self, text: &str, line: u32, column: usize) -> Option<Node> {
        let pos = self.pos(line, column)?;
        match text.as_bytes()[0] {
            b'[' => {
                let inner = text.strip_prefix('[')?.strip_suffix(']')?;
                let mut items = Vec::new();
                for (start, item) in flow_items(inner)? {
                    items.push(self.flow_scalar(item, line, column + 1 + start)?);
                }
                self.count()?;
                Some(Node { value: Value::Seq(items), pos })
            }
            b'{' => {
                let inner = text.strip_prefix('{')?.strip_suffix('}')?;
                let mut entries: Vec<Entry> = Vec::new();
                for (start, item) in flow_items(inner)? {
                    let name = key_of(item)?;
                    if resolve_plain(name).is_some() {
                        return None;
                    }
                    let after = &item[name.len() + 1..];
                    let value_text = after.trim_start_matches(' ');
                    if value_text.is_empty() {
                        return None;
                    }
                    let key_pos = self.pos(line, column + 1 + start)?;
                    self.count()?;
                    let value_column =
                        column + 1 + start + name.len() + 1 + (after.len() - value_text.len());
                    let value = self.flow_scalar(value_text, line, value_column)?;
                    let key = key(Cow::Borrowed(name));
                    if entries.iter().any(|e| same_key(&e.key, &key)) {
                        return None;
                    }
                    entries.push(Entry { key, key_pos, value });
                }
                self.count()?;
                Some(Node { value: Value::Map(entries), pos })
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
            first => {
                let starts_plain = first.is_ascii_alphanumeric()
                    || matches!(first, b'.' | b'/' | b'_' | b'+' | b'~')
                    // `- ` opens a block sequence entry, never a plain scalar.
                    || (first == b'-' && text.len() > 1 && text.as_bytes()[1] != b' ');
                let ordinary = text.bytes().all(|c| {
                    !matches!(
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
                    )
                });
                // `a: b` inside a value is a mapping (or an error); a flow scalar ends at `:`.
                let colon = if flow { text.contains(':') } else { text.contains(": ") };
                // saphyr starts a new chunk of a flow plain scalar after a space and refuses one
                // that opens with `-` before `,]}` ("plain scalar cannot start with '-' followed
                // by ,[]{}"); ` - ` is left to it too rather than guessed.
                let dash_chunk = flow && (text.ends_with(" -") || text.contains(" - "));
                if !starts_plain || !ordinary || colon || dash_chunk || text.ends_with(':') {
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
/// commas, trimmed of spaces; `None` when an item is empty (a trailing comma) or nested.
fn flow_items(inner: &str) -> Option<Vec<(usize, &str)>> {
    let mut out = Vec::new();
    if inner.trim_matches(' ').is_empty() {
        return Some(out);
    }
    let mut offset = 0;
    for part in inner.split(',') {
        let trimmed = part.trim_start_matches(' ');
        let start = offset + (part.len() - trimmed.len());
        let item = trimmed.trim_end_matches(' ');
        if item.is_empty() || item.contains(['[', ']', '{', '}']) {
            return None;
        }
        // A quoted item with a comma inside was split apart: give up.
        let quotes = item.bytes().filter(|c| matches!(c, b'"' | b'\'')).count();
        if quotes != 0 && quotes != 2 {
            return None;
        }
        out.push((start, item));
        offset += part.len() + 1;
    }
    Some(out)
}
