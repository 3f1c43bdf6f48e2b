//! The demo model (`aimon-console demo-model`): an OpenAI-compatible Chat Completions endpoint
//! on loopback that answers by the fixed rules of `model_rules.rs` (or a script), streamed or
//! whole, and breaks on demand: an error status (with `Retry-After`), an empty stream, a chunk
//! that is not JSON, a stream cut short, no answer at all.
//!
//! A small hyper 1 server, like `demo-server --http`: the agent reaches it through the same
//! HTTP client as a real endpoint, so the example config works offline and the tests exercise
//! every failure class over a real socket.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::net::TcpListener;

use super::model_rules::{answer, Answer, Rules};

/// The model name the demo model reports (any name is accepted in requests).
pub const DEMO_MODEL_NAME: &str = "aimon-demo-model";

/// The largest request body read.
const MAX_REQUEST: usize = 32 * 1024 * 1024;

type Body = BoxBody<Bytes, std::io::Error>;

/// How the endpoint misbehaves; the default is well-behaved.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelFaults {
    /// Answer requests with this status (and a JSON error body).
    pub status: Option<StatusCode>,
    /// Only the first N requests get `status` (all of them when `None`).
    pub status_times: Option<u32>,
    /// Send `Retry-After: S` with `status`.
    pub retry_after: Option<u64>,
    /// A streamed request gets 200 with an empty body.
    pub empty_stream: bool,
    /// A streamed answer's second chunk is not JSON.
    pub malformed_chunk: bool,
    /// A streamed answer stops (the connection is dropped) before its finish reason.
    pub cut_stream: bool,
    /// A streamed answer's second event never ends: after its first bytes, one more byte every
    /// 200 ms, forever (a stream that drips without progress).
    pub drip_stream: bool,
    /// Read requests and never answer.
    pub hang: bool,
    /// Requests without `Authorization: Bearer KEY` get 401.
    pub api_key: Option<String>,
    /// Wait this long between two chunks of a streamed answer.
    pub chunk_delay: Duration,
    /// Send the chunks of a streamed answer at this many a second (several to a write when
    /// they are due together), instead of as fast as possible.
    pub tokens_per_sec: Option<u32>,
}

struct Shared {
    rules: Rules,
    faults: ModelFaults,
    requests: AtomicU32,
}

/// Serve the demo model on `listener` until the process ends.
pub async fn serve_model(
    listener: TcpListener,
    rules: Rules,
    faults: ModelFaults,
) -> std::io::Result<()> {
    let shared = Arc::new(Shared {
        rules,
        faults,
        requests: AtomicU32::new(0),
    });
    loop {
        let (stream, peer) = listener.accept().await?;
        let shared = shared.clone();
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(route(&shared, request).await) }
            });
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), handler)
                .await
            {
                tracing::debug!(%peer, %error, "demo model: connection ended with an error");
            }
        });
    }
}

