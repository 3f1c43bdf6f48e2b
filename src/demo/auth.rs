//! The authorization mode of `demo-server --http` (`--oauth`): the MCP endpoint becomes a
//! protected resource, and the same listener is its authorization server — protected-resource
//! metadata (RFC 9728), authorization-server metadata (RFC 8414), dynamic registration
//! (RFC 7591), an authorize endpoint that approves at once and redirects with a code (PKCE S256
//! required, `resource` checked), a token endpoint for the code and for refresh tokens,
//! short-lived access tokens (`--oauth-token-ttl`), and token revocation (RFC 7009).
//!
//! For trying logins and for the end-to-end tests: a test follows the authorization URL with
//! plain HTTP, as a browser whose user is already signed in would. What it does is written to
//! stderr (`oauth: …`), never a token.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use ring::rand::{SecureRandom, SystemRandom};
use serde_json::{json, Value};

/// The scope the demo resource asks for.
pub const SCOPE: &str = "notes";
/// Largest request body read (registration, token requests).
const MAX_BODY: usize = 64 * 1024;
/// How long an authorization code is good for.
const CODE_TTL: Duration = Duration::from_secs(60);

type Body = BoxBody<Bytes, Infallible>;

/// The flags of the authorization mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoAuth {
    /// How long an access token is valid.
    pub token_ttl: Duration,
    /// Leave `expires_in` out of token responses (the client learns of expiry from a 401).
    pub hide_expiry: bool,
}

impl Default for DemoAuth {
    fn default() -> Self {
        DemoAuth {
            token_ttl: Duration::from_secs(3600),
            hide_expiry: false,
        }
    }
}

/// The authorization server and resource guard of one demo server.
pub struct AuthServer {
    /// `http://HOST:PORT`, the issuer.
    base: String,
    options: DemoAuth,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Registered clients and their redirect URIs.
    clients: HashMap<String, Vec<String>>,
    codes: HashMap<String, Grant>,
    /// Access tokens and when they expire.
    access: HashMap<String, Instant>,
    /// Refresh tokens and the grant they renew.
    refresh: HashMap<String, Grant>,
}

#[derive(Clone)]
struct Grant {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    scope: String,
    issued: Instant,
}

impl AuthServer {
    pub fn new(base: String, options: DemoAuth) -> Self {
        AuthServer {
            base,
            options,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn resource(&self) -> String {
        format!("{}{}", self.base, super::MCP_PATH)
    }

    fn resource_metadata_url(&self) -> String {
        format!(
            "{}/.well-known/oauth-protected-resource{}",
            self.base,
            super::MCP_PATH
        )
    }

    /// Whether `path` is one of the authorization server's (not the MCP endpoint).
    pub fn serves(path: &str) -> bool {
        matches!(
            path,
            "/.well-known/oauth-protected-resource"
                | "/.well-known/oauth-protected-resource/mcp"
                | "/.well-known/oauth-authorization-server"
                | "/authorize"
                | "/token"
                | "/register"
                | "/revoke"
        )
    }

    /// Answers a request to one of [`AuthServer::serves`]'s paths.
    pub async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        let path = request.uri().path().to_string();
        let query = request.uri().query().unwrap_or_default().to_string();
        match (request.method().as_str(), path.as_str()) {
            ("GET", "/.well-known/oauth-protected-resource")
            | ("GET", "/.well-known/oauth-protected-resource/mcp") => json_response(
                StatusCode::OK,
                &json!({
                    "resource": self.resource(),
                    "authorization_servers": [self.base],
                    "scopes_supported": [SCOPE],
                    "bearer_methods_supported": ["header"],
                }),
            ),
            ("GET", "/.well-known/oauth-authorization-server") => json_response(
                StatusCode::OK,
                &json!({
                    "issuer": self.base,
                    "authorization_endpoint": format!("{}/authorize", self.base),
                    "token_endpoint": format!("{}/token", self.base),
                    "registration_endpoint": format!("{}/register", self.base),
                    "revocation_endpoint": format!("{}/revoke", self.base),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                    "scopes_supported": [SCOPE, "offline_access"],
                    "authorization_response_iss_parameter_supported": true,
                }),
            ),
            ("GET", "/authorize") => self.authorize(&pairs(&query)),
            ("POST", "/register") => match read_body(request).await {
                Some(body) => self.register(&body),
                None => oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "unreadable body",
                ),
            },
            ("POST", "/token") => with_form(request, |form| self.token(form)).await,
            ("POST", "/revoke") => with_form(request, |form| self.revoke(form)).await,
            _ => plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed"),
        }
    }

