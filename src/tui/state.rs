//! What the console shows, as plain data: one row per server, tool and call. Everything a
//! server sent is sanitized on the way in, so rendering can draw it as is.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::approval::{AnsweredBy, ApprovalDecision, PinState};
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
    /// How it is started (the command line, or the endpoint), secrets left out.
    pub launch: super::launch::Launch,
}

impl ServerRow {
    /// Why `logging/setLevel` cannot be sent to it now, if it cannot: not up, or it does not
    /// offer logging.
    pub fn cannot_log(&self) -> Option<String> {
        let name = &self.name;
        if self.status != ServerStatus::Ready || self.down.is_some() {
            return Some(format!("{name} is not running: no log level to set"));
        }
        let logs = self
            .report
            .as_ref()
            .and_then(|r| r.capabilities.as_ref())
            .is_some_and(|c| c.logging);
        (!logs).then(|| format!("{name} does not offer logging: no log level to set"))
    }

    /// Whether `o` (OAuth login) applies to it: a `streamable_http` server.
    pub fn can_login(&self) -> bool {
        self.transport == TransportKind::StreamableHttp
    }

    /// Whether it gave instructions (for `i`).
    pub fn has_instructions(&self) -> bool {
        self.report
            .as_ref()
            .and_then(|r| r.instructions.as_deref())
            .is_some_and(|i| !i.trim().is_empty())
    }

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
            launch: super::launch::Launch::of(config),
        }
    }

    /// The row of a server another process runs (a daemon, `attach`), from its report.
    pub fn from_report(report: ServerReport) -> ServerRow {
        let mut row = ServerRow::from_config(&crate::config::ServerConfig::stdio(
            &report.name,
            "",
            Vec::new(),
        ));
        row.transport = report.transport;
        row.launch = super::launch::Launch {
            summary: "run by the daemon".into(),
            lines: vec!["this server runs in the daemon the console is attached to".into()],
        };
        if report.status != ServerStatus::Starting {
            row.enabled = report.status != ServerStatus::Disabled;
            row.set_report(report);
        }
        row
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
    /// What its texts were flagged for (tool poisoning), in words; `None` when nothing was.
    pub flagged: Option<String>,
    /// Whether the definition offered is the one approved (`approval/pins.rs`).
    pub pin: PinState,
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
            flagged: (!d.flags.is_empty()).then(|| crate::tool::poison::words(&d.flags)),
            pin: PinState::Unpinned,
        }
    }

    /// Whether the tool's name or description holds `lowered`, a filter already lowercased
    /// (once for the whole list, not once a tool).
    pub fn matches(&self, lowered: &str) -> bool {
        lowered.is_empty()
            || crate::text::holds_lowered(&self.name, lowered)
            || crate::text::holds_lowered(&self.description, lowered)
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
    /// The result on one line for the list: JSON compacted, other text's lines joined.
    pub preview: String,
    /// When it began waiting for the operator's approval, if it did.
    pub asked_at: Option<Instant>,
    /// How long it waited for the approval (set once it was answered).
    pub waited: Option<Duration>,
    /// The last progress the server reported: done, total (if known), message.
    pub progress: Option<(f64, Option<f64>, Option<String>)>,
    /// Who asked, when not the operator: `agent`, or `host NAME VERSION` (through the gateway).
    pub asked_by: Option<String>,
    /// It was seen running (after its approval, for a call that waited for one; one denied,
    /// refused or cancelled while it waited never ran).
    pub ran: bool,
    /// Why the gate let it run or stopped it, in words: the operator's answer ("always allowed
    /// by you") or the rule or policy that decided ("allowed by policy.rules[1]").
    pub decided: Option<String>,
}

/// An answer to an approval in words: "allowed once by you", "denied by --yes"…
/// A decision in words: `allowed once`, `denied`, …
pub fn decision_words(decision: ApprovalDecision) -> &'static str {
    match decision {
        ApprovalDecision::AllowOnce => "allowed once",
        ApprovalDecision::AllowForSession => "allowed for the session",
        ApprovalDecision::AllowAlways => "always allowed",
        ApprovalDecision::Deny => "denied",
    }
}

pub fn approval_text(decision: ApprovalDecision, by: AnsweredBy) -> String {
    let what = decision_words(decision);
    let who = match by {
        AnsweredBy::Operator => "by you",
        AnsweredBy::YesFlag => "by --yes",
        AnsweredBy::NoTerminal => "for want of a terminal",
        AnsweredBy::Unanswered => "unanswered",
        AnsweredBy::Unattended => "for want of a console",
    };
    format!("{what} {who}")
}

/// Characters of a result kept for its one-line preview.
const PREVIEW_CHARS: usize = 300;

impl CallRow {
    /// A new status at `now`: the wait for approval is timed apart from the run. Only through
    /// `CallList::set_status`, which counts the calls not yet final.
    fn set_status(&mut self, status: CallStatus, now: Instant) {
        match status {
            CallStatus::AwaitingApproval => {
                self.asked_at.get_or_insert(now);
            }
            CallStatus::Running
            | CallStatus::Ok
            | CallStatus::Error
            | CallStatus::Denied
            | CallStatus::Refused
            | CallStatus::Cancelled => {
                if let (Some(asked), None) = (self.asked_at, self.waited) {
                    self.waited = Some(now.saturating_duration_since(asked));
                }
            }
        }
        self.ran |= status == CallStatus::Running;
        self.status = status;
    }

    /// The (sanitized) result, and its one-line preview.
    pub fn set_result(&mut self, text: String) {
        self.preview = preview_of(&text);
        self.result = text;
    }

