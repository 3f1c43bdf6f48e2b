//! The console's one `App`: all UI state, changed only by handlers (runtime events, app events,
//! keys), drawn by `render(&self)`. Work that takes time is not done here: handlers return
//! `Effect`s that the event loop runs in the background (both messages are in `messages.rs`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::chat::ChatState;
use super::messages::{AppEvent, Effect, Level};
use super::modals::call::CallEditor;
use super::modals::Modal;
use super::overlay::{Layer, Overlays};
use super::pane_state::{Pane, Panes, Placement};
use super::panes::hosts::HostBook;
use super::state::{CallList, EventKind, EventLog, ServerRow, ToolRow};
use super::theme::Theme;
use crate::config::Config;
use crate::runtime::startup_deadline;
use crate::runtime::AgentRuntime;
use crate::runtime::ServerStatus;
use crate::tool::{DestructiveBehavior, SideEffectLevel};

/// The notice (and Events line) of `R`, until every server has started again.
pub(super) const RESTARTING_ALL: &str = "restarting every server with the config as it is on disk";
/// The line a restart of every server (`R`) leaves in each server's stderr tail.
pub(super) const RESTART_ALL_MARKER: &str = "──── restarted (R) ────";

/// Where the runtime is.
pub enum RuntimeState {
    Starting,
    Ready(Arc<AgentRuntime>),
    Failed(String),
    /// The runtime is a daemon's (`attach`).
    Attached(Arc<super::attached::Attachment>),
}

/// The runtime the console shows and where it came from: the config file, the generation
/// (each `R` starts a new one), the start-up deadline.
pub struct Session {
    pub config_path: PathBuf,
    pub config_digest: u64,
    pub deadline: Duration,
    pub generation: u64,
    pub runtime: RuntimeState,
    /// When the console started: event times are shown from here.
    pub started_at: Instant,
    /// Tool traits before the last restart-all, to highlight what changed as servers join.
    pub previous_traits: HashMap<String, Traits>,
    /// Where the console serves other MCP hosts (`--serve-http`), for every runtime it starts.
    pub serving: Option<Arc<super::serving::Serving>>,
}

/// What the console shares among its panes and overlays; each pane's own state is in `panes`,
/// the views over the panes in `overlays`.
pub struct App {
    pub(super) theme: Theme,
    /// "Now" for rendering (elapsed times, spinners); set by the loop before each draw.
    pub(super) now: Instant,
    pub(super) session: Session,
    pub(super) servers: Vec<ServerRow>,
    pub(super) tools: Vec<ToolRow>,
    pub(super) calls: CallList,
    pub(super) events: EventLog,
    /// The views over the panes (approvals, servers' requests, dialogs, pickers) and which
    /// one is on top.
    pub(super) overlays: Overlays,
    pub(super) focus: Pane,
    pub(super) placement: Placement,
    /// Each pane's own selection, scroll and filter.
    pub(super) panes: Panes,
    pub(super) notice: Option<(Level, String)>,
    pub(super) quit: bool,
    /// The agent's conversation (the Conversation pane).
    pub(super) chat: ChatState,
    /// The gateway's hosts, while the console serves them (the foot of the Servers pane).
    pub(super) hosts: HostBook,
}

/// A tool's two traits.
pub(super) type Traits = (SideEffectLevel, DestructiveBehavior);

pub(super) fn traits_by_name<'a>(
    tools: impl Iterator<Item = &'a ToolRow>,
) -> HashMap<String, Traits> {
    tools
        .map(|t| (t.name.clone(), (t.side_effect, t.destructive)))
        .collect()
}

/// The runtime's tools as rows, those whose traits differ from `before` marked changed.
pub(super) fn tool_rows(runtime: &AgentRuntime, before: &HashMap<String, Traits>) -> Vec<ToolRow> {
    runtime
        .tools()
        .iter()
        .map(|d| {
            let mut row = ToolRow::from_descriptor(d);
            row.pin = runtime.gate().pin_state(d);
            row.changed = before
                .get(&row.name)
                .is_some_and(|old| *old != (row.side_effect, row.destructive));
            row
        })
        .collect()
}

