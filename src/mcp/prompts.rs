//! `McpPromptClient`: a server's prompts (all pages) and `prompts/get` with arguments.
//!
//! An interface of its own beside `McpClient` and `McpResourceClient` (docs/ARCHITECTURE.md §3),
//! implemented for the rmcp-backed client over the same bounded request path as `tools/call`.
//! Completions for prompt arguments are `McpResourceClient::complete` with a prompt target.

use rmcp::model::{
    ClientRequest, ContentBlock, GetPromptRequestParams, JsonObject, ListPromptsRequest,
    PaginatedRequestParams, Role, ServerResult,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::client::{DefaultMcpClient, McpClient, McpError, Retried};
use crate::tool::ProgressSink;

/// One argument a prompt takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptArgumentInfo {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
}

/// One prompt a server lists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptInfo {
    pub server: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgumentInfo>,
}

/// Who a prompt message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageRole {
    User,
    Assistant,
}

impl MessageRole {
    pub fn as_str(self) -> &'static str {
        match self {
            MessageRole::User => "user",
            MessageRole::Assistant => "assistant",
        }
    }
}

/// One message `prompts/get` returned: its text (non-text content summarised, an embedded
/// text resource included), and the content block as the server sent it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessageInfo {
    pub role: MessageRole,
    /// What the message says, as text (not sanitized: whoever shows it does that).
    pub text: String,
    /// The content block as sent (`{"type": "text", …}`, `{"type": "resource", …}`, …).
    pub content: Value,
}

/// What `prompts/get` returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessages {
    pub description: Option<String>,
    pub messages: Vec<PromptMessageInfo>,
}

/// Prompts of one server, behind the same deadlines as its tool calls.
#[async_trait::async_trait]
pub trait McpPromptClient: Send + Sync {
    /// The configured server name.
    fn server(&self) -> &str;
    /// Every prompt, following `nextCursor` over all pages.
    async fn list_prompts(&self) -> Result<Vec<PromptInfo>, McpError>;
    /// The messages of prompt `name` with `arguments` (string values); cancelling `cancel`
    /// sends `notifications/cancelled` and ends it.
    async fn get_prompt(
        &self,
        name: &str,
        arguments: JsonObject,
        cancel: CancellationToken,
    ) -> Result<PromptMessages, McpError>;
}

/// A content block as text: text as is, an embedded text resource with its URI, the rest
/// summarised.
pub fn content_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => format!("[image {}, {} bytes base64]", i.mime_type, i.data.len()),
        ContentBlock::Audio(a) => format!("[audio {}, {} bytes base64]", a.mime_type, a.data.len()),
        ContentBlock::Resource(r) => match serde_json::to_value(&r.resource) {
            Ok(v) => match (
                v.get("uri").and_then(Value::as_str),
                v.get("text"),
                v.get("blob"),
            ) {
                (Some(uri), Some(Value::String(text)), _) => format!("[resource {uri}]\n{text}"),
                (Some(uri), _, Some(Value::String(blob))) => {
                    format!("[resource {uri}, {} bytes base64]", blob.len())
                }
                (Some(uri), _, _) => format!("[resource {uri}]"),
                _ => "[resource]".to_string(),
            },
            Err(_) => "[resource]".to_string(),
        },
        ContentBlock::ResourceLink(link) => format!("[link {}]", link.uri),
        // rmcp may add block kinds; show that something arrived rather than nothing.
        _ => "[content of an unknown kind]".to_string(),
    }
}

#[async_trait::async_trait]
impl McpPromptClient for DefaultMcpClient {
    fn server(&self) -> &str {
        McpClient::server(self)
    }

    async fn list_prompts(&self) -> Result<Vec<PromptInfo>, McpError> {
        let server = McpClient::server(self).to_string();
        let prompts = self
            .all_pages(
                "prompts/list",
                |cursor| {
                    ClientRequest::ListPromptsRequest(ListPromptsRequest {
                        params: cursor.map(|c| {
                            let mut params = PaginatedRequestParams::default();
                            params.cursor = Some(c);
                            params
                        }),
                        ..Default::default()
                    })
                },
                |answer| match answer {
                    ServerResult::ListPromptsResult(page) => Some((page.prompts, page.next_cursor)),
                    _ => None,
                },
            )
            .await?;
        Ok(prompts
            .into_iter()
            .map(|p| PromptInfo {
                server: server.clone(),
                name: p.name,
                title: p.title,
                description: p.description,
                arguments: p
                    .arguments
                    .unwrap_or_default()
                    .into_iter()
                    .map(|a| PromptArgumentInfo {
                        name: a.name,
                        title: a.title,
                        description: a.description,
                        required: a.required.unwrap_or(false),
                    })
                    .collect(),
            })
            .collect())
    }

    async fn get_prompt(
        &self,
        name: &str,
        arguments: JsonObject,
        cancel: CancellationToken,
    ) -> Result<PromptMessages, McpError> {
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params = params.with_arguments(arguments);
        }
        let request = Retried::Prompt(params);
        match self
            .request_answering(request, &cancel, ProgressSink::none())
            .await?
        {
            ServerResult::GetPromptResult(result) => Ok(PromptMessages {
                description: result.description,
                messages: result
                    .messages
                    .into_iter()
                    .map(|m| PromptMessageInfo {
                        role: match m.role {
                            Role::User => MessageRole::User,
                            Role::Assistant => MessageRole::Assistant,
                        },
                        text: content_text(&m.content),
                        content: serde_json::to_value(&m.content).unwrap_or(Value::Null),
                    })
                    .collect(),
            }),
            _ => Err(McpError::Protocol(
                "prompts/get was answered with something other than messages".into(),
            )),
        }
    }
}
