//! The bench's output: one row per measured case, printed as a table and written as JSON.
//!
//! Separate from the measurements so every section reports the same way and a new case (the
//! HTTP call path, say) is one more `Row`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

/// One line of the table: what we measured, what it is held against, and their ratio.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The section (`startup`, `call/demo`, `call/everything`, `memory`).
    pub section: String,
    /// The case within the section (`N=64`, `sequential`, `10 callers` …).
    pub case: String,
    /// The metric (`calls/s`, `p50 ms`, `ms`, `MiB` …).
    pub metric: String,
    /// Our figure.
    pub ours: f64,
    /// What it is held against (the bare loop, a peer, the slowest server); `None` if nothing.
    pub reference: Option<f64>,
    /// What the reference is, in words.
    pub reference_is: String,
    /// `ours / reference` (for times and memory lower is better, for rates higher is).
    pub ratio: Option<f64>,
    /// The target the issue sets, if any, in words, and whether it was met.
    pub target: Option<Target>,
}

/// A must-be-true figure and whether this run met it.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub wanted: String,
    pub met: bool,
}

impl Row {
    pub fn new(section: &str, case: &str, metric: &str, ours: f64) -> Row {
        Row {
            section: section.into(),
            case: case.into(),
            metric: metric.into(),
            ours,
            reference: None,
            reference_is: String::new(),
            ratio: None,
            target: None,
        }
    }

    /// Holds the figure against `reference` (described as `what`).
    pub fn against(mut self, what: &str, reference: f64) -> Row {
        self.reference = Some(reference);
        self.reference_is = what.into();
        self.ratio = (reference > 0.0).then(|| self.ours / reference);
        self
    }

    /// The ratio must be at least `min`.
    pub fn at_least(mut self, min: f64) -> Row {
        let met = self.ratio.is_some_and(|r| r >= min);
        self.target = Some(Target {
            wanted: format!(">= {min}x"),
            met,
        });
        self
    }

    /// The figure itself must be at most `max` (`unit` names what it counts).
    pub fn no_more_than(mut self, max: f64, unit: &str) -> Row {
        self.target = Some(Target {
            wanted: format!("<= {max} {unit}"),
            met: self.ours <= max,
        });
        self
    }

    /// The ratio must be at most `max`.
    pub fn at_most(mut self, max: f64) -> Row {
        let met = self.ratio.is_some_and(|r| r <= max);
        self.target = Some(Target {
            wanted: format!("<= {max}x"),
            met,
        });
        self
    }
}

/// Calls/s and latency percentiles of one batch of calls, or of several rounds of them.
#[derive(Debug, Clone, Default)]
pub struct CallStats {
    pub calls: usize,
    pub elapsed: Duration,
    pub latencies: Vec<Duration>,
    /// Calls/s of each merged round.
    pub round_rates: Vec<f64>,
}

impl CallStats {
    pub fn new(calls: usize, elapsed: Duration, latencies: Vec<Duration>) -> CallStats {
        CallStats {
            calls,
            elapsed,
            latencies,
            round_rates: Vec::new(),
        }
    }

    /// Adds a round: its calls and latencies join the pool, its rate is kept apart.
    pub fn merge(&mut self, other: CallStats) {
        self.round_rates.push(other.per_sec());
        self.calls += other.calls;
        self.elapsed += other.elapsed;
        self.latencies.extend(other.latencies);
    }

    /// Calls/s: the median round's when there were rounds (robust to a burst of load from
    /// elsewhere on a shared machine), else the whole batch's.
    pub fn per_sec(&self) -> f64 {
        if !self.round_rates.is_empty() {
            let mut rates = self.round_rates.clone();
            rates.sort_by(f64::total_cmp);
            return rates[rates.len() / 2];
        }
        self.calls as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The `q`-quantile latency in milliseconds (nearest rank).
    pub fn quantile_ms(&self, q: f64) -> f64 {
        if self.latencies.is_empty() {
            return 0.0;
        }
        let mut sorted = self.latencies.clone();
        sorted.sort();
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1].as_secs_f64() * 1000.0
    }
}

/// CPU time (user + system) this process has used so far, all threads.
pub fn cpu_now() -> Duration {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe {
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// The three rows of a call-path comparison: calls/s, p50 and p99 latency, ours against `reference`.
pub fn call_rows(
    section: &str,
    case: &str,
    ours: &CallStats,
    reference_is: &str,
    reference: &CallStats,
) -> Vec<Row> {
    vec![
        Row::new(section, case, "calls/s", ours.per_sec())
            .against(reference_is, reference.per_sec()),
        Row::new(section, case, "p50 ms", ours.quantile_ms(0.50))
            .against(reference_is, reference.quantile_ms(0.50)),
        Row::new(section, case, "p99 ms", ours.quantile_ms(0.99))
            .against(reference_is, reference.quantile_ms(0.99)),
    ]
}

fn fmt_num(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

/// The table, as printed and as pasted into README.
pub fn table(rows: &[Row]) -> String {
    let header = [
        "section",
        "case",
        "metric",
        "ours",
        "reference",
        "ref. value",
        "ratio",
        "target",
    ];
    let cells: Vec<[String; 8]> = rows
        .iter()
        .map(|r| {
            [
                r.section.clone(),
                r.case.clone(),
                r.metric.clone(),
                fmt_num(r.ours),
                r.reference_is.clone(),
                r.reference.map(fmt_num).unwrap_or_default(),
                r.ratio.map(|x| format!("{x:.2}x")).unwrap_or_default(),
                r.target
                    .as_ref()
                    .map(|t| format!("{} {}", t.wanted, if t.met { "met" } else { "MISSED" }))
                    .unwrap_or_default(),
            ]
        })
        .collect();
    let mut out = format!("| {} |\n", header.join(" | "));
    out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for row in cells {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}

/// Where results go: `target/bench/`.
pub fn out_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .map(|p| p.join("bench"))
        .unwrap_or_else(|| PathBuf::from("target/bench"))
}

/// The machine, for the record.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub cpus: usize,
    pub cpu_model: String,
    pub os: String,
}

impl Machine {
    pub fn read() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .map(|rest| rest.trim_start_matches([' ', '\t', ':']).trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let os = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|r| format!("Linux {}", r.trim()))
            .unwrap_or_else(|_| std::env::consts::OS.into());
        Machine {
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu_model,
            os,
        }
    }
}

/// Writes `results.json` (machine, scale, rows) and `table.md`; returns the JSON path.
pub fn write(
    rows: &[Row],
    machine: &Machine,
    scale: &serde_json::Value,
) -> std::io::Result<PathBuf> {
    let dir = out_dir();
    std::fs::create_dir_all(&dir)?;
    let json = serde_json::json!({
        "machine": machine,
        "scale": scale,
        "rows": rows,
    });
    let path = dir.join("results.json");
    std::fs::write(
        &path,
        serde_json::to_vec_pretty(&json).map_err(std::io::Error::other)?,
    )?;
    std::fs::write(dir.join("table.md"), table(rows))?;
    Ok(path)
}

/// CPU ticks (1/100 s) process `pid` has used, all its threads (`/proc/PID/stat`).
pub fn ticks(pid: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse::<u64>().ok())
        .sum()
}
