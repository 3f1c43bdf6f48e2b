//! A server's resources and prompts through `aimon-console daemon`: the real binary on a real
//! Unix socket, the demo server behind it, a console speaking the operator API from this test.
//! Listed, read, completed and got as the headless commands print them, a server's log level
//! set; a server the daemon does not have, or params that are not right, get the API's errors.

mod common;

use common::daemon::notes_daemon;
use serde_json::json;

#[test]
fn a_console_lists_reads_completes_and_gets_a_servers_resources_and_prompts() {
    let (_config, _daemon, _socket, mut a) = notes_daemon("daemon-content", &[], "console-a");

    let listed = a.call("resources", json!({"server": "notes"}));
    let resources = listed["result"]["resources"].as_array().unwrap();
    assert!(
        resources
            .iter()
            .any(|r| r["uri"] == "demo://readme" && r["server"] == "notes"),
        "{listed}"
    );
    let templates = listed["result"]["templates"].as_array().unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t["uri_template"] == "demo://notes/{title}"),
        "{listed}"
    );

    let read = a.call("read", json!({"server": "notes", "uri": "demo://readme"}));
    let part = &read["result"]["contents"][0];
    assert_eq!(part["uri"], "demo://readme", "{read}");
    assert!(
        part["text"]
            .as_str()
            .unwrap()
            .contains("# aimon demo server"),
        "{read}"
    );

    let prompts = a.call("prompts", json!({"server": "notes"}));
    let names: Vec<&str> = prompts["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"hello") && names.contains(&"summarize"),
        "{prompts}"
    );
    let style = a.call(
        "complete",
        json!({"server": "notes", "prompt": "summarize", "argument": "style", "value": "de"}),
    );
    assert_eq!(style["result"]["values"], json!(["detailed"]), "{style}");
    let got = a.call("get_prompt", json!({"server": "notes", "name": "hello"}));
    assert_eq!(got["result"]["description"], "A greeting.", "{got}");
    assert_eq!(
        got["result"]["messages"][0]["text"],
        "Say hello to the operator."
    );

    // The level of the log messages the server sends.
    let set = a.call(
        "set_log_level",
        json!({"server": "notes", "level": "warning"}),
    );
    assert_eq!(
        set["result"],
        json!({"server": "notes", "level": "warning"}),
        "{set}"
    );
    let loud = a.call("set_log_level", json!({"server": "notes", "level": "loud"}));
    assert_eq!(loud["error"]["code"], -32602, "{loud}");
    let nobody = a.call("set_log_level", json!({"server": "nope", "level": "info"}));
    assert_eq!(nobody["error"]["code"], -32012, "{nobody}");

    // What the API refuses.
    let unknown = a.call("resources", json!({"server": "nope"}));
    assert_eq!(unknown["error"]["code"], -32012, "{unknown}");
    let no_uri = a.call("read", json!({"server": "notes"}));
    assert_eq!(no_uri["error"]["code"], -32602, "{no_uri}");
    let missing = a.call("read", json!({"server": "notes", "uri": "demo://nothing"}));
    assert_eq!(missing["error"]["code"], -32015, "{missing}");
    let bad = a.call(
        "get_prompt",
        json!({"server": "notes", "name": "hello", "arguments": {"n": 3}}),
    );
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
}
