//! The gateway's face over stdio ([`serve_stdio`]): a transport that takes a host's
//! `tools/call` off the line itself: the call runs through the same [`Serving::call`] as rmcp's handler would run it, and
//! its answer is written from rmcp's own types, but without rmcp's service between them.
//!
//! Through rmcp each request is read through its untagged union of every client message (with
//! flattened `_meta`), queued to its service task, handed to a task spawned for the handler,
//! and its answer queued back to be written: `perf` under the Python SDK host put a host
//! request's read at 15 % of the gateway's CPU a call and rmcp's handling around the call at
//! about as much (docs/performance.md). Here a line that is a `tools/call` (and nothing else:
//! any field this reader does not know sends it rmcp's way) is read into its own small shape,
//! and a `notifications/cancelled` for such a call cancels it. Everything else, and every call
//! before the host has joined (its `initialized` seen, so its session's peer known), goes to
//! rmcp exactly as its own stdio transport would give it (`JsonRpcMessageCodec`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, JsonObject, NumberOrString, RequestId, RequestMetaObject,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::{JsonRpcMessageCodec, JsonRpcMessageCodecError};
use rmcp::transport::Transport;
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio_util::codec::Decoder;
use tokio_util::sync::CancellationToken;

use super::face::{serve_on, Face, Gateway, Serving};

/// Serves the face over this process's stdin and stdout until the host goes away. When they
/// are pipes (as a host starts a stdio server) they are read and written without blocking, in
/// the runtime's own event loop (tokio's stdin and stdout hand every read and write to a
/// blocking thread, a wake-up each way on every message), and a host's `tools/call` is taken
/// off the line without rmcp's service ([`DirectStdio`]).
pub async fn serve_stdio(gateway: Arc<Gateway>) -> Result<(), String> {
    let face = Face::new(gateway);
    match stdio_pipes() {
        Ok((read, write)) => {
            let transport = DirectStdio::new(read, write, face.serving());
            serve_on(face, transport).await
        }
        Err(_) => serve_on(face, rmcp::transport::io::stdio()).await,
    }
}

/// Stdin and stdout as non-blocking pipe ends (`Err` when either is not a pipe: both are
/// checked before either is made non-blocking, so the fallback reads a blocking stdin).
fn stdio_pipes() -> std::io::Result<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
)> {
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;
    let fifo = |fd: OwnedFd| -> std::io::Result<OwnedFd> {
        let file = std::fs::File::from(fd);
        if file.metadata()?.file_type().is_fifo() {
            Ok(OwnedFd::from(file))
        } else {
            Err(std::io::Error::other("not a pipe"))
        }
    };
    let stdin = fifo(std::io::stdin().as_fd().try_clone_to_owned()?)?;
    let stdout = fifo(std::io::stdout().as_fd().try_clone_to_owned()?)?;
    Ok((
        tokio::net::unix::pipe::Receiver::from_owned_fd(stdin)?,
        tokio::net::unix::pipe::Sender::from_owned_fd(stdout)?,
    ))
}

/// The longest line read, as rmcp's own stdio transport allows.
const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// This process's stdout, shared by rmcp's writes and the direct calls' answers: each message
/// is written whole under the lock. `None` once closed.
type Out = Arc<tokio::sync::Mutex<Option<pipe::Sender>>>;

/// The direct calls in flight, by request id: cancelled by the host's `notifications/cancelled`
/// or when the host goes away.
type InFlight = Arc<Mutex<HashMap<RequestId, CancellationToken>>>;

/// The host's stdin and stdout as the face's transport (see the module's comment).
pub struct DirectStdio {
    read: BufReader<pipe::Receiver>,
    /// The line being read: kept across a `receive` that rmcp's `select!` drops, so a line
    /// read in part is finished by the next call.
    line: Vec<u8>,
    /// Skipping the rest of a line over [`MAX_LINE`].
    discarding: bool,
    out: Out,
    serving: Serving,
    in_flight: InFlight,
    codec: JsonRpcMessageCodec<RxJsonRpcMessage<RoleServer>>,
}

impl DirectStdio {
    pub(super) fn new(read: pipe::Receiver, write: pipe::Sender, serving: Serving) -> Self {
        DirectStdio {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            out: Arc::new(tokio::sync::Mutex::new(Some(write))),
            serving,
            in_flight: Arc::default(),
            codec: JsonRpcMessageCodec::new_with_max_length(MAX_LINE),
        }
    }

