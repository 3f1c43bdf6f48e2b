//! Tests of `openai_chat.rs`: the request body, the history as messages, and answers read
//! whole or streamed.

use super::*;
use crate::agent::stream::MAX_CALL_NAME_BYTES;
use crate::agent::turn::Reasoning;
use serde_json::json;

fn options(stream: bool) -> RequestOptions {
    RequestOptions {
        model: "m\"1".into(),
        stream,
        temperature: Some(0.2),
        max_tokens: Some(7),
    }
}

fn body(
    history: &History,
    tools: &ToolList,
    choice: ToolChoice,
    options: &RequestOptions,
) -> Value {
    serde_json::from_slice(&request_body(history, tools, choice, options)).unwrap()
}

#[test]
fn the_body_carries_tools_as_given_and_asks_for_usage_when_streaming() {
    let tools = ToolList::new(vec![ToolSpec {
        name: "mcp__s__echo".into(),
        description: "Echo \"this\".".into(),
        parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
    }]);
    let user = History::new(None, vec![Item::User { text: "hi".into() }]);
    assert_eq!(
        body(&user, &tools, ToolChoice::Auto, &options(true)),
        json!({
            "model": "m\"1",
            "messages": [{"role": "user", "content": "hi"}],
            "stream": true,
            "tools": [{"type": "function", "function": {"name": "mcp__s__echo",
                "description": "Echo \"this\".", "parameters": tools.specs()[0].parameters}}],
            "tool_choice": "auto",
            "stream_options": {"include_usage": true},
            "temperature": 0.2,
            "max_tokens": 7,
        })
    );
    let last = body(&user, &tools, ToolChoice::None, &options(true));
    assert_eq!(last["tool_choice"], "none");
    let plain = body(
        &History::default(),
        &ToolList::default(),
        ToolChoice::Auto,
        &RequestOptions {
            temperature: None,
            max_tokens: None,
            ..options(false)
        },
    );
    assert_eq!(
        plain,
        json!({"model": "m\"1", "messages": [], "stream": false})
    );
}

#[test]
fn the_history_goes_as_messages_the_system_prompt_first_reasoning_left_out() {
    let call = ToolCall {
        id: "c1".into(),
        name: "t".into(),
        arguments: "{\"a\":1}".into(),
    };
    let thought = Reasoning {
        provider: "anthropic".into(),
        text: "hm".into(),
        state: json!({"type": "thinking"}),
    };
    let mut history = History::new(
        Some("sys".into()),
        vec![Item::User {
            text: "line\nnext \u{1F600}".into(),
        }],
    );
    let mark = history.mark();
    history.push(Item::assistant(String::new(), vec![thought], vec![call]));
    history.push(Item::ToolResult {
        call_id: "c1".into(),
        text: "ok".into(),
    });
    let sent = body(
        &history,
        &ToolList::default(),
        ToolChoice::Auto,
        &options(false),
    );
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "line\nnext \u{1F600}"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{\"a\":1}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ])
    );
    history.truncate(mark);
    let sent = body(
        &history,
        &ToolList::default(),
        ToolChoice::Auto,
        &options(false),
    );
    assert_eq!(sent["messages"].as_array().map(Vec::len), Some(2));
}

