//! A `tools/call` without rmcp's service task: over stdio the calling task writes the request
//! line itself and the line reader hands the answer straight back to it; over Streamable HTTP
//! (`http_direct.rs`) the calling task makes the POST and reads its answer itself.
//!
//! Through rmcp every request builds its `_meta` anew (at revision 2026-07-28 the client's info
//! and capabilities serialized into a `Value` each time), goes by channel to rmcp's service task,
//! which spawns a task to write it (over HTTP, to its transport worker, which serializes the
//! request again for its headers), and its answer comes back the same way. On the call path that
//! was about a third of the client's own CPU per call (`perf` on `cargo bench -- call/demo`, see
//! docs/performance.md). Here the session's part of the `_meta` is serialized once
//! (`outbound::SessionMeta`), the request is written in the caller's own poll, and the answer (or
//! an error answer, or the failure of an unreadable one) goes to the caller. Everything else
//! about the request (its deadline, progress, cancellation) stays with the client, which treats
//! both paths alike; every other request still goes through rmcp.

// Logging is SEP-2577-deprecated in rmcp; the servers of today still use it.
#![allow(deprecated)]

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use rmcp::model::{
    CallToolRequest, LoggingLevel, NumberOrString, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::ServiceError;
use tokio::io::AsyncWriteExt;
use tokio::sync::oneshot;

use super::answers::Pending;
use super::outbound::{direct_call_line, SessionMeta};

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
    ids: Ids,
}

/// A request on its way: its answer to come, its id and progress token. Dropping it forgets
/// the caller (a call given up on, cancelled or timed out, gets no answer later; over HTTP its
/// request is dropped, which is how a 2026-07-28 client cancels one).
pub struct Sent {
    pub rx: Reply,
    pub id: RequestId,
    pub progress_token: ProgressToken,
    /// Held while the caller waits for the line reader (stdio).
    pub waiting: Option<Waiting>,
}

/// The answer to come: from the line reader (an error when the connection ended first), or
/// the POST itself, polled by the caller.
pub enum Reply {
    Line(oneshot::Receiver<Answer>),
    Post(Pin<Box<dyn Future<Output = Answer> + Send>>),
}

impl Future for Reply {
    type Output = Result<Answer, oneshot::error::RecvError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Reply::Line(rx) => Pin::new(rx).poll(cx),
            Reply::Post(post) => post.as_mut().poll(cx).map(Ok),
        }
    }
}

/// Request ids of the direct path: strings, so that they never meet rmcp's numbered ones on
/// the same session; the progress token is the same string.
#[derive(Clone, Default)]
pub(super) struct Ids(Arc<AtomicU64>);

impl Ids {
    pub(super) fn next(&self) -> (RequestId, ProgressToken) {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        let name: Arc<str> = format!("aimon-{n}").into();
        (
            RequestId::String(name.clone()),
            ProgressToken(NumberOrString::String(name)),
        )
    }
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
            ids: Ids::default(),
        }
    }

    /// The next request's id and progress token: strings, so that they never meet rmcp's
    /// numbered ones on the same session. Taken before [`send`](Self::send), so that the
    /// caller's progress route is in place before the line goes.
    pub fn ids(&self) -> (RequestId, ProgressToken) {
        self.ids.next()
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
        let line = direct_call_line(&id, session, call, level, &progress_token)?;
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
            rx: Reply::Line(rx),
            id,
            progress_token,
            waiting: Some(waiting),
        })
    }
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
