//! The supervisor over real processes and sockets: a crash mid-call ends that call `error` with
//! the exit status and the server comes back (a new pid, working tools); the backoff grows and
//! after 5 quick crashes it gives up and says so; `restart: never` stays down (a mutating call
//! to it ends at once, not put to the operator); an HTTP server
//! that goes away and comes back on the same port is reconnected to; closing during a backoff
//! or a restart leaves no process.

mod common;

use std::sync::Arc;
use std::time::Duration;

use aimon_console::config::{
    AnnotationTrust, Config, PolicyConfig, RestartPolicy, ServerConfig, TransportKind,
};
use aimon_console::runtime::{
    AgentRuntime, AgentRuntimeFactory, CallStatus, EventStream, RuntimeEvent, RuntimeOptions,
};
use aimon_console::runtime::{ExitInfo, McpEvent, ServerStatus};
use common::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Long enough for any wait in these tests on a loaded machine; never reached when they pass.
const PATIENCE: Duration = Duration::from_secs(60);

fn demo(name: &str, flags: &[&str], marker: &str) -> ServerConfig {
    let mut server = demo_config(name, flags, AnnotationTrust::Trust, marker);
    server.request_timeout = Duration::from_secs(10);
    server
}

async fn runtime(servers: Vec<ServerConfig>) -> (Arc<AgentRuntime>, EventStream) {
    let config: Config = config_of(servers, PolicyConfig::default());
    let (events, stream) = AgentRuntimeFactory::events();
    let runtime = AgentRuntimeFactory::create(&config, RuntimeOptions::default(), events)
        .await
        .expect("runtime");
    runtime.wait_started().await;
    (Arc::new(runtime), stream)
}

/// Reads events until one makes `pick` return something; panics after `PATIENCE`.
async fn wait_for<T>(
    stream: &mut EventStream,
    what: &str,
    mut pick: impl FnMut(&RuntimeEvent) -> Option<T>,
) -> T {
    let found = tokio::time::timeout(PATIENCE, async {
        while let Some(event) = stream.recv().await {
            if let Some(found) = pick(&event) {
                return Some(found);
            }
        }
        None
    })
    .await;
    match found {
        Ok(Some(found)) => found,
        Ok(None) => panic!("the event stream ended before {what}"),
        Err(_) => panic!("no {what} within {PATIENCE:?}"),
    }
}

fn ready_report(event: &RuntimeEvent, server: &str) -> bool {
    matches!(event, RuntimeEvent::Mcp(McpEvent::ServerStarted(r))
        if r.name == server && r.status == ServerStatus::Ready)
}

async fn echo(runtime: &AgentRuntime, tool: &str) -> aimon_console::runtime::CallOutcome {
    runtime
        .call(tool, json!({"text": "hi"}), CancellationToken::new())
        .await
}

