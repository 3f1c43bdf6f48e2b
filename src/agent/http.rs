//! The model client's HTTP exchange: one POST, its status, headers and a body that arrives in
//! chunks, over either of two ways.
//!
//! - `http://` (the local servers: llama.cpp, Ollama, LM Studio, vLLM, `demo-model`):
//!   kept-alive HTTP/1.1 connections of hyper's own (`net::http1`); no proxy, no redirects.
//! - `https://`: reqwest, for TLS (rustls, ring), the system's proxy settings and redirects.

use std::error::Error as StdError;
use std::time::Duration;

use futures::stream::BoxStream;
use futures::StreamExt;
use http::{HeaderMap, StatusCode};
use http_body_util::BodyStream;
use hyper::body::Bytes;

use super::failure::{classify_transport, ModelError};
use crate::net::http1::{Origin, SendError};

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

    fn direct(e: SendError) -> Self {
        HttpError {
            cause: e.cause,
            connect: e.connect,
            timeout: e.timeout,
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
    Direct(Origin),
    Reqwest {
        client: reqwest::Client,
        /// Parsed once (reqwest would parse the string on every request).
        url: reqwest::Url,
    },
}

impl Http {
    /// The way to `url` (`…/chat/completions`), connecting within `connect_timeout`.
    pub fn new(url: &str, connect_timeout: Duration) -> Result<Http, String> {
        let _: http::Uri = url.parse().map_err(|e| format!("{e}"))?;
        if let Some(origin) = Origin::for_url(url, connect_timeout) {
            return Ok(Http::Direct(origin));
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
            Http::Direct(origin) => {
                let (parts, incoming) = origin
                    .send(http::Method::POST, headers.clone(), body)
                    .await
                    .map_err(HttpError::direct)?
                    .into_parts();
                let body = BodyStream::new(incoming)
                    .filter_map(|frame| async move {
                        match frame {
                            Ok(frame) => frame.into_data().ok().map(Ok),
                            Err(e) => Some(Err(HttpError {
                                cause: Box::new(e),
                                connect: false,
                                timeout: false,
                            })),
                        }
                    })
                    .boxed();
                Ok(Response {
                    status: parts.status,
                    headers: parts.headers,
                    body,
                })
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn nothing_listening_is_connect_refused_and_https_goes_through_reqwest() {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = free.local_addr().unwrap();
        drop(free);
        let http = Http::new(&format!("http://{address}/v1"), Duration::from_secs(5)).unwrap();
        assert!(matches!(http, Http::Direct(_)));
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
