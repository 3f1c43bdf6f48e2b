//! `McpTool`: a remote tool as an ordinary `Tool` (docs/ARCHITECTURE.md §1). It names the tool,
//! carries the traits resolved once at registration, and delegates calls; every failure becomes a
//! `ToolResult::error` (fail-safe execute).

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use super::client::McpClient;
pub use super::listed::ListedTool;
use super::traits::McpToolTraits;
use crate::config::AnnotationTrust;
use crate::tool::{
    base64_size, ContentPart, JsonText, Tool, ToolContext, ToolDescriptor, ToolInput, ToolOrigin,
    ToolResult,
};

/// Longest name an LLM tool-calling API accepts.
pub const MAX_TOOL_NAME: usize = 64;

/// `mcp__<server>__<tool>`, or a deterministic safe name when that would be over 64 characters
/// or hold characters outside `[A-Za-z0-9_-]`. The raw name is always kept beside it.
pub fn qualified_name(server: &str, tool: &str) -> String {
    let plain = format!("mcp__{server}__{tool}");
    let clean = plain
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if clean && plain.len() <= MAX_TOOL_NAME {
        return plain;
    }
    let safe_tool: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let hash = fnv1a(tool.as_bytes());
    let suffix = format!("_{:08x}", hash as u32);
    let prefix = format!("mcp__{server}__");
    let room = MAX_TOOL_NAME.saturating_sub(prefix.len() + suffix.len());
    let kept: String = safe_tool.chars().take(room).collect();
    format!("{prefix}{kept}{suffix}")
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A tool served by an MCP server. Built once per listing; the manager's ready set and the
/// registry share it.
pub struct McpTool {
    descriptor: ToolDescriptor,
    client: Arc<dyn McpClient>,
}

impl McpTool {
    /// Builds the tool from what the server listed, resolving its traits under `trust`.
    pub fn new(
        server: &str,
        trust: AnnotationTrust,
        tool: ListedTool,
        client: Arc<dyn McpClient>,
    ) -> Self {
        let traits = McpToolTraits::resolve(tool.annotations.as_ref(), trust);
        let flags =
            crate::tool::poison::scan_tool(server, &tool.description, tool.input_schema.as_str());
        let mut descriptor = ToolDescriptor {
            name: qualified_name(server, &tool.name),
            description: tool.description,
            input_schema: tool.input_schema,
            side_effect: traits.side_effect,
            destructive: traits.destructive,
            provenance: traits.provenance,
            flags,
            pin: None,
            origin: Some(ToolOrigin {
                server: server.to_string(),
                trust,
                annotations: tool
                    .annotations
                    .as_ref()
                    .map(|a| JsonText::from_value(&a.to_json())),
                tool: tool.name,
                title: tool.title,
                output_schema: tool.output_schema,
            }),
        };
        descriptor.pin =
            crate::tool::pin::definition(&descriptor).map(|d| crate::tool::pin::hash(&d));
        McpTool { descriptor, client }
    }

    /// The tool's name as the server sent it.
    pub fn raw_name(&self) -> &str {
        match &self.descriptor.origin {
            Some(origin) => &origin.tool,
            None => &self.descriptor.name,
        }
    }
}

#[async_trait::async_trait]
impl Tool for McpTool {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }

    fn unavailable(&self) -> Option<String> {
        (!self.client.is_connected()).then(|| {
            format!(
                "server {} is disconnected; restart it to use {}",
                self.client.server(),
                self.descriptor.name
            )
        })
    }

    async fn execute(&self, input: ToolInput, ctx: ToolContext) -> ToolResult {
        let server = self.client.server().to_string();
        if let Some(why) = self.unavailable() {
            return ToolResult::error(why);
        }
        match self
            .client
            .call_tool(self.raw_name(), input.0, ctx.cancel, ctx.progress)
            .await
        {
            Ok(result) => convert_result(result),
            Err(err) => ToolResult::error(format!("{server}: {err}")),
        }
    }
}

