//! The console's side of the agent: the conversation as the Conversation pane shows it (the
//! operator's prompts, the model's streamed text, each tool call tied to its row in Calls,
//! each model turn's latency and tokens), the input box, the turn in flight, and where the
//! agent is (starting, ready, failed).
//!
//! Plain state, changed by the handlers in `keys.rs` (keys), `ingest.rs` (agent and runtime
//! events) and `lines.rs` (the loop's events as the conversation's lines); the agent itself runs as a task (`task.rs`) that reports through app events. Apart
//! from `app.rs` so the one `App` only holds a `ChatState`.

pub mod entry;
pub mod ingest;
pub mod input;
pub mod keys;
mod lines;
pub mod pick;
mod resume;
pub mod task;
pub mod wrap;

#[cfg(test)]
pub(in crate::tui) mod tests;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

pub use self::entry::{CallLine, Entry, NoteLevel, TextBlock};
use self::input::InputBox;
use crate::agent::attach::{Attachment, PromptUse};
use crate::agent::transcript::Record;
use crate::agent::{AgentEvent, ModelClient, PromptReport, ToolCallStatus};
use crate::config::{AgentConfig, ModelEndpoint, ModelProfile};
use crate::runtime::MessageRole;
use crate::text::sanitize;

/// Entries the pane keeps; older ones go (and are counted).
pub const ENTRIES_KEEP: usize = 2_000;
/// What the agent task is asked to do.
#[derive(Debug)]
pub enum AgentCommand {
    /// Run one prompt; `cancel` ends it (Esc). The attached resources are read and included,
    /// a server prompt's messages added first.
    Prompt {
        text: String,
        cancel: CancellationToken,
        attachments: Vec<Attachment>,
        prompt: Option<PromptUse>,
    },
}

/// What the agent task reports (as `AppEvent::Agent`, with its epoch).
#[derive(Debug)]
pub enum ChatEvent {
    /// The model endpoint is up: prompts go to `commands`. `records` are the resumed session's
    /// (empty for a new one).
    Ready {
        commands: UnboundedSender<AgentCommand>,
        records: Vec<Record>,
        /// Where the endpoint is (its base URL), for the operator.
        base_url: String,
        /// The agent's model client: servers' sampling requests are answered through it (none
        /// for an agent in a daemon, `attach`).
        client: Option<Arc<dyn ModelClient>>,
    },
    /// The agent could not start (the endpoint failed, the session could not be read).
    Failed(String),
    /// The transcript of this conversation is `id` (written from its first prompt on).
    Session(String),
    /// Something to tell the operator (a transcript that cannot be written).
    Warning(String),
    /// What the operator asked to know (`/usage`).
    Note(String),
    /// What the loop reports, in order.
    Event(AgentEvent),
    /// A prompt ended (after its last event).
    Done(PromptReport),
    /// A resource attached with `@` was read (a summary: type and size), or could not be.
    Attached {
        server: String,
        name: String,
        result: Result<String, String>,
    },
    /// A server prompt's messages (`/`) were added to the conversation.
    PromptAdded {
        server: String,
        name: String,
        messages: Vec<(MessageRole, String)>,
    },
    /// The prompt ended without asking the model: what went wrong (an attachment or a server
    /// prompt could not be had), or nothing (a server prompt's messages were only added).
    Ended(Option<String>),
}

/// Work for the event loop (`task.rs` runs it).
#[derive(Debug, Clone, PartialEq)]
pub enum ChatEffect {
    /// Start the agent for `profile` over the current runtime: its model endpoint, and its
    /// conversation (session `resume` continued, or a new one).
    Start {
        epoch: u64,
        profile: String,
        resume: Option<String>,
    },
    /// Send a prompt to the agent of `epoch` (the turn's cancel token is in the state), with
    /// the resources attached with `@` and a server prompt picked with `/`.
    Prompt {
        epoch: u64,
        text: String,
        attachments: Vec<Attachment>,
        prompt: Option<PromptUse>,
    },
    /// Cancel the turn in flight: the model request is dropped, running calls are cancelled.
    Cancel,
}

