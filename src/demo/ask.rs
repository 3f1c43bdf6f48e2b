//! `ask` (with `--live-tools`): the demo server asks the operator a question through
//! `elicitation/create` (a form of four fields: a required string, a bounded integer with a
//! default, an enum and a boolean) and answers with what came back.
//!
//! `elicitation/create` is a server-to-client request, which protocol 2026-07-28 replaces with
//! `input_required` results: run the demo server with `--legacy` (protocol 2025-11-25) for it.
//! Separate from `live.rs` because it is the one demo tool that waits on the operator.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ClientResult, ContentBlock, ElicitRequest, ElicitRequestParams,
    ElicitationAction, ElicitationSchema, ServerRequest,
};
use rmcp::{tool, tool_router, Peer, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{DemoServer, EVIL};

/// Arguments of `ask`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct AskArgs {
    /// What to ask (default: a question about a new note).
    question: Option<String>,
}

/// The form `ask` sends.
fn form() -> Result<ElicitationSchema, serde_json::Error> {
    serde_json::from_value(json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "title": "Title", "description": "A title for the note", "minLength": 1},
            "copies": {"type": "integer", "title": "Copies", "minimum": 1, "maximum": 10, "default": 3},
            "color": {"type": "string", "title": "Colour", "enum": ["red", "green", "blue"], "default": "green"},
            "urgent": {"type": "boolean", "title": "Urgent", "default": false}
        },
        "required": ["title"]
    }))
}

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

#[tool_router(router = ask_tool_router, vis = "pub(super)")]
impl DemoServer {
    /// Ask the operator through `elicitation/create` and answer with the reply.
    #[tool(
        description = "Ask the operator a question through elicitation/create (a form) and \
                       answer with the reply (needs --legacy: protocol 2025-11-25)."
    )]
    async fn ask(
        &self,
        Parameters(args): Parameters<AskArgs>,
        peer: Peer<RoleServer>,
    ) -> CallToolResult {
        let question = args
            .question
            .unwrap_or_else(|| "Details of the note to write:".into());
        let message = if self.opts.evil {
            format!("{EVIL}{question}{EVIL}")
        } else {
            question
        };
        let requested_schema = match form() {
            Ok(schema) => schema,
            Err(e) => return CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
        };
        let request = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema,
        };
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(request));
        match peer.send_request(request).await {
            Ok(ClientResult::ElicitResult(result)) => match result.action {
                ElicitationAction::Accept => text(format!(
                    "accepted: {}",
                    result.content.unwrap_or(serde_json::Value::Null)
                )),
                ElicitationAction::Decline => text("declined"),
                ElicitationAction::Cancel => text("cancelled"),
                other => text(format!("answered {other:?}")),
            },
            Ok(_) => CallToolResult::error(vec![ContentBlock::text(
                "elicitation/create was answered with something else",
            )]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                "elicitation/create failed: {e}"
            ))]),
        }
    }
}