async fn route(shared: &Shared, request: Request<Incoming>) -> Response<Body> {
    let faults = &shared.faults;
    let path = request.uri().path().to_string();
    if request.method() == hyper::Method::GET && path.ends_with("/models") {
        return json_response(
            StatusCode::OK,
            &json!({"object": "list", "data": [{"id": DEMO_MODEL_NAME, "object": "model", "owned_by": "aimon-console"}]}),
        );
    }
    if request.method() != hyper::Method::POST || !path.ends_with("/chat/completions") {
        return error(
            StatusCode::NOT_FOUND,
            "not found: the demo model serves POST /v1/chat/completions",
        );
    }
    if let Some(key) = &faults.api_key {
        let expected = format!("Bearer {key}");
        let given = request
            .headers()
            .get(http::header::AUTHORIZATION)
            .map(|v| v.as_bytes());
        if given != Some(expected.as_bytes()) {
            // Never echo what was sent: it may be a key.
            return error(StatusCode::UNAUTHORIZED, "Incorrect API key provided");
        }
    }
    let body = match Limited::new(request.into_body(), MAX_REQUEST)
        .collect()
        .await
    {
        Ok(body) => body.to_bytes(),
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("cannot read the body: {e}"),
            )
        }
    };
    if faults.hang {
        std::future::pending::<()>().await;
    }
    let n = shared.requests.fetch_add(1, Ordering::Relaxed);
    if let Some(status) = faults.status {
        if faults.status_times.is_none_or(|times| n < times) {
            let mut response = error(
                status,
                &format!(
                    "the demo model answers with HTTP {} (--status)",
                    status.as_u16()
                ),
            );
            if let Some(seconds) = faults.retry_after {
                response
                    .headers_mut()
                    .insert(http::header::RETRY_AFTER, http::HeaderValue::from(seconds));
            }
            return response;
        }
    }
    let request: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("the body is not JSON: {e}"),
            )
        }
    };
    if !request["messages"].is_array() {
        return error(StatusCode::BAD_REQUEST, "`messages` must be an array");
    }
    // llama.cpp's server refuses these; so does the demo model, to keep clients honest.
    if request["messages"].as_array().is_some_and(|m| {
        m.iter()
            .any(|m| m["role"] == "assistant" && m["content"].is_null())
    }) {
        return error(
            StatusCode::BAD_REQUEST,
            "an assistant message has content null (send \"\")",
        );
    }
    // As llama.cpp's `llama-server` does (ggml-org/llama.cpp#25510), reading the history's calls
    // back as JSON.
    if request["messages"].as_array().is_some_and(|m| {
        m.iter()
            .filter(|m| m["role"] == "assistant")
            .filter_map(|m| m["tool_calls"].as_array())
            .flatten()
            .any(|call| {
                call["function"]["arguments"]
                    .as_str()
                    .is_some_and(|a| serde_json::from_str::<Value>(a).is_err())
            })
    }) {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Failed to parse tool call arguments as JSON (an assistant message's tool call)",
        );
    }
    let mut reply = answer(&request, &shared.rules);
    reply.limit(request["max_tokens"].as_u64());
    let model = request["model"]
        .as_str()
        .unwrap_or(DEMO_MODEL_NAME)
        .to_string();
    let usage = usage(body.len(), &request, &reply);
    if request["stream"] == json!(true) {
        let include_usage = request["stream_options"]["include_usage"] == json!(true);
        stream(reply, &model, include_usage.then_some(usage), faults)
    } else {
        json_response(StatusCode::OK, &whole(&reply, &model, usage))
    }
}

/// Rough token counts: four bytes a token. A request that goes on a conversation (its history
/// holds an answer) reports all but its last message as read from a prompt cache, as endpoints
/// with prefix caching do. `bytes`: the request's size; `request`: the request, read once.
fn usage(bytes: usize, request: &Value, reply: &Answer) -> Value {
    let prompt = bytes / 4;
    let messages = request["messages"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let follows = messages.iter().any(|m| m["role"] == "assistant");
    let cached = match messages.last() {
        Some(last) if follows => prompt.saturating_sub(last.to_string().len() / 4 + 1),
        _ => 0,
    };
    let completion = (reply.text.len()
        + reply
            .calls
            .iter()
            .map(|(n, a)| n.len() + a.len())
            .sum::<usize>())
        / 4
        + 1;
    json!({
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    })
}

fn finish_reason(reply: &Answer) -> &'static str {
    if reply.cut {
        // The wire's word (the agent, a layer above, reads it as `CUT_AT_TOKEN_LIMIT`).
        "length"
    } else if reply.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    }
}

/// The id of a reply's call `i`: numbered on from the conversation's calls before it.
fn call_id(reply: &Answer, i: usize) -> String {
    format!("call_demo_{}", reply.first_call + i)
}

fn whole(reply: &Answer, model: &str, usage: Value) -> Value {
    let calls: Vec<Value> = reply
        .calls
        .iter()
        .enumerate()
        .map(|(i, (name, arguments))| {
            json!({"id": call_id(reply, i), "type": "function", "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    let mut message = json!({"role": "assistant", "content": reply.text});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": "chatcmpl-demo",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(reply)}],
        "usage": usage,
    })
}

