//! The agent in the daemon, end to end: a console's prompt runs on the daemon's runtime, its
//! mutating call asks every console and another console approves it; a console that detaches
//! while a slow call runs finds it ended ok when it attaches again; after a SIGKILL, the model
//! endpoint is gone and the next daemon goes on with the session from its transcript; sessions
//! share one endpoint, started again after it died and kept after it refused a request; past
//! the sessions it holds, the daemon lets the idle one used longest ago go, and a prompt naming
//! it resumes it from its transcript.

mod common;

use std::path::Path;

use common::daemon::{agent_config, daemon, daemon_at, is_event, notes_config, Console};
use serde_json::{json, Value};

fn agent_event(message: &Value, kind: &str) -> bool {
    message["method"] == "agent" && message["params"]["event"]["type"] == kind
}

/// The records of session `id` under the daemon's state folder (beside its socket).
fn records(socket: &Path, id: &str) -> Vec<Value> {
    let file = socket
        .parent()
        .unwrap()
        .join(format!("aimon-console/sessions/{id}.jsonl"));
    std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `pid`'s state and parent, from `/proc/<pid>/stat`.
fn stat(pid: i32) -> Option<(String, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.rsplit(')').next()?.split_whitespace();
    let state = fields.next()?.to_string();
    Some((state, fields.next()?.parse().ok()?))
}

/// Whether `pid` runs (a zombie has ended).
fn running(pid: i32) -> bool {
    stat(pid).is_some_and(|(state, _)| state != "Z")
}

/// Whether `pid` has ended within 10 s.
fn ended(pid: i32) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while running(pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    !running(pid)
}

/// The running processes `parent` started whose command line holds `word`.
fn started_by(parent: u32, word: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| stat(*pid).is_some_and(|(state, ppid)| ppid == parent && state != "Z"))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(word))
        })
        .collect()
}

#[test]
fn a_prompt_runs_in_the_daemon_another_console_approves_and_a_killed_daemons_session_goes_on() {
    let config = agent_config();
    let (mut first, socket) = daemon(&config);
    let mut a = Console::connect(&socket);
    let mut b = Console::connect(&socket);
    a.initialize("console-a");
    b.initialize("console-b");
    a.ready("notes");

    // A's prompt makes the agent ask for a mutating call: B approves it.
    let prompt = a.send("prompt", json!({"text": "save a note called t1 saying hi"}));
    let asked = b.until("the agent's approval", |m| {
        is_event(m, "approval_requested")
    });
    assert_eq!(asked["params"]["origin"]["by"], "agent");
    assert_eq!(
        asked["params"]["origin"]["reason"],
        "(demo model) I will save the note \"t1\"."
    );
    let id = asked["params"]["id"].as_u64().unwrap();
    b.call("approve", json!({"id": id, "decision": "allow_once"}));
    let told = a.until("who approved", |m| m["method"] == "answered");
    assert_eq!(told["params"]["by"]["name"], "console-b");
    // The answer to the request and the agent's last events come in either order.
    let (mut answer, mut done) = (Value::Null, Value::Null);
    while answer.is_null() || done.is_null() {
        let message = a.read();
        if agent_event(&message, "answer") {
            answer = message;
        } else if message["id"] == prompt {
            done = message;
        }
    }
    assert_eq!(
        answer["params"]["event"]["text"],
        "(demo model) Done: saved note \"t1\"."
    );
    assert_eq!(done["result"]["outcome"], "answered", "{done}");
    let session = done["result"]["session"].as_str().unwrap().to_string();
    assert_eq!(answer["params"]["session"], session.as_str());
    // B saw the same conversation.
    b.until("the answer in B", |m| agent_event(m, "answer"));

    // A detaches while a slow call of the session runs; it ends ok meanwhile.
    a.send(
        "prompt",
        json!({"text": "wait 1 seconds", "session": session}),
    );
    a.until("the slow call", |m| is_event(m, "call_started"));
    drop(a);
    b.until("the slow call's end", |m| {
        is_event(m, "call_finished") && m["params"]["status"] == "ok"
    });
    b.until("the answer after it", |m| {
        agent_event(m, "answer")
            && m["params"]["event"]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("(demo model) Done waiting"))
    });
    let mut back = Console::connect(&socket);
    let hello = back.initialize("console-a");
    let recent = hello["recent"].as_array().unwrap();
    assert!(recent
        .iter()
        .any(|m| is_event(m, "call_finished") && m["params"]["status"] == "ok"));
    assert!(recent.iter().any(|m| agent_event(m, "answer")
        && m["params"]["event"]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("(demo model) Done waiting"))));
    assert_eq!(
        back.call("sessions", json!({}))["result"]["sessions"],
        json!([session])
    );

    // A SIGKILL, then a new daemon: the session goes on from its transcript, and the model
    // endpoint the first daemon started for it ends with it (the kernel kills it when its
    // parent dies).
    let models = started_by(first.0.id(), "demo-model");
    assert_eq!(models.len(), 1, "the first daemon's model: {models:?}");
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    unsafe { libc::kill(first.0.id() as i32, libc::SIGKILL) };
    first.0.wait().unwrap();
    assert!(ended(models[0]), "the first daemon's model outlived it");
    let (_second, socket) = daemon_at(&config, &socket, &[]);
    let mut c = Console::connect(&socket);
    c.initialize("console-c");
    c.ready("notes");
    let again = c.call(
        "prompt",
        json!({"text": "what is 2 plus 3", "session": session}),
    );
    assert_eq!(again["result"]["outcome"], "answered", "{again}");
    assert_eq!(again["result"]["session"], session.as_str());
    let kinds: Vec<String> = records(&socket, &session)
        .iter()
        .map(|r| r["type"].as_str().unwrap().to_string())
        .collect();
    let prompts = kinds.iter().filter(|k| *k == "prompt").count();
    assert_eq!(prompts, 3, "{kinds:?}");
    assert!(kinds.contains(&"resumed".to_string()), "{kinds:?}");
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("answer"),
        "{kinds:?}"
    );
}

