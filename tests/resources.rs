//! Resources, prompts, completions, subscriptions and elicitation against the demo server, over
//! real pipes: capabilities and instructions in `check --json`; the headless `resources`,
//! `read`, `prompts`, `prompt` with their JSON shapes and exit codes; every page of a long
//! listing; a subscription (protocol 2026-07-28: `subscriptions/listen`) hearing
//! `resources/updated`; and `elicitation/create` answered by `--elicitation`.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aimon_console::config::{AnnotationTrust, ApprovalPolicy, PolicyConfig};
use aimon_console::runtime::{
    AgentRuntimeFactory, CallStatus, CompletionTarget, ContentError, ResourceContent, RuntimeEvent,
    RuntimeOptions,
};
use base64::Engine;
use common::*;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

fn notes_yaml(m: &str, flags: &[&str]) -> TempConfig {
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&demo_server("notes", flags, "", m));
    write_config(&yaml)
}

#[test]
fn check_reports_capabilities_and_instructions() {
    let m = marker("caps");
    let cfg = notes_yaml(&m, &[]);
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 0, "{report:#}");
    let notes = server(&report, "notes");
    let caps = &notes["capabilities"];
    assert_eq!(
        caps["resources"],
        json!({"subscribe": true, "list_changed": true})
    );
    assert_eq!(caps["prompts"], json!({"list_changed": false}));
    assert_eq!(caps["tools"], json!({"list_changed": false}));
    assert_eq!(caps["logging"], true);
    assert_eq!(caps["completions"], true);
    assert_eq!(caps["tasks"], false);
    assert!(notes["instructions"]
        .as_str()
        .is_some_and(|i| i.starts_with("Demo server of aimon-console")));
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[test]
fn headless_resources_read_prompts_and_prompt() {
    let m = marker("headless-content");
    let cfg = notes_yaml(&m, &["--extra-resources", "120"]);
    let path = Some(cfg.path.as_path());

    // Every page: 2 of its own and 120 generated, 50 a page.
    let out = run(&["resources", "--json"], path);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let listed = stdout_json(&out);
    let resources = listed["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 122);
    assert_eq!(resources[0]["uri"], "demo://readme");
    assert_eq!(resources[121]["uri"], "demo://extra/119");
    assert_eq!(resources[1]["mime_type"], "image/png");
    assert_eq!(resources[1]["size"], 69);
    assert_eq!(resources[0]["server"], "notes");
    assert_eq!(
        listed["templates"][0]["uri_template"],
        "demo://notes/{title}"
    );
    assert_eq!(listed["errors"], json!([]));
    assert_eq!(listed["complete"], true);
    assert_eq!(listed["missing"], json!([]));

    // A text, and a blob (base64 in JSON, decoded it is the PNG).
    let out = run(&["read", "demo://readme", "--json"], path);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let read = stdout_json(&out);
    assert_eq!(read["server"], "notes");
    assert_eq!(read["contents"][0]["mime_type"], "text/markdown");
    assert!(read["contents"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("# aimon demo server"));
    let out = run(&["read", "demo://logo.png", "--json"], path);
    let blob = stdout_json(&out);
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob["contents"][0]["blob"].as_str().unwrap())
        .unwrap();
    assert!(bytes.starts_with(b"\x89PNG"));
    assert_eq!(blob["contents"][0]["size"], bytes.len());
    let out = run(&["read", "demo://logo.png"], path);
    assert!(String::from_utf8_lossy(&out.stdout).contains("[blob image/png, 69 bytes"));

    // Exit codes: a server not in the config (2), a read the server refuses (1; with one
    // server, it is asked whatever the URI).
    let out = run(&["read", "other://x"], path);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no resource other://x"));
    assert_eq!(
        run(&["read", "demo://readme", "--server", "nope"], path)
            .status
            .code(),
        Some(2)
    );
    let out = run(&["read", "demo://notes/none", "--server", "notes"], path);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no resource"));

    // Prompts.
    let out = run(&["prompts", "--json"], path);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let prompts = stdout_json(&out);
    let summarize = &prompts["prompts"][0];
    assert_eq!(summarize["name"], "summarize");
    assert_eq!(summarize["arguments"][0]["name"], "title");
    assert_eq!(summarize["arguments"][0]["required"], true);
    assert_eq!(summarize["arguments"][1]["required"], false);
    let out = run(&["prompt", "hello", "--json"], path);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let hello = stdout_json(&out);
    assert_eq!(hello["server"], "notes");
    assert_eq!(hello["messages"][0]["role"], "user");
    assert_eq!(hello["messages"][0]["text"], "Say hello to the operator.");
    assert_eq!(hello["messages"][0]["content"]["type"], "text");
    let out = run(
        &["prompt", "summarize", "--args", r#"{"title": "none"}"#],
        path,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no note titled"));
    assert_eq!(
        run(&["prompt", "summarize", "--args", r#"{"title": 1}"#], path)
            .status
            .code(),
        Some(2)
    );
    assert_eq!(run(&["prompt", "missing"], path).status.code(), Some(2));

    // Two servers listing the same URI: which one must be said (2), then it is read.
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&demo_server("a", &[], "", &m));
    yaml.push_str(&demo_server("b", &[], "", &m));
    let two = write_config(&yaml);
    let out = run(&["read", "demo://readme"], Some(two.path.as_path()));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("several servers list demo://readme: a, b")
    );
    let out = run(
        &["read", "demo://readme", "--server", "b", "--json"],
        Some(two.path.as_path()),
    );
    assert_eq!(stdout_json(&out)["server"], "b");

    // A server that did not start: its content is missing, and the exit code says so.
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&demo_server("a", &[], "", &m));
    yaml.push_str(&demo_server("broken", &["--exit-before-init", "3"], "", &m));
    let broken = write_config(&yaml);
    for command in ["resources", "prompts"] {
        let out = run(&[command, "--json"], Some(broken.path.as_path()));
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let listed = stdout_json(&out);
        assert_eq!(listed["complete"], false);
        assert_eq!(listed["missing"][0]["server"], "broken");
        assert_eq!(listed["missing"][0]["class"], "exited");
    }
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

/// A note written through the gate (approval `never`), a read of it through completions, its
/// update heard through a subscription, and a prompt about it.
#[tokio::test]
async fn subscription_completions_and_prompts_through_the_runtime() {
    let m = marker("content-runtime");
    let server = demo_config("notes", &[], AnnotationTrust::Trust, &m);
    let policy = PolicyConfig {
        approval: ApprovalPolicy::Never,
        ..PolicyConfig::default()
    };
    let cfg = config_of(vec![server], policy);
    let (events, mut stream) = AgentRuntimeFactory::events();
    let seen: Arc<Mutex<Vec<RuntimeEvent>>> = Arc::default();
    let into = seen.clone();
    tokio::spawn(async move {
        while let Some(event) = stream.recv().await {
            into.lock().unwrap().push(event);
        }
    });
    let runtime = AgentRuntimeFactory::create(&cfg, RuntimeOptions::default(), events)
        .await
        .expect("runtime");
    runtime.wait_started().await;
    assert_eq!(runtime.resource_servers(), vec!["notes"]);
    assert_eq!(runtime.prompt_servers(), vec!["notes"]);
    let write = |title: &'static str, body: &'static str| {
        let runtime = &runtime;
        async move {
            let out = runtime
                .call(
                    "mcp__notes__write_note",
                    json!({"title": title, "body": body}),
                    CancellationToken::new(),
                )
                .await;
            assert_eq!(out.status, CallStatus::Ok, "{out:?}");
        }
    };
    write("todo list", "milk").await;

    // The template's variable completed from the note titles, then read.
    let target = CompletionTarget::Template("demo://notes/{title}".into());
    let completion = runtime
        .complete("notes", &target, "title", "to", &BTreeMap::new())
        .await
        .expect("completion");
    assert_eq!(completion.values, vec!["todo list"]);
    let uri = aimon_console::runtime::expand_template(
        "demo://notes/{title}",
        &BTreeMap::from([("title".to_string(), completion.values[0].clone())]),
    );
    assert_eq!(uri, "demo://notes/todo%20list");
    let read = runtime
        .read_resource("notes", &uri, CancellationToken::new())
        .await
        .expect("read");
    assert!(
        matches!(&read[..], [ResourceContent::Text { text, .. }] if text == "milk"),
        "{read:?}"
    );

    // Subscribed, the next write of that note is heard.
    runtime
        .set_subscription("notes", &uri, true)
        .await
        .expect("subscribe");
    assert_eq!(runtime.subscriptions("notes").await, vec![uri.clone()]);
    write("todo list", "milk, eggs").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let heard = seen.lock().unwrap().iter().any(|e| {
            matches!(e, RuntimeEvent::ResourceUpdated { server, uri: u } if server == "notes" && *u == uri)
        });
        if heard {
            break;
        }
        assert!(Instant::now() < deadline, "no resources/updated");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Unsubscribed, another write is not.
    runtime
        .set_subscription("notes", &uri, false)
        .await
        .expect("unsubscribe");
    // Updates of the first write still on their way land before the count.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, RuntimeEvent::ResourceUpdated { .. }))
        .count();
    write("todo list", "bread").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, RuntimeEvent::ResourceUpdated { .. }))
        .count();
    assert_eq!(before, after);

    // The prompt's arguments completed, then its messages (one embeds the note).
    let completion = runtime
        .complete(
            "notes",
            &CompletionTarget::Prompt("summarize".into()),
            "style",
            "d",
            &BTreeMap::new(),
        )
        .await
        .expect("completion");
    assert_eq!(completion.values, vec!["detailed"]);
    let got = runtime
        .get_prompt(
            "notes",
            "summarize",
            &BTreeMap::from([
                ("title".to_string(), "todo list".to_string()),
                ("style".to_string(), "detailed".to_string()),
            ]),
            CancellationToken::new(),
        )
        .await
        .expect("prompt");
    assert_eq!(
        got.messages[0].text,
        "Summarize the note \"todo list\" (detailed):"
    );
    assert!(got.messages[1].text.ends_with("bread"), "{got:?}");

    // What a server cannot answer is said plainly.
    assert!(matches!(
        runtime.list_resources("absent").await,
        Err(ContentError::UnknownServer(_))
    ));
    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[test]
fn headless_elicitation_is_declined_or_answered_with_defaults() {
    let m = marker("elicit");
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&demo_server(
        "ask",
        &["--live-tools", "--legacy"],
        "annotation_trust: trust",
        &m,
    ));
    let cfg = write_config(&yaml);
    let path = Some(cfg.path.as_path());
    let out = run(&["call", "mcp__ask__ask", "--events", "--json"], path);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let asked = lines
        .iter()
        .find(|l| l["type"] == "elicitation_requested")
        .expect("elicitation_requested");
    assert_eq!(asked["mode"], "form");
    assert_eq!(asked["message"], "Details of the note to write:");
    assert_eq!(asked["schema"]["required"], json!(["title"]));
    let answered = lines
        .iter()
        .find(|l| l["type"] == "server_request" && l["method"] == "elicitation/create")
        .expect("server_request");
    assert_eq!(answered["outcome"], "declined");
    assert!(answered["detail"]
        .as_str()
        .unwrap()
        .contains("no operator to ask"));
    assert_eq!(lines.last().unwrap()["result"]["text"], "declined");

    let out = run(
        &[
            "call",
            "mcp__ask__ask",
            "--elicitation",
            "defaults",
            "--json",
        ],
        path,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let outcome = stdout_json(&out);
    let text = outcome["result"]["text"].as_str().unwrap();
    let content: Value = serde_json::from_str(text.trim_start_matches("accepted: ")).unwrap();
    assert_eq!(
        content,
        json!({"copies": 3, "color": "green", "urgent": false})
    );
    assert_eq!(
        run(&["call", "mcp__ask__ask", "--elicitation", "maybe"], path)
            .status
            .code(),
        Some(2)
    );
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[test]
fn a_2026_prompt_that_asks_inside_its_result_is_answered_headless() {
    // `greet` asks whom to greet inside its `prompts/get` result (`input_required`, SEP-2322):
    // the same answers as a question sent on its own, then the prompt again with the answer.
    let m = marker("greet");
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&demo_server("live", &["--live-tools"], "", &m));
    let cfg = write_config(&yaml);
    let path = Some(cfg.path.as_path());
    let out = run(
        &["prompt", "greet", "--elicitation", "defaults", "--json"],
        path,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        stdout_json(&out)["messages"][0]["text"],
        "Say hello to operator."
    );
    // Declined (no operator to ask): the server's refusal, said.
    let out = run(&["prompt", "greet"], path);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("the question was not answered"),
        "{out:?}"
    );
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}
