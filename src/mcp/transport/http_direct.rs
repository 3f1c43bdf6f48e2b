//! A `tools/call` over Streamable HTTP without rmcp's service and transport worker (`direct.rs`
//! says why): the caller POSTs the request it built from its parts and reads the answer itself,
//! a JSON body or the events of the POST's stream.
//!
//! Taken on sessions of revision 2026-07-28 on, which have no session id (nothing to expire
//! and re-initialise) and no `notifications/cancelled` over HTTP: a call is cancelled by
//! dropping its request, which is what dropping the caller's [`Reply`] does. Only where the
//! server's HTTP client sends requests plainly (no OAuth client on it: a refused token is
//! refreshed and sent again by rmcp's), and only for calls whose headers need nothing of rmcp's
//! (a tool name that goes in `Mcp-Name` as it is, a tool without `x-mcp-header` parameters).
//!
//! The answer's head is read as rmcp's HTTP client reads it (`http_answer.rs`), so a refusal,
//! an error status, a JSON-RPC error in an error body, or a body over the limit become the same
//! errors, and the client words them the same way. In the stream, the answer ends the call; the
//! server's notifications (progress, log messages) go to the session's tap as they would through
//! rmcp; a stream that ends before the answer is resumed with `Last-Event-ID` when the server
//! gave its events ids (SEP-1699), after the `retry` it asked for.

// Logging is SEP-2577-deprecated in rmcp; the servers of today still use it.
#![allow(deprecated)]

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequest, JsonRpcMessage, LoggingLevel, ProgressToken, RequestId, ServerJsonRpcMessage,
};
use rmcp::service::ServiceError;
use rmcp::transport::common::http_header::{
    BASE64_HEADER_PREFIX, EVENT_STREAM_MIME_TYPE, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::StreamableHttpResponseLimits;
use rmcp::transport::DynamicTransportError;

use super::direct::{Answer, Ids, Reply, Sent};
use super::http::UNPARSED_ANSWER;
use super::http_answer::{drain, Body, Exchange, HttpError, Limits, Outgoing, Posted};
use super::outbound::{direct_call_line, SessionMeta};
use super::tap;
use crate::mcp::notify::NotificationTap;
use crate::sse::{SseEvent, SseParser};

/// The wait before resuming a stream when the server asked for none, doubling each time, up to
/// [`MAX_RESUME_WAIT`] (rmcp's default policy doubles from 1 s too). The call's own deadline
/// ends the resuming.
const FIRST_RESUME_WAIT: Duration = Duration::from_secs(1);
const MAX_RESUME_WAIT: Duration = Duration::from_secs(30);
/// How much of an error body goes into the error's words.
const ERROR_PREFIX: usize = 4096;

// The headers of SEP-2243 and of resuming, as rmcp names them (lower case, as `HeaderName`
// keeps them).
const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// Makes `tools/call` requests the direct way on one Streamable HTTP session; cheap to clone.
#[derive(Clone)]
pub struct HttpCalls(Arc<Inner>);

struct Inner {
    client: Arc<dyn Exchange>,
    /// Parsed once (reqwest parses a URL given as text on every request).
    url: reqwest::Url,
    /// A call's headers but its `Mcp-Name`: the server's own, its bearer token, the revision,
    /// `Mcp-Method`, what is accepted and sent.
    post: HeaderMap,
    /// A resuming GET's headers but its `Last-Event-ID`.
    get: HeaderMap,
    limits: Limits,
    max_event: usize,
    ids: Ids,
    /// Tools whose schema names `x-mcp-header` parameters: rmcp puts them in headers, so their
    /// calls go its way.
    headed: Mutex<HashSet<String>>,
    tap: NotificationTap,
    server: String,
}

/// What an HTTP session's direct calls are made with.
pub struct HttpSession<'a> {
    pub client: Arc<dyn Exchange>,
    pub uri: &'a str,
    /// The server's own headers and its bearer token (`http::headers(config, true)`).
    pub headers: HashMap<HeaderName, HeaderValue>,
    pub protocol_version: &'a str,
    pub tap: NotificationTap,
    pub server: &'a str,
}

impl HttpCalls {
    /// `None` when the server's URL does not parse (the loader has checked it: never).
    pub fn new(session: HttpSession<'_>) -> Option<HttpCalls> {
        let url = reqwest::Url::parse(session.uri).ok()?;
        let mut get: HeaderMap = session.headers.into_iter().collect();
        if let Ok(version) = HeaderValue::from_str(session.protocol_version) {
            get.insert(MCP_PROTOCOL_VERSION, version);
        }
        let mut post = get.clone();
        post.insert(
            ACCEPT,
            HeaderValue::from_static("text/event-stream, application/json"),
        );
        post.insert(CONTENT_TYPE, HeaderValue::from_static(JSON_MIME_TYPE));
        post.insert(MCP_METHOD, HeaderValue::from_static("tools/call"));
        get.insert(ACCEPT, HeaderValue::from_static(EVENT_STREAM_MIME_TYPE));
        let limits = StreamableHttpResponseLimits::default();
        Some(HttpCalls(Arc::new(Inner {
            client: session.client,
            url,
            post,
            get,
            limits: Limits {
                json: limits.max_json_response_size,
                error: limits.max_error_response_size.min(ERROR_PREFIX),
            },
            max_event: limits.max_sse_event_size,
            ids: Ids::default(),
            headed: Mutex::default(),
            tap: session.tap,
            server: session.server.to_string(),
        })))
    }

