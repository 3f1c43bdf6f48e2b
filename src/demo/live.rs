//! `--live-tools`: four demo tools for the live-server features (issue 5), served besides the
//! five: `flood` (numbered log messages), `change_tools` (changes the tool list and says so),
//! `crash` (exits mid-call) and `never_answer` (progress forever, cancellation ignored).
//!
//! Separate from `tools.rs` because they are fixtures for tests and trials, not a playground:
//! the tool-list overlay that `change_tools` edits lives here too, and the handler asks it
//! what its tools are now.

// Logging is SEP-2577-deprecated in rmcp, but the demo still speaks it for today's clients.
#![allow(deprecated)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, JsonObject, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam, RequestMetaObject, Tool, ToolAnnotations,
};
use rmcp::{tool, tool_router, Peer, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::annotations::{annotations, Effect};
use super::{DemoOptions, DemoServer};

/// How often `never_answer` reports progress.
const NEVER_ANSWER_TICK: Duration = Duration::from_millis(100);

/// Arguments of `flood`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct FloodArgs {
    /// How many log messages to send (numbered 1..=count in `data.n`).
    count: u64,
    /// Their level (default info); messages below the level the client set are not sent.
    #[schemars(extend("default" = "info"))]
    level: Option<LoggingLevel>,
}

/// What `change_tools` does.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum ChangeAction {
    /// Serve a new read-only tool named `tool` (it answers its own name).
    Add,
    /// Stop serving `tool`.
    Remove,
    /// Give `tool` the annotations of `effect`.
    Annotate,
}

/// The side effect `change_tools` gives a tool.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum EffectArg {
    ReadOnly,
    Additive,
    Destructive,
}

/// Arguments of `change_tools`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct ChangeToolsArgs {
    action: ChangeAction,
    /// The tool to add, remove or re-annotate.
    tool: String,
    /// For `annotate`: the new side effect (default destructive).
    effect: Option<EffectArg>,
}

/// Arguments of `crash`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct CrashArgs {
    /// The exit code.
    code: i32,
    /// Milliseconds to wait first (default 100), so the call is under way when it happens.
    after_ms: Option<u64>,
}

/// Arguments of `never_answer` (none).
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct NeverAnswerArgs {}

/// How `change_tools` has bent the tool list since start.
#[derive(Debug, Default)]
pub(super) struct ToolChanges {
    removed: BTreeSet<String>,
    annotated: BTreeMap<String, Effect>,
    added: BTreeMap<String, Tool>,
}

impl ToolChanges {
    /// `tool` as it is served now (`None` when removed), or an added tool.
    pub(super) fn apply(
        &self,
        name: &str,
        base: Option<&Tool>,
        opts: &DemoOptions,
    ) -> Option<Tool> {
        if self.removed.contains(name) {
            return None;
        }
        if let Some(added) = self.added.get(name) {
            return Some(added.clone());
        }
        let mut tool = base?.clone();
        if let Some(effect) = self.annotated.get(name) {
            tool.annotations = annotations(*effect, opts);
        }
        Some(tool)
    }

    /// The names of the added tools.
    pub(super) fn added(&self) -> impl Iterator<Item = &String> {
        self.added.keys()
    }
}

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

/// A new read-only tool called `name` with one optional string argument.
fn added_tool(name: &str) -> Tool {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), json!({"text": {"type": "string"}}));
    Tool::new(
        name.to_string(),
        format!("Added by change_tools; returns its own name ({name})."),
        Arc::new(schema),
    )
    .annotate(
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    )
}

#[tool_router(router = live_tool_router, vis = "pub(super)")]
impl DemoServer {
    /// Send `count` numbered log messages, then answer.
    #[tool(
        description = "Send count log messages (data.n = 1..=count) at level (default info), \
                       then answer with how many were sent."
    )]
    async fn flood(
        &self,
        Parameters(args): Parameters<FloodArgs>,
        peer: Peer<RoleServer>,
    ) -> CallToolResult {
        let level = args.level.unwrap_or(LoggingLevel::Info);
        if !self.wants(level) {
            return text(format!(
                "sent 0 of {} log messages (below the level the client set)",
                args.count
            ));
        }
        for n in 1..=args.count {
            let param = LoggingMessageNotificationParam::new(
                level,
                json!({"n": n, "of": args.count, "text": format!("flood message {n} of {}", args.count)}),
            )
            .with_logger("flood");
            if let Err(error) = peer.notify_logging_message(param).await {
                return text(format!(
                    "sent {} of {} log messages: {error}",
                    n - 1,
                    args.count
                ));
            }
        }
        text(format!("sent {} log messages", args.count))
    }

    /// Add, remove or re-annotate a tool, then send `notifications/tools/list_changed`.
    #[tool(
        description = "Change the tool list (add a tool, remove one, or re-annotate one with a \
                       new effect) and send notifications/tools/list_changed."
    )]
    async fn change_tools(
        &self,
        Parameters(args): Parameters<ChangeToolsArgs>,
        peer: Peer<RoleServer>,
    ) -> CallToolResult {
        let done = {
            let mut changes = self.changes();
            match args.action {
                ChangeAction::Add => {
                    changes.removed.remove(&args.tool);
                    changes
                        .added
                        .insert(args.tool.clone(), added_tool(&args.tool));
                    format!("added {}", args.tool)
                }
                ChangeAction::Remove => {
                    changes.added.remove(&args.tool);
                    changes.removed.insert(args.tool.clone());
                    format!("removed {}", args.tool)
                }
                ChangeAction::Annotate => {
                    let effect = match args.effect.unwrap_or(EffectArg::Destructive) {
                        EffectArg::ReadOnly => Effect::ReadOnly,
                        EffectArg::Additive => Effect::Additive,
                        EffectArg::Destructive => Effect::Destructive,
                    };
                    changes.annotated.insert(args.tool.clone(), effect);
                    format!("re-annotated {} as {effect:?}", args.tool)
                }
            }
        };
        if let Err(error) = peer.notify_tool_list_changed().await {
            return text(format!("{done}; tools/list_changed not sent: {error}"));
        }
        text(done)
    }

    /// Exit the process with `code` while the call is under way.
    #[tool(
        description = "Exit the server process with the given code after after_ms (default 100) ms, mid-call."
    )]
    async fn crash(&self, Parameters(args): Parameters<CrashArgs>) -> CallToolResult {
        tokio::time::sleep(Duration::from_millis(args.after_ms.unwrap_or(100))).await;
        std::process::exit(args.code);
    }

    /// Report progress every 100 ms and never answer, cancelled or not.
    #[tool(
        description = "Send progress every 100 ms forever and never answer; ignores cancellation."
    )]
    async fn never_answer(
        &self,
        Parameters(_args): Parameters<NeverAnswerArgs>,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
    ) -> CallToolResult {
        let token = meta.get_progress_token();
        let mut done: u32 = 0;
        loop {
            tokio::time::sleep(NEVER_ANSWER_TICK).await;
            done = done.saturating_add(1);
            if let Some(token) = &token {
                let progress = ProgressNotificationParam::new(token.clone(), f64::from(done))
                    .with_message(format!("tick {done}, still not answering"));
                if let Err(error) = peer.notify_progress(progress).await {
                    tracing::debug!("demo server: progress not delivered: {error}");
                }
            }
        }
    }
}
