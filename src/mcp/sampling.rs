//! A server's `sampling/createMessage` as a request the driver answers, like an elicitation: an
//! id, a reply, and dropping it unanswered rejects it. It carries what the operator must see
//! before a model runs on the server's behalf (messages, system prompt, max tokens, model
//! preferences, included context, tools) as plain data, so nothing above this layer names rmcp.
//!
//! Separate from the handler (which receives the request and turns the answer into the MCP
//! result) because the request travels: the MCP layer creates it, the runtime publishes it, the
//! console's sampling modal answers it with the agent's model.

// Sampling is SEP-2577-deprecated in rmcp; the servers of today use it.
#![allow(deprecated)]

use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::oneshot;

use super::reply::Reply;

use rmcp::model::{ContentBlock, CreateMessageRequestParams, Role, SamplingMessageContentBlock};

/// Ids of sampling requests, unique in this process.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Who a sampling message is from. (Its own type, not the prompts' `MessageRole`: this module
/// stays a leaf of the MCP layer.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SamplingRole {
    User,
    Assistant,
}

/// One message of the conversation the server wants answered: its text, non-text content as a
/// short placeholder naming its type and size (as sent: not sanitized, whoever shows it does).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    pub role: SamplingRole,
    pub text: String,
}

/// A tool the server offers the model in its request (shown; the console answers in text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// What the server asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingAsk {
    pub messages: Vec<SamplingMessage>,
    pub system_prompt: Option<String>,
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    pub stop_sequences: Vec<String>,
    /// `modelPreferences` as sent (hints, cost / speed / intelligence priorities).
    pub model_preferences: Option<Value>,
    /// `includeContext`: `none`, `thisServer` or `allServers`.
    pub include_context: Option<String>,
    pub tools: Vec<SamplingTool>,
    /// `toolChoice` as sent.
    pub tool_choice: Option<Value>,
}

/// How the driver answered.
#[derive(Debug, Clone, PartialEq)]
pub enum SamplingAnswer {
    /// The operator approved this answer (the model's, perhaps edited).
    Answer {
        text: String,
        /// The model that wrote it (the profile's `model`).
        model: String,
        /// `endTurn`, `maxTokens`, … (the model's finish reason, mapped).
        stop_reason: Option<String>,
        /// The operator changed the model's text before sending it.
        edited: bool,
    },
    /// Rejected, and why (the server gets an error saying so).
    Reject(String),
}

/// One sampling request from a server, waiting for the driver.
///
/// Clones share one reply: the first answer wins. Dropping every clone unanswered rejects it.
#[derive(Clone)]
pub struct SamplingRequest {
    /// Unique in this process; lets queued requests be told apart.
    pub id: u64,
    pub server: String,
    pub ask: SamplingAsk,
    reply: Reply<SamplingAnswer>,
}

impl std::fmt::Debug for SamplingRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SamplingRequest")
            .field("id", &self.id)
            .field("server", &self.server)
            .field("messages", &self.ask.messages.len())
            .field("max_tokens", &self.ask.max_tokens)
            .finish_non_exhaustive()
    }
}

impl PartialEq for SamplingRequest {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl SamplingRequest {
    pub fn new(
        server: &str,
        ask: SamplingAsk,
    ) -> (SamplingRequest, oneshot::Receiver<SamplingAnswer>) {
        Self::with_id(NEXT_ID.fetch_add(1, Ordering::Relaxed), server, ask)
    }

    /// A request asked elsewhere (a daemon's server's), under the id it is shown by here.
    pub fn with_id(
        id: u64,
        server: &str,
        ask: SamplingAsk,
    ) -> (SamplingRequest, oneshot::Receiver<SamplingAnswer>) {
        let (reply, receiver) = Reply::new();
        (
            SamplingRequest {
                id,
                server: server.to_string(),
                ask,
                reply,
            },
            receiver,
        )
    }

    /// Whether the server still waits for an answer (not answered, not withdrawn).
    pub fn is_open(&self) -> bool {
        self.reply.is_open()
    }

    /// Resolves once nobody waits for an answer any more: answered, or withdrawn by the
    /// server (or given up on).
    pub async fn closed(&self) {
        self.reply.closed().await
    }

    fn send(&self, answer: SamplingAnswer) {
        self.reply.send(answer);
    }

    /// Sends `text` back as the assistant's answer, written by `model`.
    pub fn answer(&self, text: String, model: String, stop_reason: Option<String>, edited: bool) {
        self.send(SamplingAnswer::Answer {
            text,
            model,
            stop_reason,
            edited,
        });
    }

