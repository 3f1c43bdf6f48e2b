//! Fault rows for what a server answers: answers that cannot be read (too long, not UTF-8,
//! both `result` and `error`), a handshake that ignores `server/discover`, tool lists with
//! malformed or duplicate entries, and HTTP credentials that stop being enough after start-up.

use super::*;

/// Starts `faulty` (marked `m`) beside a good server, both ready, and calls its `echo`: the
/// error and how long the call took. The good server still answers, and nothing is left once
/// the manager is closed.
async fn failing_call(label: &str, m: &str, faulty: ServerConfig) -> (McpError, Duration) {
    let manager = McpClientManager::new(null_sink(), NotificationTap::none());
    let summary = manager
        .start_all(&[demo("good", &[], m), faulty], None)
        .await;
    for report in &summary.servers {
        assert_eq!(report.status, ServerStatus::Ready, "{label}: {report:#?}");
    }
    let started = Instant::now();
    let answer = echo(&manager, "faulty").await;
    let took = started.elapsed();
    let good = echo(&manager, "good").await;
    assert!(good.is_ok(), "{label}: good server call: {good:?}");
    let failures = manager.close_all().await;
    assert!(failures.is_empty(), "{label}: close failures: {failures:?}");
    let left = wait_gone(m, Duration::from_secs(3));
    assert!(left.is_empty(), "{label}: processes left: {left:?}");
    match answer {
        Ok(result) => panic!("{label}: the call succeeded: {result:?}"),
        Err(e) => (e, took),
    }
}

/// A stdio demo server with `flags` whose request timeout is `timeout` (long, so that a failure
/// that comes from the timeout cannot pass for one that came at once).
fn slow_to_time_out(flags: &[&str], m: &str, timeout: Duration) -> ServerConfig {
    let mut server = demo("faulty", flags, m);
    server.request_timeout = timeout;
    server
}

#[tokio::test]
async fn an_answer_over_the_line_limit_fails_the_call_at_once_naming_the_size() {
    let m = marker("huge-answer");
    let timeout = Duration::from_secs(20);
    let faulty = slow_to_time_out(&["--huge-answer", "17000000"], &m, timeout);
    let (err, took) = failing_call("huge-answer", &m, faulty).await;
    let McpError::Unreadable(why) = &err else {
        panic!("not an unreadable answer: {err:?}")
    };
    assert!(why.contains("tools/call"), "{why}");
    assert!(why.contains(" bytes, over the 16 MiB line limit"), "{why}");
    let size: usize = why
        .split(": ")
        .last()
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no size in {why}"));
    assert!(size > 17_000_000, "{why}");
    // Not the request timeout: the call ended on the answer.
    assert!(took < timeout / 4, "took {took:?}");
}

#[tokio::test]
async fn invalid_utf8_in_an_answer_fails_the_call_saying_where() {
    let m = marker("bad-utf8-call");
    let timeout = Duration::from_secs(20);
    let faulty = slow_to_time_out(&["--bad-utf8", "tools/call"], &m, timeout);
    let (err, took) = failing_call("bad-utf8-call", &m, faulty).await;
    let McpError::Unreadable(why) = &err else {
        panic!("not an unreadable answer: {err:?}")
    };
    assert!(why.contains("invalid UTF-8 at byte "), "{why}");
    assert!(took < timeout / 4, "took {took:?}");
}

#[tokio::test]
async fn invalid_utf8_in_a_tool_list_is_answer_unreadable() {
    let (r, _) = fault(
        "bad-utf8-list",
        &["--bad-utf8", "tools/list"],
        Expect::Failed(FailureClass::AnswerUnreadable),
    )
    .await;
    assert_eq!(failure(&r).phase, Some(StartPhase::ListTools), "{r:#?}");
    assert!(
        failure(&r).message.contains("tools/list")
            && failure(&r).message.contains("invalid UTF-8 at byte "),
        "{r:#?}"
    );
}

#[tokio::test]
async fn invalid_utf8_in_the_handshake_is_answer_unreadable() {
    let (r, _) = fault(
        "bad-utf8-discover",
        &["--bad-utf8", "server/discover"],
        Expect::Failed(FailureClass::AnswerUnreadable),
    )
    .await;
    assert_eq!(failure(&r).phase, Some(StartPhase::Handshake), "{r:#?}");
    assert!(
        failure(&r).message.contains("server/discover")
            && failure(&r).message.contains("invalid UTF-8 at byte "),
        "{r:#?}"
    );
}

#[tokio::test]
async fn a_response_with_both_result_and_error_fails_the_call_saying_so() {
    let m = marker("result-and-error");
    let timeout = Duration::from_secs(20);
    let faulty = slow_to_time_out(&["--result-and-error", "tools/call"], &m, timeout);
    let (err, took) = failing_call("result-and-error", &m, faulty).await;
    assert!(
        matches!(&err, McpError::Unreadable(why) if why.contains("both `result` and `error`")),
        "{err:?}"
    );
    assert!(took < timeout / 4, "took {took:?}");
}

