//! The agent off the UI's path: one task per (runtime, profile) that starts the model endpoint,
//! reads a resumed session, runs each prompt through `Conversation::prompt` and reports every
//! event back as an app event. The event loop never waits on it; Esc reaches it through the
//! turn's cancel token.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{AgentCommand, ChatEffect, ChatEvent};
use crate::agent::attach::{self, Attachment, PromptUse};
use crate::agent::observe::observed;
use crate::agent::session::SessionPlan;
use crate::agent::transcript::{self, Transcript};
use crate::agent::{AgentEvent, Conversation};
use crate::runtime::AgentRuntime;
use crate::tui::app::App;
use crate::tui::messages::AppEvent;

/// Streamed text joined into one event at most this long (a fast stream costs the console one
/// event per batch, not per token).
const JOIN_TEXT: usize = 16 * 1024;

/// Runs one chat effect in the background.
pub fn run_effect(effect: ChatEffect, app: &App, tx: &mpsc::Sender<AppEvent>) {
    match effect {
        ChatEffect::Start {
            epoch,
            profile,
            resume,
        } => {
            let Some(runtime) = app.runtime().cloned() else {
                return;
            };
            let Some(profile) = app
                .chat
                .agent
                .as_ref()
                .and_then(|a| a.profiles.get(&profile))
                .cloned()
            else {
                return;
            };
            let job = Job {
                epoch,
                runtime,
                plan: SessionPlan {
                    sessions: transcript::sessions_dir(),
                    config: app.config_path().clone(),
                    profile,
                    resume,
                },
                tx: tx.clone(),
            };
            tokio::spawn(job.run());
        }
        ChatEffect::Prompt {
            epoch,
            text,
            attachments,
            prompt,
        } => {
            if epoch != app.chat.epoch {
                return;
            }
            let (Some(commands), Some(turn)) = (app.chat.commands(), app.chat.turn.as_ref()) else {
                return;
            };
            let cancel = turn.cancel.clone();
            if commands
                .send(AgentCommand::Prompt {
                    text,
                    cancel,
                    attachments,
                    prompt,
                })
                .is_err()
            {
                let _ = tx.try_send(AppEvent::Agent(
                    epoch,
                    ChatEvent::Failed("the agent stopped".into()),
                ));
            }
        }
        ChatEffect::Cancel => {
            if let Some(turn) = &app.chat.turn {
                turn.cancel.cancel();
            }
        }
    }
}

/// One agent: a profile over a runtime.
struct Job {
    epoch: u64,
    runtime: Arc<AgentRuntime>,
    plan: SessionPlan,
    tx: mpsc::Sender<AppEvent>,
}

impl Job {
    async fn send(&self, event: ChatEvent) -> bool {
        self.tx
            .send(AppEvent::Agent(self.epoch, event))
            .await
            .is_ok()
    }

    async fn run(self) {
        let records = match self.plan.records() {
            Ok(records) => records,
            Err(e) => {
                self.send(ChatEvent::Failed(e.to_string())).await;
                return;
            }
        };
        // Dropping `endpoint` (when this task ends) stops a started one.
        let (endpoint, client) = match self.plan.model().await {
            Ok(started) => started,
            Err(e) => {
                let why = format!("{}: {} (hint: {})", e.class.as_str(), e.message, e.hint);
                self.send(ChatEvent::Failed(why)).await;
                return;
            }
        };
        let client = observed(
            client,
            &self.runtime,
            &self.plan.profile,
            &endpoint.base_url,
        );
        let (commands, mut prompts) = mpsc::unbounded_channel();
        let history = transcript::items(&records);
        let ready = ChatEvent::Ready {
            commands,
            records,
            base_url: endpoint.base_url.clone(),
            client: Some(client.clone()),
        };
        if !self.send(ready).await {
            return;
        }
        let (events, mut agent_events) = mpsc::unbounded_channel();
        let mut conversation: Option<Conversation> = None;
        let mut history = Some(history);
        while let Some(AgentCommand::Prompt {
            text,
            cancel,
            attachments,
            prompt,
        }) = prompts.recv().await
        {
            // The Conversation's own commands (the `/` picker lists them).
            let own = text.trim();
            if own == "/usage" {
                let items = conversation.as_ref().map_or_else(
                    || history.clone().unwrap_or_default(),
                    |c| c.items().to_vec(),
                );
                self.send(ChatEvent::Note(self.usage(&items))).await;
                if !self.send(ChatEvent::Ended(None)).await {
                    return;
                }
                continue;
            }
            let compact = own == "/compact";
            if compact && conversation.is_none() && history.as_ref().is_none_or(Vec::is_empty) {
                self.send(ChatEvent::Note("nothing to compact yet".into()))
                    .await;
                if !self.send(ChatEvent::Ended(None)).await {
                    return;
                }
                continue;
            }
            if conversation.is_none() {
                let transcript = self.open_transcript().await;
                conversation = Some(self.plan.conversation(
                    self.runtime.clone(),
                    client.clone(),
                    history.take().unwrap_or_default(),
                    transcript,
                    events.clone(),
                    None,
                ));
            }
            let Some(conversation) = conversation.as_mut() else {
                break;
            };
            if compact {
                conversation.compact(&cancel).await;
                while let Ok(event) = agent_events.try_recv() {
                    if !self.forward(event, &mut agent_events).await {
                        return;
                    }
                }
                if !self.send(ChatEvent::Ended(None)).await {
                    return;
                }
                continue;
            }
            let text = match self
                .gather(conversation, text, &attachments, prompt, &cancel)
                .await
            {
                Ok(Some(text)) => text,
                Ok(None) => {
                    if !self.send(ChatEvent::Ended(None)).await {
                        return;
                    }
                    continue;
                }
                Err(why) => {
                    if !self.send(ChatEvent::Ended(Some(why))).await {
                        return;
                    }
                    continue;
                }
            };
            let prompt = conversation.prompt(&text, cancel);
            tokio::pin!(prompt);
            let report = loop {
                tokio::select! {
                    report = &mut prompt => break report,
                    Some(event) = agent_events.recv() => {
                        if !self.forward(event, &mut agent_events).await {
                            return;
                        }
                    }
                }
            };
            // Everything the prompt reported is in the channel by now: all of it, then the end.
            while let Ok(event) = agent_events.try_recv() {
                if !self.forward(event, &mut agent_events).await {
                    return;
                }
            }
            if !self.send(ChatEvent::Done(report)).await {
                return;
            }
        }
        drop(endpoint);
    }

