//! The tool layer: the one `Tool` trait that local and MCP tools both implement (DESIGN §1).
//!
//! Nothing above this layer asks whether a tool is remote; everything it needs to decide or
//! display is in the `ToolDescriptor`.

pub mod local;
pub mod registry;
pub mod schema;

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::AnnotationTrust;

pub use registry::ToolRegistry;

/// Whether a tool may change anything outside itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
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

/// Where a tool came from, for display only. Decisions never read it (DESIGN §1).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolOrigin {
    /// The server that serves the tool.
    pub server: String,
    /// The tool's name as the server sent it.
    pub tool: String,
    /// The trust the traits were resolved under.
    pub trust: AnnotationTrust,
    /// The annotations as the server sent them (`null` when it sent none).
    pub annotations: Option<Value>,
}

/// Everything known about a tool, fixed when it is registered.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDescriptor {
    /// The callable name (`read`, `mcp__<server>__<tool>`).
    pub name: String,
    pub description: String,
    /// The input schema exactly as received (never tightened).
    pub input_schema: Value,
    pub side_effect: SideEffectLevel,
    pub destructive: DestructiveBehavior,
    /// Why the traits are what they are, in words ("readOnlyHint=true, trusted").
    pub provenance: String,
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolResult {
    pub is_error: bool,
    /// The text the tool returned (text blocks joined by newlines; other blocks summarised).
    pub text: String,
    /// Structured content, when the tool sent any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
}

impl ToolResult {
    pub fn ok(text: impl Into<String>) -> Self {
        ToolResult {
            is_error: false,
            text: text.into(),
            structured: None,
        }
    }

    pub fn error(text: impl Into<String>) -> Self {
        ToolResult {
            is_error: true,
            text: text.into(),
            structured: None,
        }
    }
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

/// A tool: local or remote, the rest of the program cannot tell (DESIGN §1).
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    /// Everything needed to decide about and display this tool.
    fn descriptor(&self) -> &ToolDescriptor;

    /// Runs the tool. Never panics, never fails: failures are `ToolResult::error`.
    async fn execute(&self, input: ToolInput, ctx: ToolContext) -> ToolResult;
}
