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
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use serde_json::{json, Value};

use super::auth_http::{
    is_loopback_redirect, json_response, log, oauth_error, pairs, plain, random_token, read_body,
    redirect, same_but_port, with_form, Body,
};
use super::dpop::{DemoDpop, Guard};

/// The scope the demo resource asks for.
pub const SCOPE: &str = "notes";
/// How long an authorization code is good for.
const CODE_TTL: Duration = Duration::from_secs(60);

/// The flags of the authorization mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoAuth {
    /// How long an access token is valid.
    pub token_ttl: Duration,
    /// Leave `expires_in` out of token responses (the client learns of expiry from a 401).
    pub hide_expiry: bool,
    /// DPoP-bound tokens (`demo/dpop.rs`).
    pub dpop: Option<DemoDpop>,
}

impl Default for DemoAuth {
    fn default() -> Self {
        DemoAuth {
            token_ttl: Duration::from_secs(3600),
            hide_expiry: false,
            dpop: None,
        }
    }
}

/// The authorization server and resource guard of one demo server.
pub struct AuthServer {
    /// `http://HOST:PORT`, the issuer.
    base: String,
    options: DemoAuth,
    state: Mutex<State>,
    dpop: Option<Guard>,
}

#[derive(Default)]
struct State {
    /// Registered clients and their redirect URIs.
    clients: HashMap<String, Vec<String>>,
    codes: HashMap<String, Grant>,
    /// Access tokens: when they expire, and the key they are bound to.
    access: HashMap<String, Access>,
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
    /// The DPoP key thumbprint the grant's tokens are bound to.
    jkt: Option<String>,
}

struct Access {
    expires: Instant,
    jkt: Option<String>,
}

impl AuthServer {
    pub fn new(base: String, options: DemoAuth) -> Self {
        AuthServer {
            base,
            dpop: options.dpop.map(Guard::new),
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
                &self.with_dpop(json!({
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
                })),
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
            ("POST", "/token") => {
                let proof = request
                    .headers()
                    .get(crate::dpop::PROOF_HEADER)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                with_form(request, |form| self.token(form, proof.as_deref())).await
            }
            ("POST", "/revoke") => with_form(request, |form| self.revoke(form)).await,
            _ => plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed"),
        }
    }

    /// The authorization server's metadata, with DPoP offered when it is.
    fn with_dpop(&self, mut metadata: Value) -> Value {
        if self.dpop.is_some() {
            metadata["dpop_signing_alg_values_supported"] = json!([crate::dpop::ALGORITHM]);
        }
        metadata
    }

    /// `None` when the request carries a valid access token (presented as its type asks);
    /// else the 401 to answer.
    pub fn check(&self, request: &Request<Incoming>) -> Option<Response<Body>> {
        let scheme = if self.dpop.is_some() {
            "DPoP"
        } else {
            "Bearer"
        };
        let token = request
            .headers()
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.split_once(' ')
                    .filter(|(s, _)| s.eq_ignore_ascii_case(scheme))
            })
            .map(|(_, token)| token.trim());
        let mut challenge = format!(
            "{scheme} resource_metadata=\"{}\", scope=\"{SCOPE}\"",
            self.resource_metadata_url()
        );
        let problem = match token {
            None => None,
            Some(token) => {
                let found = self
                    .state()
                    .access
                    .get(token)
                    .map(|a| (a.expires, a.jkt.clone()));
                match found {
                    Some((expires, jkt)) if expires > Instant::now() => {
                        let (Some(guard), Some(jkt)) = (&self.dpop, jkt) else {
                            return None;
                        };
                        return guard.resource_request(
                            request,
                            &self.resource(),
                            token,
                            &jkt,
                            &challenge,
                        );
                    }
                    Some(_) => Some("the access token expired"),
                    None => Some("unknown access token"),
                }
            }
        };
        if self.dpop.is_some() {
            challenge.push_str(&format!(", algs=\"{}\"", crate::dpop::ALGORITHM));
        }
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
                jkt: None,
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

    fn token(&self, form: &HashMap<String, String>, proof: Option<&str>) -> Response<Body> {
        let get = |k: &str| form.get(k).map(String::as_str).unwrap_or_default();
        // With DPoP, every token request proves the key its tokens are bound to.
        let jkt = match &self.dpop {
            Some(guard) => match guard.token_request(proof, &format!("{}/token", self.base)) {
                Ok(jkt) => Some(jkt),
                Err(refusal) => return *refusal,
            },
            None => None,
        };
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
                    "token issued to {} (authorization code{})",
                    grant.client_id,
                    if jkt.is_some() { ", DPoP-bound" } else { "" }
                ));
                self.issue(Grant { jkt, ..grant })
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
                if grant.jkt != jkt {
                    return oauth_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_grant",
                        "the refresh token is bound to another DPoP key",
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
            state.access.insert(
                access.clone(),
                Access {
                    expires: Instant::now() + self.options.token_ttl,
                    jkt: grant.jkt.clone(),
                },
            );
            state.refresh.insert(refresh.clone(), grant.clone());
        }
        let mut body = json!({
            "access_token": access,
            "token_type": if grant.jkt.is_some() { "DPoP" } else { "Bearer" },
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
