//! The loop: a prompt goes to the model; each tool call it asks for goes through
//! `AgentRuntime::call_from` (the one gate, ledger and event stream); what the calls gave goes
//! back as tool messages; again, until a final answer, `max_turns`, or a cancel.
//!
//! The last turn `max_turns` allows asks the model to answer in words (`tool_choice: none`);
//! a model that calls tools even then is stopped there, its calls not run.
//!
//! The prompt runs the `user_prompt` hooks, each turn's end the `turn_end` hooks; the hooks
//! of each call (`pre_tool_use`, `post_tool_use`) come back with its outcome, and every run
//! goes into the transcript.
//!
//! The model's tool list changes only between model turns: before each turn the loop calls the
//! runtime's `turn_boundary` and takes the tool list then, and a call to a tool not in that
//! turn's list is an error the model is told about, whatever the registry holds by then.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::client::{ModelClient, ModelEvent};
use super::events::{AgentEvent, PromptOutcome, PromptReport, ToolCallStatus};
use super::stream::{ModelReply, StreamPiece};
use super::transcript::{now_ms, Record, Transcript};
use super::turn::{History, Item, ToolCall, ToolChoice, ToolList, ToolSpec, Usage};
use crate::config::HookEvent;
use crate::runtime::{AgentRuntime, CallOutcome, HookRun};
use crate::tool::registry::ToolSnapshot;
use crate::tool::Tool;

/// Settings of a conversation that come from its model profile.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationSettings {
    pub system_prompt: String,
    pub max_turns: u32,
    /// The model's context window (tokens), when known: the meter's whole, and when to compact.
    pub context_window: Option<u32>,
    /// The room an answer needs (the profile's `max_tokens`).
    pub max_tokens: Option<u32>,
    /// A tool result over this many tokens reaches the model cut (`read_result` reads on).
    pub max_result_tokens: u32,
    /// When the model is offered `search_tools` instead of every definition.
    pub tool_search: crate::config::ToolSearch,
}

impl ConversationSettings {
    /// `system_prompt` and `max_turns`, the rest at the profile defaults.
    pub fn new(system_prompt: impl Into<String>, max_turns: u32) -> Self {
        ConversationSettings {
            system_prompt: system_prompt.into(),
            max_turns,
            context_window: None,
            max_tokens: None,
            max_result_tokens: crate::config::DEFAULT_MAX_RESULT_TOKENS,
            tool_search: crate::config::ToolSearch::default(),
        }
    }

    /// The settings of `profile`.
    pub fn of(profile: &crate::config::ModelProfile) -> Self {
        ConversationSettings {
            system_prompt: profile.system_prompt.clone(),
            max_turns: profile.max_turns,
            context_window: profile.context_window,
            max_tokens: profile.max_tokens,
            max_result_tokens: profile.max_result_tokens,
            tool_search: profile.tool_search,
        }
    }
}

/// One conversation with a model over one runtime's tools.
pub struct Conversation {
    runtime: Arc<AgentRuntime>,
    client: Arc<dyn ModelClient>,
    settings: ConversationSettings,
    /// The system prompt, then the conversation.
    history: History,
    events: UnboundedSender<AgentEvent>,
    /// Behind a lock only so that a turn's calls, which hold the conversation shared, can
    /// write it as they begin to wait ([`Conversation::write_shared`]); nothing contends for it.
    transcript: Mutex<Option<Transcript>>,
    /// The tool list of the last turn, made again only when the registry changed (the snapshot
    /// held here makes every change a new one) or a tool's server went down or came back.
    tools: Option<OfferedTools>,
    /// Names the results kept for `read_result`: the transcript's id, or one of its kind.
    session: String,
    /// How far the endpoint's count of the last request was above the estimate of it: of a
    /// request that could call tools, and of one asked to answer in words.
    calibration: [f64; 2],
    /// The tools found through `search_tools`, offered from then on.
    found: search::Found,
    /// Whether a result of the prompt in flight was cut for the model (`read_result` is
    /// offered then).
    cut_in_prompt: bool,
    /// How many of the history's items the estimate has counted, and their tokens.
    items_tokens: (usize, u64),
}

/// A turn's tool list and what it was made from.
struct OfferedTools {
    snapshot: ToolSnapshot,
    /// Per tool of `snapshot`, in its order: whether it could not be called (its server down).
    down: Vec<bool>,
    /// How many tools the model had found (tool search).
    found: usize,
    /// Whether `read_result` was offered.
    cut: bool,
    /// The estimated tokens of the definitions offered.
    tokens: u64,
    specs: Arc<ToolList>,
}