    /// How long it ran (or has run, at `now`), the wait for approval left out.
    pub fn run_time(&self, now: Instant) -> Duration {
        let total = self
            .elapsed
            .unwrap_or_else(|| now.saturating_duration_since(self.started));
        let waited = match (self.waited, self.asked_at) {
            (Some(w), _) => w,
            (None, Some(asked)) => now.saturating_duration_since(asked),
            (None, None) => Duration::ZERO,
        };
        total.saturating_sub(waited)
    }

    /// How long it has waited (still waiting: until `now`) for the operator.
    pub fn wait_time(&self, now: Instant) -> Option<Duration> {
        self.waited
            .or_else(|| self.asked_at.map(|a| now.saturating_duration_since(a)))
    }

    /// What to show at `now`: the time of what goes on (the wait while it waits for the
    /// operator, else the run), and the wait apart once the run began.
    pub fn times(&self, now: Instant) -> (Duration, Option<Duration>) {
        match self.status {
            CallStatus::AwaitingApproval => (
                self.wait_time(now)
                    .unwrap_or_else(|| now.saturating_duration_since(self.started)),
                None,
            ),
            _ => (self.run_time(now), self.wait_time(now)),
        }
    }

    /// Whether `c` can still cancel it (it has not ended).
    pub fn cancellable(&self) -> bool {
        !self.status.is_final()
    }
}

/// A result on one line: a JSON result compacted (`{"a":1,…}`, not `{`), other text with its
/// lines joined by ` ⏎ `.
pub fn preview_of(text: &str) -> String {
    let trimmed = text.trim();
    if trimmed.starts_with(['{', '[']) {
        if let Ok(value) = serde_json::from_str::<Value>(trimmed) {
            let compact = value.to_string();
            return compact.chars().take(PREVIEW_CHARS).collect();
        }
    }
    let mut out = String::new();
    for line in trimmed.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !out.is_empty() {
            out.push_str(" ⏎ ");
        }
        out.push_str(line);
        if out.chars().count() >= PREVIEW_CHARS {
            break;
        }
    }
    out.chars().take(PREVIEW_CHARS).collect()
}

/// `write_note · notes` for `mcp__notes__write_note`: the server's own name for a tool first
/// (names of one server differ there), then its server; a local tool as it is.
pub fn short_tool_name(qualified: &str) -> String {
    match qualified
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
    {
        Some((server, tool)) => format!("{tool} · {server}"),
        None => qualified.to_string(),
    }
}

/// The call list, bounded.
#[derive(Debug, Default)]
pub struct CallList {
    pub rows: VecDeque<CallRow>,
    /// Finished calls dropped to stay within `CALLS_KEEP`.
    pub dropped: u64,
    /// The widest short tool name (`short_tool_name`) of the calls listed so far, in chars:
    /// the Calls pane's tool column, kept as calls come so that a frame does not measure
    /// every call (it never narrows: the column stays put).
    pub tool_width: usize,
    /// The rows whose status is not final, kept as statuses change: the header, the footer and
    /// every finished call ask, and counting 10,000 rows each time cost more than the frame.
    running: usize,
}

impl CallList {
    pub fn start(
        &mut self,
        id: u64,
        tool: &str,
        arguments: &Value,
        asked_by: Option<String>,
        now: Instant,
    ) {
        if self.rows.len() >= CALLS_KEEP {
            if let Some(pos) = self.rows.iter().position(|r| r.status.is_final()) {
                self.rows.remove(pos);
                self.dropped += 1;
            }
        }
        let tool = sanitize(tool, false);
        self.tool_width = self.tool_width.max(short_tool_name(&tool).chars().count());
        self.running += 1;
        self.rows.push_back(CallRow {
            id,
            tool,
            arguments: sanitize(
                &serde_json::to_string_pretty(arguments).unwrap_or_default(),
                true,
            ),
            status: CallStatus::Running,
            started: now,
            elapsed: None,
            result: String::new(),
            preview: String::new(),
            asked_at: None,
            waited: None,
            progress: None,
            asked_by,
            ran: false,
            decided: None,
        });
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut CallRow> {
        self.rows.iter_mut().rev().find(|r| r.id == id)
    }

    /// Call `id`'s new status at `now`, and the row for what else changed with it.
    pub fn set_status(
        &mut self,
        id: u64,
        status: CallStatus,
        now: Instant,
    ) -> Option<&mut CallRow> {
        let row = self.rows.iter_mut().rev().find(|r| r.id == id)?;
        match (row.status.is_final(), status.is_final()) {
            (false, true) => self.running -= 1,
            (true, false) => self.running += 1,
            _ => {}
        }
        row.set_status(status, now);
        Some(row)
    }

    pub fn running(&self) -> usize {
        debug_assert_eq!(
            self.running,
            self.rows.iter().filter(|r| !r.status.is_final()).count()
        );
        self.running
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

    /// `count` more events the runtime dropped, said by one line, the newest, with the count
    /// so far: the line before goes (a flood's many gaps each had a line, and buried the real
    /// events between them). Returns where that line was.
    pub fn dropped(&mut self, at: Duration, count: u64) -> Option<usize> {
        self.dropped_upstream += count;
        let before = self.rows.iter().rposition(|r| r.kind == EventKind::Dropped);
        if let Some(i) = before {
            self.rows.remove(i);
            self.total -= 1;
        }
        self.push(EventRow {
            at,
            server: String::new(),
            kind: EventKind::Dropped,
            text: format!(
                "{} events dropped: the console fell behind",
                self.dropped_upstream
            ),
        });
        before
    }

    /// Lines no longer kept (older than the last `EVENTS_KEEP`).
    pub fn not_kept(&self) -> u64 {
        self.total - self.rows.len() as u64
    }
}
