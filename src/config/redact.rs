//! The one place that decides what is a secret and how it is shown: bearer tokens and values
//! under names like `authorization`, `*token*`, `*key*`, `*secret*` never appear in logs,
//! reports or the UI, only [`REDACTED`].
//!
//! In the config layer (the lowest) so that every layer above — Debug impls of config types,
//! start-up reports, logs, the TUI — shows secrets through the same function.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use super::{ModelEndpoint, ModelProfile};

/// What a secret value is shown as.
pub const REDACTED: &str = "<redacted>";

/// Whether a header or variable named `name` holds a secret (case-insensitive): `authorization`,
/// `proxy-authorization`, `cookie`, or any name containing `token`, `key`, `secret`,
/// `password` or `auth`.
pub fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        "token", "key", "secret", "password", "passwd", "auth", "cookie",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

/// `value` as it may be shown under `name`: [`REDACTED`] when the name is a secret's.
pub fn shown<'a>(name: &str, value: &'a str) -> &'a str {
    if is_secret_name(name) {
        REDACTED
    } else {
        value
    }
}

/// A string map (headers, env) for Debug output, secret values redacted.
pub struct RedactedMap<'a>(pub &'a BTreeMap<String, String>);

impl fmt::Debug for RedactedMap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| (k, shown(k, v))))
            .finish()
    }
}

/// An optional secret for Debug output: `Some(<redacted>)` or `None`.
pub struct RedactedSecret<'a>(pub Option<&'a str>);

impl fmt::Debug for RedactedSecret<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(_) => write!(f, "Some({REDACTED})"),
            None => f.write_str("None"),
        }
    }
}

/// The shortest value under a secret name that [`Secrets::of`] takes for a secret.
pub const MIN_NAMED_SECRET: usize = 8;

/// The values no message may hold: the API key, and the values of the headers (and, for a
/// `command:` endpoint, of the environment variables) whose names are secret by
/// [`redact::is_secret_name`](crate::config::redact::is_secret_name). Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Secrets(Arc<[String]>);

impl Secrets {
    /// The secrets of `profile`. A value under a secret name shorter than
    /// [`MIN_NAMED_SECRET`] is not one (`auth_mode: on`), and replacing it in every message
    /// would garble them; the API key is a secret whatever its length.
    pub fn of(profile: &ModelProfile) -> Secrets {
        let mut values: Vec<String> = profile.api_key.iter().cloned().collect();
        values.extend(named(&profile.headers));
        if let ModelEndpoint::Command { env, .. } = &profile.endpoint {
            values.extend(named(env));
        }
        Secrets::new(values)
    }

    /// Every secret of `config`: its profiles', its servers' (bearer tokens, header and env
    /// values under secret names) and its telemetry headers'.
    pub fn of_config(config: &super::Config) -> Secrets {
        let mut values = named(&config.telemetry.headers);
        for server in &config.mcp.servers {
            values.extend(server.bearer_token.iter().cloned());
            values.extend(named(&server.headers));
            values.extend(named(&server.env));
        }
        for profile in config.agent.iter().flat_map(|a| a.profiles.values()) {
            values.extend(Secrets::of(profile).0.iter().cloned());
        }
        Secrets::new(values)
    }

    /// These and `other`'s.
    pub fn with(&self, other: &Secrets) -> Secrets {
        Secrets::new(self.0.iter().chain(other.0.iter()).cloned())
    }

    /// These values (empty ones are dropped; the longest is replaced first, so a secret that
    /// holds another is replaced whole).
    pub fn new(values: impl IntoIterator<Item = String>) -> Secrets {
        let mut values: Vec<String> = values.into_iter().filter(|v| !v.is_empty()).collect();
        values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        values.dedup();
        Secrets(values.into())
    }

    /// `text` with every secret replaced by `<redacted>`.
    pub fn scrub<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for secret in self.0.iter() {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), crate::config::redact::REDACTED));
            }
        }
        out
    }

    /// `text` made safe to show (sanitized, on one line), scrubbed, then cut to `max_chars`.
    /// Only its start is scrubbed (as much as could reach the cut), so a huge text costs one
    /// pass, not a copy per secret; a secret that starts before the cut is replaced whole.
    pub fn cut(&self, text: &str, max_chars: usize) -> String {
        let longest = self.0.iter().map(|s| s.chars().count()).max().unwrap_or(0);
        let clean = crate::text::sanitize(text, false);
        let start: String = clean
            .chars()
            .take(max_chars.saturating_add(longest))
            .collect();
        crate::text::truncate(self.scrub(&start).trim(), max_chars)
    }

    /// The first `max_chars` of raw bytes for a message, quoted, scrubbed before they are cut.
    pub fn quote(&self, bytes: &[u8], max_chars: usize) -> String {
        let text = String::from_utf8_lossy(bytes);
        format!("\"{}\"", self.cut(text.trim_end(), max_chars))
    }
}

/// The values under secret names in `map`, each with its last word (the token of
/// `Bearer TOKEN`, which an endpoint may echo alone); shorter than [`MIN_NAMED_SECRET`], not
/// one (`auth_mode: on`).
fn named(map: &BTreeMap<String, String>) -> Vec<String> {
    map.iter()
        .filter(|(name, _)| is_secret_name(name))
        .flat_map(|(_, value)| {
            let last = value.split_whitespace().next_back().unwrap_or_default();
            [value.as_str(), last]
        })
        .filter(|value| value.chars().count() >= MIN_NAMED_SECRET)
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names() {
        for name in [
            "Authorization",
            "proxy-authorization",
            "X-Api-Key",
            "GITHUB_TOKEN",
            "client_secret",
            "DB_PASSWORD",
            "Cookie",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["X-Team", "Accept", "LOG_LEVEL", "HOME"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn debug_output_hides_secret_values() {
        let map = BTreeMap::from([
            ("Authorization".to_string(), "Bearer s3cr3t".to_string()),
            ("X-Team".to_string(), "ops".to_string()),
        ]);
        let shown = format!("{:?}", RedactedMap(&map));
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert!(shown.contains("ops") && shown.contains(REDACTED), "{shown}");
        assert_eq!(
            format!("{:?}", RedactedSecret(Some("s3cr3t"))),
            "Some(<redacted>)"
        );
        assert_eq!(format!("{:?}", RedactedSecret(None)), "None");
    }
}
