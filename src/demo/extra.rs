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

/// The route of one extra tool: read-only, one optional string argument, answers its own name.
pub(super) fn extra_route(index: usize) -> ToolRoute<DemoServer> {
    let name = extra_name(index);
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    schema.insert(
        "properties".into(),
        json!({"text": {"type": "string", "description": "Ignored."}}),
    );
    let tool = Tool::new(
        name.clone(),
        format!("Generated tool number {index}; returns its own name."),
        Arc::new(schema),
    )
    .annotate(
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    );
    ToolRoute::new_dyn(tool, move |_ctx| {
        let name = name.clone();
        Box::pin(async move { Ok(CallToolResult::success(vec![ContentBlock::text(name)]).into()) })
    })
}
