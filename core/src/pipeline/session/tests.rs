//! A session's evaluation after every edit is a fresh evaluation of the same text, report and
//! rulesets byte for byte, under random edit sequences over real and generated scenarios; and
//! it reads again only the documents an edit touched.

use proptest::prelude::*;
use svclab_scenario_gen::{Shape, generate, variety};

use crate::{CheckOptions, EditError, Input, Session, evaluate};

const NAME: &str = "scenario.yaml";

/// The session's evaluation against a fresh one of its text: the report as JSON (rulesets in)
/// and as text.
#[track_caller]
fn check(session: &mut Session) {
    let (_, incremental) = session.evaluate();
    let fresh = evaluate(&[Input::new(NAME, session.text())], &CheckOptions::default()).1;
    assert_eq!(
        incremental.to_json(),
        fresh.to_json(),
        "after edits, the text:\n{}",
        session.text()
    );
    assert_eq!(incremental.to_text(), fresh.to_text());
}

/// Begins an evaluation and abandons it at its pause `at` (from 1; it may end before), as a
/// host does when the text changes meanwhile.
fn abandon(session: &mut Session, at: usize) {
    let mut pauses = 0;
    let run = session.evaluate_pausing(|| {
        pauses += 1;
        std::future::ready(if pauses < at {
            std::ops::ControlFlow::Continue(())
        } else {
            std::ops::ControlFlow::Break(())
        })
    });
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(std::pin::pin!(run).poll(&mut context).is_ready(), "its pauses are ready");
}

