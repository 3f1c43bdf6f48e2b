//! The Chat Completions wire format: the messages of a conversation, the request body we send,
//! and the answer we read (whole, or as stream chunks), leniently where servers differ.
//!
//! Separate from the client because it is pure data: the loop builds messages, the client sends
//! them, the demo model reads the same shapes from the other side.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    /// A model answer. `content` is `""` rather than `null` when the model only called tools:
    /// llama.cpp's server rejects a `null` content.
    Assistant {
        #[serde(default, deserialize_with = "null_as_empty")]
        content: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// What one tool call gave, for the model.
    Tool {
        tool_call_id: String,
        #[serde(default, deserialize_with = "null_as_empty")]
        content: String,
    },
}

impl Message {
    /// A model's answer as the history keeps it: each call's arguments as the model wrote them
    /// when they are a JSON object, `{}` when not (empty, cut short at `max_tokens`, an array). The
    /// model hears of its bad arguments in that call's result; an endpoint that reads the
    /// history's calls back as JSON (llama.cpp's server) would refuse every later request of
    /// the conversation, and of a resumed one. The transcript keeps what the model wrote.
    pub fn assistant(content: String, mut tool_calls: Vec<ToolCall>) -> Message {
        for call in &mut tool_calls {
            // An object: JSON that opens with `{` (checked without building a value; the call
            // parses its arguments once more when it runs).
            let object = call.arguments.trim_start().starts_with('{')
                && serde_json::from_str::<serde::de::IgnoredAny>(&call.arguments).is_ok();
            if !object {
                call.arguments = "{}".to_string();
            }
        }
        Message::Assistant {
            content,
            tool_calls,
        }
    }
}

/// A tool call the model asked for. `arguments` is the JSON text the model wrote (it may not
/// be JSON at all: that goes back to the model as an error).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl Serialize for ToolCall {
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
            id: &self.id,
            kind: "function",
            function: Function {
                name: &self.name,
                arguments: &self.arguments,
            },
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ToolCall {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = WireToolCall::deserialize(d)?;
        Ok(ToolCall {
            id: wire.id.unwrap_or_default(),
            name: wire
                .function
                .as_ref()
                .and_then(|f| f.name.clone())
                .unwrap_or_default(),
            arguments: wire
                .function
                .and_then(|f| f.arguments)
                .map(arguments_text)
                .unwrap_or_default(),
        })
    }
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// A tool as the model sees it: the registry's safe name, and the description and input
/// schema exactly as the server sent them (docs/ARCHITECTURE.md §3).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// Whether the model may call tools in a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolChoice {
    /// It may (`tool_choice: "auto"`).
    Auto,
    /// It is asked to answer in words (`tool_choice: "none"`): the last turn `max_turns` allows.
    None,
}

/// Token counts of one answer, as the endpoint reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "UsageRead")]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    /// Of `prompt_tokens`, those the endpoint read from its prompt cache.
    pub cached_tokens: u64,
}

/// [`Usage`] as read: from an endpoint (Chat Completions puts the cached count in
/// `prompt_tokens_details.cached_tokens`), or from a transcript (this program's own form; one
/// written before `cached_tokens` existed has none).
#[derive(Deserialize)]
struct UsageRead {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    total_tokens: u64,
    #[serde(default)]
    cached_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Deserialize)]
struct PromptTokensDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl From<UsageRead> for Usage {
    fn from(read: UsageRead) -> Usage {
        Usage {
            prompt_tokens: read.prompt_tokens,
            completion_tokens: read.completion_tokens,
            total_tokens: read.total_tokens,
            cached_tokens: read
                .cached_tokens
                .or(read.prompt_tokens_details.and_then(|d| d.cached_tokens))
                .unwrap_or(0),
        }
    }
}

/// Everything a request carries besides the messages and tools.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestOptions {
    pub model: String,
    pub stream: bool,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
}

/// The messages of a conversation as their wire JSON. Each message is serialized once, when
/// it is added, and a request copies those bytes: serializing the whole history again for every
/// turn was a quarter of a turn's CPU, and grew with the conversation. Only the JSON is kept (a
/// long conversation with large tool results is held once, not twice); [`messages`] reads it
/// back.
///
/// [`messages`]: History::messages
#[derive(Clone, Default, PartialEq)]
pub struct History {
    /// How many messages `json` holds.
    len: usize,
    /// The messages' JSON objects, comma-separated: the inside of the `messages` array.
    json: Vec<u8>,
}

impl History {
    pub fn push(&mut self, message: Message) {
        if !self.json.is_empty() {
            self.json.push(b',');
        }
        // Strings and `Value`s into a Vec: serializing cannot fail.
        let _ = serde_json::to_writer(&mut self.json, &message);
        self.len += 1;
    }

    /// Where the history ends now, for [`truncate`](History::truncate).
    pub fn mark(&self) -> HistoryMark {
        HistoryMark {
            len: self.len,
            bytes: self.json.len(),
        }
    }

    /// Drops what was pushed since `mark` was taken.
    pub fn truncate(&mut self, mark: HistoryMark) {
        if mark.bytes <= self.json.len() {
            self.json.truncate(mark.bytes);
            self.len = mark.len;
        }
    }

