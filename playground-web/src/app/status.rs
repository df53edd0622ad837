//! The status line: how many Services, errors, warnings and infos the scenario has and how long
//! its evaluation took. `#status` carries `data-evaluations` and `data-eval-ms`, which the
//! end-to-end tests and the playground benchmark wait on and read.

use yew::prelude::*;

use svclab_core::Severity;

use crate::state::State;

/// The status of one evaluation, ready to show.
pub(super) struct StatusLine {
    text: String,
    /// Milliseconds, three decimals.
    eval_ms: String,
    evaluations: String,
}

impl StatusLine {
    pub(super) fn of(state: &State) -> StatusLine {
        StatusLine {
            text: summary(state),
            eval_ms: format!("{:.3}", state.eval_ms),
            evaluations: state.evaluations.to_string(),
        }
    }

    /// Above the panels; screen readers announce its changes.
    pub(super) fn line(self) -> Html {
        html! {
            <p class="status" id="status" data-eval-ms={self.eval_ms}
                data-evaluations={self.evaluations} aria-live="polite">{self.text}</p>
        }
    }

    /// In the embed view's compact header.
    pub(super) fn compact(self) -> Html {
        html! {
            <span class="status" id="status" data-eval-ms={self.eval_ms} data-evaluations={self.evaluations}>{self.text}</span>
        }
    }
}

/// `3 Services · 1 error · 0 warnings · evaluated in 0.4 ms`.
fn summary(state: &State) -> String {
    let count = |severity: Severity| {
        state.report.diagnostics.iter().filter(|d| d.severity == severity).count()
    };
    let n_errors = count(Severity::Error);
    let n_warnings = count(Severity::Warning);
    // Policy audits and skipped rules; said only when there are some.
    let infos = match count(Severity::Info) {
        0 => String::new(),
        n => format!(" · {n} info"),
    };
    format!(
        "{} Service{} · {n_errors} error{} · {n_warnings} warning{}{infos} · evaluated in {:.1} ms",
        state.report.services.len(),
        if state.report.services.len() == 1 { "" } else { "s" },
        if n_errors == 1 { "" } else { "s" },
        if n_warnings == 1 { "" } else { "s" },
        state.eval_ms
    )
}