#[test]
fn transcripts_of_before_read_their_calls_and_usage() {
    let call = legacy_call(json!({"id": "x", "function": {"name": "n", "arguments": {"a": 1}}}))
        .expect("a call");
    assert_eq!(call.arguments, "{\"a\":1}");
    let usage = legacy_usage(json!({
        "prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105,
        "prompt_tokens_details": {"cached_tokens": 80}
    }))
    .expect("usage");
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cached_input_tokens
        ),
        (100, 5, 80)
    );
    let old = legacy_usage(
        json!({"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3, "cached_tokens": 1}),
    )
    .expect("usage");
    assert_eq!((old.total(), old.cached_input_tokens), (3, 1));
}

fn feed_all(chunks: &[String]) -> (Result<ModelReply, ModelError>, Vec<StreamPiece>) {
    let mut assembler = Box::new(Assembler::new(Secrets::default()));
    let mut pieces = Vec::new();
    for chunk in chunks {
        if let Err(e) = assembler.feed("message", chunk, &mut |p| pieces.push(p)) {
            return (Err(e), pieces);
        }
    }
    (assembler.finish(), pieces)
}

fn delta(v: serde_json::Value) -> String {
    json!({"choices": [{"delta": v, "finish_reason": null}]}).to_string()
}

#[test]
fn text_and_parallel_tool_calls_are_joined_by_index() {
    let chunks = vec![
        delta(json!({"role": "assistant", "content": "Saving "})),
        delta(json!({"content": "it."})),
        delta(json!({"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "mcp__n__write_note", "arguments": "{\"ti"}}]})),
        delta(json!({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "mcp__n__add", "arguments": ""}}]})),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "tle\":\"t\"}"}}]})),
        delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": "{\"a\":1,\"b\":2}"}}]})),
        json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}).to_string(),
        json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).to_string(),
        "[DONE]".to_string(),
    ];
    let (reply, pieces) = feed_all(&chunks);
    let reply = reply.expect("a reply");
    assert_eq!(reply.text, "Saving it.");
    assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(reply.usage.map(|u| u.total()), Some(15));
    let calls: Vec<(&str, &str, &str)> = reply
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("a", "mcp__n__write_note", "{\"title\":\"t\"}"),
            ("b", "mcp__n__add", "{\"a\":1,\"b\":2}")
        ]
    );
    assert_eq!(
        pieces,
        vec![
            StreamPiece::Text("Saving ".into()),
            StreamPiece::Text("it.".into()),
            StreamPiece::ToolCall {
                index: 0,
                name: "mcp__n__write_note".into()
            },
            StreamPiece::ToolCall {
                index: 1,
                name: "mcp__n__add".into()
            },
        ]
    );
}

#[test]
fn broken_streams_are_bad_streams_that_say_how() {
    let (empty, _) = feed_all(&[]);
    let empty = empty.expect_err("empty");
    assert_eq!(empty.class, ModelFailureClass::BadStream);
    assert!(empty.message.contains("empty stream"), "{}", empty.message);
    assert!(empty.hint.contains("stream: false"), "{}", empty.hint);

    let (cut, _) = feed_all(&[delta(json!({"content": "hal"}))]);
    let cut = cut.expect_err("cut");
    assert!(
        cut.message.contains("before its finish reason"),
        "{}",
        cut.message
    );

    let (bad, _) = feed_all(&[delta(json!({"content": "a"})), "{\"choices\": [".into()]);
    let bad = bad.expect_err("malformed");
    assert_eq!(bad.class, ModelFailureClass::BadStream);
    assert!(
        bad.message.starts_with("chunk 2 of the stream is not JSON"),
        "{}",
        bad.message
    );

    // [DONE] without a finish reason is a complete answer.
    let (done, _) = feed_all(&[delta(json!({"content": "ok"})), "[DONE]".into()]);
    assert_eq!(done.expect("done").text, "ok");
}

#[test]
fn a_whole_answer_reads_its_calls_and_usage() {
    let body = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [{"id": "", "type": "function", "function": {"name": "x", "arguments": "{}"}}]}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}});
    let none = Secrets::default();
    let reply = whole(body.to_string().as_bytes(), &none).expect("reply");
    assert_eq!(reply.text, "");
    assert_eq!(reply.tool_calls[0].id, "call_0");
    assert_eq!(reply.usage.map(|u| u.output_tokens), Some(2));
    let err = whole(b"<html>", &none).expect_err("not json");
    assert_eq!(err.class, ModelFailureClass::BadResponse);
}

