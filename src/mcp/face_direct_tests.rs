use super::*;

#[test]
fn a_hosts_plain_call_is_taken_with_its_meta() {
    let line = br#"{"method":"tools/call","params":{"name":"notes__echo","arguments":{"text":"hi"},"_meta":{"progressToken":7}},"jsonrpc":"2.0","id":4}"#;
    let (id, params) = call_line(line).expect("taken");
    assert_eq!(id, NumberOrString::Number(4));
    assert_eq!(params.name, "notes__echo");
    assert_eq!(params.arguments.unwrap()["text"], "hi");
    assert_eq!(params.meta.unwrap()["progressToken"], 7);
    // No arguments, a string id.
    let line = br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}"#;
    let (id, params) = call_line(line).expect("taken");
    assert_eq!(id, NumberOrString::String("a".into()));
    assert!(params.arguments.is_none());
}

#[test]
fn what_the_direct_way_does_not_know_is_left_to_rmcp() {
    for line in [
        // A task-augmented call, an answer to an input request, a field of tomorrow.
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{"ttl":1000}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","inputResponses":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"extra":true}"#,
        // Another method, a notification, another JSON-RPC, no params.
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"tools/call"}}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
        "not json \"tools/call\"",
    ] {
        assert!(call_line(line.as_bytes()).is_none(), "{line}");
    }
}

#[test]
fn a_cancellation_names_its_request() {
    let line = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"user"}}"#;
    assert_eq!(cancelled_call(line), Some(NumberOrString::Number(4)));
    let line = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":4,"note":"notifications/cancelled"}}"#;
    assert_eq!(cancelled_call(line), None);
}
