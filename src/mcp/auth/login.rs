//! The interactive login (authorization code with PKCE S256): discovery, scopes, the client,
//! the authorization URL with `resource` (RFC 8707) and `state`, then — once the browser is
//! redirected to the loopback listener, or the operator pastes the redirected URL — the code
//! exchange, and everything a later start needs written to the token store.
//!
//! The same flow serves a first login, a login after the refresh token was refused, and a
//! step-up (a 403 `insufficient_scope`: the scopes held so far plus the ones asked for).
//! Unattended grants need no browser: [`begin`] obtains their token at once.

use std::time::Duration;

use oauth2::TokenResponse;
use rmcp::transport::auth::{
    AuthorizationCallback, AuthorizationManager, AuthorizationMetadata, OAuthClientConfig,
};

use super::callback::Callback;
use super::discover::{discover, Discovered};
use super::dpop;
use super::register::{choose_client, metadata_for};
use super::store::{ClientRecord, ClientSource, StepUp, TokenStore};
use super::{describe, remote_url, unattended, LoginError, MAX_STEP_UP_LOGINS};
use crate::config::ServerConfig;

/// What a finished login got.
#[derive(Debug, Clone, PartialEq)]
pub struct LoginSummary {
    pub server: String,
    /// The scopes granted (as the token response said, else as asked).
    pub scopes: Vec<String>,
    /// How long the access token is valid, when the server said.
    pub expires_in: Option<Duration>,
    /// Whether a refresh token came with it (the session outlives the access token).
    pub refresh_token: bool,
    /// The token file.
    pub stored_in: std::path::PathBuf,
}

impl std::fmt::Display for LoginSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scopes = if self.scopes.is_empty() {
            "no particular scope".to_string()
        } else {
            format!("scopes {}", self.scopes.join(" "))
        };
        write!(f, "logged in to {} ({scopes}", self.server)?;
        if let Some(expires) = self.expires_in {
            write!(
                f,
                "; the token is valid {}",
                crate::text::fmt_duration(expires)
            )?;
        }
        if self.refresh_token {
            f.write_str(", refreshed as needed")?;
        }
        write!(f, "); stored in {}", self.stored_in.display())
    }
}

/// A login in progress, or one that needed no browser.
pub enum Login {
    /// The operator opens [`PendingLogin::authorization_url`].
    Interactive(Box<PendingLogin>),
    /// An unattended grant: the token is already stored.
    Done(LoginSummary),
}

/// A login waiting for the browser's redirect.
pub struct PendingLogin {
    server: String,
    store: TokenStore,
    manager: AuthorizationManager,
    metadata: AuthorizationMetadata,
    client: ClientRecord,
    callback: Callback,
    url: String,
    scopes: Vec<String>,
    /// The DPoP key the tokens are bound to, stored with them.
    dpop_key: Option<String>,
}

