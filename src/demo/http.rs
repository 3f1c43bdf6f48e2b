//! Serving the demo server over Streamable HTTP (`demo-server --http ADDR`): rmcp's server
//! transport under a small hyper HTTP/1 server, at `/mcp`.
//!
//! Separate from stdio because only here is "the connection" a socket: one `DemoServer` is shared
//! by every session (so notes written in one are seen in the next), `--require-bearer` puts a
//! 401 in front of everything for tests of the client's credentials (`--http-401-on` in front
//! of one method only: a token that lost its scope after start-up), `--oauth` makes the endpoint
//! a protected resource with its own authorization server (`auth.rs`), and the HTTP fault flags
//! ([`HttpFaults`]) break the endpoint for the fault matrix.

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

use super::auth::{AuthServer, DemoAuth};
use super::http_faults::{serve_socket_fault, SocketFault};
use super::http_listing::with_malformed_tools;
use super::{DemoError, DemoOptions, DemoServer};

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

pub(super) type Body = BoxBody<Bytes, Infallible>;

/// What the HTTP endpoint does besides serving MCP; the default is well-behaved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpFaults {
    /// A request without `Authorization: Bearer <this token>` gets 401.
    pub require_bearer: Option<String>,
    /// Every request to the endpoint gets this status (after the bearer check).
    pub status: Option<StatusCode>,
    /// A JSON-RPC request for this method gets 401 (the others are served).
    pub unauthorized_on: Option<String>,
    /// No HTTP at all: every connection gets this instead (wins over the others).
    pub socket: Option<SocketFault>,
    /// The endpoint wants an OAuth access token from the server's own authorization server.
    pub oauth: Option<DemoAuth>,
    /// The `tools/list` answer also holds malformed entries (`http_listing.rs`).
    pub malformed_tools: bool,
    /// Requests are answered with one JSON body each, not an SSE stream (not a fault: a way
    /// of answering servers may choose).
    pub json_answers: bool,
}

/// Serve the demo tools over Streamable HTTP on `listener`, broken as `faults` say, until the
/// process ends.
pub async fn serve_http(
    opts: DemoOptions,
    listener: TcpListener,
    faults: HttpFaults,
) -> Result<(), DemoError> {
    if let Some(fault) = faults.socket {
        return Ok(serve_socket_fault(listener, fault).await?);
    }
    let local = listener.local_addr()?;
    let server = DemoServer::new(opts);
    let mut config = StreamableHttpServerConfig::default();
    // DNS-rebinding protection (loopback host names only) holds on loopback; an operator who
    // binds another address has chosen to be reached by other names.
    if !local.ip().is_loopback() {
        config = config.disable_allowed_hosts();
    }
    config.json_response = faults.json_answers;
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let auth = faults
        .oauth
        .clone()
        .map(|options| AuthServer::new(format!("http://{local}"), options));
    let shared = Arc::new((service, faults, auth));
    loop {
        let (stream, peer) = listener.accept().await?;
        // An answer goes out as its event, then the chunked body's end: with Nagle's algorithm
        // the end would wait for the client's (delayed) acknowledgement, keeping the connection
        // busy, so that a client's next request opens or takes another one.
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                let shared = shared.clone();
                async move {
                    let (service, faults, auth) = shared.as_ref();
                    Ok::<Response<Body>, Infallible>(
                        route(service, faults, auth.as_ref(), request).await,
                    )
                }
            });
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), handler)
                .await
            {
                tracing::debug!(%peer, %error, "demo server: connection ended with an error");
            }
        });
    }
}

async fn route(
    service: &StreamableHttpService<DemoServer, LocalSessionManager>,
    faults: &HttpFaults,
    auth: Option<&AuthServer>,
    request: Request<Incoming>,
) -> Response<Body> {
    if let Some(auth) = auth {
        if AuthServer::serves(request.uri().path()) {
            return auth.handle(request).await;
        }
    }
    if request.uri().path() != MCP_PATH {
        return plain(StatusCode::NOT_FOUND, "not found: the MCP endpoint is /mcp");
    }
    if let Some(refusal) = auth.and_then(|auth| auth.check(&request)) {
        return refusal;
    }
    if let Some(token) = &faults.require_bearer {
        let expected = format!("Bearer {token}");
        let given = request
            .headers()
            .get(http::header::AUTHORIZATION)
            .map(|v| v.as_bytes());
        if given != Some(expected.as_bytes()) {
            return unauthorized("a bearer token is required");
        }
    }
    if let Some(status) = faults.status {
        return plain(
            status,
            "the demo server answers every request with this status",
        );
    }
    if let Some(method) = &faults.unauthorized_on {
        // The body is read to see the method, then handed on as it was.
        let (parts, body) = request.into_parts();
        let Ok(body) = body.collect().await.map(|b| b.to_bytes()) else {
            return plain(
                StatusCode::BAD_REQUEST,
                "the request body could not be read",
            );
        };
        let asked = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|m| m.get("method").and_then(|m| m.as_str()).map(String::from));
        if asked.as_deref() == Some(method.as_str()) {
            return unauthorized("this token may not do that (any more)");
        }
        return service
            .handle(Request::from_parts(parts, Full::new(body)))
            .await;
    }
    if faults.malformed_tools {
        return with_malformed_tools(service, request).await;
    }
    service.handle(request).await
}

/// A 401 with a bearer challenge.
fn unauthorized(text: &'static str) -> Response<Body> {
    let mut response = plain(StatusCode::UNAUTHORIZED, text);
    response.headers_mut().insert(
        http::header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static("Bearer realm=\"aimon-demo\""),
    );
    response
}

pub(super) fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}
