//! `--wire chat`: Chat Completions (`POST /v1/chat/completions`), with llama.cpp's strictness.

use hyper::body::Bytes;
use serde_json::{json, Value};

use super::{frame, halves, words, Refusal, Reply};
use crate::demo::model_rules::{text_of, Role, Said, Talk};

/// A request's messages and tools, refused as llama.cpp's server refuses them.
pub fn read(request: &Value) -> Result<Talk, Refusal> {
    let Some(messages) = request["messages"].as_array() else {
        return Err(Refusal::bad("`messages` must be an array"));
    };
    // llama.cpp's server refuses these; so does the demo model, to keep clients honest.
    if messages
        .iter()
        .any(|m| m["role"] == "assistant" && m["content"].is_null())
    {
        return Err(Refusal::bad(
            "an assistant message has content null (send \"\")",
        ));
    }
    let calls = |m: &Value| -> Vec<(String, String)> {
        m["tool_calls"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| {
                        let arguments = match &c["function"]["arguments"] {
                            Value::String(s) => s.clone(),
                            Value::Null => String::new(),
                            other => other.to_string(),
                        };
                        let name = c["function"]["name"].as_str().unwrap_or("").to_string();
                        (name, arguments)
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut said = Vec::with_capacity(messages.len());
    for m in messages {
        let role = match m["role"].as_str() {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some("tool") => Role::Tool,
            _ => continue,
        };
        let calls = calls(m);
        // As llama.cpp's `llama-server` does (ggml-org/llama.cpp#25510), reading the
        // history's calls back as JSON.
        if calls
            .iter()
            .any(|(_, a)| serde_json::from_str::<Value>(a).is_err())
        {
            return Err(Refusal(
                http::StatusCode::INTERNAL_SERVER_ERROR,
                "Failed to parse tool call arguments as JSON (an assistant message's tool call)"
                    .into(),
            ));
        }
        said.push(Said {
            role,
            text: text_of(&m["content"]),
            calls,
        });
    }
    Ok(Talk {
        messages: said,
        tools: request["tools"]
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        words_only: request["tool_choice"] == "none",
    })
}

fn finish_reason(reply: &Reply<'_>) -> &'static str {
    if reply.answer.cut {
        "length"
    } else if reply.answer.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    }
}

/// The id of a reply's call `i`: numbered on from the conversation's calls before it.
fn call_id(reply: &Reply<'_>, i: usize) -> String {
    format!("call_demo_{}", reply.answer.first_call + i)
}

fn usage(reply: &Reply<'_>) -> Value {
    let u = reply.usage;
    json!({
        "prompt_tokens": u.input,
        "completion_tokens": u.output,
        "total_tokens": u.input + u.output,
        "prompt_tokens_details": {"cached_tokens": u.cached},
    })
}

pub fn whole(reply: &Reply<'_>) -> Value {
    let calls: Vec<Value> = reply
        .answer
        .calls
        .iter()
        .enumerate()
        .map(|(i, (name, arguments))| {
            json!({"id": call_id(reply, i), "type": "function", "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    let mut message = json!({"role": "assistant", "content": reply.answer.text});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": "chatcmpl-demo",
        "object": "chat.completion",
        "created": 0,
        "model": reply.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(reply)}],
        "usage": usage(reply),
    })
}

/// The chunks of a streamed answer: the role, the text word by word, each tool call named then
/// its arguments in two pieces, the finish reason, the usage (when asked for), `[DONE]`.
pub fn frames(reply: &Reply<'_>, with_usage: bool) -> Vec<Bytes> {
    let chunk = |delta: Value, finish: Option<&str>| {
        frame(
            None,
            &json!({
                "id": "chatcmpl-demo",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": reply.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }),
        )
    };
    let mut out = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    for word in words(&reply.answer.text) {
        out.push(chunk(json!({"content": word}), None));
    }
    for (i, (name, arguments)) in reply.answer.calls.iter().enumerate() {
        out.push(chunk(
            json!({"tool_calls": [{"index": i, "id": call_id(reply, i), "type": "function", "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
        for piece in halves(arguments) {
            out.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    out.push(chunk(json!({}), Some(finish_reason(reply))));
    if with_usage {
        out.push(frame(
            None,
            &json!({"id": "chatcmpl-demo", "object": "chat.completion.chunk", "created": 0, "model": reply.model, "choices": [], "usage": usage(reply)}),
        ));
    }
    out.push(Bytes::from_static(b"data: [DONE]\n\n"));
    out
}
