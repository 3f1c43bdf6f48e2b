//! `openai-responses`: the Responses API (`POST …/v1/responses`). The conversation goes as input
//! items (messages, `function_call`, `function_call_output`), the system prompt as
//! `instructions`, `store: false` (nothing kept on the server: every request carries the
//! conversation); reasoning items come back with their encrypted content when the profile asks
//! for reasoning, and are passed back with the turn they belong to.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{text_of, typed_event, write_json, Body, RequestOptions};
use crate::agent::failure::{endpoint_message, ModelError, ModelFailureClass, Secrets};
use crate::agent::stream::{
    cut_stream, empty_stream, error_in_stream, too_many_calls, ModelReply, ReplyBuilder,
    StreamPiece, StreamReader, MAX_TOOL_CALLS,
};
use crate::agent::turn::{
    FinishReason, History, Item, JsonSeq, Reasoning, ToolChoice, ToolList, ToolSpec, Usage,
};

/// The provider's name, and the key its encodings are kept under.
pub const NAME: &str = "openai-responses";

/// The path requests go to, after the base URL.
pub const PATH: &str = "/responses";

/// One item as its input items.
fn encode(item: &Item, out: &mut JsonSeq<'_>) {
    match item {
        Item::User { text } => write_json(
            out.value(),
            &json!({"type": "message", "role": "user", "content": text}),
        ),
        Item::Assistant {
            text,
            reasoning,
            calls,
        } => {
            // Without `store`, a reasoning item is only worth sending with its encrypted content.
            for r in reasoning
                .iter()
                .filter(|r| r.provider == NAME && r.state.get("encrypted_content").is_some())
            {
                write_json(out.value(), &r.state);
            }
            if !text.is_empty() {
                write_json(
                    out.value(),
                    &json!({"type": "message", "role": "assistant", "content": text}),
                );
            }
            for call in calls {
                write_json(
                    out.value(),
                    &json!({"type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments}),
                );
            }
        }
        Item::ToolResult { call_id, text } => write_json(
            out.value(),
            &json!({"type": "function_call_output", "call_id": call_id, "output": text}),
        ),
    }
}

fn tools_json(specs: &[ToolSpec]) -> Vec<u8> {
    let tools: Vec<Value> = specs
        .iter()
        .map(|t| json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters}))
        .collect();
    serde_json::to_vec(&tools).unwrap_or_default()
}

/// The JSON body of a `POST …/responses`.
pub fn request_body(
    history: &History,
    tools: &ToolList,
    choice: ToolChoice,
    options: &RequestOptions,
) -> Vec<u8> {
    let mut body = Body::new(&options.model);
    body.optional("instructions", history.system());
    body.items("input", None::<()>, history, NAME, encode);
    body.tools(tools, NAME, tools_json, choice, [b"\"auto\"", b"\"none\""]);
    body.field("stream", &options.stream);
    body.field("store", &false);
    body.optional("temperature", options.temperature);
    body.optional("max_output_tokens", options.max_tokens);
    body.finish()
}

#[derive(Debug, Default, Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    input_tokens_details: Option<Details>,
}

#[derive(Debug, Default, Deserialize)]
struct Details {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl From<WireUsage> for Usage {
    fn from(u: WireUsage) -> Usage {
        Usage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cached_input_tokens: u
                .input_tokens_details
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0),
        }
    }
}

/// A reasoning item as reasoning to send back: its summary's text to read.
fn reasoning(item: Value) -> Reasoning {
    let text = item["summary"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    Reasoning {
        provider: NAME.to_string(),
        text,
        state: item,
    }
}

/// The text of a message item's `output_text` (and `refusal`) parts.
fn message_text(item: &Value) -> String {
    item["content"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p["text"].as_str().or(p["refusal"].as_str()))
                .collect()
        })
        .unwrap_or_default()
}

/// How a response ended: its status, and why it is incomplete.
fn finish(response: &Value, called: bool) -> Option<FinishReason> {
    match response["status"].as_str()? {
        "completed" if called => Some(FinishReason::ToolCalls),
        "completed" => Some(FinishReason::Stop),
        "incomplete" => Some(match response["incomplete_details"]["reason"].as_str() {
            Some("max_output_tokens") => FinishReason::Length,
            Some("content_filter") => FinishReason::ContentFilter,
            Some(other) => FinishReason::Other(other.to_string()),
            None => FinishReason::Other("incomplete".into()),
        }),
        other => Some(FinishReason::Other(other.to_string())),
    }
}

/// A response that failed: its error's message.
fn failed(response: &Value, secrets: &Secrets) -> ModelError {
    error_in_stream(&endpoint_message(&response.to_string(), secrets))
}

