//! Declarative hooks (seed §7.1, docs/ARCHITECTURE.md §3): the runner. On an event it runs every
//! hook whose `match` fits, in config order, each bounded by its timeout, and publishes each run as
//! a `RuntimeEvent::HookRan`. For `pre_tool_use` it reads the hooks' decisions and hands the gate
//! what they said; the gate decides (`approval/gate.rs`).
//!
//! Fail-soft: a timeout, a hook server that is down or missing, an error result, output that
//! cannot be read, a program that cannot start — each is a warning on the event, and the call
//! goes on as if that hook had said nothing. Nothing here panics or waits past a timeout.
//!
//! A hook's own `mcp_tool` call goes to the tool directly, not through `AgentRuntime::call`: it
//! runs no hooks (no loops) and asks nobody (writing the hook in the config is the operator's
//! approval of that call), but the side-effect ceiling and `deny` rules hold for it as for any
//! call, so a hook is never a way around them.
//!
//! `template.rs` renders `mcp_tool` arguments, `answer.rs` reads decisions, `command.rs` runs
//! `command` hooks; `event.rs` is what a hook is told about its event, `report.rs` what the
//! runtime tells about a run.

mod answer;
mod command;
mod event;
pub(crate) mod report;
mod template;

use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use self::answer::Answer;
use self::command::Ran;
pub(crate) use self::event::Subject;
pub use self::report::{HookAnswer, HookOutcome, HookRun};
use super::bus::EventBus;
use super::events::RuntimeEvent;
use crate::approval::{
    pattern_matches, server_matches, ApprovalGate, GateVerdict, HookDecision, HookVerdict,
};
use crate::config::{HookAction, HookConfig, HookEvent};
use crate::mcp::events::{EventSink, McpEvent, ServerReport, ServerStatus};
use crate::mcp::manager::McpClientManager;
use crate::text::{fmt_duration, truncate};
use crate::tool::{schema, ProgressSink, Tool, ToolContext, ToolInput, ToolRegistry, ToolResult};

/// Characters kept of a reason or a warning.
const TEXT_CHARS: usize = 500;
/// How long closing waits for hooks still running in the background to stop.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// The hooks of one runtime, and what they need to run.
pub(crate) struct Hooks {
    hooks: Vec<HookConfig>,
    registry: Arc<ToolRegistry>,
    gate: Arc<ApprovalGate>,
    /// To wait for a hook's server that is still starting (set once the manager exists; weak,
    /// since the manager's event sink holds these hooks).
    manager: OnceLock<Weak<McpClientManager>>,
    bus: EventBus,
    /// Cancelled when the runtime closes: every hook still running stops.
    stop: CancellationToken,
    /// Hooks running in the background (server and session events).
    background: TaskTracker,
}

impl Hooks {
    pub(crate) fn new(
        hooks: Vec<HookConfig>,
        registry: Arc<ToolRegistry>,
        gate: Arc<ApprovalGate>,
        bus: EventBus,
    ) -> Hooks {
        Hooks {
            hooks,
            registry,
            gate,
            manager: OnceLock::new(),
            bus,
            stop: CancellationToken::new(),
            background: TaskTracker::new(),
        }
    }

    pub(crate) fn set_manager(&self, manager: &Arc<McpClientManager>) {
        let _ = self.manager.set(Arc::downgrade(manager));
    }

    /// Whether any hook runs on `event` (the call path skips all hook work otherwise).
    pub(crate) fn has(&self, event: HookEvent) -> bool {
        self.hooks.iter().any(|h| h.event == event)
    }

