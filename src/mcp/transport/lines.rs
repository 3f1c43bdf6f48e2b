//! Newline-delimited JSON-RPC framing over any pipe pair, as an rmcp `Transport` of ours.
//!
//! It owns what rmcp would hide: every stdout line is classified (message, blank, not JSON, not a
//! message, over the size limit) and what is not a message is reported, not silently dropped: a
//! line that is an answer nobody can read fails the request it answered at once (`unreadable.rs`
//! finds which), anything else becomes a warning; notifications go to the tap in wire order before
//! rmcp sees them (docs/ARCHITECTURE.md §4.4); and the inbound side closes when the process exits
//! even if a grandchild still holds stdout open.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ErrorCode, ErrorData, JsonRpcError, JsonRpcMessage, JsonRpcResponse, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::service::{RoleClient, RxJsonRpcMessage, ServiceError, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

pub use super::answers::{classify_answer, classify_line, LineKind, Pending};
use super::direct::{DirectCalls, SharedWriter, Waiters};
pub use super::issues::StdoutIssues;
pub use super::unreadable::MAX_LINE_BYTES;
use super::unreadable::{self, Defect, Envelope, HEAD_BYTES, TAIL_BYTES};
use crate::mcp::notify::NotificationTap;
use crate::text;

/// How long the reader keeps draining stdout after the process exited.
const EXIT_DRAIN: Duration = Duration::from_millis(150);
/// Bytes of line buffer a connection keeps between lines (see `LineBuf::settle`).
const KEPT_CAPACITY: usize = 8 * 1024;
/// Characters of a bad line quoted in warnings.
const QUOTE_CHARS: usize = 80;

/// The client side of a newline-delimited JSON-RPC connection.
pub struct LineTransport {
    /// Boxed: the queue allocates its slots in blocks, and a message is hundreds of bytes.
    inbound: mpsc::Receiver<Box<ServerJsonRpcMessage>>,
    writer: SharedWriter,
    pending: Pending,
    waiters: Waiters,
}

/// Reader-side context: who the server is and where notifications and problems go.
pub struct LineContext {
    pub server: String,
    pub tap: NotificationTap,
    pub issues: Arc<Mutex<StdoutIssues>>,
}

impl LineTransport {
    /// Starts the reader task. `closed` resolves when the other end is known to be gone (the
    /// process exited); the reader then drains for a moment and ends the inbound stream.
    pub fn new<R, W, F>(read: R, write: W, closed: F, ctx: LineContext) -> Self
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        let (tx, inbound) = mpsc::channel(256);
        let pending = Pending::default();
        let waiters = Waiters::default();
        let reader = Reader {
            tx,
            ctx,
            pending: pending.clone(),
            waiters: waiters.clone(),
        };
        tokio::spawn(reader.run(BufReader::new(read), closed));
        LineTransport {
            inbound,
            writer: Arc::new(tokio::sync::Mutex::new(Some(Box::new(write)))),
            pending,
            waiters,
        }
    }

    /// The way to write a `tools/call` on this connection without rmcp (`direct.rs`).
    pub fn direct(&self) -> DirectCalls {
        DirectCalls::new(
            self.writer.clone(),
            self.pending.clone(),
            self.waiters.clone(),
        )
    }
}

/// The reader task's side of a connection.
struct Reader {
    tx: mpsc::Sender<Box<ServerJsonRpcMessage>>,
    ctx: LineContext,
    pending: Pending,
    /// Callers of the direct path: their answers go to them, not to rmcp.
    waiters: Waiters,
}

/// rmcp is gone: the reader can stop.
struct Gone;

impl Reader {
    async fn run<R, F>(self, mut reader: BufReader<R>, closed: F)
    where
        R: AsyncRead + Unpin,
        F: Future<Output = ()>,
    {
        let drain_deadline = async {
            closed.await;
            tokio::time::sleep(EXIT_DRAIN).await;
        };
        tokio::pin!(drain_deadline);
        let mut buf = LineBuf::default();
        loop {
            let read = tokio::select! {
                biased;
                read = read_line_bounded(&mut reader, &mut buf, MAX_LINE_BYTES) => read,
                () = &mut drain_deadline => break,
            };
            let handled = match read {
                Ok(Line::Eof) | Err(_) => break,
                Ok(Line::TooLong(len)) => self.too_long(len, &buf).await,
                Ok(Line::Complete) => self.line(&buf).await,
            };
            if handled.is_err() {
                break;
            }
            buf.settle();
        }
        self.waiters.close();
    }

    fn issues(&self) -> std::sync::MutexGuard<'_, StdoutIssues> {
        self.ctx.issues.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn send(&self, message: Box<ServerJsonRpcMessage>) -> Result<(), Gone> {
        self.tx.send(message).await.map_err(|_| Gone)
    }