#[test]
fn names_and_ids_count_and_are_bounded() {
    // Two long names alternating at index 0 used to double the name with every chunk.
    let a = "a".repeat(600);
    let b = "b".repeat(600);
    let chunks: Vec<String> = (0..20)
        .map(|i| {
            let name = if i % 2 == 0 { &a } else { &b };
            delta(json!({"tool_calls": [{"index": 0, "function": {"name": name}}]}))
        })
        .collect();
    let err = feed_all(&chunks).0.expect_err("a name over the limit");
    assert_eq!(err.class, ModelFailureClass::BadStream);
    assert!(
        err.message
            .contains("the name of tool call 0 is over 1024 bytes"),
        "{}",
        err.message
    );
    let long_id = "i".repeat(MAX_CALL_NAME_BYTES + 1);
    let err = feed_all(&[delta(
        json!({"tool_calls": [{"index": 0, "id": long_id, "function": {"name": "x"}}]}),
    )])
    .0
    .expect_err("an id over the limit");
    assert!(
        err.message.contains("the id of tool call 0 is over"),
        "{}",
        err.message
    );
    // Calls with nothing but an index cost their entry: they are capped in number.
    let many: Vec<String> = (0..=MAX_TOOL_CALLS)
        .map(|i| delta(json!({"tool_calls": [{"index": i}]})))
        .collect();
    let err = feed_all(&many).0.expect_err("too many calls");
    assert!(
        err.message.contains("more than 128 tool calls"),
        "{}",
        err.message
    );
    let mut assembler = Assembler::new(Secrets::default());
    for chunk in &many[..MAX_TOOL_CALLS] {
        assembler
            .feed("message", chunk, &mut |_| {})
            .expect("within the limit");
    }
}

#[test]
fn calls_without_an_index_are_told_apart_by_their_ids() {
    // One whole call to a chunk, no index: two calls, not one merged.
    let chunks = vec![
        delta(
            json!({"tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{\"a\":1}"}}]}),
        ),
        delta(json!({"tool_calls": [{"id": "c2", "function": {"name": "g", "arguments": "{}"}}]})),
        // A piece without an index or id continues the last call.
        delta(json!({"tool_calls": [{"function": {"arguments": " "}}]})),
        json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}).to_string(),
    ];
    let reply = feed_all(&chunks).0.expect("a reply");
    let calls: Vec<(&str, &str, &str)> = reply
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(calls, vec![("c1", "f", "{\"a\":1}"), ("c2", "g", "{} ")]);
    // Two whole calls in one chunk with neither index nor id: two calls, by position.
    let chunks = vec![
        delta(json!({"tool_calls": [
            {"function": {"name": "a", "arguments": "{}"}},
            {"function": {"name": "b", "arguments": "{\"x\":1}"}}
        ]})),
        json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}).to_string(),
    ];
    let reply = feed_all(&chunks).0.expect("a reply");
    let calls: Vec<(&str, &str)> = reply
        .tool_calls
        .iter()
        .map(|c| (c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(calls, vec![("a", "{}"), ("b", "{\"x\":1}")]);
}

#[test]
fn done_completes_the_answer() {
    let mut assembler = Assembler::new(Secrets::default());
    assembler
        .feed("message", &delta(json!({"content": "ok"})), &mut |_| {})
        .unwrap();
    assert!(!assembler.is_done());
    assembler.feed("message", "[DONE]", &mut |_| {}).unwrap();
    assert!(assembler.is_done());
}

#[test]
fn a_whole_answer_is_held_to_the_same_limits() {
    let calls: Vec<_> = (0..=MAX_TOOL_CALLS)
        .map(|i| json!({"id": format!("c{i}"), "type": "function", "function": {"name": "nope", "arguments": ""}}))
        .collect();
    let body = json!({"choices": [{"message": {"role": "assistant", "content": "x", "tool_calls": calls}, "finish_reason": "tool_calls"}]});
    let err = whole(body.to_string().as_bytes(), &Secrets::default()).expect_err("too many");
    assert_eq!(err.class, ModelFailureClass::BadResponse);
    assert!(err.message.contains("more than 128"), "{}", err.message);
}