    /// Rejects the request, saying why (the server's error carries it).
    pub fn reject(&self, why: impl Into<String>) {
        self.send(SamplingAnswer::Reject(why.into()));
    }
}

/// A content block of a sampling message as text: text as is, the rest a placeholder naming
/// its type and size.
fn block_text(block: &SamplingMessageContentBlock) -> String {
    match block {
        SamplingMessageContentBlock::Text(t) => t.text.clone(),
        SamplingMessageContentBlock::Image(i) => {
            format!("[image {}, {} bytes base64]", i.mime_type, i.data.len())
        }
        SamplingMessageContentBlock::Audio(a) => {
            format!("[audio {}, {} bytes base64]", a.mime_type, a.data.len())
        }
        SamplingMessageContentBlock::ToolUse(u) => format!(
            "[tool use {} {}: {}]",
            u.id,
            u.name,
            Value::Object(u.input.clone())
        ),
        SamplingMessageContentBlock::ToolResult(r) => {
            let parts: Vec<String> = r.content.iter().map(result_text).collect();
            format!("[tool result {}] {}", r.tool_use_id, parts.join("\n"))
        }
        // rmcp may add block kinds; show that something arrived rather than nothing.
        _ => "[content of an unknown kind]".to_string(),
    }
}

/// A tool result's content block as text: text as is, the rest named by its kind.
fn result_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => format!("[image {}, {} bytes base64]", i.mime_type, i.data.len()),
        ContentBlock::Audio(a) => format!("[audio {}, {} bytes base64]", a.mime_type, a.data.len()),
        ContentBlock::Resource(_) => "[embedded resource]".to_string(),
        ContentBlock::ResourceLink(link) => format!("[link {}]", link.uri),
        _ => "[content of an unknown kind]".to_string(),
    }
}

fn to_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// The request as the driver sees it.
pub(crate) fn sampling_ask(params: CreateMessageRequestParams) -> SamplingAsk {
    let messages = params
        .messages
        .into_iter()
        .map(|m| SamplingMessage {
            role: match m.role {
                Role::User => SamplingRole::User,
                Role::Assistant => SamplingRole::Assistant,
            },
            text: m
                .content
                .into_vec()
                .iter()
                .map(block_text)
                .collect::<Vec<_>>()
                .join("\n"),
        })
        .collect();
    SamplingAsk {
        messages,
        system_prompt: params.system_prompt,
        max_tokens: params.max_tokens,
        temperature: params.temperature,
        stop_sequences: params.stop_sequences.unwrap_or_default(),
        model_preferences: params.model_preferences.as_ref().map(to_json),
        include_context: params
            .include_context
            .as_ref()
            .map(|c| to_json(c).as_str().unwrap_or_default().to_string()),
        tools: params
            .tools
            .unwrap_or_default()
            .into_iter()
            .map(|t| SamplingTool {
                name: t.name.to_string(),
                description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                input_schema: Value::Object(t.input_schema.as_ref().clone()),
            })
            .collect(),
        tool_choice: params.tool_choice.as_ref().map(to_json),
    }
}

/// `finish_reason` of a Chat Completions answer as a sampling `stopReason`.
pub fn stop_reason(finish_reason: Option<&str>) -> Option<String> {
    finish_reason.map(|r| {
        match r {
            "stop" => "endTurn",
            "length" => "maxTokens",
            "tool_calls" => "toolUse",
            other => other,
        }
        .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask() -> SamplingAsk {
        SamplingAsk {
            messages: vec![SamplingMessage {
                role: SamplingRole::User,
                text: "hi".into(),
            }],
            system_prompt: None,
            max_tokens: 10,
            temperature: None,
            stop_sequences: Vec::new(),
            model_preferences: None,
            include_context: None,
            tools: Vec::new(),
            tool_choice: None,
        }
    }

    #[tokio::test]
    async fn the_first_answer_wins_and_dropping_rejects() {
        let (request, rx) = SamplingRequest::new("srv", ask());
        let copy = request.clone();
        assert!(request.is_open());
        request.answer("hello".into(), "m".into(), Some("endTurn".into()), true);
        assert!(!copy.is_open());
        copy.reject("late");
        assert_eq!(
            rx.await.unwrap(),
            SamplingAnswer::Answer {
                text: "hello".into(),
                model: "m".into(),
                stop_reason: Some("endTurn".into()),
                edited: true
            }
        );
        let (request, rx) = SamplingRequest::new("srv", ask());
        drop(request);
        assert!(rx.await.is_err(), "dropped unanswered: the handler rejects");
    }

    #[test]
    fn finish_reasons_map_to_stop_reasons() {
        assert_eq!(stop_reason(Some("stop")).as_deref(), Some("endTurn"));
        assert_eq!(stop_reason(Some("length")).as_deref(), Some("maxTokens"));
        assert_eq!(stop_reason(None), None);
    }
}
