//! What the console shows, as plain data: one row per server, tool and call. Everything a
//! server sent is sanitized on the way in, so rendering can draw it as is.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::config::{AnnotationTrust, ServerConfig, TransportKind};
use crate::runtime::{CallStatus, LogLevel, PhaseTimes, ServerReport, ServerStatus, StartPhase};
use crate::text::sanitize;
use crate::tool::{DestructiveBehavior, JsonText, SideEffectLevel, ToolDescriptor};

/// stderr lines kept per server for the details pane.
pub const STDERR_KEEP: usize = 500;
/// Calls kept in the list; the oldest finished ones go first.
pub const CALLS_KEEP: usize = 10_000;
/// Lines kept in the Events pane; older ones go (and are counted).
pub const EVENTS_KEEP: usize = 5_000;

/// Why a ready server is not ready any more, and what the supervisor does about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Down {
    /// How it went away, in words (sanitized).
    pub reason: String,
    /// Quick crashes in a row, this one included.
    pub crashes: u32,
    /// The next restart: its attempt number and how long after going down.
    pub next: Option<(u32, Duration)>,
    /// When the restart was scheduled (to count down to it).
    pub scheduled_at: Option<Instant>,
    /// The supervisor stopped restarting it.
    pub gave_up: bool,
}

/// One configured server.
#[derive(Debug, Clone)]
pub struct ServerRow {
    pub name: String,
    pub transport: TransportKind,
    /// The trust its tools were resolved under.
    pub trust: AnnotationTrust,
    pub enabled: bool,
    /// `Starting` until a report arrives.
    pub status: ServerStatus,
    /// The phase it is in while starting, and when (since its own start) it entered it.
    pub phase: Option<(StartPhase, Duration)>,
    /// When it entered the start queue (`mcp.max_concurrent_starts`), if it waited.
    pub queued_at: Option<Instant>,
    /// When its own start began (after any wait in the queue), to draw a live waterfall.
    pub started: Option<Instant>,
    /// The phases that ended so far in the start in progress (from `PhaseStarted` events).
    pub live_phases: PhaseTimes,
    pub report: Option<ServerReport>,
    pub stderr: VecDeque<String>,
    /// The config file now says another trust: a restart applies it.
    pub restart_pending: Option<AnnotationTrust>,
    /// It went away after being ready (set until it is ready again).
    pub down: Option<Down>,
    /// It announced `tools/list_changed`: its tools are listed again between calls.
    pub stale: bool,
    /// The log level asked of it (`logging/setLevel`), if the operator set one.
    pub log_level: Option<LogLevel>,
}

impl ServerRow {
    pub fn from_config(config: &ServerConfig) -> ServerRow {
        ServerRow {
            name: config.name.clone(),
            transport: config.transport,
            trust: config.annotation_trust,
            enabled: config.enabled,
            status: if config.enabled {
                ServerStatus::Starting
            } else {
                ServerStatus::Disabled
            },
            phase: None,
            queued_at: None,
            started: None,
            live_phases: PhaseTimes::default(),
            report: None,
            stderr: VecDeque::new(),
            restart_pending: None,
            down: None,
            stale: false,
            log_level: None,
        }
    }

    pub fn push_stderr(&mut self, line: String) {
        if self.stderr.len() == STDERR_KEEP {
            self.stderr.pop_front();
        }
        self.stderr.push_back(sanitize(&line, false));
    }

    /// Takes a finished start's report (sanitizing what came from the server).
    pub fn set_report(&mut self, mut report: ServerReport) {
        report.warnings = report.warnings.iter().map(|w| sanitize(w, false)).collect();
        if let Some(f) = report.failure.as_mut() {
            f.message = sanitize(&f.message, false);
        }
        if let Some(info) = report.server_info.as_mut() {
            info.name = sanitize(&info.name, false);
            info.version = sanitize(&info.version, false);
        }
        self.status = report.status;
        self.phase = None;
        if report.status == ServerStatus::Ready {
            self.down = None;
            self.stale = false;
        }
        self.report = Some(report);
    }

    pub fn tool_count(&self) -> usize {
        self.report.as_ref().map_or(0, |r| r.tools)
    }

    /// A `PhaseStarted` of this server: a new start begins (or leaves the queue), or the start
    /// in progress moves on, which ends the phase before at `elapsed`.
    pub fn enter_phase(&mut self, phase: StartPhase, elapsed: Duration, now: Instant) {
        let at = now.checked_sub(elapsed).unwrap_or(now);
        let new_start = self.phase.is_none() || self.report.is_some();
        match phase {
            StartPhase::Queued => {
                self.queued_at = Some(at);
                self.started = None;
                self.live_phases = PhaseTimes::default();
            }
            StartPhase::Spawn | StartPhase::Connect => {
                if new_start && !matches!(self.phase, Some((StartPhase::Queued, _))) {
                    self.queued_at = None;
                }
                let queued_ms = self
                    .queued_at
                    .map(|queued| crate::text::millis(at.saturating_duration_since(queued)));
                self.started = Some(at);
                self.live_phases = PhaseTimes {
                    queued_ms,
                    ..PhaseTimes::default()
                };
            }
            StartPhase::Handshake => {
                let ms = Some(crate::text::millis(elapsed));
                if self.started.is_none() {
                    self.started = Some(at);
                }
                match self.transport.is_http() {
                    true => self.live_phases.connect_ms = ms,
                    false => self.live_phases.spawn_ms = ms,
                }
            }
            StartPhase::ListTools => {
                if self.started.is_none() {
                    self.started = Some(at);
                }
                self.live_phases.handshake_ms = Some(crate::text::millis(elapsed));
            }
        }
        self.report = None;
        self.status = ServerStatus::Starting;
        self.phase = Some((phase, elapsed));
    }
}

