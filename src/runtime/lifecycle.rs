//! Who creates what and who closes it (docs/ARCHITECTURE.md §3 Lifecycle): the factory creates the
//! manager and hands it to both the tool registration and the runtime; if building the runtime
//! fails, the factory closes the manager itself; `AgentRuntime::close` closes a written-out list.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::bus::{EventBus, EventStream};
use super::call::CallOutcome;
use super::events::RuntimeEvent;
use super::executor::Executor;
use super::hooks::{HookRun, Hooks, Subject};
use super::rewake::{Rewaker, RuntimeListener};
use super::turn::{diff_tools, revoke_stale_approvals, ToolsDiff};
use crate::approval::{ApprovalGate, CallOrigin, PinStore};
use crate::config::{AnnotationTrust, Config, HookEvent, ServerConfig};
use crate::mcp::client::{ClientOptions, McpError};
use crate::mcp::events::ServerReport;
use crate::mcp::manager::{McpClientManager, StartLimits, StartSummary};
use crate::mcp::notify::{LogLevel, NotificationTap};
use crate::mcp::relay::HostRelays;
use crate::mcp::supervisor::Crashes;
use crate::tool::registry::{DuplicateTool, ToolSnapshot};
use crate::tool::{
    DestructiveBehavior, ProgressSink, SideEffectLevel, Tool, ToolDescriptor, ToolRegistry,
};

/// Why a runtime could not be built.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("cannot register tool: {0}")]
    DuplicateTool(#[from] DuplicateTool),
}

/// What goes into a runtime besides the config.
pub struct RuntimeOptions {
    /// Register the local tools the config lists (`policy.local_tools`; `read` alone by default),
    /// and `read_result` when the config has an agent.
    pub local_tools: bool,
    /// More tools to register (embedders, tests).
    pub extra_tools: Vec<Arc<dyn Tool>>,
    /// Call ids go on after this one (a runtime started again in place of another keeps its
    /// predecessor's ids apart from its own).
    pub first_call_id: u64,
    /// It serves other hosts (`serve`, the console's `--serve-http`): a server's sampling or
    /// elicitation request made during a host's call goes to that host (`mcp::relay`).
    pub serves_hosts: bool,
    /// Sees every event and model request (telemetry, `src/telemetry`); flushed at close.
    pub observer: Option<Arc<dyn super::Observer>>,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            local_tools: true,
            extra_tools: Vec::new(),
            first_call_id: 0,
            serves_hosts: false,
            observer: None,
        }
    }
}

/// One step of `AgentRuntime::close`, and how it went.
#[derive(Debug, Clone, PartialEq)]
pub struct CloseStep {
    pub what: &'static str,
    pub result: Result<(), String>,
}

/// Builds runtimes.
pub struct AgentRuntimeFactory;

impl AgentRuntimeFactory {
    /// A new event stream and the sender a runtime will publish on; create the stream first so a
    /// driver sees servers join while they start.
    pub fn events() -> (RuntimeEvents, EventStream) {
        let (bus, stream) = EventBus::new();
        (RuntimeEvents(bus), stream)
    }

