//! Wire-order notification fan-out (docs/ARCHITECTURE.md §4.4): every notification a server sends
//! goes to the tap as the transport receives it, before rmcp hands it to a handler task of its own.
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
    /// A message received but not yet handed on: rmcp polls `receive` inside a `select!` and
    /// may drop it while the tap has no room; the message waits here for the next call.
    pending: Option<RxJsonRpcMessage<RoleClient>>,
}

impl<T> Tapped<T> {
    pub fn new(inner: T, server: &str, tap: NotificationTap) -> Self {
        Tapped {
            inner,
            server: server.to_string(),
            tap,
            pending: None,
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

    /// Cancel-safe: a receive dropped while waiting for the tap's room loses nothing, and the
    /// tap gets each notification once (it is handed over only after the wait).
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.pending.is_none() {
            self.pending = Some(self.inner.receive().await?);
        }
        if let Some(message) = &self.pending {
            deliver(&self.tap, &self.server, message).await;
        }
        self.pending.take()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::*;
    use crate::mcp::notify::{McpNotificationListener, RoomFuture};

    /// Hands out the messages it was given, then ends.
    struct Script(VecDeque<RxJsonRpcMessage<RoleClient>>);

    impl Transport<RoleClient> for Script {
        type Error = std::io::Error;
        fn send(
            &mut self,
            _item: TxJsonRpcMessage<RoleClient>,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            std::future::ready(Ok(()))
        }
        async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
            self.0.pop_front()
        }
        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    /// Has no room until `open` is set; counts what it is given.
    #[derive(Default)]
    struct Gate {
        open: AtomicBool,
        got: Mutex<Vec<String>>,
    }

    impl McpNotificationListener for Gate {
        fn on_notification(&self, n: &McpNotification) {
            self.got.lock().unwrap().push(n.method.clone());
        }
        fn room(&self) -> RoomFuture<'_> {
            Box::pin(async {
                while !self.open.load(Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
        }
    }

    #[tokio::test]
    async fn a_receive_dropped_while_the_tap_is_full_loses_nothing() {
        let line = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
        let message: RxJsonRpcMessage<RoleClient> = serde_json::from_str(line).unwrap();
        let gate = Arc::new(Gate::default());
        let tap = NotificationTap::new(gate.clone());
        let mut tapped = Tapped::new(Script(VecDeque::from([message])), "s", tap);
        // rmcp's select! drops the receive while the tap has no room ...
        let first = tokio::time::timeout(Duration::from_millis(50), tapped.receive()).await;
        assert!(first.is_err());
        assert!(gate.got.lock().unwrap().is_empty());
        // ... and the next receive still hands the message over, to rmcp and to the tap once.
        gate.open.store(true, Ordering::SeqCst);
        assert!(tapped.receive().await.is_some());
        assert_eq!(
            *gate.got.lock().unwrap(),
            vec!["notifications/tools/list_changed"]
        );
        assert!(tapped.receive().await.is_none());
    }
}