/// Where the agent is.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentStatus {
    /// No `agent:` in the config.
    Off,
    /// Waiting for the runtime (starting, or restarting with `R`).
    Waiting,
    /// Its model endpoint is starting.
    Starting,
    Ready,
    /// It could not start, and why.
    Failed(String),
}

/// The prompt in flight.
#[derive(Debug, Clone)]
pub struct Turn {
    pub started: Instant,
    pub cancel: CancellationToken,
    /// When Esc asked to cancel it (to say how long the cancel took).
    pub cancelled_at: Option<Instant>,
    /// The model turn under way (0 before the first).
    pub model_turn: u32,
    /// Waiting for the agent to be ready before it is sent.
    pub queued: Option<String>,
    /// What goes with a queued prompt: the resources attached with `@`, a prompt picked with
    /// `/`.
    pub queued_with: (Vec<Attachment>, Option<PromptUse>),
}

/// The conversation as the console holds it.
/// What a frame of the transcript showed (see `ChatState::shown`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shown {
    pub height: usize,
    pub scroll: usize,
    pub at_oldest: bool,
}

/// While the transcript is scrolled up: how many entries there were at the last frame
/// (counted from the first entry ever, `dropped` included), at `width`, and what was known of
/// the newest one's rows then (a text entry's `lines`, the rows of all but its last line,
/// its `rows` in all); and the rows added below the view since the scroll was asked for,
/// which the frame adds to it so that new text does not move what is being read (see
/// `ChatState::held`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    pub entries: u64,
    pub width: usize,
    pub added: usize,
    pub lines: usize,
    pub settled: usize,
    pub rows: usize,
}

#[derive(Debug)]
pub struct ChatState {
    /// The config's `agent:` section (`None`: no agent, no Conversation pane).
    pub agent: Option<AgentConfig>,
    /// The profile in use.
    pub profile: Option<String>,
    /// The transcript's id, once there is one; a restart or a profile switch continues it.
    pub session: Option<String>,
    pub status: AgentStatus,
    /// The agent task of this epoch is the current one; older ones' reports are dropped.
    pub epoch: u64,
    commands: Option<UnboundedSender<AgentCommand>>,
    /// The endpoint's base URL, once started.
    pub base_url: Option<String>,
    /// The agent's model client, once its endpoint is up (servers' sampling requests use it).
    pub model: Option<Arc<dyn ModelClient>>,
    pub entries: VecDeque<Entry>,
    /// Entries no longer kept.
    pub dropped: u64,
    pub input: InputBox,
    pub turn: Option<Turn>,
    /// Rows scrolled up from the newest (asked for; the frame clamps it at the oldest).
    pub scroll: usize,
    /// What the last frame showed: the transcript's height, and how far up it was scrolled
    /// (clamped), and whether that was as far as it goes. PgUp and PgDn page from it.
    pub shown: std::cell::Cell<Shown>,
    /// What keeps the view still while scrolled up (the frame keeps it).
    pub held: std::cell::Cell<Held>,
    /// The profile picker (Ctrl-P), its selection.
    pub picker: Option<usize>,
    /// The resource (`@`) or prompt (`/`) picker.
    pub content_picker: Option<pick::ContentPicker>,
    /// Resources attached with `@` to the prompt being written.
    pub attachments: Vec<Attachment>,
    /// Runtime calls of the agent not yet tied to a line (their `CallStarted` came first):
    /// id and tool.
    unmatched: VecDeque<(u64, String)>,
    /// When each pending approval of the agent was asked, by runtime call id.
    pub asked: HashMap<u64, Instant>,
    /// Why the profile in use continues the `--resume` session, until the session is shown.
    resumed_with: Option<String>,
    /// How much of the model's context the conversation takes (after the last turn).
    pub context: Option<ContextMeter>,
    /// The tools the model was offered in its last turn (all of them, or with tool search
    /// those it found).
    pub offered: Option<Arc<[String]>>,
}