impl App {
    pub fn new(config: &Config, theme: Theme, now: Instant) -> App {
        App {
            theme,
            now,
            session: Session {
                config_path: config.path.clone(),
                config_digest: config.source_digest,
                deadline: startup_deadline(&config.mcp.servers, config.mcp.startup_budget),
                generation: 0,
                runtime: RuntimeState::Starting,
                started_at: now,
                previous_traits: HashMap::new(),
                serving: None,
            },
            servers: config
                .mcp
                .servers
                .iter()
                .map(ServerRow::from_config)
                .collect(),
            tools: Vec::new(),
            calls: CallList::default(),
            events: EventLog::default(),
            overlays: Overlays::default(),
            // The conversation first when there is an agent to talk to.
            focus: match config.agent {
                Some(_) => Pane::Conversation,
                None => Pane::Servers,
            },
            placement: Placement {
                lower_left: match config.agent {
                    Some(_) => Pane::Conversation,
                    None => Pane::Tools,
                },
                large: std::cell::Cell::new(false),
            },
            panes: Panes::default(),
            notice: None,
            quit: false,
            chat: ChatState::new(config.agent.as_ref()),
            hosts: HostBook::default(),
        }
    }

    /// Whether a view of kind `layer` is open.
    pub(super) fn layer_open(&self, layer: Layer) -> bool {
        let o = &self.overlays;
        match layer {
            Layer::ProfilePicker => self.chat.picker.is_some(),
            Layer::ContentPicker => self.chat.content_picker.is_some(),
            Layer::Modal => o.modal.is_some(),
            Layer::Sampling => !o.samplings.is_empty(),
            Layer::Elicitation => !o.elicitations.is_empty(),
            Layer::Approval => !o.approvals.is_empty(),
            Layer::Quit => o.quit_asked,
        }
    }

    /// The view on top of the panes: drawn, given the keys and named in the footer.
    pub(super) fn top_layer(&self) -> Option<Layer> {
        self.overlays.top(|layer| self.layer_open(layer))
    }

    /// Puts what opened since the last handler on top of the stack, drops what closed.
    pub(super) fn sync_overlays(&mut self) {
        // Runs after every event (a flood of server logs too): no allocation.
        let open = Layer::ALL.map(|layer| self.layer_open(layer));
        self.overlays
            .sync(|layer| Layer::ALL.iter().zip(open).any(|(l, o)| *l == layer && o));
    }

    pub fn set_now(&mut self, now: Instant) {
        self.now = now;
    }

    /// The highest call id listed in Calls (0 when none).
    pub fn last_call_id(&self) -> u64 {
        self.calls.rows.iter().map(|r| r.id).max().unwrap_or(0)
    }

    /// A key came from the terminal at `at` (before `on_key` takes it).
    pub fn key_came(&mut self, at: Instant) {
        self.overlays.guard.key_came(at);
    }

    pub fn should_quit(&self) -> bool {
        self.quit
    }

    pub fn generation(&self) -> u64 {
        self.session.generation
    }

    pub fn config_path(&self) -> &PathBuf {
        &self.session.config_path
    }

    /// Each tool row's pin state, read again from the gate (an approval, or a rule written,
    /// changes it).
    pub(super) fn refresh_pins(&mut self) {
        let Some(runtime) = self.runtime().cloned() else {
            return;
        };
        let tools = runtime.tool_snapshot();
        for row in &mut self.tools {
            if let Some(tool) = tools.get(&row.name) {
                row.pin = runtime.gate().pin_state(tool.descriptor());
            }
        }
    }

    pub fn runtime(&self) -> Option<&Arc<AgentRuntime>> {
        match &self.session.runtime {
            RuntimeState::Ready(rt) => Some(rt),
            RuntimeState::Starting | RuntimeState::Failed(_) | RuntimeState::Attached(_) => None,
        }
    }

