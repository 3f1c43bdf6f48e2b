//! How a model endpoint fails: one class per cause, a message that says what happened and a
//! hint that says what to do, like the start-up failures of MCP servers.
//!
//! Separate from the client so the classes are one list that the loop, the CLI and the
//! transcript share, and so transport errors are classified in one place.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::time::Duration;

pub use crate::config::redact::{Secrets, MIN_NAMED_SECRET};
use crate::net::NetClass;
use serde::Serialize;

/// What kind of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelFailureClass {
    /// The endpoint's `command` could not be started or printed no base URL.
    EndpointFailed,
    /// Nothing accepted the connection.
    ConnectRefused,
    /// The host name did not resolve.
    DnsError,
    /// The TLS handshake failed.
    TlsError,
    /// The endpoint stayed silent for `request_timeout`.
    Timeout,
    /// An error status other than 429 and 5xx (401/403: the key; 404: the model or URL).
    HttpStatus,
    /// 429, still after the retries (or asking for a longer wait than we keep).
    RateLimited,
    /// 5xx, still after the retries.
    ServerError,
    /// A streamed answer that is empty, has a chunk that is not JSON, or stops before its
    /// finish reason.
    BadStream,
    /// A whole answer that is not a chat completion.
    BadResponse,
}

impl ModelFailureClass {
    pub fn as_str(self) -> &'static str {
        match self {
            ModelFailureClass::EndpointFailed => "endpoint_failed",
            ModelFailureClass::ConnectRefused => "connect_refused",
            ModelFailureClass::DnsError => "dns_error",
            ModelFailureClass::TlsError => "tls_error",
            ModelFailureClass::Timeout => "timeout",
            ModelFailureClass::HttpStatus => "http_status",
            ModelFailureClass::RateLimited => "rate_limited",
            ModelFailureClass::ServerError => "server_error",
            ModelFailureClass::BadStream => "bad_stream",
            ModelFailureClass::BadResponse => "bad_response",
        }
    }
}

/// A model request that failed. `message` and `hint` never hold the API key (see
/// [`ModelError::scrubbed`]).
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error, serde::Deserialize)]
#[error("{}: {message} (hint: {hint})", class.as_str())]
pub struct ModelError {
    pub class: ModelFailureClass,
    pub message: String,
    pub hint: String,
    /// The HTTP status, for `http_status`, `rate_limited` and `server_error`.
    pub http_status: Option<u16>,
}

impl ModelError {
    pub fn new(class: ModelFailureClass, message: impl Into<String>) -> Self {
        ModelError {
            class,
            message: message.into(),
            hint: generic_hint(class).to_string(),
            http_status: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = hint.into();
        self
    }

    /// An error status, with the endpoint's own message (`secrets` scrubbed, then sanitized
    /// and cut short) and the hint for that status.
    pub fn status(status: u16, body: &str, retries: u32, secrets: &Secrets) -> Self {
        let said = endpoint_message(body, secrets);
        let said = if said.is_empty() {
            String::new()
        } else {
            format!(": {said}")
        };
        let (class, hint) = match status {
            401 | 403 => (
                ModelFailureClass::HttpStatus,
                "the endpoint refused the key: check api_key (and the variable it comes from)".to_string(),
            ),
            404 => (
                ModelFailureClass::HttpStatus,
                "check model (a name this endpoint serves) and base_url (usually ending in /v1)".to_string(),
            ),
            429 => (
                ModelFailureClass::RateLimited,
                format!("the endpoint is rate-limiting (still after {retries} retries): wait a while, then try again"),
            ),
            500..=599 => (
                ModelFailureClass::ServerError,
                format!("the endpoint failed (still after {retries} retries): look at the model server's log"),
            ),
            _ => (
                ModelFailureClass::HttpStatus,
                "the endpoint rejected the request: read its message".to_string(),
            ),
        };
        ModelError {
            class,
            message: format!("HTTP {status}{said}"),
            hint,
            http_status: Some(status),
        }
    }

    /// The same error with every secret replaced: an endpoint may echo the key. What was cut
    /// short has been scrubbed before the cut (a secret cut in two would not be found here).
    pub fn scrubbed(mut self, secrets: &Secrets) -> Self {
        if let Cow::Owned(message) = secrets.scrub(&self.message) {
            self.message = message;
        }
        if let Cow::Owned(hint) = secrets.scrub(&self.hint) {
            self.hint = hint;
        }
        self
    }

    /// A silence of `timeout`.
    pub fn timeout(what: &str, timeout: Duration) -> Self {
        ModelError::new(
            ModelFailureClass::Timeout,
            format!(
                "{what} within request_timeout ({})",
                crate::text::fmt_duration(timeout)
            ),
        )
    }
}

fn generic_hint(class: ModelFailureClass) -> &'static str {
    match class {
        ModelFailureClass::EndpointFailed => {
            "run the profile's command by hand: its first line on stdout must be its base URL"
        }
        ModelFailureClass::ConnectRefused => {
            "start the model server, or check host and port in base_url"
        }
        ModelFailureClass::DnsError => "check the host name in base_url, and the network",
        ModelFailureClass::TlsError => "fix the certificate, or use http:// for a local server",
        ModelFailureClass::Timeout => {
            "raise the profile's request_timeout, or check that the model server is not stuck"
        }
        ModelFailureClass::HttpStatus => "read the endpoint's message",
        ModelFailureClass::RateLimited => "wait a while, then try again",
        ModelFailureClass::ServerError => "look at the model server's log",
        ModelFailureClass::BadStream => {
            "try again; if it keeps happening, set stream: false for this profile"
        }
        ModelFailureClass::BadResponse => {
            "check that base_url points at an OpenAI-compatible endpoint (usually ending in /v1)"
        }
    }
}

