//! Newline-delimited JSON-RPC framing over any pipe pair, as an rmcp `Transport` of ours.
//!
//! It owns what rmcp would hide: every stdout line is classified (message, blank, not JSON,
//! not a message, over the size limit) and what is not a message is reported, not silently
//! dropped; notifications go to the tap in wire order before rmcp sees them (DESIGN §4.4); and
//! the inbound side closes when the process exits even if a grandchild still holds stdout open.

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolResult, ClientRequest, JsonRpcError, JsonRpcMessage, JsonRpcResponse,
    JsonRpcVersion2_0, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::mcp::notify::NotificationTap;
use crate::text;

/// Lines longer than this are dropped and reported (rmcp's own limit, `DEFAULT_MAX_LINE_LENGTH`).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// How long the reader keeps draining stdout after the process exited.
const EXIT_DRAIN: Duration = Duration::from_millis(150);
/// Characters of a bad line quoted in warnings.
const QUOTE_CHARS: usize = 80;

/// What one stdout line turned out to be.
#[derive(Debug)]
pub enum LineKind {
    /// A JSON-RPC message for rmcp.
    Message(Box<ServerJsonRpcMessage>),
    /// An empty line (ignored).
    Blank,
    /// Not JSON at all (a banner, a log line printed to the wrong stream).
    NotJson,
    /// JSON, but not a JSON-RPC message we understand.
    NotAMessage(String),
}

/// Ids of the `tools/call` requests in flight on one connection, so that their answers are read
/// as what they are: a hint, never needed for a correct read (see [`classify_answer`]).
#[derive(Debug, Default, Clone)]
pub struct PendingCalls(Arc<Mutex<HashSet<RequestId>>>);

/// More ids than this means answers that never came (calls abandoned on a deadline): start over.
const PENDING_CALLS_LIMIT: usize = 4096;

impl PendingCalls {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<RequestId>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes an outgoing message: a `tools/call` request is remembered until its answer.
    pub fn sent(&self, message: &TxJsonRpcMessage<RoleClient>) {
        if let JsonRpcMessage::Request(request) = message {
            if matches!(request.request, ClientRequest::CallToolRequest(_)) {
                let mut ids = self.lock();
                if ids.len() >= PENDING_CALLS_LIMIT {
                    ids.clear();
                }
                ids.insert(request.id.clone());
            }
        }
    }
}

/// The answer to a `tools/call`, read as one. Any other top-level field fails the read at once,
/// so a notification (a log flood during a call) costs a few bytes of parsing here, not a
/// second whole parse; a response with extra fields goes the general way.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CallAnswer {
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    result: CallToolResult,
}

/// Classifies one line as [`classify_line`] does, reading the answer to a `tools/call` in flight
/// as a `tools/call` result straight away. rmcp's message type tries every kind of result in
/// turn until one fits (fifteen fail before a tool's result is tried, each formatting its
/// error): most of the CPU a call cost the console. The answer to a request is of that
/// request's kind, so the direct read is also the right one; whatever it does not take (an
/// error, a task, anything else) goes the general way.
pub fn classify_answer(line: &[u8], calls: &PendingCalls) -> LineKind {
    let in_flight = !calls.lock().is_empty();
    let answer = in_flight
        .then(|| serde_json::from_slice::<CallAnswer>(line.trim_ascii()).ok())
        .flatten()
        .filter(|answer| calls.lock().remove(&answer.id));
    if let Some(answer) = answer {
        return LineKind::Message(Box::new(JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: answer.jsonrpc,
            id: answer.id,
            result: ServerResult::CallToolResult(answer.result),
        })));
    }
    let kind = classify_line(line);
    if let LineKind::Message(message) = &kind {
        let answered = match message.as_ref() {
            JsonRpcMessage::Response(JsonRpcResponse { id, .. }) => Some(id),
            JsonRpcMessage::Error(JsonRpcError { id, .. }) => id.as_ref(),
            _ => None,
        };
        if let Some(id) = answered.filter(|_| in_flight) {
            calls.lock().remove(id);
        }
    }
    kind
}

/// Classifies one line (without its newline). Never panics, whatever the bytes.
pub fn classify_line(line: &[u8]) -> LineKind {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return LineKind::Blank;
    }
    match serde_json::from_slice::<ServerJsonRpcMessage>(trimmed) {
        Ok(message) => LineKind::Message(Box::new(message)),
        Err(err) => match serde_json::from_slice::<serde::de::IgnoredAny>(trimmed) {
            Ok(_) => LineKind::NotAMessage(err.to_string()),
            Err(_) => LineKind::NotJson,
        },
    }
}

