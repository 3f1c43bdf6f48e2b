//! `Ended<T>`: a client transport that says when its connection ended, so the supervisor can
//! wait for it instead of polling. rmcp only exposes a closed connection as a flag
//! (`Peer::is_transport_closed`); its service loop ends when the transport's input ends
//! (stdio: the process exited or closed stdout; SSE: the stream ended) and then closes the
//! transport, and both are seen here.

use std::future::Future;

use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio_util::sync::CancellationToken;

/// Wraps a transport; `ended` is cancelled once its input ends or it is closed.
pub struct Ended<T> {
    inner: T,
    ended: CancellationToken,
}

impl<T> Ended<T> {
    pub fn new(inner: T, ended: CancellationToken) -> Self {
        Ended { inner, ended }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Ended<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if message.is_none() {
            self.ended.cancel();
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.ended.cancel();
        self.inner.close()
    }
}
