//! The `oauth:` block of a `streamable_http` server: how aimon-console gets a token for it (a
//! pre-registered client or none, the scopes, the grant, the key for a private-key JWT, the
//! identity provider for cross-app access, the workload's own token for workload identity),
//! parsed and checked with `file:line:col` errors.
//!
//! Separate from `load.rs` because it is a small schema of its own with its own rules (which keys
//! go with which grant). Every secret in it (`client_secret`, `private_key`, the IdP's secret and
//! ID token, the workload's `assertion`) is shown redacted.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::context::Context;
use super::error::{ConfigError, ConfigErrorKind};
use super::redact::RedactedSecret;
use super::spans::{child_path, index_path};

/// How aimon-console obtains a server's OAuth token (`oauth:` of a `streamable_http` server).
/// Without the block, a server that answers 401 still gets the interactive flow with dynamic
/// registration; the block is for what the server cannot tell us.
#[derive(Clone, PartialEq, Default)]
pub struct OAuthConfig {
    /// A client registered with the authorization server beforehand (else a client ID metadata
    /// document, else dynamic registration).
    pub client_id: Option<String>,
    /// The secret of `client_id`. A secret: shown redacted.
    pub client_secret: Option<String>,
    /// Scopes to ask for; empty: the server's choice (its `WWW-Authenticate` scope, else the
    /// protected resource's `scopes_supported`, else none).
    pub scopes: Vec<String>,
    pub grant: OAuthGrant,
    /// The private key of a `client_credentials` client that authenticates with a signed JWT
    /// (`private_key_jwt`).
    pub private_key: Option<PrivateKey>,
    /// The JWT's algorithm; default from the key (P-256: ES256, P-384: ES384, RSA: RS256).
    pub signing_algorithm: Option<SigningAlgorithm>,
    /// An HTTPS URL where this client's metadata document is published (client ID metadata
    /// documents): used as the `client_id` when the authorization server supports them.
    pub client_metadata_url: Option<String>,
    /// The enterprise identity provider, for `cross_app_access`.
    pub idp: Option<IdpConfig>,
    /// The workload's identity token, for `workload_identity`.
    pub assertion: Option<Assertion>,
}

/// Where the workload's identity token (a JWT its platform issues) is, for `workload_identity`.
#[derive(Clone, PartialEq)]
pub enum Assertion {
    /// A file the platform writes and rotates (a Kubernetes projected service-account token, a
    /// CI job's OIDC token), made absolute against the config's folder and read again at every
    /// token request.
    File(PathBuf),
    /// The token itself (`assertion: ${VAR}`). A secret: shown redacted.
    Token(String),
}

impl fmt::Debug for Assertion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Assertion::File(path) => f.debug_tuple("File").field(path).finish(),
            Assertion::Token(_) => f.write_str("Token(<redacted>)"),
        }
    }
}

/// Which OAuth grant gets the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OAuthGrant {
    /// The operator logs in in a browser (PKCE); refresh tokens keep the session.
    #[default]
    AuthorizationCode,
    /// Unattended: the client's own credentials (a secret, or a JWT signed with `private_key`).
    ClientCredentials,
    /// Unattended: an enterprise ID token exchanged at the identity provider for an ID-JAG,
    /// then at the server's authorization server for the access token.
    CrossAppAccess,
    /// Unattended: the workload's own identity token (`assertion` or `assertion_file`) is the
    /// JWT bearer grant's assertion (workload identity federation, RFC 7523).
    WorkloadIdentity,
}

impl OAuthGrant {
    pub fn as_str(self) -> &'static str {
        match self {
            OAuthGrant::AuthorizationCode => "authorization_code",
            OAuthGrant::ClientCredentials => "client_credentials",
            OAuthGrant::CrossAppAccess => "cross_app_access",
            OAuthGrant::WorkloadIdentity => "workload_identity",
        }
    }

    /// Whether a token is obtained without the operator (no browser, no login command needed).
    pub fn is_unattended(self) -> bool {
        match self {
            OAuthGrant::AuthorizationCode => false,
            OAuthGrant::ClientCredentials
            | OAuthGrant::CrossAppAccess
            | OAuthGrant::WorkloadIdentity => true,
        }
    }
}

