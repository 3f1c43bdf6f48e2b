//! What a hook is told: its event as JSON (a command's stdin, what `mcp_tool` templates read).
//!
//! ```json
//! {"event": "pre_tool_use", "call_id": 3,
//!  "tool": {"name": "mcp__notes__delete_note", "local": false, "server": "notes", "tool": "delete_note",
//!           "side_effect": "mutating", "destructive": true, "trust": "ignore", "provenance": "…",
//!           "warnings": []},
//!  "arguments": {"title": "groceries"}}
//! ```
//!
//! `post_tool_use` adds `status` and `result` (`is_error`, `text`, `structured`); server events
//! have `server` and `report` (a `check --json` server object); `user_prompt` has `prompt`;
//! `turn_end` has `turn`; `session_start` has `servers` (the configured names).

use serde_json::{json, Value};

use crate::approval::{pin_json, PinState};
use crate::config::HookEvent;
use crate::mcp::events::ServerReport;
use crate::runtime::call::CallStatus;
use crate::tool::{ToolDescriptor, ToolResult};

/// What an event is about.
pub(crate) enum Subject<'a> {
    /// A call: before it is decided on (`after` none), or after it ran.
    Call {
        id: u64,
        tool: &'a ToolDescriptor,
        arguments: &'a Value,
        after: Option<(CallStatus, &'a ToolResult)>,
        /// Whether the definition offered is the one approved (`approval/pins.rs`).
        pin: PinState,
    },
    /// A server whose start ended.
    Server(Box<ServerReport>),
    /// The agent's prompt.
    Prompt(&'a str),
    /// The agent's turn that ended (counted from 1).
    Turn(u64),
    /// A runtime that started, with its configured servers.
    Session(Vec<String>),
}

impl Subject<'_> {
    /// The event as JSON.
    pub(super) fn context(&self, event: HookEvent) -> Value {
        let mut context = match self {
            Subject::Call {
                id,
                tool,
                arguments,
                after,
                pin,
            } => {
                let mut tool_value = tool_json(tool);
                tool_value["pin"] = pin_json(tool, Some(pin.clone()));
                let mut v = json!({
                    "call_id": id,
                    "tool": tool_value,
                    "arguments": arguments,
                });
                if let Some((status, result)) = after {
                    v["status"] = json!(status);
                    v["result"] = json!(result);
                }
                v
            }
            Subject::Server(report) => json!({"server": report.name, "report": report}),
            Subject::Prompt(prompt) => json!({"prompt": prompt}),
            Subject::Turn(turn) => json!({"turn": turn}),
            Subject::Session(servers) => json!({"servers": servers}),
        };
        context["event"] = json!(event.as_str());
        context
    }

    /// The call, its tool and the server the event is about, for the hook's run report.
    pub(super) fn identity(&self) -> (Option<u64>, Option<String>, Option<String>) {
        match self {
            Subject::Call { id, tool, .. } => (
                Some(*id),
                Some(tool.name.clone()),
                tool.origin.as_ref().map(|o| o.server.clone()),
            ),
            Subject::Server(report) => (None, None, Some(report.name.clone())),
            Subject::Prompt(_) | Subject::Turn(_) | Subject::Session(_) => (None, None, None),
        }
    }
}

/// A tool as a hook sees it (the fields of the `TOOL` object of `tools --json` that decide).
fn tool_json(tool: &ToolDescriptor) -> Value {
    let origin = tool.origin.as_ref();
    json!({
        "name": tool.name,
        "local": origin.is_none(),
        "server": origin.map(|o| o.server.clone()),
        "tool": origin.map_or_else(|| tool.name.clone(), |o| o.tool.clone()),
        "side_effect": tool.side_effect,
        "destructive": tool.destructive.is_destructive(),
        "trust": origin.map(|o| o.trust.as_str()),
        "provenance": tool.provenance,
        "warnings": tool.flags,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{DestructiveBehavior, SideEffectLevel};

    #[test]
    fn a_call_before_and_after() {
        let tool = ToolDescriptor {
            pin: None,
            name: "bash".into(),
            description: String::new(),
            input_schema: json!({}).into(),
            side_effect: SideEffectLevel::Mutating,
            destructive: DestructiveBehavior::Destructive,
            provenance: "local tool".into(),
            flags: Vec::new(),
            origin: None,
        };
        let arguments = json!({"command": "ls"});
        let before = Subject::Call {
            id: 4,
            tool: &tool,
            arguments: &arguments,
            after: None,
            pin: PinState::Unpinned,
        };
        assert_eq!(
            before.context(HookEvent::PreToolUse),
            json!({"event": "pre_tool_use", "call_id": 4, "arguments": {"command": "ls"},
                   "tool": {"name": "bash", "local": true, "server": null, "tool": "bash",
                            "side_effect": "mutating", "destructive": true, "trust": null,
                            "provenance": "local tool", "warnings": [], "pin": null}})
        );
        assert_eq!(before.identity(), (Some(4), Some("bash".into()), None));
        let result = ToolResult::ok("a\nb");
        let after = Subject::Call {
            id: 4,
            tool: &tool,
            arguments: &arguments,
            after: Some((CallStatus::Ok, &result)),
            pin: PinState::Unpinned,
        };
        let v = after.context(HookEvent::PostToolUse);
        assert_eq!(v["status"], "ok");
        assert_eq!(v["result"], json!({"is_error": false, "text": "a\nb"}));
        assert_eq!(
            Subject::Prompt("hi").context(HookEvent::UserPrompt),
            json!({"event": "user_prompt", "prompt": "hi"})
        );
        assert_eq!(
            Subject::Turn(2).context(HookEvent::TurnEnd),
            json!({"event": "turn_end", "turn": 2})
        );
    }
}
