//! The states the console tests start from, built from the same events the runtime sends with
//! a fixed clock: a config, servers ready and failed, tools with their traits, a populated
//! console, and the keys pressed. Shared by the snapshot tests (`tests.rs`), the key tests
//! of every pane and modal, and the chat tests.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::config::{
    AnnotationTrust, Config, McpConfig, PolicyConfig, ServerConfig, StartMode, TransportKind,
};
use crate::runtime::{
    CallStatus, ExitInfo, Failure, FailureClass, McpEvent, PhaseTimes, RuntimeEvent, ServerInfo,
    ServerReport, ServerStatus, StartPhase, Timeline,
};
use crate::tool::{DestructiveBehavior, SideEffectLevel, ToolDescriptor, ToolOrigin, ToolResult};
use crate::tui::app::App;
use crate::tui::state::ToolRow;
use crate::tui::theme::Theme;

/// A key pressed alone (the key tests of every pane and modal use these two).
pub(in crate::tui) fn key(code: crossterm::event::KeyCode) -> crossterm::event::KeyEvent {
    crossterm::event::KeyEvent::new(code, crossterm::event::KeyModifiers::NONE)
}

/// Ctrl and a letter.
pub(in crate::tui) fn ctrl(c: char) -> crossterm::event::KeyEvent {
    crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char(c),
        crossterm::event::KeyModifiers::CONTROL,
    )
}

pub(in crate::tui) fn server(name: &str, trust: AnnotationTrust) -> ServerConfig {
    let mut server = ServerConfig::stdio(name, "demo", Vec::new());
    server.annotation_trust = trust;
    server.request_timeout = Duration::from_secs(10);
    server
}

pub(in crate::tui) fn config() -> Config {
    let mut parked = server("parked", AnnotationTrust::Ignore);
    parked.enabled = false;
    Config {
        path: PathBuf::from("/home/op/aimon.yaml"),
        mcp: McpConfig {
            servers: vec![
                server("notes", AnnotationTrust::Ignore),
                server("notes-trusted", AnnotationTrust::Trust),
                server("broken", AnnotationTrust::Ignore),
                server("slow-start", AnnotationTrust::Ignore),
                parked,
            ],
            startup_budget: None,
            max_concurrent_starts: None,
            roots: Vec::new(),
        },
        policy: PolicyConfig::default(),
        notifications: Default::default(),
        hooks: Vec::new(),
        agent: None,
        gateway: Default::default(),
        telemetry: Default::default(),
        daemon: Default::default(),
        source_digest: 1,
    }
}

pub(in crate::tui) fn ready(
    name: &str,
    phases: (u64, u64, u64),
    warnings: Vec<String>,
) -> ServerReport {
    ServerReport {
        name: name.into(),
        transport: TransportKind::Stdio,
        status: ServerStatus::Ready,
        start: StartMode::Eager,
        protocol_version: Some("2026-07-28".into()),
        server_info: Some(ServerInfo {
            name: "aimon-demo".into(),
            version: "0.1.0".into(),
        }),
        phases: PhaseTimes {
            queued_ms: None,
            connect_ms: None,
            spawn_ms: Some(phases.0),
            handshake_ms: Some(phases.1),
            list_tools_ms: Some(phases.2),
        },
        tools: 5,
        warnings,
        failure: None,
        capabilities: None,
        instructions: None,
        sandbox: None,
        timeline: Timeline {
            started_at_ms: Some(1),
            ready_at_ms: Some(1 + phases.2),
            failed_at_ms: None,
        },
    }
}

/// A report of `name` ready, for tests elsewhere.
pub(in crate::tui) fn ready_report(name: &str) -> ServerReport {
    ready(name, (1, 2, 3), Vec::new())
}

pub(in crate::tui) fn failed() -> ServerReport {
    ServerReport {
        name: "broken".into(),
        transport: TransportKind::Stdio,
        status: ServerStatus::Failed,
        start: StartMode::Eager,
        protocol_version: None,
        server_info: None,
        phases: PhaseTimes {
            queued_ms: None,
            connect_ms: None,
            spawn_ms: Some(2),
            handshake_ms: None,
            list_tools_ms: None,
        },
        timeline: Timeline {
            started_at_ms: Some(1),
            ready_at_ms: None,
            failed_at_ms: Some(41),
        },
        tools: 0,
        capabilities: None,
        instructions: None,
        sandbox: None,
        warnings: Vec::new(),
        failure: Some(Failure {
            class: FailureClass::Exited,
            phase: Some(StartPhase::Handshake),
            message: "the server exited during the handshake (exit code 3)".into(),
            exit_status: Some(ExitInfo::Code(3)),
            http_status: None,
            stderr_tail: vec!["boom".into()],
        }),
    }
}

