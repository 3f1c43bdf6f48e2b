//! `read`: returns a text file's lines, bounded, and refuses directories and binary files.

use std::path::Path;

use serde_json::json;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};

use crate::tool::{
    DestructiveBehavior, SideEffectLevel, Tool, ToolContext, ToolDescriptor, ToolInput, ToolResult,
};

use super::check_input;

/// At most this many lines per call.
pub const MAX_LINES: u64 = 2_000;
/// At most this many bytes of text per call.
pub const MAX_BYTES: usize = 256 * 1024;

/// The `read` tool: read-only, non-destructive.
pub struct ReadTool {
    descriptor: ToolDescriptor,
}

impl Default for ReadTool {
    fn default() -> Self {
        Self::new()
    }
}

impl ReadTool {
    pub fn new() -> Self {
        ReadTool {
            descriptor: ToolDescriptor {
                name: "read".into(),
                description: format!(
                    "Read a UTF-8 text file. Returns up to {MAX_LINES} lines ({} KiB) starting \
                     at line `offset` (1-based, default 1); use `offset` to read further.",
                    MAX_BYTES / 1024
                ),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "minLength": 1,
                                 "description": "The file to read."},
                        "offset": {"type": "integer", "minimum": 1,
                                   "description": "First line to return (1-based)."},
                        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LINES,
                                  "description": "How many lines to return at most."}
                    },
                    "required": ["path"],
                    "additionalProperties": false
                })
                .into(),
                side_effect: SideEffectLevel::ReadOnly,
                destructive: DestructiveBehavior::NonDestructive,
                provenance: "local tool: reads files only".into(),
                flags: Vec::new(),
                pin: None,
                origin: None,
            },
        }
    }
}

#[async_trait::async_trait]
impl Tool for ReadTool {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }

    async fn execute(&self, input: ToolInput, ctx: ToolContext) -> ToolResult {
        if let Err(message) = check_input("read", &self.descriptor.input_schema, &input) {
            return ToolResult::error(message);
        }
        let Some(path) = input.get_str("path") else {
            return ToolResult::error("invalid arguments for read: path is required");
        };
        let offset = input
            .0
            .get("offset")
            .and_then(|v| v.as_u64())
            .unwrap_or(1)
            .max(1);
        let limit = input
            .0
            .get("limit")
            .and_then(|v| v.as_u64())
            .unwrap_or(MAX_LINES)
            .clamp(1, MAX_LINES);
        tokio::select! {
            result = read_lines(Path::new(path), offset, limit) => result,
            _ = ctx.cancel.cancelled() => ToolResult::error("read: cancelled"),
        }
    }
}

async fn read_lines(path: &Path, offset: u64, limit: u64) -> ToolResult {
    let shown = path.display();
    let metadata = match tokio::fs::metadata(path).await {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return ToolResult::error(format!("read: {shown}: no such file"));
        }
        Err(e) => return ToolResult::error(format!("read: {shown}: {e}")),
    };
    if metadata.is_dir() {
        return ToolResult::error(format!("read: {shown} is a directory, not a file"));
    }
    let file = match tokio::fs::File::open(path).await {
        Ok(f) => f,
        Err(e) => return ToolResult::error(format!("read: {shown}: {e}")),
    };
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut line_no: u64 = 0;

    // Skip to `offset`, keeping nothing but checking for binary content on the way.
    while line_no + 1 < offset {
        match read_line_capped(&mut reader, &mut line, MAX_BYTES).await {
            Ok(0) => {
                return ToolResult::error(format!(
                    "read: {shown} has only {line_no} lines; offset {offset} is past the end"
                ));
            }
            Ok(_) => {
                if line.contains(&0) {
                    return binary(path);
                }
                line_no += 1;
            }
            Err(e) => return ToolResult::error(format!("read: {shown}: {e}")),
        }
    }

    let mut text = String::new();
    let mut taken: u64 = 0;
    let mut note = None;
    loop {
        let read = match read_line_capped(&mut reader, &mut line, MAX_BYTES).await {
            Ok(n) => n,
            Err(e) => return ToolResult::error(format!("read: {shown}: {e}")),
        };
        if read == 0 {
            break;
        }
        let first = offset;
        if taken == limit {
            let last = first + taken - 1;
            note = Some(format!(
                "[truncated: showed lines {first}-{last}; more follow, continue with offset={}]",
                last + 1
            ));
            break;
        }
        if line.contains(&0) {
            return binary(path);
        }
        let chunk = match String::from_utf8(std::mem::take(&mut line)) {
            Ok(s) => s,
            Err(_) => {
                return ToolResult::error(format!(
                    "read: {shown} is not UTF-8 text (line {})",
                    line_no + 1
                ))
            }
        };
        if text.len() + chunk.len() > MAX_BYTES {
            if taken == 0 {
                // A single line bigger than the whole budget: show its start.
                let mut part = chunk;
                super::truncate_utf8(&mut part, MAX_BYTES);
                text.push_str(&part);
                note = Some(format!(
                    "[line {first} truncated at {} KiB]",
                    MAX_BYTES / 1024
                ));
            } else {
                let last = first + taken - 1;
                note = Some(format!(
                    "[truncated: showed lines {first}-{last}; more follow, continue with offset={}]",
                    last + 1
                ));
            }
            break;
        }
        text.push_str(&chunk);
        line_no += 1;
        taken += 1;
    }
    if let Some(note) = note {
        if !text.ends_with('\n') && !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&note);
    }
    ToolResult::ok(text)
}

