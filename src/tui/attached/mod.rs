//! `attach`: the console over a daemon (docs/daemon.md). The daemon runs the servers, the
//! gate and the agent's sessions; the console shows them as it shows its own runtime's: the
//! daemon's events are read back into runtime events (`runtime::event_from_json`), its
//! approvals into requests whose answers go back to the daemon, and the effects a console
//! asks for become the daemon's requests (effects.rs, and chat.rs for the Conversation).
//! `q` detaches: the daemon's servers, calls and sessions go on. Attached to several daemons
//! at once, their names are kept apart (fleet.rs).

mod chat;
mod content;
pub(super) mod effects;
mod fleet;
mod ingest;
mod ledger;
mod questions;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::messages::{AppEvent, Level};
use super::modals::ledger::LedgerRow;
use super::state::decision_words;
use crate::approval::ApprovalDecision;
use crate::daemon::client::{Link, Notice};
use crate::runtime::{approval_from_json, decision_named, event_from_json, tool_from_json};
use crate::runtime::{RuntimeEvent, ServerReport};
use crate::tool::ToolDescriptor;
use questions::Kind;

/// One daemon the console is attached to, and how its names are told apart.
pub struct Daemon {
    pub link: Arc<Link>,
    pub names: fleet::Names,
}

/// A console's attachment to its daemons (the first one runs its Conversation).
pub struct Attachment {
    pub daemons: Vec<Daemon>,
    /// Where the agent events of this console's sessions go, by session id (chat.rs).
    chats: Mutex<HashMap<String, mpsc::UnboundedSender<Value>>>,
    /// The daemons' rules and session approvals, as they last said (ledger.rs); `None` until
    /// they first have.
    ledger: Mutex<Option<Vec<LedgerRow>>>,
}

/// A short name for each daemon: the host of a `tls://` one, the folder of a socket; made
/// unique by its place where two are alike.
fn labels(links: &[Arc<Link>]) -> Vec<String> {
    let short: Vec<String> = links
        .iter()
        .map(|l| {
            let address = l.address.trim_start_matches("tls://");
            match l.address.starts_with("tls://") {
                true => address
                    .rsplit_once(':')
                    .map_or(address, |(h, _)| h)
                    .to_string(),
                false => std::path::Path::new(address)
                    .parent()
                    .and_then(|p| p.file_name())
                    .map_or_else(|| address.to_string(), |n| n.to_string_lossy().into_owned()),
            }
        })
        .collect();
    short
        .iter()
        .enumerate()
        .map(
            |(i, label)| match short.iter().filter(|l| *l == label).count() {
                1 => label.clone(),
                _ => format!("{label}-{}", i + 1),
            },
        )
        .collect()
}

impl Attachment {
    pub fn new(links: Vec<Arc<Link>>) -> Arc<Attachment> {
        let count = links.len();
        let daemons = links
            .iter()
            .cloned()
            .zip(labels(&links))
            .enumerate()
            .map(|(i, (link, label))| Daemon {
                link,
                names: fleet::Names::new(label, i, count),
            })
            .collect();
        Arc::new(Attachment {
            daemons,
            chats: Mutex::default(),
            ledger: Mutex::default(),
        })
    }