#[test]
fn a_console_opens_its_session_first_and_stops_its_prompt() {
    let config = agent_config();
    let (_daemon, socket) = daemon(&config);
    let mut a = Console::connect(&socket);
    a.initialize("console-a");
    a.ready("notes");
    // Opened before any prompt: the console knows which `agent` events are its own.
    let opened = a.call("open_session", json!({"model": "demo"}));
    let session = opened["result"]["session"].as_str().unwrap().to_string();
    assert_eq!(
        a.call("sessions", json!({}))["result"]["sessions"],
        json!([session])
    );
    // Opening it again names the same session.
    let again = a.call("open_session", json!({"session": session}));
    assert_eq!(again["result"]["session"], session.as_str());
    // An unknown profile is said.
    let unknown = a.call("open_session", json!({"model": "nope"}));
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nope"),
        "{unknown}"
    );

    // A slow prompt, stopped from the console: it ends cancelled, its transcript says so.
    let prompt = a.send(
        "prompt",
        json!({"text": "wait 30 seconds", "session": session}),
    );
    a.until("the slow call", |m| is_event(m, "call_started"));
    let stopped = a.call("stop_prompt", json!({"session": session}));
    assert_eq!(stopped["result"]["stopped"], true, "{stopped}");
    let done = a.until("the prompt's end", |m| m["id"] == prompt);
    assert_eq!(done["result"]["outcome"], "cancelled", "{done}");
    // Nothing runs in it now.
    let idle = a.call("stop_prompt", json!({"session": session}));
    assert_eq!(idle["result"]["stopped"], false, "{idle}");
    let last = records(&socket, &session).pop().unwrap();
    assert_eq!(last["type"], "stopped", "{last}");
    assert_eq!(last["reason"], "cancelled", "{last}");
}

#[test]
fn sessions_share_one_model_endpoint_and_one_that_died_is_started_again() {
    let config = agent_config();
    let (daemon, socket) = daemon(&config);
    let mut a = Console::connect(&socket);
    a.initialize("console-a");
    a.ready("notes");
    let open = |a: &mut Console| {
        let opened = a.call("open_session", json!({"model": "demo"}));
        opened["result"]["session"].as_str().unwrap().to_string()
    };
    let (one, two) = (open(&mut a), open(&mut a));
    assert_ne!(one, two);
    let models = started_by(daemon.0.id(), "demo-model");
    assert_eq!(
        models.len(),
        1,
        "one endpoint for both sessions: {models:?}"
    );
    let ask = |a: &mut Console, session: &str| {
        let done = a.call(
            "prompt",
            json!({"text": "what is 2 plus 3", "session": session}),
        );
        done["result"]["outcome"].as_str().unwrap().to_string()
    };
    assert_eq!(ask(&mut a, &one), "answered");

    // The endpoint dies: the next prompt fails, and the one after it has a new endpoint, which
    // the other session's next prompt speaks to as well.
    // SAFETY: kill has no memory preconditions; the pid is the daemon's child.
    unsafe { libc::kill(models[0], libc::SIGKILL) };
    assert!(ended(models[0]), "the killed model still runs");
    assert_eq!(ask(&mut a, &two), "model_failed");
    assert_eq!(ask(&mut a, &two), "answered");
    assert_eq!(ask(&mut a, &one), "answered");
    let again = started_by(daemon.0.id(), "demo-model");
    assert_eq!(again.len(), 1, "one endpoint again: {again:?}");
    assert_ne!(again, models);
}

