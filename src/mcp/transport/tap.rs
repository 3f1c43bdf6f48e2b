//! Wire-order notification fan-out (DESIGN §4.4): every notification a server sends goes to the
//! tap as the transport receives it, before rmcp hands it to a handler task of its own.
//!
//! The stdio framing calls [`deliver`] from its reader; [`Tapped`] wraps any other transport
//! (Streamable HTTP, legacy SSE) so that they all feed the same tap the same way.

use std::future::Future;

use rmcp::model::ServerJsonRpcMessage;
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;

use crate::mcp::notify::{McpNotification, NotificationTap};

/// Hands `message` to the tap if it is a notification, once the tap has room for it (so a
/// consumer that falls behind slows the reader down rather than growing a queue).
pub async fn deliver(tap: &NotificationTap, server: &str, message: &ServerJsonRpcMessage) {
    let rmcp::model::JsonRpcMessage::Notification(n) = message else {
        return;
    };
    let Ok(Value::Object(mut map)) = serde_json::to_value(n) else {
        return;
    };
    let method = match map.remove("method") {
        Some(Value::String(m)) => m,
        _ => return,
    };
    let params = map.remove("params").unwrap_or(Value::Null);
    tap.room().await;
    tap.deliver(&McpNotification {
        server: server.to_string(),
        method,
        params,
    });
}

/// A client transport whose inbound notifications also go to a tap, in wire order.
pub struct Tapped<T> {
    inner: T,
    server: String,
    tap: NotificationTap,
}

impl<T> Tapped<T> {
    pub fn new(inner: T, server: &str, tap: NotificationTap) -> Self {
        Tapped {
            inner,
            server: server.to_string(),
            tap,
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Tapped<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        deliver(&self.tap, &self.server, &message).await;
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
