//! `aimon-console daemon` end to end: the real binary on a real Unix socket, consoles speaking
//! its operator API (docs/daemon.md) from this test. Two consoles see the same approval, the
//! first answer wins and the other is told who gave it; a console that stops reading loses
//! its own events (counted and said) and holds up nobody; the socket is its owner's alone;
//! SIGTERM tells the consoles, closes every server and removes the socket.

mod common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::daemon::{
    daemon, daemon_at, daemon_over_tls, daemon_with, is_event, notes_daemon, Console,
};
use common::{bin, demo_server, marker, write_config};
use serde_json::{json, Value};

#[test]
fn two_consoles_see_one_approval_the_first_answer_wins_and_the_other_is_told_who() {
    let mark = marker("daemon-approve");
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}",
        demo_server("notes", &[], "annotation_trust: trust", &mark)
    ));
    let (_daemon, socket) = daemon(&config);
    let mut a = Console::connect(&socket);
    let mut b = Console::connect(&socket);
    let hello = a.initialize("console-a");
    assert_eq!(hello["protocol_version"], 1);
    assert_eq!(hello["you"]["pid"], std::process::id());
    b.initialize("console-b");
    a.ready("notes");

    // A calls a mutating tool: the approval shows in both consoles.
    let call = a.send(
        "call",
        json!({"tool": "mcp__notes__write_note", "arguments": {"title": "t", "body": "b"}}),
    );
    let asked_a = a.until("the approval in A", |m| is_event(m, "approval_requested"));
    let asked_b = b.until("the approval in B", |m| is_event(m, "approval_requested"));
    assert_eq!(asked_a["params"], asked_b["params"]);
    let id = asked_b["params"]["id"].as_u64().unwrap();
    assert_eq!(asked_b["params"]["tool"]["name"], "mcp__notes__write_note");

    // B answers first.
    let approved = b.call("approve", json!({"id": id, "decision": "allow_once"}));
    assert_eq!(
        approved["result"],
        json!({"id": id, "decision": "allow_once"})
    );
    // A is told that B approved, and gets its call's result.
    let told = a.until("who answered", |m| m["method"] == "answered");
    assert_eq!(told["params"]["id"], id);
    assert_eq!(told["params"]["decision"], "allow_once");
    assert_eq!(told["params"]["by"]["name"], "console-b");
    let done = a.answer(call);
    assert_eq!(done["result"]["status"], "ok", "{done}");
    assert_eq!(done["result"]["result"]["text"], "saved note \"t\"");
    // A's late answer is refused, naming B.
    let late = a.call("approve", json!({"id": id, "decision": "deny"}));
    assert_eq!(late["error"]["code"], -32010, "{late}");
    let why = late["error"]["message"].as_str().unwrap();
    assert!(
        why.contains("already answered by console-b tester@here"),
        "{why}"
    );

    // A console attaching later is given what happened meanwhile.
    let mut c = Console::connect(&socket);
    let later = c.initialize("console-c");
    let recent = later["recent"].as_array().unwrap();
    assert!(recent
        .iter()
        .any(|m| is_event(m, "call_finished") && m["params"]["status"] == "ok"));
    assert!(recent.iter().any(|m| m["method"] == "answered"));
    assert_eq!(later["approvals"], json!([]));
}

#[test]
fn the_api_refuses_what_is_not_a_request_and_asks_for_initialize_first() {
    let config = write_config("mcp:\n  servers: []\n");
    let (_daemon, socket) = daemon(&config);
    let mut a = Console::connect(&socket);
    let early = a.call("servers", json!({}));
    assert_eq!(early["error"]["code"], -32002);
    writeln!(a.out, "this is not json").unwrap();
    assert_eq!(a.read()["error"]["code"], -32700);
    // Over the line limit: refused, and the connection goes on.
    let long = format!("{{\"pad\":\"{}\"}}", "x".repeat(1 << 20));
    writeln!(a.out, "{long}").unwrap();
    assert_eq!(a.read()["error"]["code"], -32600);
    let wrong = a.call("initialize", json!({"protocol_version": 99}));
    assert_eq!(wrong["error"]["code"], -32003);
    a.initialize("console-a");
    assert_eq!(a.call("nope", json!({}))["error"]["code"], -32601);
    assert_eq!(a.call("ping", json!({}))["result"], json!({}));
}

#[test]
fn a_console_that_stops_reading_loses_its_own_events_counted_and_holds_up_nobody() {
    let mark = marker("daemon-flood");
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}",
        demo_server("flood", &["--flood-stderr"], "", &mark)
    ));
    let (_daemon, socket) = daemon(&config);
    let mut stuck = Console::connect(&socket);
    stuck.initialize("stuck");
    let mut reader = Console::connect(&socket);
    reader.initialize("reader");
    // The reader goes on receiving far more than the stuck console's queue and socket hold.
    let mut seen = 0;
    while seen < 3 * daemon_queue() {
        if is_event(&reader.read(), "stderr") {
            seen += 1;
        }
    }
    // The stuck console, reading again, is told how many it lost.
    let lost = stuck.until("the count of what it lost", |m| m["method"] == "dropped");
    assert!(lost["params"]["count"].as_u64() > Some(0), "{lost}");
    // And it still gets events after the gap.
    stuck.until("an event after the gap", |m| is_event(m, "stderr"));
}

