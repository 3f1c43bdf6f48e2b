//! Runtime events into the console's state: servers' phases and reports, stderr, supervision,
//! logs, notifications and hook runs into the Events pane, calls and their progress, tool-list
//! changes, approvals, elicitations, and what the Resources and Prompts panes follow. Separate
//! from `app.rs` because it is the one place that knows every
//! `RuntimeEvent` variant's effect on the screen.

use std::time::Duration;

use super::app::{tool_rows, App};

use super::messages::{Effect, Level};
use super::state::{approval_text, Down, EventKind, EventRow};
use crate::runtime::{CallOrigin, ListKind};
use crate::runtime::{HookOutcome, HookRun, RuntimeEvent, ToolsDiff};
use crate::runtime::{McpEvent, RequestOutcome, ServerStatus};
use crate::text::{sanitize, sanitize_line};

/// Characters of server text kept on an Events line.
const EVENT_CHARS: usize = 400;

/// The notice `c` leaves while call `id` is being cancelled.
pub(super) fn cancelling(id: u64) -> String {
    format!("cancelling call #{id}…")
}

impl App {
    /// A turn boundary, if a server's tools went stale and this is one: no call running and
    /// the agent between prompts (within a prompt its tool list changes only between its own
    /// model turns, where the conversation takes the boundary itself; a boundary here would
    /// change the tools under the turn the model is in).
    pub(super) fn boundary_if_stale(&self) -> Vec<Effect> {
        if self.calls.running() == 0 && !self.chat.busy() && self.servers.iter().any(|s| s.stale) {
            return vec![Effect::TurnBoundary];
        }
        Vec::new()
    }

    /// Whether the notice line says exactly `text` (a progress notice waiting for its end).
    pub(super) fn notice_is(&self, text: &str) -> bool {
        self.notice.as_ref().is_some_and(|(_, t)| t == text)
    }

    /// `R` said every server is restarting: once none is starting, say how it went.
    pub(super) fn settle_restart_notice(&mut self) {
        if !self.notice_is(super::app::RESTARTING_ALL)
            || self
                .servers
                .iter()
                .any(|s| s.status == ServerStatus::Starting)
        {
            return;
        }
        let ready = self
            .servers
            .iter()
            .filter(|s| s.status == ServerStatus::Ready)
            .count();
        let enabled = self.servers.iter().filter(|s| s.enabled).count();
        let text = format!("every server restarted: {ready}/{enabled} ready");
        self.event("", EventKind::Supervisor, text.clone());
        self.notify(Level::Info, text);
    }

    /// Adds a line to the Events pane.
    pub(super) fn event(&mut self, server: &str, kind: EventKind, text: String) {
        let at = self.now.saturating_duration_since(self.session.started_at);
        self.events.push(EventRow {
            at,
            server: server.to_string(),
            kind,
            text: sanitize_line(&text, EVENT_CHARS),
        });
    }

    /// One event from the runtime (what the servers, calls and approvals did).
    pub fn on_runtime_event(&mut self, event: RuntimeEvent) -> Vec<Effect> {
        let effects = self.runtime_event(event);
        self.sync_overlays();
        effects
    }

