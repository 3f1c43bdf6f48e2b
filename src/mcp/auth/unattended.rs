//! Tokens without an operator: the client-credentials grant (with a client secret through
//! rmcp, or with a private-key JWT signed here), cross-app access (an enterprise ID token
//! exchanged at the identity provider for an ID-JAG, then at the server's authorization server
//! for the access token, through rmcp's `auth::enterprise`) and workload identity (the
//! workload's own token as a JWT bearer assertion).
//!
//! Each writes the token to the server's token store like a login does; the HTTP client calls
//! [`obtain`] again whenever the stored token is missing, expiring or refused.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use oauth2::ClientSecret;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
};
use rmcp::transport::auth::{
    default_oauth_http_client, AuthorizationMetadata, ClientCredentialsConfig, CredentialStore,
    OAuthTokenResponse, StoredCredentials,
};
use serde_json::{json, Value};

use super::discover::{discover, Discovered};
use super::jwt::SigningKey;
use super::store::{ClientRecord, ClientSource, TokenStore};
use super::{describe, remote_url, LoginError};
use crate::config::{Assertion, OAuthConfig, OAuthGrant, PrivateKey, ServerConfig};

/// The JWT bearer grant's `grant_type` (RFC 7523 §2.1).
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Obtains a token for `config`'s unattended grant and stores it.
pub async fn obtain(config: &ServerConfig, store: &TokenStore) -> Result<(), LoginError> {
    let url = remote_url(config)?.to_string();
    let Some(oauth) = config.oauth.as_ref() else {
        return Err(LoginError::Unattended(
            "no oauth block: nothing to obtain a token with".into(),
        ));
    };
    let client_id = oauth.client_id.clone().unwrap_or_default();
    let Discovered {
        mut manager,
        metadata,
    } = discover(config, store, None).await?;
    let method = match oauth.grant {
        OAuthGrant::AuthorizationCode => {
            return Err(LoginError::Unattended(
                "`grant: authorization_code` needs a login in a browser".into(),
            ))
        }
        OAuthGrant::ClientCredentials => match (&oauth.client_secret, &oauth.private_key) {
            (Some(secret), _) => {
                let credentials = ClientCredentialsConfig::ClientSecret {
                    client_id: client_id.clone(),
                    client_secret: secret.clone(),
                    scopes: oauth.scopes.clone(),
                    resource: Some(url.clone()),
                };
                let failed = |e| LoginError::Unattended(describe(&e));
                manager
                    .validate_client_credentials_metadata(&credentials)
                    .map_err(failed)?;
                manager
                    .configure_client_credentials(&credentials)
                    .map_err(failed)?;
                manager
                    .exchange_client_credentials(&credentials)
                    .await
                    .map_err(failed)?;
                "client_secret"
            }
            (None, Some(key)) => {
                private_key_jwt(oauth, &client_id, key, &metadata, &url, store).await?;
                "private_key_jwt"
            }
            (None, None) => {
                return Err(LoginError::Unattended(
                    "`grant: client_credentials` needs oauth.client_secret, oauth.key_file or oauth.private_key".into(),
                ))
            }
        },
        OAuthGrant::CrossAppAccess => {
            cross_app_access(oauth, &client_id, &metadata, &url, store).await?;
            "jwt_bearer"
        }
        OAuthGrant::WorkloadIdentity => {
            workload_identity(oauth, &client_id, &metadata, &url, store).await?;
            "none"
        }
    };
    store.update(|record| {
        record.metadata = Some(metadata);
        record.client = Some(ClientRecord {
            client_id,
            client_secret: None,
            redirect_uri: None,
            auth_method: method.to_string(),
            source: ClientSource::Configured,
        });
    })?;
    Ok(())
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The client-credentials grant, authenticated by a JWT signed with the client's key
/// (RFC 7523; no `client_id` in the body: the assertion's `sub` says who it is).
async fn private_key_jwt(
    oauth: &OAuthConfig,
    client_id: &str,
    key: &PrivateKey,
    metadata: &AuthorizationMetadata,
    resource: &str,
    store: &TokenStore,
) -> Result<(), LoginError> {
    let pem = match key {
        PrivateKey::File(path) => tokio::fs::read(path).await.map_err(|e| {
            LoginError::Unattended(format!(
                "cannot read oauth.key_file {}: {e}",
                path.display()
            ))
        })?,
        PrivateKey::Pem(text) => text.clone().into_bytes(),
    };
    let key = SigningKey::from_pem(&pem, oauth.signing_algorithm)
        .map_err(|e| LoginError::Unattended(format!("oauth private key: {e}")))?;
    if let Some(algorithms) = metadata
        .additional_fields
        .get("token_endpoint_auth_signing_alg_values_supported")
        .and_then(Value::as_array)
    {
        if !algorithms
            .iter()
            .any(|a| a.as_str() == Some(key.algorithm().as_str()))
        {
            return Err(LoginError::Unattended(format!(
                "the authorization server does not take {} client assertions (it lists {})",
                key.algorithm().as_str(),
                algorithms
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let assertion = key
        .client_assertion(client_id, &audience(metadata))
        .map_err(|e| LoginError::Unattended(e.to_string()))?;
    let form = vec![
        ("grant_type", "client_credentials".to_string()),
        (
            "client_assertion_type",
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_string(),
        ),
        ("client_assertion", assertion),
    ];
    let token = post_token(metadata, form, (resource, oauth), "a client assertion").await?;
    save(store, client_id, token, &oauth.scopes).await
}

/// The authorization server's audience for an assertion: its issuer (RFC 7523bis), else its
/// token endpoint.
fn audience(metadata: &AuthorizationMetadata) -> String {
    metadata
        .issuer
        .clone()
        .unwrap_or_else(|| metadata.token_endpoint.clone())
}

/// POSTs `form` with the `resource` and the configured scopes to the token endpoint (https, or
/// http on loopback only: `what` it carries is a credential) and reads the token. A refusal is
/// said with the server's `error` and `error_description`.
async fn post_token(
    metadata: &AuthorizationMetadata,
    mut form: Vec<(&str, String)>,
    (resource, oauth): (&str, &OAuthConfig),
    what: &str,
) -> Result<OAuthTokenResponse, LoginError> {
    form.push(("resource", resource.to_string()));
    if !oauth.scopes.is_empty() {
        form.push(("scope", oauth.scopes.join(" ")));
    }
    let endpoint = reqwest::Url::parse(&metadata.token_endpoint)
        .map_err(|e| LoginError::Unattended(format!("token endpoint: {e}")))?;
    let loopback = matches!(
        endpoint.host_str(),
        Some("localhost" | "127.0.0.1" | "[::1]")
    );
    if endpoint.scheme() != "https" && !loopback {
        return Err(LoginError::Unattended(format!(
            "refusing to send {what} to {endpoint}: the token endpoint must be https"
        )));
    }
    let client = super::discover::http_client()?;
    let response = client
        .post(endpoint.clone())
        .header(http::header::ACCEPT, "application/json")
        .form(&form)
        .send()
        .await
        .map_err(|e| LoginError::Unattended(format!("{endpoint}: {e}")))?;
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|e| LoginError::Unattended(format!("{endpoint}: {e}")))?;
    if !status.is_success() {
        return Err(LoginError::Unattended(token_error(
            &endpoint, status, &body,
        )));
    }
    serde_json::from_slice(&body).map_err(|_| {
        LoginError::Unattended(format!("{endpoint} answered something that is not a token"))
    })
}

/// Workload identity federation (SEP-1933): the workload's identity token, read afresh from
/// its file (platforms rotate it) or given whole, is the assertion of the JWT bearer grant
/// (RFC 7523 §2.1) for a public client. The token endpoint's refusal is final: no retry and no
/// other grant.
async fn workload_identity(
    oauth: &OAuthConfig,
    client_id: &str,
    metadata: &AuthorizationMetadata,
    resource: &str,
    store: &TokenStore,
) -> Result<(), LoginError> {
    let assertion = match &oauth.assertion {
        Some(Assertion::Token(token)) => token.clone(),
        Some(Assertion::File(path)) => tokio::fs::read_to_string(path)
            .await
            .map(|text| text.trim().to_string())
            .map_err(|e| {
                LoginError::Unattended(format!(
                    "cannot read oauth.assertion_file {}: {e}",
                    path.display()
                ))
            })?,
        None => {
            return Err(LoginError::Unattended(
                "`grant: workload_identity` needs oauth.assertion or oauth.assertion_file".into(),
            ))
        }
    };
    if assertion.is_empty() {
        return Err(LoginError::Unattended(
            "the workload identity token is empty".into(),
        ));
    }
    let form = vec![
        ("grant_type", JWT_BEARER.to_string()),
        ("assertion", assertion),
        ("client_id", client_id.to_string()),
    ];
    let token = post_token(
        metadata,
        form,
        (resource, oauth),
        "a workload identity token",
    )
    .await?;
    save(store, client_id, token, &oauth.scopes).await
}

/// Cross-app access (SEP-990): ID token → ID-JAG at the identity provider (RFC 8693), ID-JAG →
/// access token at the server's authorization server (RFC 7523 JWT bearer grant).
async fn cross_app_access(
    oauth: &OAuthConfig,
    client_id: &str,
    metadata: &AuthorizationMetadata,
    resource: &str,
    store: &TokenStore,
) -> Result<(), LoginError> {
    let Some(idp) = &oauth.idp else {
        return Err(LoginError::Unattended(
            "`grant: cross_app_access` needs oauth.idp".into(),
        ));
    };
    let Some(issuer) = metadata.issuer.clone() else {
        return Err(LoginError::Unattended(
            "the authorization server's metadata names no issuer (the ID-JAG's audience)".into(),
        ));
    };
    let idp_auth = match &idp.client_secret {
        Some(secret) => {
            EmaClientAuthentication::ClientSecretBasic(ClientSecret::new(secret.clone()))
        }
        None => EmaClientAuthentication::None,
    };
    let as_auth = match &oauth.client_secret {
        Some(secret) => {
            let post_only = metadata
                .additional_fields
                .get("token_endpoint_auth_methods_supported")
                .and_then(Value::as_array)
                .is_some_and(|m| {
                    m.iter().any(|v| v == "client_secret_post")
                        && !m.iter().any(|v| v == "client_secret_basic")
                });
            if post_only {
                EmaClientAuthentication::ClientSecretPost(ClientSecret::new(secret.clone()))
            } else {
                EmaClientAuthentication::ClientSecretBasic(ClientSecret::new(secret.clone()))
            }
        }
        None => EmaClientAuthentication::None,
    };
    let http = default_oauth_http_client().map_err(|e| LoginError::Unattended(describe(&e)))?;
    let token = EmaExchangeRequest::new_with_id_token(
        EmaAuthorizationServer::new(&idp.issuer, &idp.token_endpoint, &idp.client_id)
            .with_client_authentication(idp_auth),
        EmaAuthorizationServer::new(issuer, &metadata.token_endpoint, client_id)
            .with_client_authentication(as_auth),
        resource,
        &idp.id_token,
    )
    .with_scopes(oauth.scopes.clone())
    .exchange(&http, &http)
    .await
    .map_err(|e| LoginError::Unattended(format!("cross-app access: {e}")))?;
    let mut response = json!({
        "access_token": token.access_token.secret(),
        "token_type": "Bearer",
    });
    if let Some(expires) = token.expires_in {
        response["expires_in"] = json!(expires.as_secs());
    }
    let mut scopes: Vec<String> = token.scopes.iter().cloned().collect();
    scopes.sort();
    if !scopes.is_empty() {
        response["scope"] = json!(scopes.join(" "));
    }
    let response: OAuthTokenResponse = serde_json::from_value(response)
        .map_err(|e| LoginError::Unattended(format!("cross-app access: {e}")))?;
    save(store, client_id, response, &scopes).await
}

async fn save(
    store: &TokenStore,
    client_id: &str,
    token: OAuthTokenResponse,
    asked: &[String],
) -> Result<(), LoginError> {
    use oauth2::TokenResponse;
    let granted = token
        .scopes()
        .map(|s| s.iter().map(|s| s.to_string()).collect())
        .unwrap_or_else(|| asked.to_vec());
    store
        .save(StoredCredentials::new(
            client_id.to_string(),
            Some(token),
            granted,
            Some(now()),
        ))
        .await
        .map_err(|e| LoginError::Unattended(describe(&e)))
}

/// A token endpoint's refusal in words (its `error` and `error_description`, never a token).
fn token_error(endpoint: &reqwest::Url, status: http::StatusCode, body: &[u8]) -> String {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let field = |name: &str| {
        parsed
            .as_ref()
            .and_then(|v| v.get(name))
            .and_then(Value::as_str)
            .map(|s| crate::text::sanitize_line(s, 200))
    };
    match (field("error"), field("error_description")) {
        (Some(error), Some(description)) => {
            format!("{endpoint} answered HTTP {status}: {error}: {description}")
        }
        (Some(error), None) => format!("{endpoint} answered HTTP {status}: {error}"),
        (None, _) => format!("{endpoint} answered HTTP {status}"),
    }
}

/// Whether the stored token is missing or will expire within `margin`.
pub fn needs_token(store: &TokenStore, margin: Duration) -> bool {
    use oauth2::TokenResponse;
    let Ok(record) = store.read() else {
        return true;
    };
    let Some(credentials) = record.credentials else {
        return true;
    };
    let Some(token) = credentials.token_response else {
        return true;
    };
    match (token.expires_in(), credentials.token_received_at) {
        (Some(lifetime), Some(received)) => {
            received + lifetime.as_secs() <= now() + margin.as_secs()
        }
        _ => false,
    }
}
