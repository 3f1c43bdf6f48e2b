//! Tests of the editor: each edit on each way a YAML text can hold its target (block, flow,
//! indentless, empty, missing), with the exact output where layout matters. The properties
//! over generated configs are in `proptests.rs`.

use serde_yaml::Value;

use super::*;

fn y(text: &str) -> Value {
    serde_yaml::from_str(text).unwrap()
}

fn s(text: &str) -> Value {
    Value::String(text.to_string())
}

fn edited(text: &str, op: impl FnOnce(&mut YamlDoc) -> Result<Change, EditError>) -> String {
    let mut doc = YamlDoc::parse(text).unwrap();
    op(&mut doc).unwrap_or_else(|e| panic!("{e}\n---\n{text}"));
    doc.into_text()
}

const CONFIG: &str = "\
# top comment
mcp:
  servers:
    # the first server
    - name: alpha   # trailing comment
      command: a
      args: [x, \"y z\"]

    - name: \"beta\"
      command: b
      annotation_trust: ignore  # keep me
      env:
        K: v
    # after beta
policy: {approval: never}
";

#[test]
fn set_replaces_a_value_in_place() {
    let out = edited(CONFIG, |d| {
        d.set("mcp.servers[1]", "annotation_trust", &s("trust"))
    });
    assert_eq!(
        out,
        CONFIG.replace("annotation_trust: ignore  #", "annotation_trust: trust  #")
    );
    let out = edited(CONFIG, |d| d.set("policy", "approval", &s("ask_all")));
    assert_eq!(
        out,
        CONFIG.replace("{approval: never}", "{approval: ask_all}")
    );
}

#[test]
fn set_adds_a_key_after_the_last_entry() {
    let out = edited(CONFIG, |d| {
        d.set("mcp.servers[0]", "enabled", &Value::Bool(false))
    });
    assert_eq!(
        out,
        CONFIG.replace(
            "      args: [x, \"y z\"]\n",
            "      args: [x, \"y z\"]\n      enabled: false\n"
        )
    );
    // After a nested block mapping, at the entry's own indentation.
    let out = edited(CONFIG, |d| {
        d.set("mcp.servers[1]", "enabled", &Value::Bool(true))
    });
    assert_eq!(
        out,
        CONFIG.replace("        K: v\n", "        K: v\n      enabled: true\n")
    );
    // Into a flow mapping.
    let out = edited(CONFIG, |d| {
        d.set("policy", "side_effect_ceiling", &s("read_only"))
    });
    assert_eq!(
        out,
        CONFIG.replace(
            "{approval: never}",
            "{approval: never, side_effect_ceiling: read_only}"
        )
    );
}

#[test]
fn set_creates_what_is_missing() {
    let out = edited("mcp:\n  servers: []\n", |d| {
        d.set("policy", "approval", &s("never"))
    });
    assert_eq!(out, "mcp:\n  servers: []\npolicy:\n  approval: never\n");
    let out = edited("policy:   # later\nmcp: {}\n", |d| {
        d.set("policy", "approval", &s("never"))
    });
    assert_eq!(out, "policy:   # later\n  approval: never\nmcp: {}\n");
    let out = edited("policy: ~  # later\n", |d| {
        d.set("policy", "approval", &s("never"))
    });
    assert_eq!(out, "policy:  # later\n  approval: never\n");
    let out = edited("policy: {}\n", |d| d.set("policy", "approval", &s("never")));
    assert_eq!(out, "policy: {approval: never}\n");
    let out = edited("# only a comment\n", |d| {
        d.set("policy", "approval", &s("never"))
    });
    assert_eq!(out, "# only a comment\npolicy:\n  approval: never\n");
    let out = edited("", |d| d.set("policy", "approval", &s("never")));
    assert_eq!(out, "policy:\n  approval: never\n");
    // An empty value gets the scalar after its colon.
    let out = edited("a:\nb: 1\n", |d| d.set("", "a", &s("x")));
    assert_eq!(out, "a: x\nb: 1\n");
}

#[test]
fn last_line_without_newline() {
    let text = "mcp:\n  servers:\n    - command: a\n      name: z";
    let out = edited(text, |d| {
        d.set("mcp.servers[0]", "annotation_trust", &s("trust"))
    });
    assert_eq!(
        out,
        "mcp:\n  servers:\n    - command: a\n      name: z\n      annotation_trust: trust"
    );
    let out = edited("a: 1", |d| d.append("l", &s("x"), &[]));
    assert_eq!(out, "a: 1\nl:\n  - x");
}

#[test]
fn append_to_a_block_list_keeps_its_dash_and_indentation() {
    let server = y("{name: gamma, command: npx, args: ['-y', '@m/s'], env: {T: '1'}}");
    let out = edited(CONFIG, |d| {
        d.append("mcp.servers", &server, &["imported".to_string()])
    });
    assert_eq!(
        out,
        CONFIG.replace(
            "        K: v\n",
            "        K: v\n    # imported\n    - name: gamma\n      command: npx\n      args: [-y, \"@m/s\"]\n      env:\n        T: \"1\"\n"
        )
    );
    // Indentless, and a wider gap after the dash.
    let text = "servers:\n-   name: a\n    command: x\nafter: 1\n";
    let out = edited(text, |d| d.append("servers", &y("{name: b}"), &[]));
    assert_eq!(
        out,
        "servers:\n-   name: a\n    command: x\n-   name: b\nafter: 1\n"
    );
    // After a block scalar and the blank lines it swallows.
    let text = "l:\n  - |\n    text\n\n# end\n";
    let out = edited(text, |d| d.append("l", &s("two"), &[]));
    assert_eq!(out, "l:\n  - |\n    text\n  - two\n\n# end\n");
}

#[test]
fn append_to_empty_flow_and_missing_lists() {
    let item = y("{tool: x, allow: true}");
    let out = edited("mcp:\n  servers: []   # none yet\n", |d| {
        d.append("mcp.servers", &y("{name: a}"), &["new".to_string()])
    });
    assert_eq!(
        out,
        "mcp:\n  servers:   # none yet\n    # new\n    - name: a\n"
    );
    let out = edited("policy:\n  approval: never\n", |d| {
        d.append("policy.rules", &item, &[])
    });
    assert_eq!(
        out,
        "policy:\n  approval: never\n  rules:\n    - tool: x\n      allow: true\n"
    );
    let out = edited("policy: {approval: never}\n", |d| {
        d.append("policy.rules", &item, &[])
    });
    assert_eq!(
        out,
        "policy: {approval: never, rules: [{tool: x, allow: true}]}\n"
    );
    let out = edited("mcp: {}\n", |d| d.append("policy.rules", &item, &[]));
    assert_eq!(
        out,
        "mcp: {}\npolicy:\n  rules:\n    - tool: x\n      allow: true\n"
    );
    let out = edited("mcp:\n    servers:\n", |d| {
        d.append("mcp.servers", &s("a"), &[])
    });
    assert_eq!(out, "mcp:\n    servers:\n        - a\n");
    let out = edited("l: [a, b]  # c\n", |d| {
        d.append("l", &s("c d"), &["x".into()])
    });
    assert_eq!(out, "l: [a, b, c d]  # c\n");
}

/// A block list whose items are written `- {…}` gets its new item written so too.
#[test]
fn append_after_flow_items_writes_a_flow_item() {
    let text = "policy:\n  rules:\n    - {tool: a, decision: deny}   # keep\n";
    let out = edited(text, |d| {
        d.append(
            "policy.rules",
            &y("{tool: b, decision: allow}"),
            &["added".into()],
        )
    });
    assert_eq!(
        out,
        "policy:\n  rules:\n    - {tool: a, decision: deny}   # keep\n    # added\n    - {tool: b, decision: allow}\n"
    );
    // After a block item, a block item.
    let text = "rules:\n  - tool: a\n    decision: deny\n";
    let out = edited(text, |d| d.append("rules", &y("{tool: b}"), &[]));
    assert_eq!(
        out,
        "rules:\n  - tool: a\n    decision: deny\n  - tool: b\n"
    );
}

#[test]
fn remove_takes_only_the_item_lines() {
    let text = "\
rules:
  # first
  - tool: a
    allow: true   # why
  # second
  - tool: b
  - tool: a
    note: |
      text
  # after
other: 1
";
    let mut doc = YamlDoc::parse(text).unwrap();
    let removed = doc
        .remove("rules", &|v| v["tool"] == s("a"))
        .expect("removes");
    assert_eq!(removed, 2);
    assert_eq!(
        doc.text(),
        "rules:\n  # first\n  # second\n  - tool: b\n  # after\nother: 1\n"
    );
    let removed = doc.remove("rules", &|_| true).expect("removes");
    assert_eq!(removed, 1);
    assert_eq!(
        doc.text(),
        "rules: []\n  # first\n  # second\n  # after\nother: 1\n"
    );
    assert_eq!(doc.remove("rules", &|_| true), Ok(0));
    assert_eq!(doc.remove("missing.list", &|_| true), Ok(0));

    let mut doc = YamlDoc::parse("l: [a, {b: 1}, c]\n").unwrap();
    assert_eq!(doc.remove("l", &|v| v == &s("c")), Ok(1));
    assert_eq!(doc.text(), "l: [a, {b: 1}]\n");
    assert_eq!(doc.remove("l", &|v| v == &s("a")), Ok(1));
    assert_eq!(doc.text(), "l: [{b: 1}]\n");
    assert_eq!(doc.remove("l", &|_| true), Ok(1));
    assert_eq!(doc.text(), "l: []\n");
}

#[test]
fn crlf_files_get_crlf_lines() {
    let text = "mcp:\r\n  servers:\r\n    - name: a\r\n";
    let out = edited(text, |d| {
        d.set("mcp.servers[0]", "enabled", &Value::Bool(false))
    });
    assert_eq!(
        out,
        "mcp:\r\n  servers:\r\n    - name: a\r\n      enabled: false\r\n"
    );
}

#[test]
fn refusals_leave_the_text_alone() {
    let mut doc = YamlDoc::parse(CONFIG).unwrap();
    assert!(matches!(
        doc.set("mcp.servers[0]", "args", &s("x")),
        Err(EditError::WrongKind { .. })
    ));
    assert!(matches!(
        doc.append("policy.approval", &s("x"), &[]),
        Err(EditError::WrongKind { .. })
    ));
    assert!(matches!(
        doc.set("mcp.servers[0]", "env", &y("{a: 1}")),
        Err(EditError::WrongKind { .. })
    ));
    assert!(matches!(
        doc.append("mcp.servers[7].args", &s("x"), &[]),
        Err(EditError::Missing(_))
    ));
    assert_eq!(doc.text(), CONFIG);
    // An anchor shared with another place: the edit would change both, so it is refused.
    let text = "a: &x {k: 1}\nb: *x\n";
    let mut doc = YamlDoc::parse(text).unwrap();
    assert!(matches!(
        doc.set("a", "k", &Value::from(2)),
        Err(EditError::Failed { .. })
    ));
    assert_eq!(doc.text(), text);
    assert!(matches!(
        YamlDoc::parse("a: [\n"),
        Err(EditError::Syntax(_))
    ));
}
