//! Tests of `answers.rs`: the direct reads against rmcp's general read.

use super::*;
use proptest::strategy::Just;

#[test]
fn classifies_lines() {
    assert!(matches!(classify_line(b"  \r"), LineKind::Blank));
    assert!(matches!(classify_line(b"hello world"), LineKind::NotJson));
    assert!(matches!(
        classify_line(b"{\"a\":1}"),
        LineKind::NotAMessage(_)
    ));
    assert!(matches!(classify_line(b"\xff\xfe"), LineKind::NotJson));
    assert!(matches!(
        classify_line(br#"{"jsonrpc":"2.0","id":0,"result":{}}"#),
        LineKind::Message(_)
    ));
    assert!(matches!(
        classify_line(br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#),
        LineKind::Message(_)
    ));
}

fn request(id: i64, method: &str) -> TxJsonRpcMessage<RoleClient> {
    let params = if method == "tools/call" {
        r#","params":{"name":"echo"}"#
    } else {
        ""
    };
    let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"{params}}}"#);
    serde_json::from_str(&line).expect("a request")
}

/// A connection with `tools/call` ids 1 to 9 in flight.
fn calls_in_flight() -> Pending {
    let pending = Pending::default();
    for id in 1..10 {
        pending.sent(&request(id, "tools/call"));
    }
    pending
}

fn message(kind: LineKind) -> Option<ServerJsonRpcMessage> {
    match kind {
        LineKind::Message(m) | LineKind::ToolPage(m, _) => Some(*m),
        LineKind::Blank | LineKind::NotJson | LineKind::NotAMessage(_) => None,
    }
}

/// What the direct read must hold to: where rmcp's general read finds a tool's result, the
/// same message; where it finds anything else, what it found, untouched.
fn same_as_general_read(line: &str) {
    let pending = calls_in_flight();
    let general = message(classify_line(line.as_bytes()));
    let direct = message(classify_answer(line.as_bytes(), &pending));
    assert_eq!(
        serde_json::to_value(&direct).unwrap(),
        serde_json::to_value(&general).unwrap(),
        "{line}"
    );
}

#[test]
fn answers_to_tool_calls_read_directly_are_what_the_general_read_gives() {
    for line in [
        r#"{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","content":[{"type":"text","text":"hello"}],"isError":false}}"#,
        r#"{"jsonrpc":"2.0","id":4,"result":{"content":[],"structuredContent":{"a":[1,2]},"_meta":{"k":"v"}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"result":{"structuredContent":null}}"#,
        r#"{"jsonrpc":"2.0","id":4,"result":{"isError":true,"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}}"#,
        // Not a tool's result: a task, an input request, an empty or custom result, an error.
        r#"{"jsonrpc":"2.0","id":4,"result":{"resultType":"input_required","inputRequests":{}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"result":{"task":{"taskId":"t","status":"working","createdAt":"2026-01-01T00:00:00Z","ttl":null}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":4,"result":{"custom":1}}"#,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"bad"}}"#,
        // Not for a call in flight, not a response, not a message.
        r#"{"jsonrpc":"2.0","id":42,"result":{"content":[]}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"roots/list"}"#,
        r#"{"jsonrpc":"1.0","id":4,"result":{"content":[]}}"#,
        "not json",
    ] {
        same_as_general_read(line);
    }
}

#[test]
fn the_answer_to_a_call_is_read_as_the_kind_the_call_asked_for() {
    // rmcp's general read guesses the kind from the fields and takes the first that fits.
    let line = r#"{"jsonrpc":"2.0","id":4,"result":{"content":[],"tools":[]}}"#;
    let kind = |m: Option<ServerJsonRpcMessage>| match m {
        Some(JsonRpcMessage::Response(r)) => match r.result {
            ServerResult::CallToolResult(_) => "tools/call",
            ServerResult::ListToolsResult(_) => "tools/list",
            _ => "other",
        },
        _ => "not a response",
    };
    assert_eq!(kind(message(classify_line(line.as_bytes()))), "tools/list");
    let direct = classify_answer(line.as_bytes(), &calls_in_flight());
    assert_eq!(kind(message(direct)), "tools/call");
}

#[test]
fn a_tool_list_answer_keeps_its_good_tools_and_names_the_bad() {
    let pending = Pending::default();
    pending.sent(&request(3, "tools/list"));
    let line = r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"a","inputSchema":{}},{"name":"b","inputSchema":"x"}]}}"#;
    // rmcp's own read loses the whole page.
    assert!(!matches!(
        classify_line(line.as_bytes()),
        LineKind::Message(m) if matches!(*m, JsonRpcMessage::Response(JsonRpcResponse { result: ServerResult::ListToolsResult(_), .. }))
    ));
    match classify_answer(line.as_bytes(), &pending) {
        LineKind::ToolPage(m, entries) => {
            let JsonRpcMessage::Response(JsonRpcResponse {
                result: ServerResult::ListToolsResult(page),
                ..
            }) = *m
            else {
                panic!("not a tool list: {m:?}");
            };
            assert!(page.tools.is_empty(), "the tools wait beside the page");
            assert_eq!(entries.tools.len(), 1);
            let skipped = entries.skipped;
            assert_eq!(skipped.len(), 1, "{skipped:?}");
            assert!(skipped[0].contains("\"b\""), "{skipped:?}");
        }
        other => panic!("not a page: {other:?}"),
    }
    assert_eq!(pending.take(&RequestId::Number(3)), None, "answered");
}

