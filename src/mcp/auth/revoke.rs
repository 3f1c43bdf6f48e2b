//! Token revocation (RFC 7009) for `logout`: when the authorization server advertised a
//! `revocation_endpoint`, the stored refresh token and then the access token are revoked there
//! before the token file is deleted, so a copy of the file left elsewhere is worth nothing.
//!
//! Separate from `store.rs` (the file) and `login.rs` (getting tokens): this is the one request
//! that gives them back. It is best effort: a server that cannot be reached, or that refuses,
//! does not keep the login here (the file is deleted anyway), and the operator is told.

use oauth2::TokenResponse;
use reqwest::StatusCode;

use super::store::TokenRecord;

/// What happened to the tokens at the authorization server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revocation {
    /// No tokens were stored, or the server advertised no `revocation_endpoint`.
    NotOffered,
    /// The server revoked them (the refresh token, if there was one, and the access token).
    Revoked,
    /// The server could not be reached or refused; why (never a token).
    Failed(String),
}

/// Revokes the tokens of `record` at its authorization server's `revocation_endpoint`: the
/// refresh token first (with it gone no new access token can be had), then the access token,
/// each authenticated as the client the login registered.
pub async fn revoke(record: &TokenRecord) -> Revocation {
    let Some(endpoint) = record
        .metadata
        .as_ref()
        .and_then(|m| m.additional_fields.get("revocation_endpoint"))
        .and_then(|v| v.as_str())
    else {
        return Revocation::NotOffered;
    };
    let Some(response) = record
        .credentials
        .as_ref()
        .and_then(|c| c.token_response.as_ref())
    else {
        return Revocation::NotOffered;
    };
    let mut tokens: Vec<(&str, &str)> = Vec::with_capacity(2);
    if let Some(refresh) = response.refresh_token() {
        tokens.push((refresh.secret(), "refresh_token"));
    }
    tokens.push((response.access_token().secret(), "access_token"));
    let client = match super::discover::http_client() {
        Ok(c) => c,
        Err(e) => return Revocation::Failed(e.to_string()),
    };
    let (client_id, secret, method) = match &record.client {
        Some(c) => (
            c.client_id.as_str(),
            c.client_secret.as_deref(),
            c.auth_method.as_str(),
        ),
        None => match &record.credentials {
            Some(c) => (c.client_id.as_str(), None, "none"),
            None => return Revocation::NotOffered,
        },
    };
    for (token, hint) in tokens {
        let mut form = vec![("token", token), ("token_type_hint", hint)];
        let mut request = client.post(endpoint);
        match (method, secret) {
            ("client_secret_basic", Some(secret)) => {
                request = request.basic_auth(client_id, Some(secret));
            }
            ("client_secret_post", Some(secret)) => {
                form.push(("client_id", client_id));
                form.push(("client_secret", secret));
            }
            _ => form.push(("client_id", client_id)),
        }
        match request.form(&form).send().await {
            Ok(answer) if answer.status() == StatusCode::OK => {}
            Ok(answer) => {
                let status = answer.status();
                // RFC 7009 §2.2.1: an error answer says which error in its JSON body.
                let error = answer
                    .json::<serde_json::Value>()
                    .await
                    .ok()
                    .and_then(|v| v["error"].as_str().map(|e| format!(" ({e})")))
                    .unwrap_or_default();
                return Revocation::Failed(crate::text::sanitize_line(
                    &format!(
                        "the revocation endpoint answered {status}{error} for the {}",
                        hint.replace('_', " ")
                    ),
                    300,
                ));
            }
            Err(e) => {
                let authority = super::super::transport::http::authority(endpoint);
                return Revocation::Failed(format!(
                    "the revocation endpoint could not be reached: {}",
                    super::super::transport::http::describe(&e, &authority)
                ));
            }
        }
    }
    Revocation::Revoked
}
