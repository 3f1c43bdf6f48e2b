//! The model client: the [`ModelClient`] trait the loop talks to, and [`HttpModelClient`], a
//! thin client for a model endpoint over HTTP (`http.rs`), speaking its profile's provider's
//! wire (`providers/`): the HTTP core here is the same for all.
//!
//! Ours rather than `async-openai`: that crate is ~38,000 lines of generated types plus
//! `derive_builder`, `eventsource-stream` (unbounded), `tower` and `secrecy`, a long build on
//! these 2 cores for the one endpoint we use; its 429 retries are not observable, and its
//! stream errors are one generic kind. Here each failure gets its class and hint, a 429 waits
//! for `Retry-After` with a countdown the driver sees, reads are bounded (our SSE parser,
//! `crate::sse`), and no wait outlasts `request_timeout` of silence.

use std::time::{Duration, Instant};

use std::sync::Arc;

use futures::StreamExt;
use http::HeaderMap;
use hyper::body::Bytes;

use super::failure::{ModelError, ModelFailureClass, Secrets};
use super::http::{Http, Response};
use super::providers::{RequestOptions, Wire};
use super::stream::{ModelReply, StreamPiece, MAX_REPLY_BYTES};
use super::turn::{History, ToolChoice, ToolList};
use crate::config::ModelProfile;

/// Retries of a 429 or a 5xx before the request fails.
pub const MAX_RETRIES: u32 = 3;

/// The longest `Retry-After` we wait for; a longer one fails at once (`rate_limited`).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Longest wait for a TCP (and TLS) connection; never longer than `request_timeout`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// An error body is read up to this much (for its message).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// What the client reports while a request is under way.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// A piece of the streamed answer.
    Piece(StreamPiece),
    /// The request failed with a 429 or a 5xx and is tried again after `delay`.
    Retrying {
        attempt: u32,
        max: u32,
        delay: Duration,
        error: ModelError,
    },
    /// A retry's wait: `remaining` until the next attempt (once a second).
    Countdown { remaining: Duration },
}

/// Something that answers a conversation: a model endpoint, over HTTP.
#[async_trait::async_trait]
pub trait ModelClient: Send + Sync + std::fmt::Debug {
    /// One model turn: the answer to `history` with `tools` on offer (`choice` says whether
    /// it may call them). Dropping the future drops the request.
    async fn complete(
        &self,
        history: &History,
        tools: &ToolList,
        choice: ToolChoice,
        events: &(dyn Fn(ModelEvent) + Send + Sync),
    ) -> Result<ModelReply, ModelError>;

    /// The model requests name (the profile's `model`).
    fn model(&self) -> &str;

    /// The same client, its answers at most `max_tokens` long (never more than the profile
    /// allows) and at `temperature` when given: for a server's sampling request, which says
    /// both.
    fn limited(&self, max_tokens: u32, temperature: Option<f64>) -> Arc<dyn ModelClient>;
}

/// A model endpoint at `base_url` (`…/v1`), spoken to in its profile's provider's wire.
#[derive(Clone)]
pub struct HttpModelClient {
    /// Shared by the clones [`limited`](ModelClient::limited) makes (one connection to keep
    /// alive).
    http: Arc<Http>,
    wire: Wire,
    url: String,
    authority: String,
    headers: HeaderMap,
    options: RequestOptions,
    timeout: Duration,
    /// To scrub from anything the endpoint echoes: the key, secret header values.
    secrets: Secrets,
}

impl std::fmt::Debug for HttpModelClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpModelClient")
            .field("url", &self.url)
            .field("model", &self.options.model)
            .field("provider", &self.wire.0)
            .finish()
    }
}

/// How one attempt ended badly.
enum Attempt {
    /// 429 or 5xx: worth another try (429 may say when).
    Retry {
        error: ModelError,
        retry_after: Option<Duration>,
    },
    Fail(ModelError),
}

