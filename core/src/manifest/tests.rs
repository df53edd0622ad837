//! Unit tests of `manifest`.
