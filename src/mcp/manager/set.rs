//! `ServerSet`: the one owner of a manager's servers — the ready ones (client, config, listed
//! tools), the starts in flight (each with an epoch, so that a start overtaken by a newer one
//! of the same server can never join), and one report per configured server.
//!
//! Every change to which servers are ready goes through a method here, under the manager's one
//! lock; start-up, restarts, the supervisor and tool refreshes only call these.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::config::ServerConfig;
use crate::mcp::client::{DefaultMcpClient, McpClient};
use crate::mcp::events::{ServerReport, ServerStatus};
use crate::mcp::tool::{ListedTool, McpTool};

/// A server that finished its start and is in use.
pub(crate) struct ReadyServer {
    pub(crate) client: Arc<DefaultMcpClient>,
    pub(crate) config: ServerConfig,
    /// Its tools, each resolved once under its trust; the registry holds the same ones.
    pub(crate) tools: Vec<Arc<McpTool>>,
}

impl ReadyServer {
    /// A ready server and its listed tools, each made an `McpTool` under the server's trust.
    pub(crate) fn new(
        client: Arc<DefaultMcpClient>,
        config: ServerConfig,
        listed: Vec<ListedTool>,
    ) -> ReadyServer {
        let tools = mcp_tools(client.clone(), &config, listed);
        ReadyServer {
            client,
            config,
            tools,
        }
    }
}

/// The listed tools as `McpTool`s of `client`, resolved under the server's trust.
pub(crate) fn mcp_tools(
    client: Arc<dyn McpClient>,
    config: &ServerConfig,
    listed: Vec<ListedTool>,
) -> Vec<Arc<McpTool>> {
    listed
        .into_iter()
        .map(|tool| {
            Arc::new(McpTool::new(
                &config.name,
                config.annotation_trust,
                tool,
                client.clone(),
            ))
        })
        .collect()
}

/// A start in flight.
struct InFlight {
    epoch: u64,
    cancel: CancellationToken,
}

/// One configured server's report.
struct Slot {
    report: ServerReport,
    /// A later entry with a name already used: it never starts, and updates by name never
    /// reach it.
    duplicate: bool,
}

/// What became of a ready client offered to the set.
pub(crate) enum Join {
    /// It joined the ready set.
    Joined,
    /// A newer start of the same server began meanwhile (a restart), or the manager is
    /// closing: the client must be closed, never registered.
    Stale(Arc<DefaultMcpClient>),
    /// Another client already holds the name (the last of the three name checks: the first
    /// holder wins).
    Taken(Arc<DefaultMcpClient>),
}

#[derive(Default)]
pub(crate) struct ServerSet {
    ready: BTreeMap<String, ReadyServer>,
    starting: HashMap<String, InFlight>,
    slots: Vec<Slot>,
    epoch: u64,
}

impl ServerSet {
    /// A new start-up of `servers`: one slot each, in config order. `report` gives a slot's
    /// first report (disabled, a duplicate name, or starting).
    pub(crate) fn reset_slots(&mut self, reports: Vec<(ServerReport, bool)>) {
        self.slots = reports
            .into_iter()
            .map(|(report, duplicate)| Slot { report, duplicate })
            .collect();
    }

    /// A start of `server` begins: any start of it still in flight is cancelled (it can no
    /// longer join). Returns the new start's epoch and its cancellation (a child of `parent`).
    pub(crate) fn begin(
        &mut self,
        server: &str,
        parent: &CancellationToken,
    ) -> (u64, CancellationToken) {
        self.epoch += 1;
        let cancel = parent.child_token();
        let old = self.starting.insert(
            server.to_string(),
            InFlight {
                epoch: self.epoch,
                cancel: cancel.clone(),
            },
        );
        if let Some(old) = old {
            old.cancel.cancel();
        }
        (self.epoch, cancel)
    }

    /// Whether `epoch` is the start of `server` in flight.
    fn current(&self, server: &str, epoch: u64) -> bool {
        self.starting.get(server).is_some_and(|s| s.epoch == epoch)
    }