    /// Builds a runtime and starts every configured server in the background: it returns at
    /// once, and each server's tools join the registry the moment that server is ready (the
    /// driver sees `ServerStarted` for each). `AgentRuntime::wait_started` waits for all.
    pub async fn create(
        config: &Config,
        options: RuntimeOptions,
        events: RuntimeEvents,
    ) -> Result<AgentRuntime, RuntimeError> {
        let bus = events.0;
        if let Some(observer) = &options.observer {
            bus.observe(observer.clone());
        }
        let registry = Arc::new(ToolRegistry::new());
        let gate = Arc::new(
            ApprovalGate::new(config.policy.clone()).with_pin_store(PinStore::default_place()),
        );
        let hooks = Arc::new(Hooks::new(
            config.hooks.clone(),
            registry.clone(),
            gate.clone(),
            bus.clone(),
        ));
        // 1. The factory creates the manager ...
        let listener = RuntimeListener {
            bus: bus.clone(),
            rewaker: Rewaker::new(&config.notifications.rewake, bus.clone()),
        };
        let relays = options.serves_hosts.then(HostRelays::default);
        let manager = Arc::new(McpClientManager::with_registry(
            // Server events reach the hooks of `server_ready` and `server_failed` too.
            hooks.sink(bus.mcp_sink()),
            NotificationTap::new(Arc::new(listener)),
            ClientOptions {
                roots: config.mcp.roots.clone(),
                // A model answers sampling requests only where an agent is configured.
                sampling: config.agent.is_some(),
                relays: relays.clone(),
                ..ClientOptions::default()
            },
            registry.clone(),
        ));
        hooks.set_manager(&manager);
        // 2. ... hands it to the runtime (the local tools are registered first, so they hold
        // their names before any server joins) ...
        let parts = Parts {
            registry,
            gate,
            hooks: hooks.clone(),
            bus,
            relays,
        };
        let runtime = match build(manager.clone(), parts, config, options) {
            Ok(runtime) => runtime,
            // If building it fails, nobody owns the manager yet: close it.
            Err(err) => {
                for (server, e) in manager.close_all().await {
                    tracing::warn!(%server, error = %e, "close after a failed runtime build");
                }
                return Err(err);
            }
        };
        hooks.session_start(config.mcp.servers.iter().map(|s| s.name.clone()).collect());
        // 3. ... and starts the servers: each joins when ready, and from then on one that goes
        // away is restarted and its tools re-registered.
        manager.supervise();
        manager.launch(
            &config.mcp.servers,
            StartLimits {
                budget: config.mcp.startup_budget,
                max_concurrent: config.mcp.max_concurrent_starts,
            },
        );
        Ok(runtime)
    }
}

/// The sending side of a runtime's event stream, handed to `AgentRuntimeFactory::create`.
pub struct RuntimeEvents(EventBus);

/// What the factory made before the runtime: the registry, the gate and the hooks, which the
/// manager's event sink already needs.
struct Parts {
    registry: Arc<ToolRegistry>,
    gate: Arc<ApprovalGate>,
    hooks: Arc<Hooks>,
    bus: EventBus,
    relays: Option<HostRelays>,
}

fn build(
    manager: Arc<McpClientManager>,
    parts: Parts,
    config: &Config,
    options: RuntimeOptions,
) -> Result<AgentRuntime, RuntimeError> {
    let Parts {
        registry,
        gate,
        hooks,
        bus,
        relays,
    } = parts;
    if options.local_tools {
        for tool in crate::tool::local::all(&config.policy.bash_sandbox) {
            if config.policy.local_tools.contains(&tool.descriptor().name) {
                registry.register(tool)?;
            }
        }
        // With an agent, the model pages through the results it was sent cut short.
        if config.agent.is_some() {
            let dir = crate::tool::local::read_result::results_dir();
            registry.register(std::sync::Arc::new(
                crate::tool::local::ReadResultTool::new(dir),
            ))?;
        }
    }
    for tool in options.extra_tools {
        registry.register(tool)?;
    }
    Ok(AgentRuntime {
        manager,
        executor: Executor {
            registry,
            gate,
            hooks,
            bus,
            next_id: AtomicU64::new(options.first_call_id),
            all_calls: CancellationToken::new(),
            running: Default::default(),
        },
        relays,
    })
}

/// One runtime: servers, tools, gate and the event stream.
pub struct AgentRuntime {
    pub(super) manager: Arc<McpClientManager>,
    pub(super) executor: Executor,
    /// The host calls in flight, when it serves other hosts.
    pub(super) relays: Option<HostRelays>,
}

impl std::fmt::Debug for AgentRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRuntime")
            .field("tools", &self.executor.registry.len())
            .finish()
    }
}

impl AgentRuntime {
    /// Waits until every configured server has finished starting (ready, failed, or stopped
    /// at the deadline) and sums up: the report `check` and `tools` print. Servers joined as
    /// they became ready meanwhile; this only waits for the last one.
    pub async fn wait_started(&self) -> StartSummary {
        self.manager.settled().await
    }

