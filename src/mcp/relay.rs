//! Which gateway host a server's own request goes to, and handing it there: while a host's call runs on a server, a
//! `sampling/createMessage` or `elicitation/create` that server sends is most likely that call's,
//! and goes to that host when it declared the capability. The face ([`super::face`]) enters each
//! host call here; the client handler ([`super::handler`]) asks before handing a request to the
//! console. Over stdio a server's request carries no mark of the call it belongs to, so only a
//! server with one host's calls in flight is handed to that host; with two hosts' (or none) it
//! goes to the console as before.

// Sampling is SEP-2577-deprecated in rmcp; the servers and hosts of today use it.
#![allow(deprecated)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientResult, CreateMessageRequestParams, CreateMessageResult, ElicitRequest,
    ElicitRequestParams, ElicitResult, ErrorCode, ServerRequest,
};
use rmcp::service::{Peer, ServiceError};
use rmcp::{ErrorData, RoleServer};
use tokio_util::sync::CancellationToken;

/// The host calls in flight, by server; shared by a runtime's sessions and its gateway.
#[derive(Clone, Default)]
pub struct HostRelays(Arc<Shared>);

#[derive(Default)]
struct Shared {
    next: AtomicU64,
    calls: Mutex<Vec<InFlight>>,
}

struct InFlight {
    id: u64,
    server: String,
    host: Arc<Relay>,
}

/// A host that may be asked, and which of the requests it declared it answers (made once a
/// session; a stateless host's declares none).
pub struct Relay {
    /// One per host session: two calls of one host are one host.
    pub session: u64,
    /// The host's name, for the operator's Events line.
    pub name: String,
    pub peer: Peer<RoleServer>,
    pub sampling: bool,
    pub elicitation: bool,
}

/// What a request needs the host to have declared.
#[derive(Clone, Copy)]
pub enum Asks {
    Sampling,
    Elicitation,
}

impl std::fmt::Debug for HostRelays {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostRelays")
    }
}

/// Every runtime has its own: two are the same only when they are one.
impl PartialEq for HostRelays {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for HostRelays {}

impl HostRelays {
    /// A new id for a host session (from the counter the calls in flight use too).
    pub fn session(&self) -> u64 {
        self.0.next.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// `host`'s call on `server` is in flight until the guard is dropped.
    pub fn enter(&self, server: &str, host: Arc<Relay>) -> InFlightGuard {
        let id = self.0.next.fetch_add(1, Ordering::Relaxed) + 1;
        self.calls().push(InFlight {
            id,
            server: server.to_string(),
            host,
        });
        InFlightGuard {
            relays: self.clone(),
            id,
        }
    }

    /// The host to hand `server`'s request to: the one host with calls in flight there, when
    /// it declared what the request `asks`.
    pub fn host_for(&self, server: &str, asks: Asks) -> Option<Arc<Relay>> {
        let calls = self.calls();
        let mut on_server = calls.iter().filter(|c| c.server == server);
        let first = &on_server.next()?.host;
        if on_server.any(|c| c.host.session != first.session) {
            return None;
        }
        let declared = match asks {
            Asks::Sampling => first.sampling,
            Asks::Elicitation => first.elicitation,
        };
        declared.then(|| first.clone())
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, Vec<InFlight>> {
        self.0.calls.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Relay {
    /// Hands a server's `sampling/createMessage` to the host; `cancel`: the server withdrew it.
    pub async fn sample(
        &self,
        params: CreateMessageRequestParams,
        cancel: &CancellationToken,
    ) -> Result<CreateMessageResult, ErrorData> {
        tokio::select! {
            answer = self.peer.create_message(params) => answer.map_err(host_error),
            () = cancel.cancelled() => Err(withdrawn()),
        }
    }

    /// Hands a server's `elicitation/create` to the host; `cancel`: the server withdrew it.
    pub async fn elicit(
        &self,
        params: ElicitRequestParams,
        cancel: &CancellationToken,
    ) -> Result<ElicitResult, ErrorData> {
        tokio::select! {
            answer = self.peer.send_request(ServerRequest::ElicitRequest(ElicitRequest::new(params)))
                => match answer {
                Ok(ClientResult::ElicitResult(result)) => Ok(result),
                Ok(_) => Err(host_error(ServiceError::UnexpectedResponse)),
                Err(e) => Err(host_error(e)),
            },
            () = cancel.cancelled() => Err(withdrawn()),
        }
    }
}

/// The host's error as the server is told it: the host's own when it sent one.
fn host_error(error: ServiceError) -> ErrorData {
    match error {
        ServiceError::McpError(error) => error,
        other => ErrorData::internal_error(format!("the host did not answer: {other}"), None),
    }
}

fn withdrawn() -> ErrorData {
    ErrorData::new(ErrorCode::INTERNAL_ERROR, "request cancelled", None)
}

/// Ends a host call's stay in [`HostRelays`].
pub struct InFlightGuard {
    relays: HostRelays,
    id: u64,
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.relays.calls().retain(|c| c.id != self.id);
    }
}
