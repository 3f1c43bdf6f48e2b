//! `openai-chat`: the Chat Completions wire (`POST …/chat/completions`), spoken by OpenAI and
//! by every local server (llama.cpp, Ollama, LM Studio, vLLM, LiteLLM, `demo-model`): the items
//! as messages, the request body, and the answer read whole or as stream chunks, leniently
//! where servers differ.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{text_of, Body, RequestOptions};
use crate::agent::failure::{ModelError, ModelFailureClass, Secrets};
use crate::agent::stream::{
    bad_event, cut_stream, empty_stream, error_in_stream, too_many_calls, ModelReply, ReplyBuilder,
    StreamPiece, StreamReader, MAX_TOOL_CALLS,
};
use crate::agent::turn::{
    FinishReason, History, Item, JsonSeq, ToolCall, ToolChoice, ToolList, ToolSpec, Usage,
};

/// The provider's name, and the key its encodings are kept under.
pub const NAME: &str = "openai-chat";

/// The path requests go to, after the base URL.
pub const PATH: &str = "/chat/completions";

/// One item as its message.
fn encode(item: &Item, out: &mut JsonSeq<'_>) {
    // Strings and `Value`s into a Vec: serializing cannot fail.
    let _ = match item {
        Item::User { text } => serde_json::to_writer(out.value(), &Message::User { content: text }),
        Item::Assistant { text, calls, .. } => serde_json::to_writer(
            out.value(),
            &Message::Assistant {
                content: text,
                tool_calls: calls.iter().map(WireCall).collect(),
            },
        ),
        Item::ToolResult { call_id, text } => serde_json::to_writer(
            out.value(),
            &Message::Tool {
                tool_call_id: call_id,
                content: text,
            },
        ),
    };
}

/// A message as the wire has it. An assistant's `content` is `""` rather than `null` when the
/// model only called tools: llama.cpp's server rejects a `null` content.
#[derive(Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
enum Message<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        content: &'a str,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

/// A call as the wire has it: `{"id", "type": "function", "function": {name, arguments}}`.
struct WireCall<'a>(&'a ToolCall);

impl Serialize for WireCall<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Function<'a> {
            name: &'a str,
            arguments: &'a str,
        }
        #[derive(Serialize)]
        struct Wire<'a> {
            id: &'a str,
            #[serde(rename = "type")]
            kind: &'static str,
            function: Function<'a>,
        }
        Wire {
            id: &self.0.id,
            kind: "function",
            function: Function {
                name: &self.0.name,
                arguments: &self.0.arguments,
            },
        }
        .serialize(s)
    }
}

/// The tools as the wire has them: `{"type": "function", "function": {name, description,
/// parameters}}` each.
fn tools_json(specs: &[ToolSpec]) -> Vec<u8> {
    #[derive(Serialize)]
    struct Function<'a> {
        name: &'a str,
        description: &'a str,
        parameters: &'a Value,
    }
    #[derive(Serialize)]
    struct Tool<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        function: Function<'a>,
    }
    let tools: Vec<Tool<'_>> = specs
        .iter()
        .map(|t| Tool {
            kind: "function",
            function: Function {
                name: &t.name,
                description: &t.description,
                parameters: &t.parameters,
            },
        })
        .collect();
    serde_json::to_vec(&tools).unwrap_or_default()
}

/// The JSON body of a `POST …/chat/completions`: the history's and the tools' JSON as encoded
/// when they were first sent, around the options. With tools, `tool_choice: "auto"` is sent
/// although it is the standard's default: llama-cpp-python's `chatml-function-calling` ignores
/// the tools without it. (That server answers a *streamed* `auto` request with an empty body,
/// which the client reports as `bad_stream`, hint `stream: false`.)
pub fn request_body(
    history: &History,
    tools: &ToolList,
    choice: ToolChoice,
    options: &RequestOptions,
) -> Vec<u8> {
    let mut body = Body::new(&options.model);
    let system = history.system().map(|content| Message::System { content });
    body.items("messages", system, history, NAME, encode);
    body.field("stream", &options.stream);
    body.tools(tools, NAME, tools_json, choice, [b"\"auto\"", b"\"none\""]);
    if options.stream {
        body.raw("stream_options", b"{\"include_usage\":true}");
    }
    body.optional("temperature", options.temperature);
    body.optional("max_tokens", options.max_tokens);
    body.finish()
}

