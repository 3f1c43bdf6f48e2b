//! A `tools/call` over a stdio connection without rmcp's service task: the calling task writes
//! the request line itself and the line reader hands the answer straight back to it.
//!
//! Through rmcp every request builds its `_meta` anew (at revision 2026-07-28 the client's info
//! and capabilities serialized into a `Value` each time), goes by channel to rmcp's service task,
//! which spawns a task to write it, and its answer comes back the same way. On the call path that
//! was about a third of the client's own CPU per call (`perf` on `cargo bench -- call/demo`, see
//! docs/performance.md). Here the session's part of the `_meta` is serialized once
//! (`outbound::SessionMeta`), the line is written in the caller's own poll, and the answer (or an
//! error answer, or the failure of an unreadable one) goes to the caller's channel. Everything
//! else about the request (its deadline, progress, cancellation) stays with the client, which
//! treats both paths alike; every other request still goes through rmcp.

// Logging is SEP-2577-deprecated in rmcp; the servers of today still use it.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequest, LoggingLevel, NumberOrString, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::ServiceError;
use tokio::io::AsyncWriteExt;
use tokio::sync::oneshot;

use super::answers::Pending;
use super::outbound::{call_line_with, SessionMeta};

/// The server's stdin, shared by rmcp's writes (`lines.rs`) and the direct path's; `None`
/// once closed.
pub(super) type SharedWriter = Arc<tokio::sync::Mutex<Option<BoxWriter>>>;
type BoxWriter = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

/// What a caller gets: the result, or the error answer (as rmcp would give it).
pub type Answer = Result<ServerResult, ServiceError>;

/// The callers waiting for an answer on the direct path, by request id; `None` once the
/// connection's reader has ended (their channels are dropped then: the connection is gone).
#[derive(Clone)]
pub struct Waiters(Arc<Mutex<Option<ByRequest>>>);

type ByRequest = HashMap<RequestId, oneshot::Sender<Answer>>;

impl Default for Waiters {
    fn default() -> Self {
        Waiters(Arc::new(Mutex::new(Some(HashMap::new()))))
    }
}

impl Waiters {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<ByRequest>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// False once the reader has ended.
    fn insert(&self, id: RequestId, waiter: oneshot::Sender<Answer>) -> bool {
        match self.lock().as_mut() {
            Some(map) => {
                map.insert(id, waiter);
                true
            }
            None => false,
        }
    }

    /// The caller waiting for the answer to `id`, if it is one of the direct path's.
    pub fn take(&self, id: &RequestId) -> Option<oneshot::Sender<Answer>> {
        self.lock().as_mut()?.remove(id)
    }

    /// The reader has ended: no answer comes to anyone still waiting.
    pub fn close(&self) {
        self.lock().take();
    }
}

/// Writes `tools/call` requests on one connection; cheap to clone.
#[derive(Clone)]
pub struct DirectCalls {
    writer: SharedWriter,
    pending: Pending,
    waiters: Waiters,
    next: Arc<AtomicU64>,
}

/// A request written: its answer's channel, its id and progress token. Dropping it forgets
/// the caller (a call given up on, cancelled or timed out, gets no answer later).
pub struct Sent {
    pub rx: oneshot::Receiver<Answer>,
    pub id: RequestId,
    pub progress_token: ProgressToken,
    /// Held while the caller waits.
    pub waiting: Waiting,
}

/// A caller waiting; dropped, it is forgotten.
pub struct Waiting {
    waiters: Waiters,
    id: RequestId,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.waiters.take(&self.id);
    }
}

impl DirectCalls {
    pub(super) fn new(writer: SharedWriter, pending: Pending, waiters: Waiters) -> DirectCalls {
        DirectCalls {
            writer,
            pending,
            waiters,
            next: Arc::new(AtomicU64::new(1)),
        }
    }

    /// The next request's id and progress token: strings, so that they never meet rmcp's
    /// numbered ones on the same session. Taken before [`send`](Self::send), so that the
    /// caller's progress route is in place before the line goes.
    pub fn ids(&self) -> (RequestId, ProgressToken) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let name: Arc<str> = format!("aimon-{n}").into();
        (
            RequestId::String(name.clone()),
            ProgressToken(NumberOrString::String(name)),
        )
    }

    /// Writes `call` under an id and progress token from [`ids`](Self::ids), with the
    /// session's `_meta` part and the log level asked for (2026-07-28); an error when the
    /// connection is closed, or when `call` cannot go this way (`outbound::writes_directly`).
    pub async fn send(
        &self,
        session: &SessionMeta,
        call: &CallToolRequest,
        level: Option<LoggingLevel>,
        (id, progress_token): (RequestId, ProgressToken),
    ) -> std::io::Result<Sent> {
        let line = call_line_with(&id, session, call, level, &progress_token)
            .map_err(std::io::Error::other)?
            .ok_or_else(|| std::io::Error::other("a call with a _meta of its own goes via rmcp"))?;
        let closed = || std::io::Error::new(std::io::ErrorKind::BrokenPipe, "connection closed");
        let (tx, rx) = oneshot::channel();
        if !self.waiters.insert(id.clone(), tx) {
            return Err(closed());
        }
        let waiting = Waiting {
            waiters: self.waiters.clone(),
            id: id.clone(),
        };
        self.pending.sent_call(&id);
        let written = async {
            let mut guard = self.writer.lock().await;
            let writer = guard.as_mut().ok_or_else(closed)?;
            writer.write_all(&line).await?;
            writer.flush().await
        };
        if let Err(e) = written.await {
            self.pending.take(&id);
            return Err(e);
        }
        Ok(Sent {
            rx,
            id,
            progress_token,
            waiting,
        })
    }
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
