//! What the agent task and the runtime report, into the conversation: the agent ready or
//! failed, the loop's events, the end of a prompt; and from the runtime, the agent's calls
//! starting (tying each to its line), approvals asked and answered.

use std::time::Instant;

use super::{AgentStatus, ChatEffect, ChatEvent, NoteLevel};
use crate::runtime::{CallOrigin, MessageRole, RuntimeEvent};
use crate::tui::app::App;
use crate::tui::messages::{Effect, Level};

impl App {
    /// One report of the agent task of `epoch` (an older task's are dropped).
    pub fn on_chat_event(&mut self, epoch: u64, event: ChatEvent) -> Vec<Effect> {
        if epoch != self.chat.epoch {
            return Vec::new();
        }
        let prompt_ended = matches!(
            event,
            ChatEvent::Done(_) | ChatEvent::Ended(_) | ChatEvent::Failed(_)
        );
        match event {
            ChatEvent::Ready {
                commands,
                records,
                base_url,
                client,
            } => {
                self.chat.ready(commands, records, base_url, client);
                // A prompt typed while the agent started goes now.
                let queued = self.chat.turn.as_mut().and_then(|t| {
                    let text = t.queued.take()?;
                    let (attachments, prompt) = std::mem::take(&mut t.queued_with);
                    Some((text, attachments, prompt))
                });
                if let Some((text, attachments, prompt)) = queued {
                    return vec![Effect::Agent(ChatEffect::Prompt {
                        epoch,
                        text,
                        attachments,
                        prompt,
                    })];
                }
            }
            ChatEvent::Failed(why) => {
                let why = crate::text::sanitize(&why, true);
                self.chat.turn = None;
                self.chat.status = AgentStatus::Failed(why.clone());
                self.chat.note(
                    NoteLevel::Error,
                    format!("the agent could not start: {why}"),
                );
                self.notify(Level::Error, "the agent could not start (see Conversation)");
            }
            ChatEvent::Session(id) => self.chat.session = Some(id),
            ChatEvent::Warning(text) => self.chat.note(NoteLevel::Warn, text),
            ChatEvent::Note(text) => self.chat.note(NoteLevel::Info, text),
            ChatEvent::Event(event) => {
                let now = self.now;
                self.chat.on_agent_event(event, now);
            }
            ChatEvent::Done(report) => self.chat.done(&report),
            ChatEvent::Attached {
                server,
                name,
                result,
            } => match result {
                Ok(summary) => self.chat.note(
                    NoteLevel::Info,
                    format!("@{name} ({server}) attached: {summary}"),
                ),
                Err(e) => self.chat.note(
                    NoteLevel::Error,
                    format!("@{name} ({server}) could not be read: {e}"),
                ),
            },
            ChatEvent::PromptAdded {
                server,
                name,
                messages,
            } => {
                let n = messages.len();
                self.chat.note(
                    NoteLevel::Info,
                    format!(
                        "/{name} ({server}): {n} message{} added to the conversation",
                        if n == 1 { "" } else { "s" }
                    ),
                );
                for (role, text) in messages {
                    let block = super::TextBlock::new(&crate::text::sanitize(&text, true));
                    self.chat.push(match role {
                        MessageRole::User => super::Entry::Prompt(block),
                        MessageRole::Assistant => super::Entry::Model {
                            turn: 0,
                            text: block,
                        },
                    });
                }
            }
            ChatEvent::Ended(why) => {
                self.chat.turn = None;
                match why {
                    Some(why) => self.chat.note(NoteLevel::Error, why),
                    None => self.chat.note(
                        NoteLevel::Info,
                        "the prompt's messages were added: write to go on",
                    ),
                }
            }
        }
        if prompt_ended {
            // Tools that changed during the prompt come in now that it has ended.
            return self.boundary_if_stale();
        }
        Vec::new()
    }

    /// The runtime became ready: the agent starts over it (continuing its session, if the
    /// runtime was restarted).
    pub(in crate::tui) fn chat_runtime_ready(&mut self) -> Vec<Effect> {
        if !self.chat.configured() {
            return Vec::new();
        }
        let Some(profile) = self.chat.profile.clone() else {
            return Vec::new();
        };
        let resume = self.chat.session.clone();
        vec![Effect::Agent(self.chat.restart(profile, resume))]
    }

    /// What the conversation takes from a runtime event (the rest of the console takes it too).
    pub(in crate::tui) fn chat_observe(&mut self, event: &RuntimeEvent) {
        if !self.chat.configured() {
            return;
        }
        match event {
            RuntimeEvent::CallStarted {
                id,
                tool,
                origin: CallOrigin::Agent { .. },
                ..
            } => self.chat.call_started(*id, tool),
            RuntimeEvent::ApprovalRequested(request) => {
                if let CallOrigin::Agent { .. } = request.origin {
                    self.chat.asked.insert(request.id, self.now);
                }
            }
            RuntimeEvent::ApprovalAnswered { id, decision, by } => {
                self.chat.approval_answered(*id, *decision, *by);
            }
            RuntimeEvent::CallAllowed { id, why } => self.chat.call_allowed(*id, why),
            RuntimeEvent::CallFinished { id, .. } => {
                self.chat.asked.remove(id);
            }
            RuntimeEvent::CallStarted { .. }
            | RuntimeEvent::Mcp(_)
            | RuntimeEvent::Notification(_)
            | RuntimeEvent::CallStatus { .. }
            | RuntimeEvent::Rewake(_)
            | RuntimeEvent::ServerLog { .. }
            | RuntimeEvent::CallProgress { .. }
            | RuntimeEvent::ListChanged { .. }
            | RuntimeEvent::ResourceUpdated { .. }
            | RuntimeEvent::ToolsChanged(_)
            | RuntimeEvent::HookRan(_)
            | RuntimeEvent::HostSession { .. }
            | RuntimeEvent::EventsDropped { .. } => {}
        }
    }

    /// How long ago the agent asked for approval of call `id` (none: not the agent's, or not
    /// known).
    pub(in crate::tui) fn asked_ago(&self, id: u64) -> Option<std::time::Duration> {
        self.chat
            .asked
            .get(&id)
            .map(|at: &Instant| self.now.saturating_duration_since(*at))
    }
}
