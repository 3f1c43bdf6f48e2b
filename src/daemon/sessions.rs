//! Agent sessions in the daemon: a console's `prompt` runs on the daemon's runtime, so the
//! conversation goes on whoever watches it, and its tool calls ask every console. A session is
//! recorded in its transcript as `run` records one; a prompt naming a session the daemon does
//! not hold (another daemon's, one killed outright, one let go) resumes it from its transcript.
//! One prompt at a time per session; the agent's events go to every console as `agent`
//! notifications. The daemon holds at most `daemon.sessions` sessions in memory (32 unless the
//! config says): past it, the one used longest ago that no prompt uses is let go, its
//! transcript kept for the next prompt naming it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::hub::Hub;
use super::models::Started;
use super::wire::{code, notification};
use crate::agent::profile::profile_choice;
use crate::agent::session::SessionPlan;
use crate::agent::{agent_json, transcript, Conversation, PromptOutcome};
use crate::config::ModelProfile;

/// A session the daemon holds: its conversation (one prompt at a time) and its endpoint.
struct Open {
    id: String,
    conversation: Conversation,
    profile: ModelProfile,
    /// The endpoint its client speaks to, shared with the daemon's other sessions of the
    /// profile (`models.rs`): held as long as the conversation uses it.
    model: Arc<Started>,
}

impl Open {
    /// The profile's endpoint again when the one the session used was let go (a request to it
    /// failed, in this session or another): the next prompt speaks to a running one.
    async fn renew_model(&mut self, hub: &Hub) -> Result<(), (i64, String)> {
        if hub.models.keeps(&self.profile.name, &self.model).await {
            return Ok(());
        }
        let started = hub.models.get(&self.profile).await.map_err(model_error)?;
        let client = started.client(&hub.runtime, &self.profile);
        self.conversation.set_client(client);
        self.model = started;
        Ok(())
    }
}

/// A model endpoint that could not be had, as the operator API says it.
fn model_error(e: crate::agent::ModelError) -> (i64, String) {
    (
        code::NOT_FOUND,
        format!("{}: {}", e.class.as_str(), e.message),
    )
}

/// The sessions held, by id, each with when it was last used (a count of uses, not a time).
/// A session holds its whole conversation, and a daemon may run for weeks for many consoles:
/// past `most` (`daemon.sessions`), the idle one used longest ago is let go (a prompt naming it
/// reads it back from its transcript, as after a restart).
struct Held {
    sessions: HashMap<String, (Arc<tokio::sync::Mutex<Open>>, u64)>,
    uses: u64,
    most: usize,
}

impl Held {
    /// Session `id`, marked used now.
    fn take(&mut self, id: &str) -> Option<Arc<tokio::sync::Mutex<Open>>> {
        self.uses += 1;
        let (open, used) = self.sessions.get_mut(id)?;
        *used = self.uses;
        Some(open.clone())
    }

    /// Holds `open` as `id`, and returns the sessions let go to stay within `most`: those
    /// used longest ago that nothing else holds (no prompt, no opening), to be dropped (their
    /// transcripts written out) once the lock is let go.
    fn hold(
        &mut self,
        id: String,
        open: Arc<tokio::sync::Mutex<Open>>,
    ) -> Vec<Arc<tokio::sync::Mutex<Open>>> {
        self.uses += 1;
        self.sessions.insert(id, (open, self.uses));
        let mut gone = Vec::new();
        while self.sessions.len() > self.most {
            let idle = self
                .sessions
                .iter()
                .filter(|(_, (open, _))| Arc::strong_count(open) == 1)
                .min_by_key(|(_, (_, used))| *used)
                .map(|(id, _)| id.clone());
            match idle.and_then(|id| self.sessions.remove(&id)) {
                Some((open, _)) => gone.push(open),
                // Every one busy: they stay, and go later.
                None => break,
            }
        }
        gone
    }
}

/// The daemon's open sessions, by id.
pub struct Sessions {
    open: Mutex<Held>,
    /// Held while a session is opened: two prompts naming one session not held yet would
    /// otherwise both resume its transcript.
    opening: tokio::sync::Mutex<()>,
    /// Prompts running now.
    running: AtomicUsize,
    /// The cancel of each session's running prompt (`stop_prompt`).
    prompts: Mutex<HashMap<String, CancellationToken>>,
}

/// Counts a prompt as running while it lives.
struct Running<'a>(&'a AtomicUsize);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

type Reply = Result<Value, (i64, String)>;

