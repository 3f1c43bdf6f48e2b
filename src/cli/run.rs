//! `aimon-console run PROMPT [--yes] [--json] [--max-turns N] [--model NAME] [--resume ID]`:
//! one prompt to the agent, headless. The answer streams to stdout (with `--json`, one event a
//! line: README "JSON shapes"); calls that need approval ask y/N on the terminal, are approved
//! by `--yes`, or are refused when there is no terminal (and the model is told so). Exit 0 with
//! a final answer and every tool call ok, 1 otherwise, 2 on a config error.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::events::{event_json, event_line};
use super::output::{self, safe_text};
use crate::agent::start::{start_model, start_runtime};
use crate::agent::transcript::{self, Transcript};
use crate::agent::{
    AgentEvent, Conversation, ConversationSettings, ModelError, PromptOutcome, PromptReport,
};
use crate::approval::{AnsweredBy, ApprovalDecision, ApprovalRequest};
use crate::config::Config;
use crate::runtime::{AgentRuntimeFactory, EventStream, McpEvent, RuntimeEvent};
use crate::text::sanitize;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct RunArgs {
    /// What to ask the agent.
    pub prompt: String,
    /// Approve every call that needs approval (the side-effect ceiling still holds).
    #[arg(long)]
    pub yes: bool,
    /// Print one JSON object a line: the agent's and the calls' events, then the outcome.
    #[arg(long)]
    pub json: bool,
    /// Stop after N model turns (default: the profile's max_turns).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,
    /// The model profile to use (a name in agent.models; default: agent.default).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Continue the conversation of session ID (see `aimon-console sessions`).
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
}

pub async fn run(config: Config, args: RunArgs) -> ExitCode {
    let Some(agent) = &config.agent else {
        output::error_line(&format!(
            "{}: no agent: section: add one with a model profile (see README \"The agent\")",
            config.path.display()
        ));
        return ExitCode::from(super::EXIT_CONFIG);
    };
    let profile = match agent.profile(args.model.as_deref()) {
        Ok(p) => p.clone(),
        Err(e) => {
            output::error_line(&format!("error: {e}"));
            return ExitCode::from(super::EXIT_CONFIG);
        }
    };
    let dir = transcript::sessions_dir();
    let (transcript, history) = match &args.resume {
        None => match Transcript::create(&dir, &config.path, &profile.name, &profile.model) {
            Ok(t) => (Some(t), Vec::new()),
            Err(e) => {
                output::error_line(&format!("warning: {e}; the conversation is not recorded"));
                (None, Vec::new())
            }
        },
        Some(id) => match Transcript::resume(&dir, id, &profile.name, &profile.model) {
            Ok((t, records)) => (Some(t), transcript::messages(&records)),
            Err(e) => {
                output::error_line(&format!("error: {e}"));
                return ExitCode::from(super::EXIT_CONFIG);
            }
        },
    };
    let session = transcript.as_ref().map(|t| t.id().to_string());

    let (events, stream) = AgentRuntimeFactory::events();
    let (agent_tx, agent_rx) = mpsc::unbounded_channel();
    let printer = tokio::spawn(print_events(stream, agent_rx, args.json, args.yes));
    if args.json {
        emit(&json!({
            "type": "session",
            "id": session,
            "resumed": args.resume.is_some(),
            "profile": profile.name,
            "model": profile.model,
        }));
    }
    let (runtime, model) = tokio::join!(start_runtime(&config, events), start_model(&profile));
    let runtime = match runtime {
        Ok(r) => r,
        Err(err) => {
            output::error_line(&format!("error: {err}"));
            return ExitCode::from(1);
        }
    };
    // One prompt: let every server finish starting, so the first turn offers all their tools
    // (servers join as they become ready; a later one would join at a turn boundary).
    let summary = runtime.wait_started().await;
    for failed in &summary.servers {
        if let Some(f) = &failed.failure {
            output::error_line(&format!(
                "warning: server {} failed to start ({}); run `aimon-console check` for details",
                failed.name,
                f.class.as_str()
            ));
        }
    }
    let report = match model {
        Err(error) => {
            // No conversation will send agent events: close their channel for the printer.
            drop(agent_tx);
            model_unavailable(error)
        }
        Ok((endpoint, client)) => {
            let settings = ConversationSettings {
                system_prompt: profile.system_prompt.clone(),
                max_turns: args.max_turns.unwrap_or(profile.max_turns),
            };
            let mut conversation = Conversation::new(
                runtime.clone(),
                client,
                settings,
                history,
                agent_tx,
                transcript,
            );
            let cancel = CancellationToken::new();
            let on_ctrl_c = cancel.clone();
            let ctrl_c = tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    on_ctrl_c.cancel();
                }
            });
            let report = conversation.prompt(&args.prompt, cancel).await;
            ctrl_c.abort();
            drop(conversation);
            drop(endpoint);
            report
        }
    };
    runtime.close().await;
    // Closing ended both streams: the printer prints what is left and stops.
    if let Err(e) = printer.await {
        tracing::warn!(error = %e, "the printer of `run` failed");
    }
    finish(&report, session.as_deref(), args.json)
}

