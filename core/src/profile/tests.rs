//! Unit tests of `profile`.
