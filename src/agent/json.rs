//! The JSON shape of the agent's events (docs/commands.md "JSON shapes": `run --json`): what
//! `run --json` prints and what the daemon sends its consoles (docs/daemon.md). One place,
//! below every driver that writes them.

use serde_json::{json, Value};

use super::events::{AgentEvent, PromptOutcome, PromptReport};
use super::failure::ModelError;
use crate::runtime::json_field as field;

/// The JSON line of an agent event (docs/commands.md "JSON shapes": `run --json`).
pub fn agent_json(event: &AgentEvent) -> Value {
    let ms = |d: &std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    match event {
        AgentEvent::TurnStarted { turn, tools } => {
            json!({"type": "turn_started", "turn": turn, "tools": &tools[..]})
        }
        AgentEvent::TextDelta { turn, text } => {
            json!({"type": "text_delta", "turn": turn, "text": text})
        }
        AgentEvent::ToolCall {
            turn,
            call_id,
            tool,
            arguments,
            reason,
        } => json!({
            "type": "tool_call",
            "turn": turn,
            "call_id": call_id,
            "tool": tool,
            "arguments": arguments,
            "reason": reason,
        }),
        AgentEvent::ToolResult {
            turn,
            call_id,
            tool,
            runtime_id,
            status,
            content,
        } => json!({
            "type": "tool_result",
            "turn": turn,
            "call_id": call_id,
            "tool": tool,
            "id": runtime_id,
            "status": status,
            "content": content,
        }),
        AgentEvent::Retrying {
            turn,
            attempt,
            max,
            delay,
            error,
        } => json!({
            "type": "model_retry",
            "turn": turn,
            "attempt": attempt,
            "max": max,
            "delay_ms": ms(delay),
            "error": error,
        }),
        AgentEvent::RetryCountdown { turn, remaining } => {
            json!({"type": "retry_countdown", "turn": turn, "remaining_ms": ms(remaining)})
        }
        AgentEvent::TurnEnded {
            turn,
            finish_reason,
            usage,
            latency,
        } => json!({
            "type": "turn_ended",
            "turn": turn,
            "finish": finish_reason,
            "usage": usage,
            "latency_ms": ms(latency),
        }),
        AgentEvent::Context {
            used,
            window,
            estimated,
            tools,
        } => {
            json!({"type": "context", "used": used, "window": window, "estimated": estimated, "tools": tools})
        }
        AgentEvent::Compacted {
            items,
            before,
            after,
            error,
        } => {
            json!({"type": "compacted", "items": items, "before": before, "after": after, "error": error})
        }
        AgentEvent::Answer { text } => json!({"type": "answer", "text": text}),
        AgentEvent::Stopped { outcome, message } => {
            json!({"type": "stopped", "reason": outcome.as_str(), "message": message, "error": outcome.error()})
        }
    }
}

/// How a prompt ended, from its name and, for `model_failed`, its error; `answer` is the
/// answer's text.
fn outcome(v: &Value, name: &str, answer: &str) -> Option<PromptOutcome> {
    Some(match name {
        "answered" => PromptOutcome::Answered {
            text: v.get(answer)?.as_str()?.to_string(),
        },
        "max_turns" => PromptOutcome::MaxTurns {
            turns: field(v, "turns").unwrap_or_default(),
        },
        "model_failed" => PromptOutcome::ModelFailed(field::<ModelError>(v, "error")?),
        "cancelled" => PromptOutcome::Cancelled,
        _ => return None,
    })
}

