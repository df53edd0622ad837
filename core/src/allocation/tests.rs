//! Unit tests of `allocation`.