    /// `None` when the request carries a valid access token; else the 401 to answer.
    pub fn check(&self, request: &Request<Incoming>) -> Option<Response<Body>> {
        let token = request
            .headers()
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let problem = match token {
            None => None,
            Some(token) => match self.state().access.get(token) {
                Some(expires) if *expires > Instant::now() => return None,
                Some(_) => Some("the access token expired"),
                None => Some("unknown access token"),
            },
        };
        let mut challenge = format!(
            "Bearer resource_metadata=\"{}\", scope=\"{SCOPE}\"",
            self.resource_metadata_url()
        );
        if let Some(problem) = problem {
            challenge.push_str(&format!(
                ", error=\"invalid_token\", error_description=\"{problem}\""
            ));
        }
        let mut response = plain(
            StatusCode::UNAUTHORIZED,
            "an OAuth access token is required",
        );
        if let Ok(value) = http::HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(http::header::WWW_AUTHENTICATE, value);
        }
        Some(response)
    }

    fn register(&self, body: &[u8]) -> Response<Body> {
        let Ok(request) = serde_json::from_slice::<Value>(body) else {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_client_metadata",
                "not JSON",
            );
        };
        let uris: Vec<String> = request
            .get("redirect_uris")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        if uris.is_empty() || !uris.iter().all(|u| is_loopback_redirect(u)) {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_redirect_uri",
                "redirect URIs must be http loopback URIs",
            );
        }
        let client_id = {
            let mut state = self.state();
            let id = format!("demo-client-{}", state.clients.len() + 1);
            state.clients.insert(id.clone(), uris.clone());
            id
        };
        log(&format!("registered client {client_id}"));
        json_response(
            StatusCode::CREATED,
            &json!({
                "client_id": client_id,
                "client_name": request.get("client_name"),
                "redirect_uris": uris,
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            }),
        )
    }

    fn authorize(&self, query: &HashMap<String, String>) -> Response<Body> {
        let get = |k: &str| query.get(k).map(String::as_str).unwrap_or_default();
        let client_id = get("client_id");
        let redirect_uri = get("redirect_uri");
        let registered = self.state().clients.get(client_id).cloned();
        let Some(uris) = registered else {
            return plain(StatusCode::BAD_REQUEST, "unknown client_id");
        };
        // RFC 8252 §7.3: a loopback redirect URI matches whatever its port.
        if !uris.iter().any(|u| same_but_port(u, redirect_uri)) {
            return plain(StatusCode::BAD_REQUEST, "redirect_uri is not registered");
        }
        let refuse =
            |error: &str| redirect(redirect_uri, &[("error", error), ("state", get("state"))]);
        if get("response_type") != "code" {
            return refuse("unsupported_response_type");
        }
        if get("code_challenge").is_empty() || get("code_challenge_method") != "S256" {
            return refuse("invalid_request");
        }
        if get("resource") != self.resource() {
            return refuse("invalid_target");
        }
        let code = random_token("demo-code");
        let scope = get("scope").to_string();
        self.state().codes.insert(
            code.clone(),
            Grant {
                client_id: client_id.to_string(),
                redirect_uri: redirect_uri.to_string(),
                challenge: get("code_challenge").to_string(),
                scope: scope.clone(),
                issued: Instant::now(),
            },
        );
        log(&format!(
            "authorization granted to {client_id} (scope {})",
            if scope.is_empty() { "none" } else { &scope }
        ));
        redirect(
            redirect_uri,
            &[
                ("code", &code),
                ("state", get("state")),
                ("iss", &self.base),
            ],
        )
    }

    fn token(&self, form: &HashMap<String, String>) -> Response<Body> {
        let get = |k: &str| form.get(k).map(String::as_str).unwrap_or_default();
        match get("grant_type") {
            "authorization_code" => {
                let grant = self.state().codes.remove(get("code"));
                let Some(grant) = grant.filter(|g| g.issued.elapsed() < CODE_TTL) else {
                    return oauth_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_grant",
                        "unknown or expired code",
                    );
                };
                let verifier_ok = {
                    let digest = ring::digest::digest(
                        &ring::digest::SHA256,
                        get("code_verifier").as_bytes(),
                    );
                    URL_SAFE_NO_PAD.encode(digest.as_ref()) == grant.challenge
                };
                if grant.client_id != get("client_id")
                    || grant.redirect_uri != get("redirect_uri")
                    || !verifier_ok
                {
                    return oauth_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_grant",
                        "client, redirect_uri or code_verifier does not match",
                    );
                }
                if get("resource") != self.resource() {
                    return oauth_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_target",
                        "wrong resource",
                    );
                }
                log(&format!(
                    "token issued to {} (authorization code)",
                    grant.client_id
                ));
                self.issue(grant)
            }
            "refresh_token" => {
                let grant = self.state().refresh.remove(get("refresh_token"));
                let Some(grant) = grant else {
                    return oauth_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_grant",
                        "unknown refresh token",
                    );
                };
                if grant.client_id != get("client_id") {
                    return oauth_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_grant",
                        "another client's refresh token",
                    );
                }
                log(&format!("token refreshed for {}", grant.client_id));
                self.issue(grant)
            }
            other => oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                &format!("grant_type {other:?}"),
            ),
        }
    }

    /// Token revocation (RFC 7009): the token is forgotten, whichever kind it is; a refresh
    /// token only by the client it was issued to. An unknown token is answered 200 as well.
    fn revoke(&self, form: &HashMap<String, String>) -> Response<Body> {
        let get = |k: &str| form.get(k).map(String::as_str).unwrap_or_default();
        let token = get("token");
        let mut state = self.state();
        let owner = state.refresh.get(token).map(|g| g.client_id.clone());
        let what = match owner {
            Some(client_id) if client_id != get("client_id") => {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_client",
                    "another client's refresh token",
                )
            }
            Some(_) => {
                state.refresh.remove(token);
                "a refresh token"
            }
            None if state.access.remove(token).is_some() => "an access token",
            None => "an unknown token",
        };
        drop(state);
        log(&format!("revoked {what} ({})", get("token_type_hint")));
        plain(StatusCode::OK, "")
    }

    /// A new access token and a new refresh token (the old refresh token is spent).
    fn issue(&self, grant: Grant) -> Response<Body> {
        let access = random_token("demo-at");
        let refresh = random_token("demo-rt");
        let scope = grant.scope.clone();
        {
            let mut state = self.state();
            state
                .access
                .insert(access.clone(), Instant::now() + self.options.token_ttl);
            state.refresh.insert(refresh.clone(), grant);
        }
        let mut body = json!({
            "access_token": access,
            "token_type": "Bearer",
            "refresh_token": refresh,
        });
        if !self.options.hide_expiry {
            body["expires_in"] = json!(self.options.token_ttl.as_secs());
        }
        if !scope.is_empty() {
            body["scope"] = json!(scope);
        }
        let mut response = json_response(StatusCode::OK, &body);
        response.headers_mut().insert(
            http::header::CACHE_CONTROL,
            http::HeaderValue::from_static("no-store"),
        );
        response
    }
}