impl std::fmt::Debug for PendingLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingLogin")
            .field("server", &self.server)
            .field("client", &self.client)
            .field("redirect_uri", &self.callback.redirect_uri())
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// Starts a login to `config`'s server: binds the redirect listener, discovers the
/// authorization server, picks the scopes and the client, and builds the authorization URL.
pub async fn begin(config: &ServerConfig) -> Result<Login, LoginError> {
    let url = remote_url(config)?;
    let store = TokenStore::for_url(url);
    if config
        .oauth
        .as_ref()
        .is_some_and(|o| o.grant.is_unattended())
    {
        unattended::obtain(config, &store).await?;
        return Ok(Login::Done(summary(config, &store, &[])?));
    }
    let record = store.read()?;
    let step_up = record
        .step_up
        .clone()
        .filter(|s| s.refusals <= MAX_STEP_UP_LOGINS);
    // The port of the last registration keeps its redirect URI valid.
    let port = record
        .client
        .as_ref()
        .and_then(|c| c.redirect_uri.as_deref())
        .and_then(|uri| reqwest::Url::parse(uri).ok())
        .and_then(|uri| uri.port());
    let callback = Callback::bind(port).await?;
    let Discovered { manager, metadata } = discover(
        config,
        &store,
        step_up.as_ref().map(|s| s.challenge.clone()),
    )
    .await?;
    // A registration and the scopes granted belong to the authorization server that made them
    // (SEP-2352): when the server now names another one, register there afresh.
    let moved = record
        .metadata
        .as_ref()
        .is_some_and(|before| !same_authorization_server(before, &metadata));
    if moved {
        tracing::info!(
            server = %config.name,
            issuer = metadata.issuer.as_deref().unwrap_or(&metadata.token_endpoint),
            "the server names another authorization server: registering there afresh"
        );
    }
    let granted = match &record.credentials {
        Some(c) if !moved => c.granted_scopes.clone(),
        _ => Vec::new(),
    };
    let scopes = choose_scopes(config, &manager, &metadata, step_up.as_ref(), &granted).await;
    let client = choose_client(
        config.oauth.as_ref(),
        record.client.as_ref().filter(|_| !moved),
        &metadata,
        callback.redirect_uri(),
        &scopes,
    )
    .await?;
    let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    // The manager made ready to exchange the code, and the URL the operator opens.
    let authorize = |mut manager: AuthorizationManager| async {
        configure(
            &mut manager,
            config,
            &metadata,
            &client,
            callback.redirect_uri(),
        )?;
        let url = manager
            .get_authorization_url(&refs)
            .await
            .map_err(|e| LoginError::Discovery(describe(&e)))?;
        Ok::<_, LoginError>((manager, url))
    };
    let (mut manager, mut url) = authorize(manager).await?;
    // Where the authorization server offers DPoP, the token requests go through a manager that
    // signs proofs with the server's key (kept across logins: a refresh token stays bound to it).
    // Its base URL is the resource the discovery settled on, which rmcp sends as `resource`.
    let dpop_key = if dpop::offered(&metadata) {
        let key = dpop::key_for(record.dpop_key.as_deref())?;
        let resource = query_param(&url, "resource").unwrap_or_else(|| url_of(config));
        (manager, url) = authorize(dpop::manager(&resource, &store, key.clone()).await?).await?;
        Some(key.to_stored())
    } else {
        None
    };
    Ok(Login::Interactive(Box::new(PendingLogin {
        server: config.name.clone(),
        store,
        manager,
        metadata,
        client,
        callback,
        url,
        scopes,
        dpop_key,
    })))
}