#[tokio::test]
async fn a_server_silent_on_discover_is_ready_through_initialize_and_restarts_straight_to_it() {
    let m = marker("ignore-discover");
    let timeout = Duration::from_secs(10);
    let faulty = slow_to_time_out(&["--ignore-discover"], &m, timeout);
    let manager = McpClientManager::new(null_sink(), NotificationTap::none());
    let summary = manager
        .start_all(&[demo("good", &[], &m), faulty.clone()], None)
        .await;
    let r = &summary.servers[1];
    assert_eq!(r.status, ServerStatus::Ready, "{r:#?}");
    assert_eq!(r.protocol_version.as_deref(), Some("2025-11-25"), "{r:#?}");
    let handshake = Duration::from_millis(r.phases.handshake_ms.unwrap_or(u64::MAX));
    assert!(handshake < timeout / 2, "{r:#?}");
    // server/discover had its share: the handshake waited for it first.
    assert!(handshake >= timeout / 4, "{r:#?}");
    // A restart goes straight to initialize: no share spent on server/discover.
    let again = manager.restart_server(&faulty).await;
    assert_eq!(again.status, ServerStatus::Ready, "{again:#?}");
    let handshake = Duration::from_millis(again.phases.handshake_ms.unwrap_or(u64::MAX));
    assert!(handshake < timeout / 4, "{again:#?}");
    assert!(echo(&manager, "faulty").await.is_ok());
    assert!(manager.close_all().await.is_empty());
    assert!(wait_gone(&m, Duration::from_secs(3)).is_empty());
}

#[tokio::test]
async fn malformed_tool_entries_are_skipped_and_named_the_rest_registered() {
    let (r, registry) = fault("malformed-tools", &["--malformed-tools"], Expect::Ready).await;
    assert_eq!(faulty_tools(&registry), 5);
    assert_malformed_named(&r);
}

#[tokio::test]
async fn over_http_too_malformed_tool_entries_are_skipped_and_named_the_rest_callable() {
    // The page comes as an SSE event, or (--http-json) as a JSON body: read entry by entry
    // either way, as over stdio.
    for answers in [&[][..], &["--http-json"][..]] {
        let flags: Vec<&str> = ["--malformed-tools"]
            .iter()
            .chain(answers)
            .copied()
            .collect();
        let (_server, url) = demo_http(&flags);
        let mut faulty = ServerConfig::remote("faulty", TransportKind::StreamableHttp, &url);
        faulty.request_timeout = TIMEOUT;
        let manager = McpClientManager::new(null_sink(), NotificationTap::none());
        let summary = manager.start_all(&[faulty], None).await;
        let r = &summary.servers[0];
        assert_eq!(r.status, ServerStatus::Ready, "{answers:?}: {r:#?}");
        assert_malformed_named(r);
        let called = echo(&manager, "faulty").await;
        assert!(called.is_ok(), "{answers:?}: {called:?}");
        assert!(manager.close_all().await.is_empty());
    }
}

/// The faulty server's report: its 5 good tools, and each malformed entry named as skipped.
fn assert_malformed_named(r: &ServerReport) {
    assert_eq!(r.tools, 5, "{r:#?}");
    for name in aimon_console::demo::MALFORMED_TOOLS {
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains(&format!("tool \"{name}\"")) && w.contains("skipped")),
            "{name}: {:?}",
            r.warnings
        );
    }
    assert!(
        r.warnings.iter().any(|w| w.contains("it has no name")),
        "{:?}",
        r.warnings
    );
    assert!(
        r.warnings.iter().any(|w| w.contains("not an object")),
        "{:?}",
        r.warnings
    );
}

#[tokio::test]
async fn a_duplicate_tool_is_named_and_counted_once() {
    let (r, registry) = fault("duplicate-tool", &["--duplicate-tool"], Expect::Ready).await;
    assert_eq!(r.tools, 5, "{r:#?}");
    assert_eq!(faulty_tools(&registry), 5);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("tool \"echo\"") && w.contains("listed twice")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn check_json_counts_the_tools_it_lists() {
    let m = marker("tools-counted");
    let config = config_beside_a_good_server(&m, &["--duplicate-tool", "--malformed-tools"]);
    let (code, report) = check_json(&config.path);
    assert_eq!(code, 0, "{report:#}");
    let faulty = server(&report, "faulty");
    let listed = report["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter(|t| t["server"] == "faulty")
        .count();
    assert_eq!(faulty["tools"], 5, "{faulty:#}");
    assert_eq!(listed, 5, "{report:#}");
    let warnings = faulty["warnings"].as_array().expect("warnings");
    assert_eq!(
        warnings.len(),
        6,
        "five malformed entries and one duplicate: {warnings:#?}"
    );
    assert!(wait_gone(&m, Duration::from_secs(3)).is_empty());
}

/// How many tools of the faulty server are registered.
fn faulty_tools(registry: &ToolRegistry) -> usize {
    registry
        .snapshot()
        .keys()
        .filter(|name| name.starts_with("mcp__faulty__"))
        .count()
}

#[tokio::test]
async fn a_401_after_start_is_http_status_401() {
    let r = http_demo_fault(
        "http-401-later",
        &["--http-401-on", "tools/list"],
        Expect::Failed(FailureClass::HttpStatus),
    )
    .await;
    let f = failure(&r);
    assert_eq!(f.http_status, Some(401), "{r:#?}");
    assert_eq!(f.phase, Some(StartPhase::ListTools), "{r:#?}");
    assert!(f.hint().contains("credentials"), "{r:#?}");
    assert!(!f.message.contains("Auth required"), "{r:#?}");
}

#[tokio::test]
async fn a_401_on_a_call_says_http_401_and_credentials() {
    let (_server, url) = demo_http(&["--http-401-on", "tools/call"]);
    let m = marker("http-401-call");
    let mut faulty = ServerConfig::remote("faulty", TransportKind::StreamableHttp, &url);
    faulty.request_timeout = TIMEOUT;
    let (err, _) = failing_call("http-401-call", &m, faulty).await;
    assert!(
        matches!(&err, McpError::HttpStatus { status: 401, .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("HTTP 401") && text.contains("bearer_token"),
        "{text}"
    );
}
