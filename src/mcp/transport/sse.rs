//! The legacy HTTP+SSE transport (protocol 2024-11-05), for back-compat only: rmcp 3.x has none
//! (DESIGN §4.7). GET the SSE URL, wait for the `endpoint` event, POST every message to that
//! endpoint, read the server's messages from the stream.
//!
//! Our own small `Transport` rather than a fork of rmcp's old one: it reuses the reqwest client of
//! `http.rs` (timeouts, connect hook, classification) and the wire-order tap around it.

use std::collections::HashMap;
use std::future::Future;

use futures::StreamExt;
use http::{HeaderName, HeaderValue};
use rmcp::model::ServerJsonRpcMessage;
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

/// Characters of a bad endpoint or event quoted in errors.
const QUOTE_CHARS: usize = 120;

/// Why the legacy SSE transport failed.
#[derive(Debug, thiserror::Error)]
pub enum SseError {
    #[error("{0}")]
    Http(#[source] reqwest::Error),
    #[error("HTTP {0}")]
    Status(u16),
    #[error("the SSE URL did not answer with text/event-stream (content type {0:?})")]
    NotEventStream(String),
    #[error("the SSE stream ended before its `endpoint` event")]
    NoEndpoint,
    #[error("the `endpoint` event named {0:?}, which is not a URL on the same origin")]
    BadEndpoint(String),
    #[error("the SSE stream broke: {0}")]
    Stream(String),
    #[error("the connection is closed")]
    Closed,
    #[error("cannot encode the message: {0}")]
    Encode(#[from] serde_json::Error),
}

/// The client side of a legacy SSE connection.
pub struct SseTransport {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    headers: HashMap<HeaderName, HeaderValue>,
    inbound: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: tokio::task::JoinHandle<()>,
}

impl SseTransport {
    /// Opens the stream at `url` and waits for the `endpoint` event (the caller bounds the
    /// wait). `headers` go with every request, the bearer token among them.
    pub async fn connect(
        client: reqwest::Client,
        url: &str,
        headers: HashMap<HeaderName, HeaderValue>,
        server: &str,
    ) -> Result<SseTransport, SseError> {
        let base = reqwest::Url::parse(url).map_err(|_| SseError::BadEndpoint(quote(url)))?;
        let mut request = client
            .get(base.clone())
            .header(http::header::ACCEPT, "text/event-stream");
        for (name, value) in &headers {
            request = request.header(name, value);
        }
        let response = request.send().await.map_err(SseError::Http)?;
        let status = response.status();
        if !status.is_success() {
            return Err(SseError::Status(status.as_u16()));
        }
        let content_type = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        if !content_type.starts_with("text/event-stream") {
            return Err(SseError::NotEventStream(content_type));
        }
        let mut events = sse_stream::SseStream::from_bytes_stream(response.bytes_stream());
        let endpoint = loop {
            match events.next().await {
                None => return Err(SseError::NoEndpoint),
                Some(Err(e)) => return Err(SseError::Stream(e.to_string())),
                Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                    let data = event.data.unwrap_or_default();
                    let endpoint = base
                        .join(data.trim())
                        .map_err(|_| SseError::BadEndpoint(quote(&data)))?;
                    // POSTs carry our credentials: never to another origin.
                    if endpoint.origin() != base.origin() {
                        return Err(SseError::BadEndpoint(quote(&data)));
                    }
                    break endpoint;
                }
                Some(Ok(_)) => {}
            }
        };
        let (tx, inbound) = mpsc::channel(256);
        let server = server.to_string();
        let reader = tokio::spawn(async move {
            while let Some(event) = events.next().await {
                let event = match event {
                    Ok(event) => event,
                    Err(e) => {
                        tracing::warn!(%server, error = %e, "legacy SSE stream broke");
                        break;
                    }
                };
                match event.event.as_deref() {
                    None | Some("message") => {}
                    Some(_) => continue,
                }
                let data = event.data.unwrap_or_default();
                if data.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
                    Ok(message) => {
                        if tx.send(message).await.is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(%server, error = %e, data = %quote(&data), "legacy SSE event is not a JSON-RPC message");
                    }
                }
            }
        });
        Ok(SseTransport {
            client,
            endpoint,
            headers,
            inbound,
            reader,
        })
    }
}

fn quote(text: &str) -> String {
    crate::text::sanitize_line(text, QUOTE_CHARS)
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let mut request = self
            .client
            .post(self.endpoint.clone())
            .header(http::header::CONTENT_TYPE, "application/json");
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        let closed = self.reader.is_finished();
        async move {
            if closed {
                return Err(SseError::Closed);
            }
            let body = serde_json::to_vec(&item)?;
            let response = request.body(body).send().await.map_err(SseError::Http)?;
            let status = response.status();
            if status.is_success() {
                Ok(())
            } else {
                Err(SseError::Status(status.as_u16()))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.inbound.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        self.inbound.close();
        Ok(())
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}
