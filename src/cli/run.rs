//! `aimon-console run PROMPT [--yes] [--json] [--max-turns N] [--model NAME] [--resume ID]`:
//! one prompt to the agent, headless; `--prompts FILE` (or `-`: standard input) asks several,
//! one a line, one after another in one conversation and one start. The answer streams to
//! stdout (with `--json`, one event a line: docs/commands.md "JSON shapes"); calls that need
//! approval ask y/N on the terminal, are approved by `--yes`, or are refused when there is no
//! terminal (and the model is told so). Exit 0 with a final answer to every prompt and every
//! tool call ok, 1 otherwise (Ctrl-C included), 2 on a config error or no prompt. Here: the
//! checks, the profile, the start and the end; what is printed meanwhile is `print.rs`, the
//! y/N question `approve.rs`.

mod print;

use print::Said;

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::output::{self, safe_text};
use crate::agent::observe::observed;
use crate::agent::profile::profile_choice;
use crate::agent::session::{SessionPlan, Unavailable};
use crate::agent::start::start_runtime;
use crate::agent::transcript;
use crate::agent::{ModelClient, ModelError, ModelFailureClass, PromptOutcome, PromptReport};
use crate::config::Config;
use crate::runtime::AgentRuntimeFactory;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct RunArgs {
    /// What to ask the agent.
    #[arg(required_unless_present = "prompts")]
    pub prompt: Option<String>,
    /// Ask several prompts, one a line (blank lines skipped), one after another in one
    /// conversation: FILE, or - for standard input (where approvals then need --yes). One start
    /// and one session for them all; it stops after a prompt that did not end with an answer.
    #[arg(long, value_name = "FILE", conflicts_with = "prompt")]
    pub prompts: Option<std::path::PathBuf>,
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
    // Nothing to ask: refused before anything starts (no server, no model, no session).
    let prompts = match prompts_of(&args) {
        Ok(prompts) => prompts,
        Err(message) => {
            output::error_line(&format!("error: {message}"));
            return ExitCode::from(super::EXIT_CONFIG);
        }
    };
    let Some(agent) = &config.agent else {
        output::error_line(&format!(
            "{}: no agent: section: add one with a model profile (see docs/agent.md)",
            config.path.display()
        ));
        return ExitCode::from(super::EXIT_CONFIG);
    };
    let dir = transcript::sessions_dir();
    let choice = match profile_choice(agent, &dir, args.model.as_deref(), args.resume.as_deref()) {
        Ok(choice) => choice,
        Err(message) => {
            output::error_line(&format!("error: {message}"));
            return ExitCode::from(super::EXIT_CONFIG);
        }
    };
    let notice = args.resume.as_deref().and_then(|id| choice.notice(id));
    let profile = choice.profile;
    let plan = SessionPlan {
        sessions: dir,
        config: config.path.clone(),
        profile: profile.clone(),
        resume: args.resume.clone(),
    };
    let (transcript, history) = match (plan.open(), &args.resume) {
        (Ok((t, records)), _) => (Some(t), transcript::items(&records)),
        (Err(e), None) => {
            output::error_line(&format!("warning: {e}; the conversation is not recorded"));
            (None, Vec::new())
        }
        (Err(e), Some(_)) => {
            output::error_line(&format!("error: {e}"));
            return ExitCode::from(super::EXIT_CONFIG);
        }
    };
    let session = transcript.as_ref().map(|t| t.id().to_string());
    if let (Some(notice), false) = (notice, args.json) {
        output::error_line(&notice);
    }

    let (events, stream) = AgentRuntimeFactory::events();
    let (agent_tx, agent_rx) = mpsc::unbounded_channel();
    let (said_tx, said_rx) = mpsc::unbounded_channel();
    // Ctrl-C cancels the prompt: the model request, the running calls, and a y/N question.
    let cancel = CancellationToken::new();
    let printer = tokio::spawn(print::print_events(
        stream,
        agent_rx,
        said_rx,
        args.json,
        args.yes,
        cancel.clone(),
    ));
    if args.json {
        emit(&json!({
            "type": "session",
            "id": session,
            "resumed": args.resume.is_some(),
            "profile": profile.name,
            "model": profile.model,
        }));
    }
    // From here on (the servers starting too), Ctrl-C, SIGTERM or SIGHUP ends the run
    // `cancelled`: its servers closed, why it stopped in the transcript.
    let on_stop = cancel.clone();
    let stop = tokio::spawn(async move {
        super::stop_asked().await;
        on_stop.cancel();
    });
    // A `command:` endpoint may take its `request_timeout` to start: Ctrl-C ends that wait too
    // (dropping its start stops its process).
    let model_start = async {
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(ModelError::new(
                ModelFailureClass::EndpointFailed,
                "cancelled while the model endpoint was starting".to_string(),
            )),
            started = plan.model() => started,
        }
    };
    let (runtime, model) = tokio::join!(start_runtime(&config, events), model_start);
    let runtime = match runtime {
        Ok(r) => r,
        Err(err) => {
            output::error_line(&format!("error: {err}"));
            return ExitCode::from(1);
        }
    };
    // One prompt: let every server finish starting, so the first turn offers all their tools
    // (servers join as they become ready; a later one would join at a turn boundary).
    // A Ctrl-C meanwhile stops the wait: the prompt below ends `cancelled` at once.
    let summary = tokio::select! {
        summary = runtime.wait_started() => summary.servers,
        () = cancel.cancelled() => Vec::new(),
    };
    for failed in &summary {
        if let Some(f) = &failed.failure {
            output::error_line(&format!(
                "warning: server {} failed to start ({}); run `aimon-console check` for details",
                failed.name,
                f.class.as_str()
            ));
        }
    }
    // An endpoint that could not start fails the prompt's first model request like any other
    // model failure: the prompt and the `stopped` record are written, the event printed.
    let (endpoint, client): (_, Arc<dyn ModelClient>) = match model {
        Ok((endpoint, client)) => {
            let client = observed(client, &runtime, &plan.profile, &endpoint.base_url);
            (Some(endpoint), client)
        }
        Err(error) => (None, Arc::new(Unavailable(error))),
    };
    let mut conversation = plan.conversation(
        runtime.clone(),
        client,
        history,
        transcript,
        agent_tx,
        args.max_turns,
    );
    let several = prompts.len() > 1;
    let mut all_ok = true;
    // The last prompt's outcome is said after everything else (the printer done); an earlier
    // one's after that prompt's events, through the printer.
    let mut last = Vec::new();
    for (index, prompt) in prompts.iter().enumerate() {
        let report = conversation.prompt(prompt, cancel.clone()).await;
        let (ok, mut said) = outcome(
            &report,
            session.as_deref(),
            several.then_some(index + 1),
            args.json,
        );
        all_ok &= ok;
        let answered = matches!(report.outcome, PromptOutcome::Answered { .. });
        if index + 1 == prompts.len() {
            last = said;
        } else if !answered {
            said.push(Said::Err(format!(
                "the prompts after prompt {} are not asked: it ended without an answer",
                index + 1
            )));
            all_ok = false;
            last = said;
            break;
        } else {
            for line in said {
                let _ = said_tx.send(line);
            }
        }
    }
    drop(said_tx);
    stop.abort();
    // Dropping the conversation closes the agent events' channel for the printer.
    drop(conversation);
    drop(endpoint);
    runtime.close().await;
    // Closing ended both streams: the printer prints what is left and stops.
    if let Err(e) = printer.await {
        tracing::warn!(error = %e, "the printer of `run` failed");
    }
    for line in last {
        match line {
            Said::Out(text) => output::print(&text),
            Said::Err(text) => output::error_line(&text),
        }
    }
    if let (Some(id), false) = (&session, args.json) {
        output::error_line(&format!("session {id} (continue with --resume {id})"));
    }
    ExitCode::from(if all_ok { 0 } else { 1 })
}

