//! Properties of the editor over generated configs (block, indentless, flow and empty server
//! lists, quoted and flow entries, comments on every line, blank lines, no final newline) and
//! generated edits: the edit reads back as meant, every byte outside the one splice is the byte
//! that was there, and every comment is still there.

use proptest::prelude::*;
use serde_yaml::Value;

use super::*;

fn y(text: &str) -> Value {
    serde_yaml::from_str(text).unwrap()
}

fn s(text: &str) -> Value {
    Value::String(text.to_string())
}

#[derive(Debug, Clone)]
struct Server {
    name: String,
    quote: u8,
    flow: bool,
    trust: Option<bool>,
    enabled: Option<bool>,
    comment: Option<String>,
    args: Vec<String>,
}

#[derive(Debug, Clone)]
enum ListStyle {
    Block { dash: usize, gap: usize },
    Flow,
    Null,
    Missing,
}

#[derive(Debug, Clone)]
struct Doc {
    servers: Vec<Server>,
    style: ListStyle,
    policy: u8,
    blank_lines: bool,
    final_newline: bool,
}

fn server() -> impl Strategy<Value = Server> {
    (
        "[a-z][a-z0-9-]{0,6}[a-z0-9]".prop_filter("not a YAML keyword", |n| {
            !["true", "false", "null"].contains(&n.as_str())
        }),
        0u8..3,
        any::<bool>(),
        proptest::option::of(any::<bool>()),
        proptest::option::of(any::<bool>()),
        proptest::option::of("[ a-zA-Z0-9:#'\"é]{0,12}"),
        proptest::collection::vec("[a-z@/: -]{1,6}", 0..3),
    )
        .prop_map(
            |(name, quote, flow, trust, enabled, comment, args)| Server {
                name,
                quote,
                flow,
                trust,
                enabled,
                comment,
                args,
            },
        )
}

fn doc() -> impl Strategy<Value = Doc> {
    let style = prop_oneof![
        (2usize..6, 2usize..4).prop_map(|(dash, gap)| ListStyle::Block { dash, gap }),
        Just(ListStyle::Flow),
        Just(ListStyle::Null),
        Just(ListStyle::Missing),
    ];
    (
        proptest::collection::vec(server(), 0..4),
        style,
        0u8..4,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(mut servers, style, policy, blank_lines, final_newline)| {
            // Names are unique in a config.
            let mut seen = std::collections::HashSet::new();
            servers.retain(|s| seen.insert(s.name.clone()));
            if matches!(style, ListStyle::Null | ListStyle::Missing) {
                servers.clear();
            }
            Doc {
                servers,
                style,
                policy,
                blank_lines,
                final_newline,
            }
        })
}

fn quoted(name: &str, quote: u8) -> String {
    match quote {
        0 => name.to_string(),
        1 => format!("\"{name}\""),
        _ => format!("'{name}'"),
    }
}

fn flow_server(s: &Server) -> String {
    let mut parts = vec![format!("name: {}", quoted(&s.name, s.quote))];
    parts.push("command: x".to_string());
    if let Some(t) = s.trust {
        parts.push(format!(
            "annotation_trust: {}",
            if t { "trust" } else { "ignore" }
        ));
    }
    if let Some(e) = s.enabled {
        parts.push(format!("enabled: {e}"));
    }
    if !s.args.is_empty() {
        let args: Vec<String> = s.args.iter().map(|a| format!("{a:?}")).collect();
        parts.push(format!("args: [{}]", args.join(", ")));
    }
    format!("{{{}}}", parts.join(", "))
}

