//! Finding the authorization server: rmcp's discovery (RFC 9728 protected-resource metadata
//! from the challenge's `resource_metadata`, then the well-known paths; RFC 8414, then OpenID
//! discovery; then the 2025-03-26 default endpoints), plus what it does not do:
//!
//! - the challenge itself: without a 401 at hand, one unauthenticated POST to the server gets
//!   it (its `scope` steers scope selection);
//! - 2025-03-26 servers whose metadata, served from the MCP server's own origin, names another
//!   `issuer` (rmcp refuses them; under 2025-03-26 the origin *is* the authorization server,
//!   so that metadata is accepted, with a warning in the log).

use std::time::Duration;

use rmcp::transport::auth::{AuthError, AuthorizationManager, AuthorizationMetadata};

use super::store::TokenStore;
use super::LoginError;
use crate::config::ServerConfig;

/// Longest wait for any one discovery request of ours.
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// What discovery found.
pub struct Discovered {
    /// rmcp's manager, with the metadata set and its scope state filled from the challenge and
    /// the protected-resource metadata.
    pub manager: AuthorizationManager,
    pub metadata: AuthorizationMetadata,
}

/// A manager for `url` whose tokens live in `store`.
pub async fn manager(url: &str, store: &TokenStore) -> Result<AuthorizationManager, LoginError> {
    crate::net::install_tls_provider();
    // Private addresses are allowed: an enterprise authorization server often has one.
    // (Loopback still needs a loopback server URL, and link-local stays refused.)
    let mut manager = AuthorizationManager::new_allowing_private_addresses(url)
        .await
        .map_err(|e| LoginError::Discovery(super::describe(&e)))?;
    manager.set_credential_store(store.clone());
    Ok(manager)
}

/// Discovers the authorization server of `config`'s server, starting from `challenge` (the
/// `WWW-Authenticate` of a refusal) or, without one, from a probe.
pub async fn discover(
    config: &ServerConfig,
    store: &TokenStore,
    challenge: Option<String>,
) -> Result<Discovered, LoginError> {
    let url = config.url.clone().unwrap_or_default();
    let challenge = match challenge {
        Some(c) => Some(c),
        None => probe(config).await,
    };
    let mut manager = manager(&url, store).await?;
    let metadata = match manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
    {
        Ok(resolution) => resolution.metadata,
        Err(AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) if same_origin_root(&url, &expected_issuer) => {
            legacy_metadata(&url, &received_issuer).await?
        }
        Err(e) => return Err(LoginError::Discovery(super::describe(&e))),
    };
    manager.set_metadata(metadata.clone());
    Ok(Discovered { manager, metadata })
}

/// Whether `issuer` is the bare origin of `url` (where 2025-03-26 servers publish metadata).
fn same_origin_root(url: &str, issuer: &str) -> bool {
    let (Ok(url), Ok(issuer)) = (reqwest::Url::parse(url), reqwest::Url::parse(issuer)) else {
        return false;
    };
    url.origin() == issuer.origin() && matches!(issuer.path(), "" | "/")
}

/// The 2025-03-26 metadata at the server's origin, accepted although its `issuer` differs.
async fn legacy_metadata(
    url: &str,
    received_issuer: &str,
) -> Result<AuthorizationMetadata, LoginError> {
    let mut at = reqwest::Url::parse(url).map_err(|e| LoginError::Discovery(e.to_string()))?;
    at.set_path("/.well-known/oauth-authorization-server");
    at.set_query(None);
    at.set_fragment(None);
    let client = http_client()?;
    let metadata: AuthorizationMetadata = async {
        let response = client.get(at.clone()).send().await?.error_for_status()?;
        response.json().await
    }
    .await
    .map_err(|e| LoginError::Discovery(format!("{at}: {e}")))?;
    if metadata.issuer.as_deref() != Some(received_issuer) {
        return Err(LoginError::Discovery(format!(
            "the authorization server metadata at {at} changed while it was read"
        )));
    }
    tracing::warn!(
        %at,
        issuer = %received_issuer,
        "accepting 2025-03-26 authorization server metadata whose issuer is not the origin it is served from"
    );
    Ok(metadata)
}

