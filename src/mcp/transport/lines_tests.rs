//! Tests of `lines.rs`: the bounded reader against a plain split, and the reader's handling of
//! answers it cannot read, over a real pipe pair.

use super::*;
use proptest::strategy::Just;
use tokio::io::AsyncWriteExt;

#[tokio::test]
async fn bounded_reader_drops_long_lines_and_keeps_the_rest() {
    let data = format!("short\n{}\nafter\nlast", "x".repeat(100));
    let mut reader = BufReader::with_capacity(16, data.as_bytes());
    let mut buf = LineBuf::default();
    let mut seen = Vec::new();
    loop {
        match read_line_bounded(&mut reader, &mut buf, 50).await.unwrap() {
            Line::Complete => seen.push((String::from_utf8(buf.line.clone()).unwrap(), buf.cut)),
            Line::TooLong(n) => seen.push((format!("<too long {n}>"), buf.cut)),
            Line::Eof => break,
        }
    }
    let seen: Vec<(&str, bool)> = seen.iter().map(|(l, c)| (l.as_str(), *c)).collect();
    assert_eq!(
        seen,
        [
            ("short", false),
            ("<too long 100>", false),
            ("after", false),
            ("last", true)
        ]
    );
}

#[tokio::test]
async fn a_long_line_keeps_its_first_and_last_bytes() {
    let line = format!("{{\"id\":7,{}\"end\":1}}\n", "x".repeat(3 * TAIL_BYTES));
    let mut reader = BufReader::with_capacity(1000, line.as_bytes());
    let mut buf = LineBuf::default();
    let read = read_line_bounded(&mut reader, &mut buf, 2000)
        .await
        .unwrap();
    assert_eq!(read, Line::TooLong(line.len() - 1));
    assert!(buf.line.starts_with(b"{\"id\":7,xx"));
    assert!(buf.tail.ends_with(b"xx\"end\":1}"));
    assert!(buf.tail.len() >= TAIL_BYTES && buf.tail.len() <= 2 * TAIL_BYTES);
}