/// A model server that refuses a request (an error status) but runs on is kept: the next
/// prompt goes to the same process. Starting it again would load the model again, and this
/// one refuses the first request of each process, so a new one would refuse again.
#[test]
fn a_model_endpoint_that_refused_a_request_is_kept() {
    let bin = common::bin();
    let config = notes_config(&format!(
        "agent:
  models:
    demo:
      command: {bin}
      args: [demo-model, --prefer-server, notes, --status, '400', --times, '1']
      model: demo
      request_timeout: 10s
"
    ));
    let (daemon, socket) = daemon(&config);
    let mut a = Console::connect(&socket);
    a.initialize("console-a");
    a.ready("notes");
    let opened = a.call("open_session", json!({"model": "demo"}));
    let session = opened["result"]["session"].as_str().unwrap().to_string();
    let models = started_by(daemon.0.id(), "demo-model");
    assert_eq!(models.len(), 1, "{models:?}");
    let mut ask = || {
        let done = a.call(
            "prompt",
            json!({"text": "what is 2 plus 3", "session": session}),
        );
        done["result"].clone()
    };
    let refused = ask();
    assert_eq!(refused["outcome"], "model_failed", "{refused}");
    assert_eq!(refused["error"]["class"], "http_status", "{refused}");
    let answered = ask();
    assert_eq!(answered["outcome"], "answered", "{answered}");
    assert_eq!(started_by(daemon.0.id(), "demo-model"), models);
}

/// The daemon holds at most `daemon.sessions` sessions: one more, and the idle one used
/// longest ago is let go; a prompt naming it goes on with it, read back from its transcript,
/// with the profile it used (not the default one).
#[test]
fn past_the_sessions_held_the_oldest_idle_one_is_let_go_and_resumed_when_named() {
    let held = 3;
    let bin = common::bin();
    let config = notes_config(&format!(
        "daemon:
  sessions: {held}
agent:
  default: demo
  models:
    demo:
      command: {bin}
      args: [demo-model, --prefer-server, notes]
      model: demo
    second:
      command: {bin}
      args: [demo-model, --prefer-server, notes]
      model: second
"
    ));
    let (_daemon, socket) = daemon(&config);
    let mut a = Console::connect(&socket);
    a.initialize("console-a");
    a.ready("notes");
    let prompt = |a: &mut Console, session: Option<&str>| {
        let mut params = json!({"text": "what is 2 plus 3"});
        if let Some(session) = session {
            params["session"] = json!(session);
        }
        let done = a.call("prompt", params);
        assert_eq!(done["result"]["outcome"], "answered", "{done}");
        done["result"]["session"].as_str().unwrap().to_string()
    };
    let opened = a.call("open_session", json!({"model": "second"}));
    let first = opened["result"]["session"].as_str().unwrap().to_string();
    assert_eq!(prompt(&mut a, Some(&first)), first);
    let mut ids = vec![first.clone()];
    for _ in 0..held {
        let opened = a.call("open_session", json!({"model": "demo"}));
        ids.push(opened["result"]["session"].as_str().unwrap().to_string());
    }
    let listed = |a: &mut Console| -> Vec<String> {
        let listed = a.call("sessions", json!({}));
        serde_json::from_value(listed["result"]["sessions"].clone()).unwrap()
    };
    let now = listed(&mut a);
    assert_eq!(now.len(), held, "{now:?}");
    assert!(!now.contains(&first), "the oldest is let go: {now:?}");
    // Named again: resumed from its transcript, its history there (the model sees the answer
    // before), and now held in place of the next oldest.
    assert_eq!(prompt(&mut a, Some(&first)), first);
    let written = records(&socket, &first);
    let kinds: Vec<&Value> = written.iter().map(|r| &r["type"]).collect();
    let resumed: Vec<&Value> = written.iter().filter(|r| r["type"] == "resumed").collect();
    assert_eq!(resumed.len(), 1, "{kinds:?}");
    assert_eq!(resumed[0]["profile"], "second", "{:?}", resumed[0]);
    assert_eq!(
        kinds.iter().filter(|k| **k == "answer").count(),
        2,
        "{kinds:?}"
    );
    let now = listed(&mut a);
    assert_eq!(now.len(), held, "{now:?}");
    assert!(now.contains(&first) && !now.contains(&ids[1]), "{now:?}");
}
