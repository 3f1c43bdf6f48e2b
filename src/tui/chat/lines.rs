//! The loop's events as the conversation's lines: the model's text (streamed, or whole once),
//! each tool call's line tied to its runtime call and how its approval was answered, each
//! model turn's figures, retries, and why a prompt stopped.

use std::time::Instant;

use super::entry::call_line;
use super::{CallLine, ChatState, Entry, NoteLevel, TextBlock};
use crate::agent::turn::FinishReason;
use crate::agent::{AgentEvent, PromptReport};
use crate::approval::{AnsweredBy, ApprovalDecision};
use crate::text::sanitize;

impl ChatState {
    /// The newest line of call `call_id` still without its result (model call ids repeat
    /// across turns).
    pub(super) fn line_by_call_id(&mut self, call_id: &str) -> Option<&mut CallLine> {
        self.entries.iter_mut().rev().find_map(|e| match e {
            Entry::Call(line) if line.call_id == call_id && line.result.is_none() => Some(line),
            _ => None,
        })
    }

    /// The line of runtime call `id`.
    pub fn line_by_runtime_id(&self, id: u64) -> Option<&CallLine> {
        self.entries.iter().rev().find_map(|e| match e {
            Entry::Call(line) if line.runtime_id == Some(id) => Some(line),
            _ => None,
        })
    }

    fn line_by_runtime_id_mut(&mut self, id: u64) -> Option<&mut CallLine> {
        self.entries.iter_mut().rev().find_map(|e| match e {
            Entry::Call(line) if line.runtime_id == Some(id) => Some(line),
            _ => None,
        })
    }

    /// Ties the runtime's call `id` of `tool` to the oldest line of that tool still untied,
    /// or keeps it until that line arrives.
    pub fn call_started(&mut self, id: u64, tool: &str) {
        let line = self.entries.iter_mut().find_map(|e| match e {
            Entry::Call(line)
                if line.runtime_id.is_none() && line.result.is_none() && line.tool == tool =>
            {
                Some(line)
            }
            _ => None,
        });
        match line {
            Some(line) => line.runtime_id = Some(id),
            None => self.unmatched.push_back((id, tool.to_string())),
        }
    }

    /// How call `id`'s approval was answered.
    pub fn approval_answered(&mut self, id: u64, decision: ApprovalDecision, by: AnsweredBy) {
        self.asked.remove(&id);
        if let Some(line) = self.line_by_runtime_id_mut(id) {
            line.approval = Some((decision, by));
        }
    }

    /// Call `id` ran without asking: `why` (a rule, a hook, a session approval).
    pub fn call_allowed(&mut self, id: u64, why: &str) {
        if let Some(line) = self.line_by_runtime_id_mut(id) {
            line.allowed = Some(crate::text::sanitize_line(why, 120));
        }
    }

    /// One event of the loop.
    pub fn on_agent_event(&mut self, event: AgentEvent, now: Instant) {
        match event {
            AgentEvent::TurnStarted { turn, tools } => {
                if let Some(t) = self.turn.as_mut() {
                    t.model_turn = turn;
                }
                self.offered = Some(tools);
            }
            // The model's text, streamed or (a reply that did not stream) whole in one piece.
            AgentEvent::TextDelta { turn, text } => match self.entries.back_mut() {
                Some(Entry::Model {
                    turn: t,
                    text: block,
                }) if *t == turn => block.push(&text),
                _ => self.push(Entry::Model {
                    turn,
                    text: TextBlock::new(&text),
                }),
            },
            AgentEvent::ToolCall {
                turn,
                call_id,
                tool,
                arguments,
                ..
            } => {
                let mut line = call_line(turn, &call_id, &tool, &arguments);
                if let Some(at) = self.unmatched.iter().position(|(_, t)| *t == tool) {
                    if let Some((id, _)) = self.unmatched.remove(at) {
                        line.runtime_id = Some(id);
                    }
                }
                self.push(Entry::Call(line));
            }
            AgentEvent::ToolResult {
                call_id,
                runtime_id,
                status,
                ..
            } => {
                if let Some(line) = self.line_by_call_id(&call_id) {
                    line.result = Some(status);
                    if line.runtime_id.is_none() {
                        line.runtime_id = runtime_id;
                    }
                }
            }
            AgentEvent::Retrying {
                attempt,
                max,
                delay,
                error,
                ..
            } => self.push(Entry::Retry {
                class: error.class.as_str().to_string(),
                message: sanitize(&error.message, false),
                attempt,
                max,
                remaining: delay,
            }),
            AgentEvent::RetryCountdown { remaining, .. } => {
                if let Some(Entry::Retry { remaining: r, .. }) = self
                    .entries
                    .iter_mut()
                    .rev()
                    .find(|e| matches!(e, Entry::Retry { .. }))
                {
                    *r = remaining;
                }
            }
            AgentEvent::TurnEnded {
                turn,
                finish_reason,
                usage,
                latency,
            } => self.push(Entry::Turn {
                turn,
                latency,
                usage,
                finish_reason: finish_reason.map(|r| match r {
                    FinishReason::Other(other) => FinishReason::Other(sanitize(&other, false)),
                    known => known,
                }),
            }),
            AgentEvent::Context {
                used,
                window,
                estimated,
                ..
            } => {
                self.context = Some(super::ContextMeter {
                    used,
                    window,
                    estimated,
                });
            }
            AgentEvent::Compacted {
                items,
                before,
                after,
                error,
            } => {
                let (level, text) = match error {
                    None => (
                        NoteLevel::Info,
                        format!("context compacted: {items} earlier items summarised by the model (~{before} → ~{after} tokens); the transcript keeps them"),
                    ),
                    Some(e) => (
                        NoteLevel::Warn,
                        format!(
                            "context could not be compacted ({}: {}); the request went as it was",
                            e.class.as_str(),
                            sanitize(&e.message, false)
                        ),
                    ),
                };
                self.push(Entry::Note { level, text });
            }
            // Its text came as the turn's text.
            AgentEvent::Answer { .. } => {}
            AgentEvent::Stopped { outcome, message } => {
                self.stopped(&outcome, &message, now);
            }
        }
    }

    fn stopped(&mut self, outcome: &crate::agent::PromptOutcome, message: &str, now: Instant) {
        use crate::agent::PromptOutcome;
        match outcome {
            PromptOutcome::Answered { .. } => {}
            PromptOutcome::MaxTurns { .. } => self.note(NoteLevel::Warn, message),
            PromptOutcome::ModelFailed(e) => {
                self.note(
                    NoteLevel::Error,
                    format!("model error: {}: {}", e.class.as_str(), e.message),
                );
                self.note(NoteLevel::Info, format!("hint: {}", e.hint));
            }
            PromptOutcome::Cancelled => {
                let after = self
                    .turn
                    .as_ref()
                    .and_then(|t| t.cancelled_at)
                    .map(|at| now.saturating_duration_since(at));
                let text = match after {
                    Some(after) => {
                        tracing::info!(
                            ms = after.as_secs_f64() * 1000.0,
                            "agent turn cancelled by Esc"
                        );
                        format!(
                            "cancelled by the operator: the turn ended {} after Esc",
                            crate::text::fmt_duration(after)
                        )
                    }
                    None => "cancelled by the operator".to_string(),
                };
                self.note(NoteLevel::Warn, text);
            }
        }
    }

    /// A prompt ended.
    pub fn done(&mut self, report: &PromptReport) {
        self.turn = None;
        tracing::debug!(turns = report.turns, "agent prompt ended");
    }
}
