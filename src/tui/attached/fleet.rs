//! One console attached to several daemons at once (the fleet view): each daemon's servers,
//! tools and calls are named apart by its label, its servers' rows kept together. A server
//! `notes` of daemon `build-7` shows as `build-7/notes`, its tool `mcp__notes__echo` as
//! `build-7:mcp__notes__echo`, and its call 3 as the console's call `3 × daemons + index`;
//! what the console asks of one of them is named back in the daemon's own words. With one
//! daemon, names stay as the daemon says them.

use serde_json::Value;

/// How one daemon's names are told apart from the others'.
#[derive(Debug, Clone)]
pub struct Names {
    pub label: String,
    index: u64,
    count: u64,
}

impl Names {
    pub fn new(label: String, index: usize, count: usize) -> Names {
        Names {
            label,
            index: index as u64,
            count: count.max(1) as u64,
        }
    }

    fn alone(&self) -> bool {
        self.count == 1
    }

    /// The prefix of this daemon's server rows (empty when it is alone).
    pub fn server_prefix(&self) -> String {
        if self.alone() {
            String::new()
        } else {
            format!("{}/", self.label)
        }
    }

    pub fn server(&self, server: &str) -> String {
        format!("{}{server}", self.server_prefix())
    }

    pub fn tool(&self, tool: &str) -> String {
        if self.alone() {
            tool.to_string()
        } else {
            format!("{}:{tool}", self.label)
        }
    }

    pub fn id(&self, id: u64) -> u64 {
        id.saturating_mul(self.count).saturating_add(self.index)
    }

    /// The daemon's own id of the console's call `id`, if the call is this daemon's.
    pub fn local_id(&self, id: u64) -> Option<u64> {
        (id % self.count == self.index).then_some(id / self.count)
    }

    /// The daemon's own name of the console's tool `tool`, if the tool is this daemon's.
    pub fn local_tool<'a>(&self, tool: &'a str) -> Option<&'a str> {
        if self.alone() {
            return Some(tool);
        }
        tool.strip_prefix(&self.label)?.strip_prefix(':')
    }

    /// The daemon's own name of the console's server `server`, if it is this daemon's.
    pub fn local_server<'a>(&self, server: &'a str) -> Option<&'a str> {
        server.strip_prefix(&self.server_prefix())
    }

    fn rename(&self, value: &mut Value, key: &str, how: impl Fn(&Names, &str) -> String) {
        if let Some(Value::String(text)) = value.get_mut(key) {
            *text = how(self, text);
        }
    }

    /// A `TOOL` object of this daemon, named as the console shows it.
    pub fn tool_object(&self, tool: &mut Value) {
        if self.alone() {
            return;
        }
        self.rename(tool, "name", Names::tool);
        self.rename(tool, "server", Names::server);
    }

    /// An event or a notification's params of this daemon, named as the console shows them.
    pub fn event(&self, event: &mut Value) {
        if self.alone() {
            return;
        }
        self.rename(event, "server", Names::server);
        if let Some(id) = event.get("id").and_then(Value::as_u64) {
            event["id"] = self.id(id).into();
        }
        match event.get_mut("tool") {
            Some(Value::String(tool)) => *tool = self.tool(tool),
            Some(object @ Value::Object(_)) => self.tool_object(object),
            _ => {}
        }
        if let Some(report) = event.get_mut("report") {
            self.rename(report, "name", Names::server);
        }
        for list in ["added", "removed"] {
            for tool in event
                .get_mut(list)
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                self.tool_object(tool);
            }
        }
        for change in event
            .get_mut("changed")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            self.rename(change, "name", Names::tool);
            for side in ["before", "after"] {
                if let Some(tool) = change.get_mut(side) {
                    self.tool_object(tool);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn two_daemons_names_stay_apart_and_come_back() {
        let (a, b) = (Names::new("a".into(), 0, 2), Names::new("b".into(), 1, 2));
        let mut event = json!({"type": "call_started", "id": 3, "tool": "mcp__notes__echo"});
        b.event(&mut event);
        assert_eq!(event["id"], 7);
        assert_eq!(event["tool"], "b:mcp__notes__echo");
        assert_eq!((a.local_id(7), b.local_id(7)), (None, Some(3)));
        assert_eq!(b.local_tool("b:mcp__notes__echo"), Some("mcp__notes__echo"));
        assert_eq!(a.local_tool("b:mcp__notes__echo"), None);
        let mut report =
            json!({"type": "server_started", "server": "notes", "report": {"name": "notes"}});
        a.event(&mut report);
        assert_eq!(report["server"], "a/notes");
        assert_eq!(report["report"]["name"], "a/notes");
        assert_eq!(a.local_server("a/notes"), Some("notes"));
        assert_eq!(b.local_server("a/notes"), None);
        let mut asked = json!({"type": "approval_requested", "id": 1, "tool": {"name": "mcp__notes__w", "server": "notes"}});
        a.event(&mut asked);
        assert_eq!(
            asked["tool"],
            json!({"name": "a:mcp__notes__w", "server": "a/notes"})
        );
        assert_eq!(asked["id"], 2);
    }

    #[test]
    fn one_daemon_keeps_its_own_names() {
        let only = Names::new("a".into(), 0, 1);
        let mut event =
            json!({"type": "call_started", "id": 3, "tool": "mcp__notes__echo", "server": "notes"});
        let before = event.clone();
        only.event(&mut event);
        assert_eq!(event, before);
        assert_eq!(only.local_id(3), Some(3));
        assert_eq!(
            only.local_tool("mcp__notes__echo"),
            Some("mcp__notes__echo")
        );
        assert_eq!(only.local_server("notes"), Some("notes"));
    }
}