    /// See [`DirectCalls::ids`](super::direct::DirectCalls::ids).
    pub fn ids(&self) -> (RequestId, ProgressToken) {
        self.0.ids.next()
    }

    /// The tools listed last whose schema names `x-mcp-header` parameters.
    pub fn set_headed(&self, tools: HashSet<String>) {
        *self.0.headed.lock().unwrap_or_else(|e| e.into_inner()) = tools;
    }

    /// Whether a call of `tool` goes this way: its name fits `Mcp-Name` as it is (rmcp would
    /// wrap any other in base64) and it has no `x-mcp-header` parameters.
    pub fn takes(&self, tool: &str) -> bool {
        !tool.is_empty()
            && tool.bytes().all(|b| b.is_ascii_graphic())
            && !tool.starts_with(BASE64_HEADER_PREFIX)
            && !self
                .0
                .headed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(tool)
    }

    /// `call` under `ids`, with the session's `_meta` and the log level asked for: the POST
    /// goes when the caller first polls the reply.
    pub fn send(
        &self,
        session: &SessionMeta,
        call: &CallToolRequest,
        level: Option<LoggingLevel>,
        (id, progress_token): (RequestId, ProgressToken),
    ) -> std::io::Result<Sent> {
        let body = direct_call_line(&id, session, call, level, &progress_token)?;
        let name = HeaderValue::from_str(&call.params.name).map_err(std::io::Error::other)?;
        let mut headers = self.0.post.clone();
        headers.insert(MCP_NAME, name);
        let out = Outgoing {
            url: self.0.url.clone(),
            headers,
            body: Some(Bytes::from(body)),
            limits: self.0.limits,
        };
        let calls = self.clone();
        let answering = id.clone();
        Ok(Sent {
            rx: Reply::Post(Box::pin(async move { calls.answer(out, &answering).await })),
            id,
            progress_token,
            waiting: None,
        })
    }

    /// The answer to the call `out` makes: from its JSON body, or from its stream, resumed
    /// while it ends before the answer and the server gave its events ids.
    async fn answer(&self, out: Outgoing, id: &RequestId) -> Answer {
        let mut posted = self.0.client.exchange(out).await;
        let mut parser = SseParser::with_limit(self.0.max_event);
        let mut wait = FIRST_RESUME_WAIT;
        loop {
            let ended = match posted.map_err(failed)? {
                Posted::Json(body) => return read_json(&body, id),
                Posted::Events(response) => match self.events(response, &mut parser, id).await {
                    Ok(answer) => return answer,
                    Err(Ended::ForGood(e)) => return Err(failed(e)),
                    Err(Ended::Early(e)) => e,
                },
            };
            let Some(last) = parser.last_event_id().map(str::to_string) else {
                return Err(failed(ended));
            };
            let Ok(last) = HeaderValue::from_str(&last) else {
                return Err(failed(ended));
            };
            let pause = match parser.retry() {
                Some(asked) => asked,
                None => {
                    let next = (wait * 2).min(MAX_RESUME_WAIT);
                    std::mem::replace(&mut wait, next)
                }
            };
            tracing::debug!(server = %self.0.server, ?pause, "the answer's stream ended early: resuming it");
            tokio::time::sleep(pause).await;
            let mut headers = self.0.get.clone();
            headers.insert(LAST_EVENT_ID, last);
            parser = parser.resumed();
            posted = self
                .0
                .client
                .exchange(Outgoing {
                    url: self.0.url.clone(),
                    headers,
                    body: None,
                    limits: self.0.limits,
                })
                .await;
        }
    }

    /// Reads `response`'s events until the answer to `id`.
    async fn events(
        &self,
        mut response: Body,
        parser: &mut SseParser,
        id: &RequestId,
    ) -> Result<Answer, Ended> {
        let mut ready = VecDeque::new();
        loop {
            while let Some(event) = ready.pop_front() {
                if let Some(answer) = self.event(event, id).await {
                    drain(response);
                    return Ok(answer);
                }
            }
            match response.chunk().await {
                Ok(Some(bytes)) => {
                    if parser.feed(&bytes, &mut ready).is_err() {
                        return Err(Ended::ForGood(HttpError::ResponseBodyTooLarge {
                            max_size: self.0.max_event,
                        }));
                    }
                }
                Ok(None) => return Err(Ended::Early(HttpError::UnexpectedEndOfStream)),
                Err(e) => return Err(Ended::Early(e)),
            }
        }
    }