/// The report of a prompt that never reached the model.
fn model_unavailable(error: ModelError) -> PromptReport {
    PromptReport {
        outcome: PromptOutcome::ModelFailed(error),
        turns: 0,
        tool_failures: 0,
        usage: Default::default(),
    }
}

/// Prints the outcome (or the failure) and gives the exit code.
fn finish(report: &PromptReport, session: Option<&str>, json: bool) -> ExitCode {
    let ok = matches!(report.outcome, PromptOutcome::Answered { .. }) && report.tool_failures == 0;
    let code: u8 = if ok { 0 } else { 1 };
    let (status, error) = match &report.outcome {
        PromptOutcome::Answered { .. } => ("answered", None),
        PromptOutcome::MaxTurns { .. } => ("max_turns", None),
        PromptOutcome::ModelFailed(e) => ("model_failed", Some(e)),
        PromptOutcome::Cancelled => ("cancelled", None),
    };
    if json {
        emit(&json!({
            "type": "outcome",
            "status": status,
            "turns": report.turns,
            "tool_failures": report.tool_failures,
            "usage": report.usage,
            "error": error,
            "session": session,
            "exit_code": code,
        }));
    } else {
        match &report.outcome {
            PromptOutcome::Answered { .. } => {}
            PromptOutcome::MaxTurns { turns } => output::error_line(&format!(
                "stopped: {turns} model turns (max_turns) without a final answer: the model kept calling tools"
            )),
            PromptOutcome::ModelFailed(e) => output::error_line(&format!(
                "model error: {}: {}\nhint: {}",
                e.class.as_str(),
                safe_text(&e.message),
                safe_text(&e.hint)
            )),
            PromptOutcome::Cancelled => output::error_line("cancelled"),
        }
        if report.tool_failures > 0 {
            output::error_line(&format!(
                "{} tool call(s) did not succeed",
                report.tool_failures
            ));
        }
        if let Some(id) = session {
            output::error_line(&format!("session {id} (continue with --resume {id})"));
        }
    }
    ExitCode::from(code)
}

/// One JSON line on stdout; a closed stdout is ignored.
fn emit(value: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}

/// Prints agent events and the calls' runtime events as they come, and answers approvals.
/// Runtime events go first when both are ready: an approval or a call's end that happened
/// before an agent event is printed before it.
async fn print_events(
    mut stream: EventStream,
    mut agent: mpsc::UnboundedReceiver<AgentEvent>,
    json: bool,
    yes: bool,
) {
    let mut stream_open = true;
    let mut agent_open = true;
    let mut mid_line = false;
    while stream_open || agent_open {
        tokio::select! {
            biased;
            event = stream.recv(), if stream_open => match event {
                None => stream_open = false,
                Some(event) => {
                    if let Some(line) = runtime_line(&event, json) {
                        if mid_line {
                            output::print("\n");
                            mid_line = false;
                        }
                        output::print(&line);
                    }
                    match event {
                        RuntimeEvent::ApprovalRequested(request) => answer(request, yes).await,
                        RuntimeEvent::Mcp(McpEvent::SamplingRequested(request)) => {
                            super::asks::reject_sampling(&request, "run")
                        }
                        _ => {}
                    }
                }
            },
            event = agent.recv(), if agent_open => match event {
                None => agent_open = false,
                Some(event) => {
                    let (line, ends_mid_line) = agent_line(&event, json, mid_line);
                    output::print(&line);
                    mid_line = ends_mid_line;
                }
            },
        }
    }
    if mid_line {
        output::print("\n");
    }
}

/// The line for a runtime event, for the events `run` shows: those of calls, tool-list
/// changes and hook runs.
fn runtime_line(event: &RuntimeEvent, json: bool) -> Option<String> {
    let shown = match event {
        RuntimeEvent::CallStarted { .. }
        | RuntimeEvent::CallStatus { .. }
        | RuntimeEvent::CallFinished { .. }
        | RuntimeEvent::CallProgress { .. }
        | RuntimeEvent::ApprovalRequested(_)
        | RuntimeEvent::ApprovalAnswered { .. }
        | RuntimeEvent::ToolsChanged(_)
        | RuntimeEvent::HookRan(_) => true,
        RuntimeEvent::Mcp(_)
        | RuntimeEvent::Notification(_)
        | RuntimeEvent::Rewake(_)
        | RuntimeEvent::ServerLog { .. }
        | RuntimeEvent::ListChanged { .. }
        | RuntimeEvent::ResourceUpdated { .. }
        | RuntimeEvent::EventsDropped { .. } => false,
    };
    if !shown {
        return None;
    }
    if json {
        return Some(format!("{}\n", event_json(event)));
    }
    // Without --json the agent's own lines say the same, except for these.
    match event {
        RuntimeEvent::ApprovalAnswered { .. }
        | RuntimeEvent::ToolsChanged(_)
        | RuntimeEvent::HookRan(_) => Some(format!("  {}\n", event_line(event))),
        _ => None,
    }
}

