//! The daemon's config written from a console: `approve` with `allow_always` writes the rule
//! (comments kept) before the call goes on, and the next call is let through by it; `trust`
//! writes a server's trust and starts it again with it; a file changed on disk since the
//! daemon loaded it is not written. `ledger` lists the rules and the session approvals;
//! `revoke` forgets a session approval and `remove_rule` takes a rule out of the file, and the
//! next call is asked again. `restart` starts a server from the file as it is now.

mod common;

use common::daemon::{daemon, is_event, Console};
use common::{bin, write_config};
use serde_json::json;

fn config() -> common::TempConfig {
    let bin = bin();
    write_config(&format!(
        "# the operator's own words, kept
mcp:
  servers:
    - name: notes   # a demo server
      command: {bin}
      args: [demo-server]
      annotation_trust: trust
"
    ))
}

/// A daemon on [`config`] and a console attached to it once `notes` is ready.
fn attached() -> (common::TempConfig, common::Background, Console) {
    let config = config();
    let (daemon, socket) = daemon(&config);
    let mut a = Console::connect(&socket);
    a.initialize("console-a");
    a.ready("notes");
    (config, daemon, a)
}

#[test]
fn allow_always_from_a_console_writes_the_rule_and_the_next_call_needs_no_question() {
    let (config, _daemon, mut a) = attached();
    let write = json!({"tool": "mcp__notes__write_note", "arguments": {"title": "t", "body": "b"}});
    let call = a.send("call", write.clone());
    let asked = a.until("the approval", |m| is_event(m, "approval_requested"));
    let id = asked["params"]["id"].as_u64().unwrap();
    let answer = a.call("approve", json!({"id": id, "decision": "allow_always"}));
    assert_eq!(
        answer["result"]["rule"], "always allow mcp__notes__write_note",
        "{answer}"
    );
    assert_eq!(a.answer(call)["result"]["status"], "ok");
    let text = std::fs::read_to_string(&config.path).unwrap();
    assert!(text.contains("# the operator's own words, kept"), "{text}");
    assert!(text.contains("# a demo server"), "{text}");
    assert!(text.contains("tool: mcp__notes__write_note"), "{text}");
    // The rule lets the next one through.
    let again = a.send("call", write);
    let allowed = a.until("the rule's pass", |m| is_event(m, "call_allowed"));
    assert!(
        allowed["params"]["why"].as_str().unwrap().contains("rule"),
        "{allowed}"
    );
    assert_eq!(a.answer(again)["result"]["status"], "ok");
}

#[test]
fn trust_from_a_console_is_written_and_applied_and_a_changed_file_is_left_alone() {
    let (config, _daemon, mut a) = attached();
    let echo = |a: &mut Console| tool(a, "mcp__notes__echo");
    assert_eq!(echo(&mut a)["side_effect"], "read_only");
    let set = a.call("trust", json!({"server": "notes", "trust": "ignore"}));
    assert_eq!(set["result"]["report"]["status"], "ready", "{set}");
    let text = std::fs::read_to_string(&config.path).unwrap();
    assert!(text.contains("annotation_trust: ignore"), "{text}");
    assert!(text.contains("# a demo server"), "{text}");
    // Its annotations are no longer believed: echo is taken as mutating.
    assert_eq!(echo(&mut a)["side_effect"], "mutating");
    assert_eq!(echo(&mut a)["trust"], "ignore");

    // The file changed by hand since: nothing written, and the console is told why.
    std::fs::write(&config.path, text.replace("# a demo server", "# edited")).unwrap();
    let refused = a.call("trust", json!({"server": "notes", "trust": "trust"}));
    assert_eq!(refused["error"]["code"], -32013, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("changed on disk"),
        "{refused}"
    );
    let unknown = a.call("trust", json!({"server": "nope", "trust": "trust"}));
    assert_eq!(unknown["error"]["code"], -32012, "{unknown}");
}

/// Calls `write_note` from `a` and answers its approval with `decision`.
fn write_note(a: &mut Console, decision: &str) {
    let call = a.send(
        "call",
        json!({"tool": "mcp__notes__write_note", "arguments": {"title": "t", "body": "b"}}),
    );
    let asked = a.until("the approval", |m| is_event(m, "approval_requested"));
    let id = asked["params"]["id"].as_u64().unwrap();
    let answer = a.call("approve", json!({"id": id, "decision": decision}));
    assert!(answer.get("error").is_none(), "{answer}");
    assert_eq!(a.answer(call)["result"]["status"], "ok");
}

