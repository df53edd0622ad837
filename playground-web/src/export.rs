//! "Export as test": a `svclab test` suite of the editor's scenario, its expectations what the
//! panels show now (`svclab_core::export_test` writes and checks it), so that the suite passes
//! unchanged in `svclab test` and in CI.

use svclab_core::{ExportError, ExportOptions, Input, ProxyMode, SUITE_SUFFIX, export_test};

use crate::proxy_view::{self, TraceOutcome};
use crate::state::{SCENARIO_NAME, State};

/// The suite's name; its file is `playground.svclab-test.yaml`.
const SUITE_NAME: &str = "playground";

/// The file the download saves.
pub(crate) fn file_name() -> String {
    format!("{SUITE_NAME}{SUITE_SUFFIX}")
}

/// The suite: every object's answers, the Service entries of the ruleset in the scenario's
/// proxy mode and the Trace panel's packet (the last one traced, else the one the panel would
/// trace), or why there is nothing to test.
pub(crate) fn suite(state: &State) -> Result<String, ExportError> {
    let outcome = match state.trace_outcome.as_deref() {
        Some(outcome) => outcome.clone(),
        None => proxy_view::trace(&state.world, &state.report, &state.trace, &state.node()),
    };
    let trace = match outcome {
        TraceOutcome::Walk(report) => Some(report.request),
        TraceOutcome::Invalid(_) => None,
    };
    let proxy_mode =
        state.rules().is_some().then(|| ProxyMode::parse(&state.proxy_mode())).flatten();
    let options = ExportOptions { name: SUITE_NAME.to_owned(), trace, proxy_mode };
    export_test(&Input::new(SCENARIO_NAME, &*state.scenario), &options)
}

#[cfg(test)]
mod tests {
    use svclab_core::{TestOptions, run_tests};

    use super::*;
    use crate::examples::EXAMPLES;
    use crate::share::SharedState;
    use crate::state::Action;

    fn state(text: &str) -> State {
        State::new(
            SharedState { scenario: text.to_owned(), ..SharedState::default() },
            false,
            false,
            None,
        )
    }

    /// The suite `svclab test` would read from the download, run as the command runs it.
    fn run(suite: &str) -> svclab_core::TestRun {
        run_tests(&[Input::new(file_name(), suite)], &[], &TestOptions::default())
    }

    #[test]
    fn every_example_exports_a_suite_that_passes_unchanged() {
        for example in EXAMPLES {
            let suite =
                suite(&state(example.text)).unwrap_or_else(|err| panic!("{}: {err}", example.id));
            let result = run(&suite);
            assert!(result.success(), "{}:\n{}\n{suite}", example.id, result.to_text());
            assert_eq!(result.passed, 1, "{}", example.id);
            assert!(suite.contains("    objects:\n"), "{}:\n{suite}", example.id);
        }
    }

    #[test]
    fn the_traced_packet_and_the_ruleset_are_kept_and_a_change_fails() {
        for (id, mode) in [("topology-hints", "iptables"), ("iptables-vs-nftables", "nftables")] {
            let text = EXAMPLES.iter().find(|e| e.id == id).map(|e| e.text).unwrap_or_default();
            let traced = yew::Reducible::reduce(std::rc::Rc::new(state(text)), Action::RunTrace);
            let suite = suite(&traced).unwrap_or_default();
            assert!(suite.contains(&format!("    rules:\n      proxyMode: {mode}\n")), "{suite}");
            assert!(suite.contains("    traces:\n    - src: 10.244.0.5\n"), "{suite}");
            assert!(suite.contains("      endpoints: [\""), "{suite}");
            let result = run(&suite);
            assert!(result.success(), "{id}:\n{}", result.to_text());
            // The first ClusterIP of the suite, changed: the suite now fails there, once.
            let at = suite.find("clusterIPs: [").map_or(0, |i| i + "clusterIPs: [".len());
            let end = at + suite[at..].find([']', ',']).unwrap_or_default();
            let changed = format!("{}192.0.2.1{}", &suite[..at], &suite[end..]);
            let result = run(&changed);
            assert_eq!((result.failed, result.errors), (1, 0), "{id}:\n{}", result.to_text());
        }
    }

    #[test]
    fn an_empty_editor_has_nothing_to_export() {
        assert_eq!(suite(&state("")), Err(ExportError::NoObjects));
    }
}
