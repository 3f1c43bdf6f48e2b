//! How headless commands print: the JSON shapes of docs/commands.md, and plain tables read at a glance.
//! ANSI colour only on a terminal, never with `NO_COLOR`.

use std::io::{IsTerminal, Write};

use serde::Serialize;
use serde_json::{json, Value};

use crate::approval::ApprovalGate;
use crate::runtime::{ServerReport, ServerStatus};
use crate::runtime::{StartSummary, ToolsJson};
use crate::text::{sanitize, sanitize_line};
use crate::tool::registry::ToolSnapshot;
use crate::tool::{SideEffectLevel, ToolDescriptor};

/// The whole `check --json` object (fields in alphabetical order). The tools are written from the
/// registry's snapshot as they are serialized: a report of many tools is never built whole.
#[derive(Serialize)]
pub struct CheckJson<'a> {
    deadline_ms: u64,
    elapsed_ms: u64,
    /// Each server's report as a value (its fields in the report's own order).
    servers: Value,
    tools: ToolsJson<'a>,
}

impl<'a> CheckJson<'a> {
    pub fn new(
        summary: &StartSummary,
        tools: &'a ToolSnapshot,
        gate: &'a ApprovalGate,
    ) -> CheckJson<'a> {
        CheckJson {
            deadline_ms: crate::text::millis(summary.deadline),
            elapsed_ms: crate::text::millis(summary.elapsed),
            servers: serde_json::to_value(&summary.servers).unwrap_or(Value::Null),
            tools: ToolsJson(tools, Some(gate)),
        }
    }
}

