//! The handshake's two eras (docs/ARCHITECTURE.md §4.6): `server/discover` (2026-07-28) gets a
//! bounded share of the handshake timeout, then rmcp falls back to `initialize`; which era worked
//! is kept per server ([`EraMemory`]) so that a restart goes straight to it.
//!
//! rmcp's own probe (`ClientLifecycleMode::Auto`) waits a fixed 10 s for `server/discover`
//! before it tries `initialize`: longer than the whole default handshake timeout, so a server
//! that ignores the method it does not know (instead of answering "method not found") never
//! connected. [`DiscoverProbe`] sits under rmcp and answers its `server/discover` itself once
//! the share has passed, with the "method not found" a well-behaved old server would have sent:
//! rmcp then runs `initialize` on the same connection. A late answer to the abandoned
//! `server/discover` is dropped (rmcp would take it for a conflicting handshake answer).
//!
//! Beside `discover.rs`, whose guard turns an answer to `server/discover` that is not a
//! discover result into the same refusal: the probe is about no answer, the guard about a wrong
//! one.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ClientRequest, ErrorCode, ErrorData, JsonRpcError, JsonRpcMessage, JsonRpcResponse, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use super::issues::StdoutIssues;

/// How a server's handshake went the last time it worked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `server/discover` (protocol 2026-07-28 and later).
    Discover,
    /// `initialize` (protocol versions before 2026-07-28).
    Initialize,
}

/// Which era each server's last good handshake used, by server name; shared by every start of
/// one manager (the options it hands each start carry the same memory).
#[derive(Clone, Default)]
pub struct EraMemory(Arc<Mutex<HashMap<String, Era>>>);

impl EraMemory {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Era>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn get(&self, server: &str) -> Option<Era> {
        self.lock().get(server).copied()
    }

    pub fn set(&self, server: &str, era: Era) {
        self.lock().insert(server.to_string(), era);
    }

    /// Forgets a server's era (its handshake in that era failed: it may have changed).
    pub fn forget(&self, server: &str) {
        self.lock().remove(server);
    }
}

impl PartialEq for EraMemory {
    /// The same memory, not equal contents: options are equal when they share one.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for EraMemory {}

impl std::fmt::Debug for EraMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.lock().iter()).finish()
    }
}

/// The share of the handshake timeout `server/discover` gets before `initialize` is tried: a
/// quarter, so that an old server that stays silent is ready well within half its timeout.
pub fn discover_share(handshake_timeout: Duration) -> Duration {
    handshake_timeout / 4
}

/// Where the probe stands.
#[derive(Debug)]
enum Probe {
    /// No `server/discover` sent yet.
    Idle,
    /// `server/discover` `id` sent; given up at `deadline`.
    Waiting {
        id: RequestId,
        deadline: tokio::time::Instant,
    },
    /// Given up on `id` (its late answer is dropped).
    Abandoned { id: RequestId },
    /// Answered: nothing more to do.
    Answered,
}

/// A client transport that gives `server/discover` a bounded share of the handshake; see the
/// module documentation. An answer the reader could not read (`issues` names its request) ends
/// the handshake there, rather than reading as a legacy server's refusal.
pub struct DiscoverProbe<T> {
    inner: T,
    share: Duration,
    probe: Probe,
    issues: Arc<Mutex<StdoutIssues>>,
}

impl<T> DiscoverProbe<T> {
    pub fn new(inner: T, share: Duration, issues: Arc<Mutex<StdoutIssues>>) -> Self {
        DiscoverProbe {
            inner,
            share,
            probe: Probe::Idle,
            issues,
        }
    }

    /// What to do with a message from the server while the probe runs: hand it on, drop it
    /// (`Ok(None)`), or end the handshake.
    fn take(
        &mut self,
        message: RxJsonRpcMessage<RoleClient>,
    ) -> Result<Option<RxJsonRpcMessage<RoleClient>>, EndHandshake> {
        let answered = match &message {
            JsonRpcMessage::Response(JsonRpcResponse { id, .. }) => Some(id),
            JsonRpcMessage::Error(JsonRpcError { id, .. }) => id.as_ref(),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
        };
        match (&self.probe, answered) {
            (Probe::Abandoned { id }, Some(answer)) if answer == id => {
                tracing::debug!(%id, "dropped a late answer to server/discover");
                Ok(None)
            }
            (Probe::Waiting { id, .. }, Some(answer)) if answer == id => {
                let unreadable = matches!(&message, JsonRpcMessage::Error(_))
                    && self
                        .issues
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .is_failed(id);
                self.probe = Probe::Answered;
                if unreadable {
                    Err(EndHandshake)
                } else {
                    Ok(Some(message))
                }
            }
            _ => Ok(Some(message)),
        }
    }
}

/// End the handshake here (rmcp sees the connection close).
struct EndHandshake;

/// What the probe answers for a `server/discover` given up on: what an old server says.
fn gave_up(id: RequestId, share: Duration) -> ServerJsonRpcMessage {
    let message = format!(
        "no answer to server/discover within {} (a bounded share of the handshake): trying initialize",
        crate::text::fmt_duration(share)
    );
    JsonRpcMessage::Error(JsonRpcError::new(
        Some(id),
        ErrorData::new(ErrorCode::METHOD_NOT_FOUND, message, None),
    ))
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for DiscoverProbe<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(request) = &item {
            match (&request.request, &self.probe) {
                (ClientRequest::DiscoverRequest(_), Probe::Idle) => {
                    self.probe = Probe::Waiting {
                        id: request.id.clone(),
                        deadline: tokio::time::Instant::now() + self.share,
                    };
                }
                // rmcp gave up by itself (its own 10 s): the same as ours.
                (ClientRequest::InitializeRequest(_), Probe::Waiting { id, .. }) => {
                    self.probe = Probe::Abandoned { id: id.clone() };
                }
                _ => {}
            }
        }
        self.inner.send(item)
    }

    /// Cancel-safe as the inner transport's `receive` is: the state changes only once a
    /// message (or the deadline) is in hand, and it is then returned.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = match &self.probe {
                Probe::Waiting { id, deadline } => {
                    let (id, deadline) = (id.clone(), *deadline);
                    tokio::select! {
                        message = self.inner.receive() => message?,
                        () = tokio::time::sleep_until(deadline) => {
                            self.probe = Probe::Abandoned { id: id.clone() };
                            return Some(gave_up(id, self.share));
                        }
                    }
                }
                Probe::Idle | Probe::Abandoned { .. } | Probe::Answered => {
                    self.inner.receive().await?
                }
            };
            match self.take(message) {
                Ok(Some(message)) => return Some(message),
                Err(EndHandshake) => return None,
                Ok(None) => {}
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_is_a_quarter_of_the_timeout() {
        assert_eq!(
            discover_share(Duration::from_secs(10)),
            Duration::from_millis(2500)
        );
    }

    #[test]
    fn era_memory_is_shared_by_its_clones_and_compared_by_identity() {
        let memory = EraMemory::default();
        let clone = memory.clone();
        clone.set("s", Era::Initialize);
        assert_eq!(memory.get("s"), Some(Era::Initialize));
        memory.forget("s");
        assert_eq!(clone.get("s"), None);
        assert_eq!(memory, clone);
        assert_ne!(memory, EraMemory::default());
    }
}