/// The text, and for each server the lines of its item (the comment above it not counted).
fn render(d: &Doc) -> (String, Vec<Vec<String>>) {
    let mut items = Vec::new();
    let mut out = String::from("# generated config\nmcp:\n  startup_budget: 5s  # cap\n");
    match &d.style {
        ListStyle::Missing => {}
        ListStyle::Null => out.push_str("  servers:   # none\n"),
        ListStyle::Flow => {
            let items: Vec<String> = d.servers.iter().map(flow_server).collect();
            out.push_str(&format!("  servers: [{}]  # flow\n", items.join(", ")));
        }
        ListStyle::Block { dash, gap } => {
            if d.servers.is_empty() {
                out.push_str("  servers: []\n");
            } else {
                out.push_str("  servers:\n");
            }
            let pad = " ".repeat(*dash);
            let inner = " ".repeat(dash + gap);
            for s in &d.servers {
                if let Some(c) = &s.comment {
                    out.push_str(&format!("{pad}# {c}\n"));
                }
                let from = out.len();
                if s.flow {
                    out.push_str(&format!(
                        "{pad}-{}{}\n",
                        " ".repeat(gap - 1),
                        flow_server(s)
                    ));
                } else {
                    out.push_str(&format!(
                        "{pad}-{}name: {}   # {}\n",
                        " ".repeat(gap - 1),
                        quoted(&s.name, s.quote),
                        s.comment.as_deref().unwrap_or("")
                    ));
                    out.push_str(&format!("{inner}command: x\n"));
                    if let Some(t) = s.trust {
                        out.push_str(&format!(
                            "{inner}annotation_trust: {}\n",
                            if t { "trust" } else { "ignore" }
                        ));
                    }
                    if !s.args.is_empty() {
                        out.push_str(&format!("{inner}args:\n"));
                        for a in &s.args {
                            out.push_str(&format!("{inner}  - {a:?}  # arg\n"));
                        }
                    }
                    if let Some(e) = s.enabled {
                        out.push_str(&format!("{inner}enabled: {e}\n"));
                    }
                }
                items.push(out[from..].lines().map(str::to_string).collect());
                if d.blank_lines {
                    out.push('\n');
                }
            }
        }
    }
    match d.policy {
        0 => {}
        1 => out.push_str("policy: {approval: never}\n"),
        2 => out.push_str("policy:\n  approval: never   # policy\n"),
        _ => out.push_str("policy:\n"),
    }
    out.push_str("# the end");
    if d.final_newline {
        out.push('\n');
    }
    (out, items)
}

#[derive(Debug, Clone)]
enum Op {
    Trust(usize, bool),
    Enable(usize, bool),
    AppendServer(String),
    AppendRule(String),
    RemoveServer(usize),
    SetApproval,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0usize..4, any::<bool>()).prop_map(|(i, t)| Op::Trust(i, t)),
        (0usize..4, any::<bool>()).prop_map(|(i, e)| Op::Enable(i, e)),
        "[a-z]{1,8}".prop_map(Op::AppendServer),
        "[a-z_]{1,8}".prop_map(Op::AppendRule),
        (0usize..4).prop_map(Op::RemoveServer),
        Just(Op::SetApproval),
    ]
}

