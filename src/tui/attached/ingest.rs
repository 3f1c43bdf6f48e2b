//! What attaching brings into the console's state: the daemon's servers and tools, and who
//! answered an approval.

use crate::runtime::ServerStatus;
use crate::tui::app::App;
use crate::tui::messages::{AppEvent, Effect, Level};
use crate::tui::state::{ServerRow, ToolRow};

impl App {
    /// What attaching brings: the daemon's servers and tools, who answered an approval.
    pub(in crate::tui) fn on_attached_event(&mut self, event: AppEvent) -> Vec<Effect> {
        match event {
            AppEvent::Attached { servers, tools } => {
                self.servers = servers.into_iter().map(ServerRow::from_report).collect();
                // The trust each server's tools were resolved under is the daemon's.
                for row in &mut self.servers {
                    let origin = tools.iter().filter_map(|t| t.origin.as_ref());
                    if let Some(o) = origin.into_iter().find(|o| o.server == row.name) {
                        row.trust = o.trust;
                    }
                }
                self.tools = tools.iter().map(ToolRow::from_descriptor).collect();
                return self.chat_runtime_ready();
            }
            AppEvent::Tools(tools) => {
                self.tools = tools.iter().map(ToolRow::from_descriptor).collect();
                for row in &mut self.servers {
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
            AppEvent::Decided { id, text } => {
                if let Some(row) = self.calls.get_mut(id) {
                    row.decided = Some(text.clone());
                }
                self.notify(Level::Info, format!("call {id} {text}"));
            }
            _ => {}
        }
        Vec::new()
    }
}