impl std::fmt::Debug for Conversation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conversation")
            .field("messages", &self.history.len())
            .field("settings", &self.settings)
            .finish()
    }
}

/// The most of a turn's text each of its calls carries as its reason (bytes).
pub const MAX_REASON_BYTES: usize = 2048;

/// `text` as a call's reason: its first [`MAX_REASON_BYTES`], cut at a character boundary
/// and marked with `…` where it was cut.
fn reason_of(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= MAX_REASON_BYTES {
        return text.into();
    }
    let mut end = MAX_REASON_BYTES - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end]).into()
}

/// What one tool call gave, for the model and the transcript.
struct CallResult {
    status: ToolCallStatus,
    content: String,
    outcome: Option<CallOutcome>,
}

impl Conversation {
    /// A conversation that continues `history` (empty for a new one; see
    /// `transcript::items` for a resumed one), writing to `transcript` if given.
    pub fn new(
        runtime: Arc<AgentRuntime>,
        client: Arc<dyn ModelClient>,
        settings: ConversationSettings,
        history: Vec<Item>,
        events: UnboundedSender<AgentEvent>,
        transcript: Option<Transcript>,
    ) -> Self {
        let history = History::new(Some(settings.system_prompt.clone()), history);
        let session = transcript
            .as_ref()
            .map_or_else(super::transcript::new_id, |t| t.id().to_string());
        Conversation {
            runtime,
            client,
            settings,
            history,
            events,
            transcript: Mutex::new(transcript),
            tools: None,
            session,
            calibration: [1.0, 1.0],
            found: search::Found::default(),
            cut_in_prompt: false,
            items_tokens: (0, 0),
        }
    }

    /// Speaks to the model through `client` from the next request on (the same profile's
    /// endpoint, started again after the one before failed).
    pub fn set_client(&mut self, client: Arc<dyn ModelClient>) {
        self.client = client;
    }

    /// The conversation so far (without the system prompt).
    pub fn items(&self) -> &[Item] {
        self.history.items()
    }

    fn emit(&self, event: AgentEvent) {
        // A driver that went away stops listening, not the loop.
        let _ = self.events.send(event);
    }

    /// The turn's calls as the model asked for them, each with the turn's stated reason.
    fn emit_calls(&self, turn: u32, calls: &[ToolCall], reason: &str) {
        for call in calls {
            self.emit(AgentEvent::ToolCall {
                turn,
                call_id: call.id.clone(),
                tool: call.name.clone(),
                arguments: call.arguments.clone(),
                reason: reason.to_string(),
            });
        }
    }