/// The context meter: `used` tokens (`estimated` at four bytes a token, else the endpoint's
/// count) of the profile's `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextMeter {
    pub used: u64,
    pub window: Option<u64>,
    pub estimated: bool,
}

impl ContextMeter {
    /// `context ~1,234/2,048 (60%)`, or `context ~1,234 tokens` without a window.
    pub fn label(&self) -> String {
        let tilde = if self.estimated { "~" } else { "" };
        match self.window.filter(|w| *w > 0) {
            Some(window) => format!(
                "context {tilde}{}/{} ({}%)",
                self.used,
                window,
                self.used.saturating_mul(100) / window
            ),
            None => format!("context {tilde}{} tokens", self.used),
        }
    }
}

impl ChatState {
    /// The state for `agent` (none: the console without a Conversation pane), starting with
    /// `profile` (else the default) and continuing session `resume` if given.
    pub fn new(agent: Option<&AgentConfig>) -> ChatState {
        ChatState {
            agent: agent.cloned(),
            profile: agent.map(|a| a.default.clone()),
            session: None,
            status: match agent {
                Some(_) => AgentStatus::Waiting,
                None => AgentStatus::Off,
            },
            epoch: 0,
            commands: None,
            base_url: None,
            model: None,
            entries: VecDeque::new(),
            dropped: 0,
            input: InputBox::default(),
            turn: None,
            scroll: 0,
            shown: std::cell::Cell::default(),
            held: std::cell::Cell::default(),
            picker: None,
            content_picker: None,
            attachments: Vec::new(),
            context: None,
            offered: None,
            unmatched: VecDeque::new(),
            asked: HashMap::new(),
            resumed_with: None,
        }
    }

    /// What the console was started with: `--model` (else the default profile) and
    /// `--resume` (a session to continue), both checked by the caller, and `why` that profile
    /// continues the session (said when it is shown).
    pub fn start_with(
        &mut self,
        model: Option<String>,
        resume: Option<String>,
        why: Option<String>,
    ) {
        if model.is_some() {
            self.profile = model;
        }
        if resume.is_some() {
            self.session = resume;
            self.resumed_with = why;
        }
    }

    /// The config was read again (restart-all): the agent task ends (its turn cancelled) and
    /// waits for the new runtime; the conversation and its session go on, with the profile in
    /// use if the new config still has it.
    pub fn reconfigure(&mut self, agent: Option<&AgentConfig>) {
        self.stop();
        self.epoch += 1;
        let keep = self
            .profile
            .clone()
            .filter(|p| agent.is_some_and(|a| a.profiles.contains_key(p)));
        self.profile = keep.or_else(|| agent.map(|a| a.default.clone()));
        self.agent = agent.cloned();
        self.settle_calls(ToolCallStatus::Cancelled);
        self.status = match agent {
            Some(_) => AgentStatus::Waiting,
            None => AgentStatus::Off,
        };
    }

    /// An agent is configured (the Conversation pane exists).
    pub fn configured(&self) -> bool {
        self.agent.is_some()
    }

    /// A prompt is in flight.
    pub fn busy(&self) -> bool {
        self.turn.is_some()
    }

    /// The profile in use.
    pub fn current_profile(&self) -> Option<&ModelProfile> {
        let agent = self.agent.as_ref()?;
        agent.profiles.get(self.profile.as_deref()?)
    }

    /// The profiles, by name (the picker's order).
    pub fn profiles(&self) -> Vec<&ModelProfile> {
        self.agent
            .as_ref()
            .map(|a| a.profiles.values().collect())
            .unwrap_or_default()
    }

    /// Where prompts go, when the agent is ready.
    pub fn commands(&self) -> Option<&UnboundedSender<AgentCommand>> {
        self.commands.as_ref()
    }

    pub fn push(&mut self, entry: Entry) {
        if self.entries.len() == ENTRIES_KEEP {
            self.entries.pop_front();
            self.dropped += 1;
        }
        self.entries.push_back(entry);
    }