impl HttpModelClient {
    /// A client for `profile`'s endpoint at `base_url` (the profile's own, or the one its
    /// `command` printed).
    pub fn new(profile: &ModelProfile, base_url: &str) -> Result<Self, ModelError> {
        let wire = Wire(profile.provider);
        let url = format!("{}{}", base_url.trim_end_matches('/'), wire.path());
        let uri: http::Uri = url.parse().map_err(|e| {
            ModelError::new(
                ModelFailureClass::BadResponse,
                format!("base_url {base_url:?} is not a URL: {e}"),
            )
            .with_hint("set base_url to the endpoint's URL, e.g. http://127.0.0.1:8080/v1")
        })?;
        let authority = uri
            .authority()
            .map(|a| a.to_string())
            .unwrap_or_else(|| base_url.to_string());
        let http = Http::new(&url, CONNECT_TIMEOUT.min(profile.request_timeout)).map_err(|e| {
            ModelError::new(
                ModelFailureClass::ConnectRefused,
                format!("cannot make the HTTP client for {url}: {e}"),
            )
        })?;
        Ok(HttpModelClient {
            http: Arc::new(http),
            wire,
            url,
            authority,
            headers: wire.headers(profile),
            options: RequestOptions {
                model: profile.model.clone(),
                stream: profile.stream,
                temperature: profile.temperature,
                max_tokens: profile.max_tokens,
            },
            timeout: profile.request_timeout,
            secrets: Secrets::of(profile),
        })
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    async fn attempt(
        &self,
        body: &Bytes,
        events: &(dyn Fn(ModelEvent) + Send + Sync),
    ) -> Result<ModelReply, Attempt> {
        let send = self.http.post(&self.headers, body.clone());
        let response = match tokio::time::timeout(self.timeout, send).await {
            Err(_) => {
                return Err(Attempt::Fail(ModelError::timeout(
                    &format!("no answer from {}", self.authority),
                    self.timeout,
                )))
            }
            Ok(Err(e)) => return Err(Attempt::Fail(e.classify(&self.authority))),
            Ok(Ok(response)) => response,
        };
        let status = response.status;
        if !status.is_success() {
            let retry_after = retry_after(&response.headers);
            let body = self.read_head(response, MAX_ERROR_BODY).await;
            let text = String::from_utf8_lossy(&body);
            let error = ModelError::status(status.as_u16(), &text, MAX_RETRIES, &self.secrets);
            return Err(match status.as_u16() {
                429 | 500..=599 => Attempt::Retry { error, retry_after },
                _ => Attempt::Fail(error),
            });
        }
        let is_sse = response
            .headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if self.options.stream && is_sse {
            self.read_stream(response, events)
                .await
                .map_err(Attempt::Fail)
        } else if self.options.stream && response.content_length() == Some(0) {
            self.wire
                .reader(self.secrets.clone())
                .finish()
                .map_err(Attempt::Fail)
        } else {
            // stream: false, or a server that answered a whole completion anyway.
            let body = self
                .read_body(response, MAX_REPLY_BYTES)
                .await
                .map_err(Attempt::Fail)?;
            if self.options.stream && body.iter().all(u8::is_ascii_whitespace) {
                return self
                    .wire
                    .reader(self.secrets.clone())
                    .finish()
                    .map_err(Attempt::Fail);
            }
            self.wire.whole(&body, &self.secrets).map_err(Attempt::Fail)
        }
    }

    /// Reads a streamed answer: an event (or a keep-alive comment between events) completed
    /// within `request_timeout` of the last one — bytes that drip inside an event that never
    /// ends are no progress — and the whole within ten times that. `[DONE]` completes it at
    /// once, whether or not the server then closes the connection.
    async fn read_stream(
        &self,
        response: Response,
        events: &(dyn Fn(ModelEvent) + Send + Sync),
    ) -> Result<ModelReply, ModelError> {
        let mut body = Body::new(response, self.timeout);
        body.by_events = true;
        let mut parser = crate::sse::SseParser::default();
        let mut ready = std::collections::VecDeque::new();
        let mut reader = self.wire.reader(self.secrets.clone());
        let mut on_piece = |piece| events(ModelEvent::Piece(piece));
        loop {
            let Some(bytes) = body.next(&self.authority, "streamed answer").await? else {
                return reader.finish();
            };
            let completed = parser.completed();
            parser.feed(&bytes, &mut ready).map_err(|e| {
                ModelError::new(ModelFailureClass::BadStream, format!("the stream has {e}"))
            })?;
            if parser.completed() != completed {
                body.progressed();
            }
            for event in ready.drain(..) {
                reader.feed(&event.event, &event.data, &mut on_piece)?;
                if reader.is_done() {
                    return reader.finish();
                }
            }
        }
    }

    /// An error answer's first `max` bytes: the message is at its start, and a long page (a
    /// proxy's 502) still says something. What does not come in time, or at all, is left out.
    async fn read_head(&self, response: Response, max: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut body = Body::new(response, self.timeout);
        while let Ok(Some(bytes)) = body.next(&self.authority, "answer").await {
            out.extend_from_slice(&bytes[..bytes.len().min(max - out.len())]);
            if out.len() == max {
                break;
            }
        }
        out
    }

    /// A body, at most `max` bytes, each piece within `request_timeout` of the last and the
    /// whole within ten times that.
    async fn read_body(&self, response: Response, max: usize) -> Result<Vec<u8>, ModelError> {
        let mut out = Vec::with_capacity(
            response
                .content_length()
                .map_or(0, |n| usize::try_from(n).unwrap_or(max).min(max)),
        );
        let mut body = Body::new(response, self.timeout);
        while let Some(bytes) = body.next(&self.authority, "answer").await? {
            if out.len() + bytes.len() > max {
                return Err(ModelError::new(
                    ModelFailureClass::BadResponse,
                    format!("the answer is over {} KiB", max / 1024),
                ));
            }
            out.extend_from_slice(&bytes);
        }
        Ok(out)
    }
}

/// How many `request_timeout`s a whole answer, streamed or not, may take once its head came.
const TOTAL_TIMEOUTS: u32 = 10;

/// An answer's body as it arrives, under its two deadlines: `request_timeout` without
/// progress, and [`TOTAL_TIMEOUTS`] times that in all. Progress is any bytes, or for a stream
/// read `by_events`, an event completed (the reader says so with [`Body::progressed`]).
struct Body {
    stream: futures::stream::BoxStream<'static, Result<Bytes, super::http::HttpError>>,
    started: Instant,
    timeout: Duration,
    /// When the last progress was made.
    progress_at: Instant,
    by_events: bool,
}

impl Body {
    fn new(response: Response, timeout: Duration) -> Self {
        let now = Instant::now();
        Body {
            stream: response.body,
            started: now,
            timeout,
            progress_at: now,
            by_events: false,
        }
    }

