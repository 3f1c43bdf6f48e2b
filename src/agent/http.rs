//! The model client's HTTP exchange: one POST, its status, headers and a body that arrives in
//! chunks, over either of two ways.
//!
//! - `http://` (the local servers: llama.cpp, Ollama, LM Studio, vLLM, `demo-model`): hyper's
//!   own HTTP/1.1 client connection to the host, kept alive and made again when it closed. No
//!   proxy, no redirects, no connection pool: per request, reqwest's layers (its redirect
//!   policy parses the URL again on every request, the proxy matcher, the pool checkout)
//!   cost a third of the CPU of a loopback model request (`cargo bench -- agent`).
//! - `https://`: reqwest, for TLS (rustls, ring), the system's proxy settings and redirects.

use std::error::Error as StdError;
use std::time::Duration;

use futures::stream::BoxStream;
use futures::StreamExt;
use http::{HeaderMap, HeaderValue, StatusCode};
use http_body_util::{BodyStream, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use tokio::sync::Mutex;

use super::failure::{classify_transport, ModelError};

/// An error on the way: the cause's chain, and whether it happened connecting or timed out.
#[derive(Debug)]
pub struct HttpError {
    cause: Box<dyn StdError + Send + Sync>,
    connect: bool,
    timeout: bool,
}

impl HttpError {
    fn reqwest(e: reqwest::Error) -> Self {
        HttpError {
            connect: e.is_connect(),
            timeout: e.is_timeout(),
            cause: Box::new(e),
        }
    }

    fn direct(cause: impl Into<Box<dyn StdError + Send + Sync>>, connect: bool) -> Self {
        HttpError {
            cause: cause.into(),
            connect,
            timeout: false,
        }
    }

    /// The failure class and message of this error for `authority`.
    pub fn classify(&self, authority: &str) -> ModelError {
        classify_transport(&*self.cause, self.connect, self.timeout, authority)
    }
}

/// An answer: its status and headers, the body still on its way.
pub struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: BoxStream<'static, Result<Bytes, HttpError>>,
}