    /// Takes the line if it is a call or a cancellation the direct way serves; true if taken.
    /// A call is looked for first: it is the line that comes most.
    fn take_directly(&self, line: &[u8]) -> bool {
        let Some((id, params)) = call_line(line) else {
            return self.cancel_directly(line);
        };
        let Some(peer) = self.serving.session_peer() else {
            return false;
        };
        let ct = CancellationToken::new();
        self.in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.clone(), ct.clone());
        let (serving, out, in_flight) = (
            self.serving.clone(),
            self.out.clone(),
            self.in_flight.clone(),
        );
        tokio::spawn(async move {
            let meta = RequestMetaObject(rmcp::model::MetaObject(params.meta.unwrap_or_default()));
            let mut request = CallToolRequestParams::new(params.name);
            request.arguments = params.arguments;
            let result = serving.call(request, &peer, &meta, ct.clone()).await;
            // Over, as rmcp marks a request it answered: what hangs on it stops.
            ct.cancel();
            let cancelled = in_flight
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id)
                .is_none();
            // A cancelled request is not answered (rmcp answers none either).
            if !cancelled {
                let answer =
                    ServerJsonRpcMessage::response(ServerResult::CallToolResult(result), id);
                if let Err(e) = write(&out, &answer).await {
                    tracing::debug!(error = %e, "the host's call was answered after it left");
                }
            }
        });
        true
    }

    /// Cancels the direct call a `notifications/cancelled` line names; false when the line is
    /// no such thing (or names a call of rmcp's, which it then gets).
    fn cancel_directly(&self, line: &[u8]) -> bool {
        let Some(cancelled) = cancelled_call(line) else {
            return false;
        };
        let token = self
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&cancelled);
        token.map(|token| token.cancel()).is_some()
    }

    /// The next whole line into `self.line` (without its end); `None` at the end of input.
    async fn next_line(&mut self) -> Option<()> {
        loop {
            let start = self.line.len();
            let read = (&mut self.read)
                .take((MAX_LINE + 1 - start.min(MAX_LINE)) as u64)
                .read_until(b'\n', &mut self.line)
                .await;
            match read {
                Ok(0) if self.line.len() == start => return None,
                Ok(_) => {}
                Err(e) => {
                    tracing::error!(error = %e, "reading the host's stdin failed");
                    return None;
                }
            }
            if self.line.ends_with(b"\n") {
                if std::mem::take(&mut self.discarding) {
                    self.line.clear();
                    continue;
                }
                self.line.pop();
                if self.line.ends_with(b"\r") {
                    self.line.pop();
                }
                return Some(());
            }
            if self.line.len() > MAX_LINE {
                tracing::error!(
                    max_line_length = MAX_LINE,
                    "a message from the host exceeded the maximum line length, discarding it"
                );
                self.line.clear();
                self.discarding = true;
            } else if self.line.len() == start {
                // The input ended inside a line: nothing whole to deliver.
                return None;
            }
        }
    }
}

impl Transport<RoleServer> for DirectStdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        async move { write(&out, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.next_line().await.is_none() {
                // The host is gone: its calls in flight end cancelled.
                let calls =
                    std::mem::take(&mut *self.in_flight.lock().unwrap_or_else(|p| p.into_inner()));
                calls.into_values().for_each(|ct| ct.cancel());
                return None;
            }
            let line = std::mem::take(&mut self.line);
            if line.is_empty() || self.take_directly(&line) {
                self.line = reuse(line);
                continue;
            }
            let mut framed = bytes::BytesMut::with_capacity(line.len() + 1);
            framed.extend_from_slice(&line);
            framed.extend_from_slice(b"\n");
            self.line = reuse(line);
            match self.codec.decode(&mut framed) {
                Ok(Some(message)) => return Some(message),
                // A notification of no standard method: ignored, as rmcp does.
                Ok(None) => {}
                Err(JsonRpcMessageCodecError::Serde(e))
                    if matches!(
                        e.classify(),
                        serde_json::error::Category::Data | serde_json::error::Category::Io
                    ) =>
                {
                    // Well-formed JSON that is no message: an Invalid Request answer, as rmcp's
                    // own transport gives; input that is not JSON at all is ignored.
                    tracing::debug!(error = %e, "a host's message is not an MCP message");
                    let refusal = TxJsonRpcMessage::<RoleServer>::error(
                        rmcp::ErrorData::invalid_request("Invalid request", None),
                        None,
                    );
                    if write(&self.out, &refusal).await.is_err() {
                        return None;
                    }
                }
                Err(e) => tracing::debug!(error = %e, "ignoring a host's line"),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.out.lock().await.take();
        Ok(())
    }
}

/// `buffer` emptied for the next line, its room kept.
fn reuse(mut buffer: Vec<u8>) -> Vec<u8> {
    buffer.clear();
    buffer
}

/// Writes `message` as one line, whole.
async fn write(out: &Out, message: &TxJsonRpcMessage<RoleServer>) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    line.push(b'\n');
    let mut out = out.lock().await;
    let Some(pipe) = out.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the host's stdout is closed",
        ));
    };
    pipe.write_all(&line).await?;
    pipe.flush().await
}

/// A `tools/call` request as the direct way takes it: these fields and no others.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallLine<'a> {
    #[serde(borrow)]
    jsonrpc: std::borrow::Cow<'a, str>,
    id: RequestId,
    #[serde(borrow)]
    method: std::borrow::Cow<'a, str>,
    params: CallParams,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
    #[serde(rename = "_meta", default)]
    meta: Option<JsonObject>,
}

/// `line` as a `tools/call` the direct way serves, its id and params (`None`: rmcp's).
fn call_line(line: &[u8]) -> Option<(RequestId, CallParams)> {
    if !contains(line, b"\"tools/call\"") {
        return None;
    }
    let call: CallLine = serde_json::from_slice(line).ok()?;
    (call.jsonrpc == "2.0" && call.method == "tools/call").then_some((call.id, call.params))
}

/// The request id a `notifications/cancelled` line names, if it is one.
fn cancelled_call(line: &[u8]) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Cancelled {
        method: String,
        params: CancelledParams,
    }
    #[derive(Deserialize)]
    struct CancelledParams {
        #[serde(rename = "requestId")]
        request_id: NumberOrString,
    }
    if !contains(line, b"\"notifications/cancelled\"") {
        return None;
    }
    let cancelled: Cancelled = serde_json::from_slice(line).ok()?;
    (cancelled.method == "notifications/cancelled").then_some(cancelled.params.request_id)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
#[path = "face_direct_tests.rs"]
mod tests;
