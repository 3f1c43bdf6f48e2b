//! The Conversation over `attach`: the agent runs in the daemon, in a session opened there
//! (`open_session`), so it goes on when this console detaches. Each prompt is the daemon's
//! `prompt`; its agent events, which the daemon sends every console, are shown here for this
//! console's session only; Esc is `stop_prompt`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::Attachment;
use crate::agent::{agent_event_from_json, report_from_json};
use crate::tui::chat::{AgentCommand, ChatEvent};
use crate::tui::messages::AppEvent;

/// How long, after a prompt's answer, its last events may still come: the daemon writes a
/// console's answers before the events waiting for it (docs/daemon.md).
const LAST_EVENTS: Duration = Duration::from_secs(2);

/// Whether an agent event (as the daemon wrote it) is a prompt's last.
fn last(event: &Value) -> bool {
    matches!(event["type"].as_str(), Some("answer" | "stopped"))
}

/// Opens a session in the daemon (`resume`, else a new one with `profile`) and runs this
/// console's prompts in it until the console lets it go.
pub(super) fn start(
    attachment: Arc<Attachment>,
    epoch: u64,
    profile: String,
    resume: Option<String>,
    tx: mpsc::Sender<AppEvent>,
) {
    tokio::spawn(async move {
        let send = |event: ChatEvent| {
            let tx = tx.clone();
            async move { tx.send(AppEvent::Agent(epoch, event)).await.is_ok() }
        };
        let link = attachment.first().clone();
        let params = json!({"model": profile, "session": resume});
        let session = match link.request("open_session", params).await {
            Ok(answer) => answer["session"].as_str().unwrap_or_default().to_string(),
            Err((_, why)) => {
                send(ChatEvent::Failed(format!(
                    "the daemon did not open a session: {why}"
                )))
                .await;
                return;
            }
        };
        let (events, mut events_rx) = mpsc::unbounded_channel();
        attachment.chats().insert(session.clone(), events);
        let (commands, mut prompts) = mpsc::unbounded_channel();
        let ready = ChatEvent::Ready {
            commands,
            records: Vec::new(),
            base_url: format!("the daemon's session {session} ({})", link.address),
            client: None,
        };
        if !send(ready).await || !send(ChatEvent::Session(session.clone())).await {
            attachment.chats().remove(&session);
            return;
        }
        while let Some(AgentCommand::Prompt {
            text,
            cancel,
            attachments,
            prompt,
        }) = prompts.recv().await
        {
            let own = text.trim();
            if !attachments.is_empty() || prompt.is_some() || own == "/usage" || own == "/compact" {
                let why = "attachments, server prompts, /usage and /compact are not sent to a daemon yet: ask in words";
                if !send(ChatEvent::Ended(Some(why.into()))).await {
                    break;
                }
                continue;
            }
            let request = link.request("prompt", json!({"text": text, "session": session}));
            tokio::pin!(request);
            let mut stopping = false;
            let mut ended = false;
            let answer = loop {
                tokio::select! {
                    answer = &mut request => break answer,
                    () = cancel.cancelled(), if !stopping => {
                        stopping = true;
                        let (link, session) = (link.clone(), session.clone());
                        tokio::spawn(async move {
                            let _ = link.request("stop_prompt", json!({"session": session})).await;
                        });
                    }
                    Some(event) = events_rx.recv() => {
                        ended |= last(&event);
                        if let Some(event) = agent_event_from_json(&event) {
                            send(ChatEvent::Event(event)).await;
                        }
                    }
                }
            };
            // The answer may come before the prompt's last events.
            let deadline = tokio::time::Instant::now() + LAST_EVENTS;
            while !ended && answer.is_ok() {
                match tokio::time::timeout_at(deadline, events_rx.recv()).await {
                    Ok(Some(event)) => {
                        ended = last(&event);
                        if let Some(event) = agent_event_from_json(&event) {
                            send(ChatEvent::Event(event)).await;
                        }
                    }
                    Ok(None) | Err(_) => break,
                }
            }
            let done = match answer.map(|a| report_from_json(&a)) {
                Ok(Some(report)) => ChatEvent::Done(report),
                Ok(None) => ChatEvent::Ended(Some("the daemon's answer could not be read".into())),
                Err((_, why)) => ChatEvent::Ended(Some(why)),
            };
            if !send(done).await {
                break;
            }
        }
        attachment.chats().remove(&session);
    });
}