    /// The hooks of `event` whose `match` fits `subject`, with their indexes.
    fn matching<'a>(
        &'a self,
        event: HookEvent,
        subject: &'a Subject<'_>,
    ) -> impl Iterator<Item = (usize, &'a HookConfig)> + 'a {
        self.hooks
            .iter()
            .enumerate()
            .filter(move |(_, h)| h.event == event)
            .filter(move |(_, h)| match subject {
                Subject::Call { tool, .. } => pattern_matches(&h.matches, tool),
                Subject::Server(report) => server_matches(&h.matches, &report.name),
                Subject::Prompt(_) | Subject::Turn(_) | Subject::Session(_) => true,
            })
    }

    /// `pre_tool_use`: the hooks that match the call, in order, until one denies. What the
    /// gate is told: the first deny, else the first allow, else nothing; and the runs.
    pub(crate) async fn pre_tool_use(
        &self,
        subject: &Subject<'_>,
        cancel: &CancellationToken,
    ) -> (Option<HookDecision>, Vec<HookRun>) {
        let mut runs = Vec::new();
        if !self.has(HookEvent::PreToolUse) {
            return (None, runs);
        }
        let context = subject.context(HookEvent::PreToolUse);
        let mut allow = None;
        for (index, hook) in self.matching(HookEvent::PreToolUse, subject) {
            let run = self.run_one(index, hook, &context, subject, cancel).await;
            let said = match &run.outcome {
                HookOutcome::Decided {
                    decision: HookAnswer::Deny,
                    reason,
                } => Some((HookVerdict::Deny, reason.clone())),
                HookOutcome::Decided {
                    decision: HookAnswer::Allow,
                    reason,
                } => Some((HookVerdict::Allow, reason.clone())),
                HookOutcome::Decided {
                    decision: HookAnswer::Defer,
                    ..
                }
                | HookOutcome::Ran
                | HookOutcome::Warning(_) => None,
            };
            let decision = said.map(|(verdict, reason)| HookDecision {
                verdict,
                by: run.label(),
                reason,
            });
            self.publish(run.clone());
            runs.push(run);
            match decision {
                Some(d) if d.verdict == HookVerdict::Deny => return (Some(d), runs),
                Some(d) if allow.is_none() => allow = Some(d),
                Some(_) | None => {}
            }
            if cancel.is_cancelled() {
                break;
            }
        }
        (allow, runs)
    }

    /// Runs the hooks of `event` that match `subject`, in order, and returns their runs (each
    /// also published). Decisions are not read: only `pre_tool_use` decides.
    pub(crate) async fn run_event(
        &self,
        event: HookEvent,
        subject: &Subject<'_>,
        cancel: &CancellationToken,
    ) -> Vec<HookRun> {
        if !self.has(event) {
            return Vec::new();
        }
        let context = subject.context(event);
        let mut runs = Vec::new();
        for (index, hook) in self.matching(event, subject) {
            if cancel.is_cancelled() {
                break;
            }
            let run = self.run_one(index, hook, &context, subject, cancel).await;
            self.publish(run.clone());
            runs.push(run);
        }
        runs
    }

    /// The token a hook run outside any call stops on (the runtime closing).
    pub(crate) fn stop_token(&self) -> CancellationToken {
        self.stop.child_token()
    }

    /// Runs the hooks of `event` in the background (server and session events never hold up
    /// what reported them). Nothing starts once the runtime is closing.
    fn spawn(self: &Arc<Self>, event: HookEvent, subject: Subject<'static>) {
        if !self.has(event) || self.stop.is_cancelled() {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(event = event.as_str(), "no async runtime to run hooks on");
            return;
        };
        let hooks = self.clone();
        self.background.spawn_on(
            async move {
                let cancel = hooks.stop_token();
                hooks.run_event(event, &subject, &cancel).await;
            },
            &handle,
        );
    }

    /// `session_start`, in the background.
    pub(crate) fn session_start(self: &Arc<Self>, servers: Vec<String>) {
        self.spawn(HookEvent::SessionStart, Subject::Session(servers));
    }

    /// The manager's event sink with the server events' hooks behind it: a start that ended
    /// ready or failed runs `server_ready` or `server_failed` hooks, after the event itself.
    pub(crate) fn sink(self: &Arc<Self>, inner: EventSink) -> EventSink {
        if !self.has(HookEvent::ServerReady) && !self.has(HookEvent::ServerFailed) {
            return inner;
        }
        let hooks = self.clone();
        Arc::new(move |event: McpEvent| {
            let report = match &event {
                McpEvent::ServerStarted(report) => Some(report.as_ref().clone()),
                McpEvent::PhaseStarted { .. }
                | McpEvent::Stderr { .. }
                | McpEvent::ServerClosed { .. }
                | McpEvent::ServerRequest { .. }
                | McpEvent::ElicitationRequested(_)
                | McpEvent::SamplingRequested(_)
                | McpEvent::ServerDown { .. }
                | McpEvent::RestartScheduled { .. }
                | McpEvent::GaveUp { .. } => None,
            };
            inner(event);
            if let Some(report) = report {
                let event = match report.status {
                    ServerStatus::Ready => HookEvent::ServerReady,
                    ServerStatus::Failed => HookEvent::ServerFailed,
                    ServerStatus::Starting | ServerStatus::Disabled | ServerStatus::Idle => return,
                };
                hooks.spawn(event, Subject::Server(Box::new(report)));
            }
        })
    }

    /// Stops every hook still running (their processes killed, their calls cancelled) and waits
    /// a moment for them to end.
    pub(crate) async fn close(&self) -> Result<(), String> {
        self.stop.cancel();
        self.background.close();
        tokio::time::timeout(CLOSE_WAIT, self.background.wait())
            .await
            .map_err(|_| format!("hooks still running after {}", fmt_duration(CLOSE_WAIT)))
    }

    fn publish(&self, run: HookRun) {
        if let HookOutcome::Warning(why) = &run.outcome {
            tracing::warn!(hook = %run.label(), event = run.event.as_str(), %why, "hook failed; going on as if it said nothing");
        }
        self.bus.send(RuntimeEvent::HookRan(run));
    }

    /// Runs one hook on the event `context` (its JSON) and says how it went.
    async fn run_one(
        &self,
        index: usize,
        hook: &HookConfig,
        context: &Value,
        subject: &Subject<'_>,
        cancel: &CancellationToken,
    ) -> HookRun {
        let started = Instant::now();
        let decides = hook.event == HookEvent::PreToolUse;
        let outcome = match &hook.action {
            HookAction::McpTool {
                server,
                tool,
                arguments,
            } => {
                let arguments = template::render(arguments, context);
                match self
                    .call_tool(server, tool, arguments, hook.timeout, cancel)
                    .await
                {
                    Err(why) => HookOutcome::Warning(why),
                    Ok(result) if result.is_error => HookOutcome::Warning(format!(
                        "{server}/{tool} answered an error: {}",
                        result.text.trim()
                    )),
                    Ok(result) if decides => {
                        outcome_of(answer::read(result.structured.as_ref(), &result.text))
                    }
                    Ok(_) => HookOutcome::Ran,
                }
            }
            HookAction::Command { argv, cwd } => {
                let stdin = serde_json::to_vec(context).unwrap_or_default();
                let ran =
                    command::run(argv, cwd, stdin, hook.event.as_str(), hook.timeout, cancel).await;
                command_outcome(ran, decides, hook.timeout)
            }
        };
        let outcome = match outcome {
            HookOutcome::Decided { decision, reason } => HookOutcome::Decided {
                decision,
                reason: reason.map(|r| truncate(&r, TEXT_CHARS)),
            },
            HookOutcome::Warning(why) => HookOutcome::Warning(truncate(&why, TEXT_CHARS)),
            HookOutcome::Ran => HookOutcome::Ran,
        };
        let (call, tool, server) = subject.identity();
        HookRun {
            hook: index,
            event: hook.event,
            action: hook.action.describe(),
            call,
            tool,
            server,
            elapsed: started.elapsed(),
            outcome,
        }
    }

    /// The registered tool `tool` of `server` (the server's own name for it).
    fn find(&self, server: &str, tool: &str) -> Option<Arc<dyn Tool>> {
        self.registry.snapshot().values().find_map(|t| {
            t.descriptor()
                .origin
                .as_ref()
                .is_some_and(|o| o.server == server && o.tool == tool)
                .then(|| t.clone())
        })
    }

    /// Finds the hook's tool, waiting (within `timeout`) for its server if it is still
    /// starting; then calls it, within what is left of `timeout`. `Err` is the warning.
    async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<ToolResult, String> {
        let deadline = tokio::time::Instant::now() + timeout;
        let timed_out = || format!("timed out after {}", fmt_duration(timeout));
        let found = match self.find(server, tool) {
            Some(found) => found,
            None => {
                let manager = self.manager.get().and_then(Weak::upgrade);
                let report = manager
                    .as_ref()
                    .and_then(|m| m.reports().into_iter().find(|r| r.name == server));
                let report = match (report, manager) {
                    (Some(r), Some(m)) if r.status == ServerStatus::Starting => {
                        tokio::select! {
                            report = m.wait_for(server) => report,
                            () = tokio::time::sleep_until(deadline) => {
                                return Err(format!("{} waiting for server {server} to start", timed_out()));
                            }
                            () = cancel.cancelled() => return Err(stopped()),
                        }
                    }
                    (report, _) => report,
                };
                match self.find(server, tool) {
                    Some(found) => found,
                    None => return Err(missing(server, tool, report.as_ref())),
                }
            }
        };
        let descriptor = found.descriptor().clone();
        // The ceiling and deny rules hold for a hook's own call too; nobody is asked.
        match self.gate.decide(&descriptor, None) {
            GateVerdict::Deny { why } | GateVerdict::Refuse { why } => {
                return Err(format!("the hook's own call was not allowed: {why}"));
            }
            GateVerdict::Run { .. } | GateVerdict::Ask { .. } => {}
        }
        let arguments = Value::Object(arguments);
        if let Err(problems) = schema::validate(descriptor.input_schema.parsed(), &arguments) {
            return Err(format!(
                "its arguments do not match the input schema of {server}/{tool}: {}",
                problems.join("; ")
            ));
        }
        let input = ToolInput::from_value(arguments)?;
        let call_cancel = cancel.child_token();
        let ctx = ToolContext {
            cancel: call_cancel.clone(),
            progress: ProgressSink::none(),
        };
        // In a task of its own: at the timeout it is cancelled (its server is told) and left to
        // end by itself, while the hook returns at once.
        let mut call = tokio::spawn(async move { found.execute(input, ctx).await });
        tokio::select! {
            joined = &mut call => match joined {
                Ok(_) if cancel.is_cancelled() => Err(stopped()),
                Ok(result) => Ok(result),
                Err(e) => Err(format!("its call of {server}/{tool} failed: {e}")),
            },
            () = tokio::time::sleep_until(deadline) => {
                call_cancel.cancel();
                Err(timed_out())
            }
        }
    }
}

