//! Tests of `openai_responses.rs`: input items, and responses read whole or streamed.

use super::*;
use crate::agent::turn::ToolCall;

fn options(stream: bool) -> RequestOptions {
    RequestOptions {
        model: "gpt".into(),
        stream,
        temperature: None,
        max_tokens: Some(50),
    }
}

#[test]
fn the_conversation_goes_as_input_items_with_sealed_reasoning_only() {
    let sealed = Reasoning {
        provider: NAME.into(),
        text: "so".into(),
        state: json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"}),
    };
    let unsealed = Reasoning {
        provider: NAME.into(),
        text: String::new(),
        state: json!({"type": "reasoning", "id": "rs_2", "summary": []}),
    };
    let call = ToolCall {
        id: "call_1".into(),
        name: "add".into(),
        arguments: "{}".into(),
    };
    let history = History::new(
        Some("be brief".into()),
        vec![
            Item::User { text: "add".into() },
            Item::assistant("Adding.".into(), vec![sealed, unsealed], vec![call]),
            Item::ToolResult {
                call_id: "call_1".into(),
                text: "2".into(),
            },
        ],
    );
    let tools = ToolList::new(vec![ToolSpec {
        name: "add".into(),
        description: "d".into(),
        parameters: json!({"type": "object"}),
    }]);
    let body: Value = serde_json::from_slice(&request_body(
        &history,
        &tools,
        ToolChoice::None,
        &options(false),
    ))
    .unwrap();
    assert_eq!(body["instructions"], "be brief");
    assert_eq!(body["store"], false);
    assert_eq!(body["max_output_tokens"], 50);
    assert_eq!(body["tool_choice"], "none");
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "name": "add", "description": "d", "parameters": {"type": "object"}}])
    );
    assert_eq!(
        body["input"],
        json!([
            {"type": "message", "role": "user", "content": "add"},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"},
            {"type": "message", "role": "assistant", "content": "Adding."},
            {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "2"},
        ])
    );
}

#[test]
fn a_whole_response_reads_its_items_and_how_it_ended() {
    let body = json!({"status": "completed", "output": [
        {"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text", "text": "so"}]},
        {"type": "message", "content": [{"type": "output_text", "text": "Adding."}]},
        {"type": "function_call", "call_id": "c", "name": "add", "arguments": "{\"a\":1}"}
    ], "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 8}, "output_tokens": 3}});
    let reply = whole(body.to_string().as_bytes(), &Secrets::default()).unwrap();
    assert_eq!(reply.text, "Adding.");
    assert_eq!(reply.reasoning[0].text, "so");
    assert_eq!(reply.tool_calls[0].arguments, "{\"a\":1}");
    assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(reply.usage.map(|u| u.cached_input_tokens), Some(8));
    let cut = json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": []});
    let reply = whole(cut.to_string().as_bytes(), &Secrets::default()).unwrap();
    assert_eq!(reply.finish_reason, Some(FinishReason::Length));
    let failed = json!({"status": "failed", "error": {"message": "boom"}, "output": []});
    let err = whole(failed.to_string().as_bytes(), &Secrets::default()).unwrap_err();
    assert!(err.message.contains("boom"), "{}", err.message);
}

#[test]
fn a_stream_joins_text_and_arguments_and_ends_at_completed() {
    let events = [
        json!({"type": "response.created", "response": {"status": "in_progress"}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message"}}),
        json!({"type": "response.output_text.delta", "output_index": 0, "delta": "Add"}),
        json!({"type": "response.output_text.delta", "output_index": 0, "delta": "ing."}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message", "content": [{"type": "output_text", "text": "Adding."}]}}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "call_id": "c1", "name": "add", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "{\"a\""}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": ":1}"}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{\"a\":1}"}}),
        json!({"type": "response.completed", "response": {"status": "completed", "usage": {"input_tokens": 5, "output_tokens": 2}}}),
    ];
    let mut reader = Box::new(Reader::new(Secrets::default()));
    let mut pieces = Vec::new();
    for e in &events {
        reader
            .feed("", &e.to_string(), &mut |p| pieces.push(p))
            .unwrap();
    }
    assert!(reader.is_done());
    let reply = reader.finish().unwrap();
    assert_eq!(reply.text, "Adding.");
    assert_eq!(reply.tool_calls[0].arguments, "{\"a\":1}");
    assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(pieces.len(), 3, "{pieces:?}");
    let mut cut = Box::new(Reader::new(Secrets::default()));
    for e in &events[..3] {
        cut.feed("", &e.to_string(), &mut |_| {}).unwrap();
    }
    assert!(cut
        .finish()
        .unwrap_err()
        .message
        .contains("before its finish reason"));
    let mut failed = Reader::new(Secrets::default());
    let err = failed
        .feed(
            "",
            &json!({"type": "response.failed", "response": {"error": {"message": "quota"}}})
                .to_string(),
            &mut |_| {},
        )
        .unwrap_err();
    assert!(err.message.contains("quota"), "{}", err.message);
}
