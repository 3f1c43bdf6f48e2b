//! Why an MCP request failed ([`McpError`]), and how rmcp's errors and HTTP answers become one:
//! an OAuth verdict, an error status, an answer that could not be read, a connection gone.
//!
//! Separate from `client.rs`, which makes the requests: this is only what their failures say.

use std::time::Duration;

use rmcp::service::ServiceError;

use super::super::events::FailureClass;
use super::super::transport::http;

/// Why an MCP request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    #[error("server {server} is disconnected")]
    Disconnected { server: String },
    #[error("no answer within {}", crate::text::fmt_duration(*.0))]
    Timeout(Duration),
    #[error("no answer within the total cap of {} (progress kept the request alive until then)", crate::text::fmt_duration(*.0))]
    TotalTimeout(Duration),
    #[error("cancelled")]
    Cancelled,
    #[error("server error {code}: {message}")]
    Server { code: i32, message: String },
    #[error("protocol error: {0}")]
    Protocol(String),
    #[error("transport error: {0}")]
    Transport(String),
    /// The server answered, but the answer could not be read: why, in words (the request, the
    /// size over the limit, the byte that is not UTF-8…).
    #[error("{0}")]
    Unreadable(String),
    /// HTTP: the server answered the request with an error status (401/403: credentials).
    #[error("{message}{}", credentials_hint(*status))]
    HttpStatus { status: u16, message: String },
    /// HTTP: the OAuth client wants a login (no token, a refused one it could not refresh, more
    /// scope): in words, with the way out.
    #[error("{0}")]
    NeedsLogin(String),
}

impl McpError {
    pub(in crate::mcp) fn from_service(server: &str, err: ServiceError) -> Self {
        match err {
            ServiceError::McpError(data) => McpError::Server {
                code: data.code.0,
                message: crate::text::sanitize_line(&data.message, 500),
            },
            ServiceError::TransportClosed => McpError::Disconnected {
                server: server.to_string(),
            },
            // The inner error: the wrapper's message names rmcp's transport types.
            // An OAuth verdict (a login needed, more scope) in words that say what to do.
            ServiceError::TransportSend(e) => match http::auth_message(&*e.error, server) {
                Some((FailureClass::NeedsLogin, message)) => McpError::NeedsLogin(message),
                Some((_, message)) => McpError::Transport(message),
                None => McpError::Transport(crate::text::sanitize_line(&e.error.to_string(), 500)),
            },
            ServiceError::Timeout { timeout } => McpError::Timeout(timeout),
            ServiceError::Cancelled { .. } => McpError::Cancelled,
            ServiceError::UnexpectedResponse => {
                McpError::Protocol("the server sent an unexpected response".into())
            }
            other => McpError::Protocol(other.to_string()),
        }
    }
}

/// An HTTP answer that is an error status, or that could not be read, as our error; `None` for
/// anything else. `server` names the server in the message (the client does not know its URL).
pub(super) fn http_answer_error(
    server: &str,
    err: &(dyn std::error::Error + 'static),
) -> Option<McpError> {
    if let Some(why) = http::unreadable_answer(err) {
        return Some(McpError::Unreadable(why));
    }
    // The OAuth client's verdicts (a login needed) are said by `from_service`, with the way out.
    if http::auth_message(err, server).is_some() {
        return None;
    }
    let failure = http::classify(err, &format!("server {server}"))
        .filter(|f| f.class == FailureClass::HttpStatus)?;
    Some(McpError::HttpStatus {
        status: failure.http_status?,
        message: failure.message,
    })
}

/// What an error status asks of the operator, for 401 and 403 (after start-up, where the
/// report's hint is not there to say it).
fn credentials_hint(status: u16) -> &'static str {
    match status {
        401 | 403 => " (set `bearer_token` or an Authorization header; a token may have expired or lost its scope)",
        _ => "",
    }
}

/// Whether a failed request means the connection is gone: it closed, or (Streamable HTTP, which
/// holds no connection open to notice with) the server could not be reached at all. A slow or
/// erring server is not gone: timeouts and error answers do not count.
pub(super) fn connection_lost(err: &ServiceError) -> bool {
    match err {
        ServiceError::TransportClosed => true,
        ServiceError::TransportSend(e) => http::server_gone(&*e.error),
        _ => false,
    }
}
