//! The call path: look the tool up, check its arguments, run the `pre_tool_use` hooks, ask the
//! gate, wait for the operator when the gate says so, run the tool, run the `post_tool_use`
//! hooks. Local and MCP tools go the same way (docs/ARCHITECTURE.md §1).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::bus::EventBus;
use super::call::{Approval, CallOutcome, CallStatus};
use super::events::RuntimeEvent;
use super::hooks::{HookRun, Hooks, Subject};
use crate::approval::{
    AnsweredBy, ApprovalDecision, ApprovalGate, ApprovalRequest, CallOrigin, GateVerdict,
};
use crate::config::HookEvent;
use crate::tool::{schema, ProgressSink, ToolContext, ToolInput, ToolRegistry, ToolResult};

/// Runs calls for one runtime.
pub(crate) struct Executor {
    pub(crate) registry: Arc<ToolRegistry>,
    pub(crate) gate: Arc<ApprovalGate>,
    /// `pre_tool_use` hooks run before the gate decides, `post_tool_use` hooks after the tool.
    pub(crate) hooks: Arc<Hooks>,
    pub(crate) bus: EventBus,
    pub(crate) next_id: AtomicU64,
    /// Parent of every call's cancellation: cancelled when the runtime closes.
    pub(crate) all_calls: CancellationToken,
    /// The cancellation of every call still running, by id (`AgentRuntime::cancel_call`).
    pub(crate) running: Mutex<HashMap<u64, CancellationToken>>,
}

/// What a call's outcome says besides its status and result: how its approval was answered,
/// and the hooks that ran for it.
#[derive(Default)]
struct Notes {
    approval: Option<Approval>,
    allowed: Option<String>,
    hooks: Vec<HookRun>,
}

/// Keeps a call in `Executor::running` until it ends (or its future is dropped).
struct Running<'a> {
    executor: &'a Executor,
    id: u64,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.executor.running().remove(&self.id);
    }
}

impl Executor {
    pub(crate) async fn call(
        &self,
        tool_name: &str,
        arguments: Value,
        cancel: CancellationToken,
        origin: CallOrigin,
        progress: Option<ProgressSink>,
    ) -> CallOutcome {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let started = Instant::now();
        self.running().insert(id, cancel.clone());
        let _running = Running { executor: self, id };
        self.bus.send(RuntimeEvent::CallStarted {
            id,
            tool: tool_name.to_string(),
            arguments: arguments.clone(),
            origin: origin.clone(),
        });
        let mut notes = Notes::default();
        let (status, result) = self
            .decide_and_run(
                id,
                tool_name,
                arguments,
                (cancel, progress),
                origin,
                &mut notes,
            )
            .await;
        let outcome = CallOutcome {
            id,
            tool: tool_name.to_string(),
            status,
            result,
            elapsed: started.elapsed(),
            approval: notes.approval,
            allowed: notes.allowed,
            hooks: notes.hooks,
        };
        self.bus.send(RuntimeEvent::CallFinished {
            id,
            status,
            result: outcome.result.clone(),
            elapsed_ms: crate::text::millis(outcome.elapsed),
        });
        outcome
    }

    /// No tool of that name: the error says the nearest names (a server's tool named
    /// without its `mcp__` prefix, or a slip of a few letters).
    fn no_such_tool(&self, name: &str) -> String {
        let tools = self.registry.snapshot();
        let prefixed = format!("mcp__{name}");
        let near = if tools.contains_key(&prefixed) {
            vec![prefixed.as_str()]
        } else {
            crate::text::nearest(name, tools.keys().map(String::as_str))
        };
        let hint = if near.is_empty() {
            String::new()
        } else {
            format!(" (did you mean {}?)", near.join(" or "))
        };
        format!("no tool named {name}{hint}; `aimon-console tools` lists them")
    }

