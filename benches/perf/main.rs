//! `cargo bench`: aimon-console side by side with the physical limit and with peers, in one run.
//!
//! Sections (run all, or name some: `cargo bench --bench perf -- startup call/demo`):
//! - `startup`: N = 1, 8, 32, 64 demo servers with `--init-delay-ms 200`, against the slowest
//!   server's own start and one server alone; the first tool of a fast server callable with a
//!   hung server in the same config, against the fast server's own start; the console's start
//!   with zero servers.
//! - `call/demo`: `tools/call echo` through the whole stack against the demo server, beside a
//!   bare JSON-RPC loop over the same kind of pipe speaking the same protocol revision,
//!   sequential then 10 and 100 callers; then sequential on tokio's multi-thread runtime, for
//!   comparison.
//! - `call/everything`: the same against server-everything, with the Python SDK client as peer.
//! - `call/http`: the same sequential path over Streamable HTTP on loopback (`demo-server
//!   --http`), beside a bare loop of hand-written HTTP/1.1 POSTs on one kept-alive socket.
//! - `agent`: the agent loop's cost per turn (demo model answering at once with one tool call,
//!   the demo server) beside a bare loop of one HTTP POST and one JSON-RPC call per turn; a
//!   long conversation's request body as held against serialized whole; the console (in tmux)
//!   drawing a stream of 20,000 tokens a second: its CPU and slowest frame.
//! - `memory`: peak RSS of `check` with 64 servers × 100 tools beside 0 servers; of `check` with
//!   one server listing 100,000 tools in pages of 1,000.
//! - `daemon`: an approval's round trip through the daemon with two consoles attached, against a
//!   read-only call through it; 8 consoles reading 10,000 events a second, and the daemon's CPU.
//! - `attach`: the console over a daemon (tmux): idle CPU against 0 %, beside the console with its
//!   own servers; its frames while calls go through the daemon, p50 and p99 against 1 ms.
//! - `tui`: one frame with 64 servers, 5,000 tools, 10,000 calls and 100,000 lines held, against an
//!   empty one; the CPU of the idle console over 10 s (needs tmux).
//!
//! Everything but that comparison runs on a current-thread runtime, as the product does.
//!
//! Prints a table; writes `target/bench/results.json` and `target/bench/table.md`.
//! `AIMON_BENCH_SCALE` (default 1) multiplies every call count.

mod agent;
mod agent_body;
mod agent_clients;
mod agent_parts;
mod agent_stream;
mod attach;
mod bare;
mod daemon;
mod exit;
mod gateway;
mod http;
mod memory;
mod peer;
mod report;
mod stack;
mod startup;
mod tui;

use std::time::Duration;

use serde_json::{json, Value};

use report::{call_rows, CallStats, Machine, Row};

/// A stdio server command.
#[derive(Debug, Clone)]
pub struct ServerCmd {
    pub command: String,
    pub args: Vec<String>,
}

const BINARY: &str = env!("CARGO_BIN_EXE_aimon-console");

/// Call counts, scaled by `AIMON_BENCH_SCALE`.
struct Scale {
    factor: f64,
}

impl Scale {
    fn from_env() -> Scale {
        let factor = std::env::var("AIMON_BENCH_SCALE")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|f| *f > 0.0)
            .unwrap_or(1.0);
        Scale { factor }
    }

    fn n(&self, base: usize) -> usize {
        ((base as f64 * self.factor).round() as usize).max(1)
    }
}

/// One server to run the call path against, with the tool and arguments to call.
#[derive(Clone)]
struct Target {
    section: &'static str,
    /// Made when the section runs (the peers' install check only for a section that uses them).
    server: fn() -> ServerCmd,
    tool: &'static str,
    arguments: Value,
    /// Sequential calls per round; rounds alternate bare and full stack.
    per_round: usize,
    rounds: usize,
    /// Calls for each concurrent case (0: none).
    concurrent_calls: usize,
    /// Also run the Python SDK client as the peer, with this many calls.
    python_calls: usize,
    /// The least sequential calls/s may be, as a share of the bare loop's (the target).
    against_bare: Option<f64>,
}

