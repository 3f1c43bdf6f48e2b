//! `anthropic`: the Messages API (`POST …/v1/messages`). The key goes as `x-api-key` with
//! `anthropic-version`; the system prompt is the request's own, and it and the tool
//! definitions carry `cache_control` so that they are read from the prompt cache turn after
//! turn; calls are `tool_use` blocks and their results `tool_result` blocks; thinking blocks
//! are kept with their signatures and sent back in the answer they came with, as the API
//! requires for a turn that called tools. `overloaded_error` (529) is retried like a 429 by the
//! client (every 5xx is).

use std::collections::BTreeMap;

use http::{HeaderMap, HeaderValue};
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
use crate::config::ModelProfile;

/// The provider's name, and the key its encodings are kept under.
pub const NAME: &str = "anthropic";

/// The path requests go to, after the base URL (`https://api.anthropic.com/v1`).
pub const PATH: &str = "/messages";

/// The API version sent unless the profile's headers name one.
pub const VERSION: &str = "2023-06-01";

/// The answer's length when the profile sets no `max_tokens` (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The key as `x-api-key`, and `anthropic-version`.
pub fn headers(profile: &ModelProfile, headers: &mut HeaderMap) {
    if let Some(key) = &profile.api_key {
        if let Ok(mut value) = HeaderValue::from_str(key) {
            value.set_sensitive(true);
            headers.insert("x-api-key", value);
        }
    }
    if !headers.contains_key("anthropic-version") {
        headers.insert("anthropic-version", HeaderValue::from_static(VERSION));
    }
}

/// One item as its message. Two messages of the same role in a row (a turn's tool results)
/// are joined into one turn by the API.
fn encode(item: &Item, out: &mut JsonSeq<'_>) {
    let message = match item {
        Item::User { text } => json!({"role": "user", "content": text}),
        Item::Assistant {
            text,
            reasoning,
            calls,
        } => {
            let mut content: Vec<Value> = reasoning
                .iter()
                .filter(|r| r.provider == NAME)
                .map(|r| r.state.clone())
                .collect();
            if !text.is_empty() {
                content.push(json!({"type": "text", "text": text}));
            }
            for call in calls {
                let input: Value =
                    serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({}));
                content.push(
                    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}),
                );
            }
            if content.is_empty() {
                // The API refuses an empty answer in the history.
                content.push(json!({"type": "text", "text": "(no answer)"}));
            }
            json!({"role": "assistant", "content": content})
        }
        Item::ToolResult { call_id, text } => json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": text}
        ]}),
    };
    write_json(out.value(), &message);
}

/// The tools, the last one marked for the prompt cache (which then holds every tool before
/// it, and the system prompt).
fn tools_json(specs: &[ToolSpec]) -> Vec<u8> {
    let last = specs.len().saturating_sub(1);
    let tools: Vec<Value> = specs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut tool =
                json!({"name": t.name, "description": t.description, "input_schema": t.parameters});
            if i == last {
                tool["cache_control"] = json!({"type": "ephemeral"});
            }
            tool
        })
        .collect();
    serde_json::to_vec(&tools).unwrap_or_default()
}

/// The JSON body of a `POST …/messages`.
pub fn request_body(
    history: &History,
    tools: &ToolList,
    choice: ToolChoice,
    options: &RequestOptions,
) -> Vec<u8> {
    let mut body = Body::new(&options.model);
    body.field(
        "max_tokens",
        &options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
    );
    body.optional(
        "system",
        history.system().map(
            |system| json!([{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]),
        ),
    );
    body.items("messages", None::<()>, history, NAME, encode);
    body.tools(
        tools,
        NAME,
        tools_json,
        choice,
        [b"{\"type\":\"auto\"}", b"{\"type\":\"none\"}"],
    );
    body.field("stream", &options.stream);
    body.optional("temperature", options.temperature);
    body.finish()
}

/// Usage as the API reports it: `input_tokens` counts only what was read neither from nor
/// into the cache.
#[derive(Debug, Default, Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
}

impl WireUsage {
    fn usage(&self) -> Usage {
        let read = self.cache_read_input_tokens.unwrap_or(0);
        Usage {
            input_tokens: self
                .input_tokens
                .unwrap_or(0)
                .saturating_add(read)
                .saturating_add(self.cache_creation_input_tokens.unwrap_or(0)),
            output_tokens: self.output_tokens.unwrap_or(0),
            cached_input_tokens: read,
        }
    }
}

fn stop_reason(name: &str) -> FinishReason {
    match name {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_string()),
    }
}

/// A thinking block (or a redacted one) as reasoning to send back.
fn thinking(block: Value) -> Reasoning {
    Reasoning {
        provider: NAME.to_string(),
        text: block
            .get("thinking")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        state: block,
    }
}

/// A whole answer.
pub fn whole(body: &[u8], secrets: &Secrets) -> Result<ModelReply, ModelError> {
    #[derive(Deserialize)]
    struct Message {
        #[serde(default)]
        content: Vec<Value>,
        #[serde(default)]
        stop_reason: Option<String>,
        #[serde(default)]
        usage: Option<WireUsage>,
    }
    let bad = |why: String| {
        ModelError::new(
            ModelFailureClass::BadResponse,
            format!(
                "the answer is not a Messages API message ({why}): {}",
                secrets.quote(body, 120)
            ),
        )
    };
    let value: Value = serde_json::from_slice(body).map_err(|e| bad(e.to_string()))?;
    if value["type"] != "message" {
        return Err(bad("its type is not message".into()));
    }
    let message: Message = serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
    let calls = message
        .content
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .count();
    if calls > MAX_TOOL_CALLS {
        return Err(too_many_calls(ModelFailureClass::BadResponse));
    }
    let mut reply = ReplyBuilder::new(false);
    for (index, block) in message.content.into_iter().enumerate() {
        match block["type"].as_str() {
            Some("text") => reply.text(text_of(&block["text"]), &mut |_| {})?,
            Some("tool_use") => reply.call(
                index,
                block["id"].as_str().map(str::to_string),
                block["name"].as_str().map(str::to_string),
                Some(&block.get("input").map_or("{}".into(), Value::to_string)),
                &mut |_| {},
            )?,
            Some("thinking" | "redacted_thinking") => reply.reasoning(thinking(block))?,
            _ => {}
        }
    }
    reply.finish_reason = message.stop_reason.as_deref().map(stop_reason);
    reply.usage = message.usage.map(|u| u.usage());
    Ok(reply.build())
}

