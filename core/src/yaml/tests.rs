//! Unit tests of `yaml`.
