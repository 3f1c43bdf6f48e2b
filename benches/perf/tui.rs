//! The console's own costs: one frame drawn with a big state held (64 servers, 5,000 tools,
//! 10,000 calls, 100,000 stderr and log lines), against the same frame with nothing held; and the CPU an
//! idle console uses over 10 s (the real binary in tmux), against a 1 % budget.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aimon_console::config::{Config, PolicyConfig, ServerConfig, StartMode};
use aimon_console::runtime::{
    AgentRuntimeFactory, CallStatus, LogLevel, McpEvent, PhaseTimes, RuntimeEvent, RuntimeOptions,
    ServerInfo, ServerReport, ServerStatus, Timeline,
};
use aimon_console::tool::{
    DestructiveBehavior, SideEffectLevel, Tool, ToolContext, ToolDescriptor, ToolInput, ToolResult,
};
use aimon_console::tui::app::App;
use aimon_console::tui::messages::AppEvent;
use aimon_console::tui::theme::Theme;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::json;

use crate::report::Row;

/// A tool that is only a descriptor: the frame bench needs many, never calls them.
struct Listed(ToolDescriptor);

#[async_trait::async_trait]
impl Tool for Listed {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.0
    }
    async fn execute(&self, _input: ToolInput, _ctx: ToolContext) -> ToolResult {
        ToolResult::error("not callable")
    }
}

fn report(name: &str) -> ServerReport {
    ServerReport {
        name: name.into(),
        transport: aimon_console::config::TransportKind::Stdio,
        status: ServerStatus::Ready,
        start: StartMode::Eager,
        protocol_version: Some("2026-07-28".into()),
        server_info: Some(ServerInfo {
            name: "bench".into(),
            version: "1".into(),
        }),
        phases: PhaseTimes {
            queued_ms: None,
            connect_ms: None,
            spawn_ms: Some(1),
            handshake_ms: Some(5),
            list_tools_ms: Some(7),
        },
        tools: 78,
        warnings: Vec::new(),
        failure: None,
        capabilities: None,
        instructions: None,
        sandbox: None,
        timeline: Timeline {
            started_at_ms: Some(0),
            ready_at_ms: Some(7),
            failed_at_ms: None,
        },
    }
}

/// An app holding `servers` servers, `tools` tools, `calls` calls and `lines` stderr lines.
async fn app(servers: usize, tools: usize, calls: u64, lines: usize) -> App {
    let configs: Vec<ServerConfig> = (0..servers)
        .map(|i| ServerConfig::stdio(format!("server-{i}"), "x", Vec::new()))
        .collect();
    let config = Config::from_servers(configs, PolicyConfig::default());
    let now = Instant::now();
    let mut app = App::new(&config, Theme::from_env(), now);
    for i in 0..servers {
        let name = format!("server-{i}");
        app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ServerStarted(Box::new(
            report(&name),
        ))));
    }
    // Half the lines are stderr (Details), half log messages (Events).
    for i in 0..lines {
        let server = format!("server-{}", i % servers.max(1));
        if i % 2 == 0 {
            app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::Stderr {
                server,
                line: format!("line {i}: something the server wrote on stderr"),
            }));
        } else {
            app.on_runtime_event(RuntimeEvent::ServerLog {
                server,
                level: LogLevel::Info,
                logger: None,
                data: json!(format!("message {i}: something the server logged")),
            });
        }
    }
    let extra: Vec<Arc<dyn Tool>> = (0..tools)
        .map(|i| {
            Arc::new(Listed(ToolDescriptor {
                pin: None,
                name: format!("mcp__server-{}__tool_{i}", i % servers.max(1)),
                description: "A tool that does one thing, described in a sentence.".into(),
                input_schema: json!({"type": "object"}).into(),
                side_effect: SideEffectLevel::Mutating,
                destructive: DestructiveBehavior::Destructive,
                provenance: "ignored: server trust is ignore".into(),
                flags: Vec::new(),
                origin: None,
            })) as Arc<dyn Tool>
        })
        .collect();
    let (events, _stream) = AgentRuntimeFactory::events();
    let options = RuntimeOptions {
        local_tools: false,
        extra_tools: extra,
        ..RuntimeOptions::default()
    };
    let empty = Config::from_servers(Vec::new(), PolicyConfig::default());
    match AgentRuntimeFactory::create(&empty, options, events).await {
        Ok(rt) => {
            app.on_app_event(AppEvent::RuntimeReady(0, Ok(Arc::new(rt))));
        }
        Err(e) => panic!("runtime for the frame bench: {e}"),
    }
    for id in 1..=calls {
        app.on_runtime_event(RuntimeEvent::CallStarted {
            id,
            tool: format!("mcp__server-0__tool_{id}"),
            arguments: json!({"text": "hello"}),
            origin: Default::default(),
        });
        app.on_runtime_event(RuntimeEvent::CallFinished {
            id,
            status: CallStatus::Ok,
            result: ToolResult::ok("done"),
            elapsed_ms: 3,
        });
    }
    app.set_now(now + Duration::from_secs(5));
    app
}