/// What went wrong on a server's stdout, kept for warnings and failure messages.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct StdoutIssues {
    /// Lines that were not JSON.
    pub not_json: u64,
    /// The first such line, quoted and sanitized.
    pub first_not_json: Option<String>,
    /// JSON lines that were not JSON-RPC messages.
    pub not_a_message: u64,
    pub first_not_a_message: Option<String>,
    /// Lines over `MAX_LINE_BYTES`, dropped.
    pub oversized: u64,
    pub largest_oversized: usize,
}

impl StdoutIssues {
    /// One warning per kind of problem, in words an operator can act on.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(first) = &self.first_not_json {
            out.push(format!(
                "{} non-JSON line{} on stdout (a server must write only JSON-RPC there), first: {first}",
                self.not_json,
                plural(self.not_json)
            ));
        }
        if let Some(first) = &self.first_not_a_message {
            out.push(format!(
                "{} JSON line{} on stdout that {} not JSON-RPC messages, first: {first}",
                self.not_a_message,
                plural(self.not_a_message),
                if self.not_a_message == 1 { "is" } else { "are" }
            ));
        }
        if self.oversized > 0 {
            out.push(format!(
                "{} line{} over the {} MiB frame limit dropped (largest {} bytes)",
                self.oversized,
                plural(self.oversized),
                MAX_LINE_BYTES / (1024 * 1024),
                self.largest_oversized
            ));
        }
        out
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

type BoxWriter = Box<dyn AsyncWrite + Send + Unpin>;

/// The client side of a newline-delimited JSON-RPC connection.
pub struct LineTransport {
    inbound: mpsc::Receiver<ServerJsonRpcMessage>,
    writer: Arc<tokio::sync::Mutex<Option<BoxWriter>>>,
    calls: PendingCalls,
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
        let calls = PendingCalls::default();
        tokio::spawn(read_loop(
            BufReader::new(read),
            tx,
            closed,
            ctx,
            calls.clone(),
        ));
        LineTransport {
            inbound,
            writer: Arc::new(tokio::sync::Mutex::new(Some(Box::new(write)))),
            calls,
        }
    }
}

async fn read_loop<R, F>(
    mut reader: BufReader<R>,
    tx: mpsc::Sender<ServerJsonRpcMessage>,
    closed: F,
    ctx: LineContext,
    calls: PendingCalls,
) where
    R: AsyncRead + Unpin,
    F: Future<Output = ()>,
{
    let drain_deadline = async {
        closed.await;
        tokio::time::sleep(EXIT_DRAIN).await;
    };
    tokio::pin!(drain_deadline);
    let mut buf = Vec::with_capacity(8 * 1024);
    loop {
        let read = tokio::select! {
            biased;
            read = read_line_bounded(&mut reader, &mut buf, MAX_LINE_BYTES) => read,
            () = &mut drain_deadline => break,
        };
        match read {
            Ok(Line::Eof) | Err(_) => break,
            Ok(Line::TooLong(len)) => {
                tracing::warn!(server = %ctx.server, len, "dropped an oversized stdout line");
                let mut issues = ctx.issues.lock().unwrap_or_else(|e| e.into_inner());
                issues.oversized += 1;
                issues.largest_oversized = issues.largest_oversized.max(len);
            }
            Ok(Line::Complete) => match classify_answer(&buf, &calls) {
                LineKind::Message(message) => {
                    super::tap::deliver(&ctx.tap, &ctx.server, &message).await;
                    if tx.send(*message).await.is_err() {
                        break;
                    }
                }
                LineKind::Blank => {}
                LineKind::NotJson => {
                    let quoted = text::quote_bytes(&buf, QUOTE_CHARS);
                    tracing::warn!(server = %ctx.server, line = %quoted, "non-JSON line on stdout");
                    let mut issues = ctx.issues.lock().unwrap_or_else(|e| e.into_inner());
                    issues.not_json += 1;
                    issues.first_not_json.get_or_insert(quoted);
                }
                LineKind::NotAMessage(why) => {
                    let quoted = text::quote_bytes(&buf, QUOTE_CHARS);
                    tracing::warn!(server = %ctx.server, line = %quoted, %why, "JSON line on stdout is not a JSON-RPC message");
                    let mut issues = ctx.issues.lock().unwrap_or_else(|e| e.into_inner());
                    issues.not_a_message += 1;
                    issues.first_not_a_message.get_or_insert(quoted);
                }
            },
        }
    }
}

/// What [`read_line_bounded`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// A line (or the last bytes before end of file) is in the buffer, without its newline.
    Complete,
    /// A line longer than the limit was consumed and dropped; its length in bytes.
    TooLong(usize),
    /// End of file, nothing read.
    Eof,
}