    /// One event from the runtime. Returns work for the loop (a turn boundary when a server's
    /// tools went stale while no call runs).
    fn runtime_event(&mut self, event: RuntimeEvent) -> Vec<Effect> {
        // A question a server withdrew (or gave up on) leaves the queue.
        if !self.overlays.elicitations.is_empty() {
            self.prune_elicitations();
        }
        if !self.overlays.samplings.is_empty() {
            self.prune_samplings();
        }
        self.chat_observe(&event);
        match event {
            RuntimeEvent::Mcp(McpEvent::PhaseStarted {
                server,
                phase,
                elapsed,
            }) => {
                let now = self.now;
                if let Some(row) = self.server_mut(&server) {
                    row.enter_phase(phase, elapsed, now);
                }
            }
            RuntimeEvent::Mcp(McpEvent::ServerStarted(report)) => {
                let ready = report.status == ServerStatus::Ready;
                let server = report.name.clone();
                let mut back = false;
                let content = self.content_on_started(&report);
                if let Some(row) = self.server_mut(&server) {
                    back = ready && row.down.is_some();
                    row.set_report(*report);
                }
                if back {
                    self.event(&server, EventKind::Supervisor, "ready again".into());
                }
                self.settle_restart_notice();
                // A server joins the moment it is ready: its tools are registered already.
                if ready {
                    if let Some(runtime) = self.runtime().cloned() {
                        self.tools = tool_rows(&runtime, &self.session.previous_traits);
                    }
                }
                return content;
            }
            RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request)) => {
                self.elicitation_requested(request);
            }
            RuntimeEvent::Mcp(McpEvent::SamplingRequested(request)) => {
                self.sampling_requested(request);
            }
            RuntimeEvent::Mcp(McpEvent::Stderr { server, line }) => {
                if let Some(row) = self.server_mut(&server) {
                    row.push_stderr(line);
                }
            }
            RuntimeEvent::Mcp(McpEvent::ServerClosed { .. }) => {}
            RuntimeEvent::Mcp(McpEvent::ServerDown {
                server,
                reason,
                crashes,
                ..
            }) => {
                let reason = sanitize(&reason, false);
                self.event(&server, EventKind::Supervisor, format!("down: {reason}"));
                if let Some(row) = self.server_mut(&server) {
                    row.status = ServerStatus::Failed;
                    row.down = Some(Down {
                        reason,
                        crashes,
                        next: None,
                        scheduled_at: None,
                        gave_up: false,
                    });
                }
            }
            RuntimeEvent::Mcp(McpEvent::RestartScheduled {
                server,
                attempt,
                delay,
                crashes,
            }) => {
                self.event(
                    &server,
                    EventKind::Supervisor,
                    format!(
                        "restarting in {} (attempt {attempt}, {crashes} quick crash{} in a row)",
                        crate::text::fmt_duration(delay),
                        if crashes == 1 { "" } else { "es" }
                    ),
                );
                let now = self.now;
                if let Some(down) = self.server_mut(&server).and_then(|r| r.down.as_mut()) {
                    down.next = Some((attempt, delay));
                    down.scheduled_at = Some(now);
                    down.crashes = crashes;
                }
            }
            RuntimeEvent::Mcp(McpEvent::GaveUp { server, crashes }) => {
                self.event(
                    &server,
                    EventKind::Supervisor,
                    format!("gave up after {crashes} quick crashes: r restarts it by hand"),
                );
                self.notify(
                    Level::Error,
                    format!("{server} crashed {crashes} times in a row: not restarted any more (r restarts it)"),
                );
                if let Some(down) = self.server_mut(&server).and_then(|r| r.down.as_mut()) {
                    down.gave_up = true;
                    down.next = None;
                }
            }
            RuntimeEvent::Mcp(McpEvent::ServerRequest {
                server,
                method,
                outcome,
                detail,
            }) => {
                let text = format!("asked {method}: {} ({detail})", outcome.as_str());
                self.event(&server, EventKind::Request, text);
                if outcome == RequestOutcome::Declined {
                    self.notify(
                        Level::Warn,
                        format!(
                            "{server} asked for {method}: declined ({})",
                            sanitize_line(&detail, 120)
                        ),
                    );
                }
            }
            RuntimeEvent::Notification(n) => {
                let text = format!("{} {}", n.method, n.params);
                self.event(&n.server, EventKind::Notice, text);
            }
            RuntimeEvent::ServerLog {
                server,
                level,
                logger,
                data,
            } => {
                let text = crate::runtime::log_text(logger.as_deref(), &data);
                self.event(&server, EventKind::Log(level), text);
            }
            RuntimeEvent::ListChanged { server, list } => {
                self.event(
                    &server,
                    EventKind::Notice,
                    format!("{} list changed", list.as_str()),
                );
                match list {
                    ListKind::Tools => {
                        if let Some(row) = self.server_mut(&server) {
                            row.stale = true;
                        }
                        // Between calls is a turn boundary: take the change in now.
                        return self.boundary_if_stale();
                    }
                    ListKind::Resources => return self.content_list_changed(&server, true),
                    ListKind::Prompts => return self.content_list_changed(&server, false),
                }
            }
            RuntimeEvent::ResourceUpdated { server, uri } => {
                self.event(
                    &server,
                    EventKind::Notice,
                    format!("resource updated: {uri}"),
                );
                return self.resource_updated(&server, &uri);
            }
            RuntimeEvent::ToolsChanged(diff) => self.tools_changed(&diff),
            RuntimeEvent::Rewake(e) => {
                let text = format!("rewake {} (rule {}, {})", e.event, e.rule + 1, e.method);
                self.event(&e.server, EventKind::Rewake, text);
            }
            RuntimeEvent::HookRan(run) => self.hook_ran(&run),
            RuntimeEvent::EventsDropped { count } => {
                let at = self.now.saturating_duration_since(self.session.started_at);
                let moved = self.events.dropped(at, count);
                // A line held in Events stays the one held.
                if let (Some(held), Some(moved)) = (self.panes.events.selected, moved) {
                    self.panes.events.selected = Some(match held.cmp(&moved) {
                        std::cmp::Ordering::Less => held,
                        std::cmp::Ordering::Equal => self.events.rows.len() - 1,
                        std::cmp::Ordering::Greater => held - 1,
                    });
                }
            }
            RuntimeEvent::CallProgress {
                id,
                progress,
                total,
                message,
            } => {
                if let Some(row) = self.calls.get_mut(id) {
                    row.progress = Some((progress, total, message.map(|m| sanitize(&m, false))));
                }
            }
            RuntimeEvent::CallStarted {
                id,
                tool,
                arguments,
                origin,
            } => {
                let now = self.now;
                let asked_by = match &origin {
                    CallOrigin::Operator => None,
                    CallOrigin::Agent { .. } => Some("agent".to_string()),
                    CallOrigin::Host { name, version } => {
                        self.hosts.call_started(id, name, version, now);
                        Some(sanitize_line(format!("host {name} {version}").trim(), 60))
                    }
                };
                self.calls.start(id, &tool, &arguments, asked_by, now);
            }
            RuntimeEvent::CallStatus { id, status } => {
                let now = self.now;
                self.calls.set_status(id, status, now);
            }
            RuntimeEvent::CallFinished {
                id,
                status,
                result,
                elapsed_ms,
            } => {
                let now = self.now;
                self.hosts.call_finished(id, now);
                if let Some(row) = self.calls.set_status(id, status, now) {
                    row.elapsed = Some(Duration::from_millis(elapsed_ms));
                    row.set_result(sanitize(&result.text, true));
                }
                // `c` said it was cancelling this call: it has ended now.
                if self.notice_is(&cancelling(id)) {
                    self.notify(
                        Level::Info,
                        format!("call #{id} ended: {}", status.as_str()),
                    );
                }
                // A call that ended while its approval was still queued (cancelled) drops out.
                self.overlays.approvals.retain(|a| a.id != id);
                // The last call ended: a turn boundary, if a server's tools went stale meanwhile.
                return self.boundary_if_stale();
            }
            // Shown on the call's line in the Conversation pane too (`chat_observe`).
            RuntimeEvent::ApprovalAnswered { id, decision, by } => {
                if let Some(row) = self.calls.get_mut(id) {
                    row.decided = Some(approval_text(decision, by));
                }
                // An approval pins the definition approved.
                self.refresh_pins();
            }
            RuntimeEvent::CallAllowed { id, why } => {
                if let Some(row) = self.calls.get_mut(id) {
                    row.decided = Some(sanitize_line(&why, 200));
                }
            }
            RuntimeEvent::HostSession {
                name,
                version,
                connected,
            } => self.hosts.session(&name, &version, connected, self.now),
            RuntimeEvent::ApprovalRequested(request) => {
                if self.overlays.approvals.is_empty() {
                    self.overlays.approval_scroll = 0;
                    self.overlays.guard.question_came(self.now);
                }
                self.overlays.approvals.push_back(request);
            }
        }
        Vec::new()
    }

    /// A hook ran: one Events line; a warning also on the notice line.
    fn hook_ran(&mut self, run: &HookRun) {
        let about = match (&run.call, &run.tool) {
            (Some(id), Some(tool)) => format!(" call #{id} {tool}"),
            _ => String::new(),
        };
        let what = match &run.outcome {
            HookOutcome::Decided {
                decision,
                reason: Some(reason),
            } => format!("{}: {reason}", decision.as_str()),
            HookOutcome::Decided {
                decision,
                reason: None,
            } => decision.as_str().to_string(),
            HookOutcome::Ran => "ran".to_string(),
            HookOutcome::Warning(why) => format!("warning: {why}"),
        };
        let text = format!(
            "{} {}{about} → {what} ({})",
            run.event.as_str(),
            run.label(),
            crate::text::fmt_duration(run.elapsed)
        );
        self.event(run.server.as_deref().unwrap_or(""), EventKind::Hook, text);
        if let HookOutcome::Warning(why) = &run.outcome {
            self.notify(
                Level::Warn,
                format!(
                    "{} failed ({}); going on as if it said nothing",
                    run.label(),
                    sanitize_line(why, 160)
                ),
            );
        }
    }

    /// A stale server's tools were listed again: the new list, changed and added tools
    /// marked, the diff in the Events pane.
    fn tools_changed(&mut self, diff: &ToolsDiff) {
        let server = diff.server.clone();
        if let Some(error) = &diff.error {
            self.event(
                &server,
                EventKind::Tools,
                format!("tools not listed again: {error}"),
            );
            return;
        }
        if let Some(runtime) = self.runtime().cloned() {
            self.tools = tool_rows(&runtime, &Default::default());
        }
        let count = self
            .tools
            .iter()
            .filter(|t| t.server.as_deref() == Some(server.as_str()))
            .count();
        if let Some(row) = self.server_mut(&server) {
            row.stale = false;
            if let Some(report) = row.report.as_mut() {
                report.tools = count;
            }
        }
        let marked: Vec<&str> = diff
            .added
            .iter()
            .map(|t| t.name.as_str())
            .chain(diff.changed.iter().map(|c| c.after.name.as_str()))
            .collect();
        for tool in &mut self.tools {
            tool.changed = marked.contains(&tool.name.as_str());
        }
        let mut parts = Vec::new();
        for t in &diff.added {
            parts.push(format!("+{}", t.name));
        }
        for t in &diff.removed {
            parts.push(format!("-{}", t.name));
        }
        for c in &diff.changed {
            let what: Vec<&str> = c.changes.iter().map(|k| k.as_str()).collect();
            parts.push(format!("~{} ({})", c.after.name, what.join(", ")));
        }
        if parts.is_empty() {
            parts.push("unchanged".into());
        }
        self.event(
            &server,
            EventKind::Tools,
            format!("tools listed again: {}", parts.join(" ")),
        );
        if !diff.revoked.is_empty() {
            self.event(
                &server,
                EventKind::Tools,
                format!("session approvals forgotten: {}", diff.revoked.join(", ")),
            );
        }
        if !diff.is_empty() {
            self.notify(
                Level::Warn,
                format!(
                    "{server}'s tools changed: {} added, {} removed, {} changed (marked *; see Events)",
                    diff.added.len(),
                    diff.removed.len(),
                    diff.changed.len()
                ),
            );
        }
    }
}
