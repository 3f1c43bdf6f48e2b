//! The one answer a server waits for while a driver (the console, a daemon's consoles) is
//! asked: an elicitation's or a sampling request's. Clones share it; the first answer wins;
//! dropping every clone unanswered closes it, which the server sees as declined or rejected.

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::oneshot;

/// The answer's way back to the server.
pub struct Reply<T>(Arc<Mutex<Option<oneshot::Sender<T>>>>);

impl<T> Clone for Reply<T> {
    fn clone(&self) -> Self {
        Reply(self.0.clone())
    }
}

impl<T> Reply<T> {
    pub fn new() -> (Reply<T>, oneshot::Receiver<T>) {
        let (tx, rx) = oneshot::channel();
        (Reply(Arc::new(Mutex::new(Some(tx)))), rx)
    }

    fn lock(&self) -> MutexGuard<'_, Option<oneshot::Sender<T>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the server still waits (not answered, not withdrawn).
    pub fn is_open(&self) -> bool {
        self.lock().as_ref().is_some_and(|tx| !tx.is_closed())
    }

    /// Resolves once nobody waits for an answer any more: answered, or withdrawn by the
    /// server (or given up on).
    pub async fn closed(&self) {
        std::future::poll_fn(|cx| match self.lock().as_mut() {
            Some(tx) => tx.poll_closed(cx),
            None => std::task::Poll::Ready(()),
        })
        .await
    }

    /// Sends the answer, if none went before.
    pub fn send(&self, answer: T) {
        if let Some(tx) = self.lock().take() {
            // The server may have given up waiting: nobody to tell, which is fine.
            let _ = tx.send(answer);
        }
    }
}
