//! The tool layer: the one `Tool` trait that local and MCP tools both implement
//! (docs/ARCHITECTURE.md §1).
//!
//! Nothing above this layer asks whether a tool is remote; everything it needs to decide or
//! display is in the `ToolDescriptor`.

pub mod json_text;
pub mod local;
pub mod pin;
pub mod poison;
pub mod registry;
pub mod schema;

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::AnnotationTrust;

pub use json_text::JsonText;
pub use registry::ToolRegistry;

/// Whether a tool may change anything outside itself.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum SideEffectLevel {
    ReadOnly,
    Mutating,
}

impl SideEffectLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            SideEffectLevel::ReadOnly => "read_only",
            SideEffectLevel::Mutating => "mutating",
        }
    }
}

/// Whether a mutating tool may destroy (rather than only add to) what it touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DestructiveBehavior {
    NonDestructive,
    Destructive,
}

impl DestructiveBehavior {
    pub fn is_destructive(self) -> bool {
        match self {
            DestructiveBehavior::Destructive => true,
            DestructiveBehavior::NonDestructive => false,
        }
    }
}

/// Where a tool came from, for display only. Decisions never read it (docs/ARCHITECTURE.md §1).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolOrigin {
    /// The server that serves the tool.
    pub server: String,
    /// The tool's name as the server sent it.
    pub tool: String,
    /// The trust the traits were resolved under.
    pub trust: AnnotationTrust,
    /// The annotations as the server sent them (`null` when it sent none).
    pub annotations: Option<JsonText>,
    /// The tool's `title`, when the server gave one.
    pub title: Option<String>,
    /// The tool's `outputSchema`, when the server gave one.
    pub output_schema: Option<JsonText>,
}

/// Everything known about a tool, fixed when it is registered.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDescriptor {
    /// The callable name (`read`, `mcp__<server>__<tool>`).
    pub name: String,
    pub description: String,
    /// The input schema exactly as received (never tightened), as compact text: held for
    /// every tool, parsed only where it is used.
    pub input_schema: JsonText,
    pub side_effect: SideEffectLevel,
    pub destructive: DestructiveBehavior,
    /// Why the traits are what they are, in words ("readOnlyHint=true, trusted").
    pub provenance: String,
    /// What its texts hide or say to the model behind the operator's back (`poison.rs`); a
    /// flagged tool asks before it runs (`policy.flagged`). Empty for local tools.
    pub flags: Vec<poison::Flag>,
    /// The pin of its definition (`pin.rs`): what approvals and `always` rules hold on to.
    /// `None` for local tools.
    pub pin: Option<String>,
    /// `None` for local tools.
    pub origin: Option<ToolOrigin>,
}

/// The arguments of one call: a JSON object.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolInput(pub serde_json::Map<String, Value>);

impl ToolInput {
    /// Builds an input from any JSON value; only objects (or `null`, as `{}`) are accepted.
    pub fn from_value(value: Value) -> Result<Self, String> {
        match value {
            Value::Object(map) => Ok(ToolInput(map)),
            Value::Null => Ok(ToolInput::default()),
            other => Err(format!(
                "tool arguments must be a JSON object, got {}",
                json_kind(&other)
            )),
        }
    }

    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }
}

/// Names the JSON type of a value, for error messages.
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What a call produced. A failure is a result with `is_error`, never a Rust error.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ToolResult {
    pub is_error: bool,
    /// The text the tool returned (text blocks joined by newlines; other blocks summarised),
    /// as the operator sees it.
    pub text: String,
    /// Structured content, when the tool sent any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
    /// The result's parts as the tool sent them, in order (MCP content blocks). Empty when
    /// `text` is all there is: local tools, and failures that never reached a tool. Not part
    /// of the JSON shapes: `text` says the same for people.
    #[serde(skip)]
    pub parts: Vec<ContentPart>,
    /// The content blocks exactly as the server sent them (MCP JSON), kept only when they were
    /// more than text, for the gateway to hand on to its hosts unchanged.
    #[serde(skip)]
    pub content: Option<Value>,
}

impl ToolResult {
    pub fn ok(text: impl Into<String>) -> Self {
        ToolResult {
            is_error: false,
            text: text.into(),
            structured: None,
            parts: Vec::new(),
            content: None,
        }
    }

    pub fn error(text: impl Into<String>) -> Self {
        ToolResult {
            is_error: true,
            text: text.into(),
            structured: None,
            parts: Vec::new(),
            content: None,
        }
    }
}

/// One part of a tool's result, typed, with its size rather than its bytes where those are not
/// text: the agent tells a model *what* came back without pasting it (images, audio, embedded
/// resources), the console shows the text.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentPart {
    Text(String),
    /// An image: its MIME type and size in bytes (decoded from base64).
    Image {
        mime_type: String,
        bytes: usize,
    },
    /// Audio: its MIME type and size in bytes (decoded from base64).
    Audio {
        mime_type: String,
        bytes: usize,
    },
    /// A resource embedded in the result: its URI, MIME type when given, and the size of its
    /// text (`text: true`) or of its blob (decoded from base64).
    Resource {
        uri: String,
        mime_type: Option<String>,
        bytes: usize,
        text: bool,
    },
    /// A link to a resource (not its contents).
    Link {
        uri: String,
        mime_type: Option<String>,
    },
    /// A kind of content this version does not know.
    Unknown,
}

