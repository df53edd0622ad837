//! Work done in steps for a host that must not be blocked for all of it (a browser's main
//! thread): an `async fn` that awaits the host's pause between steps (`manifest::read_pausing`,
//! `Session::evaluate_pausing`), and the same work run through at once.

use std::task::{Context, Poll, Waker};

/// Runs `work`, whose pauses are all ready, to its end: the first poll completes it. `None`
/// only if a pause was not ready after all (no caller passes one that is not).
pub(crate) fn without_pauses<F: Future>(work: F) -> Option<F::Output> {
    match std::pin::pin!(work).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(done) => Some(done),
        Poll::Pending => None,
    }
}