/// Every comment of `before` is still in `after`.
fn comments_kept(before: &str, after: &str) {
    for line in before.lines() {
        if let Some(at) = line.find('#') {
            let comment = &line[at..];
            assert!(after.contains(comment), "lost {comment:?}\n---\n{after}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn edits_touch_only_their_splice(d in doc(), op in op()) {
        let (before, items) = render(&d);
        let mut doc = YamlDoc::parse(before.clone()).expect("generated text parses");
        let old: Value = serde_yaml::from_str(&before).expect("parses");
        let n = d.servers.len();
        let mut expected = old.clone();
        let mut own_lines: Vec<String> = Vec::new();
        let result = match &op {
            Op::Trust(i, t) | Op::Enable(i, t) if *i < n => {
                let key = if matches!(op, Op::Trust(..)) { "annotation_trust" } else { "enabled" };
                let value = match (&op, t) {
                    (Op::Trust(..), true) => s("trust"),
                    (Op::Trust(..), false) => s("ignore"),
                    (_, t) => Value::Bool(*t),
                };
                expected["mcp"]["servers"][*i][key] = value.clone();
                doc.set(&format!("mcp.servers[{i}]"), key, &value).map(Some)
            }
            Op::Trust(..) | Op::Enable(..) => return Ok(()),
            Op::AppendServer(name) => {
                let item = y(&format!("{{name: {name}, command: npx, args: ['-y', '@x/y']}}"));
                let servers = &mut expected["mcp"]["servers"];
                match servers {
                    Value::Sequence(items) => items.push(item.clone()),
                    _ => *servers = Value::Sequence(vec![item.clone()]),
                }
                doc.append("mcp.servers", &item, &[format!("imported {name}")]).map(Some)
            }
            Op::AppendRule(tool) => {
                let item = y(&format!("{{tool: {tool}, decision: allow}}"));
                let policy = &mut expected["policy"];
                if !matches!(policy, Value::Mapping(_)) {
                    *policy = y("{}");
                }
                policy["rules"] = Value::Sequence(vec![item.clone()]);
                doc.append("policy.rules", &item, &[]).map(Some)
            }
            Op::RemoveServer(i) if *i < n => {
                let name = d.servers[*i].name.clone();
                own_lines = items.get(*i).cloned().unwrap_or_default();
                if let Value::Sequence(items) = &mut expected["mcp"]["servers"] {
                    items.remove(*i);
                }
                let removed = doc.remove("mcp.servers", &|v| v["name"] == s(&name));
                prop_assert_eq!(removed, Ok(1));
                Ok(None)
            }
            Op::RemoveServer(_) => return Ok(()),
            Op::SetApproval => {
                let policy = &mut expected["policy"];
                if !matches!(policy, Value::Mapping(_)) {
                    *policy = y("{}");
                }
                policy["approval"] = s("ask_all");
                doc.set("policy", "approval", &s("ask_all")).map(Some)
            }
        };
        let change = match result {
            Ok(change) => change,
            Err(e) => return Err(TestCaseError::fail(format!("{e}\n---\n{before}"))),
        };
        let after = doc.text().to_string();
        let read: Value = serde_yaml::from_str(&after).expect("edited text parses");
        prop_assert_eq!(&read, &expected, "\n---before\n{}\n---after\n{}", before, after);
        match change {
            Some(change) => {
                // One splice, and the bytes around it are the old bytes.
                let end = change.offset + change.removed.len();
                prop_assert_eq!(&before[..change.offset], &after[..change.offset]);
                prop_assert_eq!(&before[end..], &after[change.offset + change.inserted.len()..]);
                prop_assert_eq!(&before[change.offset..end], change.removed.as_str());
                let removed = change.removed.as_str();
                if matches!(op, Op::AppendServer(_) | Op::AppendRule(_)) {
                    // An append removes at most an empty value (`[]`, `~`), keeping the rest of
                    // its line.
                    let gone = removed.trim_start_matches(' ');
                    let kept = ["[]", "~", ""].iter().any(|token| {
                        gone.strip_prefix(token)
                            .is_some_and(|rest| change.inserted.starts_with(rest))
                    });
                    prop_assert!(kept, "removed {:?}, inserted {:?}", removed, change.inserted);
                } else {
                    // A set replaces one scalar.
                    prop_assert!(!removed.contains('\n') && !removed.contains('#'), "{:?}", removed);
                }
                comments_kept(&before, &after);
            }
            None => {
                // A removal: only the removed item's lines went.
                let lost = before.len() - after.len();
                prop_assert!(lost > 0 || n == 0);
                for line in before.lines() {
                    let Some(at) = line.find('#') else { continue };
                    if own_lines.iter().any(|own| own == line) {
                        continue;
                    }
                    let comment = &line[at..];
                    prop_assert!(after.contains(comment), "lost {:?}\n---\n{}", comment, after);
                }
            }
        }
    }
}
