//! The inbound notification SPI (seed §7.2): what a server pushes, delivered in wire order.
//!
//! A neutral listener rather than a direct wiring to any one consumer, because logs, progress,
//! list changes and rewake rules all share the same frame shape but flow to different places.
//! [`McpNotification::notice`] reads the kinds the console knows; the rest stay raw.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
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

/// The severity of a server log message (MCP `LoggingLevel`, syslog's eight levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The protocol's name for the level (`warning`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// rmcp's level as ours.
    #[allow(deprecated)] // SEP-2577 deprecates logging; the servers and hosts of today use it.
    pub fn from_rmcp(level: rmcp::model::LoggingLevel) -> LogLevel {
        use rmcp::model::LoggingLevel as L;
        match level {
            L::Debug => LogLevel::Debug,
            L::Info => LogLevel::Info,
            L::Notice => LogLevel::Notice,
            L::Warning => LogLevel::Warning,
            L::Error => LogLevel::Error,
            L::Critical => LogLevel::Critical,
            L::Alert => LogLevel::Alert,
            L::Emergency => LogLevel::Emergency,
        }
    }

    /// Our level as rmcp's.
    #[allow(deprecated)]
    pub fn to_rmcp(self) -> rmcp::model::LoggingLevel {
        use rmcp::model::LoggingLevel as L;
        match self {
            LogLevel::Debug => L::Debug,
            LogLevel::Info => L::Info,
            LogLevel::Notice => L::Notice,
            LogLevel::Warning => L::Warning,
            LogLevel::Error => L::Error,
            LogLevel::Critical => L::Critical,
            LogLevel::Alert => L::Alert,
            LogLevel::Emergency => L::Emergency,
        }
    }

    /// The level named `name` (the protocol's lowercase names).
    pub fn parse(name: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

/// Which of a server's lists changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListKind {
    Tools,
    Resources,
    Prompts,
}

impl ListKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Resources => "resources",
            ListKind::Prompts => "prompts",
        }
    }
}

/// What a notification says, for the kinds the console acts on.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// `notifications/message`: a log message.
    Log {
        level: LogLevel,
        logger: Option<String>,
        data: Value,
    },
    /// `notifications/progress` for the request that carried `token`.
    Progress {
        token: Value,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// `notifications/{tools,resources,prompts}/list_changed`.
    ListChanged(ListKind),
    /// `notifications/resources/updated`.
    ResourceUpdated { uri: String },
    /// Anything else (cancellations, custom methods, a known method with unreadable params).
    Other,
}

impl McpNotification {
    /// Reads the notification; unknown methods and malformed params give [`Notice::Other`].
    pub fn notice(&self) -> Notice {
        let p = &self.params;
        let text = |key: &str| p.get(key).and_then(Value::as_str).map(str::to_string);
        match self.method.as_str() {
            "notifications/message" => {
                match p
                    .get("level")
                    .and_then(Value::as_str)
                    .and_then(LogLevel::parse)
                {
                    Some(level) => Notice::Log {
                        level,
                        logger: text("logger"),
                        data: p.get("data").cloned().unwrap_or(Value::Null),
                    },
                    None => Notice::Other,
                }
            }
            "notifications/progress" => {
                match (
                    p.get("progressToken"),
                    p.get("progress").and_then(Value::as_f64),
                ) {
                    (Some(token), Some(progress)) => Notice::Progress {
                        token: token.clone(),
                        progress,
                        total: p.get("total").and_then(Value::as_f64),
                        message: text("message"),
                    },
                    _ => Notice::Other,
                }
            }
            "notifications/tools/list_changed" => Notice::ListChanged(ListKind::Tools),
            "notifications/resources/list_changed" => Notice::ListChanged(ListKind::Resources),
            "notifications/prompts/list_changed" => Notice::ListChanged(ListKind::Prompts),
            "notifications/resources/updated" => match text("uri") {
                Some(uri) => Notice::ResourceUpdated { uri },
                None => Notice::Other,
            },
            _ => Notice::Other,
        }
    }
}

/// A future a listener returns from [`McpNotificationListener::room`].
pub type RoomFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Receives every notification of every server, in the order each server sent them.
///
/// Called on the transport's reader task: implementations must not block (hand off to a channel).
pub trait McpNotificationListener: Send + Sync {
    fn on_notification(&self, notification: &McpNotification);

    /// Resolves when the listener can take one more notification without its queue growing
    /// past its bound. The reader awaits it before each delivery, so a listener whose consumer
    /// falls behind slows the server down (its stdout pipe fills) instead of losing anything.
    /// It must resolve eventually even if the consumer never reads again. The default has
    /// room at once.
    fn room(&self) -> RoomFuture<'_> {
        Box::pin(std::future::ready(()))
    }
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

    /// Waits until the listener has room for one more notification (see
    /// [`McpNotificationListener::room`]).
    pub async fn room(&self) {
        if let Some(listener) = &self.0 {
            listener.room().await;
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn n(method: &str, params: Value) -> McpNotification {
        McpNotification {
            server: "s".into(),
            method: method.into(),
            params,
        }
    }

    #[test]
    fn reads_the_known_kinds() {
        assert_eq!(
            n(
                "notifications/message",
                json!({"level": "warning", "logger": "db", "data": {"n": 1}})
            )
            .notice(),
            Notice::Log {
                level: LogLevel::Warning,
                logger: Some("db".into()),
                data: json!({"n": 1})
            }
        );
        assert_eq!(
            n(
                "notifications/progress",
                json!({"progressToken": 3, "progress": 1, "total": 4, "message": "m"})
            )
            .notice(),
            Notice::Progress {
                token: json!(3),
                progress: 1.0,
                total: Some(4.0),
                message: Some("m".into())
            }
        );
        assert_eq!(
            n("notifications/prompts/list_changed", Value::Null).notice(),
            Notice::ListChanged(ListKind::Prompts)
        );
        assert_eq!(
            n(
                "notifications/resources/updated",
                json!({"uri": "file:///a"})
            )
            .notice(),
            Notice::ResourceUpdated {
                uri: "file:///a".into()
            }
        );
    }

    #[test]
    fn malformed_or_unknown_is_other() {
        assert_eq!(
            n("notifications/message", json!({"level": "loud"})).notice(),
            Notice::Other
        );
        assert_eq!(
            n("notifications/progress", json!({"progress": 1})).notice(),
            Notice::Other
        );
        assert_eq!(
            n("notifications/cancelled", json!({})).notice(),
            Notice::Other
        );
        assert_eq!(n("x/custom", Value::Null).notice(), Notice::Other);
    }

    #[test]
    fn levels_round_trip() {
        for level in LogLevel::ALL {
            assert_eq!(LogLevel::parse(level.as_str()), Some(level));
        }
        assert!(LogLevel::Debug < LogLevel::Emergency);
    }
}
