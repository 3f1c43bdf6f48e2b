//! The direct HTTP path against a server we play by hand on a real socket, each case over our
//! kept connections and through reqwest, which must come to the same: the request it POSTs,
//! answers in a JSON body and in an event stream (with the server's notifications handed to the
//! tap), a stream resumed with `Last-Event-ID`, one that ends unanswered, an answer that does
//! not read as one, and the error statuses read as rmcp reads them.

#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ServerResult};
use rmcp::service::ServiceError;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;
use crate::mcp::notify::{McpNotification, McpNotificationListener, RoomFuture};
use crate::mcp::transport::http_answer::{exchange, exchange_kept};
use crate::net::http1::Origin;

/// A request as the server got it: its head (request line and headers, lower-cased) and body.
#[derive(Debug, Clone)]
struct Seen {
    head: String,
    body: String,
}

type Respond = dyn Fn(usize, &Seen) -> String + Send + Sync;

/// Serves each request on its own connection with `respond(index, request)`, then closes it.
async fn server(respond: Arc<Respond>) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let mut bytes = Vec::new();
            let mut buf = [0u8; 4096];
            let (head, body) = loop {
                let n = socket.read(&mut buf).await.unwrap_or(0);
                if n == 0 {
                    break (String::new(), String::new());
                }
                bytes.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&bytes).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let head = text[..end].to_lowercase();
                    let length = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length: "))
                        .and_then(|n| n.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    if bytes.len() >= end + 4 + length {
                        break (head, text[end + 4..end + 4 + length].to_string());
                    }
                }
            };
            let request = Seen { head, body };
            let index = {
                let mut log = log.lock().unwrap();
                log.push(request.clone());
                log.len() - 1
            };
            let answer = respond(index, &request);
            let _ = socket.write_all(answer.as_bytes()).await;
            let _ = socket.shutdown().await;
        }
    });
    (url, seen)
}

/// An HTTP/1.1 answer that ends with the connection.
fn http(status: &str, headers: &str, body: &str) -> String {
    format!("HTTP/1.1 {status}\r\n{headers}connection: close\r\n\r\n{body}")
}

fn events(body: &str) -> String {
    http("200 OK", "content-type: text/event-stream\r\n", body)
}

fn ok_result(id: &str, text: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}"#
    )
}

/// Counts what reaches the tap.
#[derive(Default)]
struct Heard(Mutex<Vec<String>>);

impl McpNotificationListener for Heard {
    fn on_notification(&self, n: &McpNotification) {
        self.0.lock().unwrap().push(n.method.clone());
    }
    fn room(&self) -> RoomFuture<'_> {
        Box::pin(async {})
    }
}

/// The two ways a request goes: through reqwest (`https://`, proxies) or over kept
/// connections of our own (`http://`).
enum Plain {
    Reqwest(reqwest::Client),
    Kept(Box<Origin>),
}

impl Exchange for Plain {
    fn exchange(&self, out: Outgoing) -> BoxFuture<'_, Result<Posted, HttpError>> {
        match self {
            Plain::Reqwest(client) => Box::pin(exchange(client, out)),
            Plain::Kept(origin) => Box::pin(exchange_kept(origin, out)),
        }
    }
}

fn calls_by(url: &str, heard: Arc<Heard>, kept: bool) -> HttpCalls {
    let timeout = Duration::from_secs(5);
    let plain = match kept {
        false => Plain::Reqwest(super::super::http::client(timeout, Default::default()).unwrap()),
        true => Plain::Kept(Box::new(
            Origin::for_url(url, timeout).expect("a plain-HTTP origin"),
        )),
    };
    HttpCalls::new(HttpSession {
        client: Arc::new(plain),
        uri: url,
        headers: HashMap::new(),
        protocol_version: "2026-07-28",
        tap: NotificationTap::new(heard),
        server: "s",
    })
    .expect("a URL")
}

fn echo() -> CallToolRequest {
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = serde_json::json!({"text": "hi"}).as_object().cloned();
    CallToolRequest::new(params)
}

fn calls(url: &str, heard: Arc<Heard>) -> HttpCalls {
    calls_by(url, heard, true)
}