impl Response {
    /// `Content-Length`, when the answer says it.
    pub fn content_length(&self) -> Option<u64> {
        self.headers
            .get(http::header::CONTENT_LENGTH)?
            .to_str()
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

/// How requests reach the endpoint.
pub enum Http {
    Direct(Direct),
    Reqwest {
        client: reqwest::Client,
        /// Parsed once (reqwest would parse the string on every request).
        url: reqwest::Url,
    },
}

impl Http {
    /// The way to `url` (`…/chat/completions`), connecting within `connect_timeout`.
    pub fn new(url: &str, connect_timeout: Duration) -> Result<Http, String> {
        let uri: http::Uri = url.parse().map_err(|e| format!("{e}"))?;
        if uri.scheme_str() == Some("http") {
            let authority = uri.authority().ok_or("no host")?;
            let port = authority.port_u16().unwrap_or(80);
            return Ok(Http::Direct(Direct {
                host_name: authority.host().to_string(),
                port,
                host: HeaderValue::from_str(authority.as_str()).map_err(|e| e.to_string())?,
                // Origin form: the path and query alone (a clone of it shares its bytes).
                target: uri
                    .path_and_query()
                    .and_then(|p| p.as_str().parse().ok())
                    .unwrap_or_else(|| http::Uri::from_static("/")),
                connect_timeout,
                idle: Mutex::new(None),
            }));
        }
        // rustls' ring provider, as for MCP servers (docs/ARCHITECTURE.md §4); an earlier one is
        // kept.
        crate::net::install_tls_provider();
        let client = reqwest::Client::builder()
            .connect_timeout(connect_timeout)
            .dns_resolver(std::sync::Arc::new(crate::net::Resolver))
            .build()
            .map_err(|e| e.to_string())?;
        let url = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
        Ok(Http::Reqwest { client, url })
    }

    /// POSTs `body` with `headers`; resolves when the answer's head has come.
    pub async fn post(&self, headers: &HeaderMap, body: Bytes) -> Result<Response, HttpError> {
        match self {
            Http::Direct(direct) => direct.post(headers, body).await,
            Http::Reqwest { client, url } => {
                let response = client
                    .post(url.clone())
                    .headers(headers.clone())
                    .body(body)
                    .send()
                    .await
                    .map_err(HttpError::reqwest)?;
                Ok(Response {
                    status: response.status(),
                    headers: response.headers().clone(),
                    body: response
                        .bytes_stream()
                        .map(|piece| piece.map_err(HttpError::reqwest))
                        .boxed(),
                })
            }
        }
    }
}

/// How long a request waits for the kept connection when it is not ready at once.
const BUSY_WAIT: Duration = Duration::from_millis(5);

/// One kept-alive HTTP/1.1 connection to a plain-HTTP endpoint.
pub struct Direct {
    /// The host to connect to (a name, or an address as the URL wrote it) and its port.
    host_name: String,
    port: u16,
    /// The `Host` header.
    host: HeaderValue,
    /// The request target (`/v1/chat/completions`), parsed once.
    target: http::Uri,
    connect_timeout: Duration,
    /// The connection between requests; a request takes it (a second request at the same
    /// time opens its own) and gives it back once the answer's head has come. A request that
    /// finds it still carrying that answer's body (a streamed answer can take minutes) waits
    /// [`BUSY_WAIT`] at most, then opens its own rather than wait behind it, where it could time
    /// out; the busy one closes when its body ends.
    idle: Mutex<Option<SendRequest<Full<Bytes>>>>,
}

impl Direct {
    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, HttpError> {
        // Resolved by `net::lookup`, so that a name that does not resolve is a `dns_error`.
        let connect = async {
            let addrs = crate::net::lookup(&self.host_name, self.port)
                .await
                .map_err(|e| HttpError::direct(e, true))?;
            tokio::net::TcpStream::connect(&addrs[..])
                .await
                .map_err(|e| HttpError::direct(e, true))
        };
        let stream = tokio::time::timeout(self.connect_timeout, connect)
            .await
            .map_err(|_| HttpError {
                cause: format!(
                    "no connection in {}",
                    crate::text::fmt_duration(self.connect_timeout)
                )
                .into(),
                connect: true,
                timeout: true,
            })??;
        // Requests go out whole; the answer is waited for.
        let _ = stream.set_nodelay(true);
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| HttpError::direct(e, true))?;
        // The connection's IO runs beside the requests; it ends when the socket closes.
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "model connection ended");
            }
        });
        Ok(sender)
    }

    fn request(&self, headers: &HeaderMap, body: Bytes) -> http::Request<Full<Bytes>> {
        let mut request = http::Request::new(Full::new(body));
        *request.method_mut() = http::Method::POST;
        *request.uri_mut() = self.target.clone();
        let out = request.headers_mut();
        out.insert(http::header::HOST, self.host.clone());
        for (name, value) in headers {
            out.insert(name, value.clone());
        }
        request
    }

    async fn post(&self, headers: &HeaderMap, body: Bytes) -> Result<Response, HttpError> {
        let request = || self.request(headers, body.clone());
        let kept = match self.idle.lock().await.take() {
            // Not ready yet: free a moment later (its connection task has yet to run after
            // the last body ended), or still busy with another answer's body, left to finish
            // it rather than waited behind.
            Some(mut kept) if !kept.is_ready() && !kept.is_closed() => {
                tokio::time::timeout(BUSY_WAIT, kept.ready())
                    .await
                    .is_ok()
                    .then_some(kept)
            }
            kept => kept,
        };
        let tried = match kept {
            Some(sender) => Some(Self::exchange(sender, request()).await),
            None => None,
        };
        let (sender, response) = match tried {
            Some(Ok(done)) => done,
            Some(Err((e, false))) => return Err(HttpError::direct(e, false)),
            // No kept connection, or the server closed it while idle (the request was never
            // written): a new one.
            Some(Err((_, true))) | None => Self::exchange(self.connect().await?, request())
                .await
                .map_err(|(e, _)| HttpError::direct(e, false))?,
        };
        *self.idle.lock().await = Some(sender);
        let (parts, incoming) = response.into_parts();
        let body = BodyStream::new(incoming)
            .filter_map(|frame| async move {
                match frame {
                    Ok(frame) => frame.into_data().ok().map(Ok),
                    Err(e) => Some(Err(HttpError::direct(e, false))),
                }
            })
            .boxed();
        Ok(Response {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }

    /// Sends `request` on `sender`: the sender and the answer's head, or the error and
    /// whether the request was never sent (worth one more try on a new connection).
    async fn exchange(
        mut sender: SendRequest<Full<Bytes>>,
        request: http::Request<Full<Bytes>>,
    ) -> Result<
        (
            SendRequest<Full<Bytes>>,
            http::Response<hyper::body::Incoming>,
        ),
        (hyper::Error, bool),
    > {
        if let Err(e) = sender.ready().await {
            return Err((e, true));
        }
        match sender.send_request(request).await {
            Ok(response) => Ok((sender, response)),
            Err(e) => {
                let unsent = e.is_canceled();
                Err((e, unsent))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A server answering each request (a head and the 2-byte body `{}`) with `{"a":1}`,
    /// counting its connections. `keep`: connections stay open for more requests; else each
    /// is closed after one answer (without saying so in a header, as a server's idle timeout
    /// does). `hold_first`: the very first request gets a chunked answer whose body never
    /// ends (a long streamed answer).
    async fn server(keep: bool, hold_first: bool) -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let first = counted.fetch_add(1, Ordering::SeqCst) == 0;
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buf = [0u8; 4096];
                    loop {
                        while !request.ends_with(b"\r\n\r\n{}") {
                            match socket.read(&mut buf).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => request.extend_from_slice(&buf[..n]),
                            }
                        }
                        request.clear();
                        if first && hold_first {
                            let _ = socket
                                .write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n")
                                .await;
                            std::future::pending::<()>().await;
                        }
                        let _ = socket
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n{\"a\":1}")
                            .await;
                        if !keep {
                            return;
                        }
                    }
                });
            }
        });
        (format!("http://{address}/v1/chat/completions"), connections)
    }

    #[tokio::test]
    async fn a_connection_the_server_closed_while_idle_is_made_again() {
        let (url, connections) = server(false, false).await;
        let http = Http::new(&url, Duration::from_secs(5)).unwrap();
        assert!(matches!(http, Http::Direct(_)));
        for _ in 0..3 {
            let response = http
                .post(&HeaderMap::new(), Bytes::from_static(b"{}"))
                .await
                .unwrap();
            assert_eq!(response.status, StatusCode::OK);
            assert_eq!(response.content_length(), Some(7));
            let body: Vec<Bytes> = response.body.map(|b| b.unwrap()).collect().await;
            assert_eq!(body.concat(), b"{\"a\":1}");
            // The server closes the connection; the client sees it before the next request.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(connections.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_request_does_not_wait_behind_another_answers_body() {
        let (url, connections) = server(true, true).await;
        let http = Http::new(&url, Duration::from_secs(5)).unwrap();
        // The first answer's head has come; its body goes on (never ends here).
        let streaming = http
            .post(&HeaderMap::new(), Bytes::from_static(b"{}"))
            .await
            .unwrap();
        let second = tokio::time::timeout(
            Duration::from_secs(5),
            http.post(&HeaderMap::new(), Bytes::from_static(b"{}")),
        )
        .await
        .expect("the second request waited behind the first answer's body")
        .unwrap();
        assert_eq!(second.status, StatusCode::OK);
        let body: Vec<Bytes> = second.body.map(|b| b.unwrap()).collect().await;
        assert_eq!(body.concat(), b"{\"a\":1}");
        assert_eq!(connections.load(Ordering::SeqCst), 2);
        drop(streaming);
    }

    #[tokio::test]
    async fn requests_one_after_another_keep_one_connection() {
        let (url, connections) = server(true, false).await;
        let http = Http::new(&url, Duration::from_secs(5)).unwrap();
        for _ in 0..5 {
            let response = http
                .post(&HeaderMap::new(), Bytes::from_static(b"{}"))
                .await
                .unwrap();
            let body: Vec<Bytes> = response.body.map(|b| b.unwrap()).collect().await;
            assert_eq!(body.concat(), b"{\"a\":1}");
        }
        assert_eq!(connections.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn nothing_listening_is_connect_refused_and_https_goes_through_reqwest() {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = free.local_addr().unwrap();
        drop(free);
        let http = Http::new(&format!("http://{address}/v1"), Duration::from_secs(5)).unwrap();
        let error = match http.post(&HeaderMap::new(), Bytes::new()).await {
            Err(e) => e.classify(&address.to_string()),
            Ok(_) => panic!("nothing listens there"),
        };
        assert_eq!(
            error.class,
            super::super::failure::ModelFailureClass::ConnectRefused
        );
        assert!(error.message.contains("refused"), "{}", error.message);
        let tls = Http::new("https://example.invalid/v1", Duration::from_secs(5)).unwrap();
        assert!(matches!(tls, Http::Reqwest { .. }));
    }
}