    /// An answer to its caller when the direct path asked (`direct.rs`), else to rmcp.
    async fn answer(&self, message: Box<ServerJsonRpcMessage>) -> Result<(), Gone> {
        let id = match message.as_ref() {
            JsonRpcMessage::Response(JsonRpcResponse { id, .. }) => Some(id),
            JsonRpcMessage::Error(JsonRpcError { id, .. }) => id.as_ref(),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
        };
        let Some(waiter) = id.and_then(|id| self.waiters.take(id)) else {
            return self.send(message).await;
        };
        let answer = match *message {
            JsonRpcMessage::Response(response) => Ok(response.result),
            JsonRpcMessage::Error(error) => Err(ServiceError::McpError(error.error)),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => return Ok(()),
        };
        // Its caller may have given up meanwhile: nobody to tell.
        let _ = waiter.send(answer);
        Ok(())
    }

    async fn too_long(&self, len: usize, buf: &LineBuf) -> Result<(), Gone> {
        tracing::warn!(server = %self.ctx.server, len, "dropped an oversized stdout line");
        let envelope = unreadable::scan(&buf.line, &buf.tail);
        if !buf.cut && envelope.is_answer() {
            return self
                .unreadable(Defect::TooLong(len), &envelope, &buf.line)
                .await;
        }
        let mut issues = self.issues();
        issues.oversized += 1;
        issues.largest_oversized = issues.largest_oversized.max(len);
        Ok(())
    }

    async fn line(&self, buf: &LineBuf) -> Result<(), Gone> {
        let line = &buf.line;
        let why = match classify_answer(line, &self.pending) {
            LineKind::Message(message) => {
                super::tap::deliver(&self.ctx.tap, &self.ctx.server, &message).await;
                return self.answer(message).await;
            }
            LineKind::ToolPage(message, entries) => {
                if let JsonRpcMessage::Response(JsonRpcResponse { id, .. }) = message.as_ref() {
                    if !entries.skipped.is_empty() {
                        tracing::warn!(server = %self.ctx.server, skipped = ?entries.skipped, "tool entries skipped");
                    }
                    self.issues().tool_page(id.clone(), entries);
                }
                return self.send(message).await;
            }
            LineKind::Blank => return Ok(()),
            LineKind::NotJson => None,
            LineKind::NotAMessage(why) => Some(why),
        };
        // Bounded: the head and the tail, however long the line.
        let envelope = unreadable::scan(
            &line[..line.len().min(HEAD_BYTES)],
            &line[line.len().saturating_sub(TAIL_BYTES)..],
        );
        // The last bytes before the stream ended are cut short, not an answer: the connection
        // is ending, and how (the exit status) says more than the bytes.
        if !buf.cut && envelope.is_answer() {
            let defect = unreadable::defect_of(line, &envelope);
            return self.unreadable(defect, &envelope, line).await;
        }
        let quoted = text::quote_bytes(line, QUOTE_CHARS);
        let mut issues = self.issues();
        match why {
            None => {
                tracing::warn!(server = %self.ctx.server, line = %quoted, "non-JSON line on stdout");
                issues.not_json += 1;
                issues.first_not_json.get_or_insert(quoted);
            }
            Some(why) => {
                tracing::warn!(server = %self.ctx.server, line = %quoted, %why, "JSON line on stdout is not a JSON-RPC message");
                issues.not_a_message += 1;
                issues.first_not_a_message.get_or_insert(quoted);
            }
        }
        Ok(())
    }

    /// An answer that cannot be read: the request it answered fails now, with why (or, when it
    /// names none, every request in flight, each told of the line); the server's warnings say
    /// so too. rmcp hears of it as an error answer, so its waiter ends at once.
    async fn unreadable(
        &self,
        defect: Defect,
        envelope: &Envelope,
        head: &[u8],
    ) -> Result<(), Gone> {
        let quoted = text::quote_bytes(head, QUOTE_CHARS);
        let (warning, failed): (String, Vec<(RequestId, String)>) = match &envelope.id {
            Some(id) => match self.pending.take(id) {
                Some(method) => (
                    format!("request {id} ({method}): {defect}: {quoted}"),
                    vec![(
                        id.clone(),
                        format!(
                            "the answer to {method} (request {id}) could not be read: {defect}"
                        ),
                    )],
                ),
                None => (
                    format!("an answer to request {id}, which was not pending: {defect}: {quoted}"),
                    Vec::new(),
                ),
            },
            None => {
                let all = self.pending.take_all();
                let warning = format!(
                    "a line with no id ({defect}), {} pending request{} failed: {quoted}",
                    all.len(),
                    crate::text::plural(all.len())
                );
                let failed = all
                    .into_iter()
                    .map(|(id, method)| {
                        let why = format!(
                            "a line with no id could not be read while {method} (request {id}) waited for its answer: {defect}: {quoted}"
                        );
                        (id, why)
                    })
                    .collect();
                (warning, failed)
            }
        };
        tracing::warn!(server = %self.ctx.server, %warning, "an answer could not be read");
        {
            let mut issues = self.issues();
            issues.unreadable += 1;
            issues.first_unreadable.get_or_insert(warning);
            for (id, why) in &failed {
                issues.fail(id.clone(), why.clone());
            }
        }
        for (id, why) in failed {
            let error = ErrorData::new(ErrorCode::PARSE_ERROR, why, None);
            self.answer(Box::new(JsonRpcMessage::Error(JsonRpcError::new(
                Some(id),
                error,
            ))))
            .await?;
        }
        Ok(())
    }
}