/// The call path against `target`'s server on the runtime it is polled on: sequential beside
/// the bare loop (and the Python SDK client, for server-everything), then 10 and 100 callers.
async fn call_section(target: &Target, rows: &mut Vec<Row>) {
    let name = "srv";
    let qualified = format!("mcp__{name}__{}", target.tool);
    let server = (target.server)();
    let runtime = stack::runtime(name, &server).await;
    let (ours, mut bare) = sequential_rows(target, "sequential", &runtime, rows).await;
    let warmup = (target.per_round / 10).max(20);

    if target.python_calls > 0 {
        let python = peer::python_client(
            &server,
            target.python_calls,
            warmup,
            target.tool,
            &target.arguments,
        );
        let mut theirs = call_rows(
            target.section,
            "sequential",
            &ours,
            "Python SDK mcp==2.3.0",
            &python,
        );
        theirs[0] = theirs[0].clone().at_least(2.0);
        rows.extend(theirs);
    }

    if target.concurrent_calls > 0 {
        for callers in [10, 100] {
            let limit = match bare.windowed(
                target.concurrent_calls,
                callers,
                target.tool,
                &target.arguments,
            ) {
                Ok(stats) => stats,
                Err(e) => panic!("{}: bare loop failed: {e}", target.section),
            };
            let ours = stack::calls(
                &runtime,
                &qualified,
                &target.arguments,
                target.concurrent_calls,
                callers,
            )
            .await;
            rows.extend(call_rows(
                target.section,
                &format!("{callers} callers"),
                &ours,
                &format!("bare loop, {callers} in flight"),
                &limit,
            ));
        }
    }
    drop(bare);
    stack::close(runtime).await;
}

/// Sequential calls beside a bare loop speaking the revision the stack negotiated, and, when
/// that is a newer one, a second bare loop on the last revision with `initialize`: what the
/// newer revision's per-request context costs the server, stack or no stack. Returns our
/// figures and the first bare loop (for more rounds).
async fn sequential_rows(
    target: &Target,
    case: &str,
    runtime: &std::sync::Arc<aimon_console::runtime::AgentRuntime>,
    rows: &mut Vec<Row>,
) -> (CallStats, bare::BareServer) {
    let revision = negotiated(runtime);
    let mut bares = vec![bare_loop(target, &revision)];
    if revision != bare::INITIALIZE_REVISION {
        bares.push(bare_loop(target, bare::INITIALIZE_REVISION));
    }
    let (ours, limits) = sequential_rounds(target, runtime, &mut bares).await;
    let mut seq = call_rows(
        target.section,
        case,
        &ours,
        &bare_label(&revision),
        &limits[0],
    );
    if let Some(ratio) = target.against_bare {
        seq[0] = seq[0].clone().at_least(ratio);
    }
    rows.extend(seq);
    if let Some(older) = limits.get(1) {
        let label = bare_label(bare::INITIALIZE_REVISION);
        rows.extend(call_rows(target.section, case, &ours, &label, older));
    }
    (ours, bares.swap_remove(0))
}

/// The protocol revision the stack negotiated with its one server: the bare loop speaks it too.
fn negotiated(runtime: &aimon_console::runtime::AgentRuntime) -> String {
    match runtime.reports().first() {
        Some(report) => match &report.protocol_version {
            Some(revision) => revision.clone(),
            None => panic!("{}: no protocol revision in {report:?}", report.name),
        },
        None => panic!("the runtime has no server"),
    }
}

fn bare_loop(target: &Target, revision: &str) -> bare::BareServer {
    match bare::BareServer::start(&(target.server)(), revision) {
        Ok(b) => b,
        Err(e) => panic!(
            "{}: bare loop ({revision}) could not start: {e}",
            target.section
        ),
    }
}

fn bare_label(revision: &str) -> String {
    format!("bare JSON-RPC loop, {revision}")
}

