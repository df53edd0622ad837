//! Unit tests of `field`.