/// Median time to draw one 140×40 frame of `app`, over `frames` frames.
fn frame_ms(app: &App, frames: usize) -> f64 {
    let mut terminal = match Terminal::new(TestBackend::new(140, 40)) {
        Ok(t) => t,
        Err(e) => panic!("test backend: {e}"),
    };
    let mut times = Vec::with_capacity(frames);
    for _ in 0..frames {
        let t = Instant::now();
        if let Err(e) = terminal.draw(|f| app.render(f)) {
            panic!("draw: {e}");
        }
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1000.0
}

/// The frame rows: loaded against empty, and against the 16.7 ms budget of 60 frames a second.
pub async fn frame_rows(frames: usize) -> Vec<Row> {
    let loaded = app(64, 5_000, 10_000, 100_000).await;
    let empty = app(0, 0, 0, 0).await;
    let loaded_ms = frame_ms(&loaded, frames);
    let empty_ms = frame_ms(&empty, frames);
    vec![
        Row::new(
            "tui",
            "frame, 64 servers / 5,000 tools / 10,000 calls / 100,000 lines",
            "ms",
            loaded_ms,
        )
        .against("the same frame, nothing held", empty_ms),
        Row::new("tui", "frame, same state", "ms", loaded_ms)
            .against("1 ms target", 1.0)
            .at_most(1.0),
    ]
}

/// CPU of the real console, idle for 10 s in a tmux pane, as a share of one core.
/// The console's share of one core, in percent, over 10 s in a 140×40 tmux window on
/// `config` (after 3 s to start).
fn console_cpu(binary: &str, config: &std::path::Path) -> f64 {
    let command = format!(
        "{binary} --config {} --log-file /dev/null",
        config.display()
    );
    pane_cpu(&command, |_| {}).0
}

/// `command` in a 140×40 tmux window: its share of one core, in percent, over 10 s (after
/// 3 s to start), then `then` run while it still runs (its result returned beside).
pub fn pane_cpu<T>(command: &str, then: impl FnOnce(&str) -> T) -> (f64, T) {
    // A tmux server of its own each time (the last one may still be going away).
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let socket = format!("aimon-bench-{}-{run}", std::process::id());
    let tmux = |args: &[&str]| {
        std::process::Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null"])
            .args(args)
            .output()
    };
    match tmux(&[
        "new-session",
        "-d",
        "-s",
        "b",
        "-x",
        "140",
        "-y",
        "40",
        command,
    ]) {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!("tmux: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => panic!("tmux is needed for the idle-CPU case: {e}"),
    }
    std::thread::sleep(Duration::from_secs(3));
    let pid = tmux(&["display-message", "-p", "-t", "b", "#{pane_pid}"])
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let ticks = || crate::report::ticks(&pid);
    let window = Duration::from_secs(10);
    let before = ticks();
    std::thread::sleep(window);
    let used = ticks() - before;
    let after = then(&pid);
    let _ = tmux(&["send-keys", "-t", "b", "q"]);
    std::thread::sleep(Duration::from_secs(1));
    let _ = tmux(&["kill-server"]);
    // Ticks are 1/100 s: the share of one core over the window, in percent.
    (used as f64 / (window.as_secs_f64() * 100.0) * 100.0, after)
}

/// The console idle on `config` (the 1 % budget), and under a stderr flood: one server of
/// `flood` writes stderr lines as fast as its pipe takes them, beside the idle figure of the
/// same run.
pub fn idle_cpu_rows(binary: &str, config: &std::path::Path, flood: &std::path::Path) -> Vec<Row> {
    let idle = console_cpu(binary, config);
    let flooded = console_cpu(binary, flood);
    vec![
        Row::new("tui", "idle console, 10 s", "% of a core", idle)
            .against("1 % budget", 1.0)
            .at_most(1.0),
        Row::new(
            "tui",
            "console beside a server flooding stderr, 10 s",
            "% of a core",
            flooded,
        )
        .against("the idle console, same run", idle),
    ]
}