fn kill(pid: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

#[tokio::test]
async fn a_crash_mid_call_ends_the_call_and_the_server_comes_back() {
    let m = marker("sup-crash");
    let (runtime, mut stream) = runtime(vec![demo("s", &[], &m)]).await;
    let first = runtime.server_pid("s").expect("a pid");

    let rt = runtime.clone();
    let call = tokio::spawn(async move {
        rt.call(
            "mcp__s__slow",
            json!({"steps": 200, "step_ms": 50}),
            CancellationToken::new(),
        )
        .await
    });
    // The call is in flight once its first progress notification arrives.
    wait_for(&mut stream, "progress of the slow call", |e| {
        matches!(e, RuntimeEvent::CallProgress { .. }).then_some(())
    })
    .await;
    kill(first);

    let outcome = call.await.expect("call task");
    assert_eq!(outcome.status, CallStatus::Error, "{outcome:?}");
    assert!(
        outcome.result.text.contains("killed by signal 9 (SIGKILL)"),
        "{}",
        outcome.result.text
    );

    let (exit, crashes, restart) = wait_for(&mut stream, "ServerDown", |e| match e {
        RuntimeEvent::Mcp(McpEvent::ServerDown {
            server,
            exit,
            crashes,
            restart,
            ..
        }) if server == "s" => Some((*exit, *crashes, *restart)),
        _ => None,
    })
    .await;
    assert_eq!(exit, Some(ExitInfo::Signal(libc::SIGKILL)));
    assert_eq!((crashes, restart), (1, RestartPolicy::OnFailure));
    let (attempt, delay) = wait_for(&mut stream, "RestartScheduled", |e| match e {
        RuntimeEvent::Mcp(McpEvent::RestartScheduled { attempt, delay, .. }) => {
            Some((*attempt, *delay))
        }
        _ => None,
    })
    .await;
    assert_eq!((attempt, delay), (1, Duration::from_millis(250)));
    wait_for(&mut stream, "the restarted server ready", |e| {
        ready_report(e, "s").then_some(())
    })
    .await;

    let second = runtime.server_pid("s").expect("a pid after the restart");
    assert_ne!(first, second, "a new process");
    assert_eq!(processes_with(&m), vec![second]);
    let again = echo(&runtime, "mcp__s__echo").await;
    assert_eq!(again.status, CallStatus::Ok, "{again:?}");
    assert_eq!(runtime.crashes("s").total, 1);
    let tail = runtime.stderr_tail("s", 5);
    assert!(
        tail.iter()
            .any(|l| l.contains("restarted by the supervisor (attempt 1)")),
        "{tail:?}"
    );

    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[tokio::test]
async fn five_quick_crashes_in_a_row_give_up_after_a_growing_backoff() {
    let m = marker("sup-giveup");
    let flags = ["--exit-after-ms", "1500", "--exit-code", "7"];
    let server = demo("crashy", &flags, &m);
    let (runtime, mut stream) = runtime(vec![server.clone()]).await;

    // The first incarnation dies under a call: the call says how.
    let outcome = runtime
        .call(
            "mcp__crashy__slow",
            json!({"steps": 200, "step_ms": 50}),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.status, CallStatus::Error, "{outcome:?}");
    assert!(
        outcome.result.text.contains("exit code 7"),
        "{}",
        outcome.result.text
    );

    let mut scheduled = Vec::new();
    let mut downs = Vec::new();
    let crashes = wait_for(&mut stream, "GaveUp", |e| match e {
        RuntimeEvent::Mcp(McpEvent::RestartScheduled {
            attempt,
            delay,
            crashes,
            ..
        }) => {
            scheduled.push((*attempt, delay.as_millis(), *crashes));
            None
        }
        RuntimeEvent::Mcp(McpEvent::ServerDown { exit, crashes, .. }) => {
            downs.push((*exit, *crashes));
            None
        }
        RuntimeEvent::Mcp(McpEvent::GaveUp { server, crashes }) if server == "crashy" => {
            Some(*crashes)
        }
        _ => None,
    })
    .await;
    assert_eq!(crashes, 5);
    let delays: Vec<(u32, u128)> = scheduled.iter().map(|(a, d, _)| (*a, *d)).collect();
    assert_eq!(delays, [(1, 250), (2, 500), (3, 1_000), (4, 2_000)]);
    // Every incarnation that became ready died the same way, each crash counted.
    assert!(!downs.is_empty(), "{downs:?}");
    assert!(
        downs
            .iter()
            .all(|(exit, _)| *exit == Some(ExitInfo::Code(7))),
        "{downs:?}"
    );
    let counts: Vec<u32> = downs.iter().map(|(_, c)| *c).collect();
    assert!(counts.windows(2).all(|w| w[0] < w[1]), "{counts:?}");
    let state = runtime.crashes("crashy");
    assert!(state.gave_up && state.in_a_row == 5, "{state:?}");

    // It stays down: no process, and its tools answer `disconnected`.
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let down = echo(&runtime, "mcp__crashy__echo").await;
    assert_eq!(down.status, CallStatus::Error);
    assert!(down.result.text.contains("disconnected"), "{down:?}");

    // A restart by hand brings it back and resets the count.
    let report = runtime.restart_server(&server).await;
    assert_eq!(report.status, ServerStatus::Ready, "{report:?}");
    assert_eq!(runtime.crashes("crashy").total, 0);
    assert_eq!(
        echo(&runtime, "mcp__crashy__echo").await.status,
        CallStatus::Ok
    );
    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[tokio::test]
async fn restart_never_stays_down() {
    let m = marker("sup-never");
    let mut server = demo("still", &[], &m);
    server.restart = RestartPolicy::Never;
    let (runtime, mut stream) = runtime(vec![server]).await;
    kill(runtime.server_pid("still").expect("a pid"));
    let restart = wait_for(&mut stream, "ServerDown", |e| match e {
        RuntimeEvent::Mcp(McpEvent::ServerDown { restart, .. }) => Some(*restart),
        _ => None,
    })
    .await;
    assert_eq!(restart, RestartPolicy::Never);
    // Past the first backoff step: nothing was scheduled or started.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let out = echo(&runtime, "mcp__still__echo").await;
    assert!(out.result.text.contains("disconnected"), "{out:?}");
    // A mutating call to it is not put to the operator: it ends at once (no approval).
    let note = tokio::time::timeout(
        Duration::from_secs(10),
        runtime.call(
            "mcp__still__write_note",
            json!({"title": "t", "body": "b"}),
            CancellationToken::new(),
        ),
    )
    .await
    .expect("ended without waiting for an approval");
    assert_eq!(note.status, CallStatus::Error, "{note:?}");
    assert!(note.result.text.contains("disconnected"), "{note:?}");
    assert!(note.approval.is_none(), "{note:?}");
    assert!(processes_with(&m).is_empty());
    runtime.close().await;
    while let Some(event) = stream.recv().await {
        assert!(
            !matches!(
                event,
                RuntimeEvent::Mcp(McpEvent::RestartScheduled { .. } | McpEvent::ServerStarted(_))
            ),
            "restarted under restart: never: {event:?}"
        );
    }
}

#[tokio::test]
async fn close_during_a_backoff_leaves_no_process() {
    let m = marker("sup-close-backoff");
    let (runtime, mut stream) = runtime(vec![demo("flaky", &["--exit-after-ms", "300"], &m)]).await;
    // The third attempt waits a second: close in the middle of it.
    wait_for(&mut stream, "a 1 s backoff", |e| {
        matches!(e, RuntimeEvent::Mcp(McpEvent::RestartScheduled { delay, .. })
            if *delay >= Duration::from_secs(1))
        .then_some(())
    })
    .await;
    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(1)).is_empty());
    while let Some(event) = stream.recv().await {
        assert!(
            !matches!(event, RuntimeEvent::Mcp(McpEvent::ServerStarted(_))),
            "started after the close began: {event:?}"
        );
    }
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(processes_with(&m).is_empty(), "a restart outlived close");
}

#[tokio::test]
async fn close_during_a_restart_in_flight_leaves_no_process() {
    let m = marker("sup-close-start");
    // Each incarnation takes 1.5 s to answer the handshake: the restart is still starting when
    // the close comes.
    let flags = ["--init-delay-ms", "1500", "--exit-after-ms", "2500"];
    let (runtime, mut stream) = runtime(vec![demo("slowpoke", &flags, &m)]).await;
    wait_for(&mut stream, "a restart", |e| {
        matches!(e, RuntimeEvent::Mcp(McpEvent::RestartScheduled { .. })).then_some(())
    })
    .await;
    wait_for(&mut stream, "the restart's handshake", |e| {
        matches!(e, RuntimeEvent::Mcp(McpEvent::PhaseStarted { phase, .. })
            if phase.as_str() == "handshake")
        .then_some(())
    })
    .await;
    assert!(!processes_with(&m).is_empty(), "the restart spawned");
    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(1)).is_empty());
}

