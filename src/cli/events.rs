//! Runtime events as the headless commands print them (`watch`, `call --events`): one JSON
//! object a line (docs/commands.md "JSON shapes": event lines), or one human line, server text sanitized.
//!
//! Separate from `output.rs` because it is the one place that knows every `RuntimeEvent`
//! variant's printed form; `watch` and `call` share it.

use crate::approval::{AnsweredBy, ApprovalDecision};
use crate::runtime::{event_json, log_text, HookOutcome, HookRun, RuntimeEvent, ToolsDiff};
use crate::runtime::{ElicitationMode, McpEvent};
use crate::text::sanitize_line;

/// Characters of server text shown on a human line.
const LINE_CHARS: usize = 300;

/// `hooks[0] (mcp_tool guard/check) on pre_tool_use of call #3 mcp__notes__delete_note (12ms):
/// deny (no deleting on fridays)`.
fn hook_line(run: &HookRun) -> String {
    let clean = |s: &str| sanitize_line(s, LINE_CHARS);
    let about = match (&run.call, &run.tool, &run.server) {
        (Some(id), Some(tool), _) => format!(" of call #{id} {tool}"),
        (_, _, Some(server)) => format!(" of [{server}]"),
        _ => String::new(),
    };
    let what = match &run.outcome {
        HookOutcome::Decided {
            decision,
            reason: Some(reason),
        } => format!("{} ({})", decision.as_str(), clean(reason)),
        HookOutcome::Decided {
            decision,
            reason: None,
        } => decision.as_str().to_string(),
        HookOutcome::Ran => "ran".to_string(),
        HookOutcome::Warning(why) => {
            format!("warning: {}; going on as if it said nothing", clean(why))
        }
    };
    format!(
        "{} on {}{about} ({}): {what}",
        clean(&run.label()),
        run.event.as_str(),
        crate::text::fmt_duration(run.elapsed)
    )
}

/// One human line for an event (without the newline).
pub fn event_line(event: &RuntimeEvent) -> String {
    let clean = |s: &str| sanitize_line(s, LINE_CHARS);
    match event {
        RuntimeEvent::Mcp(McpEvent::PhaseStarted { server, phase, .. }) => {
            format!("[{server}] {}", phase.as_str())
        }
        RuntimeEvent::Mcp(McpEvent::ServerStarted(report)) => match &report.failure {
            Some(f) => format!(
                "[{}] failed: {}: {}",
                report.name,
                f.class.as_str(),
                clean(&f.message)
            ),
            None => format!(
                "[{}] {}, {} tools",
                report.name,
                super::output::status_word(report),
                report.tools
            ),
        },
        RuntimeEvent::Mcp(McpEvent::Stderr { server, line }) => {
            format!("[{server}] stderr: {}", clean(line))
        }
        RuntimeEvent::Mcp(McpEvent::ServerClosed { server }) => format!("[{server}] closed"),
        RuntimeEvent::Mcp(McpEvent::ServerRequest {
            server,
            method,
            outcome,
            detail,
        }) => format!(
            "[{server}] asked {}: {} ({})",
            clean(method),
            outcome.as_str(),
            clean(detail)
        ),
        RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request)) => match &request.mode {
            ElicitationMode::Form { fields, .. } => format!(
                "[{}] asks for input ({} field{}): {}",
                request.server,
                fields.len(),
                if fields.len() == 1 { "" } else { "s" },
                clean(&request.message)
            ),
            ElicitationMode::Url { url, .. } => format!(
                "[{}] asks to open {}: {}",
                request.server,
                clean(url),
                clean(&request.message)
            ),
        },
        RuntimeEvent::Mcp(McpEvent::SamplingRequested(request)) => format!(
            "[{}] asks for a model's message ({} message{}, max {} tokens)",
            request.server,
            request.ask.messages.len(),
            if request.ask.messages.len() == 1 {
                ""
            } else {
                "s"
            },
            request.ask.max_tokens
        ),
        RuntimeEvent::Notification(n) => format!(
            "[{}] {} {}",
            n.server,
            clean(&n.method),
            clean(&n.params.to_string())
        ),
        RuntimeEvent::CallStarted { id, tool, .. } => format!("call #{id} {tool}"),
        RuntimeEvent::CallStatus { id, status } => format!("call #{id} {}", status.as_str()),
        RuntimeEvent::CallFinished {
            id,
            status,
            elapsed_ms,
            ..
        } => format!("call #{id} {} after {elapsed_ms}ms", status.as_str()),
        RuntimeEvent::ApprovalRequested(request) => format!(
            "call #{} needs approval: {}",
            request.id,
            clean(&request.why)
        ),
        RuntimeEvent::ApprovalAnswered { id, decision, by } => {
            format!("call #{id} {}", answer_words(*decision, *by))
        }
        RuntimeEvent::CallAllowed { id, why } => format!("call #{id} {}", clean(why)),
        RuntimeEvent::HostSession {
            name,
            version,
            connected,
        } => format!(
            "host {} {}",
            clean(format!("{name} {version}").trim()),
            if *connected { "connected" } else { "went away" }
        ),
        RuntimeEvent::ServerLog {
            server,
            level,
            logger,
            data,
        } => format!(
            "[{server}] {} {}",
            level.as_str(),
            clean(&log_text(logger.as_deref(), data))
        ),
        RuntimeEvent::CallProgress {
            id,
            progress,
            total,
            message,
        } => match message {
            // Nothing counted, only words (a task's state): the words alone.
            Some(m) if total.is_none() && *progress == 0.0 => format!("call #{id} {}", clean(m)),
            _ => {
                let of = total.map(|t| format!("/{t}")).unwrap_or_default();
                let message = message
                    .as_deref()
                    .map(|m| format!(" {}", clean(m)))
                    .unwrap_or_default();
                format!("call #{id} progress {progress}{of}{message}")
            }
        },
        RuntimeEvent::ListChanged { server, list } => {
            format!("[{server}] {} list changed", list.as_str())
        }
        RuntimeEvent::ResourceUpdated { server, uri } => {
            format!("[{server}] resource updated: {}", clean(uri))
        }
        RuntimeEvent::ToolsChanged(diff) => diff_line(diff),
        RuntimeEvent::HookRan(run) => hook_line(run),
        RuntimeEvent::EventsDropped { count } => {
            format!("({count} events dropped: the reader fell behind)")
        }
        RuntimeEvent::Mcp(McpEvent::ServerDown {
            server,
            reason,
            crashes,
            ..
        }) => format!(
            "[{server}] down: {} ({crashes} quick crashes in a row)",
            clean(reason)
        ),
        RuntimeEvent::Mcp(McpEvent::RestartScheduled {
            server,
            attempt,
            delay,
            ..
        }) => format!(
            "[{server}] restarting in {} (attempt {attempt})",
            crate::text::fmt_duration(*delay)
        ),
        RuntimeEvent::Mcp(McpEvent::GaveUp { server, crashes }) => {
            format!("[{server}] gave up after {crashes} quick crashes: restart it by hand")
        }
        RuntimeEvent::Rewake(e) => format!(
            "rewake {} from [{}] {}",
            clean(&e.event),
            e.server,
            clean(&e.method)
        ),
    }
}

