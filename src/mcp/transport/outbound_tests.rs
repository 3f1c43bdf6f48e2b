//! The line written from its parts says what rmcp's own serialization says, for every shape a
//! `tools/call` takes; other messages go rmcp's way.

use super::*;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, Implementation, JsonRpcRequest,
    NumberOrString, PingRequest, ProgressToken, ProtocolVersion,
};
use serde_json::{json, Value};

fn call(params: CallToolRequestParams) -> CallToolRequest {
    CallToolRequest::new(params)
}

fn message(id: NumberOrString, request: ClientRequest) -> ClientJsonRpcMessage {
    JsonRpcMessage::Request(JsonRpcRequest::new(id, request))
}

/// Both ways of writing `item`: ours (as a line) and rmcp's, each parsed.
fn both(item: &ClientJsonRpcMessage) -> (Value, Value) {
    let ours = line(item).expect("serializes");
    assert_eq!(ours.last(), Some(&b'\n'));
    assert_eq!(ours.iter().filter(|b| **b == b'\n').count(), 1, "one line");
    let theirs = serde_json::to_value(item).expect("rmcp serializes");
    (serde_json::from_slice(&ours).expect("json"), theirs)
}

fn with_context(mut request: CallToolRequest) -> CallToolRequest {
    let meta = request.extensions.get_mut::<RequestMetaObject>().cloned();
    let mut meta = meta.unwrap_or_default();
    meta.set_protocol_version(ProtocolVersion::V_2026_07_28);
    meta.set_client_info(Implementation::new("aimon-console", "0.1.0"));
    meta.set_client_capabilities(ClientCapabilities::default());
    meta.set_progress_token(ProgressToken(NumberOrString::Number(7)));
    request.extensions.insert(meta);
    request
}

#[test]
fn a_call_with_the_client_context_reads_as_rmcp_writes_it() {
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = json!({"text": "hi \"there\"\n", "n": [1, 2.5, null]})
        .as_object()
        .cloned();
    let item = message(
        NumberOrString::Number(41),
        ClientRequest::CallToolRequest(with_context(call(params))),
    );
    let (ours, theirs) = both(&item);
    assert_eq!(ours, theirs);
    assert_eq!(ours["params"]["_meta"]["progressToken"], 7);
    assert!(line(&item)
        .expect("line")
        .starts_with(br#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"_meta":{"#));
}

#[test]
fn a_call_without_arguments_or_context_and_with_a_string_id_reads_the_same() {
    let bare = message(
        NumberOrString::String("a\"b".into()),
        ClientRequest::CallToolRequest(call(CallToolRequestParams::new("t"))),
    );
    let (ours, theirs) = both(&bare);
    assert_eq!(ours, theirs);
    let context_only = message(
        NumberOrString::Number(1),
        ClientRequest::CallToolRequest(with_context(call(CallToolRequestParams::new("t")))),
    );
    let (ours, theirs) = both(&context_only);
    assert_eq!(ours, theirs);
}

#[test]
fn a_call_whose_params_hold_their_own_meta_goes_rmcps_way() {
    let mut params = CallToolRequestParams::new("t");
    params.meta = Some(RequestMetaObject::from(
        json!({"k": 1}).as_object().cloned().unwrap_or_default(),
    ));
    let item = message(
        NumberOrString::Number(2),
        ClientRequest::CallToolRequest(with_context(call(params))),
    );
    assert!(call_line(&item).expect("serializes").is_none());
    let (ours, theirs) = both(&item);
    assert_eq!(ours, theirs);
    assert_eq!(ours["params"]["_meta"]["k"], 1);
}

#[test]
fn other_messages_go_rmcps_way() {
    let ping = message(
        NumberOrString::Number(3),
        ClientRequest::PingRequest(PingRequest::default()),
    );
    assert!(call_line(&ping).expect("serializes").is_none());
    let (ours, theirs) = both(&ping);
    assert_eq!(ours, theirs);
}
