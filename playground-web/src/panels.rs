//! The result panels below (or beside) the editor, and the profile bar above them.

pub(crate) mod allocations;
pub(crate) mod compare;
pub(crate) mod diagnostics;
pub(crate) mod profile_bar;
pub(crate) mod rules;
pub(crate) mod trace;
