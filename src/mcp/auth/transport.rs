//! The HTTP client under rmcp's Streamable HTTP transport for a server reached with OAuth:
//! rmcp's `AuthClient` (the stored token on every request, refreshed before it expires and once
//! on a 401) wrapped with what it leaves to its caller:
//!
//! - unattended grants get a token before a request when there is none (or it is expiring),
//!   and a fresh one when the server refuses it;
//! - a 401 that asks for a login becomes `AuthError::AuthorizationRequired` (the start reports
//!   `needs_login`), unless the server shows no sign of OAuth (a bare `Bearer realm` challenge
//!   and nothing configured or stored), which stays a plain 401;
//! - a 403 `insufficient_scope` is recorded as a step-up in the token store and becomes
//!   `AuthError::InsufficientScope` (also `needs_login`); after [`MAX_STEP_UP_LOGINS`] logins
//!   that did not satisfy it, `AuthError::InvalidScope` (a plain 403: stop asking);
//! - a request that succeeds after a step-up ends it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use oauth2::TokenResponse;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{AuthClient, AuthError};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use rmcp::transport::StreamableHttpClientTransport;
use tokio::sync::{Mutex, OnceCell};

use super::discover::{challenge_param, is_oauth_challenge};
use super::dpop::{self, DpopSession, Presenter};
use super::login::configure;
use super::store::{StepUp, TokenStore};
use super::{unattended, MAX_STEP_UP_LOGINS};
use crate::config::ServerConfig;
use crate::mcp::transport::http::headers;
use crate::mcp::transport::http_answer::{self, Exchange, Outgoing, Posted};
use crate::mcp::transport::http_pages::ToolPages;
use crate::net::http1::Origin;

type HttpError = StreamableHttpError<reqwest::Error>;

/// A token closer to its expiry than this is replaced before a request (unattended grants;
/// rmcp refreshes interactive ones itself, 30 s ahead).
const UNATTENDED_MARGIN: Duration = Duration::from_secs(30);

/// The HTTP client of one server: plain, or with OAuth; its `tools/list` pages read entry by
/// entry (`http_pages.rs`).
#[derive(Clone)]
pub struct ServerHttpClient {
    plain: reqwest::Client,
    /// Kept connections of our own for the direct path's requests, when the URL is `http://`
    /// and no proxy setting catches it (`net::http1`).
    kept: Option<Arc<Origin>>,
    oauth: Option<Arc<OAuthLayer>>,
    pages: ToolPages,
}

struct OAuthLayer {
    config: ServerConfig,
    store: TokenStore,
    /// Built at the first request (rmcp's manager is made asynchronously); `None` while the
    /// server has no `oauth:` block and nothing stored: requests then go out plain, with no
    /// token store read on each one.
    client: OnceCell<Option<AuthClient<Presenter>>>,
    /// One unattended token request at a time.
    obtaining: Mutex<()>,
    /// A step-up is recorded in the store (so a success must end it).
    step_up: AtomicBool,
}

impl ServerHttpClient {
    /// The client for `config`: with OAuth unless it sends its own credentials
    /// (`bearer_token` or an `Authorization` header) or is not Streamable HTTP.
    pub fn new(config: &ServerConfig, plain: reqwest::Client, pages: ToolPages) -> Self {
        let oauth = super::applies(config).then(|| {
            Arc::new(OAuthLayer {
                config: config.clone(),
                store: TokenStore::for_url(config.url.as_deref().unwrap_or_default()),
                client: OnceCell::new(),
                obtaining: Mutex::new(()),
                step_up: AtomicBool::new(false),
            })
        });
        let url = config.url.as_deref().unwrap_or_default();
        let kept =
            Origin::unless_proxied(url, crate::mcp::transport::http::connect_timeout(config));
        ServerHttpClient {
            plain,
            kept: kept.map(Arc::new),
            oauth,
            pages,
        }
    }
}

impl OAuthLayer {
    fn unattended(&self) -> bool {
        self.config
            .oauth
            .as_ref()
            .is_some_and(|o| o.grant.is_unattended())
    }