    /// The daemon the console is attached to (`attach`).
    pub fn attachment(&self) -> Option<&Arc<super::attached::Attachment>> {
        match &self.session.runtime {
            RuntimeState::Attached(a) => Some(a),
            _ => None,
        }
    }

    /// Shows the daemon of `attachment` instead of a runtime of its own.
    pub fn attach(&mut self, attachment: Arc<super::attached::Attachment>) {
        self.notify(Level::Info, attachment.greeting());
        // The daemons' servers, not the config's, as they report.
        self.servers.clear();
        self.session.runtime = RuntimeState::Attached(attachment);
    }

    /// Whether there is a runtime to work with: its own, or a daemon's.
    pub(super) fn connected(&self) -> bool {
        matches!(
            self.session.runtime,
            RuntimeState::Ready(_) | RuntimeState::Attached(_)
        )
    }

    /// True while something moves on screen (a spinner, an elapsed counter).
    pub fn animating(&self) -> bool {
        self.servers
            .iter()
            .any(|s| s.status == ServerStatus::Starting)
            || self.calls.running() > 0
            || matches!(self.session.runtime, RuntimeState::Starting)
            || self.chat.busy()
            || self.restart_counting_down()
    }

    /// Whether a server's restart is counting down (its row shows `restart in …`).
    pub(super) fn restart_counting_down(&self) -> bool {
        self.servers.iter().any(|s| {
            s.down
                .as_ref()
                .is_some_and(|d| d.next.is_some() && !d.gave_up)
        })
    }

    pub(super) fn notify(&mut self, level: Level, text: impl Into<String>) {
        self.notice = Some((level, text.into()));
    }

    /// Tells the operator the console serves other hosts, and where (`--serve-http`).
    pub(super) fn announce_serving(&mut self) {
        if let Some(url) = self.session.serving.as_ref().map(|s| s.url()) {
            self.notify(
                Level::Info,
                format!(
                    "serving other MCP hosts at {url} (bearer token: aimon-console gateway-token)"
                ),
            );
        }
    }

    /// Tools shown under the current filter.
    pub(super) fn visible_tools(&self) -> Vec<&ToolRow> {
        let lowered = self.panes.tools.filter.to_lowercase();
        self.tools.iter().filter(|t| t.matches(&lowered)).collect()
    }

    pub(super) fn selected_server(&self) -> Option<&ServerRow> {
        self.servers.get(self.panes.servers.selected)
    }

    pub(super) fn server_mut(&mut self, name: &str) -> Option<&mut ServerRow> {
        self.servers.iter_mut().find(|s| s.name == name)
    }

    /// One event from the background work the loop runs; returns more work for the loop.
    pub fn on_app_event(&mut self, event: AppEvent) -> Vec<Effect> {
        let effects = self.app_event(event);
        self.sync_overlays();
        effects
    }