    /// Waits until `server` has finished starting; `None` when it is not configured. A call
    /// of one tool waits for its server only.
    pub async fn wait_for_server(&self, server: &str) -> Option<ServerReport> {
        self.manager.wait_for(server).await
    }

    /// Every configured server's report as it stands, in config order (status `starting`
    /// for those not done yet).
    pub fn reports(&self) -> Vec<ServerReport> {
        self.manager.reports()
    }

    /// The start-up deadline: each server has this long from its own start.
    pub fn startup_deadline(&self) -> Duration {
        self.manager.deadline()
    }

    /// How often `server` crashed since it started or was last restarted by hand.
    pub fn crashes(&self, server: &str) -> Crashes {
        self.manager.crashes(server)
    }

    /// The process id of a ready stdio server.
    pub fn server_pid(&self, server: &str) -> Option<i32> {
        self.manager.pid(server)
    }

    /// The last `lines` stderr lines of `server` (sanitized; kept across restarts, with a
    /// marker line where each new process begins).
    pub fn stderr_tail(&self, server: &str, lines: usize) -> Vec<String> {
        self.manager.stderr_ring(server).tail(lines)
    }

    /// Every registered tool, sorted by name.
    pub fn tools(&self) -> Vec<ToolDescriptor> {
        self.executor
            .registry
            .snapshot()
            .values()
            .map(|t| t.descriptor().clone())
            .collect()
    }

    /// The registered tools as they are now (cheap: the registry's own snapshot). The registry
    /// copies on write, so while one is held any change makes a new one: a holder tells a
    /// changed list by `Arc::ptr_eq`.
    pub fn tool_snapshot(&self) -> ToolSnapshot {
        self.executor.registry.snapshot()
    }

    pub fn gate(&self) -> &ApprovalGate {
        &self.executor.gate
    }

    /// Whether a server announced a change of its tools that the next turn boundary takes in.
    pub fn has_stale_tools(&self) -> bool {
        !self.manager.stale_servers().is_empty()
    }

    /// Restarts one server with `config` (e.g. re-read from the file, with a new trust); its
    /// tools are listed and resolved again and join when it is ready. This is the restart by
    /// hand: it also starts a server that failed at start-up or was stopped at the deadline,
    /// abandons a start still in flight, brings back a server the supervisor gave up on, and
    /// resets its crash count. Remembered approvals of tools whose traits, schema or
    /// description changed no longer apply (the ledger compares fingerprints).
    pub async fn restart_server(&self, config: &ServerConfig) -> ServerReport {
        // The rules pin what they applied to before the server comes back with its tools.
        for tool in self.server_tools(&config.name) {
            self.executor.gate.observe(&tool);
        }
        self.manager.restart_server(config).await
    }

    /// The turn boundary: lists the tools of every server that announced `tools/list_changed`
    /// since its tools were last listed, swaps them into the registry (each resolved anew
    /// through `McpToolTraits::resolve`, the one place trust is decided), forgets remembered
    /// approvals of tools that changed or went away, publishes one `ToolsChanged` per server
    /// and returns the same diffs. A no-op when nothing is stale.
    ///
    /// Call it between turns, never in the middle of one: the console calls it between calls,
    /// `watch` whenever a tools list change arrives, the headless `call` never (one call, one
    /// turn). Calls already running keep the tool they started with; a call still awaiting
    /// approval when its tool is swapped ends as an error instead of running the new version.
    pub async fn turn_boundary(&self) -> Vec<ToolsDiff> {
        let mut diffs = Vec::new();
        for server in self.manager.stale_servers() {
            let before = self.server_tools(&server);
            // Pinned by the rules as they were, so a change in the new list shows as one.
            for tool in &before {
                self.executor.gate.observe(tool);
            }
            let mut diff = match self.manager.refresh_tools(&server).await {
                Ok(refused) => {
                    let mut diff = diff_tools(&server, &before, &self.server_tools(&server));
                    diff.refused = refused;
                    diff
                }
                Err(e) => {
                    tracing::warn!(%server, error = %e, "re-listing tools failed; keeping the old ones");
                    ToolsDiff {
                        server: server.clone(),
                        error: Some(e.to_string()),
                        ..ToolsDiff::default()
                    }
                }
            };
            revoke_stale_approvals(&self.executor.gate, &mut diff);
            self.executor
                .bus
                .send(RuntimeEvent::ToolsChanged(diff.clone()));
            diffs.push(diff);
        }
        diffs
    }