/// Where the private key of a `private_key_jwt` client is.
#[derive(Clone, PartialEq)]
pub enum PrivateKey {
    /// A PEM file (PKCS#8, or PKCS#1 for RSA), made absolute against the config's folder.
    File(PathBuf),
    /// The PEM text itself (`private_key: ${VAR}`). A secret: shown redacted.
    Pem(String),
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrivateKey::File(path) => f.debug_tuple("File").field(path).finish(),
            PrivateKey::Pem(_) => f.write_str("Pem(<redacted>)"),
        }
    }
}

/// A JWT signing algorithm for `private_key_jwt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum SigningAlgorithm {
    ES256,
    ES384,
    RS256,
}

impl SigningAlgorithm {
    pub fn as_str(self) -> &'static str {
        match self {
            SigningAlgorithm::ES256 => "ES256",
            SigningAlgorithm::ES384 => "ES384",
            SigningAlgorithm::RS256 => "RS256",
        }
    }
}

/// The identity provider of `cross_app_access`: where the enterprise ID token is exchanged
/// for an ID-JAG (RFC 8693 token exchange).
#[derive(Clone, PartialEq)]
pub struct IdpConfig {
    /// Its issuer identifier (the `iss` of the ID-JAG it issues).
    pub issuer: String,
    pub token_endpoint: String,
    /// This client's ID at the identity provider.
    pub client_id: String,
    /// Its secret there, if it is a confidential client. Shown redacted.
    pub client_secret: Option<String>,
    /// The operator's ID token from the identity provider. Shown redacted.
    pub id_token: String,
}

impl fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &RedactedSecret(self.client_secret.as_deref()),
            )
            .field("scopes", &self.scopes)
            .field("grant", &self.grant)
            .field("private_key", &self.private_key)
            .field("signing_algorithm", &self.signing_algorithm)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("idp", &self.idp)
            .field("assertion", &self.assertion)
            .finish()
    }
}

impl fmt::Debug for IdpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdpConfig")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &RedactedSecret(self.client_secret.as_deref()),
            )
            .field("id_token", &RedactedSecret(Some(&self.id_token)))
            .finish()
    }
}

// No Debug on the raw types: they hold secrets before redaction.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an oauth mapping (client_id, client_secret, scopes, grant, key_file, assertion_file, …)"
)]
pub(super) struct RawOAuth {
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    scopes: Option<Vec<String>>,
    #[serde(default)]
    grant: Option<OAuthGrant>,
    #[serde(default)]
    key_file: Option<String>,
    #[serde(default)]
    private_key: Option<String>,
    #[serde(default)]
    signing_algorithm: Option<SigningAlgorithm>,
    #[serde(default)]
    client_metadata_url: Option<String>,
    #[serde(default)]
    idp: Option<RawIdp>,
    #[serde(default)]
    assertion: Option<String>,
    #[serde(default)]
    assertion_file: Option<String>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an idp mapping (issuer, token_endpoint, client_id, client_secret, id_token)"
)]
pub(super) struct RawIdp {
    issuer: String,
    token_endpoint: String,
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    id_token: String,
}

