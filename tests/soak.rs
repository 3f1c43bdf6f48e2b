//! The soak test: 100,000 calls over 4 demo servers with random cancels and two servers killed
//! mid-run. Every call ends exactly once (ok, error or cancelled), file descriptors and memory
//! do not grow across the run, and no process is left. Bounded in time; speed is measured by
//! `cargo bench`, never here.
//!
//! Alone in its own test binary so the fd and memory counts of this process are its own.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aimon_console::config::{AnnotationTrust, PolicyConfig, ServerConfig};
use aimon_console::runtime::{AgentRuntimeFactory, CallStatus, RuntimeEvent, RuntimeOptions};
use common::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const CALLS: usize = 100_000;
const WARMUP: usize = 2_000;
const SERVERS: usize = 4;
const CALLERS: usize = 16;
/// The whole run must end within this, or the test fails (a hung call would hang it).
const BOUND: Duration = Duration::from_secs(600);
/// Resident memory may move this much between the end of the warm-up and the end of the run.
const RSS_SLACK_KIB: u64 = 16 * 1024;

fn demo(name: &str, marker: &str) -> ServerConfig {
    demo_config(name, &[], AnnotationTrust::Trust, marker)
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A small xorshift generator: the test needs cheap, repeatable randomness, not quality.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One caller: takes call numbers until there are none left; returns (call id, status) pairs.
async fn caller(
    runtime: Arc<aimon_console::runtime::AgentRuntime>,
    next: Arc<AtomicUsize>,
    total: usize,
    seed: u64,
) -> Vec<(u64, CallStatus)> {
    let mut rng = Rng(seed | 1);
    let mut outcomes = Vec::new();
    while next.fetch_add(1, Ordering::Relaxed) < total {
        let server = rng.below(SERVERS as u64);
        let roll = rng.below(100);
        let cancel = CancellationToken::new();
        let (tool, args) = if roll < 5 {
            // A call that takes a few ms and is cancelled part-way (or before it starts).
            let fire = cancel.clone();
            let after = Duration::from_micros(rng.below(6_000));
            tokio::spawn(async move {
                tokio::time::sleep(after).await;
                fire.cancel();
            });
            ("slow", json!({"steps": 3, "step_ms": 2}))
        } else if roll < 7 {
            cancel.cancel();
            ("echo", json!({"text": "cancelled before it began"}))
        } else {
            ("echo", json!({"text": "soak"}))
        };
        let name = format!("mcp__s{server}__{tool}");
        let out = runtime.call(&name, args, cancel).await;
        outcomes.push((out.id, out.status));
    }
    outcomes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_calls_with_cancels_and_crashes() {
    let m = marker("soak");
    let markers: Vec<String> = (0..SERVERS).map(|i| format!("{m}-s{i}")).collect();
    let fds_before = open_fds();
    let servers = (0..SERVERS)
        .map(|i| demo(&format!("s{i}"), &markers[i]))
        .collect();
    let config = config_of(servers, PolicyConfig::default());
    let (events, mut stream) = AgentRuntimeFactory::events();
    // Finished-event count per call id, sized up front so counting allocates nothing later.
    let finished = Arc::new(Mutex::new(vec![0u8; WARMUP + CALLS + 1]));
    let started_events = Arc::new(AtomicU64::new(0));
    let (counts, starts) = (finished.clone(), started_events.clone());
    let drain = tokio::spawn(async move {
        while let Some(event) = stream.recv().await {
            match event {
                RuntimeEvent::CallStarted { .. } => {
                    starts.fetch_add(1, Ordering::Relaxed);
                }
                RuntimeEvent::CallFinished { id, .. } => {
                    let mut counts = counts.lock().unwrap_or_else(|e| e.into_inner());
                    if let Some(c) = usize::try_from(id).ok().and_then(|i| counts.get_mut(i)) {
                        *c = c.saturating_add(1);
                    }
                }
                _ => {}
            }
        }
    });
    let options = RuntimeOptions {
        local_tools: false,
        extra_tools: Vec::new(),
        ..RuntimeOptions::default()
    };
    let runtime = Arc::new(
        AgentRuntimeFactory::create(&config, options, events)
            .await
            .expect("runtime"),
    );
    for report in &runtime.wait_started().await.servers {
        assert!(report.failure.is_none(), "{report:#?}");
    }

    let run = async {
        // Warm-up: allocator pools, rmcp's maps and buffers reach their working size.
        let next = Arc::new(AtomicUsize::new(0));
        let mut warm = tokio::task::JoinSet::new();
        for i in 0..CALLERS {
            warm.spawn(caller(runtime.clone(), next.clone(), WARMUP, 7 + i as u64));
        }
        let mut outcomes = Vec::new();
        while let Some(done) = warm.join_next().await {
            outcomes.extend(done.expect("warm-up caller"));
        }
        let fds_warm = open_fds();
        let rss_warm = rss_kib();

        let next = Arc::new(AtomicUsize::new(0));
        let mut callers = tokio::task::JoinSet::new();
        for i in 0..CALLERS {
            callers.spawn(caller(
                runtime.clone(),
                next.clone(),
                CALLS,
                1_000 + i as u64,
            ));
        }
        // Two crashes: SIGKILL server s1 at a third of the run and s2 at two thirds.
        for (at, victim) in [(CALLS / 3, 1), (2 * CALLS / 3, 2)] {
            while next.load(Ordering::Relaxed) < at {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            let pids = processes_with(&markers[victim]);
            assert!(!pids.is_empty(), "server s{victim} is not running");
            for pid in pids {
                // SAFETY: kill has no memory-safety preconditions.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
        while let Some(done) = callers.join_next().await {
            outcomes.extend(done.expect("caller"));
        }
        (outcomes, fds_warm, rss_warm, open_fds(), rss_kib())
    };
    let (outcomes, fds_warm, rss_warm, fds_end, rss_end) = tokio::time::timeout(BOUND, run)
        .await
        .expect("the soak run must end within its bound: a call hung");

    // Every call ended exactly once, with one of the three endings a call without approval has.
    let total = WARMUP + CALLS;
    assert_eq!(outcomes.len(), total);
    let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
    let mut seen = vec![false; total + 1];
    for (id, status) in &outcomes {
        let i = usize::try_from(*id).expect("id");
        assert!(i >= 1 && i <= total, "call id {id} out of range");
        assert!(!seen[i], "call {id} returned twice");
        seen[i] = true;
        assert!(
            matches!(
                status,
                CallStatus::Ok | CallStatus::Error | CallStatus::Cancelled
            ),
            "call {id} ended {status:?}"
        );
        *by_status.entry(status.as_str()).or_default() += 1;
    }
    assert!(
        by_status.get("ok").copied().unwrap_or(0) > CALLS / 2,
        "{by_status:?}"
    );
    assert!(
        by_status.get("cancelled").copied().unwrap_or(0) > 0,
        "{by_status:?}"
    );
    assert!(
        by_status.get("error").copied().unwrap_or(0) > 0,
        "{by_status:?}"
    );

    assert!(
        fds_end <= fds_warm,
        "fds grew: {fds_warm} after warm-up, {fds_end} at the end"
    );
    assert!(
        rss_end <= rss_warm + RSS_SLACK_KIB,
        "memory grew: {rss_warm} KiB after warm-up, {rss_end} KiB at the end"
    );

    let runtime = Arc::into_inner(runtime).expect("callers are done");
    runtime.close().await;
    drain.await.expect("drain");
    assert_eq!(started_events.load(Ordering::Relaxed), total as u64);
    let counts = finished.lock().unwrap_or_else(|e| e.into_inner());
    let wrong: Vec<usize> = (1..=total).filter(|&i| counts[i] != 1).take(10).collect();
    assert!(
        wrong.is_empty(),
        "calls not finished exactly once (first ids): {wrong:?}"
    );

    let left = wait_gone(&m, Duration::from_secs(3));
    assert!(left.is_empty(), "processes left: {left:?}");
    let left: Vec<i32> = markers
        .iter()
        .flat_map(|mk| wait_gone(mk, Duration::from_secs(3)))
        .collect();
    assert!(left.is_empty(), "processes left: {left:?}");
    let fds_after = open_fds();
    assert!(
        fds_after <= fds_before + 1,
        "fds left open: {fds_before} before the runtime, {fds_after} after closing it"
    );
    eprintln!(
        "soak: {by_status:?}; fds {fds_before} -> {fds_warm} -> {fds_end} -> {fds_after}; \
         RSS {rss_warm} KiB -> {rss_end} KiB"
    );
}
