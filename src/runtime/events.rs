//! `RuntimeEvent`: the one stream every driver (TUI, headless commands) consumes, and how what
//! the MCP layer reports becomes one.
//!
//! The queue itself (bounded, ordered), and how the MCP layer's sink and notification tap feed
//! it, are in `bus.rs`.

use serde_json::Value;

use super::call::CallStatus;
use super::hooks::report::HookRun;
use super::turn::ToolsDiff;
use crate::approval::{AnsweredBy, ApprovalDecision, ApprovalRequest, CallOrigin};
use crate::mcp::events::McpEvent;
use crate::mcp::notify::{ListKind, LogLevel, McpNotification, Notice};
use crate::mcp::rewake::ExternalEvent;
use crate::tool::ToolResult;

/// Everything that happens in a runtime, in the order it happened.
#[derive(Debug)]
pub enum RuntimeEvent {
    /// Start phases, reports, stderr lines and closes of MCP servers.
    Mcp(McpEvent),
    /// A notification a server pushed that has no typed event below (a stray progress update,
    /// a cancellation, a custom method), in that server's wire order.
    Notification(McpNotification),
    /// A call entered the gate.
    CallStarted {
        id: u64,
        tool: String,
        arguments: Value,
        /// Who asked for it (the operator, or the agent and its stated reason).
        origin: CallOrigin,
    },
    /// A call's status changed (awaiting approval, running).
    CallStatus { id: u64, status: CallStatus },
    /// A call ended: ok, error, denied, refused or cancelled.
    CallFinished {
        id: u64,
        status: CallStatus,
        result: ToolResult,
        elapsed_ms: u64,
    },
    /// A call waits for the operator: answer it through the request's `respond`.
    ApprovalRequested(ApprovalRequest),
    /// Call `id`'s approval request was answered: the decision and how it was given (by the
    /// operator, by `--yes`, refused for want of a terminal, or dropped unanswered).
    ApprovalAnswered {
        id: u64,
        decision: ApprovalDecision,
        by: AnsweredBy,
    },
    /// Call `id` runs without asking because a rule, a hook or a session approval lets it
    /// through (the policy's everyday read-only pass is not said): `why` names it.
    CallAllowed { id: u64, why: String },
    /// A host of the gateway connected (`connected`) or went away: its name and version as it
    /// named itself in its handshake.
    HostSession {
        name: String,
        version: String,
        connected: bool,
    },
    /// A server notification matched a `notifications.rewake` rule: the external event it
    /// makes, for the driver (it follows that notification's own `Notification` event).
    Rewake(ExternalEvent),
    /// A log message a server sent (`notifications/message`; its level is set per server with
    /// `AgentRuntime::set_log_level`). `data` is the server's JSON, unsanitized.
    ServerLog {
        server: String,
        level: LogLevel,
        logger: Option<String>,
        data: Value,
    },
    /// How far running call `id` has got (its server's `notifications/progress` for the call's
    /// progress token); each one also pushed the call's idle deadline back.
    CallProgress {
        id: u64,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// A server announced that one of its lists changed. For `tools`, its tools are stale
    /// and are listed again at the next `AgentRuntime::turn_boundary`.
    ListChanged { server: String, list: ListKind },
    /// A server announced that a resource changed (`notifications/resources/updated`).
    ResourceUpdated { server: String, uri: String },
    /// A stale server's tools were listed again at a turn boundary: what was added, removed
    /// or changed, and which remembered approvals were forgotten.
    ToolsChanged(ToolsDiff),
    /// A hook ran: on which event, its action, how long it took, and its decision or the
    /// warning that made it count as silent.
    HookRan(HookRun),
    /// `count` events were dropped at this place in the stream because the driver had stopped
    /// reading (the queue is bounded); everything before and after is intact.
    EventsDropped { count: u64 },
}

/// A server's log message as one line of text: `logger: data`, the data unquoted when it is a
/// string. Not sanitized: whoever shows it does that.
pub fn log_text(logger: Option<&str>, data: &Value) -> String {
    let data = match data {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match logger {
        Some(logger) => format!("{logger}: {data}"),
        None => data,
    }
}

impl RuntimeEvent {
    /// The typed event for a server notification (see [`Notice`]).
    pub fn from_notification(notification: &McpNotification) -> RuntimeEvent {
        let server = notification.server.clone();
        match notification.notice() {
            Notice::Log {
                level,
                logger,
                data,
            } => RuntimeEvent::ServerLog {
                server,
                level,
                logger,
                data,
            },
            Notice::ListChanged(list) => RuntimeEvent::ListChanged { server, list },
            Notice::ResourceUpdated { uri } => RuntimeEvent::ResourceUpdated { server, uri },
            // Progress reaches here only when no pending call carried its token.
            Notice::Progress { .. } | Notice::Other => {
                RuntimeEvent::Notification(notification.clone())
            }
        }
    }
}