pub(in crate::tui) fn descriptor(
    server: &str,
    tool: &str,
    effect: SideEffectLevel,
    destructive: bool,
    trust: AnnotationTrust,
    why: &str,
) -> ToolDescriptor {
    let mut descriptor = ToolDescriptor {
        name: format!("mcp__{server}__{tool}"),
        description: format!("The {tool} tool."),
        input_schema: json!({"type": "object", "properties": {"title": {"type": "string"}, "body": {"type": "string"}}, "required": ["title", "body"]}).into(),
        side_effect: effect,
        destructive: if destructive {
            DestructiveBehavior::Destructive
        } else {
            DestructiveBehavior::NonDestructive
        },
        provenance: why.into(),
        flags: Vec::new(),
        origin: Some(ToolOrigin {
            server: server.into(),
            tool: tool.into(),
            trust,
            annotations: Some(json!({"readOnlyHint": false, "destructiveHint": destructive}).into()),
            title: None,
            output_schema: None,
        }),
        pin: None,
    };
    descriptor.pin = crate::tool::pin::definition(&descriptor).map(|d| crate::tool::pin::hash(&d));
    descriptor
}

/// `notes-trusted`'s read-only `echo`, its annotations trusted.
pub(in crate::tui) fn trusted_echo() -> ToolDescriptor {
    descriptor(
        "notes-trusted",
        "echo",
        SideEffectLevel::ReadOnly,
        false,
        AnnotationTrust::Trust,
        "readOnlyHint=true, trusted",
    )
}

/// `notes-trusted`'s mutating, not destructive `write_note`, its annotations trusted.
pub(in crate::tui) fn trusted_write_note() -> ToolDescriptor {
    descriptor(
        "notes-trusted",
        "write_note",
        SideEffectLevel::Mutating,
        false,
        AnnotationTrust::Trust,
        "readOnlyHint=false, destructiveHint=false, trusted",
    )
}

pub(in crate::tui) fn ignored(server: &str, tool: &str) -> ToolDescriptor {
    descriptor(
        server,
        tool,
        SideEffectLevel::Mutating,
        true,
        AnnotationTrust::Ignore,
        "ignored: server trust is ignore (annotations present but not trusted)",
    )
}

/// Servers ready and failed, tools listed, calls in every state, a clock at t0 + 4 s.
pub(in crate::tui) fn populated() -> (App, Instant) {
    populated_with(&config())
}

/// [`populated`] with another config (one with an agent).
pub(in crate::tui) fn populated_with(config: &Config) -> (App, Instant) {
    let t0 = Instant::now();
    let mut app = App::new(config, Theme::plain(), t0);
    let feed = |app: &mut App, e: McpEvent| app.on_runtime_event(RuntimeEvent::Mcp(e));
    feed(
        &mut app,
        McpEvent::ServerStarted(Box::new(ready("notes", (1, 6, 8), Vec::new()))),
    );
    feed(&mut app, McpEvent::ServerStarted(Box::new(ready("notes-trusted", (1, 5, 7), vec!["1 non-JSON line on stdout (a server must write only JSON-RPC there), first: \"banner\"".into()]))));
    feed(
        &mut app,
        McpEvent::Stderr {
            server: "broken".into(),
            line: "starting broken".into(),
        },
    );
    feed(
        &mut app,
        McpEvent::Stderr {
            server: "broken".into(),
            line: "boom".into(),
        },
    );
    feed(&mut app, McpEvent::ServerStarted(Box::new(failed())));
    app.set_now(t0);
    feed(
        &mut app,
        McpEvent::PhaseStarted {
            server: "slow-start".into(),
            phase: StartPhase::Spawn,
            elapsed: Duration::ZERO,
        },
    );
    feed(
        &mut app,
        McpEvent::PhaseStarted {
            server: "slow-start".into(),
            phase: StartPhase::Handshake,
            elapsed: Duration::from_millis(3),
        },
    );
    app.tools = [
        ignored("notes", "delete_note"),
        ignored("notes", "echo"),
        ignored("notes", "write_note"),
        trusted_echo(),
        trusted_write_note(),
    ]
    .iter()
    .map(ToolRow::from_descriptor)
    .collect();
    let statuses = [
        (CallStatus::Ok, "{\n  \"saved\": \"t\",\n  \"bytes\": 1\n}"),
        (CallStatus::Error, "notes: server error -32602: no note titled \"x\""),
        (CallStatus::Denied, "denied by the operator: mcp__notes__write_note"),
        (CallStatus::Refused, "refused: mcp__notes__write_note is mutating and policy.side_effect_ceiling is read_only"),
        (CallStatus::Cancelled, "cancelled"),
    ];
    for (i, (status, text)) in statuses.iter().enumerate() {
        let id = i as u64 + 1;
        app.on_runtime_event(RuntimeEvent::CallStarted {
            id,
            tool: "mcp__notes__write_note".into(),
            arguments: json!({"title": "t", "body": "b"}),
            origin: Default::default(),
        });
        // The first waited 3.6 s for the operator, then ran for 12 ms.
        let mut elapsed_ms = 12 * id;
        if id == 1 {
            app.on_runtime_event(RuntimeEvent::CallStatus {
                id,
                status: CallStatus::AwaitingApproval,
            });
            app.set_now(t0 + Duration::from_millis(3_600));
            app.on_runtime_event(RuntimeEvent::CallStatus {
                id,
                status: CallStatus::Running,
            });
            elapsed_ms += 3_600;
        }
        app.on_runtime_event(RuntimeEvent::CallFinished {
            id,
            status: *status,
            result: ToolResult::error(*text),
            elapsed_ms,
        });
        app.set_now(t0);
    }
    app.on_runtime_event(RuntimeEvent::CallStarted {
        id: 6,
        tool: "mcp__notes-trusted__slow".into(),
        arguments: json!({"steps": 10}),
        origin: Default::default(),
    });
    app.on_runtime_event(RuntimeEvent::CallStatus {
        id: 6,
        status: CallStatus::Running,
    });
    app.on_runtime_event(RuntimeEvent::CallProgress {
        id: 6,
        progress: 3.0,
        total: Some(10.0),
        message: Some("step 3 of 10".into()),
    });
    app.on_runtime_event(RuntimeEvent::CallStarted {
        id: 7,
        tool: "mcp__notes__delete_note".into(),
        arguments: json!({"title": "t"}),
        origin: Default::default(),
    });
    app.on_runtime_event(RuntimeEvent::CallStatus {
        id: 7,
        status: CallStatus::AwaitingApproval,
    });
    live_events(&mut app, t0);
    app.set_now(t0 + Duration::from_millis(1_500));
    (app, t0)
}