/// Writes `value` to stdout as pretty JSON and a newline, as it is serialized (nothing is
/// built whole first); a closed pipe (`| head`) is not an error worth a panic.
pub fn print_json(value: &impl Serialize) {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let _ = serde_json::to_writer_pretty(&mut out, value);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// Colours for a terminal that wants them.
#[derive(Clone, Copy)]
pub struct Style {
    on: bool,
}

impl Style {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset.
    pub fn for_stdout() -> Style {
        Style {
            on: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub fn green(self, t: &str) -> String {
        self.paint("32", t)
    }
    pub fn red(self, t: &str) -> String {
        self.paint("31", t)
    }
    pub fn yellow(self, t: &str) -> String {
        self.paint("33", t)
    }
    pub fn dim(self, t: &str) -> String {
        self.paint("2", t)
    }
    pub fn bold(self, t: &str) -> String {
        self.paint("1", t)
    }
}

/// A plain table: columns padded to their widest cell; `paint` colours a cell after padding.
pub struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
    right: Vec<bool>,
}

impl Table {
    pub fn new(header: Vec<&'static str>, right: Vec<bool>) -> Table {
        Table {
            header,
            rows: Vec::new(),
            right,
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Renders the table; `paint(row, col, padded)` may colour a cell.
    pub fn render(&self, style: Style, paint: &dyn Fn(usize, usize, String) -> String) -> String {
        let cols = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(cols) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let pad = |text: &str, i: usize| {
            let fill = widths[i].saturating_sub(text.chars().count());
            if self.right.get(i).copied().unwrap_or(false) {
                format!("{}{text}", " ".repeat(fill))
            } else if i + 1 == cols {
                text.to_string()
            } else {
                format!("{text}{}", " ".repeat(fill))
            }
        };
        let mut out = String::new();
        let header: Vec<String> = self
            .header
            .iter()
            .enumerate()
            .map(|(i, h)| pad(h, i))
            .collect();
        out.push_str(&style.bold(header.join("  ").trim_end()));
        out.push('\n');
        for (r, row) in self.rows.iter().enumerate() {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .take(cols)
                .map(|(i, c)| paint(r, i, pad(c, i)))
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out
    }
}

fn ms(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |ms| format!("{ms}ms"))
}

/// The human start-up report: one row per server, then failures and warnings in full.
pub fn render_servers(summary: &StartSummary, style: Style) -> String {
    // The queue column only when some server waited in it (mcp.max_concurrent_starts).
    let queue = summary.servers.iter().any(|s| s.phases.queued_ms.is_some());
    let mut headers = vec!["SERVER", "STATUS", "TRANSPORT"];
    let mut right = vec![false, false, false];
    if queue {
        headers.push("QUEUED");
        right.push(true);
    }
    headers.extend([
        "SPAWN/CONNECT",
        "HANDSHAKE",
        "TOOLS LISTED",
        "TOOK",
        "TOOLS",
        "PROTOCOL",
    ]);
    right.extend([true, true, true, true, true, false]);
    let mut table = Table::new(headers, right);
    for s in &summary.servers {
        let mut row = vec![
            s.name.clone(),
            status_word(s).to_string(),
            s.transport.as_str().to_string(),
        ];
        if queue {
            row.push(ms(s.phases.queued_ms));
        }
        row.extend([
            ms(s.phases.spawn_ms.or(s.phases.connect_ms)),
            ms(s.phases.handshake_ms),
            ms(s.phases.list_tools_ms),
            s.start_took()
                .map_or_else(|| "-".to_string(), crate::text::fmt_duration),
            s.tools.to_string(),
            s.protocol_version.clone().unwrap_or_else(|| "-".into()),
        ]);
        table.row(row);
    }
    let statuses: Vec<ServerStatus> = summary.servers.iter().map(|s| s.status).collect();
    let mut out = table.render(style, &|r, c, cell| match (c, statuses[r]) {
        (1, ServerStatus::Ready) => style.green(&cell),
        (1, ServerStatus::Failed) => style.red(&cell),
        (1, ServerStatus::Disabled | ServerStatus::Starting | ServerStatus::Idle) => {
            style.dim(&cell)
        }
        _ => cell,
    });
    for s in &summary.servers {
        if let Some(f) = &s.failure {
            out.push('\n');
            let phase = f.phase.map_or("", |p| p.as_str());
            out.push_str(&format!(
                "{} {}: {}{}\n",
                style.red("✗"),
                style.bold(&s.name),
                style.red(f.class.as_str()),
                if phase.is_empty() {
                    String::new()
                } else {
                    format!(" in {phase}")
                }
            ));
            out.push_str(&format!("  {}\n", sanitize_line(&f.message, 400)));
            if let Some(exit) = &f.exit_status {
                out.push_str(&format!("  exit status: {exit}\n"));
            }
            if !f.stderr_tail.is_empty() {
                out.push_str("  stderr (last lines):\n");
                for line in &f.stderr_tail {
                    out.push_str(&format!("  │ {}\n", sanitize_line(line, 300)));
                }
            }
            out.push_str(&format!("  {} {}\n", style.dim("hint:"), f.hint()));
        }
        for w in &s.warnings {
            out.push_str(&format!(
                "{} {}: {}\n",
                style.yellow("!"),
                style.bold(&s.name),
                sanitize_line(w, 400)
            ));
        }
    }
    out
}

/// The servers whose content is not in a listing, and why (failed, disabled): the `missing`
/// field of `tools --json`, `resources --json` and `prompts --json`.
pub(crate) fn missing_json(reports: &[ServerReport]) -> Vec<Value> {
    reports
        .iter()
        .filter(|s| matches!(s.status, ServerStatus::Failed | ServerStatus::Disabled))
        .map(|s| {
            json!({
                "server": s.name,
                "status": status_word(s),
                "class": s.failure.as_ref().map(|f| f.class.as_str()),
                "message": s.failure.as_ref().map(|f| f.message.clone()),
            })
        })
        .collect()
}

pub(crate) fn status_word(s: &ServerReport) -> &'static str {
    match s.status {
        ServerStatus::Ready => "ready",
        ServerStatus::Failed => "failed",
        ServerStatus::Disabled => "disabled",
        ServerStatus::Starting => "starting",
        ServerStatus::Idle => "idle",
    }
}

/// The tool table: name, side effect, destructive, trust, and why.
pub fn render_tools(tools: &[&ToolDescriptor], style: Style) -> String {
    let mut table = Table::new(
        vec!["TOOL", "SIDE EFFECT", "DESTRUCTIVE", "TRUST", "WHY"],
        vec![false; 5],
    );
    for t in tools {
        table.row(vec![
            sanitize_line(&t.name, 80),
            match t.side_effect {
                SideEffectLevel::ReadOnly => "read-only".into(),
                SideEffectLevel::Mutating => "MUTATING".into(),
            },
            if t.destructive.is_destructive() {
                "yes".into()
            } else {
                "no".into()
            },
            t.origin
                .as_ref()
                .map_or_else(|| "local".to_string(), |o| o.trust.as_str().to_string()),
            sanitize_line(&t.provenance, 120),
        ]);
    }
    let effects: Vec<(SideEffectLevel, bool)> = tools
        .iter()
        .map(|t| (t.side_effect, t.destructive.is_destructive()))
        .collect();
    let mut out = table.render(style, &|r, c, cell| match (c, effects[r]) {
        (1, (SideEffectLevel::Mutating, _)) => style.yellow(&cell),
        (1, (SideEffectLevel::ReadOnly, _)) => style.green(&cell),
        (2, (_, true)) => style.red(&cell),
        _ => cell,
    });
    let local: Vec<&str> = tools
        .iter()
        .filter(|t| t.origin.is_none())
        .map(|t| t.name.as_str())
        .collect();
    if !local.is_empty() {
        out.push_str(&style.dim(&format!(
            "local (trust column): {} — aimon-console's own tools, from no server; policy.local_tools lists them (default: read; bash only when listed)",
            local.join(", ")
        )));
        out.push('\n');
    }
    out
}

/// Writes to stdout; a closed pipe (`| head`) is not an error worth a panic.
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// One line on stderr.
pub fn error_line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
}

/// Server text for a terminal: escape sequences removed, newlines kept.
pub fn safe_text(text: &str) -> String {
    sanitize(text, true)
}
