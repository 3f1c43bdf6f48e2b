//! A server's sampling request through `aimon-console daemon`: the real binary on a real Unix
//! socket, server-everything's `trigger-sampling-request` asking, the demo model as the
//! daemon's agent model. Over the operator API: every console is asked (one attaching later
//! too); `sample` has the daemon's model write an answer without sending it; the first
//! `answer_sampling` reaches the server and every console is told who gave it; a later one is
//! refused, naming who came first; a rejection reaches the server as its error. In a real
//! terminal: a console attached to the daemon shows the request, `y` has the daemon's model
//! answer, and Ctrl-S sends the edited answer to the server.

mod common;
mod peers;

use std::path::Path;
use std::time::Duration;

use common::daemon::{daemon, is_event, Console};
use common::tmux::Tmux;
use common::{bin, marker, processes_with, wait_gone, write_config, TempConfig};
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(30);

/// A daemon's config: server-everything over stdio (approval `never`), the demo model as the
/// agent's model.
fn everything_config(m: &str) -> TempConfig {
    write_config(&peers::everything_with_demo_model(m, bin()))
}

/// Calls `trigger-sampling-request` with `prompt` from console `c`; returns the call's request
/// id and the `sampling_requested` event's params.
fn trigger(c: &mut Console, prompt: &str) -> (u64, Value) {
    let call = c.send(
        "call",
        json!({"tool": "mcp__everything__trigger-sampling-request",
            "arguments": {"prompt": prompt, "maxTokens": 50}}),
    );
    let asked = c.until("the sampling request", |m| {
        is_event(m, "sampling_requested")
    });
    (call, asked["params"].clone())
}

