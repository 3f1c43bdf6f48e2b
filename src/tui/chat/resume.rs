//! A resumed session on screen: its transcript's records as entries (prompts into the input's
//! history too), its calls final and tied to no runtime call (their ids were another
//! runtime's).

use std::time::Duration;

use super::entry::{call_line, Entry, TextBlock};
use super::{ChatState, NoteLevel};
use crate::agent::transcript::Record;
use crate::agent::turn::FinishReason;
use crate::agent::ToolCallStatus;
use crate::approval::{AnsweredBy, ApprovalDecision};

impl ChatState {
    /// A transcript's records as entries; returns how many prompts it held.
    pub(super) fn show_records(&mut self, records: &[Record]) -> usize {
        let mut prompts = 0;
        for record in records {
            match record {
                Record::Prompt { text, .. } => {
                    prompts += 1;
                    self.input.remember(text);
                    self.push(Entry::Prompt(TextBlock::new(text)));
                }
                Record::Assistant {
                    turn,
                    text,
                    finish_reason,
                    usage,
                    latency_ms,
                    ..
                } => {
                    if !text.trim().is_empty() {
                        self.push(Entry::Model {
                            turn: *turn,
                            text: TextBlock::new(text),
                        });
                    }
                    self.push(Entry::Turn {
                        turn: *turn,
                        latency: Duration::from_millis(*latency_ms),
                        usage: *usage,
                        // An endpoint's own word, as a transcript kept it: made safe to draw.
                        finish_reason: finish_reason.as_ref().map(|r| match r {
                            FinishReason::Other(other) => {
                                FinishReason::Other(crate::text::sanitize(other, false))
                            }
                            known => known.clone(),
                        }),
                    });
                }
                Record::ToolCall {
                    turn,
                    call_id,
                    tool,
                    arguments,
                    ..
                } => self.push(Entry::Call(call_line(*turn, call_id, tool, arguments))),
                Record::Approval {
                    call_id,
                    decision,
                    by,
                    ..
                } => {
                    if let Some(line) = self.line_by_call_id(call_id) {
                        line.approval = recorded_approval(decision, by);
                    }
                }
                Record::Allowed { call_id, why, .. } => {
                    if let Some(line) = self.line_by_call_id(call_id) {
                        line.allowed = Some(crate::text::sanitize_line(why, 120));
                    }
                }
                // Its runtime id was another runtime's: not shown, never looked up.
                Record::ToolResult {
                    call_id, status, ..
                } => {
                    if let Some(line) = self.line_by_call_id(call_id) {
                        line.result = Some(recorded_status(status));
                    }
                }
                Record::Stopped { message, .. } => self.note(NoteLevel::Warn, message.clone()),
                Record::Compacted { kept, .. } => self.note(
                    NoteLevel::Info,
                    format!("context compacted here: the model went on from a summary (the {kept} latest items kept)"),
                ),
                // Hook runs were shown in Events when they ran.
                Record::Session { .. }
                | Record::Resumed { .. }
                | Record::Answer { .. }
                | Record::Hook { .. } => {}
            }
        }
        // A call the session ended in: the model is told it has no result. The calls' ids
        // were another runtime's: none is looked up.
        self.settle_calls(ToolCallStatus::Error);
        for entry in self.entries.iter_mut() {
            if let Entry::Call(line) = entry {
                line.runtime_id = None;
            }
        }
        prompts
    }

    /// Every call line is final: those still open end as `status` (their runtime is gone: a
    /// restart, a resumed session). Their `#` stays: a restart's runtime
    /// numbers its calls on from the last one's, and Calls keeps the old rows.
    pub(super) fn settle_calls(&mut self, status: ToolCallStatus) {
        for entry in self.entries.iter_mut() {
            if let Entry::Call(line) = entry {
                line.result.get_or_insert(status);
            }
        }
    }
}

/// A tool result's status as a transcript wrote it.
fn recorded_status(status: &str) -> ToolCallStatus {
    [
        ToolCallStatus::Ok,
        ToolCallStatus::Error,
        ToolCallStatus::Denied,
        ToolCallStatus::Refused,
        ToolCallStatus::Cancelled,
        ToolCallStatus::UnknownTool,
        ToolCallStatus::BadArguments,
        ToolCallStatus::NotRun,
    ]
    .into_iter()
    .find(|s| s.as_str() == status)
    .unwrap_or(ToolCallStatus::Error)
}

/// An approval as a transcript wrote it.
fn recorded_approval(decision: &str, by: &str) -> Option<(ApprovalDecision, AnsweredBy)> {
    let decision = ApprovalDecision::ALL
        .into_iter()
        .find(|d| d.as_str() == decision)?;
    Some((decision, AnsweredBy::named(by)?))
}