    /// The daemons' rules and session approvals, as they last said (`L`); `None` while they
    /// have not said yet.
    pub fn ledger(&self) -> Option<Vec<LedgerRow>> {
        self.ledger
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The daemon the Conversation runs on.
    pub fn first(&self) -> &Arc<Link> {
        &self.daemons[0].link
    }

    /// The daemon whose name `local` finds, with that name in the daemon's own words.
    fn whose<T>(&self, local: impl Fn(&fleet::Names) -> Option<T>) -> Option<(&Daemon, T)> {
        self.daemons
            .iter()
            .find_map(|d| local(&d.names).map(|own| (d, own)))
    }

    /// The daemon of the console's server `server`: its link, its names and the server's own
    /// name.
    fn server_of(&self, server: &str) -> Option<(Arc<Link>, fleet::Names, String)> {
        let (daemon, own) = self.whose(|n| n.local_server(server).map(str::to_string))?;
        Some((daemon.link.clone(), daemon.names.clone(), own))
    }

    fn chats(&self) -> std::sync::MutexGuard<'_, HashMap<String, mpsc::UnboundedSender<Value>>> {
        self.chats.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the notice line says once attached.
    pub fn greeting(&self) -> String {
        if let [only] = &self.daemons[..] {
            let daemon = &only.link.hello["daemon"];
            return format!(
                "attached to the daemon at {} (pid {}, {} console(s)); q detaches and leaves its servers, calls and sessions running",
                only.link.address,
                daemon["pid"],
                daemon["consoles"].as_u64().unwrap_or(1),
            );
        }
        let each: Vec<String> = self
            .daemons
            .iter()
            .map(|d| format!("{} ({})", d.names.label, d.link.address))
            .collect();
        format!(
            "attached to {} daemons: {}; the Conversation runs on the first; q detaches and leaves them running",
            each.len(),
            each.join(", ")
        )
    }
}

/// The `TOOL` objects of a daemon's answer, as descriptors named as the console shows them.
fn tools_of(value: &Value, names: &fleet::Names) -> Vec<ToolDescriptor> {
    value
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| {
                    let mut tool = tool.clone();
                    names.tool_object(&mut tool);
                    tool_from_json(&tool)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Feeds each daemon's snapshot, then everything it sends, to the console as app events, in
/// the order it came (`notices` are the daemons', in their order).
pub fn start(
    attachment: Arc<Attachment>,
    notices: Vec<mpsc::Receiver<Notice>>,
    tx: mpsc::Sender<AppEvent>,
) {
    for (index, notices) in notices.into_iter().enumerate() {
        tokio::spawn(feed(attachment.clone(), index, notices, tx.clone()));
    }
}

async fn feed(
    attachment: Arc<Attachment>,
    index: usize,
    mut notices: mpsc::Receiver<Notice>,
    tx: mpsc::Sender<AppEvent>,
) {
    {
        let daemon = &attachment.daemons[index];
        let hello = &daemon.link.hello;
        let servers: Vec<ServerReport> = hello["servers"]
            .as_array()
            .map(|s| {
                s.iter()
                    .filter_map(|r| {
                        let mut report = r.clone();
                        if let Some(Value::String(name)) = report.get_mut("name") {
                            *name = daemon.names.server(name);
                        }
                        serde_json::from_value(report).ok()
                    })
                    .collect()
            })
            .unwrap_or_default();
        let tools = tools_of(&hello["tools"], &daemon.names);
        let prefix = daemon.names.server_prefix();
        let attached = AppEvent::Attached {
            prefix,
            servers,
            tools,
        };
        if tx.send(attached).await.is_err() {
            return;
        }
        let mut feed = Feed {
            attachment: attachment.clone(),
            index,
            tx: tx.clone(),
            answered: HashMap::new(),
            questions: HashMap::new(),
            replaying: true,
        };
        // What happened meanwhile: the calls, as they went, and who answered their
        // approvals. Approvals and servers' questions and sampling requests asked then are asked again below if they
        // still wait, not replayed; what was said to the consoles then (closing, dropped) is
        // not said again.
        for message in hello["recent"].as_array().into_iter().flatten() {
            let params = &message["params"];
            let replayed = match message["method"].as_str() {
                Some("event") => !matches!(
                    params["type"].as_str(),
                    Some("approval_requested" | "elicitation_requested" | "sampling_requested")
                ),
                Some("answered") => true,
                _ => false,
            };
            if replayed {
                let notice = Notice {
                    method: message["method"].as_str().unwrap_or_default().to_string(),
                    params: params.clone(),
                };
                feed.notice(notice).await;
            }
        }
        feed.replaying = false;
        let waiting = ["approvals", "elicitations", "samplings"].map(|key| hello[key].as_array());
        for asked in waiting.into_iter().flatten().flatten() {
            feed.event(asked.clone()).await;
        }
        while let Some(notice) = notices.recv().await {
            if !feed.notice(notice).await {
                return;
            }
        }
    }
    let why = format!(
        "the daemon at {} went away: nothing more is shown of it (q quits; attach again once it is back)",
        attachment.daemons[index].link.address
    );
    let _ = tx.send(AppEvent::Notice(Level::Error, why)).await;
}

/// One daemon's messages on their way to the console.
struct Feed {
    attachment: Arc<Attachment>,
    /// Which of its daemons.
    index: usize,
    tx: mpsc::Sender<AppEvent>,
    /// Who answered each approval (`answered`), until its `approval_answered` event.
    answered: HashMap<u64, String>,
    /// The servers' questions and sampling requests asked here, by kind and the daemon's id:
    /// each one's wait for this console's answer (questions.rs).
    questions: HashMap<(Kind, u64), tokio::task::JoinHandle<()>>,
    /// While what happened before the console attached is replayed.
    replaying: bool,
}

impl Feed {
    async fn send(&self, event: AppEvent) -> bool {
        self.tx.send(event).await.is_ok()
    }

    fn daemon(&self) -> &Daemon {
        &self.attachment.daemons[self.index]
    }

    /// One notification; false once the console is gone.
    async fn notice(&mut self, notice: Notice) -> bool {
        let params = notice.params;
        match notice.method.as_str() {
            "event" => return self.event(params).await,
            "agent" => {
                let session = params["session"].as_str().unwrap_or_default();
                let chats = self.attachment.chats();
                if let Some(chat) = chats.get(session) {
                    // Its calls' ids and tools as the Calls pane names them.
                    let mut event = params["event"].clone();
                    self.daemon().names.event(&mut event);
                    let _ = chat.send(event);
                }
            }
            "answered" => {
                if let Some(id) = params["id"].as_u64() {
                    let (by, you) = (&params["by"], &self.daemon().link.hello["you"]);
                    let id = self.daemon().names.id(id);
                    let text = if by["pid"] == you["pid"] && by["text"] == you["text"] {
                        "you".to_string()
                    } else {
                        by["text"].as_str().unwrap_or("another console").to_string()
                    };
                    self.answered.insert(id, text);
                }
            }
            "elicitation_answered" => return self.answered(Kind::Question, &params).await,
            "elicitation_withdrawn" => return self.withdrawn(Kind::Question, &params).await,
            "sampling_answered" => return self.answered(Kind::Sampling, &params).await,
            "sampling_withdrawn" => return self.withdrawn(Kind::Sampling, &params).await,
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
    async fn event(&mut self, mut value: Value) -> bool {
        self.daemon().names.event(&mut value);
        let value = &value;
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
            Some("elicitation_requested") => return self.question(value).await,
            Some("sampling_requested") => return self.sampling(value).await,
            Some("approval_answered") => {
                let id = value["id"].as_u64().unwrap_or_default();
                let decision = value["decision"].as_str().and_then(decision_named);
                // A console's answer (`operator`) is never this console's "you" unless its
                // `answered` said so.
                let by = self.answered.remove(&id).or_else(|| {
                    (value["by"] == "operator").then(|| "a console of the daemon".to_string())
                });
                if let (Some(by), Some(decision)) = (by, decision) {
                    let text = format!("{} by {by}", decision_words(decision));
                    let replayed = self.replaying;
                    return self.send(AppEvent::Decided { id, text, replayed }).await;
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
            let (link, names) = (self.daemon().link.clone(), self.daemon().names.clone());
            let tx = self.tx.clone();
            tokio::spawn(async move {
                if let Ok(answer) = link.request("tools", json!({})).await {
                    let tools = tools_of(&answer["tools"], &names);
                    let _ = tx.send(AppEvent::Tools(names.server_prefix(), tools)).await;
                }
            });
        }
        true
    }

    /// An approval the daemon asks: its answer in this console goes back to the daemon (where
    /// the first console's answer wins; a later one is told who answered).
    fn ask(&self, value: &Value) -> Option<crate::approval::ApprovalRequest> {
        let (request, answer) = approval_from_json(value)?;
        let id = self.daemon().names.local_id(request.id)?;
        let (link, tx) = (self.daemon().link.clone(), self.tx.clone());
        tokio::spawn(async move {
            let Ok(decision) = answer.await else {
                return;
            };
            // `A`: the daemon writes the rule into its config, then answers.
            let params = json!({"id": id, "decision": decision.as_str()});
            let told = match link.request("approve", params).await {
                Err((_, why)) => (Level::Warn, why),
                Ok(answer) if decision == ApprovalDecision::AllowAlways => {
                    let rule = answer["rule"].as_str().unwrap_or("the rule");
                    (Level::Info, format!("the daemon's config now says: {rule}"))
                }
                Ok(_) => return,
            };
            let _ = tx.send(AppEvent::Notice(told.0, told.1)).await;
        });
        Some(request)
    }
}