#[tokio::test]
async fn a_long_line_does_not_keep_its_buffer_and_the_next_reads_whole() {
    let data = format!("{}\nshort\n", "x".repeat(200_000));
    let mut reader = BufReader::new(data.as_bytes());
    let mut buf = LineBuf::default();
    let read = read_line_bounded(&mut reader, &mut buf, MAX_LINE_BYTES)
        .await
        .unwrap();
    assert_eq!((read, buf.line.len()), (Line::Complete, 200_000));
    buf.settle();
    assert!(
        buf.line.capacity() <= KEPT_CAPACITY,
        "{}",
        buf.line.capacity()
    );
    let read = read_line_bounded(&mut reader, &mut buf, MAX_LINE_BYTES)
        .await
        .unwrap();
    assert_eq!((read, buf.line.as_slice()), (Line::Complete, &b"short"[..]));
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
    let mut buf = LineBuf::default();
    let mut out = Vec::new();
    loop {
        match read_line_bounded(&mut reader, &mut buf, max).await {
            Ok(Line::Complete) => out.push(Ok(buf.line.clone())),
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
}

/// A transport over an in-process pipe pair, its server end and its issues.
struct Wire {
    transport: LineTransport,
    server: tokio::io::DuplexStream,
    issues: Arc<Mutex<StdoutIssues>>,
}

/// A transport of server `s` reading `read` and writing `write` (in-process pipes), with no
/// tap, and the issues its reader fills. Also the direct path's tests' (`direct_tests.rs`).
pub(in crate::mcp::transport) fn over(
    read: tokio::io::DuplexStream,
    write: tokio::io::DuplexStream,
) -> (LineTransport, Arc<Mutex<StdoutIssues>>) {
    let issues = Arc::new(Mutex::new(StdoutIssues::default()));
    let transport = LineTransport::new(
        read,
        write,
        std::future::pending(),
        LineContext {
            server: "s".into(),
            tap: NotificationTap::none(),
            issues: issues.clone(),
        },
    );
    (transport, issues)
}

fn wire() -> Wire {
    let (client_read, server_write) = tokio::io::duplex(1 << 20);
    let (server_read, client_write) = tokio::io::duplex(1 << 20);
    drop(server_read);
    let (transport, issues) = over(client_read, client_write);
    Wire {
        transport,
        server: server_write,
        issues,
    }
}

impl Wire {
    async fn ask(&mut self, id: i64, method: &str) {
        let params = if method == "tools/call" {
            r#","params":{"name":"echo"}"#
        } else {
            ""
        };
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"{params}}}"#);
        let request: TxJsonRpcMessage<RoleClient> = serde_json::from_str(&line).unwrap();
        // The server end reads nothing: the write goes into the pipe's buffer or fails, and
        // either way the request is in flight.
        let _ = self.transport.send(request).await;
    }

    async fn answer(&mut self, bytes: &[u8]) {
        self.server.write_all(bytes).await.unwrap();
        self.server.write_all(b"\n").await.unwrap();
    }

    /// The next message rmcp would get: the error answer for `id`, with its message.
    async fn error_for(&mut self) -> (Option<RequestId>, String) {
        let got = tokio::time::timeout(Duration::from_secs(5), self.transport.receive())
            .await
            .expect("a message in time")
            .expect("a message");
        match got {
            JsonRpcMessage::Error(e) => (e.id, e.error.message.to_string()),
            other => panic!("not an error: {other:?}"),
        }
    }

    fn take_failed(&self, id: i64) -> Option<String> {
        self.issues
            .lock()
            .unwrap()
            .take_failed(&RequestId::Number(id))
    }
}

#[tokio::test]
async fn an_unreadable_answer_fails_the_request_it_answered_and_says_why() {
    let mut w = wire();
    w.ask(1, "tools/call").await;
    w.ask(2, "tools/call").await;
    w.answer(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}}")
        .await;
    let (id, message) = w.error_for().await;
    assert_eq!(id, Some(RequestId::Number(2)));
    assert!(message.contains("invalid UTF-8 at byte 68"), "{message}");
    let why = w.take_failed(2).expect("request 2 failed");
    assert!(why.contains("tools/call (request 2)"), "{why}");
    assert_eq!(w.take_failed(1), None, "request 1 still waits");

    w.answer(
        br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]},"error":{"code":1,"message":"m"}}"#,
    )
    .await;
    let (id, message) = w.error_for().await;
    assert_eq!(id, Some(RequestId::Number(1)));
    assert!(message.contains("both `result` and `error`"), "{message}");
    let warnings = w.issues.lock().unwrap().warnings();
    assert!(
        warnings.iter().any(|w| w.starts_with(
            "2 answers could not be read, first: request 2 (tools/call): invalid UTF-8"
        )),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn an_answer_over_the_limit_fails_its_request_naming_the_size() {
    let mut w = wire();
    w.ask(4, "tools/call").await;
    // The id last, as the TypeScript SDK writes it.
    let text = "x".repeat(MAX_LINE_BYTES);
    let line = format!(
        r#"{{"result":{{"content":[{{"type":"text","text":"{text}"}}]}},"jsonrpc":"2.0","id":4}}"#
    );
    let writer = tokio::spawn(async move {
        let mut server = w.server;
        server.write_all(line.as_bytes()).await.unwrap();
        server.write_all(b"\n").await.unwrap();
        server
    });
    let got = tokio::time::timeout(Duration::from_secs(10), w.transport.receive())
        .await
        .expect("in time")
        .expect("a message");
    let JsonRpcMessage::Error(e) = got else {
        panic!("not an error: {got:?}")
    };
    assert_eq!(e.id, Some(RequestId::Number(4)));
    let size = MAX_LINE_BYTES + 73;
    assert!(
        e.error
            .message
            .contains(&format!("{size} bytes, over the 16 MiB line limit")),
        "{}",
        e.error.message
    );
    drop(writer.await);
}

#[tokio::test]
async fn an_unreadable_line_with_no_id_fails_every_pending_request_and_names_the_line() {
    let mut w = wire();
    w.ask(1, "initialize").await;
    w.ask(2, "tools/list").await;
    w.answer(br#"{"jsonrpc":"2.0","result":{"tools":[]},"error":{"code":1,"message":"m"}}"#)
        .await;
    let mut ids = vec![w.error_for().await.0, w.error_for().await.0];
    ids.sort_by_key(|id| id.as_ref().map(ToString::to_string));
    assert_eq!(
        ids,
        [Some(RequestId::Number(1)), Some(RequestId::Number(2))]
    );
    let why = w.take_failed(2).expect("request 2 failed");
    assert!(why.contains("a line with no id"), "{why}");
    assert!(
        why.contains(r#"{"jsonrpc":"2.0","result""#),
        "the line is quoted: {why}"
    );
}

#[tokio::test]
async fn lines_that_are_not_answers_are_warnings_only() {
    let mut w = wire();
    w.ask(1, "tools/call").await;
    // A banner, a notification that is not one we know, an answer to nothing pending.
    w.answer(b"starting up...").await;
    w.answer(br#"{"jsonrpc":"2.0","method":"x/y","params":5,"result":1}"#)
        .await;
    w.answer(br#"{"jsonrpc":"2.0","id":9,"result":{},"error":{"code":1,"message":"m"}}"#)
        .await;
    w.answer(br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#)
        .await;
    let got = tokio::time::timeout(Duration::from_secs(5), w.transport.receive())
        .await
        .expect("in time")
        .expect("a message");
    assert!(
        matches!(&got, JsonRpcMessage::Response(r) if r.id == RequestId::Number(1)),
        "request 1's own answer comes through: {got:?}"
    );
    let warnings = w.issues.lock().unwrap().warnings();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(
        warnings[2].contains("request 9, which was not pending"),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn skipped_tool_entries_are_kept_for_the_client_by_request() {
    let mut w = wire();
    w.ask(3, "tools/list").await;
    w.answer(br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"a","inputSchema":{}},{"name":"b"}]}}"#)
        .await;
    let got = w.transport.receive().await.expect("a message");
    assert!(matches!(got, JsonRpcMessage::Response(_)), "{got:?}");
    let entries = w
        .issues
        .lock()
        .unwrap()
        .take_tool_page(&RequestId::Number(3));
    let entries = entries.expect("the page's entries");
    assert_eq!(entries.tools.len(), 1, "{entries:?}");
    assert_eq!(entries.skipped.len(), 1, "{entries:?}");
    assert!(w
        .issues
        .lock()
        .unwrap()
        .take_tool_page(&RequestId::Number(3))
        .is_none());
}