#[test]
fn answered_and_cancelled_requests_are_forgotten_and_the_set_stays_bounded() {
    let pending = calls_in_flight();
    let answer = r#"{"jsonrpc":"2.0","id":4,"result":{"content":[]}}"#;
    let error = r#"{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"no"}}"#;
    assert!(message(classify_answer(answer.as_bytes(), &pending)).is_some());
    assert!(message(classify_answer(error.as_bytes(), &pending)).is_some());
    let cancelled: TxJsonRpcMessage<RoleClient> = serde_json::from_str(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}"#,
    )
    .expect("a notification");
    pending.sent(&cancelled);
    assert_eq!(pending.lock().requests.len(), 6);
    assert_eq!(pending.take(&RequestId::Number(7)), Some("tools/call"));
    assert_eq!(pending.take_all().len(), 5);
    assert!(!pending.calls_in_flight());
    for id in 0..(PENDING_LIMIT as i64 * 2) {
        pending.sent(&request(id, "tools/call"));
    }
    assert!(pending.lock().requests.len() <= PENDING_LIMIT);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
    #[test]
    fn classify_never_panics(line in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
        let _ = classify_line(&line);
        let _ = classify_answer(&line, &calls_in_flight());
    }

    /// Results built from the fields of every kind of result: the direct read of a call's
    /// answer is a message exactly when the general read's is, and where the general read
    /// finds a tool's result, it is the same one. (Where the general read guesses another
    /// kind for a call's answer, say `tools` beside `content`, the direct read keeps the
    /// kind the request asked for.)
    #[test]
    fn direct_reads_agree_with_the_general_read(
        fields in proptest::collection::btree_map(
            proptest::sample::select(vec![
                "content", "structuredContent", "isError", "resultType", "_meta", "tools",
                "action", "task", "contents", "messages", "nextCursor",
            ]),
            proptest::prop_oneof![
                Just(serde_json::json!([])),
                Just(serde_json::json!([{"type": "text", "text": "t"}])),
                Just(serde_json::json!({})),
                Just(serde_json::json!(true)),
                Just(serde_json::json!(null)),
                Just(serde_json::json!("complete")),
                Just(serde_json::json!("accept")),
                Just(serde_json::json!(1)),
            ],
            0..5,
        ),
        id in 0i64..12,
    ) {
        let line = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": fields}).to_string();
        let general = message(classify_line(line.as_bytes()));
        let direct = message(classify_answer(line.as_bytes(), &calls_in_flight()));
        let id_of = |m: &Option<ServerJsonRpcMessage>| match m {
            Some(JsonRpcMessage::Response(r)) => Some(r.id.clone()),
            _ => None,
        };
        proptest::prop_assert_eq!(id_of(&direct), id_of(&general), "{}", line);
        if let Some(JsonRpcMessage::Response(JsonRpcResponse {
            result: ServerResult::CallToolResult(_), ..
        })) = &general {
            proptest::prop_assert_eq!(
                serde_json::to_value(&direct).unwrap(),
                serde_json::to_value(&general).unwrap()
            );
        }
    }
}
