//! One request of the direct HTTP path (`http_direct.rs`) sent, and its answer's head read as
//! rmcp's reqwest client reads it: a challenge on a 401 or 403 is a refusal, 429 and 5xx are
//! statuses (a JSON-RPC error in a JSON error body is the answer), any other error status is
//! said with the start of its body, and the body is JSON (read within the limit) or an event
//! stream. The same errors as rmcp's, so the client words them the same way.
//!
//! Sent over reqwest (the server's own client: TLS, proxies) or, to an `http://` URL that no
//! proxy setting catches, over kept connections of hyper's own (`net::http1`), which spare a
//! loopback call reqwest's layers.

use std::borrow::Cow;
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use http::header::{CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderMap, Method, StatusCode};
use http_body_util::BodyExt;
use rmcp::model::{JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{EVENT_STREAM_MIME_TYPE, JSON_MIME_TYPE};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpError,
};

use crate::net::http1::Origin;

pub type HttpError = StreamableHttpError<reqwest::Error>;

/// After the answer, how long the rest of its stream may take to end (so that the connection
/// is kept) before it is dropped; rmcp waits as long.
const DRAIN: Duration = Duration::from_millis(50);

/// One request of the direct path, as the server's HTTP client sends it.
#[derive(Clone)]
pub struct Outgoing {
    pub(super) url: reqwest::Url,
    pub(super) headers: HeaderMap,
    /// The POST's body; `None` for a GET resuming the answer's stream.
    pub(super) body: Option<Bytes>,
    pub(super) limits: Limits,
}

impl Outgoing {
    /// A POST (a call), not a GET resuming one's stream.
    pub fn is_post(&self) -> bool {
        self.body.is_some()
    }
}

#[derive(Clone, Copy)]
pub(super) struct Limits {
    pub json: usize,
    pub error: usize,
}

/// What answered a request: a JSON body (read whole, within the limit), or an event stream.
pub enum Posted {
    Json(Bytes),
    Events(Body),
}

/// The server's HTTP client: sends a request of the direct path with whatever that client
/// does around one (the OAuth layer's verdict on a refusal, `mcp::auth`).
pub trait Exchange: Send + Sync + 'static {
    fn exchange(&self, out: Outgoing) -> BoxFuture<'_, Result<Posted, HttpError>>;
}

/// An answer's body as it arrives, from either way of sending.
pub enum Body {
    Reqwest(reqwest::Body),
    Kept(hyper::body::Incoming),
}

impl Body {
    /// The next piece of data; `None` at the end.
    pub(super) async fn chunk(&mut self) -> Result<Option<Bytes>, HttpError> {
        loop {
            let frame = match self {
                Body::Reqwest(body) => body.frame().await.transpose().map_err(HttpError::Client)?,
                Body::Kept(body) => body.frame().await.transpose().map_err(io)?,
            };
            match frame.map(|f| f.into_data()) {
                None => return Ok(None),
                Some(Ok(data)) => return Ok(Some(data)),
                // Trailers: no data.
                Some(Err(_)) => continue,
            }
        }
    }

    fn exact_len(&self) -> Option<u64> {
        use hyper::body::Body as _;
        match self {
            Body::Reqwest(body) => body.size_hint().exact(),
            Body::Kept(body) => body.size_hint().exact(),
        }
    }
}

/// A hyper error as rmcp's error has room for it; the error's chain still reaches it (a server
/// that closed the connection is told by it, `http::server_gone`).
fn io(e: hyper::Error) -> HttpError {
    HttpError::Io(std::io::Error::other(e))
}

/// Sends `out` with `client` and reads the answer's head.
pub async fn exchange(client: &reqwest::Client, out: Outgoing) -> Result<Posted, HttpError> {
    let request = match out.body {
        Some(body) => client.post(out.url).headers(out.headers).body(body),
        None => client.get(out.url).headers(out.headers),
    };
    let response = request.send().await.map_err(HttpError::Client)?;
    let (head, body) = http::Response::from(response).into_parts();
    read_head(head.status, &head.headers, Body::Reqwest(body), out.limits).await
}

/// Sends `out` on `origin`'s kept connections and reads the answer's head.
pub async fn exchange_kept(origin: &Origin, out: Outgoing) -> Result<Posted, HttpError> {
    let (method, body) = match out.body {
        Some(body) => (Method::POST, body),
        None => (Method::GET, Bytes::new()),
    };
    let response = origin
        .send(method, out.headers, body)
        .await
        .map_err(|e| HttpError::Io(std::io::Error::other(e.cause)))?;
    let (head, body) = response.into_parts();
    read_head(head.status, &head.headers, Body::Kept(body), out.limits).await
}