    async fn decide_and_run(
        &self,
        id: u64,
        tool_name: &str,
        arguments: Value,
        (cancel, also): (CancellationToken, Option<ProgressSink>),
        origin: CallOrigin,
        notes: &mut Notes,
    ) -> (CallStatus, ToolResult) {
        let Some(tool) = self.registry.get(tool_name) else {
            return (
                CallStatus::Error,
                ToolResult::error(self.no_such_tool(tool_name)),
            );
        };
        // A call that cannot run is not put to anyone.
        if let Some(why) = tool.unavailable() {
            return (CallStatus::Error, ToolResult::error(why));
        }
        let descriptor = tool.descriptor();
        if let Err(problems) = schema::validate(descriptor.input_schema.parsed(), &arguments) {
            return (
                CallStatus::Error,
                ToolResult::error(format!(
                    "arguments do not match the input schema of {tool_name}: {}",
                    problems.join("; ")
                )),
            );
        }
        let input = match ToolInput::from_value(arguments) {
            Ok(input) => input,
            Err(why) => return (CallStatus::Error, ToolResult::error(why)),
        };
        // The hooks say their piece first; the gate weighs it (a deny holds, nothing passes
        // the ceiling).
        let hooked = if self.hooks.has(HookEvent::PreToolUse) {
            let arguments = Value::Object(input.0.clone());
            let subject = Subject::Call {
                id,
                tool: descriptor,
                arguments: &arguments,
                after: None,
                pin: self.gate.pin_state(descriptor),
            };
            let (decision, runs) = self.hooks.pre_tool_use(&subject, &cancel).await;
            notes.hooks = runs;
            if cancel.is_cancelled() {
                return (
                    CallStatus::Cancelled,
                    ToolResult::error("cancelled while its pre_tool_use hooks ran"),
                );
            }
            decision
        } else {
            None
        };
        match self.gate.decide(descriptor, hooked.as_ref()) {
            GateVerdict::Refuse { why } => return (CallStatus::Refused, ToolResult::error(why)),
            GateVerdict::Deny { why } => return (CallStatus::Denied, ToolResult::error(why)),
            GateVerdict::Run { why, by } => {
                if by.is_notable() {
                    let why = why.into_owned();
                    notes.allowed = Some(why.clone());
                    self.bus.send(RuntimeEvent::CallAllowed { id, why });
                }
            }
            GateVerdict::Ask { why } => {
                self.bus.send(RuntimeEvent::CallStatus {
                    id,
                    status: CallStatus::AwaitingApproval,
                });
                let arguments = Value::Object(input.0.clone());
                let (request, reply) =
                    ApprovalRequest::new(id, descriptor.clone(), arguments, why.clone());
                let request = request
                    .with_origin(origin)
                    .with_change(self.gate.pin_change(descriptor));
                let by = request.answered_by();
                self.bus.send(RuntimeEvent::ApprovalRequested(request));
                let (decision, by) = tokio::select! {
                    decision = reply => match decision {
                        Ok(decision) => (decision, by.get().copied().unwrap_or(AnsweredBy::Operator)),
                        Err(_) => (ApprovalDecision::Deny, AnsweredBy::Unanswered),
                    },
                    () = cancel.cancelled() => {
                        return (CallStatus::Cancelled, ToolResult::error("cancelled while awaiting approval"));
                    }
                };
                notes.approval = Some(Approval { decision, by });
                // A turn boundary may have swapped the tool while the operator was deciding:
                // then what was approved is not what would run. Otherwise the gate pins what
                // was approved (before the answer is told, so the console shows the new pin);
                // the rule that always allows it is the console's to write (`A`).
                let swapped = decision.allows() && !self.still_registered(tool_name, &tool);
                if decision.allows() && !swapped {
                    if let Err(e) = self.gate.record(descriptor, decision) {
                        tracing::warn!(tool = %tool_name, error = %e, "session approval not remembered");
                    }
                }
                self.bus
                    .send(RuntimeEvent::ApprovalAnswered { id, decision, by });
                match decision {
                    // Refused: nobody could say yes or no. Denied: someone said no.
                    ApprovalDecision::Deny => {
                        return match by {
                            AnsweredBy::NoTerminal => (
                                CallStatus::Refused,
                                ToolResult::error(format!(
                                    "nobody could be asked: {why}, and there is no terminal to ask on (pass --yes to approve)"
                                )),
                            ),
                            AnsweredBy::Unanswered => (
                                CallStatus::Refused,
                                ToolResult::error(format!(
                                    "nobody answered: {why}, and its question went unanswered (cancelled, or the asker went away: a quit, a restart, Ctrl-C)"
                                )),
                            ),
                            AnsweredBy::Unattended => (
                                CallStatus::Refused,
                                ToolResult::error(format!(
                                    "refused: nobody is at a console to approve it: {why} (gateway.unattended: rules lets through only what rules and hooks allow)"
                                )),
                            ),
                            AnsweredBy::Operator | AnsweredBy::YesFlag => (
                                CallStatus::Denied,
                                ToolResult::error(format!("denied by the operator: {tool_name}")),
                            ),
                        };
                    }
                    ApprovalDecision::AllowOnce
                    | ApprovalDecision::AllowForSession
                    | ApprovalDecision::AllowAlways
                        if swapped =>
                    {
                        return (
                            CallStatus::Error,
                            ToolResult::error(format!(
                                "{tool_name} changed while awaiting approval (its server's tool list was refreshed); call it again to approve the new version"
                            )),
                        );
                    }
                    ApprovalDecision::AllowOnce
                    | ApprovalDecision::AllowForSession
                    | ApprovalDecision::AllowAlways => {}
                }
            }
        }
        self.bus.send(RuntimeEvent::CallStatus {
            id,
            status: CallStatus::Running,
        });
        let bus = self.bus.clone();
        let ctx = ToolContext {
            cancel: cancel.clone(),
            // Published for the console, and told whoever asked for it too (a host).
            progress: ProgressSink::new(move |update| {
                if let Some(also) = &also {
                    also.report(update.clone());
                }
                bus.send(RuntimeEvent::CallProgress {
                    id,
                    progress: update.progress,
                    total: update.total,
                    message: update.message,
                })
            }),
        };
        let post = self
            .hooks
            .has(HookEvent::PostToolUse)
            .then(|| Value::Object(input.0.clone()));
        let result = tool.execute(input, ctx).await;
        let status = if cancel.is_cancelled() {
            CallStatus::Cancelled
        } else if result.is_error {
            CallStatus::Error
        } else {
            CallStatus::Ok
        };
        if let Some(arguments) = post {
            let subject = Subject::Call {
                id,
                tool: descriptor,
                arguments: &arguments,
                after: Some((status, &result)),
                pin: self.gate.pin_state(descriptor),
            };
            // A cancelled call's hooks still run: they are told it was cancelled.
            let cancel = self.hooks.stop_token();
            let runs = self
                .hooks
                .run_event(HookEvent::PostToolUse, &subject, &cancel)
                .await;
            notes.hooks.extend(runs);
        }
        (status, result)
    }

    /// Cancels running call `id`; false when no such call is running.
    pub(crate) fn cancel(&self, id: u64) -> bool {
        match self.running().get(&id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    fn running(&self) -> MutexGuard<'_, HashMap<u64, CancellationToken>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `tool` is still the one registered under `name`.
    fn still_registered(&self, name: &str, tool: &Arc<dyn crate::tool::Tool>) -> bool {
        self.registry
            .get(name)
            .is_some_and(|now| Arc::ptr_eq(&now, tool))
    }
}