impl ContentPart {
    /// The part as a model is told it: text as is, anything else a short placeholder naming
    /// its kind, type and size (`[image: image/png, 1024 bytes]`).
    pub fn for_model(&self) -> String {
        match self {
            ContentPart::Text(text) => text.clone(),
            ContentPart::Image { mime_type, bytes } => {
                format!("[image: {mime_type}, {bytes} bytes]")
            }
            ContentPart::Audio { mime_type, bytes } => {
                format!("[audio: {mime_type}, {bytes} bytes]")
            }
            ContentPart::Resource {
                uri,
                mime_type,
                bytes,
                text,
            } => {
                let what = if *text { "text" } else { "binary" };
                match mime_type {
                    Some(mime) => {
                        format!("[embedded resource: {uri}, {mime}, {bytes} bytes of {what}]")
                    }
                    None => format!("[embedded resource: {uri}, {bytes} bytes of {what}]"),
                }
            }
            ContentPart::Link { uri, mime_type } => match mime_type {
                Some(mime) => format!("[resource link: {uri}, {mime}]"),
                None => format!("[resource link: {uri}]"),
            },
            ContentPart::Unknown => "[content of an unknown kind]".to_string(),
        }
    }
}

/// The size of the data base64 `encoded` stands for (without decoding it).
pub fn base64_size(encoded: &str) -> usize {
    let digits = encoded
        .bytes()
        .filter(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_'))
        .count();
    digits * 3 / 4
}

impl fmt::Display for ToolResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// How far a running call has got, as its tool reports it (MCP `notifications/progress`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProgressUpdate {
    /// Progress so far; grows with every update, even when the total is unknown.
    pub progress: f64,
    /// The total the progress counts towards, when known.
    pub total: Option<f64>,
    /// What the tool is doing now, in its own words (unsanitized).
    pub message: Option<String>,
}

/// Where a tool reports progress. Called wherever the update arrives (for MCP tools, on the
/// transport's reader task): implementations must not block.
#[derive(Clone)]
pub struct ProgressSink(Arc<dyn Fn(ProgressUpdate) + Send + Sync>);

impl ProgressSink {
    pub fn new(report: impl Fn(ProgressUpdate) + Send + Sync + 'static) -> Self {
        ProgressSink(Arc::new(report))
    }

    /// A sink that drops every update.
    pub fn none() -> Self {
        ProgressSink::new(|_| {})
    }

    pub fn report(&self, update: ProgressUpdate) {
        (self.0)(update);
    }
}

impl Default for ProgressSink {
    fn default() -> Self {
        ProgressSink::none()
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// Per-call context handed to `Tool::execute`.
#[derive(Debug, Clone, Default)]
pub struct ToolContext {
    /// Cancelled when the caller gives up on the call.
    pub cancel: CancellationToken,
    /// Where the tool reports how far it has got.
    pub progress: ProgressSink,
}

/// A tool: local or remote, the rest of the program cannot tell (docs/ARCHITECTURE.md §1).
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    /// Everything needed to decide about and display this tool.
    fn descriptor(&self) -> &ToolDescriptor;

    /// Runs the tool. Never panics, never fails: failures are `ToolResult::error`.
    async fn execute(&self, input: ToolInput, ctx: ToolContext) -> ToolResult;

    /// Why the tool cannot run now (what it needs is gone: a remote tool's server is down), or
    /// `None`. A call to it ends at once, nobody is asked to approve it, and the agent is not
    /// offered it.
    fn unavailable(&self) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_sizes_are_the_decoded_sizes() {
        assert_eq!(base64_size(""), 0);
        assert_eq!(base64_size("aGk="), 2);
        assert_eq!(base64_size("aGVsbG8="), 5);
        assert_eq!(base64_size("aGVsbG8gd29ybGQ="), 11);
        assert_eq!(base64_size("aGVs\nbG8="), 5);
    }

    #[test]
    fn a_model_is_told_what_came_back_not_the_bytes() {
        let blob = ContentPart::Resource {
            uri: "test://b/2".into(),
            mime_type: None,
            bytes: 300,
            text: false,
        };
        assert_eq!(
            blob.for_model(),
            "[embedded resource: test://b/2, 300 bytes of binary]"
        );
        let audio = ContentPart::Audio {
            mime_type: "audio/wav".into(),
            bytes: 9,
        };
        assert_eq!(audio.for_model(), "[audio: audio/wav, 9 bytes]");
        let link = ContentPart::Link {
            uri: "file:///x".into(),
            mime_type: Some("text/plain".into()),
        };
        assert_eq!(link.for_model(), "[resource link: file:///x, text/plain]");
        assert_eq!(ContentPart::Text("hi".into()).for_model(), "hi");
    }
}
