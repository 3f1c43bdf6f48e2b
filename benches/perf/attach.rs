//! `attach`: the console over a daemon (the real binary in tmux, attached to a daemon on its
//! Unix socket). Its CPU idle for 10 s, beside the console that runs its own servers on the
//! same config in the same run, against 0 %; then its frames while calls go through the
//! daemon from another console (each call's events reach it, and it draws), their median,
//! 99th percentile and slowest against the 1 ms target, from the frame times in its log; and
//! the CPU its thread spent on them (a frame's time also holds waiting for a core or for the
//! terminal), with the slowest frame's own CPU and how many frames the kernel took off their
//! core for another thread (`preempted` in the frame log).

use std::path::Path;

use serde_json::json;

use crate::report::Row;

/// A frame as its log line tells it.
#[derive(Clone, Copy)]
struct Frame {
    /// Its time, ms.
    ms: f64,
    /// The CPU its thread spent on it (`cpu_us`), ms.
    cpu_ms: f64,
    /// Times the kernel took its thread off its core for another (`preempted`).
    preempted: u64,
}

/// The frames in the console log at `log`, in the order drawn.
fn frames(log: &Path) -> Vec<Frame> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let (_, us) = crate::agent_stream::frame(line)?;
            let field = |name: &str| -> Option<u64> {
                line.split(name).nth(1)?.split(' ').next()?.parse().ok()
            };
            Some(Frame {
                ms: us as f64 / 1000.0,
                cpu_ms: field(" cpu_us=")? as f64 / 1000.0,
                preempted: field(" preempted=")?,
            })
        })
        .collect()
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

pub fn rows(binary: &str, dir: &Path, calls: usize) -> Vec<Row> {
    let (daemon, socket) = crate::daemon::start(binary, dir, "attach", "");
    let config = socket.with_file_name("aimon.yaml");
    let log = socket.with_file_name("attach.log");
    let mut driver = crate::daemon::Console::attach(&socket, "driver");
    driver.ready();
    let command = format!(
        "env AIMON_LOG=aimon_console::tui::frame=debug {binary} --config {} --log-file {} attach {}",
        config.display(),
        log.display(),
        socket.display()
    );
    let (idle, drawn) = crate::tui::pane_cpu(&command, |_| {
        let before = frames(&log).len();
        driver.calls(calls, "mcp__notes__echo", &json!({"text": "hello"}));
        // The last events drawn.
        std::thread::sleep(std::time::Duration::from_millis(500));
        frames(&log).split_off(before)
    });
    drop(daemon);
    let own = crate::tui::pane_cpu(
        &format!(
            "{binary} --config {} --log-file /dev/null",
            config.display()
        ),
        |_| {},
    )
    .0;
    let sorted = |pick: fn(&Frame) -> f64| {
        let mut values: Vec<f64> = drawn.iter().map(pick).collect();
        values.sort_by(f64::total_cmp);
        values
    };
    let (times, cpu) = (sorted(|f| f.ms), sorted(|f| f.cpu_ms));
    let slowest = drawn.iter().copied().max_by(|a, b| a.ms.total_cmp(&b.ms));
    let preempted = drawn.iter().filter(|f| f.preempted > 0).count();
    let count = times.len();
    let case = format!("frame over attach, {calls} calls through the daemon ({count} frames)");
    vec![
        Row::new(
            "attach",
            "idle console over attach, 10 s",
            "% of a core",
            idle,
        )
        .against("the console with its own servers, same config", own)
        .no_more_than(0.0, "% of a core"),
        Row::new("attach", &case, "p50 ms", quantile(&times, 0.5))
            .against("1 ms target", 1.0)
            .at_most(1.0),
        Row::new("attach", &case, "p99 ms", quantile(&times, 0.99))
            .against("1 ms target", 1.0)
            .at_most(1.0),
        // The strict reading of "keeps frame ≤ 1 ms": every frame, the slowest too.
        Row::new("attach", &case, "slowest ms", quantile(&times, 1.0))
            .against("1 ms target", 1.0)
            .at_most(1.0),
        Row::new("attach", &case, "p99 CPU ms", quantile(&cpu, 0.99))
            .against("the frame's p99 time, same frames", quantile(&times, 0.99)),
        Row::new(
            "attach",
            &case,
            "slowest frame's CPU ms",
            slowest.map_or(f64::NAN, |f| f.cpu_ms),
        )
        .against("its time", slowest.map_or(f64::NAN, |f| f.ms)),
        Row::new(
            "attach",
            &case,
            "frames taken off their core",
            preempted as f64,
        )
        .against("frames drawn", count as f64),
    ]
}
