//! The JSON shape of the agent's events (docs/commands.md "JSON shapes": `run --json`): what
//! `run --json` prints and what the daemon sends its consoles (docs/daemon.md). One place,
//! below every driver that writes them.

use serde_json::{json, Value};

use super::events::AgentEvent;

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