    /// The answer made progress (for a stream read by events: an event completed).
    fn progressed(&mut self) {
        self.progress_at = Instant::now();
    }

    /// The next piece, or `None` at its end; `what` names the answer in a timeout's message.
    async fn next(&mut self, authority: &str, what: &str) -> Result<Option<Bytes>, ModelError> {
        let cap = self.timeout.saturating_mul(TOTAL_TIMEOUTS);
        let too_long = || {
            ModelError::new(
                ModelFailureClass::Timeout,
                format!(
                    "the {what} took longer than {TOTAL_TIMEOUTS} x request_timeout ({})",
                    crate::text::fmt_duration(cap)
                ),
            )
        };
        let left = cap.saturating_sub(self.started.elapsed());
        // Checked before the wait: a timeout polls what it waits for first, so a body whose
        // next piece is always ready (a flood of comments) would never see its deadline.
        if left.is_zero() {
            return Err(too_long());
        }
        let idle = self.timeout.saturating_sub(self.progress_at.elapsed());
        let stalled = || {
            ModelError::timeout(
                &if self.by_events {
                    format!("{authority} completed no event of the stream")
                } else {
                    format!("{authority} sent nothing more")
                },
                self.timeout,
            )
        };
        if idle.is_zero() {
            return Err(stalled());
        }
        match tokio::time::timeout(idle.min(left), self.stream.next()).await {
            Err(_) if left <= idle => Err(too_long()),
            Err(_) => Err(stalled()),
            Ok(None) => Ok(None),
            Ok(Some(Err(e))) => Err(e.classify(authority)),
            Ok(Some(Ok(bytes))) => {
                if !self.by_events {
                    self.progressed();
                }
                Ok(Some(bytes))
            }
        }
    }
}

#[async_trait::async_trait]
impl ModelClient for HttpModelClient {
    async fn complete(
        &self,
        history: &History,
        tools: &ToolList,
        choice: ToolChoice,
        events: &(dyn Fn(ModelEvent) + Send + Sync),
    ) -> Result<ModelReply, ModelError> {
        // Made once; each attempt sends it without a copy.
        let body = Bytes::from(self.wire.body(history, tools, choice, &self.options));
        let mut attempt = 0;
        loop {
            let (error, retry_after) = match self.attempt(&body, events).await {
                Ok(reply) => return Ok(reply),
                Err(Attempt::Fail(error)) => return Err(error.scrubbed(&self.secrets)),
                Err(Attempt::Retry { error, retry_after }) => (error, retry_after),
            };
            let error = error.scrubbed(&self.secrets);
            if attempt >= MAX_RETRIES {
                return Err(error);
            }
            let delay = match retry_after {
                Some(wait) if wait > MAX_RETRY_AFTER => {
                    return Err(error.with_hint(format!(
                        "the endpoint asks to wait {}, longer than the {} the console waits: try again later",
                        crate::text::fmt_duration(wait),
                        crate::text::fmt_duration(MAX_RETRY_AFTER)
                    )))
                }
                Some(wait) => wait,
                // 0.5 s, 1 s, 2 s.
                None => Duration::from_millis(500 << attempt),
            };
            attempt += 1;
            events(ModelEvent::Retrying {
                attempt,
                max: MAX_RETRIES,
                delay,
                error,
            });
            countdown(delay, events).await;
        }
    }

