//! DPoP-bound tokens (RFC 9449, SEP-1932) for servers whose authorization server offers them
//! (`dpop_signing_alg_values_supported` holds ES256):
//!
//! - the login makes a key for the server (kept in its token store, a 0600 file), and every
//!   token request (the code exchange, each refresh) goes through [`TokenClient`], rmcp's
//!   OAuth HTTP client with a proof added and the authorization server's `use_dpop_nonce`
//!   answered once with the nonce it handed out (§8);
//! - requests to the server go through [`Presenter`]: a token of type `DPoP` is sent as
//!   `Authorization: DPoP …` with a fresh proof bound to it (`ath`) on every request (§7), and a
//!   401 `use_dpop_nonce` is answered once with the server's nonce (§9).
//!
//! rmcp's HTTP client reports a 401 by its `WWW-Authenticate` alone, without the `DPoP-Nonce`
//! header beside it; so when a server asks for a nonce, it is learned from the answer to a
//! `ping` sent here with the same credentials (a request any server may answer, which changes
//! nothing), and the refused request is then made again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::BoxStream;
use futures::StreamExt;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, OAuthHttpClient, OAuthHttpClientError,
    OAuthHttpClientFuture, OAuthHttpRequest,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::store::TokenStore;
use super::{describe, LoginError};
use crate::dpop::{self, DpopKey};

type HttpError = StreamableHttpError<reqwest::Error>;

/// The token endpoint's answers are small; a longer one is refused.
const MAX_TOKEN_ANSWER: usize = 1 << 20;
/// How long a token request, or the ping that learns a nonce, may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const PING: &str = r#"{"jsonrpc":"2.0","id":"aimon-dpop-nonce","method":"ping"}"#;

/// Whether an authorization server offers DPoP with ES256.
pub fn offered(metadata: &AuthorizationMetadata) -> bool {
    metadata
        .additional_fields
        .get("dpop_signing_alg_values_supported")
        .and_then(|v| v.as_array())
        .is_some_and(|algs| algs.iter().any(|a| a == dpop::ALGORITHM))
}

/// Whether a stored token response is a DPoP-bound token (`token_type: DPoP`).
pub fn is_bound(token_type: &str) -> bool {
    token_type.eq_ignore_ascii_case("dpop")
}

/// The server's key from its stored text, or a new one.
pub fn key_for(stored: Option<&str>) -> Result<Arc<DpopKey>, LoginError> {
    let key = match stored {
        Some(text) => DpopKey::from_stored(text),
        None => DpopKey::generate(),
    };
    key.map(Arc::new)
        .map_err(|e| LoginError::Discovery(e.to_string()))
}

/// An rmcp authorization manager whose token requests carry proofs signed with `key`.
/// `resource` is its base URL, which rmcp sends as the `resource` of every token request.
pub async fn manager(
    resource: &str,
    store: &TokenStore,
    key: Arc<DpopKey>,
) -> Result<AuthorizationManager, LoginError> {
    crate::net::install_tls_provider();
    let client = TokenClient::new(key).map_err(|e| LoginError::Discovery(e.to_string()))?;
    let mut manager = AuthorizationManager::new_with_oauth_http_client(resource, Arc::new(client))
        .await
        .map_err(|e| LoginError::Discovery(describe(&e)))?;
    manager.set_credential_store(store.clone());
    Ok(manager)
}

/// The last nonce a server handed out (`DPoP-Nonce`).
#[derive(Default)]
struct Nonce(Mutex<Option<String>>);

impl Nonce {
    fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Keeps the nonce an answer handed out; whether it is a new one.
    fn learn(&self, headers: &http::HeaderMap) -> bool {
        let Some(fresh) = headers
            .get(dpop::NONCE_HEADER)
            .and_then(|v| dpop::nonce(v.as_bytes()))
        else {
            return false;
        };
        let mut nonce = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let new = nonce.as_deref() != Some(fresh.as_str());
        *nonce = Some(fresh);
        new
    }
}

/// rmcp's OAuth HTTP client for token requests with proofs. It follows no redirect: it is
/// given only the token requests of a discovery already made (discovery keeps rmcp's own
/// client, with its address checks).
struct TokenClient {
    http: reqwest::Client,
    key: Arc<DpopKey>,
    /// The authorization server's.
    nonce: Nonce,
}

impl TokenClient {
    fn new(key: Arc<DpopKey>) -> Result<TokenClient, reqwest::Error> {
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(crate::net::Resolver))
            .build()?;
        Ok(TokenClient {
            http,
            key,
            nonce: Nonce::default(),
        })
    }

    async fn send(
        &self,
        request: &oauth2::HttpRequest,
    ) -> Result<oauth2::HttpResponse, OAuthHttpClientError> {
        let url = request.uri().to_string();
        let mut out = self
            .http
            .request(request.method().clone(), &url)
            .headers(request.headers().clone())
            .body(request.body().clone());
        if request.method() == http::Method::POST {
            let proof = self
                .key
                .proof("POST", &url, None, self.nonce.get().as_deref())?;
            out = out.header(dpop::PROOF_HEADER, proof);
        }
        let response = out.send().await?;
        let mut answer = http::Response::builder().status(response.status());
        for (name, value) in response.headers() {
            answer = answer.header(name, value);
        }
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk?;
            if body.len() + chunk.len() > MAX_TOKEN_ANSWER {
                return Err(format!(
                    "the token endpoint's answer is over {MAX_TOKEN_ANSWER} bytes"
                )
                .into());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(answer.body(body)?)
    }
}

