//! Peak memory: the maximum resident set of `check --json` holding 64 servers × 100 tools,
//! beside the same command with no servers, and of one server listing 100,000 tools in pages;
//! from the kernel's own accounting (`wait4`'s rusage).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::report::Row;

/// Max RSS in KiB of `binary check --json` on `config`; the kernel folds in the largest of the
/// processes it waited for, so this is the console or its biggest server, whichever is larger.
/// Panics unless `check` says every server is ready (a failed start would hold less).
pub fn max_rss_kib(binary: &str, config: &Path) -> f64 {
    let child = Command::new(binary)
        .arg("--config")
        .arg(config)
        .args(["--log-file", "/dev/null", "check", "--json"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let child = match child {
        Ok(c) => c,
        Err(e) => panic!("cannot start {binary}: {e}"),
    };
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills; the pid is our own unreaped child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(
        waited,
        pid,
        "wait4 failed: {}",
        std::io::Error::last_os_error()
    );
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "check on {} did not find every server ready (wait status {status})",
        config.display()
    );
    usage.ru_maxrss as f64
}

const KIB_PER_MIB: f64 = 1024.0;
/// KiB in a (decimal) megabyte.
const KIB_PER_MB: f64 = 1_000_000.0 / 1024.0;

/// `check` holding `servers` × `tools` against no servers (MiB, the unit), then one
/// server holding `one_server_tools` (MB).
pub fn rows(
    binary: &str,
    big: &Path,
    empty: &Path,
    (servers, tools): (usize, usize),
    one_server: &Path,
    one_server_tools: usize,
) -> Vec<Row> {
    let zero = max_rss_kib(binary, empty) / KIB_PER_MIB;
    let held = max_rss_kib(binary, big) / KIB_PER_MIB;
    let single = max_rss_kib(binary, one_server) / KIB_PER_MB;
    vec![
        Row::new(
            "memory",
            &format!("{servers} servers x {tools} tools"),
            "peak RSS MiB",
            held,
        )
        .against("same command, 0 servers", zero)
        .no_more_than(40.0, "MiB"),
        Row::new(
            "memory",
            &format!("1 server x {one_server_tools} tools"),
            "peak RSS MB",
            single,
        )
        .no_more_than(150.0, "MB"),
    ]
}
