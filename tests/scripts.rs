//! The headless commands as scripts meet them: `watch` with stdin at its end, `tools --json`
//! when a server failed, `--args` that do not fit the schema, the approval sentence (without a
//! terminal, and on one, in tmux), every config error at once, and the local tools.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn watch_with_stdin_at_its_end_runs_until_sigterm() {
    let m = marker("watch-eof");
    let cfg = write_config(&format!(
        "mcp:\n  servers:\n{}",
        demo_server("notes", &[], "", &m)
    ));
    let mut child = Command::new(bin())
        .arg("--config")
        .arg(&cfg.path)
        .arg("--log-file")
        .arg(cfg.dir.path().join("log"))
        .args(["watch", "--json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn watch");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    for line in lines.by_ref() {
        let v: Value = serde_json::from_str(&line.expect("line")).expect("JSON line");
        if v["type"] == "server_started" {
            break;
        }
    }
    // stdin has been at its end all along: still running.
    std::thread::sleep(Duration::from_millis(700));
    assert!(
        child.try_wait().expect("try_wait").is_none(),
        "watch exited at stdin EOF"
    );
    assert_eq!(processes_with(&m).len(), 1, "the server runs");
    let pid = i32::try_from(child.id()).expect("pid");
    // SAFETY: kill(2) on the child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let started = Instant::now();
    let rest: Vec<Value> = lines
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str(&l).ok())
        .collect();
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        rest.iter().any(|v| v["type"] == "server_closed"),
        "{rest:?}"
    );
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[test]
fn tools_json_says_which_servers_are_missing() {
    let m = marker("tools-missing");
    let cfg = write_config(&format!(
        "mcp:\n  servers:\n{}    - name: broken\n      command: /nonexistent/server\n{}",
        demo_server("notes", &[], "", &m),
        demo_server("parked", &[], "enabled: false", &m),
    ));
    let out = run(&["tools", "--json"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["complete"], false);
    assert_eq!(
        v["missing"],
        serde_json::json!([
            {"server": "broken", "status": "failed", "class": "command_not_found",
             "message": "command not found: /nonexistent/server"},
            {"server": "parked", "status": "disabled", "class": null, "message": null},
        ])
    );
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "mcp__notes__add",
            "mcp__notes__delete_note",
            "mcp__notes__echo",
            "mcp__notes__slow",
            "mcp__notes__write_note",
            "read"
        ]
    );
    // The table says it too, and exits the same way.
    let out = run(&["tools"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out)
        .contains("server broken failed to start (command_not_found); its tools are missing"));
    // All there: complete, exit 0.
    let cfg = write_config(&format!(
        "mcp:\n  servers:\n{}",
        demo_server("notes", &[], "", &m)
    ));
    let out = run(&["tools", "--json"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        (v["complete"].clone(), v["missing"].clone()),
        (Value::Bool(true), serde_json::json!([]))
    );
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[test]
fn args_that_do_not_fit_the_schema_exit_2_like_bad_json() {
    let m = marker("call-args");
    let cfg = write_config(&format!(
        "mcp:\n  servers:\n{}",
        demo_server("demo", &[], "annotation_trust: trust", &m)
    ));
    for (args, says) in [
        (
            r#"{"a": "x"}"#,
            "error: --args do not match the input schema of mcp__demo__add: ",
        ),
        (
            "[1, 2]",
            "error: --args must be a JSON object, not an array",
        ),
        ("{oops", "error: --args is not valid JSON"),
    ] {
        let out = run(&["call", "mcp__demo__add", "--args", args], Some(&cfg.path));
        assert_eq!(out.status.code(), Some(2), "{args}: {}", stderr(&out));
        assert!(stderr(&out).starts_with(says), "{args}: {}", stderr(&out));
        assert!(out.stdout.is_empty());
    }
    let out = run(
        &["call", "mcp__demo__add", "--args", r#"{"a": 1, "b": 2}"#],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

const SENTENCE: &str = "mcp__demo__delete_note is MUTATING and DESTRUCTIVE because server trust is ignore (annotations present but not trusted); policy.approval is ask_mutating.";

#[test]
fn without_a_terminal_the_refusal_is_one_sentence() {
    let m = marker("call-sentence");
    let cfg = write_config(&format!(
        "mcp:\n  servers:\n{}",
        demo_server("demo", &[], "", &m)
    ));
    let out = run(
        &[
            "call",
            "mcp__demo__delete_note",
            "--args",
            r#"{"title": "t"}"#,
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "refused: {SENTENCE} There is no terminal to ask on (pass --yes to approve).\n"
        )),
        "{err}"
    );
    assert_eq!(err.matches("MUTATING").count(), 1, "{err}");
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

/// A tmux server of its own, killed when dropped.
struct Tmux(String);

impl Tmux {
    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.0, "-f", "/dev/null"]);
        c
    }

    fn screen(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "main"])
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(15),
                "no {needle:?} in:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}

#[test]
fn on_a_terminal_the_prompt_is_one_sentence() {
    let m = marker("call-prompt");
    let cfg = write_config(&format!(
        "mcp:\n  servers:\n{}",
        demo_server("demo", &[], "", &m)
    ));
    let tmux = Tmux(format!("aimon-prompt-{}", std::process::id()));
    let command = format!(
        "{} --config {} --log-file {} call mcp__demo__delete_note --args '{{\"title\": \"t\"}}'; echo EXIT=$?; sleep 60",
        bin(),
        cfg.path.display(),
        cfg.dir.path().join("log").display()
    );
    let status = tmux
        .cmd()
        .args(["new-session", "-d", "-s", "main", "-x", "220", "-y", "12"])
        .arg(command)
        .status()
        .expect("tmux (install it: apt-get install tmux)");
    assert!(status.success());
    let screen = tmux.wait_for("allow this call? [y/N]");
    assert!(screen.contains(SENTENCE), "{screen}");
    assert!(screen.contains("arguments: {\"title\":\"t\"}"), "{screen}");
    assert_eq!(screen.matches("MUTATING").count(), 1, "{screen}");
    assert!(tmux
        .cmd()
        .args(["send-keys", "-t", "main", "n", "Enter"])
        .status()
        .expect("keys")
        .success());
    let screen = tmux.wait_for("EXIT=");
    assert!(
        screen.contains("denied: denied by the operator: mcp__demo__delete_note"),
        "{screen}"
    );
    assert!(screen.contains("EXIT=1"), "{screen}");
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[test]
fn every_config_error_is_printed_and_exits_2() {
    let cfg = write_config(
        "mcp:\n  servers:\n    - name: a\n      comand: x\n      args: [1]\n      enabled: maybe\npolcy: {}\n",
    );
    let out = run(&["check"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(2));
    let p = cfg.path.display();
    assert_eq!(
        stderr(&out),
        format!(
            "{p}:4:7: mcp.servers[0]: unknown key `comand` (did you mean `command`?)\n\
             {p}:6:16: mcp.servers[0].enabled: expected true or false, got a string\n\
             {p}:7:1: unknown key `polcy` (did you mean `policy`?)\n"
        )
    );
    let cfg =
        write_config("mcp:\n  servers:\n    - name: a\n      args: [a, b\n      command: x\n");
    let out = run(&["check"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with(&format!(
            "{}:4:13: invalid YAML: this `[` is never closed",
            cfg.path.display()
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn local_tools_are_read_alone_unless_listed() {
    let cfg = write_config("mcp:\n  servers: []\n");
    let out = run(
        &[
            "call",
            "bash",
            "--args",
            r#"{"command": "echo hi"}"#,
            "--yes",
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the local tool bash is off: add it to policy.local_tools"),
        "{}",
        stderr(&out)
    );
    let out = run(&["tools"], Some(&cfg.path));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("local (trust column): read — aimon-console's own tools"),
        "{table}"
    );
    assert!(!table.lines().any(|l| l.starts_with("bash")), "{table}");

    let cfg = write_config("mcp:\n  servers: []\npolicy:\n  local_tools: [read, bash]\n");
    let out = run(
        &[
            "call",
            "bash",
            "--args",
            r#"{"command": "echo hi"}"#,
            "--yes",
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("hi"));
    let cfg = write_config("policy:\n  local_tools: []\n");
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 0);
    assert_eq!(report["tools"], serde_json::json!([]));
}
