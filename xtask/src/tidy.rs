//! Tidy checks of the workspace, run as tests.