impl Context<'_> {
    /// The `oauth` block at `node` of server `server`, expanded and checked.
    pub(super) fn oauth(
        &self,
        node: &str,
        server: &str,
        raw: RawOAuth,
        base: &Path,
    ) -> Result<OAuthConfig, ConfigError> {
        let field = |name: &str| child_path(node, name);
        let invalid = |key: &str, message: String| {
            Err(self.error(ConfigErrorKind::Invalid, &field(key), message))
        };
        let opt = |name: &str, value: Option<String>| -> Result<Option<String>, ConfigError> {
            let Some(value) = value else { return Ok(None) };
            let value = self.expand(&field(name), &value)?;
            if value.trim().is_empty() {
                // Never quote the value: it may be a secret.
                return Err(self.error(
                    ConfigErrorKind::Invalid,
                    &field(name),
                    format!("server {server:?}: oauth.{name} is empty"),
                ));
            }
            Ok(Some(value))
        };
        let grant = raw.grant.unwrap_or_default();
        let key_node = if raw.private_key.is_some() {
            "private_key"
        } else {
            "key_file"
        };
        let client_id = opt("client_id", raw.client_id)?;
        let client_secret = opt("client_secret", raw.client_secret)?;
        let key_file = opt("key_file", raw.key_file)?;
        let private_key = opt("private_key", raw.private_key)?;
        let client_metadata_url = opt("client_metadata_url", raw.client_metadata_url)?;
        let assertion = self.assertion(
            node,
            server,
            grant,
            opt("assertion", raw.assertion)?,
            opt("assertion_file", raw.assertion_file)?,
            base,
        )?;
        let mut scopes = Vec::new();
        for (i, scope) in raw.scopes.unwrap_or_default().iter().enumerate() {
            let at = index_path(&field("scopes"), i);
            let scope = self.expand(&at, scope)?;
            if scope.is_empty() || scope.chars().any(|c| c.is_whitespace() || c == '"') {
                return Err(self.error(
                    ConfigErrorKind::Invalid,
                    &at,
                    format!("scope {scope:?} must be one non-empty word (no spaces or quotes)"),
                ));
            }
            scopes.push(scope);
        }
        if client_secret.is_some() && client_id.is_none() {
            return invalid(
                "client_secret",
                format!("server {server:?}: oauth.client_secret needs oauth.client_id (the client it belongs to)"),
            );
        }
        if key_file.is_some() && private_key.is_some() {
            return invalid(
                "private_key",
                format!("server {server:?}: give oauth.key_file or oauth.private_key, not both"),
            );
        }
        let key = match (key_file, private_key) {
            (Some(path), _) => {
                let path = super::values::relative_to(base, Path::new(&path));
                if !path.is_file() {
                    return invalid(
                        "key_file",
                        format!(
                            "server {server:?}: oauth.key_file {} is not a readable file",
                            path.display()
                        ),
                    );
                }
                Some(PrivateKey::File(path))
            }
            (None, Some(pem)) => Some(PrivateKey::Pem(pem)),
            (None, None) => None,
        };
        if key.is_some() && grant != OAuthGrant::ClientCredentials {
            return invalid(
                key_node,
                format!(
                    "server {server:?}: a private key is for `grant: client_credentials` (private_key_jwt), not {}",
                    grant.as_str()
                ),
            );
        }
        if raw.signing_algorithm.is_some() && key.is_none() {
            return invalid(
                "signing_algorithm",
                format!("server {server:?}: oauth.signing_algorithm needs oauth.key_file or oauth.private_key"),
            );
        }
        if let Some(url) = &client_metadata_url {
            let ok = reqwest::Url::parse(url)
                .is_ok_and(|u| u.scheme() == "https" && u.host_str().is_some() && u.path() != "/");
            if !ok {
                return invalid(
                    "client_metadata_url",
                    format!("server {server:?}: oauth.client_metadata_url {url:?} must be an https URL with a path"),
                );
            }
        }
        let idp = match raw.idp {
            Some(idp) => Some(self.idp(&field("idp"), server, idp)?),
            None => None,
        };
        match grant {
            OAuthGrant::AuthorizationCode => {}
            OAuthGrant::ClientCredentials => {
                if client_id.is_none() {
                    return invalid(
                        "grant",
                        format!(
                            "server {server:?}: `grant: client_credentials` needs oauth.client_id"
                        ),
                    );
                }
                if client_secret.is_none() == key.is_none() {
                    return invalid(
                        "grant",
                        format!("server {server:?}: `grant: client_credentials` needs exactly one of oauth.client_secret, oauth.key_file or oauth.private_key"),
                    );
                }
            }
            OAuthGrant::WorkloadIdentity => {
                if client_id.is_none() {
                    return invalid(
                        "grant",
                        format!(
                            "server {server:?}: `grant: workload_identity` needs oauth.client_id"
                        ),
                    );
                }
            }
            OAuthGrant::CrossAppAccess => {
                if client_id.is_none() || idp.is_none() {
                    return invalid(
                        "grant",
                        format!("server {server:?}: `grant: cross_app_access` needs oauth.client_id (at the server's authorization server) and oauth.idp"),
                    );
                }
            }
        }
        if idp.is_some() && grant != OAuthGrant::CrossAppAccess {
            return invalid(
                "idp",
                format!(
                    "server {server:?}: oauth.idp is for `grant: cross_app_access`, not {}",
                    grant.as_str()
                ),
            );
        }
        Ok(OAuthConfig {
            client_id,
            client_secret,
            scopes,
            grant,
            private_key: key,
            signing_algorithm: raw.signing_algorithm,
            client_metadata_url,
            idp,
            assertion,
        })
    }

    /// `assertion` or `assertion_file`: exactly one with `grant: workload_identity`, neither with
    /// another grant.
    fn assertion(
        &self,
        node: &str,
        server: &str,
        grant: OAuthGrant,
        token: Option<String>,
        file: Option<String>,
        base: &Path,
    ) -> Result<Option<Assertion>, ConfigError> {
        let invalid = |key: &str, message: String| {
            Err(self.error(ConfigErrorKind::Invalid, &child_path(node, key), message))
        };
        let assertion = match (token, file) {
            (Some(_), Some(_)) => {
                return invalid(
                    "assertion",
                    format!(
                        "server {server:?}: give oauth.assertion or oauth.assertion_file, not both"
                    ),
                )
            }
            (Some(token), None) => Some(Assertion::Token(token)),
            (None, Some(path)) => {
                let path = super::values::relative_to(base, Path::new(&path));
                if !path.is_file() {
                    return invalid(
                        "assertion_file",
                        format!(
                            "server {server:?}: oauth.assertion_file {} is not a readable file",
                            path.display()
                        ),
                    );
                }
                Some(Assertion::File(path))
            }
            (None, None) => None,
        };
        match (grant, &assertion) {
            (OAuthGrant::WorkloadIdentity, None) => invalid(
                "grant",
                format!("server {server:?}: `grant: workload_identity` needs oauth.assertion or oauth.assertion_file (the workload's identity token)"),
            ),
            (OAuthGrant::WorkloadIdentity, Some(_)) | (_, None) => Ok(assertion),
            (other, Some(Assertion::File(_))) => invalid(
                "assertion_file",
                format!("server {server:?}: oauth.assertion_file is for `grant: workload_identity`, not {}", other.as_str()),
            ),
            (other, Some(Assertion::Token(_))) => invalid(
                "assertion",
                format!("server {server:?}: oauth.assertion is for `grant: workload_identity`, not {}", other.as_str()),
            ),
        }
    }

    fn idp(&self, node: &str, server: &str, raw: RawIdp) -> Result<IdpConfig, ConfigError> {
        let field = |name: &str| child_path(node, name);
        let text = |name: &str, value: &str| -> Result<String, ConfigError> {
            let value = self.expand(&field(name), value)?;
            if value.trim().is_empty() {
                return Err(self.error(
                    ConfigErrorKind::Invalid,
                    &field(name),
                    format!("server {server:?}: oauth.idp.{name} is empty"),
                ));
            }
            Ok(value)
        };
        let url = |name: &str, value: &str| -> Result<String, ConfigError> {
            let value = text(name, value)?;
            if !(value.starts_with("https://") || value.starts_with("http://")) {
                return Err(self.error(
                    ConfigErrorKind::Invalid,
                    &field(name),
                    format!("server {server:?}: oauth.idp.{name} {value:?} must be an http(s) URL"),
                ));
            }
            Ok(value)
        };
        Ok(IdpConfig {
            issuer: url("issuer", &raw.issuer)?,
            token_endpoint: url("token_endpoint", &raw.token_endpoint)?,
            client_id: text("client_id", &raw.client_id)?,
            client_secret: raw
                .client_secret
                .map(|s| text("client_secret", &s))
                .transpose()?,
            id_token: text("id_token", &raw.id_token)?,
        })
    }
}

#[cfg(test)]
#[path = "oauth_tests.rs"]
mod tests;
