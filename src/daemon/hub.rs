//! What every console of a daemon shares: the runtime's events fanned out, each console's own
//! bounded queue (a console that stops reading loses events, counted, and holds up nobody),
//! the recent events a console sees when it attaches, and the approvals waiting for an answer
//! (the first answer wins; the others are told who gave it); the servers' questions beside
//! them (questions.rs).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::wire::{code, notification};
use crate::approval::{AnsweredBy, ApprovalDecision, ApprovalRequest, CallOrigin};
use crate::config::Config;
use crate::runtime::AgentRuntime;

/// Most event lines queued for one console; past it that console's events are dropped and
/// counted (docs/daemon.md).
pub const CONSOLE_QUEUE: usize = 4096;
/// Most bytes of event lines queued for one console (a server's messages may be large): past
/// it, as past `CONSOLE_QUEUE`, its events are dropped and counted.
pub const CONSOLE_BYTES: usize = 16 << 20;
/// Most recent event lines a console is sent when it attaches.
pub const HISTORY: usize = 1000;
/// Most bytes those recent lines take; the oldest go first past it.
pub const HISTORY_BYTES: usize = 4 << 20;
/// Most answered approvals remembered, to tell a late answer who came first.
const ANSWERED: usize = 256;

/// Who a console is: as it named itself, and its pid as the socket says.
#[derive(Debug, Clone, PartialEq)]
pub struct Who {
    pub name: String,
    pub user: String,
    pub host: String,
    pub pid: Option<i32>,
}

impl Who {
    /// `console alice@build-7 (pid 4242)`.
    pub fn text(&self) -> String {
        match self.pid {
            Some(pid) => format!("{} {}@{} (pid {pid})", self.name, self.user, self.host),
            None => format!("{} {}@{}", self.name, self.user, self.host),
        }
    }

    pub fn json(&self) -> Value {
        json!({"name": self.name, "user": self.user, "host": self.host, "pid": self.pid, "text": self.text()})
    }
}

/// One attached console's side of the fan-out.
pub struct Console {
    events: mpsc::Sender<Arc<str>>,
    /// Events that did not fit since the console last read; said to it before the next one.
    pub dropped: AtomicU64,
    /// Bytes of the lines queued for it (its writer takes off what it writes).
    pub queued: AtomicUsize,
}

impl Console {
    /// A console and the receiving end its writer reads.
    pub fn new() -> (Arc<Console>, mpsc::Receiver<Arc<str>>) {
        let (events, rx) = mpsc::channel(CONSOLE_QUEUE);
        let console = Arc::new(Console {
            events,
            dropped: AtomicU64::new(0),
            queued: AtomicUsize::new(0),
        });
        (console, rx)
    }
}

/// A waiting approval: the request, and its `approval_requested` line.
struct Pending {
    request: ApprovalRequest,
    line: Arc<str>,
}

#[derive(Default)]
struct State {
    consoles: Vec<Arc<Console>>,
    history: VecDeque<Arc<str>>,
    /// Bytes of `history`.
    history_bytes: usize,
    pending: HashMap<u64, Pending>,
    answered: VecDeque<(u64, Who)>,
}

/// The daemon's shared state.
pub struct Hub {
    pub runtime: Arc<AgentRuntime>,
    pub config: Config,
    /// The agent sessions it holds.
    pub sessions: super::sessions::Sessions,
    /// Held by the turn boundary the daemon runs between prompts: one at a time.
    pub boundary: tokio::sync::Mutex<()>,
    /// The config file's digest as the daemon last loaded or wrote it (edits.rs), held while
    /// it is written.
    pub digest: tokio::sync::Mutex<u64>,
    /// The servers' questions waiting for a console (questions.rs).
    pub questions: super::questions::Questions,
    /// The servers' sampling requests waiting for a console (questions.rs).
    pub samplings: super::questions::Samplings,
    /// The model endpoints the daemon started, one per profile, for its sessions and `sample`
    /// (models.rs).
    pub models: super::models::Models,
    state: Mutex<State>,
}

/// Why an `approve` (or an `answer_elicitation`, an `answer_sampling`) was not taken.
#[derive(Debug)]
pub struct Refusal {
    pub code: i64,
    pub message: String,
}

