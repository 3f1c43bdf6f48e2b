//! Tests of `anthropic.rs`: the request as the Messages API documents it, and answers read
//! whole or streamed.

use super::*;
use crate::agent::turn::ToolCall;

fn options() -> RequestOptions {
    RequestOptions {
        model: "claude".into(),
        stream: true,
        temperature: None,
        max_tokens: None,
    }
}

fn history() -> History {
    let thought = Reasoning {
        provider: NAME.into(),
        text: "hm".into(),
        state: json!({"type": "thinking", "thinking": "hm", "signature": "s1"}),
    };
    let other = Reasoning {
        provider: "openai-responses".into(),
        text: String::new(),
        state: json!({"type": "reasoning"}),
    };
    let call = ToolCall {
        id: "toolu_1".into(),
        name: "mcp__n__add".into(),
        arguments: "{\"a\":1}".into(),
    };
    History::new(
        Some("be brief".into()),
        vec![
            Item::User { text: "add".into() },
            Item::assistant("Adding.".into(), vec![thought, other], vec![call]),
            Item::ToolResult {
                call_id: "toolu_1".into(),
                text: "2".into(),
            },
        ],
    )
}

#[test]
fn the_system_prompt_and_tools_are_cached_and_thinking_goes_back_first() {
    let tools = ToolList::new(
        ["a", "b"]
            .iter()
            .map(|n| ToolSpec {
                name: (*n).into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
            })
            .collect(),
    );
    let body: Value = serde_json::from_slice(&request_body(
        &history(),
        &tools,
        ToolChoice::Auto,
        &options(),
    ))
    .unwrap();
    assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}])
    );
    assert!(body["tools"][0].get("cache_control").is_none());
    assert_eq!(
        body["tools"][1]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(body["tools"][1]["input_schema"], json!({"type": "object"}));
    assert_eq!(body["tool_choice"], json!({"type": "auto"}));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "add"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": "s1"},
                {"type": "text", "text": "Adding."},
                {"type": "tool_use", "id": "toolu_1", "name": "mcp__n__add", "input": {"a": 1}},
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "2"}]},
        ])
    );
}

#[test]
fn the_key_goes_as_x_api_key_with_a_version() {
    let mut profile = ModelProfile::url("p", "http://127.0.0.1:1/v1", "m");
    profile.api_key = Some("sk-ant".into());
    let mut h = HeaderMap::new();
    headers(&profile, &mut h);
    assert_eq!(h["x-api-key"], "sk-ant");
    assert!(h["x-api-key"].is_sensitive());
    assert_eq!(h["anthropic-version"], VERSION);
    assert!(h.get(http::header::AUTHORIZATION).is_none());
}

#[test]
fn a_whole_message_reads_its_blocks_and_cache_usage() {
    let body = json!({"type": "message", "content": [
        {"type": "thinking", "thinking": "so", "signature": "s"},
        {"type": "text", "text": "Adding."},
        {"type": "tool_use", "id": "toolu_9", "name": "add", "input": {"a": 1}}
    ], "stop_reason": "tool_use", "usage": {"input_tokens": 10, "cache_read_input_tokens": 90, "cache_creation_input_tokens": 5, "output_tokens": 7}});
    let reply = whole(body.to_string().as_bytes(), &Secrets::default()).unwrap();
    assert_eq!(reply.text, "Adding.");
    assert_eq!(reply.reasoning[0].state["signature"], "s");
    assert_eq!(reply.tool_calls[0].arguments, "{\"a\":1}");
    assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(
        reply.usage,
        Some(Usage {
            input_tokens: 105,
            output_tokens: 7,
            cached_input_tokens: 90
        })
    );
    let err = whole(b"{\"type\": \"error\"}", &Secrets::default()).unwrap_err();
    assert_eq!(err.class, ModelFailureClass::BadResponse);
}

fn feed(events: &[Value]) -> Result<(ModelReply, Vec<StreamPiece>), ModelError> {
    let mut reader = Box::new(Reader::new(Secrets::default()));
    let mut pieces = Vec::new();
    for e in events {
        reader.feed("", &e.to_string(), &mut |p| pieces.push(p))?;
    }
    reader.finish().map(|r| (r, pieces))
}

#[test]
fn a_stream_joins_its_blocks_and_ends_at_message_stop() {
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 3, "cache_read_input_tokens": 4, "output_tokens": 1}}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "so"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hi "}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "t1", "name": "add", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"a\""}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ":1}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "t2", "name": "now", "input": {}}}),
        json!({"type": "content_block_stop", "index": 3}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ];
    let (reply, pieces) = feed(&events).unwrap();
    assert_eq!(reply.text, "Hi ");
    assert_eq!(
        reply.reasoning[0].state,
        json!({"type": "thinking", "thinking": "so", "signature": "sig"})
    );
    let calls: Vec<(&str, &str)> = reply
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(calls, [("t1", "{\"a\":1}"), ("t2", "{}")]);
    assert_eq!(
        reply
            .usage
            .map(|u| (u.input_tokens, u.cached_input_tokens, u.output_tokens)),
        Some((7, 4, 9))
    );
    assert_eq!(pieces.len(), 3, "{pieces:?}");
    // Cut before its end; an error event; not JSON.
    let cut = feed(&events[..8]).unwrap_err();
    assert!(
        cut.message.contains("before its finish reason"),
        "{}",
        cut.message
    );
    let overloaded = feed(&[
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ])
    .unwrap_err();
    assert!(
        overloaded.message.contains("Overloaded"),
        "{}",
        overloaded.message
    );
    let mut reader = Reader::new(Secrets::default());
    let bad = reader
        .feed("content_block_delta", "{\"type\": ", &mut |_| {})
        .unwrap_err();
    assert_eq!(bad.class, ModelFailureClass::BadStream);
}
