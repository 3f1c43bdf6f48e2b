//! A call as the runtime reports it: where it stands (`CallStatus`) and how it ended
//! (`CallOutcome`). A leaf of the runtime: the event enum, the executor and every driver use it.

use std::time::Duration;

use serde::Serialize;

use super::hooks::report::HookRun;
use crate::approval::{AnsweredBy, ApprovalDecision};
use crate::tool::ToolResult;

/// Where a call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// Waiting for the operator's decision.
    AwaitingApproval,
    Running,
    Ok,
    /// The tool ran and failed, or could not be called.
    Error,
    /// The operator said no.
    Denied,
    /// Above the side-effect ceiling: refused without asking.
    Refused,
    /// Cancelled before it ended.
    Cancelled,
}

impl CallStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::AwaitingApproval => "awaiting approval",
            CallStatus::Running => "running",
            CallStatus::Ok => "ok",
            CallStatus::Error => "error",
            CallStatus::Denied => "denied",
            CallStatus::Refused => "refused",
            CallStatus::Cancelled => "cancelled",
        }
    }

    /// True once the call has ended.
    pub fn is_final(self) -> bool {
        match self {
            CallStatus::AwaitingApproval | CallStatus::Running => false,
            CallStatus::Ok
            | CallStatus::Error
            | CallStatus::Denied
            | CallStatus::Refused
            | CallStatus::Cancelled => true,
        }
    }
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallOutcome {
    pub id: u64,
    pub tool: String,
    pub status: CallStatus,
    pub result: ToolResult,
    #[serde(rename = "elapsed_ms", serialize_with = "ser_ms")]
    pub elapsed: Duration,
    /// How the operator answered, when the call waited for approval (not part of the JSON
    /// shape of `call --json`).
    #[serde(skip)]
    pub approval: Option<Approval>,
    /// Why the gate let it run without asking, when a rule, a hook or the session's approval
    /// did ("allowed by policy.rules[1]"; not part of the JSON shape either).
    #[serde(skip)]
    pub allowed: Option<String>,
    /// The hooks that ran for the call (`pre_tool_use`, then `post_tool_use`), in order, as
    /// their `HookRan` events said (not part of the JSON shape either).
    #[serde(skip)]
    pub hooks: Vec<HookRun>,
}

/// The answer to a call's approval request, and how it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Approval {
    pub decision: ApprovalDecision,
    pub by: AnsweredBy,
}

fn ser_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(crate::text::millis(*d))
}
