//! `McpToolAnnotations`: the four MCP tool hints exactly as the server sent them.
//!
//! Kept apart from `traits.rs` on purpose: this file records what was *said*; deciding what to
//! *believe* happens only in `McpToolTraits::resolve`.

use serde_json::{Map, Value};

/// MCP default for a missing `readOnlyHint`.
pub const DEFAULT_READ_ONLY_HINT: bool = false;
/// MCP default for a missing `destructiveHint`.
pub const DEFAULT_DESTRUCTIVE_HINT: bool = true;
/// MCP default for a missing `idempotentHint`.
pub const DEFAULT_IDEMPOTENT_HINT: bool = false;
/// MCP default for a missing `openWorldHint`.
pub const DEFAULT_OPEN_WORLD_HINT: bool = true;

/// A tool's annotations as received: `None` means the server did not send that hint.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct McpToolAnnotations {
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
    /// The human-readable title, if any (display only).
    pub title: Option<String>,
}

impl McpToolAnnotations {
    /// Copies rmcp's annotations without interpreting them.
    pub fn from_rmcp(annotations: &rmcp::model::ToolAnnotations) -> Self {
        McpToolAnnotations {
            read_only_hint: annotations.read_only_hint,
            destructive_hint: annotations.destructive_hint,
            idempotent_hint: annotations.idempotent_hint,
            open_world_hint: annotations.open_world_hint,
            title: annotations.title.clone(),
        }
    }

    /// The annotations as MCP JSON (camelCase keys), only the fields that were present.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        if let Some(title) = &self.title {
            map.insert("title".into(), Value::String(title.clone()));
        }
        let hints = [
            ("readOnlyHint", self.read_only_hint),
            ("destructiveHint", self.destructive_hint),
            ("idempotentHint", self.idempotent_hint),
            ("openWorldHint", self.open_world_hint),
        ];
        for (key, hint) in hints {
            if let Some(value) = hint {
                map.insert(key.into(), Value::Bool(value));
            }
        }
        Value::Object(map)
    }

    /// Reads back what `to_json` wrote (a hint that is not a boolean counts as absent).
    pub fn from_json(value: &Value) -> Self {
        let hint = |key: &str| value.get(key).and_then(Value::as_bool);
        McpToolAnnotations {
            read_only_hint: hint("readOnlyHint"),
            destructive_hint: hint("destructiveHint"),
            idempotent_hint: hint("idempotentHint"),
            open_world_hint: hint("openWorldHint"),
            title: value
                .get("title")
                .and_then(Value::as_str)
                .map(str::to_string),
        }
    }

    /// True when the server sent none of the four hints.
    pub fn has_no_hints(&self) -> bool {
        self.read_only_hint.is_none()
            && self.destructive_hint.is_none()
            && self.idempotent_hint.is_none()
            && self.open_world_hint.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn from_rmcp_copies_every_field_as_sent() {
        let raw = rmcp::model::ToolAnnotations::from_raw(
            Some("Write a note".into()),
            Some(false),
            None,
            Some(true),
            None,
        );
        let ours = McpToolAnnotations::from_rmcp(&raw);
        assert_eq!(
            ours,
            McpToolAnnotations {
                read_only_hint: Some(false),
                destructive_hint: None,
                idempotent_hint: Some(true),
                open_world_hint: None,
                title: Some("Write a note".into()),
            }
        );
    }

    #[test]
    fn to_json_has_only_present_hints_in_camel_case() {
        let ann = McpToolAnnotations {
            read_only_hint: Some(true),
            destructive_hint: Some(false),
            ..Default::default()
        };
        assert_eq!(
            ann.to_json(),
            json!({"readOnlyHint": true, "destructiveHint": false})
        );
        assert_eq!(McpToolAnnotations::default().to_json(), json!({}));
    }

    #[test]
    fn to_json_matches_rmcp_serialisation() {
        let raw = rmcp::model::ToolAnnotations::from_raw(
            Some("t".into()),
            Some(true),
            Some(true),
            Some(false),
            Some(false),
        );
        let ours = McpToolAnnotations::from_rmcp(&raw).to_json();
        let theirs = serde_json::to_value(&raw).unwrap_or(Value::Null);
        assert_eq!(ours, theirs);
    }

    #[test]
    fn from_json_reads_back_to_json() {
        let a = McpToolAnnotations {
            read_only_hint: Some(true),
            destructive_hint: None,
            idempotent_hint: Some(false),
            open_world_hint: Some(true),
            title: Some("T".into()),
        };
        assert_eq!(McpToolAnnotations::from_json(&a.to_json()), a);
    }

    #[test]
    fn defaults_are_the_mcp_defaults() {
        let defaults = [
            DEFAULT_READ_ONLY_HINT,
            DEFAULT_DESTRUCTIVE_HINT,
            DEFAULT_IDEMPOTENT_HINT,
            DEFAULT_OPEN_WORLD_HINT,
        ];
        assert_eq!(defaults, [false, true, false, true]);
    }
}
