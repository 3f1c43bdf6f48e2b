//! A real terminal for end-to-end tests of the console: a private tmux server running one
//! shell in a fixed-size window, keys sent to it and its screen read back.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A private tmux server (its own socket) running one shell in a fixed-size window.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    pub fn start(dir: &Path, width: u16, height: u16) -> Tmux {
        // One tmux server per test: tests run in parallel in this process.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let socket = format!("aimon-e2e-{}-{n}", std::process::id());
        let tmux = Tmux { socket };
        let status = tmux
            .cmd()
            .args([
                "new-session",
                "-d",
                "-s",
                "main",
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
                "-c",
            ])
            .arg(dir)
            .args([
                "env",
                "PS1=READY$ ",
                "TERM=xterm-256color",
                "bash",
                "--norc",
                "--noprofile",
            ])
            .status()
            .expect("tmux (install it: apt-get install tmux)");
        assert!(status.success(), "tmux new-session failed");
        tmux.cmd()
            .args(["select-pane", "-t", "main", "-T", "original-title"])
            .status()
            .expect("select-pane");
        tmux.wait_for("READY$", Duration::from_secs(5));
        tmux
    }

    /// A 140×40 window in `dir` running the console on `config` (its log in `dir`), the command
    /// line preceded by `env` (`VAR=value …`, or empty) and followed by `more` options; returned
    /// once the Servers title says `ready` (`1/1 ready`).
    pub fn console(dir: &Path, config: &Path, env: &str, more: &str, ready: &str) -> Tmux {
        let t = Tmux::start(dir, 140, 40);
        t.text(&format!(
            "{env} {} --config {} --log-file {} {more}",
            super::bin(),
            config.display(),
            dir.join("log").display()
        ));
        t.keys(&["Enter"]);
        t.wait_for(ready, Duration::from_secs(20));
        t
    }

    pub fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]);
        c
    }

    pub fn keys(&self, keys: &[&str]) {
        let status = self
            .cmd()
            .args(["send-keys", "-t", "main"])
            .args(keys)
            .status()
            .expect("send-keys");
        assert!(status.success());
        std::thread::sleep(Duration::from_millis(150));
    }

    pub fn text(&self, text: &str) {
        let status = self
            .cmd()
            .args(["send-keys", "-t", "main", "-l", text])
            .status()
            .expect("send-keys -l");
        assert!(status.success());
        std::thread::sleep(Duration::from_millis(150));
    }

    pub fn screen(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "main"])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn display(&self, format: &str) -> String {
        let out = self
            .cmd()
            .args(["display-message", "-p", "-t", "main", format])
            .output()
            .expect("display");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// `wait_for` a question (an approval), then the moment a person takes to read it: the
    /// console takes no answer sooner (a key that soon was typed at something else).
    pub fn wait_for_question(&self, needle: &str, timeout: Duration) -> String {
        let screen = self.wait_for(needle, timeout);
        std::thread::sleep(Duration::from_millis(400));
        screen
    }

    pub fn wait_for(&self, needle: &str, timeout: Duration) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            assert!(
                start.elapsed() < timeout,
                "timed out waiting for {needle:?}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until a screen line holds both `row` and `word` (a call's id and its status).
    pub fn wait_for_row(&self, row: &str, word: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.lines().any(|l| l.contains(row) && l.contains(word)) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "no line with {row:?} and {word:?}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The console's pid: the child of the pane's shell.
    pub fn console_pid(&self) -> i32 {
        let shell = self.display("#{pane_pid}");
        let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
            .unwrap_or_default();
        children
            .split_whitespace()
            .next()
            .and_then(|p| p.parse().ok())
            .expect("console process")
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}

/// CPU ticks (user + system) a process has used.
pub fn cpu_ticks(pid: i32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    fields[11].parse::<u64>().unwrap_or(0) + fields[12].parse::<u64>().unwrap_or(0)
}