    /// A start ends without a client (failed, or disabled): its report is stored if it is still
    /// the current start.
    /// Returns whether it was.
    pub(crate) fn end(&mut self, epoch: u64, report: &ServerReport) -> bool {
        if !self.current(&report.name, epoch) {
            return false;
        }
        self.starting.remove(&report.name);
        self.store(report.clone());
        true
    }

    /// A start that succeeded offers its client: it joins if it is still the current start
    /// and the name is free; its report is stored either way it is current.
    pub(crate) fn join(&mut self, epoch: u64, server: ReadyServer, report: &ServerReport) -> Join {
        let name = server.config.name.clone();
        if !self.current(&name, epoch) {
            return Join::Stale(server.client);
        }
        self.starting.remove(&name);
        if self.ready.contains_key(&name) {
            return Join::Taken(server.client);
        }
        self.ready.insert(name, server);
        self.store(report.clone());
        Join::Joined
    }

    /// Replaces the report of `report.name` (its first, non-duplicate slot); a server not in
    /// the list (restarted after the config changed) gets a slot at the end.
    pub(crate) fn store(&mut self, report: ServerReport) {
        match self
            .slots
            .iter_mut()
            .find(|s| !s.duplicate && s.report.name == report.name)
        {
            Some(slot) => slot.report = report,
            None => self.slots.push(Slot {
                report,
                duplicate: false,
            }),
        }
    }

    /// Every report, in config order.
    pub(crate) fn reports(&self) -> Vec<ServerReport> {
        self.slots.iter().map(|s| s.report.clone()).collect()
    }

    /// The report of `server`, if it is configured.
    pub(crate) fn report(&self, server: &str) -> Option<&ServerReport> {
        self.slots
            .iter()
            .find(|s| !s.duplicate && s.report.name == server)
            .map(|s| &s.report)
    }

    /// True when no configured server is still starting.
    pub(crate) fn settled(&self) -> bool {
        self.slots
            .iter()
            .all(|s| s.report.status != ServerStatus::Starting)
    }

    /// Takes `server` out of the ready set (a restart by hand).
    pub(crate) fn remove(&mut self, server: &str) -> Option<ReadyServer> {
        self.ready.remove(server)
    }

    /// Takes `server` out of the ready set if `client` is still its client (it went away by
    /// itself). Its tools stay registered and answer `disconnected`.
    pub(crate) fn take_if_current(&mut self, server: &str, client: &Arc<DefaultMcpClient>) -> bool {
        match self.ready.get(server) {
            Some(s) if Arc::ptr_eq(&s.client, client) => {
                self.ready.remove(server);
                true
            }
            Some(_) | None => false,
        }
    }

    /// Takes every ready server out, and cancels every start in flight (closing).
    pub(crate) fn drain(&mut self) -> Vec<(String, Arc<DefaultMcpClient>)> {
        for (_, start) in self.starting.drain() {
            start.cancel.cancel();
        }
        std::mem::take(&mut self.ready)
            .into_iter()
            .map(|(name, s)| (name, s.client))
            .collect()
    }

    /// A ready server.
    pub(crate) fn ready(&self, server: &str) -> Option<&ReadyServer> {
        self.ready.get(server)
    }

    /// The names of the ready servers, sorted.
    pub(crate) fn ready_names(&self) -> Vec<String> {
        self.ready.keys().cloned().collect()
    }

    /// The ready servers, sorted by name.
    pub(crate) fn ready_servers(&self) -> impl Iterator<Item = (&String, &ReadyServer)> {
        self.ready.iter()
    }

    /// Replaces the listed tools of a ready server; false when it is not ready.
    pub(crate) fn set_tools(&mut self, server: &str, listed: Vec<ListedTool>) -> bool {
        match self.ready.get_mut(server) {
            Some(entry) => {
                entry.tools = mcp_tools(entry.client.clone(), &entry.config, listed);
                true
            }
            None => false,
        }
    }
}