impl OAuthHttpClient for TokenClient {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let request = request.request;
            let answer = self.send(&request).await?;
            let asked = answer.status() == http::StatusCode::BAD_REQUEST
                && dpop::asks_for_nonce(&String::from_utf8_lossy(answer.body()));
            if self.nonce.learn(answer.headers()) && asked {
                return self.send(&request).await;
            }
            Ok(answer)
        })
    }
}

/// What a server's requests need to present a DPoP-bound token.
pub struct DpopSession {
    key: Arc<DpopKey>,
    /// The server's.
    nonce: Nonce,
}

impl DpopSession {
    pub fn new(key: Arc<DpopKey>) -> DpopSession {
        DpopSession {
            key,
            nonce: Nonce::default(),
        }
    }

    /// `headers` with the token as `Authorization: DPoP` and a fresh proof for the request.
    fn present(
        &self,
        method: &str,
        uri: &str,
        token: &str,
        mut headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<HashMap<HeaderName, HeaderValue>, HttpError> {
        let failed =
            |e: &dyn std::fmt::Display| HttpError::Auth(AuthError::InternalError(e.to_string()));
        let proof = self
            .key
            .proof(method, uri, Some(token), self.nonce.get().as_deref())
            .map_err(|e| failed(&e))?;
        let mut authorization =
            HeaderValue::from_str(&format!("DPoP {token}")).map_err(|e| failed(&e))?;
        authorization.set_sensitive(true);
        headers.insert(http::header::AUTHORIZATION, authorization);
        headers.insert(
            HeaderName::from_static(dpop::PROOF_HEADER),
            HeaderValue::from_str(&proof).map_err(|e| failed(&e))?,
        );
        Ok(headers)
    }

    /// Learns the server's nonce from its answer to a `ping` with these credentials; whether a
    /// new one came.
    async fn learn_nonce(
        &self,
        plain: &reqwest::Client,
        uri: &str,
        session: Option<&str>,
        token: &str,
        headers: &HashMap<HeaderName, HeaderValue>,
    ) -> bool {
        let Ok(presented) = self.present("POST", uri, token, headers.clone()) else {
            return false;
        };
        let mut ping = plain
            .post(uri)
            .timeout(REQUEST_TIMEOUT)
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(PING);
        if let Some(session) = session {
            ping = ping.header("mcp-session-id", session);
        }
        for (name, value) in presented {
            ping = ping.header(name, value);
        }
        match ping.send().await {
            Ok(answer) => self.nonce.learn(answer.headers()),
            Err(_) => false,
        }
    }
}

/// The HTTP client under rmcp's `AuthClient`: plain, or presenting a DPoP-bound token.
#[derive(Clone)]
pub struct Presenter {
    plain: reqwest::Client,
    dpop: Option<Arc<DpopSession>>,
}

impl Presenter {
    pub fn new(plain: reqwest::Client, dpop: Option<Arc<DpopSession>>) -> Presenter {
        Presenter { plain, dpop }
    }

    /// Runs `call` with the token presented: as rmcp's bearer `auth_token`, or in DPoP headers
    /// (once more after learning a nonce the server asked for).
    async fn run<T, F, Fut>(
        &self,
        method: &str,
        uri: &str,
        session: Option<&str>,
        token: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        call: F,
    ) -> Result<T, HttpError>
    where
        F: Fn(Option<String>, HashMap<HeaderName, HeaderValue>) -> Fut,
        Fut: std::future::Future<Output = Result<T, HttpError>>,
    {
        let (Some(dpop), Some(token)) = (&self.dpop, token.clone()) else {
            return call(token, headers).await;
        };
        let result = call(None, dpop.present(method, uri, &token, headers.clone())?).await;
        match result {
            Err(HttpError::AuthRequired(challenge))
                if dpop::asks_for_nonce(&challenge.www_authenticate_header) =>
            {
                if dpop
                    .learn_nonce(&self.plain, uri, session, &token, &headers)
                    .await
                {
                    call(None, dpop.present(method, uri, &token, headers)?).await
                } else {
                    Err(HttpError::AuthRequired(challenge))
                }
            }
            other => other,
        }
    }
}

impl StreamableHttpClient for Presenter {
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
        self.run(
            "POST",
            &uri,
            session_id.as_deref(),
            auth_header,
            custom_headers,
            |token, headers| {
                self.plain.post_message_with_response_limits(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token,
                    headers,
                    limits,
                )
            },
        )
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.run(
            "DELETE",
            &uri,
            Some(&session_id),
            auth_header,
            custom_headers,
            |token, headers| {
                self.plain
                    .delete_session(uri.clone(), session_id.clone(), token, headers)
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
        self.run(
            "GET",
            &uri,
            session_id.as_deref(),
            auth_header,
            custom_headers,
            |token, headers| {
                self.plain.get_stream_with_max_sse_event_size(
                    uri.clone(),
                    session_id.clone(),
                    last_event_id.clone(),
                    token,
                    headers,
                    max_sse_event_size,
                )
            },
        )
        .await
    }
}