/// The result as typed parts (what the agent tells a model) and as text (what the operator
/// sees): text blocks as they are, other blocks summarised.
fn convert_result(result: CallToolResult) -> ToolResult {
    let parts: Vec<ContentPart> = result.content.iter().map(part).collect();
    let mut lines = Vec::with_capacity(result.content.len());
    for (block, part) in result.content.iter().zip(&parts) {
        lines.push(match (block, part) {
            (ContentBlock::Text(t), _) => t.text.clone(),
            (ContentBlock::Image(i), _) => {
                format!("[image {}, {} bytes base64]", i.mime_type, i.data.len())
            }
            (ContentBlock::Audio(a), _) => {
                format!("[audio {}, {} bytes base64]", a.mime_type, a.data.len())
            }
            // The operator sees an embedded text resource's text; a model gets its size.
            (ContentBlock::Resource(r), ContentPart::Resource { uri, .. }) => match &r.resource {
                ResourceContents::TextResourceContents { text, .. } => {
                    format!("[resource {uri}]\n{text}")
                }
                _ => format!("[resource {uri}]"),
            },
            (ContentBlock::Resource(_), _) => "[resource]".to_string(),
            (ContentBlock::ResourceLink(link), _) => format!("[link {}]", link.uri),
            // rmcp may add block kinds; show that something arrived rather than nothing.
            _ => part.for_model(),
        });
    }
    let is_error = result.is_error.unwrap_or(false);
    let mut text = lines.join("\n");
    if text.is_empty() {
        if let Some(structured) = &result.structured_content {
            text = structured.to_string();
        } else if is_error {
            text = "the tool reported an error without a message".into();
        }
    }
    // Blocks other than text are kept as sent, for the gateway's hosts.
    let content = result
        .content
        .iter()
        .any(|block| !matches!(block, ContentBlock::Text(_)))
        .then(|| serde_json::to_value(&result.content).ok())
        .flatten();
    ToolResult {
        is_error,
        text,
        structured: result.structured_content,
        parts,
        content,
    }
}

/// One content block as a typed part: its kind, type and size, its text only when it is text.
fn part(block: &ContentBlock) -> ContentPart {
    match block {
        ContentBlock::Text(t) => ContentPart::Text(t.text.clone()),
        ContentBlock::Image(i) => ContentPart::Image {
            mime_type: i.mime_type.clone(),
            bytes: base64_size(&i.data),
        },
        ContentBlock::Audio(a) => ContentPart::Audio {
            mime_type: a.mime_type.clone(),
            bytes: base64_size(&a.data),
        },
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => ContentPart::Resource {
                uri: uri.clone(),
                mime_type: mime_type.clone(),
                bytes: text.len(),
                text: true,
            },
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => ContentPart::Resource {
                uri: uri.clone(),
                mime_type: mime_type.clone(),
                bytes: base64_size(blob),
                text: false,
            },
            // rmcp may add kinds of resource contents.
            _ => ContentPart::Unknown,
        },
        ContentBlock::ResourceLink(link) => ContentPart::Link {
            uri: link.uri.clone(),
            mime_type: link.mime_type.clone(),
        },
        _ => ContentPart::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_when_they_can_be() {
        assert_eq!(qualified_name("demo", "echo"), "mcp__demo__echo");
    }

    #[test]
    fn odd_or_long_names_get_a_deterministic_safe_name() {
        let a = qualified_name("demo", "weird name/with.dots");
        assert!(a.starts_with("mcp__demo__weird_name_with_dots_"), "{a}");
        assert_eq!(a, qualified_name("demo", "weird name/with.dots"));
        let long = "x".repeat(100);
        let b = qualified_name("demo", &long);
        assert_eq!(b.len(), MAX_TOOL_NAME);
        assert_ne!(b, qualified_name("demo", &format!("{long}y")));
    }
}
