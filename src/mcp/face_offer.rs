//! What the gateway offers its hosts: each remote tool under the name `gateway.naming` gives it,
//! with its *resolved* traits as annotations, and each result as the server sent it.
//!
//! One [`Offer`] is built per registry snapshot and shared by every host until the tools
//! change, so a call looks its tool up in a map rather than naming every tool again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{CallToolResult, ContentBlock, Tool, ToolAnnotations};
use serde_json::{Map, Value};

use crate::config::Naming;
use crate::tool::registry::ToolSnapshot;
use crate::tool::{ContentPart, SideEffectLevel, ToolDescriptor, ToolResult};

/// The tools on offer from one snapshot: as a host lists them, and by offered name.
pub(super) struct Offer {
    snapshot: ToolSnapshot,
    pub(super) tools: Vec<Tool>,
    by_name: HashMap<String, ToolDescriptor>,
}

impl Offer {
    fn build(snapshot: ToolSnapshot, naming: &Naming) -> Offer {
        let mut tools = Vec::new();
        let mut by_name = HashMap::new();
        for tool in snapshot.values() {
            let tool = tool.descriptor();
            let Some(origin) = &tool.origin else {
                continue;
            };
            let name = naming.name(&origin.server, &origin.tool);
            if let Some(first) = by_name.get(&name) {
                let first: &ToolDescriptor = first;
                tracing::warn!(
                    offered = %name, kept = %first.name, left_out = %tool.name,
                    "gateway.naming gives two tools one name: the first keeps it"
                );
                continue;
            }
            tools.push(offered(tool, name.clone()));
            by_name.insert(name, tool.clone());
        }
        Offer {
            snapshot,
            tools,
            by_name,
        }
    }

    /// The tool a host calls `name`.
    pub(super) fn get(&self, name: &str) -> Option<&ToolDescriptor> {
        self.by_name.get(name)
    }
}

/// The offer of the latest snapshot, kept until the tools change.
#[derive(Default)]
pub(super) struct OfferCache {
    latest: Mutex<Option<Arc<Offer>>>,
}

impl OfferCache {
    pub(super) fn offer(&self, snapshot: ToolSnapshot, naming: &Naming) -> Arc<Offer> {
        let mut latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(offer) = latest.as_ref() {
            if Arc::ptr_eq(&offer.snapshot, &snapshot) {
                return offer.clone();
            }
        }
        let offer = Arc::new(Offer::build(snapshot, naming));
        *latest = Some(offer.clone());
        offer
    }
}

/// A tool as a host sees it: its hints are the resolved traits.
fn offered(tool: &ToolDescriptor, name: String) -> Tool {
    let origin = tool.origin.as_ref();
    let schema = match tool.input_schema.parsed() {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let mut offered = Tool::new_with_raw(name, Some(tool.description.clone().into()), schema);
    offered.title = origin.and_then(|o| o.title.clone());
    offered.output_schema = origin
        .and_then(|o| o.output_schema.as_ref())
        .and_then(|s| s.parsed().as_object().cloned())
        .map(Arc::new);
    let read_only = matches!(tool.side_effect, SideEffectLevel::ReadOnly);
    offered.with_annotations(ToolAnnotations::from_raw(
        None,
        Some(read_only),
        Some(tool.destructive.is_destructive()),
        None,
        None,
    ))
}

pub(super) fn error(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The result as MCP: the blocks as the server sent them when it sent more than text, else a
/// text block per text part (the text alone when the call never reached a tool); structured
/// content when there was any.
pub(super) fn result_of(result: ToolResult) -> CallToolResult {
    let content = match result.content {
        Some(blocks) => serde_json::from_value::<Vec<ContentBlock>>(blocks)
            .unwrap_or_else(|_| vec![ContentBlock::text(result.text)]),
        None if result.parts.is_empty() => vec![ContentBlock::text(result.text)],
        None => result
            .parts
            .into_iter()
            .map(|part| match part {
                ContentPart::Text(text) => ContentBlock::text(text),
                other => ContentBlock::text(other.for_model()),
            })
            .collect(),
    };
    let mut out = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    out.structured_content = result.structured;
    out
}
