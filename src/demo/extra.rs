//! `--extra-tools N`: N generated trivial tools (`extra_0` …), for measuring a console that
//! holds many tools (the memory benchmark) without writing N real ones.
//!
//! Separate from `tools.rs` because these are built at run time from a count, not declared with
//! `#[tool]`, and they carry no behaviour worth reading: each returns its own name.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRoute;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::json;

use super::DemoServer;

/// The name of the `index`-th extra tool.
fn extra_name(index: usize) -> String {
    format!("extra_{index}")
}

/// The input schema every extra tool has: one optional string argument. Made once and shared
/// by all of them, so that a server of 100,000 tools holds one.
pub(super) fn extra_schema() -> Arc<JsonObject> {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    schema.insert(
        "properties".into(),
        json!({"text": {"type": "string", "description": "Ignored."}}),
    );
    Arc::new(schema)
}

/// The route of one extra tool: read-only, the shared schema, answers its own name.
pub(super) fn extra_route(index: usize, schema: &Arc<JsonObject>) -> ToolRoute<DemoServer> {
    let tool = Tool::new(
        extra_name(index),
        format!("Generated tool number {index}; returns its own name."),
        schema.clone(),
    )
    .annotate(
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    );
    ToolRoute::new_dyn(tool, move |_ctx| {
        let name = extra_name(index);
        Box::pin(async move { Ok(CallToolResult::success(vec![ContentBlock::text(name)]).into()) })
    })
}
