//! `svclab test --update`: each expectation that did not hold, rewritten in place with what
//! svclab answered. Only the value's own bytes change: keys, order, comments and the style of
//! the value (a flow list stays a flow list, a block list a block list at its own indentation)
//! stay as written, so the change reads as a small diff.

use serde_json::Value as Json;

use super::format::At;

/// The text with every replacement applied (replacements must not overlap; each replaces its
/// value's span).
pub(crate) fn apply(text: &str, replacements: &[(At, Json)]) -> String {
    let mut edits: Vec<(std::ops::Range<usize>, String)> =
        replacements.iter().filter_map(|(at, value)| edit(text, at, value)).collect();
    edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    let mut out = text.to_owned();
    let mut last_start = usize::MAX;
    for (range, replacement) in edits {
        // Two replacements of one value (an alias repeated): the first one stands.
        if range.end > last_start {
            continue;
        }
        last_start = range.start;
        out.replace_range(range, &replacement);
    }
    out
}

/// The bytes to replace for one value, and what goes there.
fn edit(text: &str, at: &At, value: &Json) -> Option<(std::ops::Range<usize>, String)> {
    if at.span.end > text.len() || at.span.start > at.span.end {
        return None;
    }
    match value {
        Json::Array(items) => {
            let rendered: Vec<String> = items.iter().map(scalar).collect();
            match (at.block_indent, at.key_end) {
                (Some(indent), Some(key_end)) => {
                    // From just past the key's `:` to the end of the last item.
                    let colon = key_end + text[key_end..at.span.start].find(':')? + 1;
                    let replacement = if rendered.is_empty() {
                        " []".to_owned()
                    } else {
                        let pad = " ".repeat(indent);
                        rendered.iter().map(|item| format!("\n{pad}- {item}")).collect()
                    };
                    Some((colon..at.span.end, replacement))
                }
                _ => Some((at.span.clone(), format!("[{}]", rendered.join(", ")))),
            }
        }
        other => Some((at.span.clone(), scalar(other))),
    }
}

/// A scalar as YAML: plain when that reads back as the same string in any context (flow
/// lists included), else a double-quoted string with JSON's escapes (which YAML shares).
pub(crate) fn scalar(value: &Json) -> String {
    match value {
        Json::String(text) if plain_is_safe(text) => text.clone(),
        Json::String(text) => serde_json::to_string(text).unwrap_or_default(),
        Json::Null => "null".to_owned(),
        other => other.to_string(),
    }
}

/// Whether a string may be written without quotes: letters, digits and `.-_/` only, starting
/// with a letter or a digit, and not a word or a number YAML would read as something else.
fn plain_is_safe(text: &str) -> bool {
    const WORDS: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false",
        "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL",
    ];
    let starts_well = text.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    let chars_ok = text.chars().all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c));
    let number = text.parse::<f64>().is_ok() || text.starts_with("0x") || text.starts_with("0o");
    starts_well && chars_ok && !number && !WORDS.contains(&text)
}
