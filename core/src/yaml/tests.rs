//! Unit tests of the positioned YAML reader: YAML 1.1 scalars, positions, document splitting.

use expect_test::{Expect, expect};

use super::{Value, parse_stream, scan};

/// Parses a stream and prints each document's root as JSON, or its syntax error.
#[track_caller]
fn check(input: &str, expect: Expect) {
    let mut out = String::new();
    for doc in parse_stream(input) {
        match doc.root {
            Ok(Some(node)) => out.push_str(&format!("{}: {}\n", doc.index, node.to_json())),
            Ok(None) => out.push_str(&format!("{}: <empty>\n", doc.index)),
            Err(e) => out.push_str(&format!(
                "{}: error {}:{} {}\n",
                doc.index, e.pos.line, e.pos.column, e.message
            )),
        }
    }
    expect.assert_eq(&out);
}

#[test]
fn yaml_1_1_scalars_like_go_yaml_v2() {
    check(
        "a: yes\nb: off\nc: 0777\nd: 0x1F\ne: '0777'\nf: 1_000\ng: ~\nh: 1.5\ni: .inf\nj: \"on\"\n",
        expect![[r#"
            0: {"a":true,"b":false,"c":511,"d":31,"e":"0777","f":1000,"g":null,"h":1.5,"i":null,"j":"on"}
        "#]],
    );
}

#[test]
fn documents_split_on_separator_lines_and_keep_going_after_errors() {
    check(
        "a: 1\n---\nb: [1, 2\n---\n# only a comment\n---\n{\"json\": true}\n",
        expect![[r#"
            0: {"a":1}
            1: error 4:1 while parsing a flow sequence, expected ',' or ']'
            2: {"json":true}
        "#]],
    );
}

#[test]
fn positions_are_one_based_and_offset_by_document() {
    let docs = parse_stream("a: 1\n---\nkind: Service\nspec:\n  ports:\n  - port: 80\n");
    let root = docs[1].root.clone().ok().flatten().map(|n| n.value);
    let Some(Value::Map(entries)) = root else { panic!("expected a map") };
    let spec = &entries[1];
    assert_eq!((spec.key_pos.line, spec.key_pos.column), (4, 1));
    let Value::Map(spec_entries) = &spec.value.value else { panic!("spec is a map") };
    let Value::Seq(ports) = &spec_entries[0].value.value else { panic!("ports is a list") };
    assert_eq!((ports[0].pos.line, ports[0].pos.column), (6, 5));
}

#[test]
fn keys_are_scalars_as_in_sigs_k8s_io_yaml() {
    check(
        "1: a\ntrue: b\n~: c\n---\n? [x, y]\n: 1\n---\na:\n  ? {k: v}\n  : 2\n",
        expect![[r#"
            0: {"1":"a","null":"c","true":"b"}
            1: error 5:3 unsupported map key of type: []interface {}
            2: error 9:5 unsupported map key of type: map[interface {}]interface {}
        "#]],
    );
    // Keys nested in keys (a fuzzer's find): refused at once, where reading each one as its
    // JSON text re-escaped it at every level and took seconds.
    let nested = format!("{}a: b\n", "? ".repeat(60));
    let docs = parse_stream(&nested);
    assert!(docs[0].root.as_ref().is_err_and(|e| e.message.starts_with("unsupported map key")));
}

#[test]
fn alias_expansion_is_bounded() {
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 0..8 {
        let prev = if i == 0 { "a".to_owned() } else { format!("l{}", i - 1) };
        bomb.push_str(&format!("l{i}: &l{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    let docs = parse_stream(&bomb);
    assert!(docs[0].root.as_ref().is_err_and(|e| e.message.contains("excessive aliasing")));
}

/// Checks that every document of `text` the fast reader takes reads as the general reader
/// reads it; the number of documents it took.
fn fast_against_events(text: &str) -> usize {
    if let Some(difference) = super::fast_reader_disagreement(text) {
        panic!("{difference} in:\n{text}");
    }
    super::documents(text)
        .filter(|doc| {
            let scratch = &mut super::fast::Scratch::default();
            super::fast::parse(&doc.text, doc.first_line, scratch).is_some()
        })
        .count()
}

#[test]
fn fast_reader_builds_the_general_readers_tree() {
    let samples = [
        "a: 1\nb: yes\nc: 0777\nd: \"on\"\ne: 'x y'\nf: ''\ng: ~\nh: null\ni: http://x:80/p\n",
        "kind: Service\nmetadata:\n  name: a\n  labels:\n    app.kubernetes.io/name: x\nspec:\n  ports:\n  - name: http\n    port: 80\n    targetPort: 8080\n  -   port: 81\n  selector:\n    app: a\n",
        "endpoints:\n- addresses: [\"10.0.0.1\", 10.0.0.2]\n  conditions: {ready: true, serving: false}\n  nodeName: n\n- addresses: []\n  conditions: {}\nports:\n  - port: 1\n    protocol: TCP\n",
        "# comment\n\na: 1\n  # indented comment\nb:\n\n  c: 2\na: 3\n",
        "- a\n- 1.5\n- -3\n- b: 1\n  c: [x]\n- {k: v}\n",
        "    a: 1\n    b:\n      - x\n",
        "a: foo bar\nb: -x\nc: +1\nd: .5\ne: 1e3\nf: 0x1F\ng: 1_000\nh: on\n",
        "a:\n  b:\n    c:\n      d: [1, 2, 3]\n  e: f\n",
    ];
    let mut taken = 0;
    for sample in samples {
        taken += fast_against_events(sample);
    }
    assert_eq!(taken, samples.len(), "the fast reader takes every sample");
    // Documents it must leave to the general reader.
    let others = [
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "a: |\n  text\n",
        "a: foo\n  bar\n",
        "a: 1 # note\n",
        "a:\nb: 1\n",
        "a: \"x\\ty\"\n",
        "a: [1, [2]]\n",
        "1: a\n",
        "{\"a\": 1}\n",
        "a: 1\n b: 2\n",
        "- - a\n",
        "a:\tb\n",
        "a: {b: c -}\n",
        "a: [b -, c]\n",
        "a: {b: c - d}\n",
    ];
    for other in others {
        assert_eq!(fast_against_events(other), 0, "{other:?} is left to the general reader");
    }
    // Every YAML and JSON file of the repository.
    // Where cargo runs the test from, else where it was built.
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(
            || std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")),
            std::path::PathBuf::from,
        )
        .join("..");
    let mut pending = vec![root];
    let mut files = 0;
    let mut taken = 0;
    while let Some(dir) = pending.pop() {
        let Ok(listing) = std::fs::read_dir(&dir) else { continue };
        for entry in listing.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" && name != "node_modules" {
                    pending.push(path);
                }
            } else if [".yaml", ".yml", ".json"].iter().any(|ext| name.ends_with(ext))
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                files += 1;
                taken += fast_against_events(&text);
            }
        }
    }
    assert!(files > 50 && taken > 50, "{files} files, {taken} documents read by the fast reader");
}

#[test]
fn common_keys_are_sorted_by_length_then_bytes() {
    let keys = super::COMMON_KEYS;
    assert!(keys.windows(2).all(|w| (w[0].len(), w[0]) < (w[1].len(), w[1])));
    assert!(keys.iter().enumerate().all(|(i, k)| super::common_key(k) == Some(i)));
    for other in ["", "notACommonKey", "nam", "nome", "namf", &"x".repeat(100)] {
        assert_eq!(super::common_key(other), None, "{other:?}");
    }
}

/// Both scans against their byte-loop definitions, at every start offset.
#[track_caller]
fn check_scans(text: &[u8]) {
    for at in 0..=text.len() {
        let rest = &text[at..];
        let feed = rest.iter().position(|&b| b == b'\n').map_or(text.len(), |i| at + i);
        assert_eq!(scan::line_feed(text, at), feed, "line_feed({text:?}, {at})");
        let odd = rest
            .iter()
            .position(|&b| b == b'\n' || !(b' '..=b'~').contains(&b))
            .map_or(text.len(), |i| at + i);
        assert_eq!(scan::line_feed_or_unprintable(text, at), odd, "unprintable({text:?}, {at})");
    }
}

#[test]
fn scans_agree_with_byte_loops() {
    check_scans(b"");
    check_scans(b"a");
    check_scans(b"apiVersion: v1\nkind: Service\n");
    check_scans(b"\n\n\n\n\n\n\n\n\n");
    check_scans(b"0123456\n89abcdef\n");
    check_scans(b"tab\there, cr\r\n, del\x7f, nul\x00, high\xc3\xa9 and ~ and space ");
    // Every byte value at every position of a word, next to bytes that borrow or carry.
    for b in 0..=255u8 {
        for at in 0..9 {
            let mut text = vec![b'x'; 17];
            text[at] = b;
            text[at + 1] = 0xff;
            check_scans(&text);
            text[at + 1] = 0x00;
            check_scans(&text);
        }
    }
}

/// `same_bytes` agrees with `==` at every length it takes a different path for, with the one
/// difference at every place (and a length difference).
#[test]
fn same_bytes_is_slice_equality() {
    for n in (0..=40usize).chain([64, 65]) {
        let base: Vec<u8> = (0..n).map(|i| (i * 37 % 251) as u8).collect();
        assert!(super::same_bytes(&base, &base), "{n} bytes");
        assert!(!super::same_bytes(&base, &base[..n.saturating_sub(1)]) || n == 0);
        for at in 0..n {
            let mut other = base.clone();
            other[at] ^= 0x80;
            assert!(!super::same_bytes(&base, &other), "{n} bytes, differing at {at}");
        }
    }
}