    pub fn note(&mut self, level: NoteLevel, text: impl Into<String>) {
        let text = sanitize(&text.into(), true);
        self.push(Entry::Note { level, text });
    }

    /// A new agent task for `profile`: the old one (if any) ends when its command channel is
    /// dropped here, its turn cancelled. Returns the effect that starts it.
    pub fn restart(&mut self, profile: String, resume: Option<String>) -> ChatEffect {
        self.stop();
        self.epoch += 1;
        self.profile = Some(profile.clone());
        self.status = AgentStatus::Starting;
        ChatEffect::Start {
            epoch: self.epoch,
            profile,
            resume,
        }
    }

    /// Ends the current agent task (a restart of the runtime, a switch): its turn is cancelled
    /// and its commands channel dropped, which stops it and its model endpoint. A prompt not
    /// sent yet waits for the next agent.
    pub fn stop(&mut self) {
        if self.turn.as_ref().is_some_and(|t| t.queued.is_none()) {
            if let Some(turn) = self.turn.take() {
                turn.cancel.cancel();
                self.note(NoteLevel::Warn, "the turn in flight was cancelled");
            }
        }
        self.commands = None;
        self.base_url = None;
        self.model = None;
        self.unmatched.clear();
        self.asked.clear();
    }

    /// The endpoint of a profile, in words (`command …` or its URL).
    pub fn endpoint_text(profile: &ModelProfile) -> String {
        match &profile.endpoint {
            ModelEndpoint::Url(url) => url.clone(),
            ModelEndpoint::Command { command, args, .. } => {
                let program = std::path::Path::new(command)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| command.clone());
                let mut words = vec![program];
                words.extend(args.iter().cloned());
                format!("started: {}", words.join(" "))
            }
        }
    }

    /// The agent is ready (its endpoint up): where prompts go, and a resumed session's
    /// conversation shown as it was.
    pub fn ready(
        &mut self,
        commands: UnboundedSender<AgentCommand>,
        records: Vec<Record>,
        base_url: String,
        client: Option<Arc<dyn ModelClient>>,
    ) {
        self.commands = Some(commands);
        self.model = client;
        self.status = AgentStatus::Ready;
        self.base_url = Some(base_url);
        let (profile, model) = self
            .current_profile()
            .map(|p| (p.name.clone(), p.model.clone()))
            .unwrap_or_default();
        // A switch or a restart continues a session already on screen.
        if records.is_empty() || !self.entries.is_empty() {
            // The status line says it is ready; a switch or a restart says so here too.
            if !self.entries.is_empty() {
                self.note(
                    NoteLevel::Info,
                    format!("agent ready: {profile} (model {model})"),
                );
            }
            return;
        }
        let prompts = self.show_records(&records);
        let id = self.session.clone().unwrap_or_default();
        let why = self
            .resumed_with
            .take()
            .map(|why| format!("; {why}"))
            .unwrap_or_default();
        self.note(
            NoteLevel::Info,
            format!(
                "resumed session {id} ({prompts} prompt{}); agent ready: {profile} (model {model}{why})",
                if prompts == 1 { "" } else { "s" }
            ),
        );
    }

    /// `scroll` was just set from what the last frame showed (PgUp, PgDn): the rows added
    /// below since are in it now.
    pub fn hold_from_here(&self) {
        let held = self.held.get();
        self.held.set(Held { added: 0, ..held });
    }

    /// An estimate of the rows everything takes at any sane width (the most PgUp scrolls).
    pub fn rows_estimate(&self) -> usize {
        self.entries
            .iter()
            .map(|e| match e {
                Entry::Prompt(block) | Entry::Model { text: block, .. } => {
                    block.lines.iter().map(|l| 1 + l.len() / 40).sum::<usize>()
                }
                Entry::Call(_) | Entry::Turn { .. } | Entry::Retry { .. } => 1,
                Entry::Note { text, .. } => 1 + text.len() / 40,
            })
            .sum()
    }
}
