//! What HTTP servers share: the reqwest client (connect timeout, `net`'s resolver, whose
//! failures are recognisable, a hook that sees the first connection open), the headers and
//! bearer token of a server, and the classification of HTTP failures into the report's
//! failure classes (OAuth's verdicts become `needs_login`). rmcp's Streamable HTTP transport
//! is built from them in `mcp::auth`, which puts its OAuth client underneath.
//!
//! Separate from the legacy SSE transport (`sse.rs`), which reuses the client and the
//! classification but speaks its own protocol.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use rmcp::transport::streamable_http_client::StreamableHttpError;
use tokio::sync::watch;

use super::sse::SseError;
use crate::config::ServerConfig;
use crate::mcp::events::FailureClass;
use crate::net::{install_tls_provider, NetClass};
use rmcp::transport::auth::AuthError;

/// Longest wait for a TCP (and TLS) connection; never longer than the server's request timeout.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The connect timeout for `config`.
pub fn connect_timeout(config: &ServerConfig) -> Duration {
    CONNECT_TIMEOUT.min(config.request_timeout)
}

/// Why an HTTP client could not be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the HTTP client: {0}")]
pub struct ClientBuildError(#[from] reqwest::Error);

/// Turns `true` once a connection to the server is up (TCP and, for https, TLS).
#[derive(Clone)]
pub struct ConnectWatch {
    tx: Arc<watch::Sender<bool>>,
}

impl Default for ConnectWatch {
    fn default() -> Self {
        ConnectWatch {
            tx: Arc::new(watch::channel(false).0),
        }
    }
}

impl ConnectWatch {
    pub fn is_connected(&self) -> bool {
        *self.tx.borrow()
    }

    fn mark(&self) {
        self.tx.send_if_modified(|up| !std::mem::replace(up, true));
    }

    /// Resolves once connected (never, if no connection ever opens).
    pub async fn connected(&self) {
        let mut rx = self.tx.subscribe();
        if rx.wait_for(|up| *up).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// A reqwest client for one server: connect timeout, our resolver, the connect hook.
pub fn client(
    connect_timeout: Duration,
    watch: ConnectWatch,
) -> Result<reqwest::Client, ClientBuildError> {
    install_tls_provider();
    Ok(reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .dns_resolver(Arc::new(crate::net::Resolver))
        .connector_layer(WatchLayer(watch))
        .build()?)
}

/// The configured headers, plus `Authorization: Bearer` for `bearer_token` when `bearer` is set
/// (the legacy SSE transport sends it itself; rmcp takes the token separately).
pub fn headers(config: &ServerConfig, bearer: bool) -> HashMap<HeaderName, HeaderValue> {
    let mut out = HashMap::new();
    // The loader has validated every name and value.
    for (name, value) in &config.headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            out.insert(n, v);
        }
    }
    if let (true, Some(token)) = (bearer, &config.bearer_token) {
        if let Ok(mut v) = HeaderValue::from_str(&format!("Bearer {token}")) {
            v.set_sensitive(true);
            out.insert(http::header::AUTHORIZATION, v);
        }
    }
    for value in out.values_mut() {
        value.set_sensitive(true);
    }
    out
}

/// `host:port` of a URL, for messages (never the user-info or the query).
pub fn authority(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => match (u.host_str(), u.port_or_known_default()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_string(),
            (None, _) => "the server".to_string(),
        },
        Err(_) => "the server".to_string(),
    }
}

/// An HTTP failure, classified.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpFailure {
    pub class: FailureClass,
    pub http_status: Option<u16>,
    pub message: String,
}