/// A line on stderr about what the authorization server did (never a token).
fn log(line: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "oauth: {line}").and_then(|()| stderr.flush());
}

fn random_token(prefix: &str) -> String {
    let mut bytes = [0_u8; 24];
    // The system RNG does not fail on Linux; a zeroed token would still be unique per prefix
    // only by luck, so fall back to the time as well.
    if SystemRandom::new().fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        bytes[..16].copy_from_slice(&nanos.to_le_bytes());
    }
    format!("{prefix}-{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// `application/x-www-form-urlencoded` pairs (a query string or a form body).
fn pairs(text: &str) -> HashMap<String, String> {
    reqwest::Url::parse(&format!("http://x/?{text}"))
        .map(|u| u.query_pairs().into_owned().collect())
        .unwrap_or_default()
}

fn is_loopback_redirect(uri: &str) -> bool {
    reqwest::Url::parse(uri).is_ok_and(|u| {
        u.scheme() == "http" && matches!(u.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"))
    })
}

/// Equal but for the port (a loopback redirect URI's port may change, RFC 8252 §7.3).
fn same_but_port(registered: &str, given: &str) -> bool {
    match (reqwest::Url::parse(registered), reqwest::Url::parse(given)) {
        (Ok(mut a), Ok(mut b)) => {
            let _ = a.set_port(None);
            let _ = b.set_port(None);
            a == b && is_loopback_redirect(given)
        }
        _ => false,
    }
}

/// Answers a form POST (the token and revocation endpoints) with `answer`, or refuses a body
/// that cannot be read.
async fn with_form(
    request: Request<Incoming>,
    answer: impl FnOnce(&HashMap<String, String>) -> Response<Body>,
) -> Response<Body> {
    match read_body(request).await {
        Some(body) => answer(&pairs(&String::from_utf8_lossy(&body))),
        None => oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "unreadable body",
        ),
    }
}

async fn read_body(request: Request<Incoming>) -> Option<Vec<u8>> {
    Limited::new(request.into_body(), MAX_BODY)
        .collect()
        .await
        .ok()
        .map(|b| b.to_bytes().to_vec())
}

fn redirect(to: &str, params: &[(&str, &str)]) -> Response<Body> {
    let Ok(mut url) = reqwest::Url::parse(to) else {
        return plain(StatusCode::BAD_REQUEST, "bad redirect_uri");
    };
    {
        let mut query = url.query_pairs_mut();
        for (k, v) in params.iter().filter(|(_, v)| !v.is_empty()) {
            query.append_pair(k, v);
        }
    }
    let mut response = plain(StatusCode::FOUND, "redirecting");
    if let Ok(value) = http::HeaderValue::from_str(url.as_str()) {
        response.headers_mut().insert(http::header::LOCATION, value);
    }
    response
}

fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(value.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response<Body> {
    json_response(
        status,
        &json!({"error": error, "error_description": description}),
    )
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_redirects_match_whatever_their_port() {
        assert!(same_but_port(
            "http://127.0.0.1:5000/callback",
            "http://127.0.0.1:6000/callback"
        ));
        assert!(!same_but_port(
            "http://127.0.0.1:5000/callback",
            "http://127.0.0.1:6000/other"
        ));
        assert!(!same_but_port(
            "http://127.0.0.1:5000/callback",
            "http://evil.example:5000/callback"
        ));
        assert!(!is_loopback_redirect("https://example.com/cb"));
    }

    #[test]
    fn form_pairs_are_decoded() {
        let p = pairs("a=1&scope=notes+offline_access&r=http%3A%2F%2Fh%2Fmcp");
        assert_eq!(
            p.get("scope").map(String::as_str),
            Some("notes offline_access")
        );
        assert_eq!(p.get("r").map(String::as_str), Some("http://h/mcp"));
    }

    #[test]
    fn tokens_are_random_and_prefixed() {
        let a = random_token("demo-at");
        assert!(a.starts_with("demo-at-") && a.len() > 30, "{a}");
        assert_ne!(a, random_token("demo-at"));
    }
}
