//! OAuth 2.1 for Streamable HTTP servers (MCP authorization): rmcp's `transport::auth` where it
//! fits (metadata discovery, PKCE, the code exchange, refresh, the client-secret
//! client-credentials grant, cross-app access), and here what it leaves out:
//!
//! - `store`: a token store on disk (one 0600 file per server URL), so a login outlives the
//!   process and a refresh in the console is seen by the next `check`;
//! - `discover`: the challenge probe, and 2025-03-26 metadata with another `issuer`;
//! - `register`: the client order (configured, client ID metadata document, the stored
//!   registration, dynamic registration honouring the server's token endpoint auth method);
//! - `callback` and `login`: the loopback redirect listener and the interactive flow;
//! - `unattended`: client credentials with a private-key JWT (`jwt`, signed with ring), and
//!   getting a new unattended token whenever one is missing or refused;
//! - `dpop`: DPoP-bound tokens (RFC 9449) where the authorization server offers them: proofs on
//!   token requests and on every request to the server, and the nonces servers hand out;
//! - `revoke`: giving the tokens back at `logout` (RFC 7009), where the server offers it;
//! - `transport`: the HTTP client that turns 401s into `needs_login`, records 403
//!   `insufficient_scope` step-ups with a retry limit, and ends them when the request succeeds.

/// The three methods of rmcp's `StreamableHttpClient` that only pass a request on with the
/// default limits: both HTTP clients here (`transport::ServerHttpClient`, `dpop::Presenter`)
/// implement the limited ones and forward these. At the use, the names are in scope.
macro_rules! forward_to_limited {
    () => {
        async fn post_message(
            &self,
            uri: Arc<str>,
            message: ClientJsonRpcMessage,
            session_id: Option<Arc<str>>,
            auth_header: Option<String>,
            custom_headers: HashMap<HeaderName, HeaderValue>,
        ) -> Result<StreamableHttpPostResponse, HttpError> {
            self.post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                StreamableHttpResponseLimits::default(),
            )
            .await
        }

        async fn post_message_with_max_sse_event_size(
            &self,
            uri: Arc<str>,
            message: ClientJsonRpcMessage,
            session_id: Option<Arc<str>>,
            auth_header: Option<String>,
            custom_headers: HashMap<HeaderName, HeaderValue>,
            max_sse_event_size: usize,
        ) -> Result<StreamableHttpPostResponse, HttpError> {
            let mut limits = StreamableHttpResponseLimits::default();
            limits.max_sse_event_size = max_sse_event_size;
            self.post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await
        }

        async fn get_stream(
            &self,
            uri: Arc<str>,
            session_id: Option<Arc<str>>,
            last_event_id: Option<String>,
            auth_header: Option<String>,
            custom_headers: HashMap<HeaderName, HeaderValue>,
        ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, HttpError> {
            self.get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                StreamableHttpResponseLimits::default().max_sse_event_size,
            )
            .await
        }
    };
}

mod callback;
mod discover;
mod dpop;
mod jwt;
mod login;
mod register;
mod revoke;
pub mod store;
mod transport;
mod unattended;

pub use login::{begin as begin_login, Login, LoginSummary, PendingLogin};
pub use revoke::Revocation;
pub use store::{store_dir, StoreError, TokenStore};
pub use transport::{streamable_http, ServerHttpClient};

use rmcp::transport::auth::AuthError;

use crate::config::{ServerConfig, TransportKind};

/// How many logins may answer the same 403 `insufficient_scope` before it is taken as final
/// (the server keeps refusing a scope the account is not given): after the first login, two
/// step-ups, so at most three authorizations in all.
pub const MAX_STEP_UP_LOGINS: u32 = 2;

/// Why a login (or an unattended token request) failed. The messages never hold a token.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("server {0} is not a streamable_http server: OAuth is for Streamable HTTP")]
    NotStreamableHttp(String),
    #[error("server {0} sends its own credentials (bearer_token or an Authorization header): remove them to log in with OAuth")]
    StaticCredentials(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot listen for the browser's redirect on 127.0.0.1: {0}")]
    Listener(std::io::Error),
    #[error("discovering the authorization server failed: {0}")]
    Discovery(String),
    #[error("client registration failed: {0}")]
    Registration(String),
    #[error("the authorization server refused: {error}{}", if description.is_empty() { String::new() } else { format!(" ({description})") })]
    Denied { error: String, description: String },
    #[error("not a usable redirect: {0}")]
    Callback(String),
    #[error("exchanging the authorization code failed: {0}")]
    Exchange(String),
    #[error("getting a token failed: {0}")]
    Unattended(String),
}

/// Whether requests to `config`'s server go through the OAuth client: a Streamable HTTP
/// server that sends no credentials of its own.
pub fn applies(config: &ServerConfig) -> bool {
    config.transport == TransportKind::StreamableHttp
        && config.bearer_token.is_none()
        && !config
            .headers
            .keys()
            .any(|name| name.eq_ignore_ascii_case("authorization"))
}

/// The URL of a server OAuth applies to.
fn remote_url(config: &ServerConfig) -> Result<&str, LoginError> {
    if config.transport != TransportKind::StreamableHttp {
        return Err(LoginError::NotStreamableHttp(config.name.clone()));
    }
    if !applies(config) {
        return Err(LoginError::StaticCredentials(config.name.clone()));
    }
    config
        .url
        .as_deref()
        .ok_or_else(|| LoginError::NotStreamableHttp(config.name.clone()))
}

/// rmcp's auth error in words fit for a report: one line, sanitized.
pub fn describe(e: &AuthError) -> String {
    crate::text::sanitize_line(&e.to_string(), 400)
}

/// Forgets `config`'s server: revokes its tokens where the authorization server offers that
/// (best effort), then deletes its token file. `None` when there was no file; else what the
/// revocation came to.
pub async fn logout(config: &ServerConfig) -> Result<Option<Revocation>, StoreError> {
    let store = TokenStore::for_url(config.url.as_deref().unwrap_or_default());
    // A file that cannot be read is still deleted: forgetting is what was asked.
    let revocation = match store.read() {
        Ok(record) => revoke::revoke(&record).await,
        Err(e) => Revocation::Failed(e.to_string()),
    };
    Ok(store.delete()?.then_some(revocation))
}

/// The scope a pending step-up asks for, while a login may still answer it (a 403
/// `insufficient_scope` was recorded and fewer than [`MAX_STEP_UP_LOGINS`] logins answered it).
pub fn step_up_pending(config: &ServerConfig) -> Option<String> {
    if !applies(config) {
        return None;
    }
    let store = TokenStore::for_url(config.url.as_deref()?);
    store
        .read()
        .ok()?
        .step_up
        .filter(|s| s.refusals <= MAX_STEP_UP_LOGINS)
        .map(|s| s.scope)
}