/// Reads one line into `buf` (without the newline), refusing to hold more than `max` bytes: a
/// longer line is consumed and reported as `TooLong` with its length. Public for the fuzz
/// target (`fuzz/`), which holds it against a plain split of the same bytes.
pub async fn read_line_bounded<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    buf.clear();
    let mut too_long: Option<usize> = None;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match too_long {
                Some(len) => Line::TooLong(len),
                None if buf.is_empty() => Line::Eof,
                None => Line::Complete,
            });
        }
        let (chunk, found) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..i], Some(i)),
            None => (available, None),
        };
        let chunk_len = chunk.len();
        match too_long.as_mut() {
            Some(len) => *len += chunk_len,
            None if buf.len() + chunk_len > max => {
                too_long = Some(buf.len() + chunk_len);
                buf.clear();
            }
            None => buf.extend_from_slice(chunk),
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
        self.calls.sent(&item);
        async move {
            let mut bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
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
        self.inbound.recv()
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
mod tests {
    use super::*;
    use proptest::strategy::Just;

    #[test]
    fn classifies_lines() {
        assert!(matches!(classify_line(b"  \r"), LineKind::Blank));
        assert!(matches!(classify_line(b"hello world"), LineKind::NotJson));
        assert!(matches!(
            classify_line(b"{\"a\":1}"),
            LineKind::NotAMessage(_)
        ));
        assert!(matches!(classify_line(b"\xff\xfe"), LineKind::NotJson));
        assert!(matches!(
            classify_line(br#"{"jsonrpc":"2.0","id":0,"result":{}}"#),
            LineKind::Message(_)
        ));
        assert!(matches!(
            classify_line(br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#),
            LineKind::Message(_)
        ));
    }

    /// A connection with `tools/call` ids 1 to 9 in flight.
    fn calls_in_flight() -> PendingCalls {
        let calls = PendingCalls::default();
        for id in 1..10 {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo"}}}}"#
            );
            let request: TxJsonRpcMessage<RoleClient> = serde_json::from_str(&line).unwrap();
            calls.sent(&request);
        }
        calls
    }

    fn message(kind: LineKind) -> Option<ServerJsonRpcMessage> {
        match kind {
            LineKind::Message(m) => Some(*m),
            _ => None,
        }
    }

    /// What the direct read must hold to: where rmcp's general read finds a tool's result, the
    /// same message; where it finds anything else, what it found, untouched.
    fn same_as_general_read(line: &str) {
        let calls = calls_in_flight();
        let general = message(classify_line(line.as_bytes()));
        let direct = message(classify_answer(line.as_bytes(), &calls));
        assert_eq!(
            serde_json::to_value(&direct).unwrap(),
            serde_json::to_value(&general).unwrap(),
            "{line}"
        );
    }

    #[test]
    fn answers_to_tool_calls_read_directly_are_what_the_general_read_gives() {
        for line in [
            r#"{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","content":[{"type":"text","text":"hello"}],"isError":false}}"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{"content":[],"structuredContent":{"a":[1,2]},"_meta":{"k":"v"}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{"structuredContent":null}}"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{"isError":true,"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}}"#,
            // Not a tool's result: a task, an input request, an empty or custom result, an error.
            r#"{"jsonrpc":"2.0","id":4,"result":{"resultType":"input_required","inputRequests":{}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{"task":{"taskId":"t","status":"working","createdAt":"2026-01-01T00:00:00Z","ttl":null}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{"custom":1}}"#,
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"bad"}}"#,
            // Not for a call in flight, not a response, not a message.
            r#"{"jsonrpc":"2.0","id":42,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"roots/list"}"#,
            r#"{"jsonrpc":"1.0","id":4,"result":{"content":[]}}"#,
            "not json",
        ] {
            same_as_general_read(line);
        }
    }

    #[test]
    fn the_answer_to_a_call_is_read_as_the_kind_the_call_asked_for() {
        // rmcp's general read guesses the kind from the fields and takes the first that fits.
        let line = r#"{"jsonrpc":"2.0","id":4,"result":{"content":[],"tools":[]}}"#;
        let kind = |m: Option<ServerJsonRpcMessage>| match m {
            Some(JsonRpcMessage::Response(r)) => match r.result {
                ServerResult::CallToolResult(_) => "tools/call",
                ServerResult::ListToolsResult(_) => "tools/list",
                _ => "other",
            },
            _ => "not a response",
        };
        assert_eq!(kind(message(classify_line(line.as_bytes()))), "tools/list");
        let direct = classify_answer(line.as_bytes(), &calls_in_flight());
        assert_eq!(kind(message(direct)), "tools/call");
    }

    #[test]
    fn an_answered_call_is_forgotten_and_the_set_stays_bounded() {
        let calls = calls_in_flight();
        let answer = r#"{"jsonrpc":"2.0","id":4,"result":{"content":[]}}"#;
        let error = r#"{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"no"}}"#;
        assert!(message(classify_answer(answer.as_bytes(), &calls)).is_some());
        assert!(message(classify_answer(error.as_bytes(), &calls)).is_some());
        assert_eq!(calls.lock().len(), 7);
        for id in 0..(PENDING_CALLS_LIMIT as i64 * 2) {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"x"}}}}"#
            );
            calls.sent(&serde_json::from_str(&line).unwrap());
        }
        assert!(calls.lock().len() <= PENDING_CALLS_LIMIT);
    }

    #[tokio::test]
    async fn bounded_reader_drops_long_lines_and_keeps_the_rest() {
        let data = format!("short\n{}\nafter\nlast", "x".repeat(100));
        let mut reader = BufReader::with_capacity(16, data.as_bytes());
        let mut buf = Vec::new();
        let mut seen = Vec::new();
        loop {
            match read_line_bounded(&mut reader, &mut buf, 50).await.unwrap() {
                Line::Complete => seen.push(String::from_utf8(buf.clone()).unwrap()),
                Line::TooLong(n) => seen.push(format!("<too long {n}>")),
                Line::Eof => break,
            }
        }
        assert_eq!(seen, vec!["short", "<too long 100>", "after", "last"]);
    }

    /// What the bounded reader must produce: the bytes split at newlines, a last piece without
    /// one still a line, and a line over `max` replaced by its length.
    fn reference(data: &[u8], max: usize) -> Vec<Result<Vec<u8>, usize>> {
        let mut pieces: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
        if pieces.last().is_some_and(|p| p.is_empty()) {
            pieces.pop();
        }
        pieces
            .into_iter()
            .map(|p| {
                if p.len() > max {
                    Err(p.len())
                } else {
                    Ok(p.to_vec())
                }
            })
            .collect()
    }

    async fn read_all(data: &[u8], capacity: usize, max: usize) -> Vec<Result<Vec<u8>, usize>> {
        let mut reader = BufReader::with_capacity(capacity, data);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            match read_line_bounded(&mut reader, &mut buf, max).await {
                Ok(Line::Complete) => out.push(Ok(buf.clone())),
                Ok(Line::TooLong(n)) => out.push(Err(n)),
                Ok(Line::Eof) | Err(_) => return out,
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        #[test]
        fn bounded_reader_matches_a_plain_split(
            data in proptest::collection::vec(
                proptest::prop_oneof![Just(b'\n'), Just(b'x'), proptest::num::u8::ANY], 0..400),
            capacity in 1usize..40,
            max in 0usize..60,
        ) {
            let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
            let got = rt.block_on(read_all(&data, capacity, max));
            proptest::prop_assert_eq!(got, reference(&data, max));
        }

        #[test]
        fn classify_never_panics(line in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let _ = classify_line(&line);
            let _ = classify_answer(&line, &calls_in_flight());
        }

        /// Results built from the fields of every kind of result: the direct read of a call's
        /// answer is a message exactly when the general read's is, and where the general read
        /// finds a tool's result, it is the same one. (Where the general read guesses another
        /// kind for a call's answer, say `tools` beside `content`, the direct read keeps the
        /// kind the request asked for.)
        #[test]
        fn direct_reads_agree_with_the_general_read(
            fields in proptest::collection::btree_map(
                proptest::sample::select(vec![
                    "content", "structuredContent", "isError", "resultType", "_meta", "tools",
                    "action", "task", "contents", "messages", "nextCursor",
                ]),
                proptest::prop_oneof![
                    Just(serde_json::json!([])),
                    Just(serde_json::json!([{"type": "text", "text": "t"}])),
                    Just(serde_json::json!({})),
                    Just(serde_json::json!(true)),
                    Just(serde_json::json!(null)),
                    Just(serde_json::json!("complete")),
                    Just(serde_json::json!("accept")),
                    Just(serde_json::json!(1)),
                ],
                0..5,
            ),
            id in 0i64..12,
        ) {
            let line = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": fields}).to_string();
            let general = message(classify_line(line.as_bytes()));
            let direct = message(classify_answer(line.as_bytes(), &calls_in_flight()));
            let id_of = |m: &Option<ServerJsonRpcMessage>| match m {
                Some(JsonRpcMessage::Response(r)) => Some(r.id.clone()),
                _ => None,
            };
            proptest::prop_assert_eq!(id_of(&direct), id_of(&general), "{}", line);
            if let Some(JsonRpcMessage::Response(JsonRpcResponse {
                result: ServerResult::CallToolResult(_), ..
            })) = &general {
                proptest::prop_assert_eq!(
                    serde_json::to_value(&direct).unwrap(),
                    serde_json::to_value(&general).unwrap()
                );
            }
        }
    }
}
