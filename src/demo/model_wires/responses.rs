//! `--wire responses`: the Responses API (`POST /v1/responses`) as OpenAI documents it: input
//! items (messages, `function_call`, `function_call_output`, `reasoning`), `instructions`,
//! output items, and the stream's typed events (`response.created` … `response.completed`).
//! With `--reasoning`, each answer starts with a reasoning item with encrypted content, and a
//! request that sends a call back without the reasoning item it came with is refused.

use hyper::body::Bytes;
use serde_json::{json, Value};

use super::{frame, halves, words, Refusal, Reply};
use crate::demo::model_rules::{text_of, Role, Said, Talk};

/// A request's input items and tools.
pub fn read(request: &Value, reasoning: bool) -> Result<Talk, Refusal> {
    let items: Vec<Value> = match &request["input"] {
        Value::String(text) => vec![json!({"role": "user", "content": text})],
        Value::Array(items) => items.clone(),
        _ => {
            return Err(Refusal::bad(
                "input: a string or a list of items is required",
            ))
        }
    };
    let mut said: Vec<Said> = Vec::new();
    // Whether the answer being read had its reasoning item.
    let mut thought = false;
    for (n, item) in items.iter().enumerate() {
        let kind = item["type"].as_str().unwrap_or("message");
        match kind {
            "reasoning" => {
                let sealed = item["encrypted_content"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("demo-sealed-"));
                if !sealed {
                    return Err(Refusal::bad(format!(
                        "input[{n}]: a reasoning item without its encrypted_content cannot be used with store: false"
                    )));
                }
                thought = true;
            }
            "message" => {
                let role = match item["role"].as_str() {
                    Some("user") => Role::User,
                    Some("assistant") => Role::Assistant,
                    Some("system" | "developer") => continue,
                    _ => return Err(Refusal::bad(format!("input[{n}].role: unknown role"))),
                };
                if role == Role::User {
                    thought = false;
                }
                said.push(Said {
                    role,
                    text: text_of(&item["content"]),
                    calls: Vec::new(),
                });
            }
            "function_call" => {
                if reasoning && !thought {
                    return Err(Refusal::bad(format!(
                        "input[{n}]: function_call {} was sent without the reasoning item it came with",
                        item["call_id"]
                    )));
                }
                let call = (
                    item["name"].as_str().unwrap_or("").to_string(),
                    text_of(&item["arguments"]),
                );
                // Calls after an answer's text (or after other calls) belong to that answer.
                match said.last_mut() {
                    Some(last) if last.role == Role::Assistant => last.calls.push(call),
                    _ => said.push(Said {
                        role: Role::Assistant,
                        text: String::new(),
                        calls: vec![call],
                    }),
                }
            }
            "function_call_output" => {
                thought = false;
                said.push(Said {
                    role: Role::Tool,
                    text: text_of(&item["output"]),
                    calls: Vec::new(),
                });
            }
            other => {
                return Err(Refusal::bad(format!(
                    "input[{n}].type: {other:?} is not an input item this model reads"
                )))
            }
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
        words_only: request["tool_choice"] == "none",
    })
}

fn call_id(reply: &Reply<'_>, i: usize) -> String {
    format!("call_demo_{}", reply.answer.first_call + i)
}

fn usage(reply: &Reply<'_>) -> Value {
    let u = reply.usage;
    json!({
        "input_tokens": u.input,
        "input_tokens_details": {"cached_tokens": u.cached},
        "output_tokens": u.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": u.input + u.output,
    })
}

fn reasoning_item(reply: &Reply<'_>) -> Value {
    json!({"type": "reasoning", "id": format!("rs_demo_{}", reply.answer.first_call), "summary": [{"type": "summary_text", "text": reply.thought()}], "encrypted_content": reply.seal()})
}

fn message_item(text: &str, status: &str) -> Value {
    let content = if status == "completed" {
        json!([{"type": "output_text", "text": text, "annotations": []}])
    } else {
        json!([])
    };
    json!({"type": "message", "id": "msg_demo", "status": status, "role": "assistant", "content": content})
}