/// The warning for a call stopped from outside.
fn stopped() -> String {
    "stopped: its call was cancelled or the runtime closed".to_string()
}

/// Why the tool of an `mcp_tool` hook is not there.
fn missing(server: &str, tool: &str, report: Option<&ServerReport>) -> String {
    match report.map(|r| (r.status, r.failure.as_ref())) {
        None => format!("server {server} is not configured"),
        Some((ServerStatus::Ready | ServerStatus::Idle, _)) => {
            format!("server {server} has no tool {tool}")
        }
        Some((ServerStatus::Failed, Some(failure))) => format!(
            "server {server} is down ({}: {})",
            failure.class.as_str(),
            failure.message
        ),
        Some((ServerStatus::Failed, None)) => format!("server {server} is down"),
        Some((ServerStatus::Disabled, _)) => format!("server {server} is disabled"),
        Some((ServerStatus::Starting, _)) => format!("server {server} is still starting"),
    }
}

fn outcome_of(answer: Answer) -> HookOutcome {
    match answer {
        Answer::Decision { decision, reason } => HookOutcome::Decided { decision, reason },
        Answer::Nothing => HookOutcome::Ran,
        Answer::Unreadable(why) => HookOutcome::Warning(why),
    }
}

/// A command hook's ending as an outcome: exit 0 with its stdout read (when the event
/// decides), exit 2 a deny with stderr as the reason (likewise), anything else a warning.
fn command_outcome(ran: Ran, decides: bool, timeout: Duration) -> HookOutcome {
    match ran {
        Ran::Exited {
            code: Some(0),
            stdout,
            ..
        } => {
            if decides {
                outcome_of(answer::read(None, &stdout))
            } else {
                HookOutcome::Ran
            }
        }
        Ran::Exited {
            code: Some(2),
            stderr,
            ..
        } if decides => HookOutcome::Decided {
            decision: HookAnswer::Deny,
            reason: Some(stderr.trim().to_string()).filter(|r| !r.is_empty()),
        },
        Ran::Exited {
            code: Some(code),
            stderr,
            ..
        } => {
            let said = stderr.trim();
            HookOutcome::Warning(if said.is_empty() {
                format!("exited with code {code}")
            } else {
                format!("exited with code {code}: {said}")
            })
        }
        Ran::Exited {
            code: None, signal, ..
        } => HookOutcome::Warning(match signal {
            Some(signal) => format!("killed by signal {signal}"),
            None => "exited (status unknown)".to_string(),
        }),
        Ran::TimedOut => HookOutcome::Warning(format!(
            "timed out after {}; its process group was killed",
            fmt_duration(timeout)
        )),
        Ran::Cancelled => HookOutcome::Warning(stopped()),
        Ran::SpawnFailed(why) => HookOutcome::Warning(why),
    }
}
