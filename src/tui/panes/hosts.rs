//! The gateway's hosts, at the foot of the Servers pane while the console serves them
//! (`--serve-http`, `gateway.listen`): each host by the name and version it gave, with its
//! sessions, its calls (and how many run now) and when it last did something, on the Events
//! pane's clock (time since the console started: nothing ticks while the console is idle).
//!
//! Kept from the runtime's events (`HostSession`, and the calls whose origin is a host), so it
//! needs nothing from the gateway's side but what every driver sees.

use std::collections::HashMap;
use std::time::Instant;

use ratatui::text::{Line, Span};

use crate::text::sanitize_line;
use crate::tui::theme::Theme;

/// One host: every session of one name and version.
#[derive(Debug, Clone, PartialEq)]
pub struct HostRow {
    pub name: String,
    pub version: String,
    /// Sessions open now.
    pub sessions: u32,
    /// Calls made, and of those still running.
    pub calls: u64,
    pub running: u32,
    /// When it connected, called, or a call of its ended.
    pub last: Instant,
}

/// The hosts seen since the console started serving, in the order they first came.
#[derive(Debug, Default)]
pub struct HostBook {
    rows: Vec<HostRow>,
    /// Running calls by id, and the host (index into `rows`) that made each.
    running: HashMap<u64, usize>,
}

impl HostBook {
    pub fn rows(&self) -> &[HostRow] {
        &self.rows
    }

    fn row(&mut self, name: &str, version: &str, now: Instant) -> usize {
        if let Some(i) = self
            .rows
            .iter()
            .position(|r| r.name == name && r.version == version)
        {
            return i;
        }
        self.rows.push(HostRow {
            name: name.to_string(),
            version: version.to_string(),
            sessions: 0,
            calls: 0,
            running: 0,
            last: now,
        });
        self.rows.len() - 1
    }

    /// A session of `name` `version` opened (`connected`) or closed.
    pub fn session(&mut self, name: &str, version: &str, connected: bool, now: Instant) {
        let i = self.row(name, version, now);
        let row = &mut self.rows[i];
        row.sessions = if connected {
            row.sessions + 1
        } else {
            row.sessions.saturating_sub(1)
        };
        row.last = now;
    }

    /// Call `id` of host `name` `version` started.
    pub fn call_started(&mut self, id: u64, name: &str, version: &str, now: Instant) {
        let i = self.row(name, version, now);
        let row = &mut self.rows[i];
        row.calls += 1;
        row.running += 1;
        row.last = now;
        self.running.insert(id, i);
    }

    /// Call `id` ended (nothing when it was not a host's).
    pub fn call_finished(&mut self, id: u64, now: Instant) {
        if let Some(i) = self.running.remove(&id) {
            let row = &mut self.rows[i];
            row.running = row.running.saturating_sub(1);
            row.last = now;
        }
    }
}

/// The lines for the hosts: a heading naming where they connect, then one per host; times
/// from `started` (the console's start).
pub fn lines(book: &HostBook, url: &str, started: Instant, theme: Theme) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(Span::styled(
        format!("hosts at {url}"),
        theme.dim(),
    ))];
    if book.rows.is_empty() {
        out.push(Line::from(Span::styled(
            "  none yet (aimon-console export --for HOST prints a host's entry)",
            theme.dim(),
        )));
    }
    for row in &book.rows {
        let who = sanitize_line(format!("{} {}", row.name, row.version).trim(), 40);
        let sessions = match row.sessions {
            0 => "gone".to_string(),
            1 => "1 session".to_string(),
            n => format!("{n} sessions"),
        };
        let calls = match (row.calls, row.running) {
            (1, 0) => "1 call".to_string(),
            (n, 0) => format!("{n} calls"),
            (n, r) => format!("{n} call{}, {r} running", if n == 1 { "" } else { "s" }),
        };
        let at = crate::text::fmt_duration(row.last.saturating_duration_since(started));
        let mark = if row.sessions > 0 {
            Span::styled("⇄ ", theme.ok())
        } else {
            Span::styled("· ", theme.dim())
        };
        out.push(Line::from(vec![
            mark,
            Span::styled(who, theme.bold()),
            Span::raw(format!("  {sessions} · {calls} · last at {at}")),
        ]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_hosts_sessions_and_calls_are_counted_by_its_name_and_version() {
        let t0 = Instant::now();
        let mut book = HostBook::default();
        book.session("claude-code", "2.1", true, t0);
        book.session("claude-code", "2.1", true, t0);
        book.call_started(7, "claude-code", "2.1", t0 + Duration::from_secs(1));
        book.call_started(8, "mcp", "0.1", t0 + Duration::from_secs(2));
        book.call_finished(7, t0 + Duration::from_secs(3));
        book.call_finished(99, t0 + Duration::from_secs(4));
        book.session("claude-code", "2.1", false, t0 + Duration::from_secs(5));
        let rows = book.rows();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].sessions, rows[0].calls, rows[0].running),
            (1, 1, 0)
        );
        assert_eq!(rows[0].last, t0 + Duration::from_secs(5));
        assert_eq!(
            (rows[1].sessions, rows[1].calls, rows[1].running),
            (0, 1, 1)
        );
        let text: Vec<String> = lines(&book, "http://127.0.0.1:1/mcp", t0, Theme::plain())
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(
            text,
            [
                "hosts at http://127.0.0.1:1/mcp",
                "⇄ claude-code 2.1  1 session · 1 call · last at 5.0s",
                "· mcp 0.1  gone · 1 call, 1 running · last at 2.0s",
            ]
        );
    }
}
