//! `demo-server --http --malformed-tools`: the `tools/list` answer (a JSON body, or the SSE
//! event that carries it) also holds the malformed entries stdio's wire fault adds
//! (`wire::add_malformed_tools`), for the client's entry-by-entry reading over HTTP.
//!
//! Separate from `http.rs` because it is the one fault that rewrites what rmcp answers.

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::StreamableHttpService;
use serde_json::Value;

use super::http::{plain, Body};
use super::wire::add_malformed_tools;
use super::DemoServer;

/// Serves `request`, adding the malformed entries to its answer when it is a `tools/list`.
pub(super) async fn with_malformed_tools(
    service: &StreamableHttpService<DemoServer, LocalSessionManager>,
    request: Request<Incoming>,
) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let Ok(body) = body.collect().await.map(|b| b.to_bytes()) else {
        return plain(
            StatusCode::BAD_REQUEST,
            "the request body could not be read",
        );
    };
    let listing = serde_json::from_slice::<Value>(&body)
        .ok()
        .is_some_and(|m| m.get("method").and_then(Value::as_str) == Some("tools/list"));
    let response = service
        .handle(Request::from_parts(parts, Full::new(body)))
        .await;
    if !listing {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // rmcp's bodies cannot fail (their error type is Infallible).
    let Ok(answer) = body.collect().await.map(|b| b.to_bytes());
    let text = String::from_utf8_lossy(&answer);
    let rewritten = match rewrite_json(&text) {
        // A JSON body.
        Some(json) => json,
        // An SSE stream: its `data:` lines.
        None => text
            .split_inclusive('\n')
            .map(|line| match line.strip_prefix("data:") {
                Some(data) => match rewrite_json(data.trim()) {
                    Some(json) => format!("data: {json}\n"),
                    None => line.to_string(),
                },
                None => line.to_string(),
            })
            .collect(),
    };
    parts.headers.remove(http::header::CONTENT_LENGTH);
    Response::from_parts(parts, Full::new(Bytes::from(rewritten)).boxed())
}

/// `text` as a `tools/list` answer with the malformed entries added; `None` when it is not one.
fn rewrite_json(text: &str) -> Option<String> {
    let mut message: Value = serde_json::from_str(text).ok()?;
    let Some(Value::Array(tools)) = message.pointer_mut("/result/tools") else {
        return None;
    };
    add_malformed_tools(tools);
    Some(message.to_string())
}
