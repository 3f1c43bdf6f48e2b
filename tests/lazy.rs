//! `start: lazy` end to end, against real demo servers that say how long their tool list stays
//! fresh (`--tools-ttl`, MCP 2026-07-28 `ttlMs`): with no kept list the server starts at
//! start-up and its list is kept; with one, its tools are listed while no process of it runs
//! (checked by pid), and the first call starts it and succeeds; a `tools/list_changed` drops the
//! kept list at once and the next listing keeps the new one. Headless, `check --json` says
//! which servers are lazy and whether they run, and `tools` lists a kept list without a start;
//! in the console (tmux) the row says `idle (lazy)` until a call from the Tools pane starts it.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use aimon_console::config::{
    AnnotationTrust, ApprovalPolicy, Config, PolicyConfig, ServerConfig, StartMode,
};
use aimon_console::runtime::{
    AgentRuntime, AgentRuntimeFactory, CallStatus, RuntimeOptions, ServerStatus,
};
use common::*;

/// Fresh for ten minutes: longer than the test.
const TTL: &str = "600000";

fn lazy_server(name: &str, flags: &[&str], marker: &str) -> ServerConfig {
    let flags: Vec<&str> = ["--tools-ttl", TTL].iter().chain(flags).copied().collect();
    let mut server = demo_config(name, &flags, AnnotationTrust::Trust, marker);
    server.start = StartMode::Lazy;
    server
}

async fn runtime(config: &Config) -> AgentRuntime {
    let (events, mut stream) = AgentRuntimeFactory::events();
    tokio::spawn(async move { while stream.recv().await.is_some() {} });
    AgentRuntimeFactory::create(
        config,
        RuntimeOptions {
            local_tools: false,
            ..RuntimeOptions::default()
        },
        events,
    )
    .await
    .expect("runtime")
}

/// The kept list files under `state` of the server `name`.
fn kept_lists(state: &Path, name: &str) -> Vec<PathBuf> {
    std::fs::read_dir(state.join("aimon-console/tools"))
        .map(|dir| dir.flatten().map(|e| e.path()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|file| {
            std::fs::read(file)
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                .is_some_and(|kept| kept["server"] == name)
        })
        .collect()
}

fn kept_names(file: &Path) -> Vec<String> {
    let kept: Value =
        serde_json::from_slice(&std::fs::read(file).expect("kept list")).expect("JSON");
    kept["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn a_lazy_server_is_listed_from_its_kept_list_and_started_by_its_first_call() {
    let state = process_state_home("lazy");
    let marker = marker("lazy");
    let config = config_of(
        vec![lazy_server("notes", &["--live-tools"], &marker)],
        PolicyConfig {
            approval: ApprovalPolicy::Never,
            ..PolicyConfig::default()
        },
    );

    // 1. No kept list yet: it starts with the others, and its listing is kept.
    let first = runtime(&config).await;
    let report = first.wait_started().await.servers[0].clone();
    assert_eq!(report.status, ServerStatus::Ready, "{report:#?}");
    assert!(!processes_with(&marker).is_empty());
    let listed = first.server_tool_names("notes");
    first.close().await;
    assert!(wait_gone(&marker, Duration::from_secs(10)).is_empty());
    let files = kept_lists(state, "notes");
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(kept_names(&files[0]), listed);
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&files[0])
            .expect("kept list")
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);

    // 2. With it: idle, its tools offered, no process of it running.
    let second = runtime(&config).await;
    let report = second.wait_started().await.servers[0].clone();
    assert_eq!(report.status, ServerStatus::Idle, "{report:#?}");
    assert_eq!(report.start, StartMode::Lazy);
    assert_eq!(report.tools, listed.len());
    let offered: Vec<String> = second.tools().into_iter().map(|t| t.name).collect();
    assert!(
        offered.contains(&"mcp__notes__echo".to_string()),
        "{offered:?}"
    );
    assert_eq!(
        processes_with(&marker),
        Vec::<i32>::new(),
        "an idle server was spawned"
    );

    // 3. The first call starts it and succeeds.
    let call = second
        .call(
            "mcp__notes__echo",
            json!({"text": "woken"}),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(call.status, CallStatus::Ok, "{call:?}");
    assert!(call.result.text.contains("woken"), "{call:?}");
    assert!(
        !processes_with(&marker).is_empty(),
        "the call did not start it"
    );
    assert_eq!(second.reports()[0].status, ServerStatus::Ready);

    // 4. tools/list_changed drops the kept list at once; the next listing keeps the new one.
    let change = second
        .call(
            "mcp__notes__change_tools",
            json!({"action": "add", "tool": "fresh"}),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(change.status, CallStatus::Ok, "{change:?}");
    let until = Instant::now() + Duration::from_secs(10);
    while !second.has_stale_tools() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(second.has_stale_tools(), "no tools/list_changed arrived");
    assert!(
        kept_lists(state, "notes").is_empty(),
        "the kept list outlived list_changed"
    );
    second.turn_boundary().await;
    let files = kept_lists(state, "notes");
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(kept_names(&files[0]).contains(&"fresh".to_string()));
    second.close().await;
    assert!(wait_gone(&marker, Duration::from_secs(10)).is_empty());
}

#[test]
fn headless_commands_say_lazy_and_idle_and_list_without_a_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = marker("lazy-cli");
    let spawns = dir.path().join("spawns");
    // A shell in front of the server writes down every spawn.
    let config = write_config(&format!(
        "mcp:\n  servers:\n    - name: notes\n      command: sh\n      args: [\"-c\", \"echo spawned >> {}; exec {} demo-server --tools-ttl {TTL}\"]\n      env: {{AIMON_TEST_MARKER: {marker}}}\n      start: lazy\n",
        spawns.display(),
        bin()
    ));
    let state = dir.path().join("state");
    let run = |args: &[&str]| {
        std::process::Command::new(bin())
            .arg("--config")
            .arg(&config.path)
            .arg("--log-file")
            .arg(dir.path().join("log"))
            .args(args)
            .env("XDG_STATE_HOME", &state)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("aimon-console")
    };
    let spawned = || {
        std::fs::read_to_string(&spawns)
            .unwrap_or_default()
            .lines()
            .count()
    };
    // The first listing starts it (nothing kept yet); the second is the kept one.
    for (round, expected_spawns) in [(1, 1), (2, 1)] {
        let out = run(&["tools", "--json"]);
        assert!(out.status.success(), "round {round}: {out:?}");
        let tools = stdout_json(&out);
        assert!(
            tools["tools"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["name"] == "mcp__notes__echo")),
            "round {round}: {tools:#}"
        );
        assert_eq!(spawned(), expected_spawns, "round {round}");
    }
    let out = run(&["check", "--json"]);
    let report = stdout_json(&out);
    let notes = server(&report, "notes");
    assert_eq!(notes["status"], "idle", "{report:#}");
    assert_eq!(notes["start"], "lazy", "{report:#}");
    assert_eq!(notes["tools"], 5, "{report:#}");
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    assert_eq!(spawned(), 1);
    // A call starts it.
    let out = run(&[
        "call",
        "mcp__notes__echo",
        "--args",
        r#"{"text":"hi"}"#,
        "--yes",
        "--json",
    ]);
    assert_eq!(stdout_json(&out)["status"], "ok", "{out:?}");
    assert_eq!(spawned(), 2);
    assert!(wait_gone(&marker, Duration::from_secs(10)).is_empty());
}