    fn model(&self) -> &str {
        &self.options.model
    }

    fn limited(&self, max_tokens: u32, temperature: Option<f64>) -> Arc<dyn ModelClient> {
        let mut client = self.clone();
        client.options.max_tokens = Some(
            self.options
                .max_tokens
                .map_or(max_tokens, |own| own.min(max_tokens)),
        );
        if temperature.is_some() {
            client.options.temperature = temperature;
        }
        Arc::new(client)
    }
}

/// Waits `delay`, reporting the time left once a second.
async fn countdown(delay: Duration, events: &(dyn Fn(ModelEvent) + Send + Sync)) {
    let end = tokio::time::Instant::now() + delay;
    loop {
        let remaining = end.saturating_duration_since(tokio::time::Instant::now());
        if remaining.is_zero() {
            return;
        }
        let step = remaining.min(Duration::from_secs(1));
        tokio::time::sleep(step).await;
        let left = end.saturating_duration_since(tokio::time::Instant::now());
        if !left.is_zero() {
            events(ModelEvent::Countdown { remaining: left });
        }
    }
}

/// `Retry-After` in seconds (an HTTP date is not honoured: a bounded default applies).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(http::header::RETRY_AFTER)?.to_str().ok()?;
    let seconds: f64 = value.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds.min(1e6)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_read_in_seconds() {
        let mut h = HeaderMap::new();
        h.insert(
            http::header::RETRY_AFTER,
            http::HeaderValue::from_static("2"),
        );
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert(
            http::header::RETRY_AFTER,
            http::HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), None);
    }

    /// A proxy's error page over the limit: its start is still quoted.
    #[tokio::test]
    async fn a_long_error_page_is_quoted_from_its_start() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = vec![0u8; 65536];
            let _ = socket.read(&mut buf).await;
            let page = format!("upstream model server is down{}", " ".repeat(200 * 1024));
            let head = format!(
                "HTTP/1.1 403 Forbidden\r\ncontent-length: {}\r\n\r\n",
                page.len()
            );
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(page.as_bytes()).await;
        });
        let url = format!("http://{address}/v1");
        let mut profile = crate::config::ModelProfile::url("p", &url, "m");
        profile.stream = false;
        let client = HttpModelClient::new(&profile, &url).unwrap();
        let error = client
            .complete(
                &History::default(),
                &ToolList::default(),
                ToolChoice::Auto,
                &|_| {},
            )
            .await
            .unwrap_err();
        assert!(
            error.message.contains("upstream model server is down"),
            "{}",
            error.message
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_countdown_ticks_every_second() {
        let ticks = std::sync::Mutex::new(Vec::new());
        countdown(Duration::from_millis(2500), &|e| {
            if let ModelEvent::Countdown { remaining } = e {
                ticks.lock().unwrap().push(remaining.as_millis());
            }
        })
        .await;
        assert_eq!(*ticks.lock().unwrap(), vec![1500, 500]);
    }
}
