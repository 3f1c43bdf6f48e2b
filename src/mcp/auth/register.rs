//! Which client aimon-console is at the authorization server, in the MCP order: a client
//! registered beforehand (`oauth.client_id`), a client ID metadata document URL when the server
//! supports them, the client a previous dynamic registration gave (same redirect URI, same
//! server), else a new dynamic registration (RFC 7591).
//!
//! The registration request is ours rather than rmcp's `register_client`, which drops what the
//! server answers beyond the client ID and secret: the `token_endpoint_auth_method` it chose is
//! what the token requests must then use.

use rmcp::transport::auth::AuthorizationMetadata;
use serde::Deserialize;
use serde_json::{json, Value};

use super::store::{ClientRecord, ClientSource};
use super::LoginError;
use crate::config::OAuthConfig;

/// The name a registration gives the client.
pub const CLIENT_NAME: &str = "aimon-console";

/// Picks (or registers) the client for a login redirecting to `redirect_uri`.
pub async fn choose_client(
    oauth: Option<&OAuthConfig>,
    stored: Option<&ClientRecord>,
    metadata: &AuthorizationMetadata,
    redirect_uri: &str,
    scopes: &[String],
) -> Result<ClientRecord, LoginError> {
    if let Some(client_id) = oauth.and_then(|o| o.client_id.clone()) {
        let secret = oauth.and_then(|o| o.client_secret.clone());
        let auth_method = match &secret {
            Some(_) => secret_method(metadata).to_string(),
            None => "none".to_string(),
        };
        return Ok(ClientRecord {
            client_id,
            client_secret: None,
            redirect_uri: Some(redirect_uri.to_string()),
            auth_method,
            source: ClientSource::Configured,
        });
    }
    if let Some(url) = oauth.and_then(|o| o.client_metadata_url.clone()) {
        let supported = metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if supported {
            return Ok(ClientRecord {
                client_id: url,
                client_secret: None,
                redirect_uri: Some(redirect_uri.to_string()),
                auth_method: "none".to_string(),
                source: ClientSource::MetadataDocument,
            });
        }
    }
    if let Some(stored) = stored.filter(|c| {
        c.source == ClientSource::Registered && c.redirect_uri.as_deref() == Some(redirect_uri)
    }) {
        return Ok(stored.clone());
    }
    register(metadata, redirect_uri, scopes).await
}

/// `client_secret_basic` unless the server lists only `client_secret_post` (RFC 8414: basic
/// is the default when the list is absent).
fn secret_method(metadata: &AuthorizationMetadata) -> &'static str {
    let methods: Vec<&str> = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !methods.contains(&"client_secret_basic") && methods.contains(&"client_secret_post") {
        "client_secret_post"
    } else {
        "client_secret_basic"
    }
}

#[derive(Deserialize)]
struct Registration {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// Dynamic client registration: a public native client with the authorization-code and
/// refresh-token grants.
async fn register(
    metadata: &AuthorizationMetadata,
    redirect_uri: &str,
    scopes: &[String],
) -> Result<ClientRecord, LoginError> {
    let Some(endpoint) = metadata.registration_endpoint.as_deref() else {
        return Err(LoginError::Registration(
            "the authorization server offers no dynamic registration and no client is configured: set oauth.client_id (and oauth.client_secret) for this server".into(),
        ));
    };
    let mut body = json!({
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
    });
    if !scopes.is_empty() {
        body["scope"] = Value::String(scopes.join(" "));
    }
    let client = super::discover::http_client()?;
    let response = client
        .post(endpoint)
        .json(&body)
        .send()
        .await
        .map_err(|e| LoginError::Registration(format!("{endpoint}: {e}")))?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|e| LoginError::Registration(format!("{endpoint}: {e}")))?;
    if !status.is_success() {
        return Err(LoginError::Registration(format!(
            "{endpoint} answered HTTP {status}: {}",
            crate::text::sanitize_line(&text, 300)
        )));
    }
    let registration: Registration = serde_json::from_str(&text).map_err(|e| {
        LoginError::Registration(format!(
            "{endpoint} answered something that is not a registration: {e}"
        ))
    })?;
    // An empty secret is no secret (some servers send "" for public clients).
    let secret = registration.client_secret.filter(|s| !s.is_empty());
    let auth_method = match (registration.token_endpoint_auth_method, &secret) {
        (Some(method), _) => method,
        // RFC 7591: the default is client_secret_basic.
        (None, Some(_)) => "client_secret_basic".to_string(),
        (None, None) => "none".to_string(),
    };
    if !matches!(
        auth_method.as_str(),
        "none" | "client_secret_basic" | "client_secret_post"
    ) {
        return Err(LoginError::Registration(format!(
            "the authorization server registered this client for token endpoint authentication {auth_method:?}, which aimon-console does not do (none, client_secret_basic, client_secret_post)"
        )));
    }
    Ok(ClientRecord {
        client_id: registration.client_id,
        client_secret: secret,
        redirect_uri: Some(redirect_uri.to_string()),
        auth_method,
        source: ClientSource::Registered,
    })
}