/// One unauthenticated request to the server, for its `WWW-Authenticate` challenge (`None`
/// when it answers anything but 401/403 with one). The configured headers go with it.
pub async fn probe(config: &ServerConfig) -> Option<String> {
    let url = config.url.as_deref()?;
    let client = http_client().ok()?;
    let mut request = client
        .post(url)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":"aimon-login-probe","method":"ping"}"#);
    for (name, value) in super::super::transport::http::headers(config, false) {
        request = request.header(name, value);
    }
    let response = request.send().await.ok()?;
    if !matches!(response.status().as_u16(), 401 | 403) {
        return None;
    }
    let challenge = response
        .headers()
        .get_all(http::header::WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| is_oauth_challenge(v))
        .map(str::to_string);
    challenge
}

/// Whether a `WWW-Authenticate` value is an OAuth challenge: scheme Bearer, or DPoP (RFC 9449 §7.1).
pub fn is_oauth_challenge(challenge: &str) -> bool {
    let scheme = challenge
        .trim_start()
        .split([' ', ','])
        .next()
        .unwrap_or_default();
    scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("dpop")
}

/// The value of `param` in a challenge (quoted or token form), e.g. `scope`.
pub fn challenge_param(challenge: &str, param: &str) -> Option<String> {
    let lower = challenge.to_ascii_lowercase();
    let key = format!("{}=", param.to_ascii_lowercase());
    let mut from = 0;
    while let Some(found) = lower[from..].find(&key) {
        let at = from + found;
        let before = lower[..at].chars().next_back();
        // A whole parameter name, not the end of a longer one (`scope` inside `xscope`).
        if before.is_none_or(|c| c == ' ' || c == ',' || c == '\t') {
            let rest = challenge.get(at + key.len()..)?.trim_start();
            return Some(match rest.strip_prefix('"') {
                Some(quoted) => {
                    let mut value = String::new();
                    let mut escaped = false;
                    for c in quoted.chars() {
                        match (escaped, c) {
                            (true, c) => {
                                value.push(c);
                                escaped = false;
                            }
                            (false, '\\') => escaped = true,
                            (false, '"') => break,
                            (false, c) => value.push(c),
                        }
                    }
                    value
                }
                None => rest
                    .split([',', ' '])
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            });
        }
        from = at + key.len();
    }
    None
}

/// The client the probe and the legacy read use: bounded, no redirects followed off-origin.
pub(super) fn http_client() -> Result<reqwest::Client, LoginError> {
    crate::net::install_tls_provider();
    reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .connect_timeout(super::super::transport::http::CONNECT_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| LoginError::Discovery(format!("cannot build the HTTP client: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_parameters_are_read_quoted_or_bare() {
        let c = r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://h/.well-known/x""#;
        assert!(is_oauth_challenge(c));
        assert_eq!(
            challenge_param(c, "scope").as_deref(),
            Some("mcp:basic mcp:write")
        );
        assert_eq!(
            challenge_param(c, "error").as_deref(),
            Some("insufficient_scope")
        );
        assert_eq!(
            challenge_param(c, "resource_metadata").as_deref(),
            Some("http://h/.well-known/x")
        );
        assert_eq!(
            challenge_param("Bearer scope=read, realm=x", "scope").as_deref(),
            Some("read")
        );
        assert_eq!(challenge_param("Bearer xscope=\"a\"", "scope"), None);
        assert_eq!(
            challenge_param(r#"Bearer realm="a \"b\"""#, "realm").as_deref(),
            Some("a \"b\"")
        );
        assert!(!is_oauth_challenge("Basic realm=x"));
        assert!(!is_oauth_challenge("Bear"));
        assert!(is_oauth_challenge(
            r#"DPoP resource_metadata="http://h/x", algs="ES256""#
        ));
        assert!(!is_oauth_challenge("DPoPx realm=y"));
    }

    #[test]
    fn only_the_bare_origin_counts_as_the_legacy_issuer() {
        assert!(same_origin_root("http://h:1/mcp", "http://h:1/"));
        assert!(same_origin_root("http://h:1/mcp", "http://h:1"));
        assert!(!same_origin_root("http://h:1/mcp", "http://h:1/tenant"));
        assert!(!same_origin_root("http://h:1/mcp", "http://h:2/"));
        assert!(!same_origin_root("http://h:1/mcp", "not a url"));
    }
}
