//! The agent runtime: owns the tool registry, the MCP manager and the approval gate; runs calls
//! through the gate; publishes every change as a `RuntimeEvent` for whoever drives it.
//!
//! The one door (docs/ARCHITECTURE.md §2): the console, the headless commands and the agent reach
//! servers, tools and their status only through this module; the status types of the MCP layer that
//! they show are re-exported below, so nothing above names `crate::mcp`.
//!
//! The factory and the close list (docs/ARCHITECTURE.md §3 Lifecycle) are in `lifecycle.rs`; the
//! call path is in `executor.rs`, the event queue in `bus.rs`, turn boundaries (tool-list refresh
//! and its diff) in `turn.rs`, declarative hooks in `hooks/`, servers' resources and prompts in
//! `content.rs`.

mod bus;
mod call;
mod content;
mod content_json;
mod events;
mod executor;
mod gateway;
mod hooks;
mod json;
mod json_read;
mod ledger_json;
mod lifecycle;
mod observe;
mod rewake;
mod turn;

pub use crate::approval::{AnsweredBy, CallOrigin};
pub use bus::{EventStream, FLOOD_BOUND, STALL_LIMIT, TOTAL_BOUND};
pub use call::{Approval, CallOutcome, CallStatus};
pub use content::{ContentError, ResourceListing};
pub use content_json::{resource_content_from_json, resource_content_json};
pub use events::{log_text, RuntimeEvent};
pub use gateway::{daemon_token, gateway_token, Attended};
pub use hooks::{HookAnswer, HookOutcome, HookRun};
pub use json::{event_json, tool_json, ToolJson, ToolsJson};
pub use json_read::{
    approval_from_json, decision_named, event_from_json, field as json_field, tool_from_json,
};
pub use ledger_json::{ledger_json, rule_from_json};
pub use lifecycle::{
    trust_changes, AgentRuntime, AgentRuntimeFactory, CloseStep, RuntimeError, RuntimeEvents,
    RuntimeOptions, TraitChange,
};
pub use observe::{ModelRequest, Observer};
pub use turn::{ChangeKind, ToolChange, ToolsDiff};

/// What drivers (the console, `check`, `login`, the conformance client, the daemon) need of
/// OAuth: start a login, forget one, see a pending step-up, where the tokens are kept.
pub use crate::mcp::auth::{
    begin_login, logout as oauth_logout, step_up_pending, store_dir as token_store_dir, Login,
    LoginError, LoginSummary, PendingLogin, Revocation, StoreError,
};
pub use crate::mcp::capabilities::{Capabilities, ListCapability, ResourceCapability};
pub use crate::mcp::client::McpError;
pub use crate::mcp::elicitation::{ElicitationAnswer, ElicitationMode, ElicitationRequest};
pub use crate::mcp::events::{
    Failure, FailureClass, McpEvent, PhaseTimes, RequestOutcome, ServerInfo, ServerReport,
    ServerStatus, StartPhase, Timeline,
};
pub use crate::mcp::form::{
    check_content, content_of, tool_fields_of, value_text, Choice, FieldKind, FormField, TextFormat,
};
pub use crate::mcp::manager::{startup_deadline, StartSummary};
pub use crate::mcp::notify::{ListKind, LogLevel, McpNotification};
pub use crate::mcp::prompts::{
    MessageRole, PromptArgumentInfo, PromptInfo, PromptMessageInfo, PromptMessages,
};
pub use crate::mcp::resources::{
    Completion, CompletionTarget, ResourceContent, ResourceInfo, TemplateInfo,
};
pub use crate::mcp::rewake::ExternalEvent;
pub use crate::mcp::sampling::{
    stop_reason, SamplingAnswer, SamplingAsk, SamplingMessage, SamplingRequest, SamplingRole,
    SamplingTool,
};
pub use crate::mcp::skills::{LoadedSkill, SkillFile, SkillInfo};
pub use crate::mcp::supervisor::Crashes;
/// rustls' ring provider as the process default, for every HTTPS client (servers and models).
pub use crate::mcp::transport::process::ExitInfo;
/// What a daemon that was killed left behind, found and ended by the next one.
pub use crate::mcp::transport::reaper::{end_leftovers_of, process_start};
pub use crate::mcp::uri_template::{expand_template, template_start, template_variables};
