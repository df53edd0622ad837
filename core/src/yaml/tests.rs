//! Unit tests of the positioned YAML reader: YAML 1.1 scalars, positions, document splitting.

use expect_test::{Expect, expect};

use super::{Value, parse_stream};

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
fn alias_expansion_is_bounded() {
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 0..8 {
        let prev = if i == 0 { "a".to_owned() } else { format!("l{}", i - 1) };
        bomb.push_str(&format!("l{i}: &l{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    let docs = parse_stream(&bomb);
    assert!(docs[0].root.as_ref().is_err_and(|e| e.message.contains("excessive aliasing")));
}
