//! The two messages between the `App` and its event loop: the `Effect`s handlers return (work
//! that takes time, run in the background) and the `AppEvent`s the loop feeds back; and the
//! `Level` of a notice, which handlers everywhere set.
//!
//! Separate from `app.rs` (the state and its handlers): this is the contract between the two
//! halves, which `mod.rs` and `effects.rs` run.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use super::chat::{ChatEffect, ChatEvent};
use super::listing::ContentEvent;
use crate::agent::sampling::Sampled;
use crate::config::{AnnotationTrust, ApprovalRule, Config};
use crate::runtime::{AgentRuntime, CompletionTarget, LogLevel, RuntimeEvent, ServerReport};

/// How serious a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Error,
}

/// Work for the event loop to run outside the handlers.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Run a call through the runtime (and so through the gate).
    Call { tool: String, arguments: Value },
    /// Write `annotation_trust` for `server` into the config file.
    WriteTrust {
        server: String,
        trust: AnnotationTrust,
        digest: u64,
    },
    /// Restart one server with its entry re-read from the config file.
    RestartServer { server: String },
    /// Close everything, re-read the config, start again.
    RestartAll,
    /// Leave (closing the runtime first).
    Quit,
    /// Cancel running call `id` (`notifications/cancelled`; it ends as cancelled at once).
    CancelCall(u64),
    /// A turn boundary: list stale servers' tools again (between calls, never during one).
    TurnBoundary,
    /// Ask `server` for log messages at `level` and above.
    SetLogLevel { server: String, level: LogLevel },
    /// List `server`'s resources and templates.
    ListResources { server: String },
    /// Read one resource.
    ReadResource { server: String, uri: String },
    /// Load one skill: its `SKILL.md`, verified against the listing (into the resource viewer).
    LoadSkill { server: String, uri: String },
    /// Subscribe to (`on`) or unsubscribe from a resource's updates.
    Subscribe {
        server: String,
        uri: String,
        on: bool,
    },
    /// Ask for completions of one argument (answer `seq` of the form that asked).
    Complete(CompletionAsk),
    /// List `server`'s prompts.
    ListPrompts { server: String },
    /// Get one prompt's messages.
    GetPrompt {
        server: String,
        name: String,
        arguments: BTreeMap<String, String>,
    },
    /// Write `bytes` to a new file at `path` (never over an existing one).
    Save { path: PathBuf, bytes: Vec<u8> },
    /// Open a URL with `xdg-open`.
    OpenUrl { url: String },
    /// Log in to `server` with OAuth (its browser page, then a restart once the token is in).
    Login { server: String },
    /// Append the rule "always allow `tool`" to `policy.rules` in the config file.
    AlwaysAllow {
        tool: String,
        /// The pin of the definition approved, written into the rule.
        pin: Option<String>,
        digest: u64,
    },
    /// Remove `policy.rules[index]` (and any entry written exactly like it) from the file.
    RemoveRule { index: usize, digest: u64 },
    /// The agent's work: start it, send it a prompt, cancel its turn (`chat/task.rs`).
    Agent(ChatEffect),
    /// Have the agent's model answer sampling request `id` (`sample.rs`).
    Sample { id: u64 },
    /// Over `attach`, what lets tools run is the daemons' (a console's own runtime answers
    /// at once): load it, or revoke a session approval there.
    Ledger(LedgerAsk),
}

/// What `Effect::Complete` asks: completions of `argument` (its `value` so far, the form's
/// other fields as `context`) of `target` on `server`, for answer `seq` of the form.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionAsk {
    pub seq: u64,
    pub server: String,
    pub target: CompletionTarget,
    pub argument: String,
    pub value: String,
    pub context: BTreeMap<String, String>,
}

/// What `Effect::Ledger` asks of the daemons.
#[derive(Debug, Clone, PartialEq)]
pub enum LedgerAsk {
    Load,
    Revoke { tool: String },
}

/// Events the event loop feeds back into the app.
#[derive(Debug)]
pub enum AppEvent {
    /// An event of the runtime of `generation` (older generations are stale).
    Runtime(u64, RuntimeEvent),
    /// The runtime of `generation` finished starting (or could not be built).
    RuntimeReady(u64, Result<Arc<AgentRuntime>, String>),
    /// A restart-all re-read the config: the new generation starts with it.
    Restarting(u64, Result<Box<Config>, String>),
    /// One server restarted by hand (ready or not: the report says).
    ServerRestarted(ServerReport),
    /// A restart by hand could not begin, and why (the config does not load, the server is
    /// gone from it).
    RestartRefused { server: String, why: String },
    /// The trust write finished: the new file digest, or why nothing was written.
    TrustWritten {
        server: String,
        trust: AnnotationTrust,
        result: Result<u64, String>,
    },
    /// `logging/setLevel` was answered.
    LogLevelSet {
        server: String,
        level: LogLevel,
        result: Result<(), String>,
    },
    /// Resources, prompts and what comes of them (`content.rs`).
    Content(ContentEvent),
    /// Something for the notice line (how a login goes).
    Notice(Level, String),
    /// `policy.rules` was written: the new file digest and its rules as loaded again, and what
    /// to tell the operator; or why nothing (or not all) was done.
    RulesWritten {
        done: String,
        result: Result<(u64, Vec<ApprovalRule>), String>,
    },
    /// Attached to a daemon (`attach`): its servers' reports and its tools as they stand,
    /// its rows those whose names start with `prefix` (every row, for a daemon alone).
    Attached {
        prefix: String,
        servers: Vec<ServerReport>,
        tools: Vec<crate::tool::ToolDescriptor>,
    },
    /// A daemon's tools (of the servers named with that prefix), listed again (a server
    /// joined or its list changed).
    Tools(String, Vec<crate::tool::ToolDescriptor>),
    /// Call `id`'s approval was answered in a daemon: the decision and who gave it, in words
    /// (`allowed once by console-b alice@build-7 (pid 4242)`); said on the notice line unless
    /// `replayed` (what happened before the console attached).
    Decided {
        id: u64,
        text: String,
        replayed: bool,
    },
    /// A report of the agent task of this epoch (older epochs' are stale).
    Agent(u64, ChatEvent),
    /// The agent's model answered sampling request `id`, or could not (why).
    Sampled {
        id: u64,
        result: Result<Sampled, String>,
    },
    /// The daemons' rules and session approvals were loaded again (`Effect::Ledger`).
    LedgerLoaded,
}