fn binary(path: &Path) -> ToolResult {
    ToolResult::error(format!(
        "read: {} looks like a binary file (it contains NUL bytes)",
        path.display()
    ))
}

/// Reads one line (with its `\n`) into `buf`, keeping at most `cap + 1` bytes of it and discarding
/// the rest of an over-long line. Returns the bytes consumed (0 at end of file).
async fn read_line_capped<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<usize> {
    buf.clear();
    let mut consumed = 0;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(consumed);
        }
        let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..=i], true),
            None => (available, false),
        };
        let room = (cap + 1).saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = chunk.len();
        reader.consume(used);
        consumed += used;
        if done {
            return Ok(consumed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    async fn run(args: serde_json::Value) -> ToolResult {
        let input = ToolInput::from_value(args).unwrap_or_default();
        ReadTool::new().execute(input, ToolContext::default()).await
    }

    fn file_with(content: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().expect("temp file");
        f.write_all(content).expect("write temp file");
        f
    }

    #[tokio::test]
    async fn reads_a_whole_small_file() {
        let f = file_with(b"one\ntwo\nthree\n");
        let r = run(json!({"path": f.path()})).await;
        assert!(!r.is_error, "{}", r.text);
        assert_eq!(r.text, "one\ntwo\nthree\n");
    }

    #[tokio::test]
    async fn offset_and_limit_select_lines() {
        let f = file_with(b"1\n2\n3\n4\n5\n");
        let r = run(json!({"path": f.path(), "offset": 2, "limit": 2})).await;
        assert!(!r.is_error, "{}", r.text);
        assert_eq!(
            r.text,
            "2\n3\n[truncated: showed lines 2-3; more follow, continue with offset=4]"
        );
        let end = run(json!({"path": f.path(), "offset": 5, "limit": 2})).await;
        assert_eq!(end.text, "5\n");
        let past = run(json!({"path": f.path(), "offset": 9})).await;
        assert!(past.is_error);
        assert!(past.text.contains("past the end"), "{}", past.text);
    }

    #[tokio::test]
    async fn long_files_are_bounded_with_a_note() {
        let content: String = (1..=2_500).map(|i| format!("line {i}\n")).collect();
        let f = file_with(content.as_bytes());
        let r = run(json!({"path": f.path()})).await;
        assert!(!r.is_error);
        assert_eq!(r.text.lines().count() as u64, MAX_LINES + 1);
        assert!(
            r.text.ends_with("continue with offset=2001]"),
            "{}",
            &r.text[r.text.len() - 80..]
        );
    }

    #[tokio::test]
    async fn huge_single_line_is_cut() {
        let f = file_with(&vec![b'x'; MAX_BYTES * 2]);
        let r = run(json!({"path": f.path()})).await;
        assert!(!r.is_error);
        assert!(r.text.len() < MAX_BYTES + 100);
        assert!(r.text.ends_with("truncated at 256 KiB]"));
    }

    #[tokio::test]
    async fn errors_are_results_not_panics() {
        let missing = run(json!({"path": "/definitely/not/here.txt"})).await;
        assert!(missing.is_error);
        assert!(missing.text.contains("no such file"));

        let dir = tempfile::tempdir().expect("temp dir");
        let d = run(json!({"path": dir.path()})).await;
        assert!(d.is_error);
        assert!(d.text.contains("is a directory"));

        let bin = file_with(b"ELF\0\x01\x02\n");
        let b = run(json!({"path": bin.path()})).await;
        assert!(b.is_error);
        assert!(b.text.contains("binary"));

        let latin1 = file_with(b"caf\xe9\n");
        let l = run(json!({"path": latin1.path()})).await;
        assert!(l.is_error);
        assert!(l.text.contains("not UTF-8"));
    }

    #[tokio::test]
    async fn input_is_validated_against_the_schema() {
        let r = run(json!({"path": "x", "extra": 1})).await;
        assert!(r.is_error);
        assert_eq!(
            r.text,
            "invalid arguments for read: /extra: unexpected property"
        );
        let r = run(json!({})).await;
        assert!(r.text.contains("missing required property \"path\""));
        let r = run(json!({"path": "x", "limit": 0})).await;
        assert!(r.text.contains("/limit: must be at least 1"));
    }

    #[test]
    fn traits_are_read_only() {
        let d = ReadTool::new();
        let d = d.descriptor();
        assert_eq!(d.side_effect, SideEffectLevel::ReadOnly);
        assert_eq!(d.destructive, DestructiveBehavior::NonDestructive);
        assert_eq!(d.provenance, "local tool: reads files only");
    }
}
