//! An evaluation kept between edits, for a host that evaluates as a user types (the
//! playground's editor): the scenario's text, changed by edits, and what each of its documents
//! read to, so that the next evaluation reads again only the documents whose text changed
//! (`manifest/reread.rs`). The result is the same as [`crate::evaluate`] of the same text, byte
//! for byte (`session/tests.rs` holds random edit sequences to that).
//!
//! What is not incremental yet: the pipeline runs over every object again, and the rulesets are
//! rendered whole; only reading is spared.

#[cfg(test)]
mod tests;

use std::ops::Range;
use std::sync::Arc;

use super::{CheckOptions, evaluate_reading};
use crate::manifest::{Input, ReadCache};
use crate::policy;
use crate::report::Report;
use crate::world::World;

/// A scenario being edited, evaluated again after each edit.
#[derive(Debug)]
pub struct Session {
    name: String,
    text: Arc<String>,
    options: CheckOptions,
    cache: ReadCache,
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
        }
    }

    /// The text as edited so far.
    pub fn text(&self) -> &str {
        &self.text
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
        // The last reading's documents share the old text; the edit gets a copy.
        Arc::make_mut(&mut self.text).replace_range(range, replacement);
        Ok(())
    }

    /// Replaces the whole text (a paste over everything, or a host that sends no edits): the
    /// documents whose text is unchanged are still not read again.
    pub fn set_text(&mut self, text: impl Into<String>) {
        self.text = Arc::new(text.into());
    }

    /// The options evaluations use.
    pub fn options_mut(&mut self) -> &mut CheckOptions {
        &mut self.options
    }

    /// Evaluates the text as it is: [`crate::evaluate`] of it, reading only the documents
    /// changed since the last evaluation.
    pub fn evaluate(&mut self) -> (World, Report) {
        let input = Input { name: self.name.clone(), text: Arc::clone(&self.text) };
        let context = policy::Context::default();
        evaluate_reading(&[input], &self.options, &context, Some(&mut self.cache))
    }

    /// How many documents the last evaluation read, and how many it took as they were read
    /// before.
    pub fn documents_read(&self) -> (usize, usize) {
        (self.cache.read, self.cache.reused)
    }
}
