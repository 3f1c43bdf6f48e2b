//! Kept-alive HTTP/1.1 connections to one plain-HTTP origin, on hyper's own client connection:
//! no connection pool of reqwest's, no redirect policy, no proxy matcher per request. Both HTTP
//! clients take this way to an `http://` URL: the model client (`agent/http.rs`), and the direct
//! `tools/call` over Streamable HTTP (`mcp/transport`) where no proxy setting catches the URL. Per
//! request, reqwest's layers cost about a third of the CPU of a loopback request (`cargo bench
//! -- agent`, `call/http`); `https://` and proxied URLs keep going through reqwest.

use std::error::Error as StdError;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use http::{HeaderMap, HeaderValue, Method, Uri};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::client::conn::http1::SendRequest;
use hyper_util::client::proxy::matcher::Matcher;

/// How long a request waits for a kept connection that is not ready at once.
const BUSY_WAIT: Duration = Duration::from_millis(5);
/// Idle connections kept at most; one more is closed when its request ends.
const MAX_IDLE: usize = 16;
/// How long a connection is kept unused before it is closed rather than used again, as reqwest
/// keeps its own: a connection idle for long may have been dropped silently on the way (a NAT,
/// a firewall), and a request written into it would wait out its whole timeout.
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// A failed request: its cause, and whether it failed connecting or timed out.
#[derive(Debug)]
pub struct SendError {
    pub cause: Box<dyn StdError + Send + Sync>,
    pub connect: bool,
    pub timeout: bool,
}

impl SendError {
    fn new(cause: impl Into<Box<dyn StdError + Send + Sync>>, connect: bool) -> Self {
        SendError {
            cause: cause.into(),
            connect,
            timeout: false,
        }
    }
}

/// Connections to one origin, each kept open between requests.
pub struct Origin {
    /// The host to connect to (a name, or an address as the URL wrote it) and its port.
    host_name: String,
    port: u16,
    /// The `Host` header.
    host: HeaderValue,
    /// The request target (`/v1/chat/completions`, `/mcp`), parsed once.
    target: Uri,
    connect_timeout: Duration,
    /// Connections between requests, each with when it was given back. A request takes one
    /// that is ready (or, when none is, one still carrying an earlier answer's body, for
    /// [`BUSY_WAIT`] at most: a streamed answer can take minutes) and gives it back once its
    /// answer's head has come; a request that finds none opens its own. One given back more
    /// than `idle_timeout` ago is closed when the next request looks.
    idle: Mutex<Vec<(SendRequest<Full<Bytes>>, Instant)>>,
    idle_timeout: Duration,
}

impl Origin {
    /// The origin of `url` when it is `http://` and names no user; `None` for any other URL,
    /// which goes through reqwest. Proxy settings are not read: the model client reaches a
    /// plain-HTTP endpoint (a local server) directly, as docs/configuration.md says.
    pub fn for_url(url: &str, connect_timeout: Duration) -> Option<Origin> {
        Origin::with_proxies(url, connect_timeout, None)
    }

    /// [`Origin::for_url`], and `None` too when a proxy setting of the environment
    /// (`HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`, as reqwest reads them) catches `url`: for a
    /// client whose other requests go through reqwest and its proxy (an MCP server's).
    pub fn unless_proxied(url: &str, connect_timeout: Duration) -> Option<Origin> {
        Origin::with_proxies(url, connect_timeout, Some(&Matcher::from_env()))
    }

    fn with_proxies(
        url: &str,
        connect_timeout: Duration,
        proxies: Option<&Matcher>,
    ) -> Option<Origin> {
        let uri: Uri = url.parse().ok()?;
        let proxied = proxies.is_some_and(|p| p.intercept(&uri).is_some());
        if uri.scheme_str() != Some("http") || proxied {
            return None;
        }
        let authority = uri.authority()?;
        // A user name or password in the URL is reqwest's to turn into `Authorization`; it
        // must not go out in `Host`.
        if authority.as_str().contains('@') {
            return None;
        }
        Some(Origin {
            host_name: authority.host().to_string(),
            port: authority.port_u16().unwrap_or(80),
            host: HeaderValue::from_str(authority.as_str()).ok()?,
            // Origin form: the path and query alone.
            target: uri
                .path_and_query()
                .and_then(|p| p.as_str().parse().ok())
                .unwrap_or_else(|| Uri::from_static("/")),
            connect_timeout,
            idle: Mutex::new(Vec::new()),
            idle_timeout: IDLE_TIMEOUT,
        })
    }

