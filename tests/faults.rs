//! The fault matrix: every demo-server fault, each started by the manager beside one good
//! server. For each: the status and failure class expected, the good server ready and
//! answering, and no process of either left once the manager is closed.
//!
//! HTTP faults are rows too: the faulty server is a Streamable HTTP one, either the demo server
//! in HTTP mode with an HTTP fault flag (a background process of the test, killed when the test
//! ends), or a URL that cannot work (nothing listening, `https` against plain HTTP).
//!
//! The "Reliability" table of docs/reliability.md is this file (and `faults/`) in words; keep them in step.

mod common;

use std::time::{Duration, Instant};

use aimon_console::config::{AnnotationTrust, ServerConfig, TransportKind};
use aimon_console::mcp::client::McpError;
use aimon_console::mcp::events::{null_sink, FailureClass, ServerReport, ServerStatus, StartPhase};
use aimon_console::mcp::manager::McpClientManager;
use aimon_console::mcp::notify::NotificationTap;
use aimon_console::mcp::transport::process::ExitInfo;
use aimon_console::tool::{ProgressSink, ToolRegistry};
use common::*;
use rmcp::model::CallToolResult;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Request timeout of the faulty server: short, so timeouts are quick to see.
const TIMEOUT: Duration = Duration::from_secs(2);

fn demo(name: &str, flags: &[&str], marker: &str) -> ServerConfig {
    let mut server = demo_config(name, flags, AnnotationTrust::Trust, marker);
    server.request_timeout = TIMEOUT;
    server
}

/// What a fault should come to.
enum Expect {
    Ready,
    Failed(FailureClass),
    /// Ready; then this process (the server) is killed, and a call to it must fail.
    ReadyThenKilled(Background),
}

/// Starts `flags` beside a good server; checks the expected outcome, that the good one works,
/// and that nothing is left after closing. Returns the faulty server's report and the tools.
async fn fault(label: &str, flags: &[&str], expect: Expect) -> (ServerReport, ToolRegistry) {
    let m = marker(label);
    beside_a_good_server(label, &m, demo("faulty", flags, &m), expect).await
}

/// A Streamable HTTP server at `url`, started beside a good server as `fault` does.
async fn http_fault(label: &str, url: &str, expect: Expect) -> ServerReport {
    let mut server = ServerConfig::remote("faulty", TransportKind::StreamableHttp, url);
    server.request_timeout = TIMEOUT;
    server.annotation_trust = AnnotationTrust::Trust;
    beside_a_good_server(label, &marker(label), server, expect)
        .await
        .0
}

/// `demo-server --http` with `flags`, started beside a good server as `fault` does.
async fn http_demo_fault(label: &str, flags: &[&str], expect: Expect) -> ServerReport {
    let (_server, url) = demo_http(flags);
    http_fault(label, &url, expect).await
}

/// Starts `faulty` beside a good stdio server marked `m`; see `fault`.
async fn beside_a_good_server(
    label: &str,
    m: &str,
    faulty: ServerConfig,
    expect: Expect,
) -> (ServerReport, ToolRegistry) {
    let manager = McpClientManager::new(null_sink(), NotificationTap::none());
    let servers = vec![demo("good", &[], m), faulty];
    let started = Instant::now();
    let summary = manager.start_all(&servers, None).await;
    let took = started.elapsed();
    let good = &summary.servers[0];
    let faulty = summary.servers[1].clone();
    assert_eq!(
        good.status,
        ServerStatus::Ready,
        "{label}: good server: {good:#?}"
    );
    match expect {
        Expect::Ready => {
            assert_eq!(faulty.status, ServerStatus::Ready, "{label}: {faulty:#?}");
        }
        Expect::ReadyThenKilled(process) => {
            assert_eq!(faulty.status, ServerStatus::Ready, "{label}: {faulty:#?}");
            drop(process);
            let answer = echo(&manager, "faulty").await;
            let disconnected = McpError::Disconnected {
                server: "faulty".into(),
            };
            assert_eq!(
                answer,
                Err(disconnected),
                "{label}: a call to the killed server"
            );
        }
        Expect::Failed(class) => {
            assert_eq!(faulty.status, ServerStatus::Failed, "{label}: {faulty:#?}");
            let failure = faulty
                .failure
                .as_ref()
                .expect("a failed report has a failure");
            assert_eq!(failure.class, class, "{label}: {faulty:#?}");
        }
    }
    // Nothing hangs past the faulty server's own timeout (plus slack for a loaded machine).
    assert!(
        took < TIMEOUT + Duration::from_secs(5),
        "{label}: start took {took:?}"
    );

    // The good server is unaffected: it answers.
    let answer = echo(&manager, "good").await;
    assert!(answer.is_ok(), "{label}: good server call: {answer:?}");

    let registry = ToolRegistry::new();
    manager.register_all_tools(&registry);
    let failures = manager.close_all().await;
    assert!(failures.is_empty(), "{label}: close failures: {failures:?}");
    let left = wait_gone(m, Duration::from_secs(3));
    assert!(left.is_empty(), "{label}: processes left: {left:?}");
    (faulty, registry)
}