/// Scenarios to edit: examples, a generated cluster, generated apiserver and kube-proxy cases.
fn scenarios() -> Vec<String> {
    let json = |objects: &[serde_json::Value]| {
        objects
            .iter()
            .map(|o| serde_json::to_string_pretty(o).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n---\n")
    };
    vec![
        include_str!("../../../../examples/dns-static-band.yaml").to_owned(),
        include_str!("../../../../examples/policy-unique-selector.yaml").to_owned(),
        include_str!("../../../../examples/policy-external-ips.yaml").to_owned(),
        generate(Shape { services: 12, slices: true }),
        json(&variety::apiserver_case(7, 33, 1).objects),
        json(&variety::proxy_case(7, 36, 2).0.objects),
    ]
}

/// The largest char boundary at or before `at`.
fn boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Byte ranges of the text's lines, newline included.
fn lines(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut start = 0;
    text.split_inclusive('\n')
        .map(|line| {
            let range = start..start + line.len();
            start = range.end;
            range
        })
        .collect()
}

/// One edit drawn from `(kind, a, b, junk)`, as an editor would send it: the range replaced
/// and its replacement.
fn edit(
    text: &str,
    (kind, a, b, junk): &(u8, usize, usize, String),
) -> (std::ops::Range<usize>, String) {
    let lines = lines(text);
    let line = |n: usize| lines.get(n % lines.len().max(1)).cloned().unwrap_or(0..0);
    match kind {
        // Typing over a few characters.
        0 => {
            let start = boundary(text, a % (text.len() + 1));
            let end = boundary(text, start + b % 6);
            (start..end, junk.clone())
        }
        // Deleting a line, or copying one elsewhere.
        1 => (line(*a), String::new()),
        2 => {
            let at = line(*b).start;
            (at..at, text[line(*a)].to_owned())
        }
        // A document separator, or a newline, somewhere.
        3 => {
            let at = line(*a).start;
            (at..at, "---\n".to_owned())
        }
        4 => {
            let at = boundary(text, a % (text.len() + 1));
            (at..at, "\n".to_owned())
        }
        // A digit changed, as when a port or an address is fixed.
        _ => {
            let digits: Vec<usize> =
                text.match_indices(|c: char| c.is_ascii_digit()).map(|(i, _)| i).collect();
            match digits.get(a % digits.len().max(1)) {
                Some(&at) => (at..at + 1, ((b % 10) as u8 + b'0').to_string().chars().collect()),
                None => (0..0, String::new()),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn edits_evaluate_as_a_fresh_reading(
        scenario in 0usize..6,
        edits in proptest::collection::vec(
            (0u8..6, 0usize..100_000, 0usize..100_000, "[a-z0-9: \\-\\n{}é]{0,8}"),
            1..10,
        ),
        abandoned in proptest::collection::vec(0usize..12, 10),
        batched in proptest::collection::vec(0usize..4, 10),
    ) {
        let mut session = Session::new(NAME, scenarios()[scenario].clone(), CheckOptions::default());
        check(&mut session);
        for ((drawn, &at), &more) in edits.iter().zip(&abandoned).zip(&batched) {
            let (range, replacement) = edit(session.text(), drawn);
            session.edit(range, &replacement).expect("an edit within the text");
            // Some edits come together (as an editor's do while an evaluation is busy), and
            // some texts are replaced whole.
            for extra in 1..more {
                let (kind, a, b, junk) = drawn;
                let drawn = ((kind + extra as u8) % 6, a * 7 + extra, b / 3 + extra, junk.clone());
                let (range, replacement) = edit(session.text(), &drawn);
                session.edit(range, &replacement).expect("an edit within the text");
            }
            if more == 3 {
                let text = session.text().to_owned();
                session.set_text(text);
            }
            // Some evaluations are abandoned at a pause, and the next edit comes first.
            if at > 0 {
                abandon(&mut session, at);
                let (range, replacement) = edit(session.text(), drawn);
                session.edit(range, &replacement).expect("an edit within the text");
            }
            check(&mut session);
        }
    }
}

/// Typing into one document of a cluster reads that document again, and no other, whether the
/// edit keeps the line count (a value fixed) or moves every document after it (a line added).
#[test]
fn an_edit_reads_again_only_its_document() {
    let text = generate(Shape { services: 40, slices: true });
    let mut session = Session::new(NAME, text, CheckOptions::default());
    check(&mut session);
    let (read, reused) = session.documents_read();
    assert_eq!(reused, 0);
    let middle = session.text().find("name: svc-20\n").expect("a Service in the middle");
    let port = middle + session.text()[middle..].find("targetPort: 8080").expect("a port");
    let digit = port + "targetPort: 808".len();
    session.edit(digit..digit + 1, "1").expect("an edit");
    check(&mut session);
    assert_eq!(session.documents_read(), (1, read - 1), "a value fixed");
    // The others are placed by where the edit left them, their text not even compared.
    assert_eq!(session.cache.by_text, 1);
    let line_end = middle + session.text()[middle..].find('\n').expect("a line end") + 1;
    session.edit(line_end..line_end, "  # a comment\n").expect("an edit");
    check(&mut session);
    assert_eq!(session.documents_read(), (1, read - 1), "a line added");
    assert_eq!(session.cache.by_text, 1);
    session.edit(line_end..line_end, "---\n").expect("an edit");
    check(&mut session);
    assert_eq!(session.documents_read(), (2, read - 1), "a document split in two");
    assert_eq!(session.cache.by_text, 2);
    // A text replaced whole, even by itself, is looked for document by document.
    let text = session.text().to_owned();
    session.set_text(text);
    check(&mut session);
    assert_eq!(session.documents_read(), (0, read + 1), "the same text again");
    assert_eq!(session.cache.by_text, read + 1);
}

/// The pipeline resumes where the scenario first differs from an earlier evaluation's: the
/// first keystroke in a document applies what follows the nearest state an evaluation from the
/// start kept, and keeps the state before that document;
/// the next ones there, or further on, apply only what follows it; one in an earlier document
/// starts again. The generated cluster is two Nodes and a KubeProxyConfiguration, then each
/// Service `svc-N` (labelled `app: app-N`) followed by its EndpointSlice.
#[test]
fn the_pipeline_resumes_at_the_first_changed_document() {
    let text = generate(Shape { services: 40, slices: true });
    let mut session = Session::new(NAME, text, CheckOptions::default());
    check(&mut session);
    let total = 3 + 2 * 40;
    assert_eq!(session.objects_applied(), (total, total), "a first evaluation");
    // A character typed at the start of the Service's `app:` label.
    let type_into = |session: &mut Session, service: usize| {
        let name = session.text().find(&format!("name: svc-{service}\n")).expect("the Service");
        let at = name + session.text()[name..].find("app: ").expect("its label") + "app: ".len();
        session.edit(at..at, "x").expect("an edit");
        check(session);
        session.objects_applied().0
    };
    let after = |service: usize| total - (3 + 2 * service);
    // The first evaluation kept the state every 10 objects (83 / 8); svc-20 is the 44th.
    assert_eq!(type_into(&mut session, 20), total - 40, "the first keystroke in svc-20");
    assert_eq!(type_into(&mut session, 20), after(20), "the next one");
    assert_eq!(type_into(&mut session, 30), after(20), "one further on, in svc-30");
    assert_eq!(type_into(&mut session, 30), after(30), "the next one there");
    assert_eq!(type_into(&mut session, 2), total, "one in an earlier document, svc-2");
    assert_eq!(type_into(&mut session, 2), after(2), "the next one there");
    // An evaluation abandoned at a pause (the text changed meanwhile) keeps the state before
    // svc-2 for the next one, after reading or in the middle of applying.
    for at in [1, 2, 9] {
        let name = session.text().find("name: svc-2\n").expect("the Service");
        let line = session.text()[..name].rfind('\n').map_or(0, |n| n + 1);
        session.edit(line..line, "  # a comment\n").expect("an edit");
        abandon(&mut session, at);
        assert_eq!(type_into(&mut session, 2), after(2), "after one abandoned at pause {at}");
    }
}

/// Typing document after document down a cluster keeps at most a state every eighth of it (and
/// the one before the document being typed in), not one per document.
#[test]
fn typing_down_the_scenario_keeps_a_bounded_ladder_of_states() {
    let text = generate(Shape { services: 40, slices: true });
    let mut session = Session::new(NAME, text, CheckOptions::default());
    check(&mut session);
    for service in 0..40 {
        let name = session.text().find(&format!("name: svc-{service}\n")).expect("the Service");
        let at = name + session.text()[name..].find("app: ").expect("its label") + "app: ".len();
        session.edit(at..at, "x").expect("an edit");
        check(&mut session);
        let ats: Vec<usize> = session.checkpoints.iter().map(|c| c.at).collect();
        assert!(ats.len() <= super::RUNGS + 1, "after svc-{service}: states at {ats:?}");
        assert!(ats.windows(2).all(|w| w[0] < w[1]), "ascending: {ats:?}");
    }
}

/// UTF-16 offsets, as an editor counts them: "é" is one unit and two bytes, "𝄞" two units (a
/// surrogate pair) and four bytes.
#[test]
fn edits_in_utf16_offsets_change_the_text_as_an_editor_does() {
    let mut session = Session::new(NAME, "a: é𝄞\nb: 1\n", CheckOptions::default());
    let text: Vec<u16> = session.text().encode_utf16().collect();
    let b = text.iter().position(|&u| u == u16::from(b'b')).expect("the b");
    session.edit_utf16(b..b + 1, "c").expect("an edit after the surrogate pair");
    assert_eq!(session.text(), "a: é𝄞\nc: 1\n");
    session.edit_utf16(3..4, "e").expect("the é");
    assert_eq!(session.text(), "a: e𝄞\nc: 1\n");
    assert_eq!(session.edit_utf16(5..5, "x"), Err(EditError::NotCharBoundary { offset: 4 }));
    let len = session.text().encode_utf16().count();
    session.edit_utf16(len..len, "d: 2\n").expect("an edit at the end");
    assert_eq!(session.text(), "a: e𝄞\nc: 1\nd: 2\n");
    assert_eq!(
        session.edit_utf16(0..100, ""),
        Err(EditError::OutOfRange { range: 0..100, len: len + 5 })
    );
}

#[test]
fn edits_outside_the_text_or_inside_a_character_are_refused() {
    let mut session = Session::new(NAME, "é", CheckOptions::default());
    assert_eq!(session.edit(1..1, "x"), Err(EditError::NotCharBoundary { offset: 1 }));
    assert!(session.edit(0..3, "x").is_err());
    let (start, end) = (2, 1);
    assert_eq!(
        session.edit(start..end, "x"),
        Err(EditError::OutOfRange { range: start..end, len: 2 })
    );
    assert_eq!(session.text(), "é");
}
