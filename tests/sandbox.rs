//! The Landlock sandbox over real processes (this kernel has Landlock): a stdio server with
//! `write: [DIR]` is refused a write under `$HOME` (its stderr says so in Details, in a real
//! terminal) and writes under DIR; with `network: false` its connect to a loopback listener
//! fails while an unsandboxed one connects; the `bash` tool writes only where it may, by
//! default only under its working directory; and, on a kernel without Landlock (its system calls
//! made to fail under seccomp), a required sandbox keeps its server from starting and says why.

mod common;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::tmux::Tmux;
use common::*;
use serde_json::Value;

/// A stdio server that runs `script` with bash first, then becomes the demo server.
fn scripted_server(name: &str, script: &str, m: &str, more: &str) -> String {
    format!(
        "    - name: {name}\n      command: bash\n      args: [-c, {script:?}]\n      env: {{AIMON_TEST_MARKER: {m}, BIN: {bin}}}\n{more}",
        script = format!("{script}; exec \"$BIN\" demo-server"),
        bin = bin(),
    )
}

#[test]
fn a_sandboxed_server_writes_only_where_it_may_and_details_shows_why() {
    let m = marker("sandbox");
    let dir = tempfile::tempdir().unwrap();
    let allowed = dir.path().join("allowed");
    let home = std::env::var("HOME").expect("HOME");
    let outside = Path::new(&home).join(format!(".aimon-sandbox-{m}"));
    let script = format!(
        "echo x > {outside}; echo y > {inside}",
        outside = outside.display(),
        inside = allowed.join("f").display()
    );
    let config = dir.path().join("aimon.yaml");
    std::fs::write(
        &config,
        format!(
            "mcp:\n  servers:\n{}",
            scripted_server(
                "boxed",
                &script,
                &m,
                &format!(
                    "      sandbox: {{write: [{}], required: true}}\n",
                    allowed.display()
                )
            )
        ),
    )
    .unwrap();

    let (code, report) = check_json(&config);
    assert_eq!(code, 0, "{report:#}");
    let boxed = server(&report, "boxed");
    let sandbox = boxed["sandbox"].as_str().unwrap_or_default();
    assert!(sandbox.starts_with("Landlock (ABI "), "{boxed:#}");
    assert!(
        sandbox.contains(&format!("writes only under {}", allowed.display())),
        "{sandbox}"
    );
    assert!(!outside.exists(), "the write under $HOME got through");
    assert_eq!(
        std::fs::read_to_string(allowed.join("f")).unwrap(),
        "y\n",
        "the write under DIR"
    );

    // In the console: Details says the sandbox, and its stderr the refused write.
    let t = Tmux::console(dir.path(), &config, "", "", "1/1 ready");
    // Details focused grows, its summary whole; Enter shows the stderr lines whole.
    t.keys(&["2"]);
    let screen = t.wait_for("sandbox: Landlock (ABI", Duration::from_secs(5));
    assert!(screen.contains("writes only under"), "{screen}");
    t.keys(&["Enter"]);
    let screen = t.wait_for("Permission denied", Duration::from_secs(5));
    assert!(
        screen.contains(&format!("{}: Permission denied", outside.display())),
        "{screen}"
    );
    t.keys(&["Escape"]);
    t.wait_for("Enter view all", Duration::from_secs(5));
    t.keys(&["q"]);
    t.wait_for("READY$", Duration::from_secs(10));
    assert!(!outside.exists());
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}

#[test]
fn network_false_refuses_a_connect_that_an_unsandboxed_server_makes() {
    let m = marker("sandbox-net");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    // The connect's outcome goes to a file the test reads (stderr is the console's to show).
    let said = |name: &str| dir.path().join(format!("{name}.said"));
    let connect = |name: &str| {
        format!(
            "(exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected || echo refused) > {} 2>&1",
            said(name).display()
        )
    };
    let sandbox = format!(
        "      sandbox: {{network: false, write: [{}], required: true}}\n",
        dir.path().display()
    );
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}{}",
        scripted_server("offline", &connect("offline"), &m, &sandbox),
        scripted_server("online", &connect("online"), &m, "")
    ));
    let (code, report) = check_json(&config.path);
    assert_eq!(code, 0, "{report:#}");
    let offline = server(&report, "offline")["sandbox"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(offline.contains("no TCP connect or listen"), "{offline}");
    let read = |name: &str| std::fs::read_to_string(said(name)).unwrap_or_default();
    assert!(
        read("offline").contains("Permission denied"),
        "{}",
        read("offline")
    );
    assert!(read("offline").contains("refused"), "{}", read("offline"));
    assert_eq!(read("online"), "connected\n");
    // Exactly one connection came: the unsandboxed server's.
    let mut accepted = 0;
    while listener.accept().is_ok() {
        accepted += 1;
    }
    assert_eq!(accepted, 1);
}

