//! The JSON shapes of the runtime's events and tools (docs/commands.md "JSON shapes"): what
//! `watch --json`, `call --events` and `run --json` print, and what the daemon sends its
//! consoles (docs/daemon.md). One place, below every driver that writes them.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{json, Value};

use super::{HookOutcome, HookRun, RuntimeEvent, ToolChange, ToolsDiff};
use crate::approval::{pin_json, ApprovalGate};
use crate::mcp::elicitation::ElicitationMode;
use crate::mcp::events::McpEvent;
use crate::tool::registry::ToolSnapshot;
use crate::tool::ToolDescriptor;

/// The `TOOL` object of `check --json` and `tools --json`, written straight from the
/// descriptor (its fields in alphabetical order), with its pin state when the gate is at hand.
pub struct ToolJson<'a>(pub &'a ToolDescriptor, pub Option<&'a ApprovalGate>);

impl Serialize for ToolJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tool = self.0;
        let origin = tool.origin.as_ref();
        let mut map = serializer.serialize_map(Some(11))?;
        map.serialize_entry("annotations", &origin.and_then(|o| o.annotations.as_ref()))?;
        map.serialize_entry("destructive", &tool.destructive.is_destructive())?;
        map.serialize_entry("local", &origin.is_none())?;
        map.serialize_entry("name", &tool.name)?;
        map.serialize_entry("pin", &pin_json(tool, self.1.map(|g| g.pin_state(tool))))?;
        map.serialize_entry("provenance", &tool.provenance)?;
        map.serialize_entry("server", &origin.map(|o| &o.server))?;
        map.serialize_entry("side_effect", &tool.side_effect)?;
        map.serialize_entry("tool", origin.map_or(&tool.name, |o| &o.tool))?;
        map.serialize_entry("trust", &origin.map(|o| o.trust.as_str()))?;
        map.serialize_entry("warnings", &tool.flags)?;
        map.end()
    }
}

/// The `TOOL` object as a value, for shapes that embed one.
pub fn tool_json(tool: &ToolDescriptor) -> Value {
    serde_json::to_value(ToolJson(tool, None)).unwrap_or(Value::Null)
}

/// A snapshot's tools as a JSON array of `TOOL` objects, written one at a time.
pub struct ToolsJson<'a>(pub &'a ToolSnapshot, pub Option<&'a ApprovalGate>);

impl Serialize for ToolsJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.values().map(|t| ToolJson(t.descriptor(), self.1)))
    }
}