    /// One event from the background work the loop runs; returns more work for the loop.
    fn app_event(&mut self, event: AppEvent) -> Vec<Effect> {
        match event {
            AppEvent::Runtime(generation, event) => {
                if generation == self.session.generation {
                    return self.on_runtime_event(event);
                }
            }
            AppEvent::RuntimeReady(generation, result) if generation == self.session.generation => {
                match result {
                    Ok(runtime) => {
                        // Servers that finished before the runtime reached the console (their
                        // `ServerStarted` may have come first); their resources and prompts
                        // could not be asked for without it.
                        let mut effects = Vec::new();
                        for report in runtime.reports() {
                            if report.status == ServerStatus::Starting {
                                continue;
                            }
                            effects.extend(self.content_on_started(&report));
                            if let Some(row) = self.server_mut(&report.name.clone()) {
                                if row.report.is_none() {
                                    row.set_report(report);
                                }
                            }
                        }
                        // Servers join one by one from now on: each refresh marks the tools
                        // whose traits differ from before the restart-all.
                        self.tools = tool_rows(&runtime, &self.session.previous_traits);
                        self.session.runtime = RuntimeState::Ready(runtime);
                        self.settle_restart_notice();
                        effects.extend(self.chat_runtime_ready());
                        return effects;
                    }
                    Err(e) => {
                        self.notify(Level::Error, format!("the runtime could not start: {e}"));
                        self.session.runtime = RuntimeState::Failed(e);
                    }
                }
            }
            // A runtime the operator has since replaced (R).
            AppEvent::RuntimeReady(..) => {}
            AppEvent::Restarting(generation, result) => match result {
                Ok(config) => self.reset(*config, generation),
                Err(e) => self.config_errors("", "cannot restart: the config does not load", &e),
            },
            AppEvent::ServerRestarted(report) => {
                let name = report.name.clone();
                let report_status = report.status;
                let failure = report.failure.as_ref().map(|f| f.class.as_str());
                if let Some(row) = self.server_mut(&name) {
                    if let Some(trust) = row.restart_pending.take() {
                        row.trust = trust;
                    }
                    row.set_report(report);
                }
                // Marked against the traits from before `r` (its tools may have been listed
                // again already, as it became ready).
                if let Some(runtime) = self.runtime().cloned() {
                    self.tools = tool_rows(&runtime, &self.session.previous_traits);
                }
                let (level, text) = match (&report_status, &failure) {
                    (ServerStatus::Ready, _) => (Level::Info, format!("{name} restarted: ready")),
                    (ServerStatus::Disabled, _) => (
                        Level::Warn,
                        format!("{name} not started: its entry says enabled: false (`aimon-console enable {name}`, then r)"),
                    ),
                    (_, Some(class)) => (
                        Level::Error,
                        format!("{name} restarted, and failed again: {class} (see Details)"),
                    ),
                    (_, None) => (
                        Level::Info,
                        format!("{name} restarted: {}", report_status.as_str()),
                    ),
                };
                self.event(&name, EventKind::Supervisor, text.clone());
                self.notify(level, text);
            }
            AppEvent::RestartRefused { server, why } => {
                self.config_errors(&server, &format!("{server} not restarted"), &why)
            }
            AppEvent::TrustWritten {
                server,
                trust,
                result,
            } => match result {
                Ok(digest) => {
                    self.session.config_digest = digest;
                    if let Some(row) = self.server_mut(&server) {
                        row.restart_pending = (row.trust != trust).then_some(trust);
                    }
                    self.event(
                        &server,
                        EventKind::Supervisor,
                        format!(
                            "annotation_trust: {} written to the config file (a restart applies it)",
                            trust.as_str()
                        ),
                    );
                    self.notify(
                        Level::Info,
                        format!(
                            "wrote annotation_trust: {} for {server}; press r (this server) or R (all) to apply",
                            trust.as_str()
                        ),
                    );
                }
                Err(e) => self.notify(Level::Error, e),
            },
            AppEvent::Content(event) => return self.on_content_event(event),
            AppEvent::Notice(level, text) => self.notify(level, text),
            AppEvent::RulesWritten { done, result } => match result {
                Ok((digest, rules)) => {
                    self.session.config_digest = digest;
                    if let Some(rt) = self.runtime() {
                        rt.gate().set_rules(rules);
                    }
                    self.refresh_pins();
                    if matches!(self.overlays.modal, Some(Modal::Ledger { .. })) {
                        self.show_ledger();
                    }
                    self.notify(Level::Info, done);
                }
                Err(e) => self.notify(Level::Error, e),
            },
            AppEvent::Agent(epoch, event) => return self.on_chat_event(epoch, event),
            event
            @ (AppEvent::Attached { .. } | AppEvent::Tools(..) | AppEvent::Decided { .. }) => {
                return self.on_attached_event(event)
            }
            AppEvent::Sampled { id, result } => self.sampled(id, result),
            AppEvent::LedgerLoaded => {
                if matches!(self.overlays.modal, Some(Modal::Ledger { .. })) {
                    self.show_ledger();
                }
            }
            AppEvent::LogLevelSet {
                server,
                level,
                result,
            } => match result {
                Ok(()) => {
                    if let Some(row) = self.server_mut(&server) {
                        row.log_level = Some(level);
                    }
                    self.notify(
                        Level::Info,
                        format!(
                            "{server} now sends log messages at {} and above",
                            level.as_str()
                        ),
                    );
                }
                Err(e) => self.notify(
                    Level::Error,
                    format!("{server}: logging/setLevel failed: {e}"),
                ),
            },
        }
        Vec::new()
    }