/// docs/daemon.md's bound of events queued for one console.
fn daemon_queue() -> usize {
    aimon_console::daemon::CONSOLE_QUEUE
}

/// Python, as user nobody, connecting to `socket`: what it printed (the daemon's first line)
/// and wrote on stderr.
fn connect_as_nobody(socket: &Path) -> (bool, String, String) {
    use std::os::unix::process::CommandExt;
    let out = Command::new("python3")
        .args([
            "-c",
            "import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); \
             s.settimeout(10); print(s.recv(4096).decode())",
        ])
        .arg(socket)
        .uid(65534)
        .gid(65534)
        .output()
        .expect("python3 as nobody (the tests run as root, as in CI)");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn the_socket_is_its_owners_alone() {
    let config = write_config("mcp:\n  servers: []\n");
    // The daemon makes the socket's folder itself.
    let socket = config.dir.path().join("fresh/run/daemon.sock");
    let child = Command::new(bin())
        .arg("--config")
        .arg(&config.path)
        .arg("--log-file")
        .arg(config.dir.path().join("daemon.log"))
        .args(["daemon", "--socket"])
        .arg(&socket)
        .env("XDG_STATE_HOME", config.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (_daemon, said) = common::listening(child);
    assert_eq!(said, socket.display().to_string());
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&socket), 0o600);
    assert_eq!(mode(socket.parent().unwrap()), 0o700);
    // Another user (nobody) cannot connect.
    let (ok, _, said) = connect_as_nobody(&socket);
    assert!(!ok);
    assert!(said.contains("Permission denied"), "{said}");
    // A second daemon on the same socket is refused, and says why.
    let second = Command::new(bin())
        .arg("--config")
        .arg(&config.path)
        .args(["daemon", "--socket"])
        .arg(&socket)
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(1));
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(said.contains("a daemon already listens on"), "{said}");
    // Opened up behind the daemon's back (the socket, its folder, the one the daemon made
    // above it and the test's own), the socket still takes only its owner: the peer's
    // credentials are checked.
    for dir in socket.ancestors().skip(1).take(3) {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711)).unwrap();
    }
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let (ok, answer, said) = connect_as_nobody(&socket);
    assert!(ok, "{said}");
    assert!(
        answer.contains("refused: uid 65534 is not the daemon's owner"),
        "{answer}"
    );
}

#[test]
fn sigterm_tells_the_consoles_closes_every_server_and_removes_the_socket() {
    let mark = marker("daemon-term");
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}{}",
        demo_server("one", &[], "", &mark),
        demo_server("two", &[], "", &mark)
    ));
    let (mut daemon, socket) = daemon(&config);
    let mut a = Console::connect(&socket);
    a.initialize("console-a");
    a.ready("one");
    a.ready("two");
    assert_eq!(common::processes_with(&mark).len(), 2);
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    unsafe { libc::kill(daemon.0.id() as i32, libc::SIGTERM) };
    a.until("closing", |m| m["method"] == "closing");
    let status = daemon.0.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(!socket.exists());
    assert_eq!(common::processes_with(&mark), Vec::<i32>::new());
}

#[test]
fn systemd_hears_ready_once_it_listens_and_stopping_when_it_stops() {
    let config = write_config("mcp:\n  servers: []\n");
    let notify_at = config.dir.path().join("notify.sock");
    let systemd = std::os::unix::net::UnixDatagram::bind(&notify_at).unwrap();
    systemd
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let (mut daemon, socket) = daemon_with(&config, &[("NOTIFY_SOCKET", &notify_at)]);
    let mut said = [0u8; 256];
    let n = systemd.recv(&mut said).expect("READY=1");
    let pid = daemon.0.id();
    assert_eq!(
        String::from_utf8_lossy(&said[..n]),
        format!("READY=1\nMAINPID={pid}")
    );
    // Ready means ready: a console is served at once.
    let mut a = Console::connect(&socket);
    a.initialize("console-a");
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let n = systemd.recv(&mut said).expect("STOPPING=1");
    assert_eq!(
        String::from_utf8_lossy(&said[..n]),
        format!("STOPPING=1\nMAINPID={pid}")
    );
    assert_eq!(daemon.0.wait().unwrap().code(), Some(0));
}

