//! `ListedTool`: one tool as a server listed it, kept compactly until it becomes an `McpTool`.
//!
//! A module of its own, below the client, the transport's page reader and `McpTool`, which all
//! hand it on (no import circles inside the MCP layer).

use super::annotations::McpToolAnnotations;
use crate::tool::JsonText;

/// One tool as a server listed it, cut down to what the console keeps (name, description,
/// input schema, annotations) and held compactly: rmcp's `Tool` holds the schema as a parsed
/// map (about 2 KiB for a small one), this holds its text. Made from each page as it arrives,
/// so a long listing never holds every tool parsed at once.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    /// The tool's name as the server sent it.
    pub name: String,
    pub description: String,
    pub input_schema: JsonText,
    pub annotations: Option<McpToolAnnotations>,
    pub title: Option<String>,
    pub output_schema: Option<JsonText>,
}

impl From<rmcp::model::Tool> for ListedTool {
    fn from(tool: rmcp::model::Tool) -> ListedTool {
        ListedTool {
            input_schema: JsonText::from_object(&tool.input_schema),
            annotations: tool.annotations.as_ref().map(McpToolAnnotations::from_rmcp),
            title: tool.title,
            output_schema: tool.output_schema.as_deref().map(JsonText::from_object),
            name: tool.name.into_owned(),
            description: tool.description.map(|d| d.into_owned()).unwrap_or_default(),
        }
    }
}