fn call_item(reply: &Reply<'_>, i: usize, arguments: &str, status: &str) -> Value {
    let name = &reply.answer.calls[i].0;
    json!({"type": "function_call", "id": format!("fc_demo_{}", reply.answer.first_call + i), "call_id": call_id(reply, i), "name": name, "arguments": arguments, "status": status})
}

/// The response object, with `output` and its end.
fn response(reply: &Reply<'_>, output: Vec<Value>, done: bool) -> Value {
    let (status, incomplete) = match (done, reply.answer.cut) {
        (false, _) => ("in_progress", Value::Null),
        (true, true) => ("incomplete", json!({"reason": "max_output_tokens"})),
        (true, false) => ("completed", Value::Null),
    };
    json!({
        "id": "resp_demo",
        "object": "response",
        "created_at": 0,
        "status": status,
        "incomplete_details": incomplete,
        "model": reply.model,
        "output": output,
        "store": false,
        "usage": if done { usage(reply) } else { Value::Null },
    })
}

/// Every output item, done.
fn output(reply: &Reply<'_>) -> Vec<Value> {
    let mut out = Vec::new();
    if reply.reasoning {
        out.push(reasoning_item(reply));
    }
    if !reply.answer.text.is_empty() {
        out.push(message_item(&reply.answer.text, "completed"));
    }
    for (i, (_, arguments)) in reply.answer.calls.iter().enumerate() {
        out.push(call_item(reply, i, arguments, "completed"));
    }
    out
}

pub fn whole(reply: &Reply<'_>) -> Value {
    response(reply, output(reply), true)
}

/// `response.created`, each output item (added, its deltas, done), `response.completed` (or
/// `.incomplete`), numbered.
pub fn frames(reply: &Reply<'_>) -> Vec<Bytes> {
    let mut out = Vec::new();
    let mut sequence = 0;
    let mut event = |out: &mut Vec<Bytes>, name: &str, mut data: Value| {
        data["type"] = json!(name);
        data["sequence_number"] = json!(sequence);
        sequence += 1;
        out.push(frame(Some(name), &data));
    };
    event(
        &mut out,
        "response.created",
        json!({"response": response(reply, Vec::new(), false)}),
    );
    let mut index = 0;
    if reply.reasoning {
        let item = reasoning_item(reply);
        event(
            &mut out,
            "response.output_item.added",
            json!({"output_index": index, "item": item}),
        );
        event(
            &mut out,
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
        index += 1;
    }
    if !reply.answer.text.is_empty() {
        event(
            &mut out,
            "response.output_item.added",
            json!({"output_index": index, "item": message_item("", "in_progress")}),
        );
        for word in words(&reply.answer.text) {
            event(
                &mut out,
                "response.output_text.delta",
                json!({"item_id": "msg_demo", "output_index": index, "content_index": 0, "delta": word}),
            );
        }
        event(
            &mut out,
            "response.output_text.done",
            json!({"item_id": "msg_demo", "output_index": index, "content_index": 0, "text": reply.answer.text}),
        );
        event(
            &mut out,
            "response.output_item.done",
            json!({"output_index": index, "item": message_item(&reply.answer.text, "completed")}),
        );
        index += 1;
    }
    for (i, (_, arguments)) in reply.answer.calls.iter().enumerate() {
        let id = format!("fc_demo_{}", reply.answer.first_call + i);
        event(
            &mut out,
            "response.output_item.added",
            json!({"output_index": index, "item": call_item(reply, i, "", "in_progress")}),
        );
        for piece in halves(arguments) {
            event(
                &mut out,
                "response.function_call_arguments.delta",
                json!({"item_id": id, "output_index": index, "delta": piece}),
            );
        }
        event(
            &mut out,
            "response.function_call_arguments.done",
            json!({"item_id": id, "output_index": index, "arguments": arguments}),
        );
        event(
            &mut out,
            "response.output_item.done",
            json!({"output_index": index, "item": call_item(reply, i, arguments, "completed")}),
        );
        index += 1;
    }
    let end = if reply.answer.cut {
        "response.incomplete"
    } else {
        "response.completed"
    };
    event(&mut out, end, json!({"response": whole(reply)}));
    out
}