/// Usage as this wire reports it (the cached count in `prompt_tokens_details`), and as the
/// transcripts written before providers kept it (`cached_tokens` beside the rest).
#[derive(Debug, Deserialize)]
pub struct ChatUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    cached_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<Details>,
}

#[derive(Debug, Deserialize)]
struct Details {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl From<ChatUsage> for Usage {
    fn from(read: ChatUsage) -> Usage {
        Usage {
            input_tokens: read.prompt_tokens,
            output_tokens: read.completion_tokens,
            cached_input_tokens: read
                .cached_tokens
                .or(read.prompt_tokens_details.and_then(|d| d.cached_tokens))
                .unwrap_or(0),
        }
    }
}

/// A transcript's usage in the form written before providers (this wire's).
pub fn legacy_usage(value: Value) -> Option<Usage> {
    serde_json::from_value::<ChatUsage>(value)
        .ok()
        .map(Usage::from)
}

/// A transcript's tool call in the form written before providers (this wire's).
pub fn legacy_call(value: Value) -> Option<ToolCall> {
    serde_json::from_value::<WireToolCall>(value)
        .ok()
        .map(WireToolCall::into_call)
}

/// The finish reason as this wire names it.
fn finish_reason(name: String) -> FinishReason {
    FinishReason::named(&name)
}

/// A whole (unstreamed) answer.
#[derive(Debug, Deserialize)]
struct Completion {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<ChatUsage>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    message: Option<ChoiceMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ChoiceMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

/// One chunk of a streamed answer.
#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    #[serde(default)]
    usage: Option<ChatUsage>,
    /// Some servers report a failure inside the stream.
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

/// A piece of a tool call: the first piece of each (by `index`) has its id and name, the
/// arguments come in pieces to be joined.
#[derive(Debug, Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Debug, Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

impl WireToolCall {
    fn into_call(self) -> ToolCall {
        let (name, arguments) = match self.function {
            Some(f) => (f.name, f.arguments),
            None => (None, None),
        };
        ToolCall {
            id: self.id.unwrap_or_default(),
            name: name.unwrap_or_default(),
            arguments: arguments.map(|v| text_of(&v)).unwrap_or_default(),
        }
    }
}

#[derive(Debug, Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    /// A string by the standard; some servers send the object itself.
    #[serde(default)]
    arguments: Option<Value>,
}

/// A whole answer (`stream: false`, or a server that ignored `stream: true`); an error
/// quotes its start, `secrets` scrubbed. Its tool calls are held to the limits of a streamed
/// answer's.
pub fn whole(body: &[u8], secrets: &Secrets) -> Result<ModelReply, ModelError> {
    let bad = |why: String| {
        ModelError::new(
            ModelFailureClass::BadResponse,
            format!(
                "the answer is not a chat completion ({why}): {}",
                secrets.quote(body, 120)
            ),
        )
    };
    let completion: Completion = serde_json::from_slice(body).map_err(|e| bad(e.to_string()))?;
    let Some(choice) = completion.choices.into_iter().next() else {
        return Err(bad("no choices".into()));
    };
    let message = choice.message.ok_or_else(|| bad("no message".into()))?;
    let calls = message.tool_calls.unwrap_or_default();
    if calls.len() > MAX_TOOL_CALLS {
        return Err(too_many_calls(ModelFailureClass::BadResponse));
    }
    let mut reply = ReplyBuilder::new(false);
    reply.text(message.content.unwrap_or_default(), &mut |_| {})?;
    for (index, call) in calls.into_iter().enumerate() {
        let call = call.into_call();
        reply.call(
            index,
            Some(call.id),
            Some(call.name),
            Some(&call.arguments),
            &mut |_| {},
        )?;
    }
    reply.finish_reason = choice.finish_reason.map(finish_reason);
    reply.usage = completion.usage.map(Usage::from);
    Ok(reply.build())
}

/// Joins the chunks of one streamed answer.
#[derive(Debug)]
pub struct Assembler {
    reply: ReplyBuilder,
    /// The call the last piece went to: a piece without an index continues it.
    last_call: Option<usize>,
    chunks: usize,
    done: bool,
    /// Scrubbed from a bad chunk before it is quoted.
    secrets: Secrets,
}

impl Assembler {
    /// An assembler whose errors never quote `secrets`.
    pub fn new(secrets: Secrets) -> Self {
        Assembler {
            reply: ReplyBuilder::new(true),
            last_call: None,
            chunks: 0,
            done: false,
            secrets,
        }
    }