/// The prompts to ask: the one given, or the lines of `--prompts` (blank ones skipped).
fn prompts_of(args: &RunArgs) -> Result<Vec<String>, String> {
    let prompts: Vec<String> = match (&args.prompt, &args.prompts) {
        (Some(prompt), _) => vec![prompt.clone()],
        (None, Some(path)) => {
            let text = if path.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())
                    .map_err(|e| format!("cannot read the prompts from standard input: {e}"))?
            } else {
                std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read the prompts from {}: {e}", path.display()))?
            };
            text.lines().map(str::to_string).collect()
        }
        (None, None) => Vec::new(),
    };
    let prompts: Vec<String> = prompts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .collect();
    if prompts.is_empty() {
        return Err(match &args.prompts {
            Some(path) => format!("{} holds no prompt: one a line", path.display()),
            None => "the prompt is empty: say what to ask the agent, e.g. run \"what is 2 plus 3\""
                .to_string(),
        });
    }
    Ok(prompts)
}

/// What to say of how a prompt ended (or its failure), and whether it is a success (an
/// answer, and every tool call ok). `prompt`: its number among several.
fn outcome(
    report: &PromptReport,
    session: Option<&str>,
    prompt: Option<usize>,
    json: bool,
) -> (bool, Vec<Said>) {
    let mut said = Vec::new();
    let ok = matches!(report.outcome, PromptOutcome::Answered { .. }) && report.tool_failures == 0;
    let code: u8 = if ok { 0 } else { 1 };
    let (status, error) = (report.outcome.as_str(), report.outcome.error());
    if json {
        let mut line = json!({
            "type": "outcome",
            "status": status,
            "turns": report.turns,
            "tool_failures": report.tool_failures,
            "usage": report.usage,
            "error": error,
            "session": session,
            "exit_code": code,
        });
        if let Some(n) = prompt {
            line["prompt"] = json!(n);
        }
        said.push(Said::Out(format!("{line}\n")));
    } else {
        match &report.outcome {
            PromptOutcome::Answered { .. } => {}
            PromptOutcome::MaxTurns { turns } => said.push(Said::Err(format!(
                "stopped after {turns} model turns (max_turns) without a final answer: the model kept calling tools"
            ))),
            PromptOutcome::ModelFailed(e) => said.push(Said::Err(format!(
                "model error: {}: {}\nhint: {}",
                e.class.as_str(),
                safe_text(&e.message),
                safe_text(&e.hint)
            ))),
            PromptOutcome::Cancelled => said.push(Said::Err("cancelled".to_string())),
        }
        if report.tool_failures > 0 {
            said.push(Said::Err(format!(
                "{} tool call(s) did not succeed",
                report.tool_failures
            )));
        }
    }
    (ok, said)
}

/// One JSON line on stdout; a closed stdout is ignored.
fn emit(value: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}
