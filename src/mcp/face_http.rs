//! The gateway's face over Streamable HTTP (`serve --http ADDR`, the console's `--serve-http`):
//! rmcp's server transport under a small hyper HTTP/1 server at `/mcp`, safe by default.
//!
//! - Every request carries `Authorization: Bearer <token>` or gets 401 (compared in constant
//!   time; the token is never logged).
//! - A browser's request (an `Origin` header) gets 403 unless, on loopback, it comes from a
//!   loopback origin (`http://localhost:*`, `127.0.0.1`, `[::1]`): no other web page may drive
//!   the gateway, and even those need the token.
//! - On loopback, a `Host` that is not a loopback name gets 403 (DNS rebinding).
//! - A body over [`MAX_BODY_BYTES`] gets 413.

use std::convert::Infallible;
use std::sync::Arc;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::face::{Face, Gateway};

/// The path the gateway is served at.
pub const PATH: &str = "/mcp";
/// The largest request body taken (1 MiB: far above any tool call a host makes).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The origins a browser on this machine sends (any port), let through on loopback.
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

type Body = BoxBody<Bytes, Infallible>;

/// Serves `gateway` on `listener` to every host that brings `token`, until `stop`.
pub async fn serve_http(
    gateway: Arc<Gateway>,
    listener: TcpListener,
    token: String,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let local = listener.local_addr()?;
    let mut config = StreamableHttpServerConfig::default()
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_cancellation_token(stop.child_token());
    // DNS-rebinding protection (loopback host names and origins only) holds on loopback; an
    // operator who binds another address has chosen to be reached by other names.
    if local.ip().is_loopback() {
        config = config.with_allowed_origins(LOOPBACK_ORIGINS);
    } else {
        config = config.disable_allowed_hosts();
    }
    let service = StreamableHttpService::new(
        move || Ok(Face::new(gateway.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let shared = Arc::new((service, format!("Bearer {token}")));
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => accepted?,
            () = stop.cancelled() => return Ok(()),
        };
        // As the demo server does (`demo/http.rs`): the body's end goes out at once.
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                let shared = shared.clone();
                async move {
                    let (service, expected) = shared.as_ref();
                    Ok::<Response<Body>, Infallible>(route(service, expected, request).await)
                }
            });
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), handler)
                .await
            {
                tracing::debug!(%peer, %error, "gateway: a host's connection ended with an error");
            }
        });
    }
}

async fn route(
    service: &StreamableHttpService<Face, LocalSessionManager>,
    expected: &str,
    request: Request<Incoming>,
) -> Response<Body> {
    if request.uri().path() != PATH {
        return plain(StatusCode::NOT_FOUND, "not found: the gateway is at /mcp");
    }
    let given = request
        .headers()
        .get(http::header::AUTHORIZATION)
        .map(|v| v.as_bytes())
        .unwrap_or_default();
    if !same(given, expected.as_bytes()) {
        let mut response = plain(
            StatusCode::UNAUTHORIZED,
            "the gateway wants its bearer token (aimon-console gateway-token prints it)",
        );
        response.headers_mut().insert(
            http::header::WWW_AUTHENTICATE,
            http::HeaderValue::from_static("Bearer realm=\"aimon-console\""),
        );
        return response;
    }
    service.handle(request).await
}

/// Compares in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}