    /// `lead`, then a reason of one or more lines (every error of a config file that does not
    /// load): each line goes to Events; the notice shows the first and says how many more.
    fn config_errors(&mut self, server: &str, lead: &str, why: &str) {
        let lines: Vec<&str> = why.lines().filter(|l| !l.trim().is_empty()).collect();
        let first = lines.first().copied().unwrap_or("");
        self.event(server, EventKind::Supervisor, format!("{lead}: {first}"));
        for line in lines.iter().skip(1) {
            self.event(server, EventKind::Supervisor, (*line).to_string());
        }
        let more = match lines.len() {
            0 | 1 => String::new(),
            n => format!(" (+{} more in Events)", n - 1),
        };
        self.notify(Level::Error, format!("{lead}: {first}{more}"));
    }

    /// A new runtime generation with `config`: servers back to starting, tools cleared;
    /// calls stay listed; unanswered approvals of the old runtime are denied (dropped).
    fn reset(&mut self, config: Config, generation: u64) {
        let old_tools = traits_by_name(self.tools.iter());
        let mut servers: Vec<ServerRow> = config
            .mcp
            .servers
            .iter()
            .map(ServerRow::from_config)
            .collect();
        for row in &mut servers {
            if let Some(old) = self.servers.iter_mut().find(|s| s.name == row.name) {
                row.stderr = std::mem::take(&mut old.stderr);
                // As a server's own restart marks its tail (`r`, the supervisor).
                if !row.stderr.is_empty() {
                    row.push_stderr(RESTART_ALL_MARKER.to_string());
                }
            }
        }
        self.servers = servers;
        self.session.previous_traits = old_tools;
        self.tools.clear();
        self.overlays.approvals.clear();
        self.overlays.approval_confirm = false;
        // The old runtime's questions are declined as their requests drop.
        self.overlays.elicitations.clear();
        self.overlays.elicitation_form = None;
        self.panes.resources = Default::default();
        self.panes.prompts = Default::default();
        self.chat.reconfigure(config.agent.as_ref());
        self.session.config_path = config.path.clone();
        self.session.config_digest = config.source_digest;
        self.session.deadline = startup_deadline(&config.mcp.servers, config.mcp.startup_budget);
        self.session.generation = generation;
        self.session.runtime = RuntimeState::Starting;
        self.panes.servers.selected = self
            .panes
            .servers
            .selected
            .min(self.servers.len().saturating_sub(1));
        self.panes.tools.selected = 0;
        self.panes.servers.details_scroll = 0;
        self.event("", EventKind::Supervisor, RESTARTING_ALL.to_string());
        self.notify(Level::Info, RESTARTING_ALL);
    }

    /// Opens the argument editor for the selected tool.
    pub(super) fn open_editor(&mut self) {
        let Some(tool) = self
            .visible_tools()
            .get(self.panes.tools.selected)
            .map(|t| (*t).clone())
        else {
            return;
        };
        let last = self.panes.tools.last_arguments.get(&tool.name);
        self.overlays.modal = Some(Modal::Editor(Box::new(CallEditor::new(
            &tool.name,
            &tool.description,
            tool.schema.to_value(),
            last,
        ))));
    }
}