    /// How many messages the conversation has.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The messages, read back from their JSON (they read back as they were pushed).
    pub fn messages(&self) -> Vec<Message> {
        let mut array = Vec::with_capacity(self.json.len() + 2);
        array.push(b'[');
        array.extend_from_slice(&self.json);
        array.push(b']');
        serde_json::from_slice(&array).unwrap_or_default()
    }
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History")
            .field("messages", &self.len)
            .field("json_bytes", &self.json.len())
            .finish()
    }
}

/// A point in a [`History`] to go back to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryMark {
    len: usize,
    bytes: usize,
}

impl From<Vec<Message>> for History {
    fn from(messages: Vec<Message>) -> Self {
        let mut history = History::default();
        history.extend(messages);
        history
    }
}

impl Extend<Message> for History {
    fn extend<I: IntoIterator<Item = Message>>(&mut self, messages: I) {
        for message in messages {
            self.push(message);
        }
    }
}

/// A turn's tools with their wire JSON (the `tools` array), serialized once when the list is
/// made: a conversation offers the same list turn after turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolList {
    specs: Vec<ToolSpec>,
    json: Vec<u8>,
    /// The names, in order, as each turn's `TurnStarted` event carries them.
    names: Arc<[String]>,
}

impl ToolList {
    pub fn new(specs: Vec<ToolSpec>) -> Self {
        // Strings and `Value`s into a Vec: serializing cannot fail.
        let json = serde_json::to_vec(&WireTools(&specs)).unwrap_or_default();
        let names = specs.iter().map(|s| s.name.clone()).collect();
        ToolList { specs, json, names }
    }

    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    pub fn names(&self) -> &Arc<[String]> {
        &self.names
    }

    /// Whether a tool of this name is on the list (a scan: cheaper than a set for the few
    /// calls of a turn).
    pub fn offers(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }
}

/// The JSON body of a `POST …/chat/completions`: the history's and the tools' JSON as made
/// when they were added, around the options. With tools, `tool_choice: "auto"` is sent
/// although it is the standard's default: llama-cpp-python's `chatml-function-calling` ignores
/// the tools without it. (That server answers a *streamed* `auto` request with an empty body,
/// which the client reports as `bad_stream`, hint `stream: false`.)
pub fn request_body(
    history: &History,
    tools: &ToolList,
    choice: ToolChoice,
    options: &RequestOptions,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(history.json.len() + tools.json.len() + 256);
    // Strings and numbers into a Vec: serializing cannot fail.
    out.extend_from_slice(b"{\"model\":");
    let _ = serde_json::to_writer(&mut out, &options.model);
    out.extend_from_slice(b",\"messages\":[");
    out.extend_from_slice(&history.json);
    out.extend_from_slice(if options.stream {
        b"],\"stream\":true"
    } else {
        b"],\"stream\":false"
    });
    if !tools.specs.is_empty() {
        out.extend_from_slice(b",\"tools\":");
        out.extend_from_slice(&tools.json);
        out.extend_from_slice(match choice {
            ToolChoice::Auto => b",\"tool_choice\":\"auto\"",
            ToolChoice::None => b",\"tool_choice\":\"none\"",
        });
    }
    if options.stream {
        out.extend_from_slice(b",\"stream_options\":{\"include_usage\":true}");
    }
    if let Some(temperature) = options.temperature {
        out.extend_from_slice(b",\"temperature\":");
        let _ = serde_json::to_writer(&mut out, &temperature);
    }
    if let Some(max_tokens) = options.max_tokens {
        out.extend_from_slice(b",\"max_tokens\":");
        let _ = serde_json::to_writer(&mut out, &max_tokens);
    }
    out.push(b'}');
    out
}

/// The tools as the wire has them: `{"type": "function", "function": {name, description,
/// parameters}}` each.
#[derive(Debug)]
struct WireTools<'a>(&'a [ToolSpec]);

impl Serialize for WireTools<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
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
        s.collect_seq(self.0.iter().map(|t| Tool {
            kind: "function",
            function: Function {
                name: &t.name,
                description: &t.description,
                parameters: &t.parameters,
            },
        }))
    }
}

/// A whole (unstreamed) answer.
#[derive(Debug, Deserialize)]
pub struct Completion {
    #[serde(default)]
    pub choices: Vec<Choice>,
    #[serde(default)]
    pub usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
pub struct Choice {
    #[serde(default)]
    pub message: Option<ChoiceMessage>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct ChoiceMessage {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCall>>,
}

/// One chunk of a streamed answer.
#[derive(Debug, Deserialize)]
pub struct Chunk {
    #[serde(default)]
    pub choices: Vec<ChunkChoice>,
    #[serde(default)]
    pub usage: Option<Usage>,
    /// Some servers report a failure inside the stream.
    #[serde(default)]
    pub error: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub struct ChunkChoice {
    #[serde(default)]
    pub delta: Option<Delta>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Delta {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

/// A piece of a tool call: the first piece of each (by `index`) has its id and name, the
/// arguments come in pieces to be joined.
#[derive(Debug, Deserialize)]
pub struct ToolCallDelta {
    #[serde(default)]
    pub index: Option<usize>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<WireFunction>,
}

#[derive(Debug, Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Debug, Deserialize)]
pub struct WireFunction {
    #[serde(default)]
    pub name: Option<String>,
    /// A string by the standard; some servers send the object itself.
    #[serde(default)]
    pub arguments: Option<Value>,
}

/// The arguments as text, whichever way the server sent them.
pub fn arguments_text(value: Value) -> String {
    match value {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
