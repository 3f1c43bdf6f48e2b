//! The inbound notification SPI (seed §7.2): what a server pushes, delivered in wire order.
//!
//! A neutral listener rather than a direct wiring to any one consumer, because logs, progress,
//! list changes and rewake rules all share the same frame shape but flow to different places.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

/// One server notification, as it arrived.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpNotification {
    /// The server that sent it.
    pub server: String,
    /// The JSON-RPC method (`notifications/message`, `notifications/progress`, …).
    pub method: String,
    /// Its params (`null` when absent).
    pub params: Value,
}

/// Receives every notification of every server, in the order each server sent them.
///
/// Called on the transport's reader task: implementations must not block (hand off to a channel).
pub trait McpNotificationListener: Send + Sync {
    fn on_notification(&self, notification: &McpNotification);
}

/// The tap a transport delivers to: a listener, or nothing.
#[derive(Clone, Default)]
pub struct NotificationTap(Option<Arc<dyn McpNotificationListener>>);

impl NotificationTap {
    pub fn new(listener: Arc<dyn McpNotificationListener>) -> Self {
        NotificationTap(Some(listener))
    }

    pub fn none() -> Self {
        NotificationTap(None)
    }

    pub fn deliver(&self, notification: &McpNotification) {
        if let Some(listener) = &self.0 {
            listener.on_notification(notification);
        }
    }
}

impl std::fmt::Debug for NotificationTap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "NotificationTap(listener)"
        } else {
            "NotificationTap(none)"
        })
    }
}
