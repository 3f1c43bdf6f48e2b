//! `AgentEvent`: what the loop reports while it works (turns, streamed text, tool calls and
//! what went back to the model, retries, the answer), for whoever drives it: `run` prints them,
//! the console will draw them. The calls themselves also show as runtime events.

use std::time::Duration;

use serde::Serialize;

use super::failure::ModelError;
use super::turn::{FinishReason, Usage};

/// How one tool call the model asked for ended, as the model is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    Ok,
    /// The tool failed, or its arguments failed its input schema.
    Error,
    /// The operator said no (or nobody could be asked).
    Denied,
    /// Above the side-effect ceiling.
    Refused,
    Cancelled,
    /// The model named a tool that is not in this turn's tool list.
    UnknownTool,
    /// The arguments were not a JSON object.
    BadArguments,
    /// Not run: asked on the last turn `max_turns` allows, where the model was to answer in
    /// words.
    NotRun,
}

impl ToolCallStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolCallStatus::Ok => "ok",
            ToolCallStatus::Error => "error",
            ToolCallStatus::Denied => "denied",
            ToolCallStatus::Refused => "refused",
            ToolCallStatus::Cancelled => "cancelled",
            ToolCallStatus::UnknownTool => "unknown_tool",
            ToolCallStatus::BadArguments => "bad_arguments",
            ToolCallStatus::NotRun => "not_run",
        }
    }
}

/// Why a prompt ended without an answer, or with one.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptOutcome {
    /// The model gave a final answer.
    Answered { text: String },
    /// `max_turns` model turns went by without a final answer.
    MaxTurns { turns: u32 },
    /// The model endpoint failed.
    ModelFailed(ModelError),
    /// The operator cancelled the turn.
    Cancelled,
}

impl PromptOutcome {
    /// Its name in transcripts and JSON: `answered`, `max_turns`, `model_failed`, `cancelled`.
    pub fn as_str(&self) -> &'static str {
        match self {
            PromptOutcome::Answered { .. } => "answered",
            PromptOutcome::MaxTurns { .. } => "max_turns",
            PromptOutcome::ModelFailed(_) => "model_failed",
            PromptOutcome::Cancelled => "cancelled",
        }
    }

    /// The model's failure, when that is how it ended.
    pub fn error(&self) -> Option<&ModelError> {
        match self {
            PromptOutcome::ModelFailed(e) => Some(e),
            _ => None,
        }
    }
}

/// How a prompt went.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptReport {
    pub outcome: PromptOutcome,
    /// Model turns taken.
    pub turns: u32,
    /// Tool calls that did not end `ok`.
    pub tool_failures: u32,
    /// Token counts summed over the turns (those the endpoint reported).
    pub usage: Usage,
}

/// Everything the loop reports, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    /// A model turn begins; `tools` are the names the model is offered in it.
    TurnStarted {
        turn: u32,
        tools: std::sync::Arc<[String]>,
    },
    /// More of the model's text (unsanitized).
    TextDelta { turn: u32, text: String },
    /// The model asked for a tool call; `reason` is the text it wrote before (its stated
    /// reason), `arguments` the JSON text it wrote.
    ToolCall {
        turn: u32,
        call_id: String,
        tool: String,
        arguments: String,
        reason: String,
    },
    /// What went back to the model for a tool call; `runtime_id` is the call's id in the
    /// runtime's events (none when it never reached the runtime: an unknown tool, arguments
    /// that are not JSON).
    ToolResult {
        turn: u32,
        call_id: String,
        tool: String,
        runtime_id: Option<u64>,
        status: ToolCallStatus,
        content: String,
    },
    /// The request failed (429 or 5xx) and is tried again after `delay`.
    Retrying {
        turn: u32,
        attempt: u32,
        max: u32,
        delay: Duration,
        error: ModelError,
    },
    /// Time left before the retry.
    RetryCountdown { turn: u32, remaining: Duration },
    /// The model's answer for this turn is complete.
    TurnEnded {
        turn: u32,
        finish_reason: Option<FinishReason>,
        usage: Option<Usage>,
        latency: Duration,
    },
    /// How much of the model's context the conversation takes after a turn's answer:
    /// `used` tokens (the endpoint's count, or `estimated` at four bytes a token) of `window`
    /// (the profile's `context_window`, when it gives one).
    Context {
        used: u64,
        window: Option<u64>,
        estimated: bool,
        /// Of `used`, the tool definitions offered in the turn (estimated).
        tools: u64,
    },
    /// The turns before the current prompt (`items` of them, about `before` tokens) were
    /// summarised by the model to make room (about `after` tokens now); or, with `error`,
    /// could not be (the request goes as it is).
    Compacted {
        items: usize,
        before: u64,
        after: u64,
        error: Option<ModelError>,
    },
    /// The final answer of a prompt.
    Answer { text: String },
    /// The prompt ended without an answer: the model failed, `max_turns`, or a cancel.
    Stopped {
        outcome: PromptOutcome,
        message: String,
    },
}