/// Warm-up, then `rounds` rounds alternating each bare loop and the full stack (so drift in the
/// machine's load falls on all): (ours, each bare loop's figures).
async fn sequential_rounds(
    target: &Target,
    runtime: &std::sync::Arc<aimon_console::runtime::AgentRuntime>,
    bares: &mut [bare::BareServer],
) -> (CallStats, Vec<CallStats>) {
    let qualified = format!("mcp__srv__{}", target.tool);
    // Warm-up every side (page cache, JIT of node, allocator).
    let warmup = (target.per_round / 10).max(20);
    for bare in bares.iter_mut() {
        let _ = bare.sequential(warmup, target.tool, &target.arguments);
    }
    stack::calls(runtime, &qualified, &target.arguments, warmup, 1).await;
    let mut ours = CallStats::default();
    let mut limits: Vec<CallStats> = bares.iter().map(|_| CallStats::default()).collect();
    for _ in 0..target.rounds {
        for (bare, limit) in bares.iter_mut().zip(&mut limits) {
            match bare.sequential(target.per_round, target.tool, &target.arguments) {
                Ok(stats) => limit.merge(stats),
                Err(e) => panic!("{}: bare loop failed: {e}", target.section),
            }
        }
        ours.merge(stack::calls(runtime, &qualified, &target.arguments, target.per_round, 1).await);
    }
    (ours, limits)
}

/// The same sequential path on tokio's multi-thread runtime, for comparison: the console and
/// the headless commands run on a current-thread one (`main.rs`), because on 2 cores wake-ups
/// between worker threads, not our code, were most of the gap to the bare loop.
async fn multi_thread_comparison(target: &Target, rows: &mut Vec<Row>) {
    let runtime = stack::runtime("srv", &(target.server)()).await;
    let target = Target {
        against_bare: None,
        ..target.clone()
    };
    let case = "sequential, multi-thread runtime";
    sequential_rows(&target, case, &runtime, rows).await;
    stack::close(runtime).await;
}

/// The least sequential calls/s over HTTP may be, as a share of the bare HTTP loop's.
const HTTP_AGAINST_BARE: f64 = 0.7;

/// Sequential `echo` over Streamable HTTP: the whole stack against the bare HTTP loop, in
/// alternating rounds against the same server.
async fn http_section(per_round: usize, rounds: usize, rows: &mut Vec<Row>) {
    use aimon_console::config::{ServerConfig, TransportKind};
    let demo = http::HttpDemo::start(BINARY);
    let runtime = stack::runtime_for(ServerConfig::remote(
        "srv",
        TransportKind::StreamableHttp,
        &demo.url,
    ))
    .await;
    // The revision the stack negotiated, and (when that is a newer one) the last revision with
    // `initialize` as a second reference, as for stdio.
    let revision = negotiated(&runtime);
    let mut revisions = vec![revision.clone()];
    if revision != bare::INITIALIZE_REVISION {
        revisions.push(bare::INITIALIZE_REVISION.to_string());
    }
    let mut bares: Vec<http::BareHttp> = revisions
        .iter()
        .map(|r| match http::BareHttp::start(&demo.url, r) {
            Ok(b) => b,
            Err(e) => panic!("call/http: bare loop ({r}) could not start: {e}"),
        })
        .collect();
    let arguments = json!({"text": "hello"});
    let warmup = (per_round / 10).max(20);
    for b in &mut bares {
        let _ = b.sequential(warmup, "echo", &arguments);
    }
    stack::calls(&runtime, "mcp__srv__echo", &arguments, warmup, 1).await;
    let mut ours = CallStats::default();
    let mut limits = vec![CallStats::default(); bares.len()];
    // The CPU this process spends on each side: the loop the target is against, and ours.
    let (mut limit_cpu, mut ours_cpu) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..rounds {
        for (i, (b, limit)) in bares.iter_mut().zip(&mut limits).enumerate() {
            let cpu = report::cpu_now();
            match b.sequential(per_round, "echo", &arguments) {
                Ok(stats) => limit.merge(stats),
                Err(e) => panic!("call/http: bare loop failed: {e}"),
            }
            if i == 0 {
                limit_cpu += report::cpu_now() - cpu;
            }
        }
        let cpu = report::cpu_now();
        ours.merge(stack::calls(&runtime, "mcp__srv__echo", &arguments, per_round, 1).await);
        ours_cpu += report::cpu_now() - cpu;
    }
    let per_call = |d: Duration| d.as_secs_f64() * 1e6 / (rounds * per_round) as f64;
    for (i, (r, limit)) in revisions.iter().zip(&limits).enumerate() {
        let mut seq = call_rows(
            "call/http",
            "sequential",
            &ours,
            &format!("bare HTTP/1.1 loop, {r}"),
            limit,
        );
        // Against the loop speaking the negotiated revision: the target (34).
        if i == 0 {
            seq[0] = seq[0].clone().at_least(HTTP_AGAINST_BARE);
            seq.push(
                Row::new(
                    "call/http",
                    "sequential",
                    "CPU us a call (this process)",
                    per_call(ours_cpu),
                )
                .against(&format!("bare HTTP/1.1 loop, {r}"), per_call(limit_cpu)),
            );
        }
        rows.extend(seq);
    }
    stack::close(runtime).await;
    drop(demo);
}