/// A content block of a streamed answer, as it comes.
#[derive(Debug)]
enum Block {
    Text,
    /// A call; whether any of its input came as deltas.
    Tool {
        input: bool,
    },
    Thinking(Value),
    Other,
}

/// Reads a streamed answer: `message_start`, the content blocks (`content_block_start`,
/// `_delta`, `_stop`), `message_delta` (the stop reason and output usage), `message_stop`.
pub struct Reader {
    reply: ReplyBuilder,
    blocks: BTreeMap<usize, Block>,
    usage: WireUsage,
    events: usize,
    done: bool,
    secrets: Secrets,
}

impl Reader {
    pub fn new(secrets: Secrets) -> Self {
        Reader {
            reply: ReplyBuilder::new(true),
            blocks: BTreeMap::new(),
            usage: WireUsage::default(),
            events: 0,
            done: false,
            secrets,
        }
    }

    fn read_usage(&mut self, usage: &Value) {
        let Ok(usage) = WireUsage::deserialize(usage) else {
            return;
        };
        // `message_delta` repeats some counts, cumulative; each read replaces what it names.
        let held = &mut self.usage;
        held.input_tokens = usage.input_tokens.or(held.input_tokens);
        held.output_tokens = usage.output_tokens.or(held.output_tokens);
        held.cache_read_input_tokens = usage
            .cache_read_input_tokens
            .or(held.cache_read_input_tokens);
        held.cache_creation_input_tokens = usage
            .cache_creation_input_tokens
            .or(held.cache_creation_input_tokens);
        self.reply.usage = Some(held.usage());
    }

    fn block_start(
        &mut self,
        index: usize,
        block: Value,
        on_piece: &mut dyn FnMut(StreamPiece),
    ) -> Result<(), ModelError> {
        let kind = match block["type"].as_str() {
            Some("text") => {
                self.reply.text(text_of(&block["text"]), on_piece)?;
                Block::Text
            }
            Some("tool_use") => {
                self.reply.call(
                    index,
                    block["id"].as_str().map(str::to_string),
                    block["name"].as_str().map(str::to_string),
                    None,
                    on_piece,
                )?;
                Block::Tool { input: false }
            }
            Some("thinking") => Block::Thinking(block),
            Some("redacted_thinking") => {
                self.reply.reasoning(thinking(block))?;
                Block::Other
            }
            _ => Block::Other,
        };
        self.blocks.insert(index, kind);
        Ok(())
    }

    fn block_delta(
        &mut self,
        index: usize,
        delta: &Value,
        on_piece: &mut dyn FnMut(StreamPiece),
    ) -> Result<(), ModelError> {
        match (delta["type"].as_str(), self.blocks.get_mut(&index)) {
            (Some("text_delta"), _) => self.reply.text(text_of(&delta["text"]), on_piece),
            (Some("input_json_delta"), Some(Block::Tool { input })) => {
                *input = true;
                let piece = text_of(&delta["partial_json"]);
                self.reply.call(index, None, None, Some(&piece), on_piece)
            }
            (Some("thinking_delta"), Some(Block::Thinking(block))) => {
                append(block, "thinking", &delta["thinking"]);
                Ok(())
            }
            (Some("signature_delta"), Some(Block::Thinking(block))) => {
                append(block, "signature", &delta["signature"]);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn block_stop(&mut self, index: usize) -> Result<(), ModelError> {
        match self.blocks.remove(&index) {
            Some(Block::Tool { input: false }) => self.reply.set_arguments(index, "{}".to_string()),
            Some(Block::Thinking(block)) => self.reply.reasoning(thinking(block)),
            _ => Ok(()),
        }
    }
}

/// Appends a delta's text to a block's field.
fn append(block: &mut Value, field: &str, more: &Value) {
    let mut text = text_of(&block[field]);
    text.push_str(&text_of(more));
    block[field] = Value::String(text);
}

impl StreamReader for Reader {
    fn feed(
        &mut self,
        _event: &str,
        data: &str,
        on_piece: &mut dyn FnMut(StreamPiece),
    ) -> Result<(), ModelError> {
        let (event, index) = typed_event(data, "index", &mut self.events, &self.secrets)?;
        match event["type"].as_str().unwrap_or("") {
            "message_start" => self.read_usage(&event["message"]["usage"]),
            "content_block_start" => {
                self.block_start(index, event["content_block"].clone(), on_piece)?
            }
            "content_block_delta" => self.block_delta(index, &event["delta"], on_piece)?,
            "content_block_stop" => self.block_stop(index)?,
            "message_delta" => {
                if let Some(reason) = event["delta"]["stop_reason"].as_str() {
                    self.reply.finish_reason = Some(stop_reason(reason));
                }
                self.read_usage(&event["usage"]);
            }
            "message_stop" => self.done = true,
            "error" => {
                return Err(error_in_stream(&endpoint_message(data, &self.secrets)));
            }
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
        if !self.done && self.reply.finish_reason.is_none() {
            return Err(cut_stream(self.events));
        }
        Ok(self.reply.build())
    }
}

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