/// A whole answer.
pub fn whole(body: &[u8], secrets: &Secrets) -> Result<ModelReply, ModelError> {
    let bad = |why: String| {
        ModelError::new(
            ModelFailureClass::BadResponse,
            format!(
                "the answer is not a Responses API response ({why}): {}",
                secrets.quote(body, 120)
            ),
        )
    };
    let response: Value = serde_json::from_slice(body).map_err(|e| bad(e.to_string()))?;
    let Some(output) = response["output"].as_array() else {
        return Err(bad("no output".into()));
    };
    if response["status"] == "failed" {
        let e = failed(&response, secrets);
        return Err(ModelError::new(ModelFailureClass::BadResponse, e.message));
    }
    let calls = output
        .iter()
        .filter(|i| i["type"] == "function_call")
        .count();
    if calls > MAX_TOOL_CALLS {
        return Err(too_many_calls(ModelFailureClass::BadResponse));
    }
    let mut reply = ReplyBuilder::new(false);
    for (index, item) in output.iter().enumerate() {
        read_item(&mut reply, index, item, true, &mut |_| {})?;
    }
    reply.finish_reason = finish(&response, calls > 0);
    reply.usage = WireUsage::deserialize(&response["usage"])
        .ok()
        .map(Usage::from);
    Ok(reply.build())
}

/// An output item, done: a message's text (when `with_text`: its deltas did not bring it), a
/// call whole, reasoning.
fn read_item(
    reply: &mut ReplyBuilder,
    index: usize,
    item: &Value,
    with_text: bool,
    on_piece: &mut dyn FnMut(StreamPiece),
) -> Result<(), ModelError> {
    match item["type"].as_str() {
        Some("message") if with_text => reply.text(message_text(item), on_piece),
        Some("function_call") => {
            reply.call(
                index,
                item["call_id"].as_str().map(str::to_string),
                item["name"].as_str().map(str::to_string),
                None,
                on_piece,
            )?;
            reply.set_arguments(index, text_of(&item["arguments"]))
        }
        Some("reasoning") => reply.reasoning(reasoning(item.clone())),
        _ => Ok(()),
    }
}

/// Reads a streamed answer by its events' `type`: items added and done, text and arguments
/// deltas, and the response's end (`response.completed`, `.incomplete` or `.failed`).
pub struct Reader {
    reply: ReplyBuilder,
    /// Whether any text came as deltas (else a message's text is read when it is done).
    texted: bool,
    called: bool,
    events: usize,
    done: bool,
    secrets: Secrets,
}

impl Reader {
    pub fn new(secrets: Secrets) -> Self {
        Reader {
            reply: ReplyBuilder::new(true),
            texted: false,
            called: false,
            events: 0,
            done: false,
            secrets,
        }
    }
}

impl StreamReader for Reader {
    fn feed(
        &mut self,
        _event: &str,
        data: &str,
        on_piece: &mut dyn FnMut(StreamPiece),
    ) -> Result<(), ModelError> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let (event, index) = typed_event(data, "output_index", &mut self.events, &self.secrets)?;
        match event["type"].as_str().unwrap_or("") {
            "response.output_item.added" if event["item"]["type"] == "function_call" => {
                self.called = true;
                let item = &event["item"];
                self.reply.call(
                    index,
                    item["call_id"].as_str().map(str::to_string),
                    item["name"].as_str().map(str::to_string),
                    None,
                    on_piece,
                )?;
            }
            "response.output_text.delta" => {
                self.texted = true;
                self.reply.text(text_of(&event["delta"]), on_piece)?;
            }
            "response.function_call_arguments.delta" => {
                let piece = text_of(&event["delta"]);
                self.reply.call(index, None, None, Some(&piece), on_piece)?;
            }
            "response.output_item.done" => {
                let item = &event["item"];
                self.called |= item["type"] == "function_call";
                read_item(&mut self.reply, index, item, !self.texted, on_piece)?;
            }
            "response.completed" | "response.incomplete" => {
                let response = &event["response"];
                self.reply.finish_reason = finish(response, self.called);
                if let Ok(usage) = WireUsage::deserialize(&response["usage"]) {
                    self.reply.usage = Some(usage.into());
                }
                self.done = true;
            }
            "response.failed" => return Err(failed(&event["response"], &self.secrets)),
            "error" => return Err(error_in_stream(&endpoint_message(data, &self.secrets))),
            _ => {}
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(self: Box<Self>) -> Result<ModelReply, ModelError> {
        if self.events == 0 {
            return Err(empty_stream("no events at all"));
        }
        if !self.done {
            return Err(cut_stream(self.events));
        }
        Ok(self.reply.build())
    }
}

#[cfg(test)]
#[path = "openai_responses_tests.rs"]
mod tests;