    /// rmcp's client, its manager set up from the token store (client and metadata, so that
    /// it can refresh); `None` when there is nothing to authorize with (see `client`).
    async fn client(
        &self,
        plain: &reqwest::Client,
    ) -> Result<Option<&AuthClient<Presenter>>, HttpError> {
        let client = self
            .client
            .get_or_try_init(|| async {
                let record = self
                    .store
                    .read()
                    .map_err(|e| HttpError::Auth(AuthError::from(e)))?;
                self.step_up
                    .store(record.step_up.is_some(), Ordering::Relaxed);
                let stored = record.client.is_some() || record.credentials.is_some();
                if !stored && self.config.oauth.is_none() {
                    return Ok::<_, HttpError>(None);
                }
                let url = self.config.url.as_deref().unwrap_or_default();
                let internal = |e: super::LoginError| HttpError::Auth(AuthError::InternalError(e.to_string()));
                // A DPoP-bound token is presented with proofs, and refreshed with them.
                let bound = record.credentials.as_ref().and_then(|c| c.token_response.as_ref()).is_some_and(|t| dpop::is_bound(t.token_type().as_ref()));
                let key = match (&record.dpop_key, bound) {
                    (Some(stored), true) => Some(dpop::key_for(Some(stored)).map_err(internal)?),
                    _ => None,
                };
                let mut manager = match &key {
                    Some(key) => dpop::manager(url, &self.store, key.clone()).await,
                    None => super::discover::manager(url, &self.store).await,
                }
                .map_err(internal)?;
                if let (Some(client), Some(metadata)) = (&record.client, &record.metadata) {
                    let redirect = client.redirect_uri.clone().unwrap_or_else(|| url.to_string());
                    if let Err(e) = configure(&mut manager, &self.config, metadata, client, &redirect) {
                        // Without it, refreshing is impossible; the token still works until
                        // it expires.
                        tracing::warn!(server = %self.config.name, error = %e, "stored OAuth client unusable");
                    }
                }
                let presenter = Presenter::new(plain.clone(), key.map(|k| Arc::new(DpopSession::new(k))));
                Ok(Some(AuthClient::new(presenter, manager)))
            })
            .await?;
        Ok(client.as_ref())
    }

    /// For unattended grants: a token in the store that is not about to expire (`force`: a new
    /// one regardless).
    async fn ensure_unattended(&self, force: bool) -> Result<(), HttpError> {
        if !self.unattended() {
            return Ok(());
        }
        let _one = self.obtaining.lock().await;
        if force || unattended::needs_token(&self.store, UNATTENDED_MARGIN) {
            unattended::obtain(&self.config, &self.store)
                .await
                .map_err(|e| HttpError::Auth(AuthError::AuthorizationFailed(e.to_string())))?;
        }
        Ok(())
    }

    /// Whether a 401 with `challenge` means "log in" for this server.
    fn wants_login(&self, challenge: &str) -> bool {
        if !is_oauth_challenge(challenge) {
            return false;
        }
        let stored = self
            .store
            .read()
            .is_ok_and(|r| r.client.is_some() || r.credentials.is_some());
        self.config.oauth.is_some()
            || stored
            || challenge_param(challenge, "resource_metadata").is_some()
    }

    /// Records a 403 `insufficient_scope` for `method`; the error the request ends with.
    fn refused(&self, method: Option<&str>, challenge: &str) -> HttpError {
        let scope = challenge_param(challenge, "scope").unwrap_or_default();
        let mut refusals = 1;
        let recorded = self.store.update(|record| {
            if let Some(previous) = &record.step_up {
                if previous.scope == scope {
                    refusals = previous.refusals + 1;
                }
            }
            record.step_up = Some(StepUp {
                scope: scope.clone(),
                method: method.unwrap_or_default().to_string(),
                challenge: challenge.to_string(),
                refusals,
            });
        });
        match recorded {
            Ok(()) => self.step_up.store(true, Ordering::Relaxed),
            Err(e) => {
                tracing::warn!(server = %self.config.name, error = %e, "cannot record the step-up")
            }
        }
        if refusals > MAX_STEP_UP_LOGINS {
            HttpError::Auth(AuthError::InvalidScope(format!(
                "still refused for lack of scope {scope:?} after {MAX_STEP_UP_LOGINS} logins that asked for it: the account may not be allowed it"
            )))
        } else {
            HttpError::Auth(AuthError::InsufficientScope {
                required_scope: scope,
                upgrade_url: None,
            })
        }
    }

    /// A success of `method` ends a step-up that was waiting for it.
    fn succeeded(&self, method: Option<&str>) {
        let Some(method) = method else { return };
        if !self.step_up.load(Ordering::Relaxed) {
            return;
        }
        let pending = self
            .store
            .read()
            .ok()
            .and_then(|r| r.step_up)
            .is_some_and(|s| s.method == method);
        if pending {
            match self.store.update(|record| record.step_up = None) {
                Ok(()) => self.step_up.store(false, Ordering::Relaxed),
                Err(e) => {
                    tracing::warn!(server = %self.config.name, error = %e, "cannot clear the step-up")
                }
            }
        }
    }
}

