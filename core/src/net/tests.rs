//! Unit tests of `net`.
