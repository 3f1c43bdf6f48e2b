//! One way to open a conversation, new or resumed, for `run` and for the console alike: the
//! resumed session's records, its transcript (created, or resumed with a `resumed` line), the
//! profile's endpoint started with a client for its provider, and the conversation over a
//! runtime. Each driver calls the steps in its own order (`run` opens the transcript before the
//! servers start, to refuse a bad `--resume` at once; the console reads the records first to
//! show them, and opens the transcript at the first prompt), but each step is written once.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use super::client::{ModelClient, ModelEvent};
use super::conversation::{Conversation, ConversationSettings};
use super::endpoint::Endpoint;
use super::events::AgentEvent;
use super::failure::ModelError;
use super::stream::ModelReply;
use super::transcript::{self, Record, Transcript, TranscriptError};
use super::turn::{History, Item, ToolChoice, ToolList};
use crate::config::ModelProfile;
use crate::runtime::AgentRuntime;

/// A conversation to open: with which profile, recorded where, and which session it goes on.
#[derive(Debug, Clone)]
pub struct SessionPlan {
    /// The folder of the transcripts (`transcript::sessions_dir()`).
    pub sessions: PathBuf,
    /// The config file, named in a new transcript's first line.
    pub config: PathBuf,
    pub profile: ModelProfile,
    /// The session to go on (`--resume ID`), or none for a new one.
    pub resume: Option<String>,
}

impl SessionPlan {
    /// The records of the session to go on (none for a new one), read without writing to it.
    pub fn records(&self) -> Result<Vec<Record>, TranscriptError> {
        match &self.resume {
            None => Ok(Vec::new()),
            Some(id) => transcript::read(&transcript::locate(&self.sessions, id)?),
        }
    }

    /// The transcript to write to, and the records it already had: a new one, or the resumed
    /// one (a `resumed` line written, naming the profile).
    pub fn open(&self) -> Result<(Transcript, Vec<Record>), TranscriptError> {
        let (name, model) = (&self.profile.name, &self.profile.model);
        match &self.resume {
            None => Transcript::create(&self.sessions, &self.config, name, model)
                .map(|t| (t, Vec::new())),
            Some(id) => Transcript::resume(&self.sessions, id, name, model),
        }
    }

    /// The profile's endpoint (started, for a `command:` profile) and a client for its
    /// provider. Keep the [`Endpoint`] as long as the client is used: dropping it stops a
    /// started endpoint.
    pub async fn model(&self) -> Result<(Endpoint, Arc<dyn ModelClient>), ModelError> {
        super::start::start_model(&self.profile).await
    }

    /// The conversation over `runtime`: `history` (the records' items, see
    /// [`transcript::items`]) goes on, written to `transcript`; `max_turns` overrides the
    /// profile's.
    pub fn conversation(
        &self,
        runtime: Arc<AgentRuntime>,
        client: Arc<dyn ModelClient>,
        history: Vec<Item>,
        transcript: Option<Transcript>,
        events: UnboundedSender<AgentEvent>,
        max_turns: Option<u32>,
    ) -> Conversation {
        let mut settings = ConversationSettings::of(&self.profile);
        if let Some(max) = max_turns {
            settings.max_turns = max;
        }
        Conversation::new(runtime, client, settings, history, events, transcript)
    }
}

/// The model of a profile whose endpoint could not be started: every request fails with why,
/// so a prompt runs (and is recorded) to the same `model_failed` end as a refused connection.
#[derive(Debug)]
pub struct Unavailable(pub ModelError);

#[async_trait::async_trait]
impl ModelClient for Unavailable {
    async fn complete(
        &self,
        _history: &History,
        _tools: &ToolList,
        _choice: ToolChoice,
        _events: &(dyn Fn(ModelEvent) + Send + Sync),
    ) -> Result<ModelReply, ModelError> {
        Err(self.0.clone())
    }

    fn model(&self) -> &str {
        ""
    }

    fn limited(&self, _max_tokens: u32, _temperature: Option<f64>) -> Arc<dyn ModelClient> {
        Arc::new(Unavailable(self.0.clone()))
    }
}
