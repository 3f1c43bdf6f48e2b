//! `--wire anthropic`: the Messages API (`POST /v1/messages`) as Anthropic documents it:
//! `x-api-key` and `anthropic-version` required, `max_tokens` required, `tool_use` and
//! `tool_result` blocks, the stream's event types, errors as `{"type": "error", "error": …}`
//! (529 `overloaded_error`). With `--reasoning`, each answer starts with a thinking block, and
//! a request whose answer with tool calls lost its thinking block is refused, as the API does
//! with thinking on.

use http::HeaderMap;
use hyper::body::Bytes;
use serde_json::{json, Value};

use super::{frame, halves, words, Refusal, Reply};
use crate::demo::model_rules::{text_of, Role, Said, Talk};

pub fn authorized(headers: &HeaderMap, key: &str) -> bool {
    headers
        .get("x-api-key")
        .is_some_and(|v| v.as_bytes() == key.as_bytes())
}

/// A request's messages and tools.
pub fn read(headers: &HeaderMap, request: &Value, reasoning: bool) -> Result<Talk, Refusal> {
    if !headers.contains_key("anthropic-version") {
        return Err(Refusal::bad("anthropic-version: header is required"));
    }
    if !request["max_tokens"].is_u64() {
        return Err(Refusal::bad("max_tokens: Field required"));
    }
    let Some(messages) = request["messages"].as_array() else {
        return Err(Refusal::bad("messages: Field required"));
    };
    let mut said: Vec<Said> = Vec::new();
    for (n, m) in messages.iter().enumerate() {
        let assistant = match m["role"].as_str() {
            Some("user") => false,
            Some("assistant") => true,
            _ => {
                return Err(Refusal::bad(format!(
                    "messages.{n}.role: Input should be 'user' or 'assistant'"
                )))
            }
        };
        let blocks: Vec<Value> = match &m["content"] {
            Value::String(text) => vec![json!({"type": "text", "text": text})],
            Value::Array(blocks) => blocks.clone(),
            _ => {
                return Err(Refusal::bad(format!(
                    "messages.{n}.content: Field required"
                )))
            }
        };
        if assistant {
            let calls: Vec<(String, String)> = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| {
                    let name = b["name"].as_str().unwrap_or("").to_string();
                    (name, b["input"].to_string())
                })
                .collect();
            let thought = blocks.first().is_some_and(|b| {
                b["type"] == "thinking"
                    && b["signature"]
                        .as_str()
                        .is_some_and(|s| s.starts_with("demo-sealed-"))
            });
            if reasoning && !calls.is_empty() && !thought {
                return Err(Refusal::bad(format!(
                    "messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{}`. When `thinking` is enabled, an assistant message with tool use must start with the thinking block it came with",
                    blocks.first().and_then(|b| b["type"].as_str()).unwrap_or("nothing")
                )));
            }
            let text = blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            said.push(Said {
                role: Role::Assistant,
                text,
                calls,
            });
            continue;
        }
        let mut text = Vec::new();
        for block in &blocks {
            match block["type"].as_str() {
                Some("tool_result") => said.push(Said {
                    role: Role::Tool,
                    text: text_of(&block["content"]),
                    calls: Vec::new(),
                }),
                Some("text") => text.push(block["text"].as_str().unwrap_or("").to_string()),
                _ => {}
            }
        }
        if !text.is_empty() {
            said.push(Said {
                role: Role::User,
                text: text.join("\n"),
                calls: Vec::new(),
            });
        }
    }
    Ok(Talk {
        messages: said,
        tools: request["tools"]
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(|t| t["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        words_only: request["tool_choice"]["type"] == "none",
    })
}

fn stop_reason(reply: &Reply<'_>) -> &'static str {
    if reply.answer.cut {
        "max_tokens"
    } else if reply.answer.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    }
}

fn call_id(reply: &Reply<'_>, i: usize) -> String {
    format!("toolu_demo_{}", reply.answer.first_call + i)
}

/// Usage as the API counts it: `input_tokens` leaves out what was read from the cache.
fn usage(reply: &Reply<'_>) -> Value {
    let u = reply.usage;
    json!({
        "input_tokens": u.input - u.cached,
        "cache_read_input_tokens": u.cached,
        "cache_creation_input_tokens": 0,
        "output_tokens": u.output,
    })
}

fn message(reply: &Reply<'_>, content: Vec<Value>, stop: Option<&str>, usage: Value) -> Value {
    json!({
        "id": "msg_demo",
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": null,
        "usage": usage,
    })
}

pub fn whole(reply: &Reply<'_>) -> Value {
    let mut content = Vec::new();
    if reply.reasoning {
        content.push(
            json!({"type": "thinking", "thinking": reply.thought(), "signature": reply.seal()}),
        );
    }
    if !reply.answer.text.is_empty() {
        content.push(json!({"type": "text", "text": reply.answer.text}));
    }
    for (i, (name, arguments)) in reply.answer.calls.iter().enumerate() {
        let input: Value =
            serde_json::from_str(arguments).unwrap_or(Value::String(arguments.clone()));
        content.push(
            json!({"type": "tool_use", "id": call_id(reply, i), "name": name, "input": input}),
        );
    }
    message(reply, content, Some(stop_reason(reply)), usage(reply))
}

/// `message_start`, `ping`, each block (start, deltas, stop), `message_delta`, `message_stop`.
pub fn frames(reply: &Reply<'_>) -> Vec<Bytes> {
    let event = |name: &str, mut data: Value| {
        data["type"] = json!(name);
        frame(Some(name), &data)
    };
    let mut start_usage = usage(reply);
    start_usage["output_tokens"] = json!(1);
    let mut out = vec![
        event(
            "message_start",
            json!({"message": message(reply, Vec::new(), None, start_usage)}),
        ),
        event("ping", json!({})),
    ];
    let mut index = 0;
    let mut block = |out: &mut Vec<Bytes>, start: Value, deltas: Vec<Value>| {
        out.push(event(
            "content_block_start",
            json!({"index": index, "content_block": start}),
        ));
        for delta in deltas {
            out.push(event(
                "content_block_delta",
                json!({"index": index, "delta": delta}),
            ));
        }
        out.push(event("content_block_stop", json!({"index": index})));
        index += 1;
    };
    if reply.reasoning {
        block(
            &mut out,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            vec![
                json!({"type": "thinking_delta", "thinking": reply.thought()}),
                json!({"type": "signature_delta", "signature": reply.seal()}),
            ],
        );
    }
    if !reply.answer.text.is_empty() {
        let deltas = words(&reply.answer.text)
            .map(|w| json!({"type": "text_delta", "text": w}))
            .collect();
        block(&mut out, json!({"type": "text", "text": ""}), deltas);
    }
    for (i, (name, arguments)) in reply.answer.calls.iter().enumerate() {
        let deltas = halves(arguments)
            .into_iter()
            .map(|piece| json!({"type": "input_json_delta", "partial_json": piece}))
            .collect();
        block(
            &mut out,
            json!({"type": "tool_use", "id": call_id(reply, i), "name": name, "input": {}}),
            deltas,
        );
    }
    out.push(event(
        "message_delta",
        json!({"delta": {"stop_reason": stop_reason(reply), "stop_sequence": null}, "usage": {"output_tokens": reply.usage.output}}),
    ));
    out.push(event("message_stop", json!({})));
    out
}

/// An error as the API writes it: its type follows the status.
pub fn error_body(status: http::StatusCode, message: &str) -> Value {
    let kind = match status.as_u16() {
        400 | 413 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}})
}