/// A query parameter of `url`, decoded.
fn query_param(url: &str, name: &str) -> Option<String> {
    reqwest::Url::parse(url)
        .ok()?
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

fn url_of(config: &ServerConfig) -> String {
    config.url.clone().unwrap_or_default()
}

/// Whether two authorization server metadata documents are the same server: the same issuer,
/// or (without issuers) the same token endpoint.
fn same_authorization_server(a: &AuthorizationMetadata, b: &AuthorizationMetadata) -> bool {
    match (&a.issuer, &b.issuer) {
        (Some(a), Some(b)) => a.trim_end_matches('/') == b.trim_end_matches('/'),
        _ => a.token_endpoint == b.token_endpoint,
    }
}

/// Sets `metadata` and `client` on `manager`, so that it can exchange codes and refresh.
pub(super) fn configure(
    manager: &mut AuthorizationManager,
    config: &ServerConfig,
    metadata: &AuthorizationMetadata,
    client: &ClientRecord,
    redirect_uri: &str,
) -> Result<(), LoginError> {
    manager.set_metadata(metadata_for(metadata, client));
    let secret = match client.source {
        ClientSource::Configured => config.oauth.as_ref().and_then(|o| o.client_secret.clone()),
        ClientSource::Registered | ClientSource::MetadataDocument => client.client_secret.clone(),
    };
    let mut client_config = OAuthClientConfig::new(client.client_id.clone(), redirect_uri);
    if let Some(secret) = secret {
        client_config = client_config.with_client_secret(secret);
    }
    manager
        .configure_client(client_config)
        .map_err(|e| LoginError::Discovery(describe(&e)))
}

/// The scopes to ask for: the configured ones; for a step-up, those held so far plus the
/// challenge's; else the server's choice (its challenge, else the protected resource's
/// `scopes_supported`, else none). `offline_access` is added when the authorization server
/// offers it, for a refresh token.
async fn choose_scopes(
    config: &ServerConfig,
    manager: &AuthorizationManager,
    metadata: &AuthorizationMetadata,
    step_up: Option<&StepUp>,
    granted: &[String],
) -> Vec<String> {
    let configured = config
        .oauth
        .as_ref()
        .map(|o| o.scopes.clone())
        .unwrap_or_default();
    let mut scopes = if !configured.is_empty() {
        configured
    } else if let Some(step_up) = step_up {
        let mut union: Vec<String> = granted
            .iter()
            .filter(|s| s.as_str() != "offline_access")
            .cloned()
            .collect();
        for scope in step_up.scope.split_whitespace() {
            if !union.iter().any(|s| s == scope) {
                union.push(scope.to_string());
            }
        }
        union
    } else {
        // rmcp's initial selection already adds offline_access when offered.
        return manager.select_initial_scopes(&[]).await;
    };
    let offered = metadata
        .scopes_supported
        .as_ref()
        .is_some_and(|s| s.iter().any(|s| s == "offline_access"));
    if offered && !scopes.is_empty() && !scopes.iter().any(|s| s == "offline_access") {
        scopes.push("offline_access".to_string());
    }
    scopes
}

impl PendingLogin {
    /// The URL the operator opens.
    pub fn authorization_url(&self) -> &str {
        &self.url
    }

    /// Where the browser is sent back to.
    pub fn redirect_uri(&self) -> &str {
        self.callback.redirect_uri()
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    /// Waits for the browser's redirect to the loopback listener; the URL it was called with.
    pub async fn wait_for_redirect(&self) -> Result<String, LoginError> {
        self.callback.wait().await
    }

    /// Completes the login with the redirected URL (from the listener, or pasted): checks the
    /// `state`, exchanges the code (with the PKCE verifier and `resource`), stores the tokens.
    pub async fn finish(self, redirected: &str) -> Result<LoginSummary, LoginError> {
        let parsed = reqwest::Url::parse(redirected.trim())
            .map_err(|_| LoginError::Callback("that is not the redirected URL".into()))?;
        let param = |name: &str| {
            parsed
                .query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| crate::text::sanitize_line(&v, 200))
        };
        if let Some(error) = param("error") {
            return Err(LoginError::Denied {
                error,
                description: param("error_description").unwrap_or_default(),
            });
        }
        let callback = AuthorizationCallback::from_redirect_url(redirected.trim())
            .map_err(|e| LoginError::Callback(describe(&e)))?;
        self.manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(|e| LoginError::Exchange(describe(&e)))?;
        let (client, metadata, dpop_key) = (self.client, self.metadata, self.dpop_key);
        self.store.update(|record| {
            record.client = Some(client);
            record.metadata = Some(metadata);
            record.dpop_key = dpop_key;
        })?;
        summary_of(&self.server, &self.store, &self.scopes)
    }
}

fn summary(
    config: &ServerConfig,
    store: &TokenStore,
    asked: &[String],
) -> Result<LoginSummary, LoginError> {
    summary_of(&config.name, store, asked)
}

/// What the store now holds, in words (no token values).
fn summary_of(
    server: &str,
    store: &TokenStore,
    asked: &[String],
) -> Result<LoginSummary, LoginError> {
    let record = store.read()?;
    let credentials = record.credentials.as_ref();
    let token = credentials.and_then(|c| c.token_response.as_ref());
    let scopes = credentials
        .map(|c| c.granted_scopes.clone())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| asked.to_vec());
    Ok(LoginSummary {
        server: server.to_string(),
        scopes,
        expires_in: token.and_then(|t| t.expires_in()),
        refresh_token: token.is_some_and(|t| t.refresh_token().is_some()),
        stored_in: store.path().to_path_buf(),
    })
}