/// The JSON-RPC method of a request message.
fn method_of(message: &ClientJsonRpcMessage) -> Option<String> {
    match message {
        ClientJsonRpcMessage::Request(request) => Some(request.request.method().to_string()),
        _ => None,
    }
}

impl ServerHttpClient {
    /// Runs `call` on `args` with the OAuth layer around it (or plain). `args` is copied only
    /// where a second attempt can follow (an unattended grant's fresh token): the request's
    /// message, headers and URI are otherwise moved into the one attempt (copying them was 8 %
    /// of the stack's CPU a call over plain HTTP, docs/performance.md).
    async fn run<A, T, F, Fut>(
        &self,
        method: Option<&str>,
        args: A,
        call: F,
    ) -> Result<T, HttpError>
    where
        A: Clone,
        F: Fn(Client, A) -> Fut,
        Fut: std::future::Future<Output = Result<T, HttpError>>,
    {
        let Some(layer) = &self.oauth else {
            return call(Client::Plain(self.plain.clone()), args).await;
        };
        layer.ensure_unattended(false).await?;
        let client = layer.client(&self.plain).await?;
        let with = || match client {
            Some(client) => Client::OAuth(client.clone()),
            None => Client::Plain(self.plain.clone()),
        };
        let (first, again) = if layer.unattended() {
            (args.clone(), Some(args))
        } else {
            (args, None)
        };
        let mut result = call(with(), first).await;
        let refused = matches!(&result, Err(HttpError::AuthRequired(_)));
        if let (true, Some(args)) = (refused, again) {
            // rmcp could not refresh it: get a new token once.
            layer.ensure_unattended(true).await?;
            result = call(with(), args).await;
        }
        match result {
            Ok(value) => {
                layer.succeeded(method);
                Ok(value)
            }
            Err(HttpError::AuthRequired(e)) if layer.wants_login(&e.www_authenticate_header) => {
                Err(HttpError::Auth(AuthError::AuthorizationRequired))
            }
            Err(HttpError::InsufficientScope(e))
                if challenge_param(&e.www_authenticate_header, "error").as_deref()
                    == Some("insufficient_scope") =>
            {
                Err(layer.refused(method, &e.www_authenticate_header))
            }
            Err(e) => Err(e),
        }
    }
}

/// `$call` made with `$c` bound to whichever client `$client` is (the two are different types
/// with the same methods).
macro_rules! on_client {
    ($client:expr, $c:ident => $call:expr) => {
        match $client {
            Client::Plain($c) => $call.await,
            Client::OAuth($c) => $call.await,
        }
    };
}

/// Which client a request goes through (both are handles to shared state: cheap clones).
enum Client {
    Plain(reqwest::Client),
    OAuth(AuthClient<Presenter>),
}

impl StreamableHttpClient for ServerHttpClient {
    type Error = reqwest::Error;