/// The chunks of a streamed answer: the role, the text word by word, each tool call named then
/// its arguments in two pieces, the finish reason, the usage, `[DONE]`.
fn chunks(reply: &Answer, model: &str, usage: Option<Value>) -> Vec<String> {
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({
            "id": "chatcmpl-demo",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
        .to_string()
    };
    let mut out = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    for word in reply.text.split_inclusive([' ', '\n']) {
        out.push(chunk(json!({"content": word}), None));
    }
    for (i, (name, arguments)) in reply.calls.iter().enumerate() {
        out.push(chunk(
            json!({"tool_calls": [{"index": i, "id": call_id(reply, i), "type": "function", "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
        let mut cut = arguments.len() / 2;
        while !arguments.is_char_boundary(cut) {
            cut -= 1;
        }
        for piece in [&arguments[..cut], &arguments[cut..]] {
            out.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    out.push(chunk(json!({}), Some(finish_reason(reply))));
    if let Some(usage) = usage {
        out.push(
            json!({"id": "chatcmpl-demo", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [], "usage": usage})
                .to_string(),
        );
    }
    out.push("[DONE]".to_string());
    out
}

fn stream(
    reply: Answer,
    model: &str,
    usage: Option<Value>,
    faults: &ModelFaults,
) -> Response<Body> {
    let mut events: Vec<Result<Bytes, std::io::Error>> = if faults.empty_stream {
        Vec::new()
    } else {
        chunks(&reply, model, usage)
            .into_iter()
            .map(|data| Ok(Bytes::from(format!("data: {data}\n\n"))))
            .collect()
    };
    if faults.malformed_chunk && events.len() > 1 {
        events.insert(
            1,
            Ok(Bytes::from_static(b"data: {\"choices\": [{\"delta\": \n\n")),
        );
        events.truncate(2);
    }
    if faults.cut_stream && events.len() > 2 {
        events.truncate(2);
        // An error drops the connection without the end of the chunked body.
        events.push(Err(std::io::Error::other("cut by --cut-stream")));
    }
    if faults.drip_stream {
        events.truncate(1);
        return event_stream(BodyExt::boxed(StreamBody::new(
            futures::stream::iter(events)
                .chain(futures::stream::once(async {
                    Ok(Bytes::from_static(
                        b"data: {\"choices\": [{\"delta\": {\"content\": \"",
                    ))
                }))
                .chain(futures::stream::unfold((), |()| async {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    Some((Ok(Bytes::from_static(b"a")), ()))
                }))
                .map(|event| event.map(Frame::data)),
        )));
    }
    let delay = faults.chunk_delay;
    let body = match faults.tokens_per_sec {
        Some(rate) => BodyExt::boxed(StreamBody::new(paced(events, rate, delay))),
        None => {
            let body = futures::stream::iter(events).then(move |event| async move {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                event.map(Frame::data)
            });
            BodyExt::boxed(StreamBody::new(body))
        }
    };
    event_stream(body)
}

fn event_stream(body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/event-stream"),
    );
    response
}

/// `events` at `rate` a second (the first after `first_delay`): each write holds every event
/// due by then (at least one), so a high rate costs a write per millisecond, not per event.
fn paced(
    events: Vec<Result<Bytes, std::io::Error>>,
    rate: u32,
    first_delay: Duration,
) -> impl futures::Stream<Item = Result<Frame<Bytes>, std::io::Error>> + Send {
    let rate = f64::from(rate.max(1));
    let start = tokio::time::Instant::now() + first_delay;
    let state = (events.into_iter(), 0u64, None::<std::io::Error>);
    futures::stream::unfold(state, move |(mut events, mut sent, error)| async move {
        if let Some(e) = error {
            return Some((Err(e), (events, sent, None)));
        }
        tokio::time::sleep_until(start + Duration::from_secs_f64(sent as f64 / rate)).await;
        let elapsed = tokio::time::Instant::now().saturating_duration_since(start);
        let due = (elapsed.as_secs_f64() * rate) as u64 + 1;
        let mut batch = Vec::new();
        let mut error = None;
        while sent < due {
            match events.next() {
                Some(Ok(bytes)) => {
                    batch.extend_from_slice(&bytes);
                    sent += 1;
                }
                Some(Err(e)) => {
                    error = Some(e);
                    break;
                }
                None => break,
            }
        }
        if batch.is_empty() {
            return error.map(|e| (Err(e), (events, sent, None)));
        }
        Some((Ok(Frame::data(Bytes::from(batch))), (events, sent, error)))
    })
}

fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    let body = Full::new(Bytes::from(value.to_string()))
        .map_err(|never: Infallible| match never {})
        .boxed();
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

fn error(status: StatusCode, message: &str) -> Response<Body> {
    json_response(
        status,
        &json!({"error": {"message": message, "type": "demo_model", "code": status.as_u16()}}),
    )
}