/// `call bash --yes` on `config`, run in `cwd`: the result's text.
fn bash(config: &Path, cwd: &Path, command: &str) -> String {
    let out = Command::new(bin())
        .arg("--config")
        .arg(config)
        .arg("--log-file")
        .arg(cwd.join("bash.log"))
        .args(["call", "bash", "--json", "--yes", "--args"])
        .arg(serde_json::json!({ "command": command }).to_string())
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .expect("run call");
    let value: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    value["result"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn the_bash_tool_writes_only_under_its_working_directory_or_what_bash_sandbox_allows() {
    let m = marker("sandbox-bash");
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let other = dir.path().join("other");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    let attempt = format!(
        "echo a > {}/here; echo b > {}/there; echo c > /tmp/aimon-{m}",
        work.display(),
        other.display()
    );

    // By default: only under the working directory.
    let default = dir.path().join("default.yaml");
    std::fs::write(&default, "policy:\n  local_tools: [bash]\n").unwrap();
    let text = bash(&default, &work, &attempt);
    assert!(work.join("here").exists(), "{text}");
    assert!(!other.join("there").exists(), "{text}");
    assert!(!Path::new(&format!("/tmp/aimon-{m}")).exists(), "{text}");
    assert_eq!(text.matches("Permission denied").count(), 2, "{text}");

    // `policy.bash_sandbox` says where instead.
    std::fs::remove_file(work.join("here")).unwrap();
    let elsewhere = dir.path().join("elsewhere.yaml");
    std::fs::write(
        &elsewhere,
        format!(
            "policy:\n  local_tools: [bash]\n  bash_sandbox: {{write: [{}]}}\n",
            other.display()
        ),
    )
    .unwrap();
    let text = bash(&elsewhere, &work, &attempt);
    assert!(!work.join("here").exists(), "{text}");
    assert!(other.join("there").exists(), "{text}");
    assert_eq!(text.matches("Permission denied").count(), 2, "{text}");
}

/// Makes the Landlock system calls of the process it runs in (and its children) fail with
/// `ENOSYS`, as on a kernel without Landlock: a seccomp filter, installed in the child before
/// it runs aimon-console.
fn without_landlock(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    #[cfg(target_arch = "x86_64")]
    const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
    #[cfg(target_arch = "aarch64")]
    const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64
                                   // landlock_create_ruleset, landlock_add_rule and landlock_restrict_self: 444, 445, 446 on
                                   // both (the shared system call table).
    const FIRST: u32 = 444;
    const PAST: u32 = 447;
    let code = |class: u32, op: u32, mode: u32| u16::try_from(class | op | mode).unwrap();
    let ld = code(libc::BPF_LD, libc::BPF_W, libc::BPF_ABS);
    let jeq = code(libc::BPF_JMP, libc::BPF_JEQ, libc::BPF_K);
    let jge = code(libc::BPF_JMP, libc::BPF_JGE, libc::BPF_K);
    let ret = code(libc::BPF_RET, libc::BPF_K, 0);
    let at = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let filter = [
        at(ld, 0, 0, 4), // seccomp_data.arch
        at(jeq, 1, 0, ARCH),
        at(ret, 0, 0, libc::SECCOMP_RET_ALLOW),
        at(ld, 0, 0, 0), // seccomp_data.nr
        at(jge, 0, 2, FIRST),
        at(jge, 1, 0, PAST),
        at(ret, 0, 0, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
        at(ret, 0, 0, libc::SECCOMP_RET_ALLOW),
    ];
    // SAFETY: between fork and exec only two prctl calls on memory the closure owns (the
    // filter was built before the fork); no allocation.
    unsafe {
        cmd.pre_exec(move || {
            let program = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr().cast_mut(),
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &program as *const libc::sock_fprog,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

#[test]
fn without_landlock_a_required_sandbox_is_not_started_and_an_optional_one_says_so() {
    let m = marker("sandbox-none");
    let dir = tempfile::tempdir().unwrap();
    let sandbox = |required: bool| {
        format!(
            "      sandbox: {{write: [{}], required: {required}}}\n",
            dir.path().display()
        )
    };
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}{}",
        scripted_server("strict", "true", &m, &sandbox(true)),
        scripted_server("lenient", "true", &m, &sandbox(false)),
    ));
    let out = without_landlock(
        Command::new(bin())
            .arg("--config")
            .arg(&config.path)
            .arg("--log-file")
            .arg(dir.path().join("check.log"))
            .args(["check", "--json"])
            .stdin(Stdio::null()),
    )
    .output()
    .expect("run check");
    let report: Value = serde_json::from_slice(&out.stdout).expect("check --json");
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    let strict = server(&report, "strict");
    assert_eq!(strict["status"], "failed", "{strict:#}");
    assert_eq!(
        strict["failure"]["message"],
        "not started: its sandbox is required, and this kernel has no Landlock",
        "{strict:#}"
    );
    assert!(
        strict["failure"]["exit_status"].is_null(),
        "never spawned: {strict:#}"
    );
    let lenient = server(&report, "lenient");
    assert_eq!(lenient["status"], "ready", "{lenient:#}");
    assert_eq!(
        lenient["sandbox"],
        "NOT sandboxed: this kernel has no Landlock (sandbox.required is false)"
    );
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}
