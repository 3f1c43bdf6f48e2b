//! The start of an HTTP server, Streamable HTTP or legacy SSE: connect (DNS, TCP, TLS; for SSE
//! also the `endpoint` event), handshake, then the tools-listed phase shared with stdio
//! (`starter.rs`). Failures are classified by type (`transport::http::classify`): refused, DNS,
//! TLS, HTTP status, timeout, else protocol error.

use std::sync::{Arc, Mutex};

use rmcp::service::RoleClient;
use rmcp::transport::Transport;

use super::starter::{list_tools, StartOutcome, Starter};
use crate::mcp::auth::ServerHttpClient;
use crate::mcp::client::{DefaultMcpClient, HandshakeError};
use crate::mcp::events::{FailureClass, StartPhase};
use crate::mcp::notify::NotificationTap;
use crate::mcp::transport::http::{self, ConnectWatch, HttpFailure};
use crate::mcp::transport::http_direct::{HttpCalls, HttpSession};
use crate::mcp::transport::http_pages::ToolPages;
use crate::mcp::transport::issues::StdoutIssues;
use crate::mcp::transport::sse::SseTransport;
use crate::mcp::transport::tap::Tapped;

/// Starts a `streamable_http` server.
pub(super) async fn start_streamable_http(
    starter: &Starter<'_>,
    tap: NotificationTap,
) -> StartOutcome {
    let config = starter.config;
    starter.enter(StartPhase::Connect);
    let watch = ConnectWatch::default();
    let client = match http::client(http::connect_timeout(config), watch.clone()) {
        Ok(client) => client,
        Err(e) => {
            return starter
                .fail_http(StartPhase::Connect, build_failure(e))
                .await
        }
    };
    // The entries of tools/list pages read here wait for the client beside the answer.
    let issues = Arc::new(Mutex::new(StdoutIssues::default()));
    let pages = ToolPages::new(issues.clone());
    let http = ServerHttpClient::new(config, client, pages);
    let transport = Tapped::new(
        crate::mcp::auth::streamable_http(config, http.clone()),
        &config.name,
        tap.clone(),
    );
    // Calls go the direct way where its requests go out plainly (`transport/http_direct.rs`).
    let direct = |client: DefaultMcpClient| {
        if !http.goes_plain() {
            return client;
        }
        client.with_direct_http(|protocol_version| {
            HttpCalls::new(HttpSession {
                client: Arc::new(http.clone()),
                uri: config.url.as_deref().unwrap_or_default(),
                headers: http::headers(config, true),
                protocol_version,
                tap,
                server: &config.name,
            })
        })
    };
    handshake(starter, transport, Some(&watch), issues, direct).await
}

/// Starts a legacy `sse` server: its connect phase ends with the `endpoint` event.
pub(super) async fn start_sse(starter: &Starter<'_>, tap: NotificationTap) -> StartOutcome {
    let config = starter.config;
    let url = config.url.clone().unwrap_or_default();
    let authority = http::authority(&url);
    starter.enter(StartPhase::Connect);
    let client = match http::client(http::connect_timeout(config), ConnectWatch::default()) {
        Ok(client) => client,
        Err(e) => {
            return starter
                .fail_http(StartPhase::Connect, build_failure(e))
                .await
        }
    };
    let connect = SseTransport::connect(client, &url, http::headers(config, true), &config.name);
    let transport = match tokio::time::timeout(config.request_timeout, connect).await {
        Ok(Ok(transport)) => transport,
        Ok(Err(e)) => {
            let failure = http::classify(&e, &authority).unwrap_or_else(|| HttpFailure {
                class: FailureClass::ProtocolError,
                http_status: None,
                message: http::describe(&e, &authority),
            });
            return starter.fail_http(StartPhase::Connect, failure).await;
        }
        Err(_) => {
            let failure = HttpFailure {
                class: FailureClass::Timeout,
                http_status: None,
                message: format!(
                    "no `endpoint` event from {authority} within request_timeout ({})",
                    crate::text::fmt_duration(config.request_timeout)
                ),
            };
            return starter.fail_http(StartPhase::Connect, failure).await;
        }
    };
    starter.finish(StartPhase::Connect);
    starter.enter(StartPhase::Handshake);
    let tapped = Tapped::new(transport, &config.name, tap);
    handshake(starter, tapped, None, Arc::default(), |client| client).await
}

fn build_failure(e: http::ClientBuildError) -> HttpFailure {
    HttpFailure {
        class: FailureClass::TlsError,
        http_status: None,
        message: e.to_string(),
    }
}

/// The handshake over `transport`, then `direct` given the client. With `watch`, the connect
/// phase is still open and ends when the first connection is up (the handshake's own request
/// opens it).
async fn handshake<T>(
    starter: &Starter<'_>,
    transport: T,
    watch: Option<&ConnectWatch>,
    issues: Arc<Mutex<StdoutIssues>>,
    direct: impl FnOnce(DefaultMcpClient) -> DefaultMcpClient,
) -> StartOutcome
where
    T: Transport<RoleClient> + 'static,
{
    let config = starter.config;
    let authority = http::authority(config.url.as_deref().unwrap_or(""));
    let handshake = DefaultMcpClient::handshake(
        starter.links.clone(),
        transport,
        None,
        config.request_timeout,
        issues,
        starter.options,
    );
    tokio::pin!(handshake);
    let result = match watch {
        None => handshake.await,
        Some(watch) => {
            let early = tokio::select! {
                biased;
                () = watch.connected() => None,
                result = &mut handshake => Some(result),
            };
            if watch.is_connected() {
                starter.finish(StartPhase::Connect);
                starter.enter(StartPhase::Handshake);
            }
            match early {
                Some(result) => result,
                None => handshake.await,
            }
        }
    };
    let connected = watch.is_none_or(ConnectWatch::is_connected);
    let phase = if connected {
        StartPhase::Handshake
    } else {
        StartPhase::Connect
    };
    let client = match result {
        Ok(client) => direct(client),
        Err((err, _)) => {
            let failure = match (&err, connected) {
                (HandshakeError::Timeout(d), false) => HttpFailure {
                    class: FailureClass::Timeout,
                    http_status: None,
                    message: format!(
                        "no connection to {authority} within request_timeout ({})",
                        crate::text::fmt_duration(*d)
                    ),
                },
                (HandshakeError::Timeout(d), true) => HttpFailure {
                    class: FailureClass::HandshakeTimeout,
                    http_status: None,
                    message: format!(
                        "no answer to the handshake within request_timeout ({})",
                        crate::text::fmt_duration(*d)
                    ),
                },
                (
                    HandshakeError::Closed { message, .. } | HandshakeError::Failed { message, .. },
                    _,
                ) => match err.transport_error() {
                    Some(e) => http::classify(e, &authority).unwrap_or_else(|| HttpFailure {
                        class: FailureClass::ProtocolError,
                        http_status: None,
                        message: http::describe(e, &authority),
                    }),
                    None => HttpFailure {
                        class: FailureClass::ProtocolError,
                        http_status: None,
                        message: message.clone(),
                    },
                },
                (HandshakeError::Unreadable(why), _) => HttpFailure {
                    class: FailureClass::AnswerUnreadable,
                    http_status: None,
                    message: why.clone(),
                },
            };
            return starter.fail_http(phase, failure).await;
        }
    };
    starter.finish(StartPhase::Handshake);
    list_tools(starter, client).await
}