    /// The names of a ready server's tools as the server listed them, in its order.
    pub fn server_tool_names(&self, server: &str) -> Vec<String> {
        self.manager.tool_names(server)
    }

    /// The servers whose tools are stale (announced `tools/list_changed`, not yet re-listed).
    pub fn stale_servers(&self) -> Vec<String> {
        self.manager.stale_servers()
    }

    /// Asks `server` to send log messages at `level` and above (`logging/setLevel`).
    pub async fn set_log_level(&self, server: &str, level: LogLevel) -> Result<(), McpError> {
        self.manager.set_log_level(server, level).await
    }

    /// The registered tools of `server`, sorted by name.
    fn server_tools(&self, server: &str) -> Vec<ToolDescriptor> {
        self.tools()
            .into_iter()
            .filter(|t| t.origin.as_ref().is_some_and(|o| o.server == server))
            .collect()
    }

    /// What trusting (or not) `server` would change: each of its tools whose side effect or
    /// destructiveness differs under `trust`, with the traits before and after.
    pub fn preview_trust(&self, server: &str, trust: AnnotationTrust) -> Vec<TraitChange> {
        trust_changes(&self.tools(), server, trust)
    }

    /// Runs one call through the gate. Mutating calls publish an `ApprovalRequested` event and
    /// wait for its answer; `cancel` (or closing the runtime) ends the call as cancelled.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Value,
        cancel: CancellationToken,
    ) -> CallOutcome {
        self.call_from(tool, arguments, cancel, CallOrigin::Operator)
            .await
    }

    /// [`AgentRuntime::call`] for a caller other than the operator: the same gate, ledger and
    /// events, with `origin` on its `CallStarted` event and its approval request.
    pub async fn call_from(
        &self,
        tool: &str,
        arguments: Value,
        cancel: CancellationToken,
        origin: CallOrigin,
    ) -> CallOutcome {
        self.call_reporting(tool, arguments, cancel, origin, None)
            .await
    }

    /// [`AgentRuntime::call_from`] that also tells `progress` how the tool is getting on (a
    /// host that asked for progress through the gateway).
    pub async fn call_reporting(
        &self,
        tool: &str,
        arguments: Value,
        cancel: CancellationToken,
        origin: CallOrigin,
        progress: Option<ProgressSink>,
    ) -> CallOutcome {
        // The call's token is cancelled by the runtime closing (it is a child of `all_calls`) or
        // by the caller's `cancel`, which is forwarded here in the same task: no watcher task
        // per call (a spawn wakes another worker thread, a measurable cost on every call).
        let token = self.executor.all_calls.child_token();
        let call = self
            .executor
            .call(tool, arguments, token.clone(), origin, progress);
        forward_cancel(call, &cancel, &token).await
    }

    /// The agent was given `prompt`: runs the `user_prompt` hooks (in order, each within its
    /// timeout) and returns their runs, which are also published as `HookRan` events.
    /// `cancel` (the prompt's) ends them at once, as the runtime closing does.
    pub async fn user_prompt_hooks(
        &self,
        prompt: &str,
        cancel: &CancellationToken,
    ) -> Vec<HookRun> {
        self.agent_hooks(HookEvent::UserPrompt, &Subject::Prompt(prompt), cancel)
            .await
    }

    /// The agent finished turn `turn` (counted from 1): runs the `turn_end` hooks, as
    /// [`user_prompt_hooks`](Self::user_prompt_hooks) does.
    pub async fn turn_end_hooks(&self, turn: u64, cancel: &CancellationToken) -> Vec<HookRun> {
        self.agent_hooks(HookEvent::TurnEnd, &Subject::Turn(turn), cancel)
            .await
    }

    /// The hooks of one of the agent's events, until they end, the runtime closes or `cancel`.
    async fn agent_hooks(
        &self,
        event: HookEvent,
        subject: &Subject<'_>,
        cancel: &CancellationToken,
    ) -> Vec<HookRun> {
        // Cancelled already: none starts (a quick one would still have done its work).
        if cancel.is_cancelled() {
            return Vec::new();
        }
        let hooks = &self.executor.hooks;
        let token = hooks.stop_token();
        forward_cancel(hooks.run_event(event, subject, &token), cancel, &token).await
    }

    /// Who observes this runtime (telemetry), to tell about model requests too.
    pub fn observer(&self) -> Option<Arc<dyn super::Observer>> {
        self.executor.bus.observer().cloned()
    }

    /// Cancels running call `id` (the id of its `CallStarted` event), as if its caller had
    /// cancelled it: the server is sent `notifications/cancelled` and the call ends `cancelled`
    /// at once. False when no such call is running.
    pub fn cancel_call(&self, id: u64) -> bool {
        self.executor.cancel(id)
    }

    /// Closes, in this order: (1) the MCP manager: its supervisor first (nothing restarts
    /// behind the close), then every server and its process group;
    /// (2) every call still running (local tool processes are killed); (3) every hook still
    /// running (its process group killed); (4) the event stream; (5) the observer's flush
    /// (telemetry sent on, within its exporter's timeout).
    /// A failing step is logged and the rest still run.
    pub async fn close(&self) -> Vec<CloseStep> {
        let mut steps = Vec::with_capacity(4);

        let failures = self.manager.close_all().await;
        steps.push(CloseStep {
            what: "mcp manager",
            result: if failures.is_empty() {
                Ok(())
            } else {
                Err(failures
                    .iter()
                    .map(|(server, e)| format!("{server}: {e}"))
                    .collect::<Vec<_>>()
                    .join("; "))
            },
        });

        self.executor.all_calls.cancel();
        steps.push(CloseStep {
            what: "running calls",
            result: Ok(()),
        });

        steps.push(CloseStep {
            what: "hooks",
            result: self.executor.hooks.close().await,
        });

        self.executor.bus.close();
        steps.push(CloseStep {
            what: "event stream",
            result: Ok(()),
        });

        if let Some(observer) = self.executor.bus.observer().cloned() {
            let flushed = tokio::task::spawn_blocking(move || observer.flush()).await;
            steps.push(CloseStep {
                what: "telemetry",
                result: flushed.unwrap_or_else(|e| Err(e.to_string())),
            });
        }

        for step in &steps {
            if let Err(e) = &step.result {
                tracing::warn!(step = step.what, error = %e, "close step failed");
            }
        }
        steps
    }
}

