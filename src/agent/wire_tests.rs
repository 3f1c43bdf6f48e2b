//! Tests of `wire.rs`.

use super::*;
use serde_json::json;

#[test]
fn an_assistant_that_only_called_tools_sends_empty_content_not_null() {
    let message = Message::Assistant {
        content: String::new(),
        tool_calls: vec![ToolCall {
            id: "c1".into(),
            name: "mcp__notes__write_note".into(),
            arguments: "{\"title\":\"t\"}".into(),
        }],
    };
    let v = serde_json::to_value(&message).unwrap();
    assert_eq!(
        v,
        json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "mcp__notes__write_note", "arguments": "{\"title\":\"t\"}"}}]})
    );
    let back: Message = serde_json::from_value(v).unwrap();
    assert_eq!(back, message);
    let text_only = serde_json::to_value(Message::Assistant {
        content: "hi".into(),
        tool_calls: vec![],
    })
    .unwrap();
    assert_eq!(text_only, json!({"role": "assistant", "content": "hi"}));
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
    let options = RequestOptions {
        model: "m\"1".into(),
        stream: true,
        temperature: Some(0.2),
        max_tokens: Some(7),
    };
    let user = History::from(vec![Message::User {
        content: "hi".into(),
    }]);
    assert_eq!(
        body(&user, &tools, ToolChoice::Auto, &options),
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
    let last = body(&user, &tools, ToolChoice::None, &options);
    assert_eq!(last["tool_choice"], "none");
    let plain = body(
        &History::default(),
        &ToolList::default(),
        ToolChoice::Auto,
        &RequestOptions {
            stream: false,
            temperature: None,
            max_tokens: None,
            ..options
        },
    );
    assert_eq!(
        plain,
        json!({"model": "m\"1", "messages": [], "stream": false})
    );
}

#[test]
fn the_history_sends_each_message_as_serialized_when_it_was_added() {
    let messages = vec![
        Message::System {
            content: "sys".into(),
        },
        Message::User {
            content: "line\nnext \u{1F600}".into(),
        },
        Message::Assistant {
            content: String::new(),
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "t".into(),
                arguments: "{\"a\":1}".into(),
            }],
        },
        Message::Tool {
            tool_call_id: "c1".into(),
            content: "ok".into(),
        },
    ];
    let mut history = History::from(messages[..2].to_vec());
    let mark = history.mark();
    history.extend(messages[2..].iter().cloned());
    assert_eq!(history.messages(), messages);
    assert_eq!(history.len(), messages.len());
    let options = RequestOptions {
        model: "m".into(),
        stream: false,
        temperature: None,
        max_tokens: None,
    };
    let sent = body(&history, &ToolList::default(), ToolChoice::Auto, &options);
    assert_eq!(sent["messages"], serde_json::to_value(&messages).unwrap());
    history.truncate(mark);
    assert_eq!(history.messages(), messages[..2]);
    assert_eq!(history.len(), 2);
}

#[test]
fn arguments_sent_as_an_object_are_read_as_text() {
    let call: ToolCall = serde_json::from_value(
        json!({"id": "x", "function": {"name": "n", "arguments": {"a": 1}}}),
    )
    .unwrap();
    assert_eq!(call.arguments, "{\"a\":1}");
}

#[test]
fn usage_is_read_from_an_endpoint_and_from_a_transcript() {
    let endpoint: Usage = serde_json::from_value(serde_json::json!({
        "prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105,
        "prompt_tokens_details": {"cached_tokens": 80}
    }))
    .expect("usage");
    assert_eq!(endpoint.cached_tokens, 80);
    // Our own form goes back and forth; one written before cached_tokens existed has none.
    let again: Usage =
        serde_json::from_value(serde_json::to_value(endpoint).expect("json")).expect("usage");
    assert_eq!(again, endpoint);
    let old: Usage =
        serde_json::from_str(r#"{"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}"#)
            .expect("usage");
    assert_eq!((old.total_tokens, old.cached_tokens), (3, 0));
}
