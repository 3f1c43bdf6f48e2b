//! Snapshots of the Servers pane at real start-up timings: a 7 ms start beside a 2.6 s one, a
//! server waiting in the queue, one that failed after its 20 s handshake timeout, one that
//! failed at once, one still starting. Each row keeps how long its own start took.

use std::time::{Duration, Instant};

use crate::config::{Config, ServerConfig};
use crate::runtime::{
    ExitInfo, Failure, FailureClass, McpEvent, PhaseTimes, RuntimeEvent, ServerReport,
    ServerStatus, StartPhase, Timeline,
};
use crate::tui::app::App;
use crate::tui::tests::{draw, snapshot};
use crate::tui::theme::Theme;

fn config() -> Config {
    let servers = ["fast", "slow", "hung", "missing", "starting", "waiting"]
        .iter()
        .map(|n| ServerConfig::stdio(*n, "demo", Vec::new()))
        .collect();
    let mut config = Config::from_servers(servers, Default::default());
    config.mcp.max_concurrent_starts = Some(4);
    config
}

fn ready(
    name: &str,
    queued: Option<u64>,
    phases: (u64, u64, u64),
    started_at: u64,
) -> ServerReport {
    let config = ServerConfig::stdio(name, "demo", Vec::new());
    ServerReport {
        status: ServerStatus::Ready,
        phases: PhaseTimes {
            queued_ms: queued,
            spawn_ms: Some(phases.0),
            connect_ms: None,
            handshake_ms: Some(phases.1),
            list_tools_ms: Some(phases.2),
        },
        tools: 5,
        timeline: Timeline {
            started_at_ms: Some(started_at),
            ready_at_ms: Some(started_at + phases.2),
            failed_at_ms: None,
        },
        ..ServerReport::starting(&config)
    }
}

fn failed(
    name: &str,
    class: FailureClass,
    phase: StartPhase,
    spawn: u64,
    took: u64,
) -> ServerReport {
    let config = ServerConfig::stdio(name, "demo", Vec::new());
    let mut report = ServerReport::failed(
        &config,
        PhaseTimes {
            spawn_ms: Some(spawn),
            ..PhaseTimes::default()
        },
        Failure {
            class,
            phase: Some(phase),
            message: String::new(),
            exit_status: None::<ExitInfo>,
            stderr_tail: Vec::new(),
            http_status: None,
        },
    );
    report.timeline = Timeline {
        started_at_ms: Some(0),
        ready_at_ms: None,
        failed_at_ms: Some(took),
    };
    report
}

/// The app 20.5 s into start-up.
fn at_real_timings() -> App {
    let t0 = Instant::now();
    let mut app = App::new(&config(), Theme::plain(), t0);
    let feed = |app: &mut App, e: McpEvent| {
        app.on_runtime_event(RuntimeEvent::Mcp(e));
    };
    feed(
        &mut app,
        McpEvent::ServerStarted(Box::new(ready("fast", None, (1, 5, 7), 0))),
    );
    feed(
        &mut app,
        McpEvent::ServerStarted(Box::new(ready("slow", Some(7), (2, 2_590, 2_600), 7))),
    );
    feed(
        &mut app,
        McpEvent::ServerStarted(Box::new(failed(
            "hung",
            FailureClass::HandshakeTimeout,
            StartPhase::Handshake,
            2,
            20_002,
        ))),
    );
    feed(
        &mut app,
        McpEvent::ServerStarted(Box::new(failed(
            "missing",
            FailureClass::CommandNotFound,
            StartPhase::Spawn,
            3,
            3,
        ))),
    );
    // Still in its handshake, 12 s in.
    app.set_now(t0 + Duration::from_millis(8_500));
    feed(
        &mut app,
        McpEvent::PhaseStarted {
            server: "starting".into(),
            phase: StartPhase::Spawn,
            elapsed: Duration::ZERO,
        },
    );
    feed(
        &mut app,
        McpEvent::PhaseStarted {
            server: "starting".into(),
            phase: StartPhase::Handshake,
            elapsed: Duration::ZERO,
        },
    );
    // In the queue for 5 s.
    app.set_now(t0 + Duration::from_millis(15_500));
    feed(
        &mut app,
        McpEvent::PhaseStarted {
            server: "waiting".into(),
            phase: StartPhase::Queued,
            elapsed: Duration::ZERO,
        },
    );
    app.set_now(t0 + Duration::from_millis(20_500));
    app
}

#[test]
fn servers_at_real_timings() {
    let app = at_real_timings();
    snapshot("servers_real_timings", &app);
    let screen = draw(&app, (140, 40));
    let line = |name: &str| {
        // A Servers row: the mark, then the name.
        screen
            .lines()
            .find(|l| {
                l.trim_start_matches(['"', '│'])
                    .split_whitespace()
                    .nth(1)
                    .is_some_and(|n| n == name)
            })
            .unwrap_or_default()
            .to_string()
    };
    // A 7 ms start and a 2.6 s one no longer draw alike.
    let bar = |l: &str| {
        l.chars()
            .skip_while(|c| *c != '▕')
            .take(18)
            .collect::<String>()
    };
    assert_ne!(bar(&line("fast")), bar(&line("slow")), "{screen}");
    // Each finished row keeps its own start's duration, frozen.
    assert!(line("hung").contains("20.0s"), "{screen}");
    assert!(line("missing").contains("3ms"), "{screen}");
    assert!(line("fast").contains("7ms"), "{screen}");
    assert!(line("slow").contains("2.6s"), "{screen}");
    // The live ones count: the one starting since 8.5 s, the queued one since 15.5 s.
    assert!(line("starting").contains("12.0s"), "{screen}");
    assert!(line("waiting").contains("queued"), "{screen}");
    assert!(line("waiting").contains("5.0s"), "{screen}");
}

/// A `start: lazy` server with a kept tool list: its row says it is idle and lazy (no start
/// time), and Details says its first call starts it.
#[test]
fn an_idle_lazy_server_says_so() {
    let mut lazy = ServerConfig::stdio("lazy", "demo", Vec::new());
    lazy.start = crate::config::StartMode::Lazy;
    let config = Config::from_servers(vec![lazy.clone()], Default::default());
    let mut app = App::new(&config, Theme::plain(), Instant::now());
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ServerStarted(Box::new(
        ServerReport::idle(&lazy, 5),
    ))));
    let screen = draw(&app, (140, 40));
    let row = screen
        .lines()
        .find(|l| l.contains("○ lazy"))
        .unwrap_or_default();
    assert!(row.contains("idle (lazy)"), "{screen}");
    assert!(screen.contains("Servers 0/1 ready · 1 idle"), "{screen}");
    app.focus = crate::tui::pane_state::Pane::Details;
    let screen = draw(&app, (140, 40));
    assert!(
        screen.contains("idle: start: lazy, so it starts on its first call;"),
        "{screen}"
    );
}
