//! `RuntimeEvent`: the one stream every driver (TUI, headless commands) consumes.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::approval::ApprovalRequest;
use crate::mcp::events::McpEvent;
use crate::mcp::notify::{McpNotification, McpNotificationListener};
use crate::tool::ToolResult;

use super::executor::CallStatus;

/// Everything that happens in a runtime, in the order it happened.
#[derive(Debug)]
pub enum RuntimeEvent {
    /// Start phases, reports, stderr lines and closes of MCP servers.
    Mcp(McpEvent),
    /// A notification a server pushed (in that server's wire order).
    Notification(McpNotification),
    /// A call entered the gate.
    CallStarted {
        id: u64,
        tool: String,
        arguments: Value,
    },
    /// A call's status changed (awaiting approval, running).
    CallStatus { id: u64, status: CallStatus },
    /// A call ended: ok, error, denied or refused.
    CallFinished {
        id: u64,
        status: CallStatus,
        result: ToolResult,
        elapsed_ms: u64,
    },
    /// A call waits for the operator: answer it through the request's `respond`.
    ApprovalRequested(ApprovalRequest),
}

/// The receiving end of a runtime's events.
pub type EventStream = mpsc::UnboundedReceiver<RuntimeEvent>;

/// The sending end, shared by the runtime's parts.
#[derive(Clone)]
pub(crate) struct EventBus(mpsc::UnboundedSender<RuntimeEvent>);

impl EventBus {
    pub(crate) fn new() -> (EventBus, EventStream) {
        let (tx, rx) = mpsc::unbounded_channel();
        (EventBus(tx), rx)
    }

    /// Sends an event; a driver that stopped listening loses nothing it wanted.
    pub(crate) fn send(&self, event: RuntimeEvent) {
        let _ = self.0.send(event);
    }

    /// The bus as an MCP event sink.
    pub(crate) fn mcp_sink(&self) -> crate::mcp::events::EventSink {
        let bus = self.clone();
        Arc::new(move |event| bus.send(RuntimeEvent::Mcp(event)))
    }
}

impl McpNotificationListener for EventBus {
    fn on_notification(&self, notification: &McpNotification) {
        self.send(RuntimeEvent::Notification(notification.clone()));
    }
}
