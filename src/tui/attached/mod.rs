//! `attach`: the console over a daemon (docs/daemon.md). The daemon runs the servers, the
//! gate and the agent's sessions; the console shows them as it shows its own runtime's: the
//! daemon's events are read back into runtime events (`runtime::event_from_json`), its
//! approvals into requests whose answers go back to the daemon, and the effects a console
//! asks for become the daemon's requests (effects.rs, and chat.rs for the Conversation).
//! `q` detaches: the daemon's servers, calls and sessions go on.

mod chat;
pub(super) mod effects;
mod ingest;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::messages::{AppEvent, Level};
use super::state::decision_words;
use crate::approval::ApprovalDecision;
use crate::daemon::client::{Link, Notice};
use crate::runtime::{approval_from_json, decision_named, event_from_json, tool_from_json};
use crate::runtime::{RuntimeEvent, ServerReport};
use crate::tool::ToolDescriptor;

/// A console's attachment to a daemon.
pub struct Attachment {
    pub link: Arc<Link>,
    /// Where the agent events of this console's sessions go, by session id (chat.rs).
    chats: Mutex<HashMap<String, mpsc::UnboundedSender<Value>>>,
}

impl Attachment {
    pub fn new(link: Arc<Link>) -> Arc<Attachment> {
        Arc::new(Attachment {
            link,
            chats: Mutex::default(),
        })
    }

    fn chats(&self) -> std::sync::MutexGuard<'_, HashMap<String, mpsc::UnboundedSender<Value>>> {
        self.chats.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the notice line says once attached.
    pub fn greeting(&self) -> String {
        let daemon = &self.link.hello["daemon"];
        format!(
            "attached to the daemon at {} (pid {}, {} console(s)); q detaches and leaves its servers, calls and sessions running",
            self.link.address,
            daemon["pid"],
            daemon["consoles"].as_u64().unwrap_or(1),
        )
    }
}

/// The `TOOL` objects of a daemon's answer, as descriptors.
fn tools_of(value: &Value) -> Vec<ToolDescriptor> {
    value
        .as_array()
        .map(|tools| tools.iter().filter_map(tool_from_json).collect())
        .unwrap_or_default()
}

/// Feeds the daemon's snapshot, then everything it sends, to the console as app events, in
/// the order it came.
pub fn start(
    attachment: Arc<Attachment>,
    mut notices: mpsc::Receiver<Notice>,
    tx: mpsc::Sender<AppEvent>,
) {
    tokio::spawn(async move {
        let hello = &attachment.link.hello;
        let servers: Vec<ServerReport> = hello["servers"]
            .as_array()
            .map(|s| {
                s.iter()
                    .filter_map(|r| serde_json::from_value(r.clone()).ok())
                    .collect()
            })
            .unwrap_or_default();
        let tools = tools_of(&hello["tools"]);
        if tx
            .send(AppEvent::Attached { servers, tools })
            .await
            .is_err()
        {
            return;
        }
        let mut feed = Feed {
            attachment: attachment.clone(),
            tx: tx.clone(),
            answered: HashMap::new(),
        };
        // What happened meanwhile: the calls, as they went. Approvals asked then are asked
        // again below if they still wait, not replayed.
        for message in hello["recent"].as_array().into_iter().flatten() {
            if message["method"] == "event" && message["params"]["type"] != "approval_requested" {
                feed.event(&message["params"]).await;
            }
        }
        for approval in hello["approvals"].as_array().into_iter().flatten() {
            feed.event(approval).await;
        }
        while let Some(notice) = notices.recv().await {
            if !feed.notice(notice).await {
                return;
            }
        }
        let why = format!(
            "the daemon at {} went away: nothing more is shown (q quits; attach again once it is back)",
            attachment.link.address
        );
        let _ = tx.send(AppEvent::Notice(Level::Error, why)).await;
    });
}

/// The daemon's messages on their way to the console.
struct Feed {
    attachment: Arc<Attachment>,
    tx: mpsc::Sender<AppEvent>,
    /// Who answered each approval (`answered`), until its `approval_answered` event.
    answered: HashMap<u64, String>,
}

