//! What the Conversation pane shows, entry by entry: the operator's prompts, the model's text
//! (sanitized as it streams in), tool-call lines, turn figures, retries and notes.

use std::time::Duration;

use crate::agent::turn::{FinishReason, Usage};
use crate::agent::ToolCallStatus;
use crate::approval::{AnsweredBy, ApprovalDecision};
use crate::text::sanitize;

/// A line of the model's text longer than this is broken here, so the pane never wraps more
/// than this much to show the end of a long answer.
const LONG_LINE: usize = 2_000;

/// How a note reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteLevel {
    Info,
    Warn,
    Error,
}

/// One tool call the model asked for, tied to its call in the runtime (its row in Calls).
#[derive(Debug, Clone, PartialEq)]
pub struct CallLine {
    pub turn: u32,
    /// The model's id for the call.
    pub call_id: String,
    /// The tool's name as the model wrote it (to match the runtime's call), and as shown.
    pub tool: String,
    pub shown_tool: String,
    /// The arguments on one line (sanitized).
    pub arguments: String,
    /// The runtime's id of the call (its `#` in Calls), once known.
    pub runtime_id: Option<u64>,
    /// How it ended for the model, once it has.
    pub result: Option<ToolCallStatus>,
    /// How its approval was answered, if it asked.
    pub approval: Option<(ApprovalDecision, AnsweredBy)>,
    /// What let it run without asking, when a rule, a hook or a session approval did
    /// (sanitized).
    pub allowed: Option<String>,
    /// How long it took, when read back from a transcript (live calls take it from Calls).
    pub elapsed: Option<Duration>,
}

/// The model's text in a turn: logical lines (sanitized), the last one still growing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextBlock {
    pub lines: Vec<String>,
    /// Characters of the last line (so a delta never recounts it).
    last_chars: usize,
}

impl TextBlock {
    pub fn new(text: &str) -> TextBlock {
        let mut block = TextBlock::default();
        block.push(text);
        block
    }

    /// Appends streamed text: sanitized (a split escape sequence loses its pieces, never
    /// reaches the terminal), line breaks kept.
    pub fn push(&mut self, text: &str) {
        let clean = sanitize(text, true);
        if self.lines.is_empty() {
            self.lines.push(String::new());
        }
        for (i, piece) in clean.split('\n').enumerate() {
            if i > 0 {
                self.lines.push(String::new());
                self.last_chars = 0;
            }
            for c in piece.chars() {
                if self.last_chars >= LONG_LINE {
                    self.lines.push(String::new());
                    self.last_chars = 0;
                }
                if let Some(last) = self.lines.last_mut() {
                    last.push(c);
                }
                self.last_chars += 1;
            }
        }
    }

    pub fn is_blank(&self) -> bool {
        self.lines.iter().all(|l| l.trim().is_empty())
    }
}

/// One thing the pane shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// The operator's prompt.
    Prompt(TextBlock),
    /// The model's text in model turn `turn`.
    Model { turn: u32, text: TextBlock },
    /// A tool call the model asked for.
    Call(CallLine),
    /// A model turn's figures.
    Turn {
        turn: u32,
        latency: Duration,
        usage: Option<Usage>,
        finish_reason: Option<FinishReason>,
    },
    /// A failed model request being retried, the wait counting down.
    Retry {
        class: String,
        message: String,
        attempt: u32,
        max: u32,
        remaining: Duration,
    },
    /// What the console says (the agent ready, a model error and its hint, a cancel, a stop).
    Note { level: NoteLevel, text: String },
}

/// A line for a tool call the model asked for.
pub(super) fn call_line(turn: u32, call_id: &str, tool: &str, arguments: &str) -> CallLine {
    CallLine {
        turn,
        call_id: call_id.to_string(),
        tool: tool.to_string(),
        shown_tool: crate::text::sanitize_line(tool, 100),
        arguments: crate::text::sanitize_line(arguments, 400),
        runtime_id: None,
        result: None,
        approval: None,
        allowed: None,
        elapsed: None,
    }
}
