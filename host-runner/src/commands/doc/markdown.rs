//! Finds svclab's checked examples in a Markdown file: fenced code blocks (CommonMark's
//! backtick and tilde fences) whose info string starts with `svclab`, each paired with the
//! `expected` block that follows it.
//!
//! The syntax, also documented in `docs/guide/writing-examples.md`:
//!
//! ````markdown
//! ```svclab check
//! apiVersion: v1
//! kind: Service
//! ...
//! ```
//!
//! ```text expected
//! NAMESPACE ...
//! ```
//! ````
//!
//! The words after `svclab` are the command and its options exactly as on the command line
//! (`render --proxy-mode nftables`, `trace --src 10.244.1.5 --dst 10.96.0.10 --dport 53`); the
//! scenario is its standard input. Docs frameworks drop the words after a fence's language, so
//! the command may instead be the block's first line, a YAML comment
//! `# svclab <command> [options]` that stays part of the scenario; a block with neither stands
//! for `check`, and one whose info string and first line name different commands is refused. Words shaped `name=value` (`show=allocations`) are attributes
//! of the live `<svclab-example>` element and do not reach the command. The expected block may
//! only be separated from the scenario by blank lines; its info string is `expected` after an
//! optional language word.

/// One fenced code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fence {
    /// The info string, trimmed.
    pub(crate) info: String,
    /// The block's text, every line ending in `\n`.
    pub(crate) text: String,
    /// 0-based line of the opening fence.
    pub(crate) open_line: usize,
    /// 0-based line of the closing fence (the last line of the file when unclosed).
    pub(crate) close_line: usize,
    /// Whether a closing fence was found.
    pub(crate) closed: bool,
}

/// One checked example.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Example {
    /// The scenario block (`svclab ...`).
    pub(crate) scenario: Fence,
    /// The command and its options (the first line's or the info string's words after
    /// `svclab`, attributes removed).
    pub(crate) args: Vec<String>,
    /// Why the example cannot run as written (its two command lines disagree).
    pub(crate) problem: Option<String>,
    /// The `expected` block, when there is one.
    pub(crate) expected: Option<Fence>,
}

/// Splits a file into lines without their line ends (`\r\n` or `\n`).
pub(crate) fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n')
        .map(|line| line.strip_suffix('\n').unwrap_or(line))
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect()
}

/// An opening fence: indentation (at most 3 spaces), the fence character and length, the info.
fn opening(line: &str) -> Option<(usize, char, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let fence_char = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let length = rest.len() - rest.trim_start_matches(fence_char).len();
    if length < 3 {
        return None;
    }
    let info = rest[length..].trim();
    // CommonMark: a backtick fence's info string cannot contain a backtick.
    if fence_char == '`' && info.contains('`') {
        return None;
    }
    Some((indent, fence_char, length, info))
}

fn is_closing(line: &str, fence_char: char, length: usize) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let rest = line[indent..].trim_end();
    rest.len() >= length && rest.chars().all(|c| c == fence_char)
}

/// Every fenced block of the file, in order.
pub(crate) fn fences(lines: &[&str]) -> Vec<Fence> {
    let mut fences = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let Some((indent, fence_char, length, info)) = opening(lines[at]) else {
            at += 1;
            continue;
        };
        let mut text = String::new();
        let mut end = at + 1;
        let mut closed = false;
        while end < lines.len() {
            if is_closing(lines[end], fence_char, length) {
                closed = true;
                break;
            }
            // CommonMark removes up to the opening fence's indentation from each content line.
            let line = lines[end];
            let strip = (line.len() - line.trim_start_matches(' ').len()).min(indent);
            text.push_str(&line[strip..]);
            text.push('\n');
            end += 1;
        }
        let close_line = end.min(lines.len().saturating_sub(1));
        fences.push(Fence { info: info.to_owned(), text, open_line: at, close_line, closed });
        at = end + 1;
    }
    fences
}

/// Whether an info string marks an expected-output block (`expected`, `text expected`).
pub(crate) fn is_expected(info: &str) -> bool {
    let words: Vec<&str> = info.split_whitespace().collect();
    matches!(words.as_slice(), ["expected"] | [_, "expected"])
}

/// The command words of a scenario block's info string, or `None` when it is no svclab example.
pub(crate) fn command_words(info: &str) -> Option<Vec<String>> {
    let mut words = info.split_whitespace();
    if words.next()? != "svclab" {
        return None;
    }
    Some(words.filter(|word| !is_attribute(word)).map(str::to_owned).collect())
}

/// The command words of a scenario block's first line `# svclab <command> [options]`, or
/// `None` when the first line is not one.
pub(crate) fn first_line_words(text: &str) -> Option<Vec<String>> {
    let first = text.lines().next()?.strip_prefix('#')?;
    command_words(first.trim())
}

/// The command of a scenario block: its first line's, else its info string's, else `check`;
/// an error when both name one and they differ.
fn command(info_words: Vec<String>, text: &str) -> (Vec<String>, Option<String>) {
    match first_line_words(text) {
        Some(line) if !info_words.is_empty() && line != info_words => {
            let problem = format!(
                "the info string says `svclab {}` but the first line says `svclab {}`: keep one",
                info_words.join(" "),
                line.join(" ")
            );
            (line, Some(problem))
        }
        Some(line) if !line.is_empty() => (line, None),
        _ if !info_words.is_empty() => (info_words, None),
        _ => (vec!["check".to_owned()], None),
    }
}

/// `name=value` words are element attributes; options (`--src=...`) start with a dash.
pub(crate) fn is_attribute(word: &str) -> bool {
    !word.starts_with('-') && word.contains('=')
}

/// The svclab examples of a file, each with the expected block that follows it (if any).
pub(crate) fn examples(lines: &[&str]) -> Vec<Example> {
    let fences = fences(lines);
    let mut examples = Vec::new();
    let mut index = 0;
    while index < fences.len() {
        let fence = &fences[index];
        let Some(info_words) = command_words(&fence.info) else {
            index += 1;
            continue;
        };
        let expected = fences.get(index + 1).filter(|next| {
            is_expected(&next.info)
                && lines[fence.close_line + 1..next.open_line].iter().all(|l| l.trim().is_empty())
        });
        index += if expected.is_some() { 2 } else { 1 };
        let (args, problem) = command(info_words, &fence.text);
        examples.push(Example {
            scenario: fence.clone(),
            args,
            problem,
            expected: expected.cloned(),
        });
    }
    examples
}

/// A fence long enough for `text`: one backtick more than its longest line of backticks.
pub(crate) fn fence_for(text: &str) -> String {
    let longest = lines(text)
        .iter()
        .map(|line| {
            let trimmed = line.trim_start_matches(' ');
            trimmed.len() - trimmed.trim_start_matches('`').len()
        })
        .max()
        .unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests;