#[test]
fn the_ledger_lists_rules_and_session_approvals_and_each_is_revoked_in_the_daemon() {
    let (config, _daemon, mut a) = attached();
    let empty = a.call("ledger", json!({}));
    assert_eq!(empty["result"], json!({"rules": [], "session": []}));

    // Allowed for the session: listed, then revoked.
    write_note(&mut a, "allow_for_session");
    let ledger = a.call("ledger", json!({}));
    let session = &ledger["result"]["session"];
    assert_eq!(session[0]["tool"], "mcp__notes__write_note", "{ledger}");
    assert!(session[0]["fingerprint"].is_string(), "{ledger}");
    let revoked = a.call("revoke", json!({"tool": "mcp__notes__write_note"}));
    assert_eq!(revoked["result"]["revoked"], true, "{revoked}");
    assert_eq!(a.call("ledger", json!({}))["result"]["session"], json!([]));

    // Always allowed: a rule in the file, listed; removed from the file, and asked again.
    write_note(&mut a, "allow_always");
    let ledger = a.call("ledger", json!({}));
    let rule = &ledger["result"]["rules"][0];
    assert_eq!(rule["tool"], "mcp__notes__write_note", "{ledger}");
    assert_eq!(rule["decision"], "allow", "{ledger}");
    assert!(
        rule["pin"].as_str().unwrap().starts_with("sha256:"),
        "{ledger}"
    );
    let removed = a.call("remove_rule", json!({"index": 0}));
    assert_eq!(removed["result"]["rules"], json!([]), "{removed}");
    let text = std::fs::read_to_string(&config.path).unwrap();
    assert!(!text.contains("tool: mcp__notes__write_note"), "{text}");
    assert!(text.contains("# a demo server"), "{text}");
    write_note(&mut a, "allow_once");
    let missing = a.call("remove_rule", json!({"index": 0}));
    assert_eq!(missing["error"]["code"], -32013, "{missing}");
}

/// The `tools` entry of `name` as the daemon lists it to `a`.
fn tool(a: &mut Console, name: &str) -> serde_json::Value {
    let tools = a.call("tools", json!({}));
    tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no {name} in {tools}"))
}

#[test]
fn a_restart_from_a_console_starts_the_server_from_the_file_as_it_is_now() {
    let (config, _daemon, mut a) = attached();
    let restart = |a: &mut Console| a.call("restart", json!({"server": "notes"}));

    // A trust written from a console holds through the next restart.
    let set = a.call("trust", json!({"server": "notes", "trust": "ignore"}));
    assert_eq!(set["result"]["report"]["status"], "ready", "{set}");
    let again = restart(&mut a);
    assert_eq!(again["result"]["report"]["status"], "ready", "{again}");
    assert_eq!(tool(&mut a, "mcp__notes__echo")["trust"], "ignore");

    // The entry changed by hand: the restart takes it (no annotations now, trust as written).
    let text = std::fs::read_to_string(&config.path).unwrap();
    let edited = text
        .replace(
            "args: [demo-server]",
            "args: [demo-server, --no-annotations]",
        )
        .replace("annotation_trust: ignore", "annotation_trust: trust");
    assert_ne!(edited, text);
    std::fs::write(&config.path, &edited).unwrap();
    let again = restart(&mut a);
    assert_eq!(again["result"]["report"]["status"], "ready", "{again}");
    let echo = tool(&mut a, "mcp__notes__echo");
    assert_eq!(echo["trust"], "trust", "{echo}");
    assert_eq!(echo["side_effect"], "mutating", "{echo}");

    // A file that does not load restarts nothing, and says where it is wrong.
    let started = |a: &mut Console| {
        let servers = a.call("servers", json!({}));
        servers["result"]["servers"][0]["started_at_ms"].clone()
    };
    let running = started(&mut a);
    assert!(running.as_u64().is_some(), "{running}");
    std::fs::write(&config.path, edited.replace("mcp:", "mcp: [")).unwrap();
    let refused = restart(&mut a);
    assert_eq!(refused["error"]["code"], -32017, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    let place = format!("{}:", config.path.display());
    assert!(message.contains(&place), "{message}");
    assert_eq!(started(&mut a), running, "the server was left as it ran");

    // A server gone from the file is not restarted either.
    std::fs::write(&config.path, edited.replace("name: notes", "name: others")).unwrap();
    let gone = restart(&mut a);
    assert_eq!(gone["error"]["code"], -32012, "{gone}");
    assert!(
        gone["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no longer in"),
        "{gone}"
    );
    assert_eq!(started(&mut a), running);
}