    /// Reads the data of one event: a JSON chunk, or `[DONE]`.
    fn chunk(
        &mut self,
        data: &str,
        on_piece: &mut dyn FnMut(StreamPiece),
    ) -> Result<(), ModelError> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            bad_event(
                self.chunks + 1,
                &e.to_string(),
                &self.secrets.quote(data.as_bytes(), 120),
            )
        })?;
        self.chunks += 1;
        if let Some(error) = chunk.error {
            return Err(error_in_stream(&crate::agent::failure::endpoint_message(
                &serde_json::json!({"error": error}).to_string(),
                &self.secrets,
            )));
        }
        if let Some(usage) = chunk.usage {
            self.reply.usage = Some(usage.into());
        }
        let Some(choice) = chunk.choices.into_iter().next() else {
            return Ok(());
        };
        if let Some(delta) = choice.delta {
            if let Some(text) = delta.content {
                self.reply.text(text, on_piece)?;
            }
            for (position, piece) in delta.tool_calls.unwrap_or_default().into_iter().enumerate() {
                let index = self.index_of(piece.index, piece.id.as_deref(), position);
                self.last_call = Some(index);
                let (name, arguments) = match piece.function {
                    Some(f) => (f.name, f.arguments.map(|v| text_of(&v))),
                    None => (None, None),
                };
                self.reply
                    .call(index, piece.id, name, arguments.as_deref(), on_piece)?;
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.reply.finish_reason = Some(finish_reason(reason));
        }
        Ok(())
    }

    /// The call a piece goes to. The standard gives every piece an `index`; without one (some
    /// servers send each call whole, one to a chunk or several to a chunk, without it) a piece
    /// with an id the last call does not have starts a new call, as does a piece after the
    /// first of its chunk that does not carry the last call's id; any other piece continues
    /// the last call.
    fn index_of(&self, index: Option<usize>, id: Option<&str>, position: usize) -> usize {
        match (index, self.last_call) {
            (Some(index), _) => index,
            (None, None) => 0,
            (None, Some(last)) => {
                let last_id = self.reply.call_id(last);
                let id = id.filter(|id| !id.is_empty());
                let new = match id {
                    Some(id) => !last_id.is_empty() && id != last_id,
                    None => false,
                } || (position > 0 && id.is_none_or(|id| id != last_id));
                if new {
                    self.reply.next_index()
                } else {
                    last
                }
            }
        }
    }
}

impl StreamReader for Assembler {
    fn feed(
        &mut self,
        event: &str,
        data: &str,
        on_piece: &mut dyn FnMut(StreamPiece),
    ) -> Result<(), ModelError> {
        if event != "message" && event != "error" {
            return Ok(());
        }
        self.chunk(data, on_piece)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    /// The answer, once the stream has ended: an empty stream, or one that stopped before its
    /// finish reason (and without `[DONE]`), is a `bad_stream`.
    fn finish(self: Box<Self>) -> Result<ModelReply, ModelError> {
        if self.chunks == 0 {
            return Err(empty_stream(if self.done {
                "only [DONE]"
            } else {
                "no events at all"
            }));
        }
        if self.reply.finish_reason.is_none() && !self.done {
            return Err(cut_stream(self.chunks));
        }
        Ok(self.reply.build())
    }
}

#[cfg(test)]
#[path = "openai_chat_tests.rs"]
mod tests;
