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
use super::turn::{History, ToolChoice, ToolList};
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