fn diff_line(diff: &ToolsDiff) -> String {
    if let Some(error) = &diff.error {
        return format!(
            "[{}] tools not re-listed: {}",
            diff.server,
            sanitize_line(error, LINE_CHARS)
        );
    }
    let names = |tools: &[crate::tool::ToolDescriptor]| {
        tools
            .iter()
            .map(|t| t.name.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    if !diff.added.is_empty() {
        parts.push(format!("+ {}", names(&diff.added)));
    }
    if !diff.removed.is_empty() {
        parts.push(format!("- {}", names(&diff.removed)));
    }
    for c in &diff.changed {
        let what: Vec<&str> = c.changes.iter().map(|k| k.as_str()).collect();
        parts.push(format!(
            "~ {} ({}: {} {} -> {} {})",
            c.after.name,
            what.join(", "),
            c.before.side_effect.as_str(),
            destructive(c.before.destructive.is_destructive()),
            c.after.side_effect.as_str(),
            destructive(c.after.destructive.is_destructive()),
        ));
    }
    if !diff.revoked.is_empty() {
        parts.push(format!("approvals forgotten: {}", diff.revoked.join(", ")));
    }
    if parts.is_empty() {
        parts.push("unchanged".into());
    }
    format!("[{}] tools re-listed: {}", diff.server, parts.join("; "))
}

fn destructive(yes: bool) -> &'static str {
    if yes {
        "destructive"
    } else {
        "non-destructive"
    }
}

/// Writes one event as a line (JSON or human) and flushes, so a reader sees it at once. An
/// error means stdout is gone (a closed pipe).
pub fn write_event(
    out: &mut impl std::io::Write,
    event: &RuntimeEvent,
    json: bool,
) -> std::io::Result<()> {
    let line = if json {
        event_json(event).to_string()
    } else {
        event_line(event)
    };
    out.write_all(line.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()
}

/// How an approval was answered, in words: a refusal (nobody could answer) is not a denial.
fn answer_words(decision: ApprovalDecision, by: AnsweredBy) -> &'static str {
    match (decision, by) {
        (ApprovalDecision::Deny, AnsweredBy::NoTerminal) => {
            "refused: there is no terminal to ask on (pass --yes to approve)"
        }
        (ApprovalDecision::Deny, AnsweredBy::Unanswered) => {
            "refused: its question went unanswered (cancelled, or the asker went away)"
        }
        (ApprovalDecision::Deny, AnsweredBy::Unattended) => {
            "refused: nobody is at a console to approve it (gateway.unattended)"
        }
        (ApprovalDecision::Deny, AnsweredBy::Operator | AnsweredBy::YesFlag) => "denied by you",
        (ApprovalDecision::AllowOnce, AnsweredBy::YesFlag) => "allowed by --yes",
        (ApprovalDecision::AllowOnce, _) => "allowed once by you",
        (ApprovalDecision::AllowForSession, _) => "allowed for the session by you",
        (ApprovalDecision::AllowAlways, _) => "always allowed by you (a rule)",
    }
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
