//! The second reference of the agent loop: the same turns made through the product's own two
//! clients and nothing else. The model request is `HttpModelClient::complete` on a
//! `History` the loop appends to, the tool call the registered tool's `execute` (the
//! `McpTool`: rmcp, the line transport, the pipe), with no turn boundary, gate, ledger, events,
//! hooks or transcript. What `Conversation::prompt` costs beyond it is the loop's own cost, the
//! row the agent's target is about; the bare loop of hand-written I/O also holds the clients'
//! cost (the `call/demo` section's gap), so it stays beside it as the second reference.

use std::sync::Arc;

use aimon_console::agent::turn::{History, Item, ToolList};
use aimon_console::agent::{HttpModelClient, ModelClient};
use aimon_console::tool::{Tool, ToolContext, ToolInput};
use serde_json::Value;

use crate::agent::{choice_in, opening, SYSTEM, TURNS};

/// One conversation of [`TURNS`] turns: the request made from the history, the answer's
/// first tool call made through the tool, both messages appended.
pub async fn conversation(client: &HttpModelClient, tool: &Arc<dyn Tool>, tools: &ToolList) {
    let mut history = History::new(Some(SYSTEM.into()), opening());
    for turn in 1..=TURNS {
        let reply = match client
            .complete(&history, tools, choice_in(turn), &|_| {})
            .await
        {
            Ok(r) => r,
            Err(e) => panic!("clients loop: model: {e}"),
        };
        let call = reply.tool_calls.first().cloned();
        history.push(Item::assistant(
            reply.text,
            reply.reasoning,
            reply.tool_calls,
        ));
        if turn == TURNS {
            break;
        }
        let Some(call) = call else {
            panic!("clients loop: turn {turn} made no call");
        };
        let arguments: Value = match serde_json::from_str(&call.arguments) {
            Ok(v) => v,
            Err(e) => panic!("clients loop: arguments: {e}"),
        };
        let input = match ToolInput::from_value(arguments) {
            Ok(i) => i,
            Err(e) => panic!("clients loop: arguments: {e}"),
        };
        let result = tool.execute(input, ToolContext::default()).await;
        assert!(!result.is_error, "clients loop: {}", result.text);
        history.push(Item::ToolResult {
            call_id: call.id,
            text: result.text,
        });
    }
}