/// What servers push while they run: logs at several levels, a list change and the diff it led
/// to, a declined request, a crash and its restart, a rewake match.
fn live_events(app: &mut App, t0: Instant) {
    use crate::runtime::ExternalEvent;
    use crate::runtime::RequestOutcome;
    use crate::runtime::ToolsDiff;
    use crate::runtime::{ListKind, LogLevel};
    let at = |app: &mut App, ms: u64, e: RuntimeEvent| {
        app.set_now(t0 + Duration::from_millis(ms));
        app.on_runtime_event(e);
    };
    for (ms, level, text) in [
        (100, LogLevel::Info, "saved note \"t\""),
        (200, LogLevel::Warning, "disk almost full"),
        (300, LogLevel::Error, "could not reach the backend"),
        (400, LogLevel::Debug, "cache miss for key 42"),
    ] {
        at(
            app,
            ms,
            RuntimeEvent::ServerLog {
                server: "notes".into(),
                level,
                logger: Some("store".into()),
                data: json!(text),
            },
        );
    }
    at(
        app,
        500,
        RuntimeEvent::ListChanged {
            server: "notes-trusted".into(),
            list: ListKind::Tools,
        },
    );
    let before = trusted_echo();
    let mut after = before.clone();
    after.side_effect = SideEffectLevel::Mutating;
    after.destructive = DestructiveBehavior::Destructive;
    at(
        app,
        600,
        RuntimeEvent::ToolsChanged(ToolsDiff {
            server: "notes-trusted".into(),
            changed: vec![crate::runtime::ToolChange {
                before,
                after,
                changes: vec![crate::runtime::ChangeKind::Traits],
            }],
            revoked: vec!["mcp__notes-trusted__echo".into()],
            ..ToolsDiff::default()
        }),
    );
    at(
        app,
        700,
        RuntimeEvent::Mcp(McpEvent::ServerRequest {
            server: "notes".into(),
            method: "sampling/createMessage".into(),
            outcome: RequestOutcome::Declined,
            detail: "no model configured (no `agent:` in its config)".into(),
        }),
    );
    at(
        app,
        800,
        RuntimeEvent::Rewake(ExternalEvent {
            event: "notes-saved".into(),
            rule: 0,
            server: "notes".into(),
            method: "notifications/message".into(),
            params: json!({}),
        }),
    );
    at(
        app,
        900,
        RuntimeEvent::Mcp(McpEvent::ServerDown {
            server: "slow-start".into(),
            exit: Some(ExitInfo::Code(7)),
            reason: "the server exited (exit code 7)".into(),
            at: std::time::UNIX_EPOCH,
            uptime: Duration::from_secs(2),
            crashes: 2,
            restart: crate::config::RestartPolicy::OnFailure,
        }),
    );
    at(
        app,
        900,
        RuntimeEvent::Mcp(McpEvent::RestartScheduled {
            server: "slow-start".into(),
            attempt: 2,
            delay: Duration::from_millis(1_000),
            crashes: 2,
        }),
    );
}