#[test]
fn after_a_sigkill_the_next_daemon_ends_what_the_first_left_and_starts_the_servers_again() {
    let mark = marker("daemon-kill");
    // A server whose child ignores SIGTERM and outlives it: what a killed daemon leaves.
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}",
        demo_server("notes", &["--child-ignores-term", "1000"], "", &mark)
    ));
    let (mut first, socket) = daemon(&config);
    let mut a = Console::connect(&socket);
    a.initialize("console-a");
    a.ready("notes");
    let before = common::processes_with(&mark);
    assert_eq!(before.len(), 2, "the server and its child: {before:?}");
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    unsafe { libc::kill(first.0.id() as i32, libc::SIGKILL) };
    first.0.wait().unwrap();
    // The child it left lives on (the socket is left too).
    std::thread::sleep(Duration::from_millis(300));
    assert!(!common::processes_with(&mark).is_empty());
    assert!(socket.exists());

    let (_second, again) = daemon_at(&config, &socket, &[]);
    let mut b = Console::connect(&again);
    b.initialize("console-b");
    b.ready("notes");
    let now = common::processes_with(&mark);
    let left: Vec<&i32> = before.iter().filter(|pid| now.contains(pid)).collect();
    assert!(
        left.is_empty(),
        "the first daemon's {left:?} are still there"
    );
    assert_eq!(now.len(), 2, "the new server and its child: {now:?}");
}

/// A Python TLS client of the API (the standard library's ssl, trusting `ca`): sends each of
/// `lines` and prints every line it gets back until the daemon closes or 2 s pass quietly.
const TLS_CLIENT: &str = r#"
import socket, ssl, sys
port, ca, tls = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "tls"
raw = socket.create_connection(("127.0.0.1", port), timeout=5)
if tls:
    ctx = ssl.create_default_context(cafile=ca)
    conn = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
else:
    conn = raw
for line in sys.argv[4:]:
    conn.sendall(line.encode() + b"\n")
conn.settimeout(2)
got = b""
try:
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            print("CLOSED")
            break
        got += chunk
        while b"\n" in got:
            line, got = got.split(b"\n", 1)
            print(line.decode())
except (socket.timeout, TimeoutError):
    print("QUIET")
except (ssl.SSLError, ConnectionResetError) as e:
    print("RESET", e)
"#;

fn tls_client(port: u16, ca: &Path, tls: bool, lines: &[Value]) -> Vec<String> {
    let out = Command::new("python3")
        .arg("-c")
        .arg(TLS_CLIENT)
        .arg(port.to_string())
        .arg(ca)
        .arg(if tls { "tls" } else { "plain" })
        .args(lines.iter().map(Value::to_string))
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn initialize_with(token: Option<&str>) -> Value {
    let mut params =
        json!({"protocol_version": 1, "client": {"name": "remote", "user": "u", "host": "h"}});
    if let Some(token) = token {
        params["token"] = json!(token);
    }
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
}

#[test]
fn over_tcp_a_console_needs_tls_and_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let (_daemon, run, port, cert) = daemon_over_tls(dir.path(), "mcp:\n  servers: []\n");
    let token = Command::new(bin())
        .arg("--config")
        .arg(dir.path().join("aimon.yaml"))
        .args(["daemon", "--print-token"])
        .env("XDG_STATE_HOME", &run)
        .output()
        .unwrap();
    let token = String::from_utf8(token.stdout).unwrap().trim().to_string();
    assert_eq!(token.len(), 64, "{token}");
    let mode = std::fs::metadata(run.join("aimon-console/daemon-token"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    // No token, a wrong one: refused, and the connection ends.
    for given in [None, Some("0".repeat(64).as_str())] {
        let got = tls_client(port, &cert, true, &[initialize_with(given)]);
        assert_eq!(got.len(), 2, "{got:?}");
        let answer: Value = serde_json::from_str(&got[0]).unwrap();
        assert_eq!(answer["error"]["code"], -32001, "{answer}");
        assert_eq!(got[1], "CLOSED");
    }
    // The token: served.
    let servers = json!({"jsonrpc": "2.0", "id": 2, "method": "servers"});
    let got = tls_client(port, &cert, true, &[initialize_with(Some(&token)), servers]);
    let answers: Vec<Value> = got[..2]
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {got:?}")))
        .collect();
    assert_eq!(answers[0]["result"]["protocol_version"], 1, "{got:?}");
    assert_eq!(answers[0]["result"]["you"]["pid"], Value::Null);
    assert_eq!(answers[1]["result"]["servers"], json!([]));
    // Without TLS: nothing is read as a request.
    let got = tls_client(port, &cert, false, &[initialize_with(Some(&token))]);
    assert!(
        got.iter().all(|l| !l.contains("protocol_version")),
        "{got:?}"
    );
}

#[test]
fn a_call_cancelled_while_it_waits_takes_its_approval_away_from_every_console() {
    let (_config, _daemon, socket, mut a) = notes_daemon("daemon-cancel", &[], "console-a");
    let call = a.send(
        "call",
        json!({"tool": "mcp__notes__write_note", "arguments": {"title": "t", "body": "b"}}),
    );
    let asked = a.until("the approval", |m| is_event(m, "approval_requested"));
    let id = asked["params"]["id"].as_u64().unwrap();
    let cancelled = a.call("cancel", json!({"id": id}));
    assert_eq!(cancelled["result"]["cancelled"], true, "{cancelled}");
    assert_eq!(a.answer(call)["result"]["status"], "cancelled");
    let mut b = Console::connect(&socket);
    assert_eq!(b.initialize("console-b")["approvals"], json!([]));
    let late = b.call("approve", json!({"id": id, "decision": "allow_once"}));
    assert_eq!(late["error"]["code"], -32011, "{late}");
}
