//! The legacy HTTP+SSE transport (protocol 2024-11-05), for back-compat only: rmcp 3.x has none
//! (docs/ARCHITECTURE.md §4.7). GET the SSE URL, wait for the `endpoint` event, POST every message
//! to that endpoint, read the server's messages from the stream.
//!
//! Our own small `Transport` rather than a fork of rmcp's old one: it reuses the reqwest client of
//! `http.rs` (timeouts, connect hook, classification) and the wire-order tap around it.

use std::collections::HashMap;
use std::future::Future;

use futures::{Stream, StreamExt};
use http::{HeaderName, HeaderValue};
use rmcp::model::ServerJsonRpcMessage;
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

use crate::sse::{sse_events, SseEvent, SseStreamError};

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
        let mut events = Box::pin(sse_events(response.bytes_stream()));
        let endpoint = read_endpoint(&base, &mut events).await?;
        let (tx, inbound) = mpsc::channel(256);
        let server = server.to_string();
        let reader = tokio::spawn(async move {
            while let Some(message) = read_message(&mut events, &server).await {
                if tx.send(message).await.is_err() {
                    break;
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

/// Reads events until the `endpoint` event and returns the URL it names, which must be on the
/// same origin as `base` (the SSE URL): every POST carries our credentials. Public, with
/// [`read_message`], for the fuzz target (`fuzz/`), which feeds them arbitrary streams.
pub async fn read_endpoint<S, E>(
    base: &reqwest::Url,
    events: &mut S,
) -> Result<reqwest::Url, SseError>
where
    S: Stream<Item = Result<SseEvent, SseStreamError<E>>> + Unpin,
    E: std::fmt::Display,
{
    loop {
        match events.next().await {
            None => return Err(SseError::NoEndpoint),
            Some(Err(e)) => return Err(SseError::Stream(e.to_string())),
            Some(Ok(SseEvent { event, data })) if event == "endpoint" => {
                let endpoint = base
                    .join(data.trim())
                    .map_err(|_| SseError::BadEndpoint(quote(&data)))?;
                if endpoint.origin() != base.origin() {
                    return Err(SseError::BadEndpoint(quote(&data)));
                }
                return Ok(endpoint);
            }
            Some(Ok(_)) => {}
        }
    }
}

/// The next JSON-RPC message on the stream: `None` at its end or when it breaks. Events of
/// other types and empty ones are skipped; data that is not a message is logged and skipped.
pub async fn read_message<S, E>(events: &mut S, server: &str) -> Option<ServerJsonRpcMessage>
where
    S: Stream<Item = Result<SseEvent, SseStreamError<E>>> + Unpin,
    E: std::fmt::Display,
{
    loop {
        let event = match events.next().await? {
            Ok(event) => event,
            Err(e) => {
                tracing::warn!(%server, error = %e, "legacy SSE stream broke");
                return None;
            }
        };
        if event.event != "message" {
            continue;
        }
        let data = event.data;
        if data.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
            Ok(message) => return Some(message),
            Err(e) => {
                tracing::warn!(%server, error = %e, data = %quote(&data), "legacy SSE event is not a JSON-RPC message");
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn events(
        text: &'static str,
    ) -> impl Stream<Item = Result<SseEvent, SseStreamError<std::convert::Infallible>>> + Unpin
    {
        let chunks = futures::stream::iter([Ok(text.as_bytes())]);
        Box::pin(sse_events(chunks))
    }

    fn base() -> reqwest::Url {
        reqwest::Url::parse("http://127.0.0.1:3001/sse").unwrap()
    }

    #[tokio::test]
    async fn the_endpoint_is_joined_to_the_sse_url_and_kept_on_its_origin() {
        let mut ok =
            events(": hi\n\nevent: ping\ndata: x\n\nevent: endpoint\ndata: /messages?s=1\n\n");
        let endpoint = read_endpoint(&base(), &mut ok).await.unwrap();
        assert_eq!(endpoint.as_str(), "http://127.0.0.1:3001/messages?s=1");
        for elsewhere in [
            "event: endpoint\ndata: http://evil.example/messages\n\n",
            "event: endpoint\ndata: //evil.example/m\n\n",
            "event: endpoint\ndata: https://127.0.0.1:3001/m\n\n",
        ] {
            let got = read_endpoint(&base(), &mut events(elsewhere)).await;
            assert!(
                matches!(got, Err(SseError::BadEndpoint(_))),
                "{elsewhere}: {got:?}"
            );
        }
        let got = read_endpoint(&base(), &mut events("data: {}\n\n")).await;
        assert!(matches!(got, Err(SseError::NoEndpoint)), "{got:?}");
    }

    #[tokio::test]
    async fn messages_are_read_and_everything_else_skipped() {
        let mut stream = events(concat!(
            "event: endpoint\ndata: /m\n\n",
            "data: not json\n\n",
            "event: other\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n",
            "data:\n\n",
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n",
            "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
        ));
        read_endpoint(&base(), &mut stream).await.unwrap();
        let first = read_message(&mut stream, "s").await.unwrap();
        assert!(matches!(
            first,
            rmcp::model::JsonRpcMessage::Notification(_)
        ));
        let second = read_message(&mut stream, "s").await.unwrap();
        assert!(matches!(second, rmcp::model::JsonRpcMessage::Response(_)));
        assert!(read_message(&mut stream, "s").await.is_none());
    }
}
