//! The model APIs the agent speaks, each in its own file, mapping its wire to and from the
//! neutral items of `turn.rs`: where requests go, how they are authorised, their body, and the
//! answer read whole or streamed. The HTTP core (`client.rs`: connections, timeouts, retries,
//! `Retry-After`, error classes) is the same for all.
//!
//! No module outside this folder names a wire's field (`tests/layers.rs` checks).

pub mod anthropic;
pub mod openai_chat;
pub mod openai_responses;

use http::{HeaderMap, HeaderName, HeaderValue};

use super::failure::{ModelError, Secrets};
use super::stream::{ModelReply, StreamReader};
use super::turn::{History, Item, JsonSeq, ToolChoice, ToolList, ToolSpec};
use crate::config::{ModelProfile, ModelProvider};

/// Everything a request carries besides the conversation and the tools.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestOptions {
    pub model: String,
    pub stream: bool,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
}

/// One provider's wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wire(pub ModelProvider);

impl Wire {
    /// The path of its requests after the base URL (`…/v1`).
    pub fn path(self) -> &'static str {
        match self.0 {
            ModelProvider::OpenAiChat => openai_chat::PATH,
            ModelProvider::Anthropic => anthropic::PATH,
            ModelProvider::OpenAiResponses => openai_responses::PATH,
        }
    }

    /// The headers of every request: the profile's own, its key as this API wants it, and
    /// the content type. Key values are marked sensitive.
    pub fn headers(self, profile: &ModelProfile) -> HeaderMap {
        let mut headers = HeaderMap::new();
        // The loader has validated every name and value.
        for (name, value) in &profile.headers {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                headers.insert(name, value);
            }
        }
        match self.0 {
            ModelProvider::Anthropic => anthropic::headers(profile, &mut headers),
            ModelProvider::OpenAiChat | ModelProvider::OpenAiResponses => {
                if let Some(key) = &profile.api_key {
                    if let Ok(mut value) = HeaderValue::from_str(&format!("Bearer {key}")) {
                        value.set_sensitive(true);
                        headers.insert(http::header::AUTHORIZATION, value);
                    }
                }
            }
        }
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers
    }

    /// The request's JSON body.
    pub fn body(
        self,
        history: &History,
        tools: &ToolList,
        choice: ToolChoice,
        options: &RequestOptions,
    ) -> Vec<u8> {
        match self.0 {
            ModelProvider::OpenAiChat => openai_chat::request_body(history, tools, choice, options),
            ModelProvider::Anthropic => anthropic::request_body(history, tools, choice, options),
            ModelProvider::OpenAiResponses => {
                openai_responses::request_body(history, tools, choice, options)
            }
        }
    }

    /// A whole (unstreamed) answer.
    pub fn whole(self, body: &[u8], secrets: &Secrets) -> Result<ModelReply, ModelError> {
        match self.0 {
            ModelProvider::OpenAiChat => openai_chat::whole(body, secrets),
            ModelProvider::Anthropic => anthropic::whole(body, secrets),
            ModelProvider::OpenAiResponses => openai_responses::whole(body, secrets),
        }
    }

    /// A reader of one streamed answer.
    pub fn reader(self, secrets: Secrets) -> Box<dyn StreamReader> {
        match self.0 {
            ModelProvider::OpenAiChat => Box::new(openai_chat::Assembler::new(secrets)),
            ModelProvider::Anthropic => Box::new(anthropic::Reader::new(secrets)),
            ModelProvider::OpenAiResponses => Box::new(openai_responses::Reader::new(secrets)),
        }
    }
}

/// A request body as it is written: `{"model": …`, then each field after a comma. The history
/// and the tool list go in as their provider encoded them (once, when first sent).
struct Body(Vec<u8>);

impl Body {
    fn new(model: &str) -> Body {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(b"{\"model\":");
        write_json(&mut out, &model);
        Body(out)
    }

    fn key(&mut self, name: &str) {
        self.0.extend_from_slice(b",\"");
        self.0.extend_from_slice(name.as_bytes());
        self.0.extend_from_slice(b"\":");
    }

    /// `,"name": value`.
    fn field(&mut self, name: &str, value: &impl serde::Serialize) {
        self.key(name);
        write_json(&mut self.0, value);
    }

    /// `,"name": json`, the value's JSON as it is (a fixed object or word).
    fn raw(&mut self, name: &str, json: &[u8]) {
        self.key(name);
        self.0.extend_from_slice(json);
    }

    /// `,"name": value` when there is one.
    fn optional(&mut self, name: &str, value: Option<impl serde::Serialize>) {
        if let Some(value) = value {
            self.field(name, &value);
        }
    }

    /// `,"name": [first, the history's items]`, the items as `provider` encodes them.
    fn items(
        &mut self,
        name: &str,
        first: Option<impl serde::Serialize>,
        history: &History,
        provider: &'static str,
        encode: impl Fn(&Item, &mut JsonSeq<'_>),
    ) {
        self.key(name);
        self.0.push(b'[');
        if let Some(first) = first {
            write_json(&mut self.0, &first);
            if !history.is_empty() {
                self.0.push(b',');
            }
        }
        history.encoded(provider, encode, |json| self.0.extend_from_slice(json));
        self.0.push(b']');
    }

    /// `,"tools": …, "tool_choice": …` when there are tools: the list as `provider` encodes
    /// it, the choice as the wire words it (`auto` and `none`, JSON).
    fn tools(
        &mut self,
        tools: &ToolList,
        provider: &'static str,
        encode: impl FnOnce(&[ToolSpec]) -> Vec<u8>,
        choice: ToolChoice,
        words: [&[u8]; 2],
    ) {
        if tools.is_empty() {
            return;
        }
        self.raw("tools", &tools.encoded(provider, encode));
        self.raw(
            "tool_choice",
            match choice {
                ToolChoice::Auto => words[0],
                ToolChoice::None => words[1],
            },
        );
    }

    fn finish(mut self) -> Vec<u8> {
        self.0.push(b'}');
        self.0
    }
}

/// One event of a stream whose events carry their `type` in their data (the Messages and the
/// Responses APIs): the event, counted in `events`, and the block or item it is about (its
/// `index` field); one that is not JSON is a `bad_stream`, quoted with `secrets` scrubbed.
fn typed_event(
    data: &str,
    index: &str,
    events: &mut usize,
    secrets: &Secrets,
) -> Result<(serde_json::Value, usize), ModelError> {
    let event: serde_json::Value = serde_json::from_str(data).map_err(|e| {
        super::stream::bad_event(
            *events + 1,
            &e.to_string(),
            &secrets.quote(data.as_bytes(), 120),
        )
    })?;
    *events += 1;
    let at = event[index]
        .as_u64()
        .and_then(|i| usize::try_from(i).ok())
        .unwrap_or(0);
    Ok((event, at))
}

/// The JSON of `value` appended to `out` (strings, numbers and `Value`s into a Vec: it cannot
/// fail).
fn write_json(out: &mut Vec<u8>, value: &impl serde::Serialize) {
    let _ = serde_json::to_writer(out, value);
}

/// The text of a JSON value an endpoint sent where text belongs: a string as it is, anything
/// else as its JSON.
fn text_of(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}
