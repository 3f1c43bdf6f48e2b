//! Peak memory: the maximum resident set of `check` holding 64 servers × 100 tools, from the
//! kernel's own accounting (`wait4`'s rusage), beside the same command with no servers.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::report::Row;

/// Max RSS in MiB of `binary check --json` on `config`; the kernel folds in the largest of the
/// processes it waited for, so this is the console or its biggest server, whichever is larger.
pub fn max_rss_mib(binary: &str, config: &Path) -> f64 {
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
    usage.ru_maxrss as f64 / 1024.0
}

pub fn rows(binary: &str, big: &Path, empty: &Path, servers: usize, tools: usize) -> Vec<Row> {
    let zero = max_rss_mib(binary, empty);
    let held = max_rss_mib(binary, big);
    vec![Row::new(
        "memory",
        &format!("{servers} servers x {tools} tools"),
        "peak RSS MiB",
        held,
    )
    .against("same command, 0 servers", zero)]
}