fn demo_config(
    dir: &std::path::Path,
    name: &str,
    servers: usize,
    flags: &[&str],
) -> std::path::PathBuf {
    let mut yaml = String::from("mcp:\n  servers:\n");
    let args: Vec<String> = std::iter::once("demo-server")
        .chain(flags.iter().copied())
        .map(|a| format!("{a:?}"))
        .collect();
    for i in 0..servers {
        yaml.push_str(&format!(
            "    - name: s{i}\n      command: {BINARY:?}\n      args: [{}]\n",
            args.join(", ")
        ));
    }
    if servers == 0 {
        yaml = "mcp:\n  servers: []\n".into();
    }
    let path = dir.join(name);
    if let Err(e) = std::fs::write(&path, yaml) {
        panic!("cannot write {}: {e}", path.display());
    }
    path
}

fn wanted(sections: &[String], name: &str) -> bool {
    sections.is_empty() || sections.iter().any(|s| name.starts_with(s.as_str()))
}

fn main() {
    // `cargo bench` passes `--bench`; anything else not starting with `-` names a section.
    let sections: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let scale = Scale::from_env();
    // The product's runtime: `main.rs` runs the console and the headless commands on a
    // current-thread one, so every figure is taken on one too (but the comparison below).
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => panic!("tokio runtime: {e}"),
    };
    let tmp = match tempfile::tempdir() {
        Ok(t) => t,
        Err(e) => panic!("temp dir: {e}"),
    };
    let machine = Machine::read();
    println!(
        "aimon-console bench on {} CPU(s), {} ({}); scale {}",
        machine.cpus, machine.cpu_model, machine.os, scale.factor
    );
    let mut rows = Vec::new();
    let started = std::time::Instant::now();

    let startup_counts = [1, 8, 32, 64];
    let startup_reps = 3;
    if wanted(&sections, "startup") {
        rows.extend(runtime.block_on(startup::servers(&startup_counts, startup_reps, 200, BINARY)));
        rows.push(runtime.block_on(startup::first_tool_with_a_hung_server(9, BINARY)));
        let empty = demo_config(tmp.path(), "empty.yaml", 0, &[]);
        rows.push(startup::console_zero_servers(BINARY, &empty, 10));
        eprintln!("startup done at {:.0?}", started.elapsed());
    }

    let targets = [
        Target {
            section: "call/demo",
            server: || ServerCmd {
                command: BINARY.into(),
                args: vec!["demo-server".into()],
            },
            tool: "echo",
            arguments: json!({"text": "hello"}),
            per_round: scale.n(1_000),
            rounds: 9,
            concurrent_calls: scale.n(10_000),
            python_calls: 0,
            against_bare: Some(0.8),
        },
        Target {
            section: "call/everything",
            server: peer::everything,
            tool: "echo",
            arguments: json!({"message": "hello"}),
            per_round: scale.n(500),
            rounds: 6,
            concurrent_calls: 0,
            python_calls: scale.n(2_000),
            against_bare: None,
        },
    ];
    for target in &targets {
        if wanted(&sections, target.section) {
            runtime.block_on(call_section(target, &mut rows));
            eprintln!("{} done at {:.0?}", target.section, started.elapsed());
        }
    }
    if wanted(&sections, "call/http") {
        runtime.block_on(http_section(scale.n(500), 6, &mut rows));
        eprintln!("call/http done at {:.0?}", started.elapsed());
    }
    if wanted(&sections, "call/demo") {
        let multi = match tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(e) => panic!("tokio runtime: {e}"),
        };
        multi.block_on(multi_thread_comparison(&targets[0], &mut rows));
        multi.shutdown_timeout(Duration::from_secs(2));
        eprintln!(
            "call/demo (multi-thread comparison) done at {:.0?}",
            started.elapsed()
        );
    }

    if wanted(&sections, "agent") {
        // 5 rounds of 4 conversations of 50 turns: 1,000 turns each side.
        rows.extend(runtime.block_on(agent::rows(BINARY, scale.n(4), 5)));
        rows.extend(agent_stream::rows(BINARY, tmp.path()));
        eprintln!("agent done at {:.0?}", started.elapsed());
    }

    let (mem_servers, mem_tools, mem_one_server_tools) = (64, 100, 100_000);
    if wanted(&sections, "memory") {
        let extra = (mem_tools - 5).to_string();
        let big = demo_config(
            tmp.path(),
            "big.yaml",
            mem_servers,
            &["--extra-tools", &extra],
        );
        let empty = demo_config(tmp.path(), "empty.yaml", 0, &[]);
        // The demo server's five tools and the generated ones; real servers with this many
        // tools page their lists (one page would pass the 16 MiB line limit).
        let extra = (mem_one_server_tools - 5).to_string();
        let one = demo_config(
            tmp.path(),
            "one.yaml",
            1,
            &["--extra-tools", &extra, "--tools-page", "1000"],
        );
        rows.extend(memory::rows(
            BINARY,
            &big,
            &empty,
            (mem_servers, mem_tools),
            &one,
            mem_one_server_tools,
        ));
        eprintln!("memory done at {:.0?}", started.elapsed());
    }
    if wanted(&sections, "gateway") {
        rows.extend(gateway::rows(BINARY, tmp.path(), scale.n(1_000)));
        rows.extend(gateway::memory_rows(BINARY, tmp.path(), 100));
        eprintln!("gateway done at {:.0?}", started.elapsed());
    }
    if wanted(&sections, "daemon") {
        rows.extend(daemon::approval_rows(BINARY, tmp.path(), scale.n(200)));
        rows.extend(daemon::fanout_rows(BINARY, tmp.path(), 3));
        eprintln!("daemon done at {:.0?}", started.elapsed());
    }
    if wanted(&sections, "attach") {
        rows.extend(attach::rows(BINARY, tmp.path(), scale.n(5_000)));
        eprintln!("attach done at {:.0?}", started.elapsed());
    }
    if wanted(&sections, "exit") {
        rows.extend(exit::rows(BINARY, tmp.path(), 11));
        eprintln!("exit done at {:.0?}", started.elapsed());
    }
    if wanted(&sections, "tui") {
        rows.extend(runtime.block_on(tui::frame_rows(50)));
        let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.yaml");
        let flood = demo_config(tmp.path(), "flood.yaml", 1, &["--flood-stderr"]);
        rows.extend(tui::idle_cpu_rows(BINARY, &example, &flood));
        eprintln!("tui done at {:.0?}", started.elapsed());
    }
    runtime.shutdown_timeout(Duration::from_secs(2));

    println!("\n{}", report::table(&rows));
    let scale_json = json!({
        "factor": scale.factor,
        "startup": {"counts": startup_counts, "reps": startup_reps, "init_delay_ms": 200},
        "call_demo": {"sequential": 9 * scale.n(1_000), "concurrent_each": scale.n(10_000)},
        "call_everything": {"sequential": 6 * scale.n(500), "python": scale.n(2_000)},
        "call_http": {"sequential": 6 * scale.n(500)},
        "memory": {"servers": mem_servers, "tools_each": mem_tools, "one_server_tools": mem_one_server_tools, "tools_page": 1000},
        "seconds": started.elapsed().as_secs_f64(),
    });
    match report::write(&rows, &machine, &scale_json) {
        Ok(path) => println!("written: {}", path.display()),
        Err(e) => eprintln!("could not write results: {e}"),
    }
    let missed: Vec<&Row> = rows
        .iter()
        .filter(|r| r.target.as_ref().is_some_and(|t| !t.met))
        .collect();
    for r in &missed {
        println!("target missed: {} {} {}", r.section, r.case, r.metric);
    }
}