/// The call's answer (within 10 s), the requests the server saw and what reached the tap,
/// over kept connections; the same call through reqwest must come to the same.
async fn call(respond: Arc<Respond>) -> (Answer, Vec<Seen>, Vec<String>) {
    let kept = call_by(respond.clone(), true).await;
    let through_reqwest = call_by(respond, false).await;
    assert_eq!(
        format!("{:?}", kept.0),
        format!("{:?}", through_reqwest.0),
        "the answer"
    );
    assert_eq!(kept.2, through_reqwest.2, "the notifications");
    let requests = |seen: &[Seen]| -> Vec<(Vec<String>, String)> {
        seen.iter()
            .map(|s| {
                let mut lines: Vec<String> = s
                    .head
                    .lines()
                    .filter(|l| !l.starts_with("host: "))
                    .map(str::to_string)
                    .collect();
                lines.sort();
                (lines, s.body.clone())
            })
            .collect()
    };
    assert_eq!(
        requests(&kept.1),
        requests(&through_reqwest.1),
        "the requests"
    );
    kept
}

async fn call_by(respond: Arc<Respond>, kept: bool) -> (Answer, Vec<Seen>, Vec<String>) {
    let (url, seen) = server(respond).await;
    let heard = Arc::new(Heard::default());
    let calls = calls_by(&url, heard.clone(), kept);
    let ids = calls.ids();
    let sent = calls
        .send(&SessionMeta::default(), &echo(), None, ids)
        .unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(10), sent.rx)
        .await
        .expect("an answer in time")
        .expect("a post always answers");
    let seen = seen.lock().unwrap().clone();
    let heard = heard.0.lock().unwrap().clone();
    (answer, seen, heard)
}

fn text_of(answer: Answer) -> String {
    match answer {
        Ok(ServerResult::CallToolResult(result)) => serde_json::to_value(&result.content).unwrap()
            [0]["text"]
            .as_str()
            .unwrap()
            .to_string(),
        other => panic!("not a tool's result: {other:?}"),
    }
}

fn http_error(answer: Answer) -> String {
    match answer {
        Err(ServiceError::TransportSend(e)) => e.error.to_string(),
        other => panic!("not a transport error: {other:?}"),
    }
}

#[tokio::test]
async fn a_streamed_answer_ends_the_call_and_the_notifications_before_it_reach_the_tap() {
    let (answer, seen, heard) = call(Arc::new(|_, _| {
        events(&format!(
            "id: 1\nretry: 5\ndata:\n\n\
             data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":\"aimon-1\",\"progress\":1}}}}\n\n\
             data: {}\n\n",
            ok_result("aimon-1", "hi")
        ))
    }))
    .await;
    assert_eq!(text_of(answer), "hi");
    assert_eq!(heard, vec!["notifications/progress"]);
    let post = &seen[0];
    assert!(post.head.starts_with("post /mcp http/1.1"), "{}", post.head);
    for header in [
        "mcp-method: tools/call",
        "mcp-name: echo",
        "mcp-protocol-version: 2026-07-28",
        "accept: text/event-stream, application/json",
        "content-type: application/json",
    ] {
        assert!(post.head.contains(header), "{header} not in {}", post.head);
    }
    let body: serde_json::Value = serde_json::from_str(&post.body).unwrap();
    assert_eq!(body["id"], "aimon-1");
    assert_eq!(body["method"], "tools/call");
    assert_eq!(body["params"]["_meta"]["progressToken"], "aimon-1");
    assert_eq!(body["params"]["arguments"]["text"], "hi");
}

#[tokio::test]
async fn a_json_body_is_the_answer() {
    let (answer, _, _) = call(Arc::new(|_, _| {
        http(
            "200 OK",
            "content-type: application/json\r\n",
            &ok_result("aimon-1", "in a body"),
        )
    }))
    .await;
    assert_eq!(text_of(answer), "in a body");
}