/// Classifies an error by walking its source chain with typed downcasts: our resolver's
/// failure, rustls errors, socket errors, timeouts, HTTP statuses. `None` when nothing in the
/// chain is an HTTP-level failure (the caller treats it as a protocol error).
pub fn classify(err: &(dyn StdError + 'static), authority: &str) -> Option<HttpFailure> {
    let chain = chain(err);
    let fail = |class, message: String| {
        Some(HttpFailure {
            class,
            http_status: None,
            message,
        })
    };
    if let Some(net) = crate::net::failure(&chain, authority) {
        let class = match net.class {
            NetClass::Dns => FailureClass::DnsError,
            NetClass::Tls => FailureClass::TlsError,
            NetClass::Refused => FailureClass::ConnectRefused,
            NetClass::Dropped => FailureClass::ConnectionLost,
            NetClass::Timeout => FailureClass::Timeout,
        };
        return fail(class, net.message);
    }
    if cut_short(&chain) {
        return fail(
            FailureClass::ConnectionLost,
            format!("{authority} closed the connection before its answer was complete"),
        );
    }
    if let Some(auth) = chain.iter().find_map(|e| match e.downcast_ref() {
        Some(StreamableHttpError::<reqwest::Error>::Auth(auth)) => Some(auth),
        _ => None,
    }) {
        return Some(auth_failure(auth, authority));
    }
    for e in &chain {
        if let Some(status) = status_of(*e) {
            return Some(status_failure(status, authority));
        }
        if let Some(r) = e.downcast_ref::<reqwest::Error>() {
            if r.is_timeout() {
                let what = if r.is_connect() {
                    "no connection"
                } else {
                    "no answer"
                };
                return fail(
                    FailureClass::Timeout,
                    format!("{what} from {authority} in time"),
                );
            }
            if r.is_connect() {
                let cause = chain.last().map(|c| c.to_string()).unwrap_or_default();
                return fail(
                    FailureClass::ConnectRefused,
                    format!("cannot connect to {authority}: {cause}"),
                );
            }
        }
    }
    None
}

/// Whether a failed HTTP exchange means the server is gone: it could not be reached (refused,
/// unreachable, DNS), or it dropped the connection (`connection_lost`: reset, or closed before
/// its answer was complete; or a kept-alive connection closed by a server that died).
/// Timeouts and error statuses do not count: that server is slow or erring, not gone.
pub fn server_gone(err: &(dyn StdError + 'static)) -> bool {
    let unreachable = classify(err, "")
        .is_some_and(|f| f.class.is_unreachable() || f.class == FailureClass::ConnectionLost);
    let dropped = chain(err).iter().any(|e| {
        e.downcast_ref::<hyper::Error>()
            .is_some_and(|h| h.is_incomplete_message() || h.is_closed())
    });
    unreachable || dropped
}

/// How rmcp's HTTP client begins the words for a JSON body that is no JSON-RPC message (the
/// direct path, `http_direct.rs`, says it the same way).
pub const UNPARSED_ANSWER: &str = "could not parse JSON response as ServerJsonRpcMessage: ";

/// Why an HTTP answer could not be read, when that is what `err` is: a body over rmcp's size
/// limit, or one that is not a JSON-RPC message. rmcp fails the request at once for both (a
/// JSON body); these words say which.
pub fn unreadable_answer(err: &(dyn StdError + 'static)) -> Option<String> {
    chain(err).iter().find_map(|e| {
        match e.downcast_ref::<StreamableHttpError<reqwest::Error>>()? {
            StreamableHttpError::ResponseBodyTooLarge { max_size } => Some(format!(
                "the answer is over the {} MiB body limit",
                max_size / (1024 * 1024)
            )),
            StreamableHttpError::UnexpectedServerResponse(text) => {
                text.strip_prefix(UNPARSED_ANSWER).map(|why| {
                    format!(
                        "the answer is not a JSON-RPC message: {}",
                        crate::text::sanitize_line(why, 300)
                    )
                })
            }
            StreamableHttpError::Deserialize(why) => Some(format!(
                "the answer is not a JSON-RPC message: {}",
                crate::text::sanitize_line(&why.to_string(), 300)
            )),
            _ => None,
        }
    })
}

/// The links of an error's cause chain, outermost first ([`crate::net::links_with`]), stepping
/// also into rmcp's `StreamableHttpError::Client`, which does not report its reqwest error as a
/// source.
fn chain<'a>(err: &'a (dyn StdError + 'static)) -> Vec<&'a (dyn StdError + 'static)> {
    crate::net::links_with(err, |e| {
        match e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::Client(inner)) => Some(inner as &(dyn StdError + 'static)),
            _ => None,
        }
    })
}

/// Words for an HTTP error that `classify` did not recognise: an answer cut short, or not HTTP
/// at all, said as such; else the transport's own message without rmcp's type names.
pub fn describe(err: &(dyn StdError + 'static), authority: &str) -> String {
    let links = chain(err);
    if let Some(broken) = broken_answer(&links) {
        return format!("{authority} {broken}");
    }
    let text = links
        .iter()
        .find_map(|e| {
            e.downcast_ref::<StreamableHttpError<reqwest::Error>>()
                .map(ToString::to_string)
                .or_else(|| e.downcast_ref::<SseError>().map(ToString::to_string))
        })
        .unwrap_or_else(|| err.to_string());
    format!("{authority}: {}", crate::text::sanitize_line(&text, 300))
}

/// What hyper found wrong with the server's answer, in words: cut short, or not HTTP. reqwest
/// says only "error sending request" or "error decoding response body", which does not tell
/// the operator that the server is at fault.
fn broken_answer(links: &[&(dyn StdError + 'static)]) -> Option<String> {
    if cut_short(links) {
        return Some("closed the connection before its answer was complete".into());
    }
    let hyper = links
        .iter()
        .find_map(|e| e.downcast_ref::<hyper::Error>())?;
    hyper
        .is_parse()
        .then(|| format!("answered with something that is not HTTP ({hyper})"))
}

/// Whether hyper found the server's answer cut short: an incomplete message is a head cut
/// short (or none at all); a body shorter than its headers promised is a body error caused by
/// an unexpected EOF.
fn cut_short(links: &[&(dyn StdError + 'static)]) -> bool {
    let Some(hyper) = links.iter().find_map(|e| e.downcast_ref::<hyper::Error>()) else {
        return false;
    };
    hyper.is_incomplete_message()
        || links.iter().any(|e| {
            e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::UnexpectedEof)
        })
}

/// What a request failed on, in words, when the OAuth client refused it (a login needed, more
/// scope): its class, and the message for a call's error, with the way out.
pub fn auth_message(
    err: &(dyn StdError + 'static),
    server: &str,
) -> Option<(FailureClass, String)> {
    let links = chain(err);
    let auth = links.iter().find_map(|e| match e.downcast_ref() {
        Some(StreamableHttpError::<reqwest::Error>::Auth(auth)) => Some(auth),
        _ => None,
    })?;
    let failure = auth_failure(auth, &format!("server {server}"));
    let message = match failure.class {
        FailureClass::NeedsLogin => format!(
            "{}: log in again with `aimon-console login {server}` (in the console: o on the server)",
            failure.message
        ),
        _ => failure.message,
    };
    Some((failure.class, message))
}

/// The failure for what the OAuth client decided: a login is needed (no token, a refused one
/// that could not be refreshed, more scope, an unattended grant that failed), or the server
/// keeps refusing a scope after the step-up limit (a plain 403).
pub fn auth_failure(e: &AuthError, authority: &str) -> HttpFailure {
    let (class, http_status, message) = match e {
        AuthError::InvalidScope(why) => (
            FailureClass::HttpStatus,
            Some(403),
            format!(
                "{authority} answered HTTP 403 insufficient_scope: {}",
                crate::text::sanitize_line(why, 300)
            ),
        ),
        AuthError::AuthorizationRequired => (
            FailureClass::NeedsLogin,
            Some(401),
            format!("{authority} wants an OAuth login (no token stored, or the stored one was refused and could not be refreshed)"),
        ),
        AuthError::InsufficientScope { required_scope, .. } => (
            FailureClass::NeedsLogin,
            Some(403),
            format!(
                "{authority} wants a new OAuth login with more scope ({})",
                crate::text::sanitize_line(required_scope, 200)
            ),
        ),
        other => (
            FailureClass::NeedsLogin,
            None,
            format!(
                "{authority}: OAuth: {}",
                crate::text::sanitize_line(&other.to_string(), 400)
            ),
        ),
    };
    HttpFailure {
        class,
        http_status,
        message,
    }
}

/// The failure for an HTTP error status.
pub fn status_failure(status: u16, authority: &str) -> HttpFailure {
    let reason = http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut message = format!("{authority} answered HTTP {status} {reason}")
        .trim_end()
        .to_string();
    if matches!(status, 401 | 403) {
        message.push_str(": the server wants credentials");
    }
    HttpFailure {
        class: FailureClass::HttpStatus,
        http_status: Some(status),
        message,
    }
}

/// An HTTP status carried by a link of the chain.
fn status_of(e: &(dyn StdError + 'static)) -> Option<u16> {
    if let Some(h) = e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        return match h {
            StreamableHttpError::AuthRequired(_) => Some(401),
            StreamableHttpError::InsufficientScope(_) => Some(403),
            StreamableHttpError::HttpStatus(s) => Some(s.status),
            // rmcp words other error statuses as "HTTP <code> <reason>: <body>".
            StreamableHttpError::UnexpectedServerResponse(text) => leading_status(text),
            _ => None,
        };
    }
    if let Some(SseError::Status(code)) = e.downcast_ref::<SseError>() {
        return Some(*code);
    }
    e.downcast_ref::<reqwest::Error>()
        .and_then(reqwest::Error::status)
        .map(|s| s.as_u16())
}

/// The code of a message that starts with `HTTP <3 digits>`.
fn leading_status(text: &str) -> Option<u16> {
    let rest = text.strip_prefix("HTTP ")?;
    let code = rest.get(..3)?;
    let after = rest.get(3..4).unwrap_or(" ");
    (code.bytes().all(|b| b.is_ascii_digit()) && (after == " " || after == ":"))
        .then(|| code.parse().ok())
        .flatten()
}

/// Wraps reqwest's connector to mark the [`ConnectWatch`] when a connection opens.
#[derive(Clone)]
struct WatchLayer(ConnectWatch);

impl<S> tower_layer::Layer<S> for WatchLayer {
    type Service = WatchService<S>;
    fn layer(&self, inner: S) -> WatchService<S> {
        WatchService {
            inner,
            watch: self.0.clone(),
        }
    }
}

#[derive(Clone)]
struct WatchService<S> {
    inner: S,
    watch: ConnectWatch,
}

impl<S, R> tower_service::Service<R> for WatchService<S>
where
    S: tower_service::Service<R>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        let connecting = self.inner.call(request);
        let watch = self.watch.clone();
        Box::pin(async move {
            let conn = connecting.await?;
            watch.mark();
            Ok(conn)
        })
    }
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