async fn read_head(
    status: StatusCode,
    headers: &HeaderMap,
    response: Body,
    limits: Limits,
) -> Result<Posted, HttpError> {
    let challenge = headers
        .get(WWW_AUTHENTICATE)
        .map(|h| String::from_utf8_lossy(h.as_bytes()).into_owned());
    match (status, challenge) {
        (StatusCode::UNAUTHORIZED, Some(challenge)) => {
            return Err(HttpError::AuthRequired(AuthRequiredError::new(challenge)))
        }
        (StatusCode::FORBIDDEN, Some(challenge)) => {
            return Err(HttpError::InsufficientScope(InsufficientScopeError::new(
                challenge, None,
            )))
        }
        _ => {}
    }
    let kind = content_type(headers);
    if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
        // Right for a notification, not for a call: no answer would ever come (rmcp waits for
        // one on the session's other streams, which a 2026-07-28 session does not have).
        return Err(HttpError::UnexpectedServerResponse(Cow::Owned(format!(
            "HTTP {status}: no answer to the call"
        ))));
    }
    if status.is_success() {
        return match kind {
            Some(Kind::Events) => Ok(Posted::Events(response)),
            Some(Kind::Json) => Ok(Posted::Json(whole(response, limits.json).await?)),
            None => Err(HttpError::UnexpectedContentType(
                headers
                    .get(CONTENT_TYPE)
                    .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
            )),
        };
    }
    let metadata = || {
        let retry_after = headers
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        HttpStatusError::new(status.as_u16(), retry_after)
    };
    let as_status = status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
    let json = kind == Some(Kind::Json);
    if as_status && (!json || status == StatusCode::TOO_MANY_REQUESTS) {
        return Err(metadata().into());
    }
    let refused = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
    let status_error = as_status.then(metadata);
    let text = if json && !refused {
        let full = whole(response, limits.json).await?;
        let error = serde_json::from_slice::<ServerJsonRpcMessage>(&full);
        if let Ok(JsonRpcMessage::Error(_)) = error {
            return Ok(Posted::Json(full));
        }
        String::from_utf8_lossy(&full[..full.len().min(limits.error)]).into_owned()
    } else {
        prefix(response, limits.error).await
    };
    Err(match status_error {
        Some(error) => error.into(),
        None => HttpError::UnexpectedServerResponse(Cow::Owned(format!("HTTP {status}: {text}"))),
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Json,
    Events,
}

fn content_type(headers: &HeaderMap) -> Option<Kind> {
    let value = headers.get(CONTENT_TYPE)?.to_str().ok()?;
    let media = value.split(';').next()?.trim();
    if media.eq_ignore_ascii_case(JSON_MIME_TYPE) {
        Some(Kind::Json)
    } else if media.eq_ignore_ascii_case(EVENT_STREAM_MIME_TYPE) {
        Some(Kind::Events)
    } else {
        None
    }
}

/// The whole body, or an error once it passes `limit` bytes (before reading, when its length
/// says so).
async fn whole(mut body: Body, limit: usize) -> Result<Bytes, HttpError> {
    let too_large = || HttpError::ResponseBodyTooLarge { max_size: limit };
    let length = body.exact_len();
    if length.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut all = Vec::new();
    while let Some(chunk) = body.chunk().await? {
        if all.len() + chunk.len() > limit {
            return Err(too_large());
        }
        if all.is_empty() && length == Some(chunk.len() as u64) {
            return Ok(chunk);
        }
        all.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(all))
}

/// At most `limit` bytes of the body, as text; a body that fails midway says what came.
async fn prefix(mut body: Body, limit: usize) -> String {
    let mut kept = Vec::new();
    while kept.len() < limit {
        match body.chunk().await {
            Ok(Some(chunk)) => {
                kept.extend_from_slice(&chunk[..chunk.len().min(limit - kept.len())])
            }
            _ => break,
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// Lets the rest of an answered stream end, so that its connection is kept, unless it has.
pub(super) fn drain(mut body: Body) {
    if let Some(Ok(None)) = body.chunk().now_or_never() {
        return;
    }
    tokio::spawn(async move {
        let rest = async { while let Ok(Some(_)) = body.chunk().await {} };
        let _ = tokio::time::timeout(DRAIN, rest).await;
    });
}