/// One registered tool, as shown.
#[derive(Debug, Clone)]
pub struct ToolRow {
    pub name: String,
    /// The server's own name for it (the same as `name` for local tools).
    pub raw: String,
    pub server: Option<String>,
    pub description: String,
    pub side_effect: SideEffectLevel,
    pub destructive: DestructiveBehavior,
    pub trust: Option<AnnotationTrust>,
    pub provenance: String,
    /// Its input schema, shared with the registry's descriptor.
    pub schema: JsonText,
    /// Marked when a change is highlighted (e.g. new traits after a restart).
    pub changed: bool,
}

impl ToolRow {
    pub fn from_descriptor(d: &ToolDescriptor) -> ToolRow {
        ToolRow {
            name: sanitize(&d.name, false),
            raw: sanitize(d.origin.as_ref().map_or(&d.name, |o| &o.tool), false),
            server: d.origin.as_ref().map(|o| o.server.clone()),
            description: sanitize(&d.description, false),
            side_effect: d.side_effect,
            destructive: d.destructive,
            trust: d.origin.as_ref().map(|o| o.trust),
            provenance: sanitize(&d.provenance, false),
            schema: d.input_schema.clone(),
            changed: false,
        }
    }

    pub fn matches(&self, filter: &str) -> bool {
        if filter.is_empty() {
            return true;
        }
        let f = filter.to_lowercase();
        self.name.to_lowercase().contains(&f) || self.description.to_lowercase().contains(&f)
    }
}

/// One call, from the gate to its end.
#[derive(Debug, Clone)]
pub struct CallRow {
    pub id: u64,
    pub tool: String,
    /// Pretty, sanitized arguments.
    pub arguments: String,
    pub status: CallStatus,
    pub started: Instant,
    pub elapsed: Option<Duration>,
    /// Sanitized result text (newlines kept).
    pub result: String,
    /// The last progress the server reported: done, total (if known), message.
    pub progress: Option<(f64, Option<f64>, Option<String>)>,
}

impl CallRow {
    pub fn preview(&self) -> String {
        self.result.lines().next().unwrap_or("").to_string()
    }
}

/// The call list, bounded.
#[derive(Debug, Default)]
pub struct CallList {
    pub rows: VecDeque<CallRow>,
    /// Finished calls dropped to stay within `CALLS_KEEP`.
    pub dropped: u64,
}

impl CallList {
    pub fn start(&mut self, id: u64, tool: &str, arguments: &Value, now: Instant) {
        if self.rows.len() >= CALLS_KEEP {
            if let Some(pos) = self.rows.iter().position(|r| r.status.is_final()) {
                self.rows.remove(pos);
                self.dropped += 1;
            }
        }
        self.rows.push_back(CallRow {
            id,
            tool: sanitize(tool, false),
            arguments: sanitize(
                &serde_json::to_string_pretty(arguments).unwrap_or_default(),
                true,
            ),
            status: CallStatus::Running,
            started: now,
            elapsed: None,
            result: String::new(),
            progress: None,
        });
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut CallRow> {
        self.rows.iter_mut().rev().find(|r| r.id == id)
    }

    pub fn running(&self) -> usize {
        self.rows.iter().filter(|r| !r.status.is_final()).count()
    }
}

/// What an Events line is about (its colour and tag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// A log message at this level.
    Log(LogLevel),
    /// A list changed, a resource was updated, another notification.
    Notice,
    /// A request from a server and how it was answered.
    Request,
    /// A server's tools were listed again.
    Tools,
    /// A server went down, is restarting, or was given up on.
    Supervisor,
    /// A rewake rule matched.
    Rewake,
    /// A hook ran (its decision, or the warning that made it count as silent).
    Hook,
    /// Events were dropped upstream.
    Dropped,
}

/// One line of the Events pane.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRow {
    /// Since the console started.
    pub at: Duration,
    /// The server it came from (empty for the console's own lines).
    pub server: String,
    pub kind: EventKind,
    /// Sanitized, one line.
    pub text: String,
}

/// The Events pane's lines: the last `EVENTS_KEEP`, with exact counts of everything.
#[derive(Debug, Default)]
pub struct EventLog {
    pub rows: VecDeque<EventRow>,
    /// Every event ever added.
    pub total: u64,
    /// Events the runtime dropped because the console fell behind (normally 0).
    pub dropped_upstream: u64,
}

impl EventLog {
    pub fn push(&mut self, row: EventRow) {
        if self.rows.len() == EVENTS_KEEP {
            self.rows.pop_front();
        }
        self.rows.push_back(row);
        self.total += 1;
    }

    /// Lines no longer kept (older than the last `EVENTS_KEEP`).
    pub fn not_kept(&self) -> u64 {
        self.total - self.rows.len() as u64
    }
}