/// In the console (tmux): the lazy server's row says `idle (lazy)` and no process of it runs;
/// a call of one of its kept tools from the Tools pane starts it, the call is ok, and the row
/// says it is ready.
#[test]
fn in_the_console_an_idle_server_starts_on_its_first_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = marker("lazy-tui");
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}policy:\n  approval: never\n",
        demo_server("notes", &["--tools-ttl", TTL], "start: lazy", &marker)
    ));
    let state = dir.path().join("state");
    // The first listing is kept.
    let out = std::process::Command::new(bin())
        .arg("--config")
        .arg(&config.path)
        .args([
            "--log-file",
            &dir.path().join("log").to_string_lossy(),
            "tools",
        ])
        .env("XDG_STATE_HOME", &state)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("tools");
    assert!(out.status.success(), "{out:?}");
    assert!(wait_gone(&marker, Duration::from_secs(10)).is_empty());
    let t = common::tmux::Tmux::console(
        dir.path(),
        &config.path,
        &format!("XDG_STATE_HOME={}", state.display()),
        "",
        "idle (lazy)",
    );
    let screen = t.wait_for("0/1 ready · 1 idle", Duration::from_secs(10));
    assert!(screen.contains("idle (lazy)"), "{screen}");
    assert_eq!(processes_with(&marker), Vec::<i32>::new(), "{screen}");
    t.keys(&["3", "/"]);
    t.text("echo");
    t.keys(&["Enter", "Enter"]);
    t.wait_for("Ctrl-S send", Duration::from_secs(5));
    t.keys(&["C-r"]);
    t.wait_for("raw JSON", Duration::from_secs(5));
    t.keys(&["C-u"]);
    t.text(r#""text": "woken""#);
    t.keys(&["C-s"]);
    t.wait_for_row("#1", "ok");
    let screen = t.wait_for("1/1 ready", Duration::from_secs(10));
    assert!(!screen.contains("idle (lazy)"), "{screen}");
    assert!(!processes_with(&marker).is_empty(), "{screen}");
    t.keys(&["q"]);
    assert!(wait_gone(&marker, Duration::from_secs(10)).is_empty());
}

/// A call cancelled while it waits for the start of the server it woke: the call ends
/// cancelled, and the start goes on to the end (ready), never left half done.
#[tokio::test]
async fn a_call_cancelled_while_its_server_starts_leaves_the_start_to_finish() {
    let state = process_state_home("lazy");
    let marker = marker("lazy-cancel");
    let config = config_of(
        vec![lazy_server(
            "slow-notes",
            &["--init-delay-ms", "600"],
            &marker,
        )],
        PolicyConfig {
            approval: ApprovalPolicy::Never,
            ..PolicyConfig::default()
        },
    );
    let first = runtime(&config).await;
    assert_eq!(
        first.wait_started().await.servers[0].status,
        ServerStatus::Ready
    );
    first.close().await;
    assert_eq!(kept_lists(state, "slow-notes").len(), 1);
    let second = runtime(&config).await;
    assert_eq!(
        second.wait_started().await.servers[0].status,
        ServerStatus::Idle
    );
    let cancel = CancellationToken::new();
    let call = second.call(
        "mcp__slow-notes__echo",
        json!({"text": "never"}),
        cancel.clone(),
    );
    let canceller = async {
        // Well inside the server's 600 ms handshake.
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    };
    let (outcome, ()) = tokio::join!(call, canceller);
    assert_eq!(outcome.status, CallStatus::Cancelled, "{outcome:?}");
    let report = second
        .wait_for_server("slow-notes")
        .await
        .expect("a report");
    assert_eq!(report.status, ServerStatus::Ready, "{report:#?}");
    let again = second
        .call(
            "mcp__slow-notes__echo",
            json!({"text": "now"}),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(again.status, CallStatus::Ok, "{again:?}");
    second.close().await;
    assert!(wait_gone(&marker, Duration::from_secs(10)).is_empty());
}
