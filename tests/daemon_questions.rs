//! A server's question (elicitation) through `aimon-console daemon`: the real binary on a real
//! Unix socket, the demo server's `ask` asking, consoles speaking the operator API from this
//! test. Every console is asked; content the form refuses is refused and the question waits;
//! the first answer reaches the server and every console is told who gave it; a later answer
//! is refused, naming who came first; a console attaching meanwhile is asked too.

mod common;

use common::daemon::{is_event, notes_daemon, Console};
use serde_json::json;

#[test]
fn a_servers_question_asks_every_console_and_the_first_answer_reaches_the_server() {
    let (_config, _daemon, socket, mut a) =
        notes_daemon("daemon-question", &["--live-tools"], "console-a");
    let mut b = Console::connect(&socket);
    b.initialize("console-b");

    // A calls `ask` (read-only, trusted: no approval): its form is asked of both consoles.
    let call = a.send(
        "call",
        json!({"tool": "mcp__notes__ask", "arguments": {"question": "Name the note"}}),
    );
    let asked_a = a.until("the question in A", |m| {
        is_event(m, "elicitation_requested")
    });
    let asked_b = b.until("the question in B", |m| {
        is_event(m, "elicitation_requested")
    });
    assert_eq!(asked_a["params"], asked_b["params"]);
    let asked = &asked_b["params"];
    assert_eq!(asked["server"], "notes");
    assert_eq!(asked["message"], "Name the note");
    assert_eq!(asked["mode"], "form");
    assert_eq!(asked["schema"]["required"], json!(["title"]));
    let id = asked["id"].as_u64().unwrap();

    // A console attaching while it waits is asked too.
    let mut c = Console::connect(&socket);
    let later = c.initialize("console-c");
    assert_eq!(
        later["elicitations"].as_array().unwrap().len(),
        1,
        "{later}"
    );
    assert_eq!(later["elicitations"][0], asked_b["params"], "{later}");

    // Content the form refuses (no title) is refused, and the question goes on waiting.
    let refused = b.call(
        "answer_elicitation",
        json!({"id": id, "action": "accept", "content": {"copies": 2}}),
    );
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Title is required"),
        "{refused}"
    );

    // B's answer is the first: the server has it, and A is told B gave it.
    let content = json!({"title": "from b", "copies": 2});
    let answered = b.call(
        "answer_elicitation",
        json!({"id": id, "action": "accept", "content": content}),
    );
    assert_eq!(answered["result"]["action"], "accept", "{answered}");
    assert_eq!(answered["result"]["by"]["name"], "console-b");
    let told = a.until("who answered", |m| m["method"] == "elicitation_answered");
    assert_eq!(told["params"]["id"], id);
    assert_eq!(told["params"]["by"]["name"], "console-b");
    let done = a.answer(call);
    assert_eq!(done["result"]["status"], "ok", "{done}");
    let text = done["result"]["result"]["text"].as_str().unwrap();
    assert!(text.starts_with("accepted: "), "{text}");
    assert!(text.contains("\"title\":\"from b\""), "{text}");

    // A's late answer is refused, naming B; nothing waits any more.
    let late = a.call("answer_elicitation", json!({"id": id, "action": "decline"}));
    assert_eq!(late["error"]["code"], -32010, "{late}");
    let why = late["error"]["message"].as_str().unwrap();
    assert!(why.contains("already answered by console-b"), "{why}");
    let mut d = Console::connect(&socket);
    assert_eq!(d.initialize("console-d")["elicitations"], json!([]));
}

#[test]
fn a_declined_question_is_declined_at_the_server() {
    // At 2025-11-25 the server asks with a request of its own (at 2026-07-28, inside the
    // call's result, as above).
    let (_config, _daemon, _socket, mut a) = notes_daemon(
        "daemon-question-decline",
        &["--live-tools", "--legacy"],
        "console-a",
    );
    let call = a.send("call", json!({"tool": "mcp__notes__ask", "arguments": {}}));
    let asked = a.until("the question", |m| is_event(m, "elicitation_requested"));
    let id = asked["params"]["id"].as_u64().unwrap();
    let bad = a.call("answer_elicitation", json!({"id": id, "action": "maybe"}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let declined = a.call("answer_elicitation", json!({"id": id, "action": "decline"}));
    assert_eq!(declined["result"]["action"], "decline", "{declined}");
    let done = a.answer(call);
    assert_eq!(done["result"]["result"]["text"], "declined", "{done}");
}

#[test]
fn a_question_whose_call_is_cancelled_is_withdrawn_from_every_console() {
    let (_config, _daemon, socket, mut a) =
        notes_daemon("daemon-question-withdrawn", &["--live-tools"], "console-a");
    let mut b = Console::connect(&socket);
    b.initialize("console-b");
    let call = a.send("call", json!({"tool": "mcp__notes__ask", "arguments": {}}));
    let started = a.until("the call", |m| is_event(m, "call_started"));
    let asked = b.until("the question", |m| is_event(m, "elicitation_requested"));
    let id = asked["params"]["id"].as_u64().unwrap();

    // A cancels the call: the question is withdrawn, and both consoles are told.
    let cancelled = a.call("cancel", json!({"id": started["params"]["id"]}));
    assert_eq!(cancelled["result"]["cancelled"], true, "{cancelled}");
    let told = b.until("the withdrawal", |m| m["method"] == "elicitation_withdrawn");
    assert_eq!(told["params"], json!({"id": id, "server": "notes"}));
    // A hears it too, and its call's answer (in either order).
    let (mut told, mut done) = (None, None);
    while told.is_none() || done.is_none() {
        let message = a.read();
        if message["method"] == "elicitation_withdrawn" {
            told = Some(message);
        } else if message["id"] == call {
            done = Some(message);
        }
    }
    assert_eq!(told.unwrap()["params"]["id"], id);
    let done = done.unwrap();
    assert_eq!(done["result"]["status"], "cancelled", "{done}");
    // An answer now reaches nobody, and says so.
    let late = b.call("answer_elicitation", json!({"id": id, "action": "decline"}));
    assert_eq!(late["error"]["code"], -32014, "{late}");
}
