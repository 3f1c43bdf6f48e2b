//! Start-up: N servers at once against the slowest of them (the limit is 1.0), one server alone,
//! the first tool of a fast server callable while a hung server is in the same config (against
//! the fast server's own start), and the console's own start to its first report with no
//! servers at all.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use aimon_console::config::{Config, PolicyConfig};
use aimon_console::mcp::events::null_sink;
use aimon_console::mcp::manager::McpClientManager;
use aimon_console::mcp::notify::NotificationTap;
use aimon_console::runtime::{AgentRuntimeFactory, RuntimeOptions, ServerStatus};

use crate::report::Row;
use crate::stack::server_config;
use crate::ServerCmd;

/// What one `start_all` of N servers took.
struct StartRun {
    /// Until every server was ready.
    all_ready: Duration,
    /// The slowest server's own start (spawn to tools listed, by its own clock).
    slowest_own: Duration,
}

async fn start_once(n: usize, demo: &ServerCmd) -> StartRun {
    let servers: Vec<_> = (0..n)
        .map(|i| server_config(&format!("s{i}"), demo))
        .collect();
    let manager = McpClientManager::new(null_sink(), NotificationTap::none());
    let summary = manager.start_all(&servers, None).await;
    let mut slowest = 0;
    for report in &summary.servers {
        assert!(report.failure.is_none(), "server did not start: {report:?}");
        slowest = slowest.max(report.phases.list_tools_ms.unwrap_or(0));
    }
    manager.close_all().await;
    StartRun {
        all_ready: summary.elapsed,
        slowest_own: Duration::from_millis(slowest),
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `reps` start-ups for each N; rows: all-ready time against the slowest server's own start,
/// and against one server started alone.
pub async fn servers(counts: &[usize], reps: usize, init_delay_ms: u64, binary: &str) -> Vec<Row> {
    let demo = ServerCmd {
        command: binary.to_string(),
        args: vec![
            "demo-server".into(),
            "--init-delay-ms".into(),
            init_delay_ms.to_string(),
        ],
    };
    let mut alone: Option<Duration> = None;
    let mut rows = Vec::new();
    for &n in counts {
        let mut all = Vec::new();
        let mut slowest = Vec::new();
        let mut ratios = Vec::new();
        for _ in 0..reps {
            let run = start_once(n, &demo).await;
            ratios.push(run.all_ready.as_secs_f64() / run.slowest_own.as_secs_f64().max(1e-9));
            all.push(run.all_ready);
            slowest.push(run.slowest_own);
        }
        ratios.sort_by(f64::total_cmp);
        let all_ready = median(all);
        let slowest_own = median(slowest);
        let alone = *alone.get_or_insert(all_ready);
        let case = format!("N={n}");
        let mut own = Row::new("startup", &case, "all ready ms", ms(all_ready))
            .against("slowest server's own start", ms(slowest_own));
        own.ratio = ratios.get(ratios.len() / 2).copied();
        rows.push(if n == 64 { own.at_most(1.3) } else { own });
        rows.push(
            Row::new("startup", &case, "all ready ms", ms(all_ready))
                .against("one server alone", ms(alone)),
        );
    }
    rows
}

/// A fast demo server (its handshake answered after 100 ms, as a quick real server's) and one
/// that never answers its handshake (`request_timeout` 20 s), through the runtime as the
/// console builds it: from `create` until the fast server's tools are callable, against that
/// server's own start (spawn to tools listed by its own clock, whole ms), median ratio of
/// `reps` runs. Before servers joined when ready this waited for the hung one (~30×).
pub async fn first_tool_with_a_hung_server(reps: usize, binary: &str) -> Row {
    let fast = server_config(
        "fast",
        &ServerCmd {
            command: binary.to_string(),
            args: vec!["demo-server".into(), "--init-delay-ms".into(), "100".into()],
        },
    );
    let mut hung = server_config(
        "hung",
        &ServerCmd {
            command: binary.to_string(),
            args: vec!["demo-server".into(), "--hang-init".into()],
        },
    );
    hung.request_timeout = Duration::from_secs(20);
    let config = Config::from_servers(vec![fast, hung], PolicyConfig::default());
    let mut ours = Vec::with_capacity(reps);
    let mut own = Vec::with_capacity(reps);
    let mut ratios = Vec::with_capacity(reps);
    for _ in 0..reps {
        let (events, mut stream) = AgentRuntimeFactory::events();
        let drain = tokio::spawn(async move { while stream.recv().await.is_some() {} });
        let started = Instant::now();
        let runtime =
            match AgentRuntimeFactory::create(&config, RuntimeOptions::default(), events).await {
                Ok(r) => r,
                Err(e) => panic!("runtime: {e}"),
            };
        let report = match runtime.wait_for_server("fast").await {
            Some(r) if r.status == ServerStatus::Ready => r,
            other => panic!("the fast server did not start: {other:?}"),
        };
        let callable = started.elapsed();
        assert!(
            runtime.tools().iter().any(|t| t.name == "mcp__fast__echo"),
            "ready but not registered"
        );
        let hung = runtime.reports().into_iter().find(|r| r.name == "hung");
        assert_eq!(hung.map(|r| r.status), Some(ServerStatus::Starting));
        let fast_own = report.start_took().unwrap_or_default();
        runtime.close().await;
        let _ = drain.await;
        ratios.push(callable.as_secs_f64() / fast_own.as_secs_f64().max(1e-9));
        ours.push(callable);
        own.push(fast_own);
    }
    ratios.sort_by(f64::total_cmp);
    let mut row = Row::new(
        "startup",
        "fast + 1 hung server",
        "first tool callable ms",
        ms(median(ours)),
    )
    .against("the fast server's own start", ms(median(own)))
    .at_most(1.1);
    row.ratio = ratios.get(ratios.len() / 2).copied();
    row
}

/// The console's own start: `check --json` with no servers, from spawn to the first byte of its
/// report, median of `reps`.
pub fn console_zero_servers(binary: &str, config: &std::path::Path, reps: usize) -> Row {
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let started = Instant::now();
        let child = Command::new(binary)
            .arg("--config")
            .arg(config)
            .args(["--log-file", "/dev/null", "check", "--json"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => panic!("cannot start {binary}: {e}"),
        };
        let mut first = [0u8; 1];
        if let Some(stdout) = child.stdout.as_mut() {
            let _ = stdout.read(&mut first);
        }
        times.push(started.elapsed());
        let _ = child.wait();
    }
    Row::new(
        "startup",
        "console, 0 servers",
        "first report ms",
        ms(median(times)),
    )
}