/// One tool whose traits a trust change would change.
#[derive(Debug, Clone, PartialEq)]
pub struct TraitChange {
    pub tool: String,
    pub before: (SideEffectLevel, DestructiveBehavior),
    pub after: (SideEffectLevel, DestructiveBehavior),
    /// Why, under the new trust.
    pub provenance: String,
}

/// The tools of `server` among `tools` whose traits differ under `trust`.
pub fn trust_changes(
    tools: &[ToolDescriptor],
    server: &str,
    trust: AnnotationTrust,
) -> Vec<TraitChange> {
    tools
        .iter()
        .filter(|t| t.origin.as_ref().is_some_and(|o| o.server == server))
        .filter_map(|t| {
            let after = crate::mcp::traits::preview(t, trust)?;
            let before = (t.side_effect, t.destructive);
            let now = (after.side_effect, after.destructive);
            (before != now).then(|| TraitChange {
                tool: t.name.clone(),
                before,
                after: now,
                provenance: after.provenance,
            })
        })
        .collect()
}

/// Runs `work`, which stops on `token`, to its end; `cancel` firing first cancels `token`, in
/// the same task (no watcher task).
async fn forward_cancel<T>(
    work: impl std::future::Future<Output = T>,
    cancel: &CancellationToken,
    token: &CancellationToken,
) -> T {
    tokio::pin!(work);
    tokio::select! {
        biased;
        done = &mut work => done,
        () = cancel.cancelled() => {
            token.cancel();
            work.await
        }
    }
}