#[tokio::test]
async fn an_http_server_that_comes_back_on_its_port_is_reconnected() {
    let m = marker("sup-http");
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let (first, _) = demo_http_at(&addr, &[], Some(&m));
    let mut server = ServerConfig::stdio("web", "unused", Vec::new());
    server.transport = TransportKind::StreamableHttp;
    server.command = None;
    server.url = Some(format!("http://127.0.0.1:{port}/mcp"));
    server.request_timeout = Duration::from_secs(5);
    server.annotation_trust = AnnotationTrust::Trust;
    let (runtime, mut stream) = runtime(vec![server]).await;
    assert_eq!(
        echo(&runtime, "mcp__web__echo").await.status,
        CallStatus::Ok
    );

    drop(first);
    // Streamable HTTP holds no connection open: the next request finds the server gone.
    let out = echo(&runtime, "mcp__web__echo").await;
    assert_eq!(out.status, CallStatus::Error, "{out:?}");
    let (exit, reason) = wait_for(&mut stream, "ServerDown", |e| match e {
        RuntimeEvent::Mcp(McpEvent::ServerDown { exit, reason, .. }) => {
            Some((*exit, reason.clone()))
        }
        _ => None,
    })
    .await;
    assert_eq!(exit, None);
    assert!(
        reason.contains("connection to the server was lost"),
        "{reason}"
    );
    // While nothing listens, attempts fail to connect: the backoff grows, nothing gives up.
    let mut delays = Vec::new();
    while delays.len() < 3 {
        let (delay, crashes) = wait_for(&mut stream, "RestartScheduled", |e| match e {
            RuntimeEvent::Mcp(McpEvent::RestartScheduled { delay, crashes, .. }) => {
                Some((delay.as_millis(), *crashes))
            }
            _ => None,
        })
        .await;
        assert_eq!(crashes, 1, "an unreachable server is not a crash");
        delays.push(delay);
    }
    assert_eq!(delays, [250, 500, 1_000]);

    let _second = demo_http_at(&addr, &[], Some(&m));
    wait_for(&mut stream, "the reconnected server ready", |e| {
        ready_report(e, "web").then_some(())
    })
    .await;
    let back = echo(&runtime, "mcp__web__echo").await;
    assert_eq!(back.status, CallStatus::Ok, "{back:?}");
    runtime.close().await;
}