#[test]
fn a_servers_sampling_request_asks_every_console_and_the_first_answer_reaches_the_server() {
    let m = marker("daemon-sampling");
    let config = everything_config(&m);
    let (daemon, socket) = daemon(&config);
    let mut a = Console::connect(&socket);
    a.initialize("console-a");
    a.ready("everything");
    let mut b = Console::connect(&socket);
    b.initialize("console-b");

    let (call, asked) = trigger(&mut a, "what is 2 plus 3");
    let in_b = b.until("the sampling request in B", |m| {
        is_event(m, "sampling_requested")
    });
    assert_eq!(in_b["params"], asked);
    assert_eq!(asked["server"], "everything");
    assert_eq!(asked["request"]["max_tokens"], 50);
    assert_eq!(
        asked["request"]["system_prompt"],
        "You are a helpful test server."
    );
    let id = asked["id"].as_u64().unwrap();

    // A console attaching while it waits is asked too.
    let mut c = Console::connect(&socket);
    let later = c.initialize("console-c");
    assert_eq!(later["samplings"], json!([asked]), "{later}");

    // The daemon's model writes an answer; nothing has gone to the server yet.
    let sampled = b.call("sample", json!({"id": id}));
    let text = sampled["result"]["text"]
        .as_str()
        .expect("text")
        .to_string();
    assert!(text.contains("(demo model)"), "{sampled}");
    assert_eq!(sampled["result"]["model"], "demo");
    // Its endpoint (the demo model's process) is kept: a second answer is written by the same.
    let model = format!("{m}-model");
    let kept = processes_with(&model);
    assert_eq!(
        kept.len(),
        1,
        "the model's processes after one sample: {kept:?}"
    );
    let again = b.call("sample", json!({"id": id}));
    assert!(again["result"]["text"].is_string(), "{again}");
    assert_eq!(
        processes_with(&model),
        kept,
        "a second sample started another model"
    );
    let unknown = b.call("sample", json!({"id": id + 1000}));
    assert_eq!(unknown["error"]["code"], -32014, "{unknown}");

    // B's edited answer is the first: the server has it, and A is told B gave it.
    let edited = format!("{text} Checked by console B.");
    let answered = b.call(
        "answer_sampling",
        json!({"id": id, "action": "answer", "text": edited, "model": "demo",
            "stop": "endTurn", "edited": true}),
    );
    assert_eq!(answered["result"]["action"], "answer", "{answered}");
    assert_eq!(answered["result"]["by"]["name"], "console-b");
    let told = a.until("who answered", |m| m["method"] == "sampling_answered");
    assert_eq!(told["params"]["id"], id);
    assert_eq!(told["params"]["by"]["name"], "console-b");
    let done = a.answer(call);
    assert_eq!(done["result"]["status"], "ok", "{done}");
    let result = done["result"]["result"]["text"].as_str().unwrap();
    assert!(result.contains("LLM sampling result"), "{result}");
    assert!(result.contains("Checked by console B."), "{result}");

    // A's late answer is refused, naming B; nothing waits any more.
    let late = a.call("answer_sampling", json!({"id": id, "action": "reject"}));
    assert_eq!(late["error"]["code"], -32010, "{late}");
    let said = late["error"]["message"].as_str().unwrap();
    assert!(said.contains("console-b"), "{said}");
    let again = Console::connect(&socket).initialize("console-d");
    assert_eq!(again["samplings"], json!([]), "{again}");

    // A rejection reaches the server: the call fails with its error, naming who rejected it.
    let (call, asked) = trigger(&mut a, "again");
    let id = asked["id"].as_u64().unwrap();
    let rejected = c.call(
        "answer_sampling",
        json!({"id": id, "action": "reject", "reason": "not now"}),
    );
    assert_eq!(rejected["result"]["action"], "reject", "{rejected}");
    let done = a.answer(call);
    assert_eq!(done["result"]["status"], "error", "{done}");
    let why = done["result"]["result"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(why.contains("not now"), "{done}");
    assert!(why.contains("console-c"), "{done}");

    // Stopping the daemon stops the model it kept.
    // SAFETY: kill has no memory effects; the pid is the daemon's, still running.
    unsafe { libc::kill(daemon.0.id() as i32, libc::SIGTERM) };
    let left = wait_gone(&model, WAIT);
    assert!(left.is_empty(), "the daemon's model outlived it: {left:?}");
}

/// Attaches a console to the daemon at `socket` in a terminal of its own.
fn attached(dir: &Path, config: &Path, socket: &Path) -> Tmux {
    let t = Tmux::start(dir, 200, 45);
    t.text(&format!(
        "{} --config {} --log-file {} attach {}",
        bin(),
        config.display(),
        dir.join("console.log").display(),
        socket.display()
    ));
    t.keys(&["Enter"]);
    t.wait_for("attached to the daemon", WAIT);
    t.wait_for("1/1 ready", WAIT);
    t
}

#[test]
fn an_attached_console_has_the_daemons_model_answer_a_sampling_request_and_sends_it() {
    let m = marker("attach-sampling");
    let config = everything_config(&m);
    let (_daemon, socket) = daemon(&config);
    let dir = config.path.parent().unwrap().to_path_buf();
    let t = attached(&dir, &config.path, &socket);
    let mut api = Console::connect(&socket);
    api.initialize("api");

    let (call, _) = trigger(&mut api, "what is 2 plus 3");
    let screen = t.wait_for("everything asks for a model's message", WAIT);
    assert!(
        screen.contains("You are a helpful test server."),
        "{screen}"
    );
    // `y`: the daemon's model answers (the console has no model of its own here).
    t.keys(&["y"]);
    let screen = t.wait_for("answer of demo", WAIT);
    assert!(screen.contains("(demo model)"), "{screen}");
    t.text(" Checked in the console.");
    t.wait_for("· edited", WAIT);
    t.keys(&["C-s"]);
    let done = api.answer(call);
    assert_eq!(done["result"]["status"], "ok", "{done}");
    let result = done["result"]["result"]["text"].as_str().unwrap();
    assert!(result.contains("Checked in the console."), "{result}");
    assert!(result.contains("\"model\": \"demo\""), "{result}");
    // It has left the console: the notice says where it went, and the modal is gone.
    let screen = t.wait_for("sent the model's answer to everything", WAIT);
    assert!(!screen.contains("answer of demo"), "{screen}");
}