impl Feed {
    async fn send(&self, event: AppEvent) -> bool {
        self.tx.send(event).await.is_ok()
    }

    /// One notification; false once the console is gone.
    async fn notice(&mut self, notice: Notice) -> bool {
        let params = notice.params;
        match notice.method.as_str() {
            "event" => return self.event(&params).await,
            "agent" => {
                let session = params["session"].as_str().unwrap_or_default();
                let chats = self.attachment.chats();
                if let Some(chat) = chats.get(session) {
                    let _ = chat.send(params["event"].clone());
                }
            }
            "answered" => {
                if let Some(id) = params["id"].as_u64() {
                    let by = &params["by"];
                    let text = if by["pid"] == self.attachment.link.hello["you"]["pid"]
                        && by["text"] == self.attachment.link.hello["you"]["text"]
                    {
                        "you".to_string()
                    } else {
                        by["text"].as_str().unwrap_or("another console").to_string()
                    };
                    self.answered.insert(id, text);
                }
            }
            "dropped" => {
                let text = format!(
                    "this console fell behind: the daemon dropped {} of its events (what it shows may be missing some)",
                    params["count"]
                );
                return self.send(AppEvent::Notice(Level::Warn, text)).await;
            }
            "closing" => {
                let text = format!(
                    "the daemon is stopping: {}",
                    params["reason"].as_str().unwrap_or("asked to")
                );
                return self.send(AppEvent::Notice(Level::Error, text)).await;
            }
            _ => {}
        }
        true
    }

    /// One runtime event as the daemon wrote it.
    async fn event(&mut self, value: &Value) -> bool {
        match value["type"].as_str() {
            Some("approval_requested") => {
                let Some(request) = self.ask(value) else {
                    return true;
                };
                return self
                    .send(AppEvent::Runtime(
                        0,
                        RuntimeEvent::ApprovalRequested(request),
                    ))
                    .await;
            }
            Some("approval_answered") => {
                let id = value["id"].as_u64().unwrap_or_default();
                let decision = value["decision"].as_str().and_then(decision_named);
                if let (Some(by), Some(decision)) = (self.answered.remove(&id), decision) {
                    let text = format!("{} by {by}", decision_words(decision));
                    return self.send(AppEvent::Decided { id, text }).await;
                }
            }
            _ => {}
        }
        let relist = matches!(
            value["type"].as_str(),
            Some("tools_changed" | "server_closed")
        ) || value["report"]["status"] == "ready";
        if let Some(event) = event_from_json(value) {
            if !self.send(AppEvent::Runtime(0, event)).await {
                return false;
            }
        }
        if relist {
            let (link, tx) = (self.attachment.link.clone(), self.tx.clone());
            tokio::spawn(async move {
                if let Ok(answer) = link.request("tools", json!({})).await {
                    let _ = tx.send(AppEvent::Tools(tools_of(&answer["tools"]))).await;
                }
            });
        }
        true
    }

    /// An approval the daemon asks: its answer in this console goes back to the daemon (where
    /// the first console's answer wins; a later one is told who answered).
    fn ask(&self, value: &Value) -> Option<crate::approval::ApprovalRequest> {
        let (request, answer) = approval_from_json(value)?;
        let (link, tx, id) = (self.attachment.link.clone(), self.tx.clone(), request.id);
        tokio::spawn(async move {
            let Ok(decision) = answer.await else {
                return;
            };
            // `A` writes a rule into the config, which is the daemon's: allowed once here.
            let decision = match decision {
                ApprovalDecision::AllowAlways => ApprovalDecision::AllowOnce,
                other => other,
            };
            let params = json!({"id": id, "decision": decision.as_str()});
            if let Err((_, why)) = link.request("approve", params).await {
                let _ = tx.send(AppEvent::Notice(Level::Warn, why)).await;
            }
        });
        Some(request)
    }
}
