//! The HTTP of the demo's authorization server (`auth.rs`): forms, bodies, redirects, JSON and
//! OAuth error answers, the loopback redirect rules, random tokens, and its stderr log.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::Write;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use ring::rand::{SecureRandom, SystemRandom};
use serde_json::{json, Value};

/// Largest request body read (registration, token requests).
const MAX_BODY: usize = 64 * 1024;

pub(super) type Body = BoxBody<Bytes, Infallible>;

/// A line on stderr about what the authorization server did (never a token).
pub(super) fn log(line: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "oauth: {line}").and_then(|()| stderr.flush());
}

pub(super) fn random_token(prefix: &str) -> String {
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
pub(super) fn pairs(text: &str) -> HashMap<String, String> {
    reqwest::Url::parse(&format!("http://x/?{text}"))
        .map(|u| u.query_pairs().into_owned().collect())
        .unwrap_or_default()
}

pub(super) fn is_loopback_redirect(uri: &str) -> bool {
    reqwest::Url::parse(uri).is_ok_and(|u| {
        u.scheme() == "http" && matches!(u.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"))
    })
}

/// Equal but for the port (a loopback redirect URI's port may change, RFC 8252 §7.3).
pub(super) fn same_but_port(registered: &str, given: &str) -> bool {
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
pub(super) async fn with_form(
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

pub(super) async fn read_body(request: Request<Incoming>) -> Option<Vec<u8>> {
    Limited::new(request.into_body(), MAX_BODY)
        .collect()
        .await
        .ok()
        .map(|b| b.to_bytes().to_vec())
}

pub(super) fn redirect(to: &str, params: &[(&str, &str)]) -> Response<Body> {
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

pub(super) fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(value.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

pub(super) fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response<Body> {
    json_response(
        status,
        &json!({"error": error, "error_description": description}),
    )
}

pub(super) fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
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