/// `metadata` as rmcp should see it for `client`: its token endpoint authentication is the one
/// `client` uses (rmcp picks basic or post from `token_endpoint_auth_methods_supported`).
pub fn metadata_for(
    metadata: &AuthorizationMetadata,
    client: &ClientRecord,
) -> AuthorizationMetadata {
    let mut metadata = metadata.clone();
    metadata.additional_fields.insert(
        "token_endpoint_auth_methods_supported".into(),
        json!([client.auth_method]),
    );
    metadata
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(methods: Option<Value>, cimd: bool) -> AuthorizationMetadata {
        let mut value = json!({
            "authorization_endpoint": "http://h/authorize",
            "token_endpoint": "http://h/token",
        });
        if let Some(m) = methods {
            value["token_endpoint_auth_methods_supported"] = m;
        }
        if cimd {
            value["client_id_metadata_document_supported"] = json!(true);
        }
        serde_json::from_value(value).expect("metadata")
    }

    #[tokio::test]
    async fn a_configured_client_comes_first_then_a_metadata_document() {
        let oauth = OAuthConfig {
            client_id: Some("pre".into()),
            client_secret: Some("s".into()),
            client_metadata_url: Some("https://example.com/c.json".into()),
            ..OAuthConfig::default()
        };
        let m = metadata(Some(json!(["client_secret_post"])), true);
        let c = choose_client(Some(&oauth), None, &m, "http://127.0.0.1:1/callback", &[])
            .await
            .expect("client");
        assert_eq!(
            (c.client_id.as_str(), c.auth_method.as_str()),
            ("pre", "client_secret_post")
        );
        assert_eq!(c.source, ClientSource::Configured);
        // The configured secret stays in the config, never in the token file.
        assert_eq!(c.client_secret, None);

        let cimd = OAuthConfig {
            client_metadata_url: Some("https://example.com/c.json".into()),
            ..OAuthConfig::default()
        };
        let c = choose_client(Some(&cimd), None, &m, "http://127.0.0.1:1/callback", &[])
            .await
            .expect("client");
        assert_eq!(c.client_id, "https://example.com/c.json");
        assert_eq!(c.source, ClientSource::MetadataDocument);
    }

    #[tokio::test]
    async fn a_stored_registration_is_reused_for_the_same_redirect_only() {
        let stored = ClientRecord {
            client_id: "dyn-1".into(),
            client_secret: None,
            redirect_uri: Some("http://127.0.0.1:5/callback".into()),
            auth_method: "none".into(),
            source: ClientSource::Registered,
        };
        let m = metadata(None, false);
        let c = choose_client(None, Some(&stored), &m, "http://127.0.0.1:5/callback", &[])
            .await
            .expect("reused");
        assert_eq!(c, stored);
        // Another redirect, and no registration endpoint: a clear error, not a guess.
        let err = choose_client(None, Some(&stored), &m, "http://127.0.0.1:6/callback", &[])
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("oauth.client_id"), "{err}");
    }

    #[test]
    fn secret_method_defaults_to_basic() {
        assert_eq!(secret_method(&metadata(None, false)), "client_secret_basic");
        assert_eq!(
            secret_method(&metadata(Some(json!(["client_secret_post"])), false)),
            "client_secret_post"
        );
        assert_eq!(
            secret_method(&metadata(
                Some(json!(["client_secret_post", "client_secret_basic"])),
                false
            )),
            "client_secret_basic"
        );
    }
}