/// What [`read_line_bounded`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// A line (or the last bytes before end of file) is in `LineBuf::line`, without its newline.
    Complete,
    /// A line longer than the limit was consumed and dropped; its length in bytes. Its first
    /// bytes are in `LineBuf::line`, its last in `LineBuf::tail`.
    TooLong(usize),
    /// End of file, nothing read.
    Eof,
}

/// Where [`read_line_bounded`] puts what it read.
#[derive(Debug, Default)]
pub struct LineBuf {
    /// The line; for a line over the limit, its first bytes (up to `HEAD_BYTES`).
    pub line: Vec<u8>,
    /// For a line over the limit, its last bytes (at least `TAIL_BYTES`, where it has them).
    pub tail: Vec<u8>,
    /// The line ended at end of file, without a newline: cut short, most likely.
    pub cut: bool,
}

impl LineBuf {
    /// Gives back what a long line made the buffer hold: a connection keeps at most
    /// `KEPT_CAPACITY` between lines, not the size of the largest line it ever read (a
    /// `tools/list` page, a large result), once per server.
    fn settle(&mut self) {
        if self.line.capacity() > KEPT_CAPACITY {
            self.line.clear();
            self.line.shrink_to(KEPT_CAPACITY);
        }
    }
}

/// Keeps the last `TAIL_BYTES` or more of what is pushed, in amortised constant time per byte.
fn push_tail(tail: &mut Vec<u8>, chunk: &[u8]) {
    if chunk.len() >= TAIL_BYTES {
        tail.clear();
        tail.extend_from_slice(&chunk[chunk.len() - TAIL_BYTES..]);
    } else {
        tail.extend_from_slice(chunk);
        if tail.len() > 2 * TAIL_BYTES {
            tail.drain(..tail.len() - TAIL_BYTES);
        }
    }
}

/// Reads one line into `buf` (without the newline), refusing to hold more than `max` bytes: a
/// longer line is consumed and reported as `TooLong` with its length, keeping only its first
/// and last bytes (for the id of the request it answered). Public for the fuzz target
/// (`fuzz/`), which holds it against a plain split of the same bytes.
pub async fn read_line_bounded<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut LineBuf,
    max: usize,
) -> std::io::Result<Line> {
    buf.line.clear();
    buf.tail.clear();
    buf.cut = false;
    let mut too_long: Option<usize> = None;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            buf.cut = too_long.is_some() || !buf.line.is_empty();
            return Ok(match too_long {
                Some(len) => Line::TooLong(len),
                None if buf.line.is_empty() => Line::Eof,
                None => Line::Complete,
            });
        }
        let (chunk, found) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..i], Some(i)),
            None => (available, None),
        };
        let chunk_len = chunk.len();
        match too_long.as_mut() {
            Some(len) => {
                *len += chunk_len;
                push_tail(&mut buf.tail, chunk);
            }
            None if buf.line.len() + chunk_len > max => {
                too_long = Some(buf.line.len() + chunk_len);
                push_tail(
                    &mut buf.tail,
                    &buf.line[buf.line.len().saturating_sub(TAIL_BYTES)..],
                );
                push_tail(&mut buf.tail, chunk);
                buf.line.truncate(HEAD_BYTES);
                let room = HEAD_BYTES.saturating_sub(buf.line.len());
                buf.line.extend_from_slice(&chunk[..chunk_len.min(room)]);
                // The line may have grown to `max`: give the memory back.
                buf.line.shrink_to(HEAD_BYTES);
            }
            None => buf.line.extend_from_slice(chunk),
        }
        reader.consume(found.map_or(chunk_len, |i| i + 1));
        if found.is_some() {
            return Ok(match too_long {
                Some(len) => Line::TooLong(len),
                None => Line::Complete,
            });
        }
    }
}

impl Transport<RoleClient> for LineTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        self.pending.sent(&item);
        async move {
            let bytes = super::outbound::line(&item).map_err(std::io::Error::other)?;
            let mut guard = writer.lock().await;
            let Some(w) = guard.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    "connection closed",
                ));
            };
            w.write_all(&bytes).await?;
            w.flush().await
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        let inbound = &mut self.inbound;
        async move { inbound.recv().await.map(|message| *message) }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Dropping the writer closes the server's stdin: the polite way to ask a stdio server
        // to exit. The reader ends on EOF or when the process is seen to exit.
        if let Some(mut w) = self.writer.lock().await.take() {
            let _ = w.shutdown().await;
        }
        self.inbound.close();
        Ok(())
    }
}

#[cfg(test)]
#[path = "lines_tests.rs"]
pub(super) mod tests;