    /// Sends a request with `method`, `headers` and `body` (empty for a GET); resolves when the
    /// answer's head has come, its body still on the way.
    pub async fn send(
        &self,
        method: Method,
        mut headers: HeaderMap,
        body: Bytes,
    ) -> Result<http::Response<Incoming>, SendError> {
        headers.insert(http::header::HOST, self.host.clone());
        let mut request = http::Request::new(Full::new(body));
        *request.method_mut() = method;
        *request.uri_mut() = self.target.clone();
        *request.headers_mut() = headers;
        if let Some(sender) = self.take().await {
            match self.exchange(sender, request).await {
                Ok(response) => return Ok(response),
                // The server closed the kept connection while it was idle, and hyper gave the
                // request back unwritten: a new connection.
                Err((_, Some(unsent))) => request = unsent,
                Err((e, None)) => return Err(SendError::new(e, false)),
            }
        }
        let sender = self.connect().await?;
        self.exchange(sender, request)
            .await
            .map_err(|(e, _)| SendError::new(e, false))
    }

    /// A kept connection: a ready one, else a busy one once it is ready within [`BUSY_WAIT`].
    async fn take(&self) -> Option<SendRequest<Full<Bytes>>> {
        let mut busy = {
            let now = Instant::now();
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.retain(|(s, since)| !s.is_closed() && now - *since < self.idle_timeout);
            if let Some(at) = idle.iter().position(|(s, _)| s.is_ready()) {
                return Some(idle.swap_remove(at).0);
            }
            idle.pop()?.0
        };
        // Not ready yet: free a moment later (its connection task has yet to run after the
        // last body ended), or still busy with another answer's body, kept for later.
        if tokio::time::timeout(BUSY_WAIT, busy.ready()).await.is_ok() {
            return Some(busy);
        }
        self.give_back(busy);
        None
    }

    fn give_back(&self, sender: SendRequest<Full<Bytes>>) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push((sender, Instant::now()));
        }
    }

    /// Sends `request` on `sender`, which goes back to the idle ones once the answer's head has
    /// come; or the error, with the request when it was never written (hyper gives it back then).
    async fn exchange(
        &self,
        mut sender: SendRequest<Full<Bytes>>,
        request: http::Request<Full<Bytes>>,
    ) -> Result<http::Response<Incoming>, (hyper::Error, Option<http::Request<Full<Bytes>>>)> {
        if let Err(e) = sender.ready().await {
            return Err((e, Some(request)));
        }
        match sender.try_send_request(request).await {
            Ok(response) => {
                self.give_back(sender);
                Ok(response)
            }
            Err(mut e) => {
                let unsent = e.take_message();
                Err((e.into_error(), unsent))
            }
        }
    }

    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, SendError> {
        // Resolved by `net::lookup`, so that a name that does not resolve is a `dns_error`.
        let connect = async {
            let addrs = super::lookup(&self.host_name, self.port)
                .await
                .map_err(|e| SendError::new(e, true))?;
            tokio::net::TcpStream::connect(&addrs[..])
                .await
                .map_err(|e| SendError::new(e, true))
        };
        let stream = tokio::time::timeout(self.connect_timeout, connect)
            .await
            .map_err(|_| SendError {
                cause: Box::new(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "no connection in {}",
                        crate::text::fmt_duration(self.connect_timeout)
                    ),
                )),
                connect: true,
                timeout: true,
            })??;
        // Requests go out whole; the answer is waited for.
        let _ = stream.set_nodelay(true);
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| SendError::new(e, true))?;
        // The connection's IO runs beside the requests; it ends when the socket closes.
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "HTTP connection ended");
            }
        });
        Ok(sender)
    }
}

#[cfg(test)]
#[path = "http1_tests.rs"]
mod tests;