    /// What a prompt is made of besides its text: the attached resources read (their text
    /// joins the message) and a server prompt's messages added to the conversation. Returns
    /// the user message to run (`None`: nothing to ask), or why the prompt cannot go.
    async fn gather(
        &self,
        conversation: &mut Conversation,
        text: String,
        attachments: &[Attachment],
        prompt: Option<PromptUse>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, String> {
        let mut read = Vec::new();
        for a in attachments {
            let result = attach::read(&self.runtime, a, cancel.clone()).await;
            let event = ChatEvent::Attached {
                server: a.server.clone(),
                name: a.name.clone(),
                result: result
                    .as_ref()
                    .map(|r| r.summary.clone())
                    .map_err(Clone::clone),
            };
            self.send(event).await;
            match result {
                Ok(r) => read.push(r),
                Err(e) => return Err(format!("{} could not be read: {e}", a.name)),
            }
        }
        let mut text = attach::with_attachments(&text, &read);
        if let Some(p) = prompt {
            let got = self
                .runtime
                .get_prompt(&p.server, &p.name, &p.arguments, cancel.clone())
                .await
                .map_err(|e| format!("prompt {} of {}: {e}", p.name, p.server))?;
            let mut messages = attach::prompt_items(&got);
            let shown = got
                .messages
                .iter()
                .map(|m| (m.role, m.text.clone()))
                .collect();
            self.send(ChatEvent::PromptAdded {
                server: p.server.clone(),
                name: p.name.clone(),
                messages: shown,
            })
            .await;
            let run = attach::split_last(&mut messages, text);
            conversation.add_items(messages);
            match run {
                Some(run) => text = run,
                None => return Ok(None),
            }
        }
        Ok(Some(text))
    }

    /// `/usage`: what the next request would carry, by part, in estimated tokens.
    fn usage(&self, items: &[crate::agent::turn::Item]) -> String {
        let parts = crate::agent::context::breakdown(
            &self.plan.profile.system_prompt,
            &self.runtime.tools(),
            items,
        );
        let servers: Vec<String> = parts
            .tools_by_server
            .iter()
            .map(|(server, tokens)| format!("{server} ~{tokens}"))
            .collect();
        let window = self
            .plan
            .profile
            .context_window
            .map_or(String::new(), |w| format!(" of a {w}-token window"));
        format!(
            "usage (estimated tokens): system prompt ~{}, tools ~{} ({}), history ~{} (latest results ~{}); total ~{}{window}",
            parts.system_prompt,
            parts.tools,
            servers.join(", "),
            parts.history,
            parts.latest_results,
            parts.total
        )
    }

    /// The transcript: the resumed session's, or a new one (a failure is told, and the
    /// conversation goes on unrecorded).
    async fn open_transcript(&self) -> Option<Transcript> {
        match self.plan.open() {
            Ok((t, _)) => {
                self.send(ChatEvent::Session(t.id().to_string())).await;
                Some(t)
            }
            Err(e) => {
                let text = format!("{e}; the conversation is not recorded");
                self.send(ChatEvent::Warning(text)).await;
                None
            }
        }
    }

    /// Sends `first` on, text deltas of one turn waiting right behind each other joined into
    /// one event; stops at the first event still to come.
    async fn forward(
        &self,
        first: AgentEvent,
        rest: &mut mpsc::UnboundedReceiver<AgentEvent>,
    ) -> bool {
        let mut next = Some(first);
        while let Some(event) = next.take() {
            let event = match event {
                AgentEvent::TextDelta { turn, mut text } => {
                    while text.len() < JOIN_TEXT {
                        match rest.try_recv() {
                            Ok(AgentEvent::TextDelta {
                                turn: t,
                                text: more,
                            }) if t == turn => {
                                text.push_str(&more);
                            }
                            Ok(other) => {
                                next = Some(other);
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                    AgentEvent::TextDelta { turn, text }
                }
                other => other,
            };
            if !self.send(ChatEvent::Event(event)).await {
                return false;
            }
        }
        true
    }
}

/// Whether session `id` exists, for the console's `--resume` (checked before it starts).
pub fn session_exists(id: &str) -> Result<(), String> {
    transcript::locate(&transcript::sessions_dir(), id)
        .map(|_| ())
        .map_err(|e| e.to_string())
}
