//! Rewake end to end (seed §7.2): a config's `notifications.rewake` rule turns the demo
//! server's log notification about one note into an external event for the driver; other
//! notifications (another note, another server, a deletion) make none.

mod common;

use std::time::Duration;

use aimon_console::config;
use aimon_console::runtime::{AgentRuntimeFactory, CallStatus, RuntimeEvent, RuntimeOptions};
use common::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_matching_notification_wakes_the_driver_and_others_do_not() {
    let m = marker("rewake");
    let yaml = format!(
        "mcp:\n  servers:\n{}{}policy:\n  approval: never\nnotifications:\n  rewake:\n    - server: notes\n      method: notifications/message\n      match: {{level: info, data: 'saved note \"todo\"'}}\n      event: todo-saved\n",
        demo_server("notes", &[], "annotation_trust: trust", &m),
        demo_server("other", &[], "annotation_trust: trust", &m),
    );
    let file = write_config(&yaml);
    let config = config::load(&file.path).expect("config loads");
    let (events, mut stream) = AgentRuntimeFactory::events();
    let runtime = AgentRuntimeFactory::create(&config, RuntimeOptions::default(), events)
        .await
        .expect("runtime");
    runtime.wait_started().await;

    let calls = [
        (
            "mcp__notes__write_note",
            json!({"title": "shopping", "body": "milk"}),
        ),
        (
            "mcp__other__write_note",
            json!({"title": "todo", "body": "x"}),
        ),
        (
            "mcp__notes__write_note",
            json!({"title": "todo", "body": "call back"}),
        ),
        ("mcp__notes__delete_note", json!({"title": "todo"})),
    ];
    for (tool, args) in calls {
        let out = runtime.call(tool, args, CancellationToken::new()).await;
        assert_eq!(out.status, CallStatus::Ok, "{tool}: {out:?}");
    }
    // Let the last notifications arrive, then end the stream.
    tokio::time::sleep(Duration::from_millis(300)).await;
    runtime.close().await;

    let mut logs = Vec::new();
    let mut rewakes = Vec::new();
    while let Some(event) = stream.recv().await {
        match event {
            RuntimeEvent::ServerLog { server, data, .. } => {
                logs.push((server, data));
            }
            RuntimeEvent::Rewake(e) => {
                // It follows the notification it was made of.
                assert_eq!(
                    logs.last(),
                    Some(&(e.server.clone(), e.params["data"].clone()))
                );
                rewakes.push(e);
            }
            _ => {}
        }
    }
    assert_eq!(logs.len(), 4, "every write and delete logs: {logs:?}");
    assert_eq!(rewakes.len(), 1, "{rewakes:?}");
    let e = &rewakes[0];
    assert_eq!((e.event.as_str(), e.rule), ("todo-saved", 0));
    assert_eq!(
        (e.server.as_str(), e.method.as_str()),
        ("notes", "notifications/message")
    );
    assert_eq!(e.params["data"], json!("saved note \"todo\""));
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}