/// The endpoint's own words in an error body: `error.message` of the usual JSON shape, else
/// the text; `secrets` scrubbed, then sanitized and cut short.
pub fn endpoint_message(body: &str, secrets: &Secrets) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let text = parsed
        .as_ref()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("error"))
                .or_else(|| v.get("message"))
                .or_else(|| v.get("detail"))
        })
        .map(|m| match m {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_else(|| body.to_string());
    secrets.cut(text.trim(), 300)
}

/// Classifies a transport error by walking its cause chain (`net`: our resolver's failures,
/// rustls errors, socket errors); `connect` and `timeout` say whether it happened connecting or
/// timed out, and `authority` is the endpoint's host and port, for the message.
pub fn classify_transport(
    err: &(dyn StdError + Send + Sync + 'static),
    connect: bool,
    timeout: bool,
    authority: &str,
) -> ModelError {
    let links = crate::net::links(err);
    let cause = || links.last().map(|e| e.to_string()).unwrap_or_default();
    // The connection broke while the answer was on its way: whatever the socket says (a reset
    // is the usual word), the server was reached, so the hints about reaching it do not apply.
    let broke = |cause: String| {
        ModelError::new(
            ModelFailureClass::BadStream,
            format!("the connection to {authority} broke before the answer was complete: {cause}"),
        )
        .with_hint("the model server may have crashed, or a proxy cut the connection; try again")
    };
    if let Some(net) = crate::net::failure(&links, authority) {
        let class = match net.class {
            NetClass::Timeout => ModelFailureClass::Timeout,
            NetClass::Dns | NetClass::Tls | NetClass::Refused | NetClass::Dropped if !connect => {
                return broke(cause());
            }
            NetClass::Dns => ModelFailureClass::DnsError,
            NetClass::Tls => ModelFailureClass::TlsError,
            NetClass::Refused => ModelFailureClass::ConnectRefused,
            // Reset while connecting (in the TLS handshake): no connection to speak of.
            NetClass::Dropped => {
                return ModelError::new(
                    ModelFailureClass::ConnectRefused,
                    format!("cannot connect to {authority}: {}", cause()),
                );
            }
        };
        return ModelError::new(class, net.message);
    }
    if timeout {
        return ModelError::new(
            ModelFailureClass::Timeout,
            format!("no connection to {authority} in time"),
        );
    }
    if connect {
        return ModelError::new(
            ModelFailureClass::ConnectRefused,
            format!("cannot connect to {authority}: {}", cause()),
        );
    }
    broke(cause())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ModelProfile;

    #[test]
    fn statuses_get_their_class_and_hint() {
        let none = Secrets::default();
        let e = ModelError::status(401, r#"{"error":{"message":"bad key"}}"#, 0, &none);
        assert_eq!(e.class, ModelFailureClass::HttpStatus);
        assert_eq!(e.message, "HTTP 401: bad key");
        assert!(e.hint.contains("api_key"), "{}", e.hint);
        let e = ModelError::status(404, "no such model", 0, &none);
        assert!(e.hint.contains("model") && e.hint.contains("base_url"));
        assert_eq!(
            ModelError::status(429, "", 3, &none).class,
            ModelFailureClass::RateLimited
        );
        assert_eq!(
            ModelError::status(503, "", 3, &none).class,
            ModelFailureClass::ServerError
        );
        assert_eq!(ModelError::status(418, "", 0, &none).http_status, Some(418));
    }

    #[test]
    fn an_echoed_key_is_scrubbed_and_escapes_never_pass() {
        let key = Secrets::new(["sk-live-123".to_string()]);
        let e = ModelError::status(
            401,
            "Incorrect API key provided: sk-live-123\u{1b}[2J",
            0,
            &key,
        );
        assert_eq!(
            e.message,
            "HTTP 401: Incorrect API key provided: <redacted>"
        );
    }

    #[test]
    fn a_key_across_the_cut_is_scrubbed_before_the_cut() {
        let key = "sk-live-0123456789abcdef";
        let secrets = Secrets::new([key.to_string()]);
        // The key starts 10 characters before the 300th.
        let body = format!("{}{key} is not valid", "x".repeat(290));
        let e = ModelError::status(401, &body, 0, &secrets);
        assert!(!e.message.contains("sk-live"), "{}", e.message);
        assert!(e.message.contains("<redacted"), "{}", e.message);
        let quoted = secrets.quote(format!("{}{key}", "y".repeat(110)).as_bytes(), 120);
        assert!(!quoted.contains("sk-l"), "{quoted}");
    }

    #[test]
    fn header_and_env_values_under_secret_names_are_secrets() {
        let mut profile = ModelProfile::url("p", "http://127.0.0.1:1/v1", "m");
        profile.api_key = Some("k1".into());
        profile
            .headers
            .insert("api-key".into(), "azure-secret-value".into());
        profile
            .headers
            .insert("x-title".into(), "my console title".into());
        profile.headers.insert("x-auth-mode".into(), "on".into());
        let secrets = Secrets::of(&profile);
        assert_eq!(
            secrets.scrub("k1 azure-secret-value my console title on"),
            "<redacted> <redacted> my console title on"
        );
        // The token of `Bearer TOKEN`, echoed alone, is a secret too.
        profile
            .headers
            .insert("Authorization".into(), "Bearer tok-0123456789".into());
        let secrets = Secrets::of(&profile);
        assert_eq!(
            secrets.scrub("invalid token tok-0123456789"),
            "invalid token <redacted>"
        );
    }

    #[test]
    fn only_the_start_of_a_huge_text_is_scrubbed_and_cut() {
        let secrets = Secrets::new(["x".to_string()]);
        let body = format!("{}{}", "ax".repeat(4 * 1024 * 1024), "tail");
        let cut = secrets.cut(&body, 40);
        assert_eq!(cut.chars().count(), 40, "{cut}");
        assert!(cut.starts_with("a<redacted>a<redacted>"), "{cut}");
        assert!(!cut.contains('x'), "{cut}");
        let quoted = secrets.quote(body.as_bytes(), 40);
        assert!(quoted.starts_with("\"a<redacted>"), "{quoted}");
    }

    #[test]
    fn a_broken_connection_is_a_bad_stream_once_it_was_up() {
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        let up = classify_transport(&reset, false, false, "h:1");
        assert_eq!(up.class, ModelFailureClass::BadStream, "{up}");
        assert!(up.message.contains("broke before the answer"), "{up}");
        let connecting = classify_transport(&reset, true, false, "h:1");
        assert_eq!(connecting.class, ModelFailureClass::ConnectRefused);
    }
}