/// Calls `echo` on `server`.
async fn echo(manager: &McpClientManager, server: &str) -> Result<CallToolResult, McpError> {
    let client = manager.client(server).expect("a ready server has a client");
    client
        .call_tool(
            "echo",
            args(json!({"text": "still here"})),
            CancellationToken::new(),
            ProgressSink::none(),
        )
        .await
}

fn args(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match value {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

fn failure(report: &ServerReport) -> &aimon_console::mcp::events::Failure {
    report.failure.as_ref().expect("failure")
}

#[tokio::test]
async fn init_delay_is_ready_and_slow() {
    let (r, _) = fault("init-delay", &["--init-delay-ms", "300"], Expect::Ready).await;
    assert!(r.phases.handshake_ms.unwrap_or(0) >= 300, "{r:#?}");
}

#[tokio::test]
async fn tools_delay_past_the_timeout_is_list_timeout() {
    let (r, _) = fault(
        "tools-delay",
        &["--tools-delay-ms", "60000"],
        Expect::Failed(FailureClass::ListTimeout),
    )
    .await;
    assert!(r.phases.handshake_ms.is_some(), "{r:#?}");
}

#[tokio::test]
async fn exit_before_init_is_exited_with_code_and_stderr() {
    let (r, _) = fault(
        "exit",
        &["--exit-before-init", "3", "--stderr", "boom"],
        Expect::Failed(FailureClass::Exited),
    )
    .await;
    assert_eq!(failure(&r).exit_status, Some(ExitInfo::Code(3)));
    assert!(
        failure(&r).stderr_tail.iter().any(|l| l == "boom"),
        "{r:#?}"
    );
}

#[tokio::test]
async fn stderr_text_is_ready() {
    fault("stderr", &["--stderr", "hello"], Expect::Ready).await;
}

#[tokio::test]
async fn garbage_stdout_is_ready_with_a_warning() {
    let (r, _) = fault("garbage", &["--garbage-stdout"], Expect::Ready).await;
    assert!(r.warnings.iter().any(|w| w.contains("non-JSON")), "{r:#?}");
}

#[tokio::test]
async fn hang_init_is_handshake_timeout() {
    fault(
        "hang",
        &["--hang-init"],
        Expect::Failed(FailureClass::HandshakeTimeout),
    )
    .await;
}

#[tokio::test]
async fn lie_is_ready_and_believed_under_trust() {
    let (_, registry) = fault("lie", &["--lie"], Expect::Ready).await;
    let tool = registry.get("mcp__faulty__delete_note").expect("tool");
    assert_eq!(tool.descriptor().side_effect.as_str(), "read_only");
}

#[tokio::test]
async fn no_annotations_is_ready_and_mutating() {
    let (_, registry) = fault("no-annotations", &["--no-annotations"], Expect::Ready).await;
    let tool = registry.get("mcp__faulty__echo").expect("tool");
    assert_eq!(tool.descriptor().side_effect.as_str(), "mutating");
}

#[tokio::test]
async fn a_stray_child_is_ready_and_killed_with_its_group() {
    fault("spawn-child", &["--spawn-child", "600"], Expect::Ready).await;
}

#[tokio::test]
async fn wrong_ids_are_a_protocol_error() {
    // The server answers (under the wrong id) and closing its stdin then ends it: that exit is
    // ours, not a crash, so the class stays protocol_error.
    let (r, _) = fault(
        "wrong-id",
        &["--wrong-id"],
        Expect::Failed(FailureClass::ProtocolError),
    )
    .await;
    assert!(failure(&r).message.contains("id"), "{r:#?}");
}

#[tokio::test]
async fn a_10_mb_line_is_ready_with_a_warning() {
    let (r, _) = fault("huge-line", &["--huge-line", "10000000"], Expect::Ready).await;
    assert!(
        r.warnings.iter().any(|w| w.contains("1 non-JSON line")),
        "{:?}",
        r.warnings
    );
}

#[tokio::test]
async fn a_line_over_the_frame_limit_is_dropped_and_reported() {
    let (r, _) = fault("over-limit", &["--huge-line", "17000000"], Expect::Ready).await;
    assert!(
        r.warnings.iter().any(|w| w.contains("frame limit")),
        "{:?}",
        r.warnings
    );
}

#[tokio::test]
async fn partial_json_then_death_is_exited() {
    let (r, _) = fault(
        "partial",
        &["--partial-json-then-die"],
        Expect::Failed(FailureClass::Exited),
    )
    .await;
    assert_eq!(failure(&r).exit_status, Some(ExitInfo::Code(3)));
}

#[tokio::test]
async fn a_stderr_flood_is_ready_and_answers() {
    let (r, _) = fault("flood", &["--flood-stderr"], Expect::Ready).await;
    assert_eq!(r.tools, 5);
}

#[tokio::test]
async fn a_closed_stdout_is_a_protocol_error() {
    let (r, _) = fault(
        "close-stdout",
        &["--close-stdout"],
        Expect::Failed(FailureClass::ProtocolError),
    )
    .await;
    assert!(failure(&r).message.contains("closed"), "{r:#?}");
}

#[tokio::test]
async fn a_child_ignoring_sigterm_is_killed_with_its_group() {
    fault(
        "ignores-term",
        &["--child-ignores-term", "600"],
        Expect::Ready,
    )
    .await;
}

#[tokio::test]
async fn nothing_listening_is_connect_refused() {
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    let r = http_fault(
        "http-refused",
        &url,
        Expect::Failed(FailureClass::ConnectRefused),
    )
    .await;
    assert_eq!(failure(&r).phase, Some(StartPhase::Connect), "{r:#?}");
    assert!(failure(&r).message.contains("refused"), "{r:#?}");
}

#[tokio::test]
async fn https_to_a_plain_http_server_is_a_tls_error() {
    let (_server, url) = demo_http(&[]);
    let url = url.replacen("http://", "https://", 1);
    let r = http_fault("http-tls", &url, Expect::Failed(FailureClass::TlsError)).await;
    assert_eq!(failure(&r).phase, Some(StartPhase::Connect), "{r:#?}");
    assert!(failure(&r).message.contains("TLS handshake"), "{r:#?}");
}

#[tokio::test]
async fn a_missing_bearer_token_is_http_status_401() {
    let r = http_demo_fault(
        "http-401",
        &["--require-bearer", "secret"],
        Expect::Failed(FailureClass::HttpStatus),
    )
    .await;
    assert_eq!(failure(&r).http_status, Some(401), "{r:#?}");
    assert!(failure(&r).message.contains("credentials"), "{r:#?}");
}

#[tokio::test]
async fn status_500_is_http_status_500() {
    let r = http_demo_fault(
        "http-500",
        &["--http-status", "500"],
        Expect::Failed(FailureClass::HttpStatus),
    )
    .await;
    assert_eq!(failure(&r).http_status, Some(500), "{r:#?}");
    assert!(failure(&r).message.contains("HTTP 500"), "{r:#?}");
}

#[tokio::test]
async fn an_http_server_that_never_answers_is_handshake_timeout() {
    // Connected, so the wait is the handshake's: not `timeout`, which means no connection.
    let r = http_demo_fault(
        "http-hang",
        &["--http-hang"],
        Expect::Failed(FailureClass::HandshakeTimeout),
    )
    .await;
    assert!(r.phases.connect_ms.is_some(), "{r:#?}");
    assert!(failure(&r).message.contains("request_timeout"), "{r:#?}");
}

#[tokio::test]
async fn a_hang_up_mid_answer_is_a_lost_connection_that_says_so() {
    let r = http_demo_fault(
        "http-hangup",
        &["--http-hangup-mid-answer"],
        Expect::Failed(FailureClass::ConnectionLost),
    )
    .await;
    let message = &failure(&r).message;
    assert!(
        message.contains("closed the connection before its answer was complete"),
        "{r:#?}"
    );
    // It was reached: connected, and not told to check that something listens.
    assert!(r.phases.connect_ms.is_some(), "{r:#?}");
    assert!(failure(&r).hint().contains("dropped it"), "{r:#?}");
}

#[tokio::test]
async fn a_reset_mid_answer_is_a_lost_connection_not_a_refused_one() {
    let r = http_demo_fault(
        "http-reset",
        &["--http-reset-mid-answer"],
        Expect::Failed(FailureClass::ConnectionLost),
    )
    .await;
    let message = &failure(&r).message;
    assert!(message.contains("before its answer was complete"), "{r:#?}");
    assert!(!message.contains("cannot connect"), "{r:#?}");
    assert!(message.contains("reset by peer"), "{r:#?}");
    assert!(r.phases.connect_ms.is_some(), "{r:#?}");
}

#[tokio::test]
async fn an_answer_that_is_not_http_is_a_protocol_error_that_says_so() {
    let r = http_demo_fault(
        "http-not-http",
        &["--http-not-http"],
        Expect::Failed(FailureClass::ProtocolError),
    )
    .await;
    assert!(
        failure(&r)
            .message
            .contains("answered with something that is not HTTP"),
        "{r:#?}"
    );
}

#[tokio::test]
async fn an_http_server_killed_after_start_fails_its_call_as_disconnected() {
    let (server, url) = demo_http(&[]);
    http_fault("http-killed", &url, Expect::ReadyThenKilled(server)).await;
}

/// A config of two demo servers marked `m`, the second with `flags`.
fn config_beside_a_good_server(m: &str, flags: &[&str]) -> TempConfig {
    write_config(&format!(
        "mcp:\n  servers:\n{}{}",
        demo_server("good", &[], "", m),
        demo_server("faulty", flags, "", m)
    ))
}

// Rows of issue 12, by seam: answers that cannot be read, handshakes and tool lists; and
// descendants that escape their server.
#[path = "faults/answers.rs"]
mod answers;
#[path = "faults/escapes.rs"]
mod escapes;
