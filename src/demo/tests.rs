//! The demo server end to end over an in-memory duplex against rmcp's client, in both handshake eras.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientRequest, ProgressNotificationParam,
    ProtocolVersion, Request, ServerResult, Tool,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{json, Value};

use super::{serve, DemoOptions, SERVER_NAME};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A client that records every progress notification it receives.
#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl Recorder {
    fn progress(&self) -> Vec<ProgressNotificationParam> {
        self.progress
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(params);
    }
}

/// Which handshake the test client uses.
#[derive(Clone, Copy, Debug)]
enum Era {
    Initialize,
    Discover,
}

fn lifecycle(era: Era) -> ClientLifecycleMode {
    match era {
        Era::Initialize => ClientLifecycleMode::Initialize,
        Era::Discover => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    }
}

/// Start a demo server with `opts` and connect a recording client to it.
async fn connect(
    opts: DemoOptions,
    era: Era,
) -> Result<RunningService<RoleClient, Recorder>, Box<dyn std::error::Error>> {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(serve(opts, server_io));
    Ok(Recorder::default()
        .serve_with_lifecycle(client_io, lifecycle(era))
        .await?)
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

async fn call(
    client: &RunningService<RoleClient, Recorder>,
    name: &'static str,
    arguments: Value,
) -> Result<CallToolResult, Box<dyn std::error::Error>> {
    Ok(client
        .call_tool(CallToolRequestParams::new(name).with_arguments(args(arguments)))
        .await?)
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}

/// `(readOnly, destructive, idempotent, openWorld)` as a tool advertises them.
type Hints = (Option<bool>, Option<bool>, Option<bool>, Option<bool>);

/// The hints the tool called `name` advertises, if it is listed and annotated.
fn hints(tools: &[Tool], name: &str) -> Option<Hints> {
    let tool = tools.iter().find(|tool| tool.name == name)?;
    let a = tool.annotations.as_ref()?;
    Some((
        a.read_only_hint,
        a.destructive_hint,
        a.idempotent_hint,
        a.open_world_hint,
    ))
}

const READ_ONLY: Hints = (Some(true), Some(false), Some(true), Some(false));

#[tokio::test]
async fn lists_five_tools_with_honest_annotations_in_both_eras() -> TestResult {
    for era in [Era::Initialize, Era::Discover] {
        let client = connect(DemoOptions::default(), era).await?;
        let info = client.peer_info().ok_or("no server info")?;
        let server = info.server_info.as_ref().ok_or("no serverInfo")?;
        assert_eq!(server.name, SERVER_NAME, "{era:?}");
        assert_eq!(server.version, env!("CARGO_PKG_VERSION"), "{era:?}");
        assert!(info.capabilities.tools.is_some(), "{era:?}");

        let tools = client.list_all_tools().await?;
        let mut names: Vec<_> = tools.iter().map(|tool| tool.name.to_string()).collect();
        names.sort();
        assert_eq!(
            names,
            ["add", "delete_note", "echo", "slow", "write_note"],
            "{era:?}"
        );
        for name in ["echo", "add", "slow"] {
            assert_eq!(hints(&tools, name), Some(READ_ONLY), "{name} {era:?}");
        }
        let write = hints(&tools, "write_note").ok_or("write_note unannotated")?;
        assert_eq!((write.0, write.1), (Some(false), Some(false)), "{era:?}");
        let delete = hints(&tools, "delete_note").ok_or("delete_note unannotated")?;
        assert_eq!((delete.0, delete.1), (Some(false), Some(true)), "{era:?}");
        client.cancel().await?;
    }
    Ok(())
}

#[tokio::test]
async fn lie_makes_mutating_tools_claim_read_only() -> TestResult {
    let opts = DemoOptions {
        lie: true,
        ..DemoOptions::default()
    };
    let client = connect(opts, Era::Initialize).await?;
    let tools = client.list_all_tools().await?;
    for name in ["echo", "add", "slow", "write_note", "delete_note"] {
        assert_eq!(hints(&tools, name), Some(READ_ONLY), "{name}");
    }
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn no_annotations_strips_every_tool() -> TestResult {
    let opts = DemoOptions {
        no_annotations: true,
        lie: true,
        ..DemoOptions::default()
    };
    let client = connect(opts, Era::Discover).await?;
    let tools = client.list_all_tools().await?;
    assert_eq!(tools.len(), 5);
    assert!(tools.iter().all(|tool| tool.annotations.is_none()));
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn tools_answer_in_both_eras() -> TestResult {
    for era in [Era::Initialize, Era::Discover] {
        let client = connect(DemoOptions::default(), era).await?;
        let echo = call(&client, "echo", json!({"text": "hi there"})).await?;
        assert_eq!(text_of(&echo), "hi there");
        assert_ne!(echo.is_error, Some(true));
        assert_eq!(
            text_of(&call(&client, "add", json!({"a": 2, "b": 3})).await?),
            "5"
        );
        assert_eq!(
            text_of(&call(&client, "add", json!({"a": 1.5, "b": 1})).await?),
            "2.5"
        );

        let saved = call(&client, "write_note", json!({"title": "t", "body": "b"})).await?;
        assert_eq!(text_of(&saved), "saved note \"t\"");
        assert_ne!(saved.is_error, Some(true));
        let deleted = call(&client, "delete_note", json!({"title": "t"})).await?;
        assert_ne!(
            deleted.is_error,
            Some(true),
            "{era:?}: {}",
            text_of(&deleted)
        );
        let missing = call(&client, "delete_note", json!({"title": "t"})).await?;
        assert_eq!(missing.is_error, Some(true), "{era:?}");
        assert!(text_of(&missing).contains("\"t\""));

        let bad = call(&client, "add", json!({"a": "two", "b": 3})).await;
        assert!(
            bad.map(|result| result.is_error == Some(true))
                .unwrap_or(true),
            "bad arguments must fail"
        );
        client.cancel().await?;
    }
    Ok(())
}

/// Send `slow` with a progress token; returns the client and the in-flight request.
async fn start_slow(
    era: Era,
    steps: u32,
    step_ms: u64,
) -> Result<
    (
        RunningService<RoleClient, Recorder>,
        rmcp::service::RequestHandle<RoleClient>,
    ),
    Box<dyn std::error::Error>,
> {
    let client = connect(DemoOptions::default(), era).await?;
    let params = CallToolRequestParams::new("slow")
        .with_arguments(args(json!({"steps": steps, "step_ms": step_ms})));
    let handle = client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await?;
    Ok((client, handle))
}

/// Poll until `check` holds or five seconds have passed (progress handlers run in their own tasks).
async fn eventually(check: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    check()
}

#[tokio::test]
async fn slow_reports_progress_after_each_step() -> TestResult {
    for era in [Era::Initialize, Era::Discover] {
        let (client, handle) = start_slow(era, 4, 10).await?;
        let token = handle.progress_token.clone();
        let response = handle.await_response().await?;
        let ServerResult::CallToolResult(result) = response else {
            return Err(format!("{era:?}: unexpected response {response:?}").into());
        };
        assert_ne!(result.is_error, Some(true), "{era:?}");
        let recorder = client.service().clone();
        assert!(
            eventually(|| recorder.progress().len() == 4).await,
            "{era:?}"
        );
        let mut progress = recorder.progress();
        progress.sort_by(|a, b| a.progress.total_cmp(&b.progress));
        for (i, note) in progress.iter().enumerate() {
            assert_eq!(note.progress_token, token, "{era:?}");
            assert_eq!(note.progress, (i + 1) as f64, "{era:?}");
            assert_eq!(note.total, Some(4.0), "{era:?}");
            assert!(note.message.is_some(), "{era:?}");
        }
        client.cancel().await?;
    }
    Ok(())
}

#[tokio::test]
async fn slow_stops_when_cancelled() -> TestResult {
    let (client, handle) = start_slow(Era::Initialize, 200, 20).await?;
    let recorder = client.service().clone();
    assert!(eventually(|| !recorder.progress().is_empty()).await);
    handle.cancel(Some("test".into())).await?;
    // Let the cancellation land and any in-flight notification arrive, then check nothing follows.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after_cancel = recorder.progress().len();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        recorder.progress().len(),
        after_cancel,
        "progress kept coming"
    );
    assert!(after_cancel < 200);
    // The server is still serving.
    assert_eq!(
        text_of(&call(&client, "echo", json!({"text": "ok"})).await?),
        "ok"
    );
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn init_delay_holds_back_either_handshake() -> TestResult {
    let delay = Duration::from_millis(300);
    for era in [Era::Initialize, Era::Discover] {
        let opts = DemoOptions {
            init_delay: delay,
            ..DemoOptions::default()
        };
        let started = Instant::now();
        let client = connect(opts, era).await?;
        assert!(started.elapsed() >= delay, "{era:?} answered early");
        client.cancel().await?;
    }
    Ok(())
}

#[tokio::test]
async fn tools_delay_holds_back_tools_list() -> TestResult {
    let delay = Duration::from_millis(300);
    let opts = DemoOptions {
        tools_delay: delay,
        ..DemoOptions::default()
    };
    let client = connect(opts, Era::Initialize).await?;
    let started = Instant::now();
    assert_eq!(client.list_all_tools().await?.len(), 5);
    assert!(started.elapsed() >= delay);
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn hang_init_never_answers_the_handshake() -> TestResult {
    for era in [Era::Initialize, Era::Discover] {
        let opts = DemoOptions {
            hang_init: true,
            ..DemoOptions::default()
        };
        let attempt = tokio::time::timeout(Duration::from_millis(300), connect(opts, era)).await;
        assert!(attempt.is_err(), "{era:?}: handshake was answered");
    }
    Ok(())
}

#[tokio::test]
async fn a_client_leaving_before_the_handshake_is_a_clean_end() -> TestResult {
    let (server_io, client_io) = tokio::io::duplex(1024);
    drop(client_io);
    tokio::time::timeout(
        Duration::from_secs(1),
        serve(DemoOptions::default(), server_io),
    )
    .await??;
    Ok(())
}

#[tokio::test]
async fn extra_tools_are_listed_and_answer_their_name() -> TestResult {
    let opts = DemoOptions {
        extra_tools: 3,
        ..DemoOptions::default()
    };
    let client = connect(opts, Era::Initialize).await?;
    let tools = client.list_all_tools().await?;
    assert_eq!(tools.len(), 8);
    assert_eq!(hints(&tools, "extra_2"), Some(READ_ONLY));
    let result = call(&client, "extra_1", json!({})).await?;
    assert_eq!(text_of(&result), "extra_1");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn tools_page_lists_in_pages_that_add_up_to_the_whole_list() -> TestResult {
    let whole = connect(
        DemoOptions {
            extra_tools: 7,
            ..DemoOptions::default()
        },
        Era::Initialize,
    )
    .await?;
    let all: Vec<String> = whole
        .list_all_tools()
        .await?
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    whole.cancel().await?;
    assert_eq!(all.len(), 12);

    let paged = connect(
        DemoOptions {
            extra_tools: 7,
            tools_page: Some(5),
            ..DemoOptions::default()
        },
        Era::Initialize,
    )
    .await?;
    let mut names = Vec::new();
    let mut sizes = Vec::new();
    let mut cursor = None;
    loop {
        let params = rmcp::model::PaginatedRequestParams::default().with_cursor(cursor);
        let page = paged.list_tools(Some(params)).await?;
        sizes.push(page.tools.len());
        names.extend(page.tools.iter().map(|t| t.name.to_string()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(sizes, [5, 5, 2]);
    assert_eq!(names, all);
    let bad = rmcp::model::PaginatedRequestParams::default().with_cursor(Some("x".into()));
    assert!(paged.list_tools(Some(bad)).await.is_err());
    paged.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn change_tools_adds_removes_and_reannotates() -> TestResult {
    let opts = DemoOptions {
        live_tools: true,
        ..DemoOptions::default()
    };
    let client = connect(opts, Era::Initialize).await?;
    let tools = client.list_all_tools().await?;
    // The five, and flood, change_tools, crash, never_answer, ask.
    assert_eq!(tools.len(), 10);
    assert_eq!(hints(&tools, "echo"), Some(READ_ONLY));
    call(
        &client,
        "change_tools",
        json!({"action": "annotate", "tool": "echo", "effect": "destructive"}),
    )
    .await?;
    call(
        &client,
        "change_tools",
        json!({"action": "remove", "tool": "add"}),
    )
    .await?;
    call(
        &client,
        "change_tools",
        json!({"action": "add", "tool": "fresh"}),
    )
    .await?;
    let tools = client.list_all_tools().await?;
    assert_eq!(
        hints(&tools, "echo"),
        Some((Some(false), Some(true), Some(true), Some(false)))
    );
    assert!(tools.iter().all(|t| t.name != "add"));
    assert_eq!(text_of(&call(&client, "fresh", json!({})).await?), "fresh");
    assert!(call(&client, "add", json!({"a": 1, "b": 2})).await.is_err());
    Ok(())
}
