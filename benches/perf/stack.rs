//! The whole call path as an embedder or the console drives it: `AgentRuntime::call` → registry
//! → schema check → approval gate → `McpTool` → client → stdio, against a real server process.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use aimon_console::config::{AnnotationTrust, Config, PolicyConfig, ServerConfig};
use aimon_console::runtime::{AgentRuntime, AgentRuntimeFactory, CallStatus, RuntimeOptions};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::report::CallStats;
use crate::ServerCmd;

/// A stdio server entry for `cmd`, trusted so read-only tools run without asking.
pub fn server_config(name: &str, cmd: &ServerCmd) -> ServerConfig {
    let mut server = ServerConfig::stdio(name, cmd.command.clone(), cmd.args.clone());
    server.annotation_trust = AnnotationTrust::Trust;
    server
}

pub fn config(servers: Vec<ServerConfig>) -> Config {
    Config::from_servers(servers, PolicyConfig::default())
}

/// A runtime on one stdio server called `name`, its event stream drained in the background.
pub async fn runtime(name: &str, cmd: &ServerCmd) -> Arc<AgentRuntime> {
    runtime_for(server_config(name, cmd)).await
}

/// A runtime on `server` (trusted), its event stream drained in the background.
pub async fn runtime_for(mut server: ServerConfig) -> Arc<AgentRuntime> {
    server.annotation_trust = AnnotationTrust::Trust;
    let name = server.name.clone();
    let (events, mut stream) = AgentRuntimeFactory::events();
    tokio::spawn(async move { while stream.recv().await.is_some() {} });
    let options = RuntimeOptions {
        local_tools: false,
        extra_tools: Vec::new(),
        ..RuntimeOptions::default()
    };
    let runtime = match AgentRuntimeFactory::create(&config(vec![server]), options, events).await {
        Ok(r) => r,
        Err(e) => panic!("runtime for {name}: {e}"),
    };
    for report in &runtime.wait_started().await.servers {
        assert!(report.failure.is_none(), "{name} did not start: {report:?}");
    }
    Arc::new(runtime)
}

/// `calls` calls of `tool`, spread over `callers` concurrent callers (1 = sequential).
pub async fn calls(
    runtime: &Arc<AgentRuntime>,
    tool: &str,
    arguments: &Value,
    calls: usize,
    callers: usize,
) -> CallStats {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..callers.max(1) {
        let runtime = runtime.clone();
        let next = next.clone();
        let tool = tool.to_string();
        let arguments = arguments.clone();
        tasks.spawn(async move {
            let mut latencies = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < calls {
                let t = Instant::now();
                let out = runtime
                    .call(&tool, arguments.clone(), CancellationToken::new())
                    .await;
                assert_eq!(out.status, CallStatus::Ok, "{out:?}");
                latencies.push(t.elapsed());
            }
            latencies
        });
    }
    let mut latencies = Vec::with_capacity(calls);
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(l) => latencies.extend(l),
            Err(e) => panic!("a caller failed: {e}"),
        }
    }
    CallStats::new(calls, started.elapsed(), latencies)
}

/// Closes the runtime (and its server) if this was the last handle.
pub async fn close(runtime: Arc<AgentRuntime>) {
    if let Ok(runtime) = Arc::try_unwrap(runtime) {
        runtime.close().await;
    }
}