/// The agent event of a `run --json` line (the inverse of [`agent_json`]), for what a
/// console attached to a daemon shows in its Conversation; `None` for one it does not show
/// (retries, compaction) or cannot read.
pub fn agent_event_from_json(v: &Value) -> Option<AgentEvent> {
    let turn = || field::<u32>(v, "turn");
    let text = |name: &str| Some(v.get(name)?.as_str()?.to_string());
    Some(match v.get("type")?.as_str()? {
        "turn_started" => AgentEvent::TurnStarted {
            turn: turn()?,
            tools: field::<Vec<String>>(v, "tools")?.into(),
        },
        "text_delta" => AgentEvent::TextDelta {
            turn: turn()?,
            text: text("text")?,
        },
        "tool_call" => AgentEvent::ToolCall {
            turn: turn()?,
            call_id: text("call_id")?,
            tool: text("tool")?,
            arguments: text("arguments")?,
            reason: text("reason").unwrap_or_default(),
        },
        "tool_result" => AgentEvent::ToolResult {
            turn: turn()?,
            call_id: text("call_id")?,
            tool: text("tool")?,
            runtime_id: field(v, "id"),
            status: field(v, "status")?,
            content: text("content")?,
        },
        "turn_ended" => AgentEvent::TurnEnded {
            turn: turn()?,
            finish_reason: field(v, "finish"),
            usage: field(v, "usage"),
            latency: std::time::Duration::from_millis(field(v, "latency_ms")?),
        },
        "context" => AgentEvent::Context {
            used: field(v, "used")?,
            window: field(v, "window"),
            estimated: field(v, "estimated")?,
            tools: field(v, "tools")?,
        },
        "answer" => AgentEvent::Answer {
            text: text("text")?,
        },
        "stopped" => {
            let reason = text("reason")?;
            AgentEvent::Stopped {
                outcome: outcome(v, &reason, "message")?,
                message: text("message").unwrap_or_default(),
            }
        }
        _ => return None,
    })
}

/// A prompt's report from the daemon's answer to `prompt` (docs/daemon.md).
pub fn report_from_json(v: &Value) -> Option<PromptReport> {
    let name = v.get("outcome")?.as_str()?;
    Some(PromptReport {
        outcome: outcome(v, name, "answer")?,
        turns: field(v, "turns").unwrap_or_default(),
        tool_failures: field(v, "tool_failures").unwrap_or_default(),
        usage: field(v, "usage").unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::events::ToolCallStatus;
    use crate::agent::failure::ModelFailureClass;
    use crate::agent::turn::{FinishReason, Usage};
    use std::time::Duration;

    #[test]
    fn the_events_a_conversation_shows_come_back_as_they_were() {
        let usage = Usage {
            input_tokens: 120,
            output_tokens: 7,
            cached_input_tokens: 100,
        };
        for event in [
            AgentEvent::TurnStarted {
                turn: 1,
                tools: vec!["mcp__fs__write".to_string()].into(),
            },
            AgentEvent::TextDelta {
                turn: 1,
                text: "I will".into(),
            },
            AgentEvent::ToolCall {
                turn: 1,
                call_id: "c1".into(),
                tool: "mcp__fs__write".into(),
                arguments: "{\"path\":\"a\"}".into(),
                reason: "to save".into(),
            },
            AgentEvent::ToolResult {
                turn: 1,
                call_id: "c1".into(),
                tool: "mcp__fs__write".into(),
                runtime_id: Some(4),
                status: ToolCallStatus::Ok,
                content: "written".into(),
            },
            AgentEvent::TurnEnded {
                turn: 1,
                finish_reason: Some(FinishReason::ToolCalls),
                usage: Some(usage),
                latency: Duration::from_millis(30),
            },
            AgentEvent::Answer {
                text: "done".into(),
            },
            AgentEvent::Stopped {
                outcome: PromptOutcome::ModelFailed(ModelError::new(
                    ModelFailureClass::Timeout,
                    "silent",
                )),
                message: "the model failed".into(),
            },
            AgentEvent::Stopped {
                outcome: PromptOutcome::Cancelled,
                message: "cancelled".into(),
            },
        ] {
            let written = agent_json(&event);
            assert_eq!(agent_event_from_json(&written), Some(event), "{written}");
        }
    }

    #[test]
    fn a_prompt_report_is_read_from_the_daemon_answer() {
        let answer = serde_json::json!({
            "session": "s1", "outcome": "answered", "answer": "done", "error": null,
            "turns": 2, "tool_failures": 1,
            "usage": {"input_tokens": 5, "output_tokens": 6, "cached_input_tokens": 0},
        });
        let report = report_from_json(&answer).expect("read");
        assert_eq!(
            report.outcome,
            PromptOutcome::Answered {
                text: "done".into()
            }
        );
        assert_eq!((report.turns, report.tool_failures), (2, 1));
        assert_eq!(report.usage.output_tokens, 6);
        assert!(report_from_json(&serde_json::json!({"outcome": "?"})).is_none());
    }
}
