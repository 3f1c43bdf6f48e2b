//! Keys of the Conversation pane (the input box, Esc to cancel the turn, scrolling, Ctrl-P
//! profiles, Ctrl-N a new conversation) and of the profile picker. Keys it leaves (Tab,
//! Shift-Tab) go on to the console's.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tokio_util::sync::CancellationToken;

use super::{AgentStatus, ChatEffect, NoteLevel, Turn};
use crate::agent::attach::PromptUse;
use crate::tui::app::App;
use crate::tui::messages::{Effect, Level};
use crate::tui::modals::Modal;

/// Rows PgUp / PgDn scroll the transcript.
const PAGE: usize = 10;

impl App {
    /// A key while the Conversation pane has focus; `None` when it is not the pane's (it goes
    /// on to the console's keys).
    pub(in crate::tui) fn chat_key(&mut self, key: KeyEvent) -> Option<Vec<Effect>> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        self.notice = None;
        let input = &mut self.chat.input;
        match key.code {
            KeyCode::Tab | KeyCode::BackTab => return None,
            KeyCode::Enter if alt || shift => input.newline(),
            KeyCode::Char('j') if ctrl => input.newline(),
            KeyCode::Enter => return Some(self.send_to_agent(None)),
            // `@` where a word starts: a resource to attach; `/` first: a server prompt.
            KeyCode::Char('@') if !ctrl && !alt && input.at_word_start() => {
                self.open_content_picker(super::pick::PickKind::Resource)
            }
            KeyCode::Char('/') if !ctrl && !alt && input.is_blank() => {
                self.open_content_picker(super::pick::PickKind::Prompt)
            }
            // Backspace in an empty box takes the last attachment off.
            KeyCode::Backspace if input.is_blank() && !self.chat.attachments.is_empty() => {
                self.chat.attachments.pop();
            }
            KeyCode::Esc => return Some(self.cancel_turn()),
            KeyCode::Char('p') if ctrl => self.open_picker(),
            KeyCode::Char('n') if ctrl => return Some(self.new_conversation()),
            KeyCode::Char('u') if ctrl => input.clear(),
            KeyCode::Char(c) if !ctrl && !alt => {
                input.insert(c);
                self.overlays.guard.typed(self.now);
            }
            KeyCode::Backspace => input.backspace(),
            KeyCode::Delete => input.delete(),
            KeyCode::Left => input.left(),
            KeyCode::Right => input.right(),
            KeyCode::Home => input.home(),
            KeyCode::End => input.end(),
            KeyCode::Up => input.up(),
            KeyCode::Down => input.down(),
            // A page is the transcript's height less a row kept for context, from what the
            // last frame showed (before the first: `PAGE`); never past the oldest row.
            // Keys between two frames page on from each other (the frame clamps the last).
            KeyCode::PageUp => {
                let shown = self.chat.shown.get();
                self.chat.scroll = if shown.height == 0 {
                    (self.chat.scroll + PAGE).min(self.chat.rows_estimate())
                } else if shown.at_oldest {
                    shown.scroll
                } else {
                    shown.scroll + shown.height.saturating_sub(1).max(1)
                };
                self.chat.shown.set(super::Shown {
                    scroll: self.chat.scroll,
                    ..shown
                });
                self.chat.hold_from_here();
            }
            KeyCode::PageDown => {
                let shown = self.chat.shown.get();
                self.chat.scroll = if shown.height == 0 {
                    self.chat.scroll.saturating_sub(PAGE)
                } else {
                    shown
                        .scroll
                        .saturating_sub(shown.height.saturating_sub(1).max(1))
                };
                self.chat.shown.set(super::Shown {
                    scroll: self.chat.scroll,
                    at_oldest: shown.at_oldest && self.chat.scroll == shown.scroll,
                    ..shown
                });
                self.chat.hold_from_here();
            }
            KeyCode::F(1) => self.overlays.modal = Some(Modal::Help { scroll: 0 }),
            _ => {}
        }
        Some(Vec::new())
    }

    /// Pasted text (bracketed paste), for whatever takes typing now.
    pub fn on_paste(&mut self, text: &str) {
        self.paste(text);
        self.sync_overlays();
    }

    /// Pasted text goes into a sampling answer being edited, else into the input box when the
    /// Conversation pane has focus.
    fn paste(&mut self, text: &str) {
        if self.overlays.approvals.is_empty()
            && self.overlays.elicitations.is_empty()
            && self.sampling_paste(text)
        {
            return;
        }
        if self.focus == crate::tui::pane_state::Pane::Conversation
            && self.overlays.approvals.is_empty()
            && self.overlays.modal.is_none()
        {
            self.chat.input.insert_str(text);
            self.overlays.guard.typed(self.now);
        }
    }

    /// Enter (or a prompt picked with `/`): the input goes to the agent as a prompt, with the
    /// resources attached with `@` and the server prompt `prompt` (queued while the agent
    /// starts).
    pub(in crate::tui) fn send_to_agent(&mut self, prompt: Option<PromptUse>) -> Vec<Effect> {
        if self.chat.input.is_blank() && self.chat.attachments.is_empty() && prompt.is_none() {
            return Vec::new();
        }
        if self.chat.busy() {
            self.notify(
                Level::Warn,
                "a prompt is in flight: wait for it, or Esc cancels it",
            );
            return Vec::new();
        }
        let ready = match &self.chat.status {
            AgentStatus::Ready => true,
            AgentStatus::Waiting | AgentStatus::Starting => false,
            AgentStatus::Failed(why) => {
                let why = why.clone();
                self.notify(
                    Level::Error,
                    format!("the agent could not start: {why} (Ctrl-P picks another profile)"),
                );
                return Vec::new();
            }
            AgentStatus::Off => return Vec::new(),
        };
        let text = self.chat.input.take();
        self.overlays.guard.sent();
        let attachments = std::mem::take(&mut self.chat.attachments);
        if !text.trim().is_empty() {
            self.chat
                .push(super::Entry::Prompt(super::TextBlock::new(&text)));
        }
        self.chat.scroll = 0;
        self.chat.turn = Some(Turn {
            started: self.now,
            cancel: CancellationToken::new(),
            cancelled_at: None,
            model_turn: 0,
            queued: (!ready).then(|| text.clone()),
            queued_with: if ready {
                (Vec::new(), None)
            } else {
                (attachments.clone(), prompt.clone())
            },
        });
        if !ready {
            self.chat.note(
                NoteLevel::Info,
                "the agent is starting: the prompt goes once it is ready",
            );
            return Vec::new();
        }
        vec![Effect::Agent(ChatEffect::Prompt {
            epoch: self.chat.epoch,
            text,
            attachments,
            prompt,
        })]
    }

    /// Esc: the turn in flight ends (the model request is dropped, its running calls are
    /// cancelled); a prompt still waiting for the agent is dropped.
    pub(in crate::tui) fn cancel_turn(&mut self) -> Vec<Effect> {
        let Some(turn) = self.chat.turn.as_mut() else {
            return Vec::new();
        };
        if turn.queued.is_some() {
            self.chat.turn = None;
            self.chat
                .note(NoteLevel::Warn, "cancelled before it was sent");
            return Vec::new();
        }
        if turn.cancelled_at.is_none() {
            // The real clock, not the frame's: this measures how long the cancel takes.
            turn.cancelled_at = Some(std::time::Instant::now());
        }
        vec![Effect::Agent(ChatEffect::Cancel)]
    }

    /// Ctrl-N: a new conversation (a new session) with the same profile.
    fn new_conversation(&mut self) -> Vec<Effect> {
        if self.chat.busy() {
            self.notify(Level::Warn, "a prompt is in flight: Esc cancels it first");
            return Vec::new();
        }
        let Some(profile) = self.chat.profile.clone() else {
            return Vec::new();
        };
        // The one left stays on disk: say how to come back to it.
        let note = match self.chat.session.take() {
            Some(old) => format!(
                "a new conversation (the last one is session {old}: `aimon-console --config {} --resume {old}` continues it)",
                crate::tui::launch::quote(&self.config_path().display().to_string())
            ),
            None => "a new conversation".to_string(),
        };
        self.chat.entries.clear();
        self.chat.scroll = 0;
        self.chat.held.take();
        self.chat.note(NoteLevel::Info, note);
        if !self.connected() {
            return Vec::new();
        }
        vec![Effect::Agent(self.chat.restart(profile, None))]
    }

    fn open_picker(&mut self) {
        let current = self.chat.profile.clone();
        let at = self
            .chat
            .profiles()
            .iter()
            .position(|p| Some(&p.name) == current.as_ref())
            .unwrap_or(0);
        self.chat.picker = Some(at);
    }

    /// A key while the profile picker is open.
    pub(in crate::tui) fn picker_key(&mut self, key: KeyEvent, ctrl_c: bool) -> Vec<Effect> {
        let Some(selected) = self.chat.picker else {
            return Vec::new();
        };
        let count = self.chat.profiles().len();
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => {
                self.chat.picker = Some(selected.saturating_sub(1));
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.chat.picker = Some((selected + 1).min(count.saturating_sub(1)));
            }
            KeyCode::Enter => {
                self.chat.picker = None;
                return self.switch_profile(selected);
            }
            KeyCode::Esc | KeyCode::Char('q') => self.chat.picker = None,
            _ if ctrl_c => self.chat.picker = None,
            _ => {}
        }
        Vec::new()
    }

    /// Switches to the profile at `index`: the agent starts again with it, the conversation
    /// (and its transcript) going on.
    fn switch_profile(&mut self, index: usize) -> Vec<Effect> {
        let Some(profile) = self.chat.profiles().get(index).map(|p| p.name.clone()) else {
            return Vec::new();
        };
        if self.chat.busy() {
            self.notify(Level::Warn, "a prompt is in flight: Esc cancels it first");
            return Vec::new();
        }
        if self.chat.profile.as_deref() == Some(profile.as_str())
            && self.chat.status == AgentStatus::Ready
        {
            return Vec::new();
        }
        self.chat
            .note(NoteLevel::Info, format!("switching to profile {profile}"));
        if !self.connected() {
            self.chat.profile = Some(profile);
            return Vec::new();
        }
        let resume = self.chat.session.clone();
        vec![Effect::Agent(self.chat.restart(profile, resume))]
    }
}
