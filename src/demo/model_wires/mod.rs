//! The wires the demo model answers (`demo-model --wire chat|anthropic|responses`), each in its
//! own file: a request read into the rules' [`Talk`], and an answer written whole or as the
//! server-sent events of a stream, by the same rules and fault flags for all. The other side
//! of the agent's `providers/`, written from the vendors' documentation, not from them.

mod anthropic;
mod chat;
mod responses;

use http::HeaderMap;
use hyper::body::Bytes;
use serde_json::Value;

use super::model_rules::{Answer, Talk};
use crate::config::ModelProvider;

/// Token counts of an answer: every token read, those read from the prompt cache, written.
#[derive(Debug, Clone, Copy, Default)]
pub struct DemoUsage {
    pub input: u64,
    pub cached: u64,
    pub output: u64,
}

/// An answer to write: the rules' answer, the model named in the request, its usage, and
/// whether it carries reasoning (`--reasoning`).
pub struct Reply<'a> {
    pub answer: &'a Answer,
    pub model: &'a str,
    pub usage: DemoUsage,
    pub reasoning: bool,
}

impl Reply<'_> {
    /// The reasoning text of this answer.
    fn thought(&self) -> String {
        match self.answer.calls.first() {
            Some((name, _)) => format!("(demo model) thinking: {name} does what was asked."),
            None => "(demo model) thinking: no tool is needed.".to_string(),
        }
    }

    /// The signature (Anthropic) or encrypted content (Responses) of this answer's reasoning:
    /// what a request must send back.
    fn seal(&self) -> String {
        format!("demo-sealed-{}", self.answer.first_call)
    }
}

/// A request the wire refuses: the status and the message.
pub struct Refusal(pub http::StatusCode, pub String);

impl Refusal {
    fn bad(message: impl Into<String>) -> Refusal {
        Refusal(http::StatusCode::BAD_REQUEST, message.into())
    }
}

/// The wire the demo model speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DemoWire(pub ModelProvider);

impl DemoWire {
    /// The wire named as `--wire` names it (`chat`, `anthropic`, `responses`).
    pub fn named(name: &str) -> Option<DemoWire> {
        Some(DemoWire(match name {
            "chat" => ModelProvider::OpenAiChat,
            "anthropic" => ModelProvider::Anthropic,
            "responses" => ModelProvider::OpenAiResponses,
            _ => return None,
        }))
    }

    /// The path it answers (after `/v1`).
    pub fn path(self) -> &'static str {
        match self.0 {
            ModelProvider::OpenAiChat => "/chat/completions",
            ModelProvider::Anthropic => "/messages",
            ModelProvider::OpenAiResponses => "/responses",
        }
    }

    /// Whether `headers` carry `key` as the wire's API wants it.
    pub fn authorized(self, headers: &HeaderMap, key: &str) -> bool {
        match self.0 {
            ModelProvider::Anthropic => anthropic::authorized(headers, key),
            _ => {
                let expected = format!("Bearer {key}");
                headers
                    .get(http::header::AUTHORIZATION)
                    .is_some_and(|v| v.as_bytes() == expected.as_bytes())
            }
        }
    }

    /// The request read, or why the wire refuses it. With `reasoning`, an answer's reasoning
    /// must come back with it.
    pub fn read(
        self,
        headers: &HeaderMap,
        request: &Value,
        reasoning: bool,
    ) -> Result<Talk, Refusal> {
        match self.0 {
            ModelProvider::OpenAiChat => chat::read(request),
            ModelProvider::Anthropic => anthropic::read(headers, request, reasoning),
            ModelProvider::OpenAiResponses => responses::read(request, reasoning),
        }
    }

    /// The answer's token limit as the request gives it.
    pub fn max_tokens(self, request: &Value) -> Option<u64> {
        match self.0 {
            ModelProvider::OpenAiResponses => request["max_output_tokens"].as_u64(),
            _ => request["max_tokens"].as_u64(),
        }
    }

    /// Whether a streamed answer ends with its usage.
    pub fn streams_usage(self, request: &Value) -> bool {
        match self.0 {
            ModelProvider::OpenAiChat => request["stream_options"]["include_usage"] == true,
            _ => true,
        }
    }

    /// A whole answer.
    pub fn whole(self, reply: &Reply<'_>) -> Value {
        match self.0 {
            ModelProvider::OpenAiChat => chat::whole(reply),
            ModelProvider::Anthropic => anthropic::whole(reply),
            ModelProvider::OpenAiResponses => responses::whole(reply),
        }
    }

    /// A streamed answer, as its events (each a whole `event:`/`data:` frame).
    pub fn frames(self, reply: &Reply<'_>, usage: bool) -> Vec<Bytes> {
        match self.0 {
            ModelProvider::OpenAiChat => chat::frames(reply, usage),
            ModelProvider::Anthropic => anthropic::frames(reply),
            ModelProvider::OpenAiResponses => responses::frames(reply),
        }
    }

    /// An event whose data is not JSON (`--malformed-chunk`).
    pub fn malformed(self) -> Bytes {
        Bytes::from_static(match self.0 {
            ModelProvider::OpenAiChat => b"data: {\"choices\": [{\"delta\": \n\n",
            ModelProvider::Anthropic => b"event: content_block_delta\ndata: {\"type\": \n\n",
            ModelProvider::OpenAiResponses => {
                b"event: response.output_text.delta\ndata: {\"type\": \n\n"
            }
        })
    }

    /// The start of an event that never ends (`--drip-stream`: a byte follows every 200 ms).
    pub fn drip_start(self) -> Bytes {
        Bytes::from_static(match self.0 {
            ModelProvider::OpenAiChat => b"data: {\"choices\": [{\"delta\": {\"content\": \"",
            ModelProvider::Anthropic => b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"",
            ModelProvider::OpenAiResponses => b"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"",
        })
    }

    /// An error answer's body.
    pub fn error_body(self, status: http::StatusCode, message: &str) -> Value {
        match self.0 {
            ModelProvider::Anthropic => anthropic::error_body(status, message),
            _ => {
                serde_json::json!({"error": {"message": message, "type": "demo_model", "code": status.as_u16()}})
            }
        }
    }
}

/// One server-sent event: `event: NAME` (when named) and its data.
fn frame(event: Option<&str>, data: &Value) -> Bytes {
    Bytes::from(match event {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    })
}

/// Text in the pieces a stream sends it in: word by word.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive([' ', '\n'])
}

/// Arguments in the two pieces a stream sends them in.
fn halves(arguments: &str) -> [&str; 2] {
    let mut cut = arguments.len() / 2;
    while !arguments.is_char_boundary(cut) {
        cut -= 1;
    }
    [&arguments[..cut], &arguments[cut..]]
}
