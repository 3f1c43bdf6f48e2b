//! The console drawing a fast stream: the real binary in a 140×40 tmux pane, its agent the
//! demo model streaming a 100,000-word answer at 20,000 tokens (words) a second, the
//! Conversation pane showing it as it comes. The console's CPU over the stream (from
//! `/proc/PID/stat`, all its threads: HTTP, SSE parsing, the loop, drawing, the terminal
//! writes) against 25 % of a core; its slowest frame over the stream (each frame's time from
//! its own log, `AIMON_LOG=aimon_console::tui::frame=debug`) against the 16 ms of 60 frames a
//! second (the agent issue's target), and against the console's own 1 ms frame target.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::report::Row;

/// Words (tokens: one a chunk) of the answer, and their rate.
const WORDS: u32 = 100_000;
const RATE: u32 = 20_000;

/// A private tmux server holding the console.
struct Pane {
    socket: String,
}

impl Pane {
    fn tmux(&self, args: &[&str]) -> std::io::Result<Output> {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "b"])
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// Waits until the screen has `text`; the screen then.
    fn wait_for(&self, text: &str, within: Duration, poll: Duration) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                start.elapsed() < within,
                "agent stream: no {text:?} on the screen:\n{screen}"
            );
            std::thread::sleep(poll);
        }
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// Seconds since midnight UTC, now.
fn day_seconds() -> f64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    now % 86_400.0
}

/// The frames a log line says were drawn: (seconds since midnight UTC, microseconds). The
/// line is tracing's: `2026-12-01T01:02:03.456789Z DEBUG aimon_console::tui::frame: frame
/// drawn us=1234`.
pub fn frame(line: &str) -> Option<(f64, u64)> {
    if !line.contains("aimon_console::tui::frame") {
        return None;
    }
    let time = line.get(11..)?.split('Z').next()?;
    let mut parts = time.split(':');
    let h: f64 = parts.next()?.parse().ok()?;
    let m: f64 = parts.next()?.parse().ok()?;
    let s: f64 = parts.next()?.parse().ok()?;
    let us = line.rsplit("us=").next()?.trim().parse().ok()?;
    Some((h * 3600.0 + m * 60.0 + s, us))
}

/// The latency the pane shows for model turn 1 (`    turn 1 · 5.0s · …`).
fn turn_latency(screen: &str) -> Option<Duration> {
    let line = screen.lines().find(|l| l.contains("    turn 1 · "))?;
    let text = line.split("turn 1 · ").nth(1)?.split(' ').next()?;
    if let Some(ms) = text.strip_suffix("ms") {
        return ms.parse().ok().map(Duration::from_millis);
    }
    text.strip_suffix('s')?
        .parse()
        .ok()
        .map(Duration::from_secs_f64)
}

/// The rows: the console's CPU over the stream, and its slowest frame then.
pub fn rows(binary: &str, dir: &Path) -> Vec<Row> {
    let config = dir.join("stream.yaml");
    let yaml = format!(
        "mcp:\n  servers:\n    - name: srv\n      command: {binary:?}\n      args: [demo-server]\n\
         agent:\n  default: demo\n  models:\n    demo:\n      command: {binary:?}\n      \
         args: [demo-model, --long-answer, \"{WORDS}\", --tokens-per-sec, \"{RATE}\"]\n      \
         model: demo\n      request_timeout: 10s\n"
    );
    if let Err(e) = std::fs::write(&config, yaml) {
        panic!("agent stream: cannot write {}: {e}", config.display());
    }
    let log = dir.join("stream.log");
    let pane = Pane {
        socket: format!("aimon-bench-stream-{}", std::process::id()),
    };
    let command = format!(
        "{binary} --config {} --log-file {}",
        config.display(),
        log.display()
    );
    // The tmux server starts here, so the console inherits this environment.
    let started = Command::new("tmux")
        .args(["-L", &pane.socket, "-f", "/dev/null"])
        .args(["new-session", "-d", "-s", "b", "-x", "140", "-y", "40"])
        .arg(&command)
        .env(
            "AIMON_LOG",
            "info,rmcp=warn,aimon_console::tui::frame=debug",
        )
        .env("XDG_STATE_HOME", dir.join("state"))
        .output();
    match started {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!("tmux: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => panic!("tmux is needed for the agent stream case: {e}"),
    }
    let slow = Duration::from_millis(100);
    pane.wait_for("1/1 ready", Duration::from_secs(30), slow);
    pane.wait_for("ready · http://127.0.0.1:", Duration::from_secs(30), slow);
    let pid = pane
        .tmux(&["display-message", "-p", "-t", "b", "#{pane_pid}"])
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let _ = pane.tmux(&["send-keys", "-t", "b", "-l", "tell me a long story"]);
    let _ = pane.tmux(&["send-keys", "-t", "b", "Enter"]);
    pane.wait_for(
        "a long answer from the demo model",
        Duration::from_secs(10),
        Duration::from_millis(5),
    );
    let (before, at, from) = (crate::report::ticks(&pid), Instant::now(), day_seconds());
    let screen = pane.wait_for("    turn 1 · ", Duration::from_secs(60), slow);
    let (used, window, to) = (
        crate::report::ticks(&pid) - before,
        at.elapsed(),
        day_seconds(),
    );
    let latency = turn_latency(&screen).unwrap_or(window);
    let _ = pane.tmux(&["send-keys", "-t", "b", "C-c"]);
    std::thread::sleep(Duration::from_secs(2));
    drop(pane);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let frames: Vec<u64> = text
        .lines()
        .filter_map(frame)
        .filter(|(t, _)| *t >= from && *t <= to)
        .map(|(_, us)| us)
        .collect();
    assert!(
        frames.len() > 10,
        "agent stream: {} frames logged in {}",
        frames.len(),
        log.display()
    );
    let worst_ms = frames.iter().copied().max().unwrap_or(0) as f64 / 1000.0;
    let percent = used as f64 / (window.as_secs_f64() * 100.0) * 100.0;
    let rate = f64::from(WORDS) / latency.as_secs_f64();
    let case = format!(
        "{WORDS} tokens streamed at {RATE}/s into the console (measured {rate:.0}/s, {} frames)",
        frames.len()
    );
    vec![
        Row::new("agent", &case, "% of a core", percent)
            .against("25 % budget", 25.0)
            .at_most(1.0),
        Row::new("agent", "the slowest frame, same stream", "ms", worst_ms)
            .against("60 fps budget", 16.0)
            .at_most(1.0),
        Row::new("agent", "the slowest frame, same stream", "ms", worst_ms)
            .against("1 ms target", 1.0)
            .at_most(1.0),
    ]
}
