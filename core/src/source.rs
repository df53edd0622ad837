//! Where an object or field came from: file, document, line and column.

use serde::{Deserialize, Serialize};

/// A 1-based line and column inside a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub column: u32,
}

/// The position of a diagnostic, as the report prints it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct Source {
    /// Name of the input (a file name, or `-` for standard input).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub file: String,
    /// 0-based index of the YAML document in its file.
    pub document: usize,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}