/// The JSON line of an event: `{"type": …, …}`.
pub fn event_json(event: &RuntimeEvent) -> Value {
    match event {
        RuntimeEvent::Mcp(McpEvent::PhaseStarted {
            server,
            phase,
            elapsed,
        }) => json!({
            "type": "phase",
            "server": server,
            "phase": phase,
            "elapsed_ms": crate::text::millis(*elapsed),
        }),
        RuntimeEvent::Mcp(McpEvent::ServerStarted(report)) => json!({
            "type": "server_started",
            "server": report.name,
            "report": report,
        }),
        RuntimeEvent::Mcp(McpEvent::Stderr { server, line }) => {
            json!({"type": "stderr", "server": server, "line": line})
        }
        RuntimeEvent::Mcp(McpEvent::ServerClosed { server }) => {
            json!({"type": "server_closed", "server": server})
        }
        RuntimeEvent::Mcp(McpEvent::ServerRequest {
            server,
            method,
            outcome,
            detail,
        }) => json!({
            "type": "server_request",
            "server": server,
            "method": method,
            "outcome": outcome,
            "detail": detail,
        }),
        RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request)) => {
            let mut value = json!({
                "type": "elicitation_requested",
                "id": request.id,
                "server": request.server,
                "message": request.message,
            });
            match &request.mode {
                ElicitationMode::Form { schema, .. } => {
                    value["mode"] = json!("form");
                    value["schema"] = schema.clone();
                }
                ElicitationMode::Url {
                    url,
                    elicitation_id,
                } => {
                    value["mode"] = json!("url");
                    value["url"] = json!(url);
                    value["elicitation_id"] = json!(elicitation_id);
                }
            }
            value
        }
        RuntimeEvent::Mcp(McpEvent::SamplingRequested(request)) => json!({
            "type": "sampling_requested",
            "id": request.id,
            "server": request.server,
            "request": request.ask,
        }),
        RuntimeEvent::Notification(n) => json!({
            "type": "notification",
            "server": n.server,
            "method": n.method,
            "params": n.params,
        }),
        RuntimeEvent::CallStarted {
            id,
            tool,
            arguments,
            origin,
        } => json!({
            "type": "call_started",
            "id": id,
            "tool": tool,
            "arguments": arguments,
            "origin": origin,
        }),
        RuntimeEvent::CallStatus { id, status } => {
            json!({"type": "call_status", "id": id, "status": status})
        }
        RuntimeEvent::CallFinished {
            id,
            status,
            result,
            elapsed_ms,
        } => json!({
            "type": "call_finished",
            "id": id,
            "status": status,
            "result": result,
            "elapsed_ms": elapsed_ms,
        }),
        RuntimeEvent::ApprovalRequested(request) => json!({
            "type": "approval_requested",
            "id": request.id,
            "tool": tool_json(&request.tool),
            "arguments": request.arguments,
            "why": request.why,
            "origin": request.origin,
            "change": request.change,
        }),
        RuntimeEvent::ApprovalAnswered { id, decision, by } => json!({
            "type": "approval_answered",
            "id": id,
            "decision": decision.as_str(),
            "by": by.as_str(),
        }),
        RuntimeEvent::CallAllowed { id, why } => json!({
            "type": "call_allowed",
            "id": id,
            "why": why,
        }),
        RuntimeEvent::HostSession {
            name,
            version,
            connected,
        } => json!({
            "type": if *connected { "host_connected" } else { "host_left" },
            "name": name,
            "version": version,
        }),
        RuntimeEvent::ServerLog {
            server,
            level,
            logger,
            data,
        } => json!({
            "type": "server_log",
            "server": server,
            "level": level,
            "logger": logger,
            "data": data,
        }),
        RuntimeEvent::CallProgress {
            id,
            progress,
            total,
            message,
        } => json!({
            "type": "call_progress",
            "id": id,
            "progress": progress,
            "total": total,
            "message": message,
        }),
        RuntimeEvent::ListChanged { server, list } => {
            json!({"type": "list_changed", "server": server, "list": list})
        }
        RuntimeEvent::ResourceUpdated { server, uri } => {
            json!({"type": "resource_updated", "server": server, "uri": uri})
        }
        RuntimeEvent::ToolsChanged(diff) => diff_json(diff),
        RuntimeEvent::HookRan(run) => hook_json(run),
        RuntimeEvent::EventsDropped { count } => json!({"type": "events_dropped", "count": count}),
        RuntimeEvent::Mcp(McpEvent::ServerDown {
            server,
            exit,
            reason,
            uptime,
            crashes,
            restart,
            ..
        }) => json!({
            "type": "server_down",
            "server": server,
            "exit_status": exit,
            "reason": reason,
            "uptime_ms": crate::text::millis(*uptime),
            "crashes": crashes,
            "restart": restart.as_str(),
        }),
        RuntimeEvent::Mcp(McpEvent::RestartScheduled {
            server,
            attempt,
            delay,
            crashes,
        }) => json!({
            "type": "restart_scheduled",
            "server": server,
            "attempt": attempt,
            "delay_ms": crate::text::millis(*delay),
            "crashes": crashes,
        }),
        RuntimeEvent::Mcp(McpEvent::GaveUp { server, crashes }) => {
            json!({"type": "gave_up", "server": server, "crashes": crashes})
        }
        RuntimeEvent::Rewake(e) => json!({
            "type": "rewake",
            "event": e.event,
            "rule": e.rule,
            "server": e.server,
            "method": e.method,
            "params": e.params,
        }),
    }
}

pub(crate) fn hook_json(run: &HookRun) -> Value {
    let (decision, reason, warning) = match &run.outcome {
        HookOutcome::Decided { decision, reason } => (Some(*decision), reason.clone(), None),
        HookOutcome::Ran => (None, None, None),
        HookOutcome::Warning(why) => (None, None, Some(why.clone())),
    };
    json!({
        "type": "hook",
        "hook": run.hook,
        "event": run.event,
        "action": run.action,
        "call_id": run.call,
        "tool": run.tool,
        "server": run.server,
        "elapsed_ms": crate::text::millis(run.elapsed),
        "decision": decision,
        "reason": reason,
        "warning": warning,
    })
}

pub(crate) fn diff_json(diff: &ToolsDiff) -> Value {
    let change = |c: &ToolChange| {
        json!({
            "name": c.after.name,
            "changes": c.changes,
            "before": tool_json(&c.before),
            "after": tool_json(&c.after),
        })
    };
    json!({
        "type": "tools_changed",
        "server": diff.server,
        "added": diff.added.iter().map(tool_json).collect::<Vec<_>>(),
        "removed": diff.removed.iter().map(tool_json).collect::<Vec<_>>(),
        "changed": diff.changed.iter().map(change).collect::<Vec<_>>(),
        "revoked": diff.revoked,
        "refused": diff.refused,
        "error": diff.error,
    })
}
