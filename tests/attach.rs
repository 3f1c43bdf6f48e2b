//! `attach` end to end, in real terminals (tmux): two consoles attached to one daemon; a
//! prompt from A makes the agent ask for a mutating call; the approval shows in both; `y` in
//! B; A shows that B approved; A detaches while a slow call runs; the call finishes; A
//! attaches again and sees it ok; one console on two daemons answers each one's approvals
//! and restarts every server of both (`R`).

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::daemon::{agent_config, daemon};
use common::tmux::Tmux;
use common::{bin, write_config};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(20);

/// `aimon-console attach SOCKET` typed into `t`'s shell; returns once it shows the daemon's
/// server ready.
fn attach(t: &Tmux, config: &Path, socket: &Path, log: &Path) {
    t.text(&format!(
        "{} --config {} --log-file {} attach {}",
        bin(),
        config.display(),
        log.display(),
        socket.display()
    ));
    t.keys(&["Enter"]);
    t.wait_for("attached to the daemon", WAIT);
    t.wait_for("1/1 ready", WAIT);
}

/// A console attached to the daemon at `socket`, in a terminal of its own.
fn console(dir: &Path, config: &Path, socket: &Path, name: &str) -> Tmux {
    let t = Tmux::start(dir, 140, 40);
    attach(&t, config, socket, &dir.join(format!("{name}.log")));
    t
}