    /// One event of the answer's stream: the answer to `id`, or `None` (a notification, handed
    /// to the session's tap; anything else, which has no business there, logged and dropped).
    async fn event(&self, event: SseEvent, id: &RequestId) -> Option<Answer> {
        let bytes = event.data.as_bytes();
        if bytes.is_empty() {
            // A priming event: only its id matters (kept by the parser).
            return None;
        }
        if let Some((answered, result)) = super::answers::call_answer(bytes) {
            if answered == *id {
                return Some(Ok(rmcp::model::ServerResult::CallToolResult(result)));
            }
        }
        match serde_json::from_slice::<ServerJsonRpcMessage>(bytes) {
            Ok(message @ JsonRpcMessage::Notification(_)) => {
                tap::deliver(&self.0.tap, &self.0.server, &message).await;
                None
            }
            Ok(message) => match answer_to(message, id) {
                Ok(answer) => Some(answer),
                Err(other) => {
                    tracing::warn!(server = %self.0.server, message = ?other, "not the call's answer, in its stream: dropped");
                    None
                }
            },
            // An answer to this call that does not read as one fails it now (as an unreadable
            // JSON body does), rather than leave it to its deadline; anything else is dropped.
            Err(e) if answers_id(bytes, id) => Some(Err(failed(unreadable(&e, bytes)))),
            Err(e) => {
                tracing::warn!(server = %self.0.server, error = %e, "an event in a call's stream is no JSON-RPC message: dropped");
                None
            }
        }
    }
}

/// How a stream ended before the answer.
enum Ended {
    /// It closed or broke: resumable.
    Early(HttpError),
    /// An event over the limit.
    ForGood(HttpError),
}

/// `message` as the answer to `id` (an error without an id, in this request's own body or
/// stream, is its answer too), or the message back when it is something else.
fn answer_to(
    message: ServerJsonRpcMessage,
    id: &RequestId,
) -> Result<Answer, Box<ServerJsonRpcMessage>> {
    match message {
        JsonRpcMessage::Response(response) if response.id == *id => Ok(Ok(response.result)),
        JsonRpcMessage::Error(error) if error.id.as_ref().is_none_or(|got| got == id) => {
            Ok(Err(ServiceError::McpError(error.error)))
        }
        other => Err(Box::new(other)),
    }
}

/// Whether `bytes` is a JSON object that answers `id` (it has its id, and a result or an error).
fn answers_id(bytes: &[u8], id: &RequestId) -> bool {
    let Ok(serde_json::Value::Object(message)) = serde_json::from_slice(bytes) else {
        return false;
    };
    let answer = message.contains_key("result") || message.contains_key("error");
    answer
        && message
            .get("id")
            .and_then(|got| serde_json::from_value::<RequestId>(got.clone()).ok())
            .is_some_and(|got| got == *id)
}

/// A body or event that was meant as an answer and is no JSON-RPC message, in the words rmcp
/// uses for it (`http::unreadable_answer` reads them).
fn unreadable(e: &serde_json::Error, bytes: &[u8]) -> HttpError {
    HttpError::UnexpectedServerResponse(Cow::Owned(format!(
        "{UNPARSED_ANSWER}{e}: {}",
        String::from_utf8_lossy(&bytes[..bytes.len().min(256)])
    )))
}

/// A JSON body as the answer to `id`.
fn read_json(body: &[u8], id: &RequestId) -> Answer {
    if let Some((answered, result)) = super::answers::call_answer(body) {
        if answered == *id {
            return Ok(rmcp::model::ServerResult::CallToolResult(result));
        }
    }
    let unexpected = |text: String| failed(HttpError::UnexpectedServerResponse(Cow::Owned(text)));
    match serde_json::from_slice::<ServerJsonRpcMessage>(body) {
        Ok(message) => answer_to(message, id).unwrap_or_else(|other| {
            Err(unexpected(format!(
                "the body answering the call is not its answer: {}",
                crate::text::sanitize_line(&format!("{other:?}"), 200)
            )))
        }),
        Err(e) => Err(failed(unreadable(&e, body))),
    }
}

/// A failed exchange as rmcp's service reports a failed send (the client words it from there).
fn failed(e: HttpError) -> ServiceError {
    ServiceError::TransportSend(DynamicTransportError::from_parts(
        "streamable-http (direct)",
        std::any::TypeId::of::<HttpCalls>(),
        Box::new(e),
    ))
}

#[cfg(test)]
#[path = "http_direct_tests.rs"]
mod tests;