    forward_to_limited!();

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let method = method_of(&message);
        let list = ToolPages::list_id(&message);
        let args = (uri, message, session_id, auth_header, custom_headers);
        let answer = self
            .run(
                method.as_deref(),
                args,
                |client, (uri, message, session_id, auth_header, custom_headers)| async move {
                    on_client!(client, c => c.post_message_with_response_limits(
                        uri,
                        message,
                        session_id,
                        auth_header,
                        custom_headers,
                        limits,
                    ))
                },
            )
            .await;
        match list {
            Some(id) => self.pages.answer(id, answer),
            None => answer,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        let args = (uri, session_id, auth_header, custom_headers);
        self.run(
            None,
            args,
            |client, (uri, session_id, auth_header, custom_headers)| async move {
                on_client!(client, c => c.delete_session(
                    uri,
                    session_id,
                    auth_header,
                    custom_headers,
                ))
            },
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, HttpError> {
        let args = (uri, session_id, last_event_id, auth_header, custom_headers);
        self.run(
            None,
            args,
            |client, (uri, session_id, last_event_id, auth_header, custom_headers)| async move {
                on_client!(client, c => c.get_stream_with_max_sse_event_size(
                    uri,
                    session_id,
                    last_event_id,
                    auth_header,
                    custom_headers,
                    max_sse_event_size,
                ))
            },
        )
        .await
    }
}

impl ServerHttpClient {
    /// Whether its requests go out plainly: it has no OAuth layer, or the layer found nothing
    /// to authorize with (settled at the first request, the handshake's, for the client's life).
    pub fn goes_plain(&self) -> bool {
        match &self.oauth {
            None => true,
            Some(layer) => !layer.unattended() && matches!(layer.client.get(), Some(None)),
        }
    }
}

/// The direct path's requests (`transport/http_direct.rs`) go through the same layer as
/// rmcp's; it is given them only while the client goes plain (`goes_plain`).
impl Exchange for ServerHttpClient {
    fn exchange(&self, out: Outgoing) -> BoxFuture<'_, Result<Posted, HttpError>> {
        let method = out.is_post().then_some("tools/call");
        let kept = self.kept.as_deref();
        Box::pin(self.run(method, out, move |client, out| async move {
            match (client, kept) {
                (Client::Plain(_), Some(origin)) => http_answer::exchange_kept(origin, out).await,
                (Client::Plain(c), None) => http_answer::exchange(&c, out).await,
                (Client::OAuth(_), _) => Err(HttpError::UnexpectedServerResponse(
                    "a direct call reached a server whose requests carry an OAuth token".into(),
                )),
            }
        }))
    }
}

/// rmcp's Streamable HTTP client transport for `config` over `client`: session id kept and
/// sent, one re-initialisation on an expired session, the standalone GET stream resumed with
/// `Last-Event-ID` after the server's `retry:`; requests go through the OAuth client unless
/// the server is given credentials of its own.
pub fn streamable_http(
    config: &ServerConfig,
    client: ServerHttpClient,
) -> StreamableHttpClientTransport<ServerHttpClient> {
    let mut transport =
        StreamableHttpClientTransportConfig::with_uri(config.url.clone().unwrap_or_default())
            .custom_headers(headers(config, false))
            .reinit_on_expired_session(true);
    if let Some(token) = &config.bearer_token {
        transport = transport.auth_header(token.clone());
    }
    StreamableHttpClientTransport::with_client(client, transport)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OAuthConfig;

    fn layer(dir: &std::path::Path, oauth: Option<OAuthConfig>) -> OAuthLayer {
        let mut config = ServerConfig::remote(
            "s",
            crate::config::TransportKind::StreamableHttp,
            "http://h/mcp",
        );
        config.oauth = oauth;
        OAuthLayer {
            config,
            store: TokenStore::in_dir(dir, "http://h/mcp"),
            client: OnceCell::new(),
            obtaining: Mutex::new(()),
            step_up: AtomicBool::new(false),
        }
    }

    const CHALLENGE: &str = r#"Bearer error="insufficient_scope", scope="notes:write", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp""#;

    #[test]
    fn step_ups_are_counted_per_scope_up_to_the_limit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let layer = layer(dir.path(), None);
        for round in 1..=MAX_STEP_UP_LOGINS {
            let err = layer.refused(Some("tools/call"), CHALLENGE);
            assert!(
                matches!(&err, HttpError::Auth(AuthError::InsufficientScope { required_scope, .. }) if required_scope == "notes:write"),
                "round {round}: {err:?}"
            );
        }
        let err = layer.refused(Some("tools/call"), CHALLENGE);
        assert!(
            matches!(err, HttpError::Auth(AuthError::InvalidScope(_))),
            "{err:?}"
        );
        // Another scope starts over.
        let other = CHALLENGE.replace("notes:write", "notes:admin");
        let err = layer.refused(Some("tools/call"), &other);
        assert!(
            matches!(err, HttpError::Auth(AuthError::InsufficientScope { .. })),
            "{err:?}"
        );
        let step_up = layer.store.read().expect("read").step_up.expect("recorded");
        assert_eq!(
            (step_up.scope.as_str(), step_up.refusals),
            ("notes:admin", 1)
        );
        assert_eq!(step_up.challenge, other);
    }

    #[test]
    fn a_success_of_the_refused_method_ends_the_step_up() {
        let dir = tempfile::tempdir().expect("tempdir");
        let layer = layer(dir.path(), None);
        let _ = layer.refused(Some("tools/call"), CHALLENGE);
        layer.succeeded(Some("tools/list"));
        assert!(layer.store.read().expect("read").step_up.is_some());
        layer.succeeded(Some("tools/call"));
        assert!(layer.store.read().expect("read").step_up.is_none());
    }

    #[test]
    fn a_401_means_log_in_only_where_oauth_shows() {
        let dir = tempfile::tempdir().expect("tempdir");
        let plain = layer(dir.path(), None);
        assert!(!plain.wants_login(r#"Bearer realm="demo""#));
        assert!(!plain.wants_login(r#"Basic realm="demo""#));
        assert!(plain.wants_login(
            r#"Bearer resource_metadata="http://h/.well-known/oauth-protected-resource/mcp""#
        ));
        let configured = layer(dir.path(), Some(OAuthConfig::default()));
        assert!(configured.wants_login(r#"Bearer realm="demo""#));
        assert!(!configured.wants_login(r#"Basic realm="demo""#));
    }
}