/// Waits until process `pid` is gone.
fn gone(pid: i32) {
    let start = Instant::now();
    while Path::new(&format!("/proc/{pid}/stat")).exists() {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if state.contains(") Z") {
            break;
        }
        assert!(start.elapsed() < WAIT, "console {pid} still runs");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn two_consoles_on_one_daemon_answer_its_approvals_and_a_detached_console_finds_what_ran_meanwhile()
{
    let config = agent_config();
    let (_daemon, socket) = daemon(&config);
    let dir = config.path.parent().unwrap().to_path_buf();
    let a = console(&dir, &config.path, &socket, "a");
    let b = console(&dir, &config.path, &socket, "b");

    // A's prompt makes the daemon's agent ask for a mutating call: both consoles ask.
    a.text("save a note called t1 saying hi");
    a.keys(&["Enter"]);
    let asked_a = a.wait_for("Approval needed", WAIT);
    let asked_b = b.wait_for_question("Approval needed", WAIT);
    for asked in [&asked_a, &asked_b] {
        assert!(asked.contains("mcp__notes__write_note"), "{asked}");
        assert!(asked.contains("asked   by the agent"), "{asked}");
    }
    // `y` in B: A is told that B (its pid) approved, and its question closes.
    b.keys(&["y"]);
    let told = a.wait_for("allowed once by console", WAIT);
    let b_pid = b.console_pid();
    assert!(told.contains(&format!("(pid {b_pid})")), "{told}");
    let done = a.wait_for("Done: saved note \"t1\"", WAIT);
    assert!(!done.contains("Approval needed"), "{done}");
    assert!(done.contains("write_note · notes ok"), "{done}");
    // B, which answered, says so in its own words.
    b.wait_for("allowed once by you", WAIT);

    // A detaches (Ctrl-C asks nothing: nothing of A's is cancelled) while a slow call runs.
    a.text("wait 3 seconds");
    a.keys(&["Enter"]);
    a.wait_for_row("slow · notes", "running");
    let a_pid = a.console_pid();
    a.keys(&["C-c"]);
    gone(a_pid);
    // The call goes on in the daemon and ends ok; B sees it.
    b.wait_for_row("slow · notes", "ok");

    // A attaches again: what ran meanwhile is there, ended ok.
    attach(&a, &config.path, &socket, &dir.join("a2.log"));
    let back = a.wait_for_row("slow · notes", "ok");
    assert!(back.contains("write_note · notes ok"), "{back}");
}

#[test]
fn over_tls_a_console_attaches_with_the_daemons_token_and_is_refused_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let bin = bin();
    let servers = format!(
        "mcp:\n  servers:\n    - name: notes\n      command: {bin}\n      args: [demo-server]\n"
    );
    let (_daemon, run, port, cert) = common::daemon::daemon_over_tls(dir.path(), &servers);
    let config = dir.path().join("aimon.yaml");
    let token = std::fs::read_to_string(run.join("aimon-console/daemon-token"))
        .expect("the token, made before the daemon said it listens");
    let t = Tmux::start(dir.path(), 140, 40);
    let attach = |env: &str| {
        t.text(&format!(
            "{env} {bin} --config {} --log-file {} attach tls://127.0.0.1:{port} --ca {}",
            config.display(),
            dir.path().join("console.log").display(),
            cert.display()
        ));
        t.keys(&["Enter"]);
    };
    // No token: said before anything is sent; a wrong one: the daemon's refusal.
    attach("");
    t.wait_for("over TCP the daemon wants its token", WAIT);
    attach(&format!("AIMON_DAEMON_TOKEN={}", "0".repeat(64)));
    t.wait_for("refused: unauthorized", WAIT);
    // The token (from the environment, never on the screen): attached.
    attach(&format!(
        "AIMON_DAEMON_TOKEN=$(cat {})",
        run.join("aimon-console/daemon-token").display()
    ));
    let screen = t.wait_for("1/1 ready", WAIT);
    assert!(
        screen.contains(&format!("attached to the daemon at tls://127.0.0.1:{port}")),
        "{screen}"
    );
    assert!(!screen.contains(token.trim()), "{screen}");
}

#[test]
fn one_console_on_two_daemons_shows_both_answers_each_ones_approvals_and_restarts_all() {
    let bin = bin();
    let markers = [common::marker("fleet-1"), common::marker("fleet-2")];
    let servers = |marker: &str| {
        let notes = common::demo_server("notes", &[], "annotation_trust: trust", marker);
        format!("mcp:\n  servers:\n{notes}")
    };
    let (one, two) = (
        write_config(&servers(&markers[0])),
        write_config(&servers(&markers[1])),
    );
    let (_first, a_socket) = daemon(&one);
    let (_second, b_socket) = daemon(&two);
    let dir = one.path.parent().unwrap().to_path_buf();
    let t = Tmux::start(&dir, 140, 40);
    t.text(&format!(
        "{bin} --config {} --log-file {} attach {} {}",
        one.path.display(),
        dir.join("fleet.log").display(),
        a_socket.display(),
        b_socket.display()
    ));
    t.keys(&["Enter"]);
    // Both daemons' servers, each named after its daemon (the folder of its socket).
    let screen = t.wait_for("2/2 ready", WAIT);
    assert!(screen.contains("attached to 2 daemons"), "{screen}");
    assert!(screen.contains("run-1/notes"), "{screen}");
    assert!(screen.contains("run-2/notes"), "{screen}");

    // A call on the second daemon asks this console, and its answer reaches that daemon.
    let mut b = common::daemon::Console::connect(&b_socket);
    b.initialize("api");
    let call = b.send(
        "call",
        json!({"tool": "mcp__notes__write_note", "arguments": {"title": "t", "body": "b"}}),
    );
    let asked = t.wait_for_question("Approval needed", WAIT);
    assert!(asked.contains("run-2:mcp__notes__write_note"), "{asked}");
    t.keys(&["y"]);
    let done = b.answer(call);
    assert_eq!(done["result"]["status"], "ok", "{done}");
    // Its call shows as the second daemon's (its id apart from the first's), ended ok.
    let screen = t.wait_for_row("run-2:mcp__notes", "ok");
    assert_eq!(screen.matches("run-1:read ").count(), 1, "{screen}");

    // `R` starts every server of both daemons again: each daemon's server process is new.
    let pids = || markers.each_ref().map(|m| common::processes_with(m));
    let before = pids();
    assert!(before.iter().all(|p| p.len() == 1), "{before:?}");
    t.keys(&["R"]);
    let start = Instant::now();
    while !pids()
        .iter()
        .zip(&before)
        .all(|(now, was)| now.len() == 1 && now != was)
    {
        assert!(
            start.elapsed() < WAIT,
            "not restarted: {before:?} {:?}",
            pids()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let screen = t.wait_for("2/2 ready", WAIT);
    assert!(!screen.contains("not available"), "{screen}");
}

/// A daemon of the demo server `notes` with its `ask` tool (`--live-tools`), trusted.
fn asking_daemon() -> (common::TempConfig, common::Background, std::path::PathBuf) {
    let bin = bin();
    let config = write_config(&format!(
        "mcp:\n  servers:\n    - name: notes\n      command: {bin}\n      args: [demo-server, --live-tools]\n      annotation_trust: trust\n"
    ));
    let (daemon, socket) = daemon(&config);
    (config, daemon, socket)
}

#[test]
fn a_servers_question_is_answered_in_one_console_and_leaves_the_other() {
    let (config, _daemon, socket) = asking_daemon();
    let dir = config.path.parent().unwrap().to_path_buf();
    let a = console(&dir, &config.path, &socket, "a");
    let b = console(&dir, &config.path, &socket, "b");

    // A call whose server asks a question: its form shows in both consoles.
    let mut api = common::daemon::Console::connect(&socket);
    api.initialize("api");
    let call = api.send(
        "call",
        json!({"tool": "mcp__notes__ask", "arguments": {"question": "Name the note"}}),
    );
    a.wait_for("notes asks for input", WAIT);
    let form = b.wait_for("notes asks for input", WAIT);
    assert!(form.contains("Name the note"), "{form}");
    // A console attaching while it waits is asked too.
    let c = console(&dir, &config.path, &socket, "c");
    c.wait_for("notes asks for input", WAIT);

    // The title typed in A reaches the server, whose result says it.
    a.text("from console a");
    a.keys(&["C-s"]);
    let done = api.answer(call);
    assert_eq!(done["result"]["status"], "ok", "{done}");
    let text = done["result"]["result"]["text"].as_str().unwrap();
    assert!(text.contains("\"title\":\"from console a\""), "{text}");

    // B is told that A (its pid) answered, and its form is gone.
    let told = b.wait_for("a server's question was answered (accept) by console", WAIT);
    assert!(
        told.contains(&format!("(pid {})", a.console_pid())),
        "{told}"
    );
    let screen = b.wait_for_row("ask · notes", "ok");
    assert!(!screen.contains("notes asks for input"), "{screen}");
    for other in [&a, &c] {
        let screen = other.wait_for_row("ask · notes", "ok");
        assert!(!screen.contains("notes asks for input"), "{screen}");
    }
}

#[test]
fn a_console_attaches_from_a_machine_with_no_config_file() {
    let config = agent_config();
    let (_daemon, socket) = daemon(&config);
    // A folder, home and config home with no config in them, and none named.
    let empty = tempfile::tempdir().unwrap();
    let here = empty.path().display();
    let t = Tmux::start(empty.path(), 140, 40);
    t.text(&format!(
        "env -u AIMON_CONFIG HOME={here} XDG_CONFIG_HOME={here}/config {} --log-file {here}/log attach {}",
        bin(),
        socket.display()
    ));
    t.keys(&["Enter"]);
    t.wait_for("attached to the daemon", WAIT);
    let screen = t.wait_for("1/1 ready", WAIT);
    assert!(screen.contains("notes"), "{screen}");
    // Nothing was written for it.
    assert!(!empty.path().join("aimon.yaml").exists());
}

#[test]
fn an_attached_console_reads_a_daemons_resources_gets_its_prompts_and_sets_log_levels() {
    let config = agent_config();
    let (_daemon, socket) = daemon(&config);
    let dir = config.path.parent().unwrap().to_path_buf();
    let t = console(&dir, &config.path, &socket, "content");
    // The Resources pane lists the daemon's server's (Alt-6: the Conversation's input has the
    // keys); Enter reads one through the daemon.
    t.keys(&["M-6"]);
    t.wait_for("demo://readme", WAIT);
    t.keys(&["Enter"]);
    let screen = t.wait_for("# aimon demo server", WAIT);
    assert!(screen.contains("notes · README"), "{screen}");
    t.keys(&["Escape"]);
    // The Prompts pane: `hello`, got through the daemon.
    t.keys(&["M-7"]);
    t.wait_for("hello", WAIT);
    t.keys(&["Down", "Enter"]);
    t.wait_for("Say hello to the operator.", WAIT);
    t.keys(&["Escape"]);
    // `l` on the server in the Servers pane: its log level, set in the daemon.
    t.keys(&["M-1"]);
    t.keys(&["l"]);
    t.wait_for("notes now sends log messages at", WAIT);
}

#[test]
fn a_question_its_server_withdraws_leaves_the_console() {
    let (config, _daemon, socket) = asking_daemon();
    let dir = config.path.parent().unwrap().to_path_buf();
    let t = console(&dir, &config.path, &socket, "withdrawn");
    let mut api = common::daemon::Console::connect(&socket);
    api.initialize("api");
    api.send("call", json!({"tool": "mcp__notes__ask", "arguments": {}}));
    let started = api.until("the call", |m| {
        m["method"] == "event" && m["params"]["type"] == "call_started"
    });
    t.wait_for("notes asks for input", WAIT);
    // The call is cancelled: its server's question leaves the console, which says so.
    api.call("cancel", json!({"id": started["params"]["id"]}));
    t.wait_for("notes withdrew its question", WAIT);
    let screen = t.wait_for_row("ask · notes", "cancelled");
    assert!(!screen.contains("notes asks for input"), "{screen}");
}

/// Writes note `title` through the daemon from `api`, answering its approval there with
/// `decision`.
fn write_note(api: &mut common::daemon::Console, (title, body): (&str, &str), decision: &str) {
    let call = api.send(
        "call",
        json!({"tool": "mcp__notes__write_note", "arguments": {"title": title, "body": body}}),
    );
    let asked = api.until("the approval", |m| {
        m["method"] == "event" && m["params"]["type"] == "approval_requested"
    });
    let id = asked["params"]["id"].clone();
    let answer = api.call("approve", json!({"id": id, "decision": decision}));
    assert!(answer.get("error").is_none(), "{answer}");
    let done = api.answer(call);
    assert_eq!(done["result"]["status"], "ok", "{done}");
}

#[test]
fn an_attached_console_subscribes_to_a_daemons_resource_and_sees_its_updates() {
    let config = agent_config();
    let (_daemon, socket) = daemon(&config);
    let dir = config.path.parent().unwrap().to_path_buf();
    let t = console(&dir, &config.path, &socket, "subscribe");
    let mut api = common::daemon::Console::connect(&socket);
    api.initialize("api");
    t.keys(&["M-6"]);
    t.wait_for("demo://readme", WAIT);
    // A note written through the daemon: its server's resource list changed, and the
    // console's Resources pane lists it again through the daemon.
    write_note(&mut api, ("plan", "first"), "allow_once");
    t.wait_for("demo://notes/plan", WAIT);
    // `s` on it: subscribed in the daemon (readme, logo, then the note).
    t.keys(&["Down", "Down", "s"]);
    t.wait_for("subscribed to demo://notes/plan", WAIT);
    t.wait_for_row("demo://notes/plan", "◉");
    // Written again: the server's update reaches the console, which marks the row.
    write_note(&mut api, ("plan", "second"), "allow_once");
    t.wait_for_row("demo://notes/plan", "◉*");
}

#[test]
fn l_in_an_attached_console_lists_the_daemons_rules_and_approvals_and_revokes_them_there() {
    let config = common::daemon::notes_config("");
    let (_daemon, socket) = daemon(&config);
    let dir = config.path.parent().unwrap().to_path_buf();
    let t = console(&dir, &config.path, &socket, "ledger");
    let mut api = common::daemon::Console::connect(&socket);
    api.initialize("api");

    // Allowed for the daemon's session: `L` (out of the Conversation's input first) lists it;
    // `d` revokes it in the daemon.
    write_note(&mut api, ("t", "b"), "allow_for_session");
    // Alt-1 in a send of its own: sent with the next key, the two came in one read under load
    // and the console took neither (the ledger did not open in 4 of 5 runs beside a busy loop).
    t.keys(&["M-1"]);
    t.keys(&["L"]);
    t.wait_for_row("mcp__notes__write_note", "this session (a)");
    t.keys(&["d"]);
    t.wait_for(
        "revoked the session approval of mcp__notes__write_note",
        WAIT,
    );
    t.wait_for("No rule and no session approval.", WAIT);
    let ledger = api.call("ledger", json!({}));
    assert_eq!(ledger["result"]["session"], json!([]), "{ledger}");

    // Always allowed: a rule in the daemon's file, listed as its once `L` closes the list and
    // opens it again; `d` twice takes it out.
    write_note(&mut api, ("t", "b"), "allow_always");
    t.keys(&["L", "L"]);
    t.wait_for_row("mcp__notes__write_note", "policy.rules[0] of daemon");
    t.keys(&["d"]);
    t.wait_for("d again removes policy.rules[0] of daemon", WAIT);
    t.keys(&["d"]);
    t.wait_for("removed the rule from the daemon's config file", WAIT);
    t.wait_for("No rule and no session approval.", WAIT);
    let text = std::fs::read_to_string(&config.path).unwrap();
    assert!(!text.contains("tool: mcp__notes__write_note"), "{text}");
}
