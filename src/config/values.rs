//! Small checks of written values that the section loaders share: the server-name rule, blank
//! text, a path relative to the config's folder, a duration as written. A leaf of `config/`:
//! the loaders (`load.rs`, `agent_load.rs`, `hooks.rs`, `oauth.rs`, `context.rs`) and the raw
//! shapes (`raw.rs`) use it, and it uses none of them.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// The rule a server name must follow, as shown in errors.
pub const SERVER_NAME_RULE: &str = "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$";

/// Whether a server name follows [`SERVER_NAME_RULE`].
pub fn is_valid_server_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let inner_ok = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-';
    let end_ok = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => end_ok(first) && end_ok(last) && bytes.iter().all(inner_ok),
        _ => false,
    }
}

/// A missing or whitespace-only value.
pub(super) fn is_blank(value: Option<&str>) -> bool {
    value.is_none_or(|v| v.trim().is_empty())
}

/// `path` made absolute against `base`, without `.` components (`..` is kept: it may cross a
/// symlink).
pub(super) fn relative_to(base: &Path, path: &Path) -> PathBuf {
    base.join(path)
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// A duration as written (`10s`, or a bare number of seconds), parsed after deserialization so
/// the error can say which key it is.
#[derive(Debug)]
pub(super) struct DurationText(pub(super) String);

impl<'de> Deserialize<'de> for DurationText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = DurationText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration such as 500ms, 10s, 2m or 1h")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<DurationText, E> {
                Ok(DurationText(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<DurationText, E> {
                Ok(DurationText(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<DurationText, E> {
                Ok(DurationText(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<DurationText, E> {
                Ok(DurationText(v.to_string()))
            }
        }
        deserializer.deserialize_any(V)
    }
}
