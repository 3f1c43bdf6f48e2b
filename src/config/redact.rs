//! The one place that decides what is a secret and how it is shown: bearer tokens and values
//! under names like `authorization`, `*token*`, `*key*`, `*secret*` never appear in logs,
//! reports or the UI, only [`REDACTED`].
//!
//! In the config layer (the lowest) so that every layer above — Debug impls of config types,
//! start-up reports, logs, the TUI — shows secrets through the same function.

use std::collections::BTreeMap;
use std::fmt;

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