#[tokio::test]
async fn a_stream_that_ends_before_the_answer_is_resumed_from_its_last_event_id() {
    let (answer, seen, _) = call(Arc::new(|index, _| match index {
        0 => events("id: e1\nretry: 10\ndata:\n\n"),
        _ => events(&format!(
            "id: e2\ndata: {}\n\n",
            ok_result("aimon-1", "resumed")
        )),
    }))
    .await;
    assert_eq!(text_of(answer), "resumed");
    assert_eq!(seen.len(), 2);
    assert!(seen[1].head.starts_with("get /mcp"), "{}", seen[1].head);
    assert!(
        seen[1].head.contains("last-event-id: e1"),
        "{}",
        seen[1].head
    );
    assert!(seen[1].head.contains("accept: text/event-stream"));
}

#[tokio::test]
async fn a_stream_that_ends_unanswered_without_ids_fails_the_call_at_once() {
    let (answer, seen, _) = call(Arc::new(|_, _| events(": nothing to say\n\n"))).await;
    assert!(http_error(answer).contains("unexpected end of stream"));
    assert_eq!(seen.len(), 1);
}

#[tokio::test]
async fn error_statuses_read_as_rmcp_reads_them() {
    let (answer, _, _) = call(Arc::new(|_, _| {
        http(
            "401 Unauthorized",
            "www-authenticate: Bearer resource_metadata=\"x\"\r\ncontent-length: 0\r\n",
            "",
        )
    }))
    .await;
    assert!(matches!(
        answer,
        Err(ServiceError::TransportSend(ref e))
            if matches!(e.error.downcast_ref::<HttpError>(), Some(HttpError::AuthRequired(_)))
    ));
    let (answer, _, _) = call(Arc::new(|_, _| {
        http(
            "500 Internal Server Error",
            "content-type: application/json\r\n",
            r#"{"jsonrpc":"2.0","id":"aimon-1","error":{"code":-32603,"message":"it broke"}}"#,
        )
    }))
    .await;
    assert!(
        matches!(answer, Err(ServiceError::McpError(ref e)) if e.message == "it broke"),
        "{answer:?}"
    );
    let (answer, _, _) = call(Arc::new(|_, _| {
        http("503 Service Unavailable", "retry-after: 7\r\n", "down")
    }))
    .await;
    assert_eq!(http_error(answer), "HTTP 503");
    let (answer, _, _) = call(Arc::new(|_, _| {
        http(
            "404 Not Found",
            "content-type: text/plain\r\n",
            "no such path",
        )
    }))
    .await;
    assert!(http_error(answer).contains("HTTP 404 Not Found: no such path"));
    let (answer, _, _) = call(Arc::new(|_, _| {
        http("202 Accepted", "content-length: 0\r\n", "")
    }))
    .await;
    assert!(http_error(answer).contains("HTTP 202 Accepted: no answer to the call"));
    let (answer, _, _) = call(Arc::new(|_, _| {
        http("200 OK", "content-type: application/json\r\n", "{\"no\":1}")
    }))
    .await;
    let words = http_error(answer);
    assert!(words.contains(UNPARSED_ANSWER), "{words}");
}

#[tokio::test]
async fn an_answer_in_the_stream_that_does_not_read_as_one_fails_the_call_at_once() {
    // What no message can be is passed over; a message that answers the call but is no
    // JSON-RPC message (version 1.0) ends it, in the words of an unreadable body (passed over
    // too, the stream's end would fail the call with other words).
    let (answer, _, _) = call(Arc::new(|_, _| {
        events(
            "data: not json at all\n\n\
             data: {\"jsonrpc\":\"1.0\",\"id\":\"aimon-1\",\"result\":{\"content\":[]}}\n\n",
        )
    }))
    .await;
    let words = http_error(answer);
    assert!(words.contains(UNPARSED_ANSWER), "{words}");
    assert!(words.contains("\"jsonrpc\":\"1.0\""), "{words}");
}

#[test]
fn calls_whose_headers_need_rmcp_go_its_way() {
    let calls = calls("http://127.0.0.1:9/mcp", Arc::default());
    assert!(calls.takes("echo"));
    for name in ["", "two words", "naïve", "=?base64?eA==?="] {
        assert!(!calls.takes(name), "{name:?}");
    }
    calls.set_headed(HashSet::from(["route".to_string()]));
    assert!(!calls.takes("route"));
    assert!(calls.takes("echo"));
}