/// The text for an agent event, and whether it leaves the line open (streamed text).
fn agent_line(event: &AgentEvent, json: bool, mid_line: bool) -> (String, bool) {
    if json {
        return (format!("{}\n", agent_json(event)), false);
    }
    let newline = if mid_line { "\n" } else { "" };
    match event {
        AgentEvent::TextDelta { text, .. } => {
            let text = sanitize(text, true);
            let open = if text.is_empty() {
                mid_line
            } else {
                !text.ends_with('\n')
            };
            (text, open)
        }
        AgentEvent::TurnStarted { .. } | AgentEvent::TurnEnded { .. } => (String::new(), mid_line),
        AgentEvent::ToolCall {
            tool, arguments, ..
        } => (
            format!(
                "{newline}→ {} {}\n",
                safe_text(tool),
                crate::text::sanitize_line(arguments, 300)
            ),
            false,
        ),
        AgentEvent::ToolResult {
            status, content, ..
        } => (
            format!(
                "{newline}← {}: {}\n",
                status.as_str(),
                crate::text::sanitize_line(content, 300)
            ),
            false,
        ),
        AgentEvent::Retrying {
            attempt,
            max,
            delay,
            error,
            ..
        } => (
            format!(
                "{newline}model: {}: {}; retrying in {} (attempt {attempt} of {max})\n",
                error.class.as_str(),
                safe_text(&error.message),
                crate::text::fmt_duration(*delay)
            ),
            false,
        ),
        AgentEvent::RetryCountdown { .. } => (String::new(), mid_line),
        AgentEvent::Answer { .. } => (newline.to_string(), false),
        AgentEvent::Stopped { .. } => (newline.to_string(), false),
    }
}

/// The JSON line of an agent event (README "JSON shapes": `run --json`).
pub fn agent_json(event: &AgentEvent) -> Value {
    let ms = |d: &std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    match event {
        AgentEvent::TurnStarted { turn, tools } => {
            json!({"type": "turn_started", "turn": turn, "tools": tools})
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
            "finish_reason": finish_reason,
            "usage": usage,
            "latency_ms": ms(latency),
        }),
        AgentEvent::Answer { text } => json!({"type": "answer", "text": text}),
        AgentEvent::Stopped { outcome, message } => {
            let (reason, error) = match outcome {
                PromptOutcome::Answered { .. } => ("answered", None),
                PromptOutcome::MaxTurns { .. } => ("max_turns", None),
                PromptOutcome::ModelFailed(e) => ("model_failed", Some(e)),
                PromptOutcome::Cancelled => ("cancelled", None),
            };
            json!({"type": "stopped", "reason": reason, "message": message, "error": error})
        }
    }
}

/// Answers one approval request: `--yes`, else y/N on the terminal, else refuse (the model
/// is told that nobody could be asked).
async fn answer(request: ApprovalRequest, yes: bool) {
    if yes {
        request.respond_by(ApprovalDecision::AllowOnce, AnsweredBy::YesFlag);
        return;
    }
    // Nobody to ask: refused; the tool's result line (and the model) say why.
    if !std::io::stdin().is_terminal() {
        request.respond_by(ApprovalDecision::Deny, AnsweredBy::NoTerminal);
        return;
    }
    let reason = match &request.origin {
        crate::approval::CallOrigin::Agent { reason } if !reason.trim().is_empty() => {
            format!(
                "the agent says: {}\n",
                crate::text::sanitize_line(reason, 300)
            )
        }
        crate::approval::CallOrigin::Agent { .. } | crate::approval::CallOrigin::Operator => {
            String::new()
        }
    };
    // The gate's sentence: what the tool is, why, and what asks.
    let prompt = format!(
        "\nthe agent asks: {}.\n{reason}arguments: {}\nallow this call? [y/N] ",
        safe_text(&request.why),
        safe_text(&request.arguments.to_string()),
    );
    let decision = tokio::task::spawn_blocking(move || {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(prompt.as_bytes());
        let _ = err.flush();
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(_) if matches!(line.trim(), "y" | "Y" | "yes") => ApprovalDecision::AllowOnce,
            _ => ApprovalDecision::Deny,
        }
    })
    .await
    .unwrap_or(ApprovalDecision::Deny);
    request.respond(decision);
}