impl Sessions {
    /// Sessions of which the daemon holds at most `most` (`daemon.sessions`).
    pub fn new(most: usize) -> Sessions {
        Sessions {
            open: Mutex::new(Held {
                sessions: HashMap::new(),
                uses: 0,
                most,
            }),
            opening: tokio::sync::Mutex::new(()),
            running: AtomicUsize::new(0),
            prompts: Mutex::new(HashMap::new()),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn get(&self, id: &str) -> Option<Arc<tokio::sync::Mutex<Open>>> {
        self.held().take(id)
    }

    /// Waits (at most `bound`) for every prompt running to end, after their cancel: each
    /// records how it stopped in its transcript.
    pub async fn settle(&self, bound: std::time::Duration) {
        let open: Vec<_> = self
            .held()
            .sessions
            .values()
            .map(|(open, _)| open.clone())
            .collect();
        let all = async {
            for session in open {
                drop(session.lock().await);
            }
        };
        let _ = tokio::time::timeout(bound, all).await;
    }

    /// Cancels session `id`'s running prompt; whether one ran.
    pub fn stop(&self, id: &str) -> bool {
        let prompts = self.prompts.lock().unwrap_or_else(|e| e.into_inner());
        prompts.get(id).inspect(|c| c.cancel()).is_some()
    }

    /// How many prompts run now.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// The ids of the sessions held.
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.held().sessions.keys().cloned().collect();
        ids.sort();
        ids
    }
}

/// `prompt {text, session?, model?}`: the prompt in `session` (held, or resumed from its
/// transcript), or in a new one with profile `model` (the default one without); answered
/// once the prompt ends.
pub async fn prompt(hub: Arc<Hub>, params: Value, stop: CancellationToken) -> Reply {
    let invalid = |m: &str| (code::INVALID_PARAMS, m.to_string());
    let text = match params.get("text").and_then(Value::as_str) {
        Some(text) if !text.trim().is_empty() => text.to_string(),
        _ => return Err(invalid("`text` is the prompt, not empty")),
    };
    let open = held_or_opened(&hub, &params).await?;
    let mut open = open.lock().await;
    open.renew_model(&hub).await?;
    hub.sessions.running.fetch_add(1, Ordering::SeqCst);
    let _running = Running(&hub.sessions.running);
    let cancel = stop.child_token();
    let prompts = || {
        hub.sessions
            .prompts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    };
    prompts().insert(open.id.clone(), cancel.clone());
    let report = open.conversation.prompt(&text, cancel).await;
    prompts().remove(&open.id);
    if let PromptOutcome::ModelFailed(error) = &report.outcome {
        if open.model.gone(error) {
            // The next prompt or sample starts the endpoint again.
            hub.models.forget(&open.profile.name, &open.model).await;
        }
    }
    let answer = match &report.outcome {
        PromptOutcome::Answered { text } => Some(text.as_str()),
        _ => None,
    };
    Ok(json!({
        "session": open.id,
        "outcome": report.outcome.as_str(),
        "answer": answer,
        "error": report.outcome.error(),
        "turns": report.turns,
        "tool_failures": report.tool_failures,
        "usage": report.usage,
    }))
}

/// The session `params` name (`session`) if the daemon holds it, else opened: resumed from its
/// transcript (with an id), or new with profile `model`.
async fn held_or_opened(
    hub: &Arc<Hub>,
    params: &Value,
) -> Result<Arc<tokio::sync::Mutex<Open>>, (i64, String)> {
    let session = params
        .get("session")
        .and_then(Value::as_str)
        .map(str::to_string);
    let model = params.get("model").and_then(Value::as_str);
    if let Some(open) = session.as_deref().and_then(|id| hub.sessions.get(id)) {
        return Ok(open);
    }
    let _opening = hub.sessions.opening.lock().await;
    // Another prompt may have opened it meanwhile.
    match session.as_deref().and_then(|id| hub.sessions.get(id)) {
        Some(open) => Ok(open),
        None => open_session(hub, session, model).await,
    }
}

/// `open_session {session?, model?}`: what `prompt` would go on with, opened now (a console
/// learns its session's id before its first prompt, and so which `agent` events are its own):
/// `session`, the id.
pub async fn open(hub: Arc<Hub>, params: Value) -> Reply {
    let open = held_or_opened(&hub, &params).await?;
    // Held while a prompt runs: the id is kept beside it.
    let id = open.lock().await.id.clone();
    Ok(json!({"session": id}))
}

/// A session opened: new, or `resume`d from its transcript, its endpoint started.
async fn open_session(
    hub: &Arc<Hub>,
    resume: Option<String>,
    model: Option<&str>,
) -> Result<Arc<tokio::sync::Mutex<Open>>, (i64, String)> {
    let Some(agent) = &hub.config.agent else {
        return Err((
            code::NOT_FOUND,
            "the daemon's config has no agent: section".into(),
        ));
    };
    let sessions = transcript::sessions_dir();
    // A session resumed without `model` goes on with the profile it last used, as `run
    // --resume` does (so one let go past `daemon.sessions` keeps its model).
    let profile = profile_choice(agent, &sessions, model, resume.as_deref())
        .map_err(|e| (code::NOT_FOUND, e))?
        .profile;
    let plan = SessionPlan {
        sessions,
        config: hub.config.path.clone(),
        profile: profile.clone(),
        resume,
    };
    let (transcript, records) = plan.open().map_err(|e| (code::NOT_FOUND, e.to_string()))?;
    let id = transcript.id().to_string();
    let model = hub.models.get(&profile).await.map_err(model_error)?;
    let client = model.client(&hub.runtime, &profile);
    let (events, mut agent_events) = mpsc::unbounded_channel();
    let conversation = plan.conversation(
        hub.runtime.clone(),
        client,
        transcript::items(&records),
        Some(transcript),
        events,
        None,
    );
    let forward = hub.clone();
    let session = id.clone();
    tokio::spawn(async move {
        while let Some(event) = agent_events.recv().await {
            let said = json!({"session": session, "event": agent_json(&event)});
            forward.broadcast(notification("agent", said));
        }
    });
    let open = Arc::new(tokio::sync::Mutex::new(Open {
        id: id.clone(),
        conversation,
        profile,
        model,
    }));
    let gone = hub.sessions.held().hold(id, open.clone());
    drop(gone);
    Ok(open)
}
