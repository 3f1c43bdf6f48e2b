//! What attaching brings into the console's state: the daemon's servers and tools, and who
//! answered an approval.

use crate::runtime::ServerStatus;
use crate::tool::ToolDescriptor;
use crate::tui::app::App;
use crate::tui::messages::{AppEvent, Effect, Level};
use crate::tui::state::{ServerRow, ToolRow};

impl App {
    /// The tools of the daemon whose servers' names start with `prefix` (`label/`; all of
    /// them, for a daemon alone) replaced by `tools` (named `label:…`, its local tools too).
    fn daemon_tools(&mut self, prefix: &str, tools: &[ToolDescriptor]) {
        let label = prefix.strip_suffix('/').map(|l| format!("{l}:"));
        match label {
            Some(label) => self.tools.retain(|t| !t.name.starts_with(&label)),
            None => self.tools.clear(),
        }
        self.tools
            .extend(tools.iter().map(ToolRow::from_descriptor));
    }

    /// What attaching brings: a daemon's servers and tools, who answered an approval.
    pub(in crate::tui) fn on_attached_event(&mut self, event: AppEvent) -> Vec<Effect> {
        match event {
            AppEvent::Attached {
                prefix,
                servers,
                tools,
            } => {
                // The first daemon's rows come first: its Conversation starts with it.
                let first = self.servers.is_empty();
                self.servers.retain(|r| !r.name.starts_with(&prefix));
                let start = self.servers.len();
                self.servers
                    .extend(servers.into_iter().map(ServerRow::from_report));
                // The trust each server's tools were resolved under is the daemon's.
                for row in &mut self.servers[start..] {
                    let origin = tools.iter().filter_map(|t| t.origin.as_ref());
                    if let Some(o) = origin.into_iter().find(|o| o.server == row.name) {
                        row.trust = o.trust;
                    }
                }
                self.daemon_tools(&prefix, &tools);
                // Its ready servers' resources and prompts, as a runtime's arrival asks.
                let reports: Vec<_> = self.servers[start..]
                    .iter()
                    .filter_map(|row| row.report.clone())
                    .collect();
                let mut effects: Vec<Effect> = reports
                    .iter()
                    .flat_map(|report| self.content_on_started(report))
                    .collect();
                if first {
                    effects.extend(self.chat_runtime_ready());
                }
                return effects;
            }
            AppEvent::Tools(prefix, tools) => {
                self.daemon_tools(&prefix, &tools);
                for row in self
                    .servers
                    .iter_mut()
                    .filter(|r| r.name.starts_with(&prefix))
                {
                    let count = tools
                        .iter()
                        .filter(|t| t.origin.as_ref().is_some_and(|o| o.server == row.name))
                        .count();
                    if let Some(report) = row.report.as_mut() {
                        if report.status == ServerStatus::Ready {
                            report.tools = count;
                        }
                    }
                }
            }
            AppEvent::Decided { id, text, replayed } => {
                if !replayed {
                    self.notify(Level::Info, format!("call {id} {text}"));
                }
                if let Some(row) = self.calls.get_mut(id) {
                    row.decided = Some(text);
                }
            }
            _ => {}
        }
        Vec::new()
    }
}
