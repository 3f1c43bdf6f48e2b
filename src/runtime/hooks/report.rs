//! A hook's run as the runtime reports it (`RuntimeEvent::HookRan`): which hook, on which event,
//! for which call, how long, and its decision or the warning that made it count as silent. A
//! leaf of the runtime: the event enum, the runner and every driver use it.

use std::time::Duration;

use serde::Serialize;

use crate::config::HookEvent;

/// A decision as a hook gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HookAnswer {
    Allow,
    Deny,
    /// Leave it to the rules and the policy.
    Defer,
}

impl HookAnswer {
    pub fn as_str(self) -> &'static str {
        match self {
            HookAnswer::Allow => "allow",
            HookAnswer::Deny => "deny",
            HookAnswer::Defer => "defer",
        }
    }
}

/// How one hook run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum HookOutcome {
    /// It answered with a decision (read for `pre_tool_use` only).
    Decided {
        decision: HookAnswer,
        reason: Option<String>,
    },
    /// It ran and said nothing that decides (or its event takes no decision).
    Ran,
    /// It failed, and counts as having said nothing: why, in words.
    Warning(String),
}

/// One hook run, as `RuntimeEvent::HookRan` reports it (and a transcript would record it).
#[derive(Debug, Clone, PartialEq)]
pub struct HookRun {
    /// Its index in `hooks`.
    pub hook: usize,
    pub event: HookEvent,
    /// `mcp_tool guard/check` or `command /path/guard.sh`.
    pub action: String,
    /// The call it ran for (tool events).
    pub call: Option<u64>,
    /// That call's tool.
    pub tool: Option<String>,
    /// The server the event is about (the tool's server; the server that became ready or failed).
    pub server: Option<String>,
    pub elapsed: Duration,
    pub outcome: HookOutcome,
}

impl HookRun {
    /// `hooks[0] (mcp_tool guard/check)`: how the hook is named to the operator.
    pub fn label(&self) -> String {
        format!("hooks[{}] ({})", self.hook, self.action)
    }
}
