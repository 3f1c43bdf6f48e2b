//! `RuntimeEvent`: the one stream every driver (TUI, headless commands) consumes.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::mpsc;

use crate::approval::ApprovalRequest;
use crate::mcp::events::McpEvent;
use crate::mcp::notify::{McpNotification, McpNotificationListener};
use crate::mcp::rewake::ExternalEvent;
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
    /// A server notification matched a `notifications.rewake` rule: the external event it
    /// makes, for the driver (it follows that notification's own `Notification` event).
    Rewake(ExternalEvent),
}

/// The receiving end of a runtime's events.
pub type EventStream = mpsc::UnboundedReceiver<RuntimeEvent>;

/// The sending end, shared by the runtime's parts. Closing it (once, from `AgentRuntime::close`)
/// ends the stream for the driver even while parts of the runtime still hold clones.
#[derive(Clone)]
pub(crate) struct EventBus(Arc<Mutex<Option<mpsc::UnboundedSender<RuntimeEvent>>>>);

impl EventBus {
    pub(crate) fn new() -> (EventBus, EventStream) {
        let (tx, rx) = mpsc::unbounded_channel();
        (EventBus(Arc::new(Mutex::new(Some(tx)))), rx)
    }

    /// Sends an event; after `close`, or once the driver stopped listening, it goes nowhere.
    pub(crate) fn send(&self, event: RuntimeEvent) {
        if let Some(tx) = self.0.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            let _ = tx.send(event);
        }
    }

    /// Ends the stream: the driver's `recv` returns `None` once it has read what was sent.
    pub(crate) fn close(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
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
