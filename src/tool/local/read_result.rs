//! `read_result`: pages through a tool result the agent's model was sent only the head and
//! tail of (over its profile's `max_result_tokens`). The agent keeps each such result whole in a
//! file of its own ([`keep`]), owner-only, under the state dir; this tool reads it back a slice
//! at a time. Read-only, it goes through the same gate as every tool.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::tool::{
    DestructiveBehavior, SideEffectLevel, Tool, ToolContext, ToolDescriptor, ToolInput, ToolResult,
};

use super::check_input;

/// The tool's name.
pub const NAME: &str = "read_result";

/// The most bytes one call returns.
pub const MAX_PAGE: u64 = 64 * 1024;

/// What a call returns when it does not say.
const DEFAULT_PAGE: u64 = 16 * 1024;

/// Where kept results are: `$XDG_STATE_HOME/aimon-console/sessions/results`.
pub fn results_dir() -> PathBuf {
    crate::config::state_home().join("sessions").join("results")
}

/// Whether `id` names a kept result (letters, digits, `-`, `_` and `.`, not starting with `.`).
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('.')
        && id.len() <= 200
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// An id for a result from any text (a model's call id): what is not allowed becomes `_`.
pub fn id_of(text: &str) -> String {
    let id: String = text
        .chars()
        .take(100)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if id.is_empty() {
        "_".to_string()
    } else {
        id
    }
}

/// Keeps `text` whole as result `id` in `dir` (the folder made owner-only, the file too).
pub fn keep(dir: &Path, id: &str, text: &str) -> std::io::Result<()> {
    if !valid_id(id) {
        return Err(std::io::Error::other(format!("{id:?} is not a result id")));
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(dir.join(format!("{id}.txt")))?;
    file.write_all(text.as_bytes())
}

/// The `read_result` tool over the results kept in `dir`.
pub struct ReadResultTool {
    descriptor: ToolDescriptor,
    dir: PathBuf,
}

impl ReadResultTool {
    pub fn new(dir: PathBuf) -> Self {
        ReadResultTool {
            descriptor: ToolDescriptor {
                name: NAME.into(),
                description: format!(
                    "Read more of a tool result you were sent cut short: its `id` is in the \
                     note where it was cut. Returns up to `limit` bytes (at most {} KiB) from \
                     byte `offset`, and where to go on.",
                    MAX_PAGE / 1024
                ),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "minLength": 1,
                               "description": "The result's id, from the note."},
                        "offset": {"type": "integer", "minimum": 0,
                                   "description": "The first byte to return (default 0)."},
                        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE,
                                  "description": "How many bytes to return at most."}
                    },
                    "required": ["id"],
                    "additionalProperties": false
                })
                .into(),
                side_effect: SideEffectLevel::ReadOnly,
                destructive: DestructiveBehavior::NonDestructive,
                provenance: "local tool: reads the agent's kept tool results only".into(),
                flags: Vec::new(),
                pin: None,
                origin: None,
            },
            dir,
        }
    }
}

#[async_trait::async_trait]
impl Tool for ReadResultTool {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }

    async fn execute(&self, input: ToolInput, _ctx: ToolContext) -> ToolResult {
        if let Err(message) = check_input(NAME, &self.descriptor.input_schema, &input) {
            return ToolResult::error(message);
        }
        let id = input.get_str("id").unwrap_or_default();
        if !valid_id(id) {
            return ToolResult::error(format!("{NAME}: {id:?} is not a result id"));
        }
        let number = |key: &str| input.0.get(key).and_then(|v| v.as_u64());
        let offset = number("offset").unwrap_or(0);
        let limit = number("limit").unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE);
        let path = self.dir.join(format!("{id}.txt"));
        match tokio::fs::read(&path).await {
            Ok(bytes) => page(id, &bytes, offset, limit),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                ToolResult::error(format!("{NAME}: no kept result {id}"))
            }
            Err(e) => ToolResult::error(format!("{NAME}: {id}: {e}")),
        }
    }
}

/// Bytes `offset..offset + limit` of a kept result (moved back to character boundaries), and
/// where to go on.
fn page(id: &str, bytes: &[u8], offset: u64, limit: u64) -> ToolResult {
    let text = String::from_utf8_lossy(bytes);
    let len = text.len();
    let clamp = |n: u64| usize::try_from(n).unwrap_or(usize::MAX).min(len);
    let mut start = clamp(offset);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = clamp(offset.saturating_add(limit));
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if start >= len {
        return ToolResult::error(format!(
            "{NAME}: offset {offset} is past the end of {id} ({len} bytes)"
        ));
    }
    let next = if end < len {
        format!("[bytes {start}–{end} of {len}; {NAME} {{\"id\": \"{id}\", \"offset\": {end}, \"limit\": {limit}}} reads on]")
    } else {
        format!("[bytes {start}–{end} of {len}: the end]")
    };
    ToolResult::ok(format!("{}\n{next}", &text[start..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_kept_result_is_read_a_page_at_a_time_and_only_by_its_id() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!("{}é{}", "a".repeat(10), "b".repeat(10));
        keep(dir.path(), "s1-call_1", &text).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("s1-call_1.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let tool = ReadResultTool::new(dir.path().to_path_buf());
        let read = |args: serde_json::Value| {
            let input = ToolInput::from_value(args).unwrap();
            tool.execute(input, ToolContext::default())
        };
        let first = read(json!({"id": "s1-call_1", "limit": 11})).await;
        assert!(!first.is_error, "{}", first.text);
        // The cut falls inside `é`: it moves back before it.
        assert!(first.text.starts_with(&"a".repeat(10)), "{}", first.text);
        assert!(
            first.text.contains("\"offset\": 10, \"limit\": 11}"),
            "{}",
            first.text
        );
        let rest = read(json!({"id": "s1-call_1", "offset": 10})).await;
        assert!(
            rest.text.starts_with('é') && rest.text.ends_with("the end]"),
            "{}",
            rest.text
        );
        for bad in ["../x", ".hidden", "a/b"] {
            let out = read(json!({"id": bad})).await;
            assert!(
                out.is_error && out.text.contains("not a result id"),
                "{bad}: {}",
                out.text
            );
        }
        let gone = read(json!({"id": "nope"})).await;
        assert!(
            gone.is_error && gone.text.contains("no kept result"),
            "{}",
            gone.text
        );
        assert_eq!(id_of("call/1 ü"), "call_1__");
    }
}
