//! The demo model (`aimon-console demo-model`): a model endpoint on loopback speaking one wire
//! (`--wire`: Chat Completions, the default; Anthropic's Messages; OpenAI's Responses;
//! `model_wires/`) that answers by the fixed rules of `model_rules.rs` (or a script), streamed
//! or whole, and breaks on demand, the same way on every wire: an error status (with `Retry-After`), an empty stream, a chunk
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

use super::model_rules::{answer, Answer, Role, Rules, Talk};
use super::model_wires::{DemoUsage, DemoWire, Refusal, Reply};

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
    /// A streamed answer ends cleanly (the body complete) before its finish reason and end.
    pub unfinished_stream: bool,
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
    wire: DemoWire,
    requests: AtomicU32,
}

/// Serve the demo model on `listener`, speaking `wire`, until the process ends.
pub async fn serve_model(
    listener: TcpListener,
    rules: Rules,
    faults: ModelFaults,
    wire: DemoWire,
) -> std::io::Result<()> {
    let shared = Arc::new(Shared {
        rules,
        faults,
        wire,
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
    let wire = shared.wire;
    let error = |status: StatusCode, message: &str| {
        json_response(status, &wire.error_body(status, message))
    };
    let path = request.uri().path().to_string();
    if request.method() == hyper::Method::GET && path.ends_with("/models") {
        return json_response(
            StatusCode::OK,
            &json!({"object": "list", "data": [{"id": DEMO_MODEL_NAME, "object": "model", "owned_by": "aimon-console"}]}),
        );
    }
    if request.method() != hyper::Method::POST || !path.ends_with(wire.path()) {
        return error(
            StatusCode::NOT_FOUND,
            &format!(
                "not found: this demo model serves POST /v1{} (--wire)",
                wire.path()
            ),
        );
    }
    if let Some(key) = &faults.api_key {
        if !wire.authorized(request.headers(), key) {
            // Never echo what was sent: it may be a key.
            return error(StatusCode::UNAUTHORIZED, "Incorrect API key provided");
        }
    }
    let headers = request.headers().clone();
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
    let talk = match wire.read(&headers, &request, shared.rules.reasoning) {
        Ok(talk) => talk,
        Err(Refusal(status, message)) => return error(status, &message),
    };
    let mut answer = answer(&talk, &shared.rules);
    answer.limit(wire.max_tokens(&request));
    let model = request["model"].as_str().unwrap_or(DEMO_MODEL_NAME);
    let reply = Reply {
        answer: &answer,
        model,
        usage: usage(body.len(), &talk, &answer),
        reasoning: shared.rules.reasoning,
    };
    if request["stream"] == json!(true) {
        stream(
            wire.frames(&reply, wire.streams_usage(&request)),
            wire,
            faults,
        )
    } else {
        json_response(StatusCode::OK, &wire.whole(&reply))
    }
}

/// Rough token counts: four bytes a token. A request that goes on a conversation (its history
/// holds an answer) reports all but its last message as read from a prompt cache, as endpoints
/// with prefix caching do. `bytes`: the request's size.
fn usage(bytes: usize, talk: &Talk, reply: &Answer) -> DemoUsage {
    let input = bytes / 4;
    let follows = talk.messages.iter().any(|m| m.role == Role::Assistant);
    let cached = match talk.messages.last() {
        Some(last) if follows => {
            let last_len = last.text.len()
                + last
                    .calls
                    .iter()
                    .map(|(n, a)| n.len() + a.len())
                    .sum::<usize>();
            input.saturating_sub(last_len / 4 + 1)
        }
        _ => 0,
    };
    let output = (reply.text.len()
        + reply
            .calls
            .iter()
            .map(|(n, a)| n.len() + a.len())
            .sum::<usize>())
        / 4
        + 1;
    DemoUsage {
        input: input as u64,
        cached: cached as u64,
        output: output as u64,
    }
}

fn stream(frames: Vec<Bytes>, wire: DemoWire, faults: &ModelFaults) -> Response<Body> {
    let mut events: Vec<Result<Bytes, std::io::Error>> = if faults.empty_stream {
        Vec::new()
    } else {
        frames.into_iter().map(Ok).collect()
    };
    if faults.malformed_chunk && events.len() > 1 {
        events.insert(1, Ok(wire.malformed()));
        events.truncate(2);
    }
    if faults.cut_stream && events.len() > 2 {
        events.truncate(2);
        // An error drops the connection without the end of the chunked body.
        events.push(Err(std::io::Error::other("cut by --cut-stream")));
    }
    if faults.unfinished_stream {
        events.truncate(2);
    }
    if faults.drip_stream {
        events.truncate(1);
        let start = wire.drip_start();
        return event_stream(BodyExt::boxed(StreamBody::new(
            futures::stream::iter(events)
                .chain(futures::stream::once(async move { Ok(start) }))
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