impl Hub {
    pub fn new(runtime: Arc<AgentRuntime>, config: Config) -> Hub {
        Hub {
            runtime,
            digest: tokio::sync::Mutex::new(config.source_digest),
            sessions: super::sessions::Sessions::new(config.daemon.sessions),
            config,
            boundary: tokio::sync::Mutex::new(()),
            questions: Default::default(),
            samplings: Default::default(),
            models: Default::default(),
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends `line` (an `event` notification) to every console, keeping it in the history.
    pub fn broadcast(&self, line: String) {
        let line: Arc<str> = line.into();
        let mut state = self.state();
        state.history_bytes += line.len();
        state.history.push_back(line.clone());
        while state.history.len() > HISTORY || state.history_bytes > HISTORY_BYTES {
            let Some(old) = state.history.pop_front() else {
                break;
            };
            state.history_bytes -= old.len();
        }
        state.consoles.retain(|console| {
            let queued = console.queued.load(Ordering::Relaxed);
            if queued + line.len() > CONSOLE_BYTES {
                console.dropped.fetch_add(1, Ordering::Relaxed);
                return true;
            }
            match console.events.try_send(line.clone()) {
                Ok(()) => {
                    console.queued.fetch_add(line.len(), Ordering::Relaxed);
                    true
                }
                Err(mpsc::error::TrySendError::Full(_)) => {
                    console.dropped.fetch_add(1, Ordering::Relaxed);
                    true
                }
                // Its writer ended: the console is gone.
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            }
        });
    }

    /// Attaches a console: from now on it gets every event. Returns the recent events and the
    /// approvals waiting, as lines, for its `initialize` answer.
    pub fn attach(&self, console: Arc<Console>) -> (Vec<Arc<str>>, Vec<Arc<str>>) {
        let mut state = self.state();
        state.consoles.push(console);
        let recent = state.history.iter().cloned().collect();
        let mut pending: Vec<(u64, Arc<str>)> = state
            .pending
            .iter()
            .map(|(id, p)| (*id, p.line.clone()))
            .collect();
        pending.sort_by_key(|(id, _)| *id);
        (recent, pending.into_iter().map(|(_, line)| line).collect())
    }

    /// How many consoles are attached.
    pub fn consoles(&self) -> usize {
        self.state().consoles.len()
    }

    /// A console's connection ended: it is attached no more.
    pub fn detach(&self, console: &Arc<Console>) {
        self.state().consoles.retain(|c| !Arc::ptr_eq(c, console));
    }

    /// An approval request from the runtime: kept until a console answers it. A host's, with
    /// no console attached, is refused at once (`gateway.unattended`: nobody is there to
    /// approve it, and what would ask is refused under `rules` too).
    pub fn ask(&self, request: ApprovalRequest, line: String) {
        let line: Arc<str> = line.into();
        let id = request.id;
        let mut state = self.state();
        if state.consoles.is_empty() && matches!(request.origin, CallOrigin::Host { .. }) {
            drop(state);
            request.respond_by(ApprovalDecision::Deny, AnsweredBy::Unattended);
            return;
        }
        state.pending.insert(id, Pending { request, line });
    }

    /// A console's answer to approval `id`: the first one is given to the runtime and said to
    /// every console (`answered`, naming who); a later one is refused, naming who came first.
    /// The tool and pin of call `id`'s approval, while it waits.
    pub fn waiting_tool(&self, id: u64) -> Option<(String, Option<String>)> {
        let state = self.state();
        let pending = state.pending.get(&id)?;
        Some((
            pending.request.tool.name.clone(),
            pending.request.tool.pin.clone(),
        ))
    }

    pub fn answer(&self, id: u64, decision: ApprovalDecision, who: &Who) -> Result<(), Refusal> {
        let mut state = self.state();
        let Some(pending) = state.pending.remove(&id) else {
            let first = state.answered.iter().find(|(a, _)| *a == id);
            return Err(match first {
                Some((_, first)) => Refusal {
                    code: code::ALREADY_ANSWERED,
                    message: format!(
                        "call {id}'s approval was already answered by {}",
                        first.text()
                    ),
                },
                None => Refusal {
                    code: code::NO_SUCH_APPROVAL,
                    message: format!("no approval of call {id} is waiting"),
                },
            });
        };
        if decision == ApprovalDecision::AllowForSession
            && !pending.request.session_approval_allowed()
        {
            state.pending.insert(id, pending);
            return Err(Refusal {
                code: code::INVALID_PARAMS,
                message: "allow_for_session is not offered for a destructive tool".into(),
            });
        }
        if state.answered.len() == ANSWERED {
            state.answered.pop_front();
        }
        state.answered.push_back((id, who.clone()));
        drop(state);
        pending.request.respond_by(decision, AnsweredBy::Operator);
        let said = json!({"id": id, "decision": decision.as_str(), "by": who.json()});
        self.broadcast(notification("answered", said));
        Ok(())
    }

    /// Call `id` ended: an approval of it still kept (the call was cancelled while it waited)
    /// is waiting no more.
    pub fn call_ended(&self, id: u64) {
        let gone = self.state().pending.remove(&id);
        drop(gone);
    }

    /// Drops every waiting approval (they answer themselves `deny`): the daemon is stopping.
    pub fn drop_pending(&self) {
        let pending: Vec<Pending> = self.state().pending.drain().map(|(_, p)| p).collect();
        drop(pending);
    }
}
