//! `DiscoverGuard<T>`: makes a server that answers `server/discover` with something that is not
//! a discover result look like one that does not know the method.
//!
//! rmcp's auto lifecycle falls back to `initialize` only on a JSON-RPC error; a server (or a
//! test double) that answers every unknown method with an empty result (`{}`) would otherwise
//! fail the handshake as "answered with something else", though `initialize` works. That
//! answer becomes a method-not-found error here, so the fallback happens, over every
//! transport alike.

use std::future::Future;

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, JsonRpcError, JsonRpcMessage,
    JsonRpcVersion2_0, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// What the server is told it "said" instead.
pub const NOT_A_DISCOVER_RESULT: &str =
    "server/discover was answered with something that is not a discover result; falling back to initialize";

/// Wraps a client transport; see the module doc.
pub struct DiscoverGuard<T> {
    inner: T,
    /// The id of the `server/discover` request not answered yet.
    discover: Option<RequestId>,
}

impl<T> DiscoverGuard<T> {
    pub fn new(inner: T) -> Self {
        DiscoverGuard {
            inner,
            discover: None,
        }
    }

    /// `message`, or the error it stands for when it answers the pending discover request
    /// with something that is not a discover result.
    fn screen(&mut self, message: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
        let Some(pending) = &self.discover else {
            return message;
        };
        match message {
            JsonRpcMessage::Response(response) if &response.id == pending => {
                self.discover = None;
                match response.result {
                    ServerResult::DiscoverResult(_) => JsonRpcMessage::Response(response),
                    _ => {
                        tracing::info!("{NOT_A_DISCOVER_RESULT}");
                        JsonRpcMessage::Error(JsonRpcError {
                            jsonrpc: JsonRpcVersion2_0,
                            id: Some(response.id),
                            error: ErrorData::new(
                                ErrorCode::METHOD_NOT_FOUND,
                                NOT_A_DISCOVER_RESULT,
                                None,
                            ),
                        })
                    }
                }
            }
            JsonRpcMessage::Error(error) if error.id.as_ref() == Some(pending) => {
                self.discover = None;
                JsonRpcMessage::Error(error)
            }
            other => other,
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for DiscoverGuard<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let ClientJsonRpcMessage::Request(request) = &item {
            if matches!(request.request, ClientRequest::DiscoverRequest(_)) {
                self.discover = Some(request.id.clone());
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        Some(self.screen(message))
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard_expecting(id: i64) -> DiscoverGuard<()> {
        DiscoverGuard {
            inner: (),
            discover: Some(RequestId::Number(id)),
        }
    }

    fn answer(value: serde_json::Value) -> ServerJsonRpcMessage {
        serde_json::from_value(value).expect("a server message")
    }

    #[test]
    fn an_empty_result_to_discover_becomes_method_not_found() {
        let mut guard = guard_expecting(0);
        let out = guard.screen(answer(
            serde_json::json!({"jsonrpc": "2.0", "id": 0, "result": {}}),
        ));
        let JsonRpcMessage::Error(error) = out else {
            panic!("not turned into an error: {out:?}");
        };
        assert_eq!(error.id, Some(RequestId::Number(0)));
        assert_eq!(error.error.code, ErrorCode::METHOD_NOT_FOUND);
        // Only that answer: the next response passes untouched.
        let next = guard.screen(answer(
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        ));
        assert!(matches!(next, JsonRpcMessage::Response(_)), "{next:?}");
    }

    #[test]
    fn other_ids_and_real_errors_pass_untouched() {
        let mut guard = guard_expecting(5);
        let other = guard.screen(answer(
            serde_json::json!({"jsonrpc": "2.0", "id": 4, "result": {}}),
        ));
        assert!(matches!(other, JsonRpcMessage::Response(_)), "{other:?}");
        let error = guard.screen(answer(serde_json::json!({
            "jsonrpc": "2.0", "id": 5, "error": {"code": -32601, "message": "nope"}
        })));
        let JsonRpcMessage::Error(error) = error else {
            panic!("{error:?}");
        };
        assert_eq!(error.error.message, "nope");
        assert!(guard.discover.is_none());
    }
}