    /// Runs one prompt to its end. `cancel` ends it at once: the model request is dropped and
    /// running calls are cancelled (their servers are sent `notifications/cancelled`); the
    /// conversation can take the next prompt afterwards.
    pub async fn prompt(&mut self, text: &str, cancel: CancellationToken) -> PromptReport {
        self.cut_in_prompt = false;
        // A prompt the model never answered leaves the history as it was: kept, the next
        // prompt would follow it as a second user message in a row, which the chat templates
        // that want user and assistant to alternate (Mistral's, Gemma's) refuse.
        self.history.push(Item::User {
            text: text.to_string(),
        });
        self.record(Record::Prompt {
            at_ms: now_ms(),
            text: text.to_string(),
        });
        for run in self.runtime.user_prompt_hooks(text, &cancel).await {
            self.record(Record::hook(&run, None, None));
        }
        let mut report = PromptReport {
            outcome: PromptOutcome::Cancelled,
            turns: 0,
            tool_failures: 0,
            usage: Usage::default(),
        };
        loop {
            report.turns += 1;
            let turn = report.turns;
            // The last turn max_turns allows asks for an answer in words.
            let last = turn >= self.settings.max_turns;
            let choice = if last {
                ToolChoice::None
            } else {
                ToolChoice::Auto
            };
            // The turn boundary: list changes are taken in here, and only here for the model.
            self.runtime.turn_boundary().await;
            let specs = self.tool_specs();
            self.make_room(choice, &cancel).await;
            self.emit(AgentEvent::TurnStarted {
                turn,
                tools: specs.names().clone(),
            });
            let started = Instant::now();
            // Whether any of the reply's text came as it streamed.
            let streamed = std::sync::atomic::AtomicBool::new(false);
            let reply = {
                let events = self.events.clone();
                let streamed = &streamed;
                let forward = move |event: ModelEvent| {
                    let _ = events.send(match event {
                        ModelEvent::Piece(StreamPiece::Text(text)) => {
                            streamed.store(true, std::sync::atomic::Ordering::Relaxed);
                            AgentEvent::TextDelta { turn, text }
                        }
                        ModelEvent::Piece(StreamPiece::ToolCall { .. }) => return,
                        ModelEvent::Retrying {
                            attempt,
                            max,
                            delay,
                            error,
                        } => AgentEvent::Retrying {
                            turn,
                            attempt,
                            max,
                            delay,
                            error,
                        },
                        ModelEvent::Countdown { remaining } => {
                            AgentEvent::RetryCountdown { turn, remaining }
                        }
                    });
                };
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => None,
                    reply = calls::after_first_poll(
                        self.client.complete(&self.history, &specs, choice, &forward),
                        || self.write_shared(),
                    ) => Some(reply),
                }
            };
            if turn == 1 && !matches!(reply, Some(Ok(_))) {
                self.history.drop_last_prompt();
                self.items_tokens = (0, 0);
            }
            let reply = match reply {
                None => {
                    return self.stop(
                        report,
                        PromptOutcome::Cancelled,
                        "cancelled by the operator".into(),
                    )
                }
                Some(Err(error)) => {
                    let message = error.to_string();
                    return self.stop(report, PromptOutcome::ModelFailed(error), message);
                }
                Some(Ok(reply)) => reply,
            };
            if let Some(usage) = &reply.usage {
                report.usage.add(usage);
            }
            let latency = started.elapsed();
            // A reply that did not stream (`stream: false`, or an endpoint that answered whole)
            // comes to the drivers as one piece, whole: its text would otherwise reach them
            // only as the calls' reasons, cut at `MAX_REASON_BYTES`.
            if !streamed.into_inner() && !reply.text.is_empty() {
                self.emit(AgentEvent::TextDelta {
                    turn,
                    text: reply.text.clone(),
                });
            }
            self.emit(AgentEvent::TurnEnded {
                turn,
                finish_reason: reply.finish_reason.clone(),
                usage: reply.usage,
                latency,
            });
            self.record(Record::Assistant {
                turn,
                text: reply.text.clone(),
                reasoning: reply.reasoning.clone(),
                tool_calls: reply.tool_calls.clone(),
                finish_reason: reply.finish_reason.clone(),
                usage: reply.usage,
                latency_ms: u64::try_from(latency.as_millis()).unwrap_or(u64::MAX),
            });
            let reply_usage = reply.usage;
            let ModelReply {
                text,
                reasoning,
                tool_calls,
                ..
            } = reply;
            self.history
                .push(Item::assistant(text.clone(), reasoning, tool_calls.clone()));
            self.measured(
                reply_usage.map(|u| u.input_tokens),
                reply_usage.map_or(0, |u| u.output_tokens),
                choice,
            );
            if tool_calls.is_empty() {
                self.turn_end(turn, &cancel).await;
                self.emit(AgentEvent::Answer { text: text.clone() });
                self.record(Record::Answer { text: text.clone() });
                self.sync();
                report.outcome = PromptOutcome::Answered { text };
                return report;
            }
            // The turn's text, as each call's stated reason: cut short, for it is copied into
            // every call's record, event and approval request (the whole text is recorded
            // once, in the turn's `assistant` record).
            let reason = reason_of(&text);
            for call in &tool_calls {
                self.record(Record::ToolCall {
                    turn,
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    arguments: call.arguments.clone(),
                    reason: reason.to_string(),
                });
            }
            let results = if last {
                // Asked to answer in words, it called tools anyway: none is run.
                let not_run = "not run: the agent reached max_turns before this call";
                self.emit_calls(turn, &tool_calls, &reason);
                tool_calls
                    .iter()
                    .map(|_| CallResult {
                        status: ToolCallStatus::NotRun,
                        content: not_run.to_string(),
                        outcome: None,
                    })
                    .collect()
            } else {
                self.run_calls(turn, &tool_calls, &specs, &reason, &cancel)
                    .await
            };
            for (call, result) in tool_calls.iter().zip(results) {
                match result.status {
                    ToolCallStatus::Ok | ToolCallStatus::NotRun => {}
                    ToolCallStatus::Error
                    | ToolCallStatus::Denied
                    | ToolCallStatus::Refused
                    | ToolCallStatus::Cancelled
                    | ToolCallStatus::UnknownTool
                    | ToolCallStatus::BadArguments => report.tool_failures += 1,
                }
                let runtime_id = result.outcome.as_ref().map(|o| o.id);
                let hooks = result.outcome.as_ref().map_or(&[][..], |o| &o.hooks[..]);
                let (before, after): (Vec<&HookRun>, Vec<&HookRun>) = hooks
                    .iter()
                    .partition(|run| run.event == HookEvent::PreToolUse);
                for run in before {
                    self.record(Record::hook(run, Some(turn), Some(&call.id)));
                }
                if let Some(approval) = result.outcome.as_ref().and_then(|o| o.approval) {
                    self.record(Record::Approval {
                        call_id: call.id.clone(),
                        runtime_id,
                        decision: approval.decision.as_str().to_string(),
                        by: approval.by.as_str().to_string(),
                    });
                }
                if let Some(why) = result.outcome.as_ref().and_then(|o| o.allowed.clone()) {
                    self.record(Record::Allowed {
                        call_id: call.id.clone(),
                        runtime_id,
                        why,
                    });
                }
                for run in after {
                    self.record(Record::hook(run, Some(turn), Some(&call.id)));
                }
                let sent = self.budgeted(turn, &call.id, &result.content);
                self.record(Record::ToolResult {
                    turn,
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    runtime_id,
                    status: result.status.as_str().to_string(),
                    content: result.content.clone(),
                    sent: sent.clone(),
                });
                self.emit(AgentEvent::ToolResult {
                    turn,
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    runtime_id,
                    status: result.status,
                    content: result.content.clone(),
                });
                self.history.push(Item::ToolResult {
                    call_id: call.id.clone(),
                    text: sent.unwrap_or(result.content),
                });
            }
            if cancel.is_cancelled() {
                return self.stop(
                    report,
                    PromptOutcome::Cancelled,
                    "cancelled by the operator".into(),
                );
            }
            self.turn_end(turn, &cancel).await;
            if last {
                return self.stop(
                    report,
                    PromptOutcome::MaxTurns { turns: turn },
                    format!("stopped after {turn} model turns (max_turns) without a final answer: the model kept calling tools"),
                );
            }
        }
    }

    /// The tools as the model sees them this turn: the registry's now, less those that cannot
    /// be called (their server down: a call would only fail), the list made again only if
    /// either changed since the last turn.
    fn tool_specs(&mut self) -> Arc<ToolList> {
        let snapshot = self.runtime.tool_snapshot();
        let down = |tool: &Arc<dyn Tool>| tool.unavailable().is_some();
        let found = self.found_count();
        if let Some(held) = &self.tools {
            if Arc::ptr_eq(&held.snapshot, &snapshot)
                && held.found == found
                && held.cut == self.cut_in_prompt
                && held.down.iter().copied().eq(snapshot.values().map(down))
            {
                return held.specs.clone();
            }
        }
        let down: Vec<bool> = snapshot.values().map(down).collect();
        let specs: Vec<ToolSpec> = snapshot
            .values()
            .zip(&down)
            .filter(|(_, down)| !**down)
            .map(|(tool, _)| {
                let t = tool.descriptor();
                ToolSpec {
                    name: t.name.clone(),
                    description: t.description.clone(),
                    parameters: t.input_schema.to_value(),
                }
            })
            .collect();
        let specs = Arc::new(ToolList::new(self.offer(specs)));
        self.tools = Some(OfferedTools {
            snapshot,
            down,
            found,
            cut: self.cut_in_prompt,
            tokens: specs.specs().iter().map(super::context::tool_tokens).sum(),
            specs: specs.clone(),
        });
        specs
    }

    /// The end of model turn `turn` (its answer, or its calls done): the `turn_end` hooks.
    async fn turn_end(&mut self, turn: u32, cancel: &CancellationToken) {
        for run in self.runtime.turn_end_hooks(u64::from(turn), cancel).await {
            self.record(Record::hook(&run, Some(turn), None));
        }
    }

    fn stop(
        &mut self,
        mut report: PromptReport,
        outcome: PromptOutcome,
        message: String,
    ) -> PromptReport {
        self.record(Record::Stopped {
            reason: outcome.as_str().to_string(),
            message: message.clone(),
        });
        self.sync();
        self.emit(AgentEvent::Stopped {
            outcome: outcome.clone(),
            message,
        });
        report.outcome = outcome;
        report
    }
}

#[path = "conversation_calls.rs"]
mod calls;

#[path = "conversation_transcript.rs"]
mod transcript_side;

#[path = "conversation_context.rs"]
mod context_use;

#[path = "conversation_search.rs"]
mod search;

pub use search::SEARCH_TOOLS;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_is_cut_at_a_character_boundary_within_its_bytes() {
        assert_eq!(reason_of("short"), "short");
        // A three-byte character across every byte near the cut.
        for pad in 2040..2050 {
            let text = format!("{}{}", "r".repeat(pad), "語".repeat(100));
            let reason = reason_of(&text);
            assert!(reason.len() <= MAX_REASON_BYTES, "{pad}: {}", reason.len());
            assert!(reason.ends_with('…'), "{pad}");
            assert!(text.starts_with(reason.trim_end_matches('…')), "{pad}");
        }
    }
}
