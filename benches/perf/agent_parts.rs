//! The two parts of an agent turn alone, each beside its bare counterpart in the same run: the
//! model request (the same 25-round history every time) and the tool call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aimon_console::agent::providers::RequestOptions;
use aimon_console::agent::turn::{History, Item, ToolCall, ToolChoice, ToolList, ToolSpec};
use aimon_console::agent::HttpModelClient;
use aimon_console::runtime::AgentRuntime;

use crate::agent::{in_task, opening, BareModel, SYSTEM};
use crate::agent_body::{self, BareMessage};
use crate::bare;
use crate::report::{cpu_now, CallStats, Row};

/// A history as a conversation has it half way: `turns` rounds of an assistant call and its
/// tool result after the prompt.
fn history(turns: u32) -> Vec<Item> {
    let mut items = opening();
    for turn in 1..=turns {
        items.push(Item::assistant(
            format!("(demo model) Calling a tool again (round {turn})."),
            Vec::new(),
            vec![ToolCall {
                id: "call_demo_0".into(),
                name: "mcp__srv__echo".into(),
                arguments: format!("{{\"text\":\"round {turn}\"}}"),
            }],
        ));
        items.push(Item::ToolResult {
            call_id: "call_demo_0".into(),
            text: format!("round {turn}"),
        });
    }
    items
}

/// The loop's parts, each beside its bare counterpart in the same run: the model request
/// alone (the same 25-round history every time) and the tool call alone.
pub async fn part_rows(
    runtime: &Arc<AgentRuntime>,
    client: &Arc<HttpModelClient>,
    bare_model: &mut BareModel,
    bare_server: &mut bare::BareServer,
    tools: &[ToolSpec],
    options: &RequestOptions,
    n: usize,
) -> Vec<Row> {
    use aimon_console::agent::ModelClient;
    let items = history(25);
    let messages = BareMessage::of(SYSTEM, &items);
    // The product's side holds its history and tool list serialized as they were first sent.
    let (held, offered) = (
        Arc::new(History::new(Some(SYSTEM.into()), items)),
        Arc::new(ToolList::new(tools.to_vec())),
    );
    let mut rows = Vec::new();
    let (mut ours, mut limit) = (CallStats::default(), CallStats::default());
    let (mut ours_cpu, mut limit_cpu) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..5 {
        let (t, c) = (Instant::now(), cpu_now());
        for _ in 0..n {
            let body = match agent_body::bare_body(&messages, tools, ToolChoice::Auto, options) {
                Ok(b) => b,
                Err(e) => panic!("body: {e}"),
            };
            if let Err(e) = bare_model.post(&body) {
                panic!("bare post: {e}");
            }
        }
        limit.merge(CallStats::new(n, t.elapsed(), Vec::new()));
        limit_cpu += cpu_now() - c;
        let (t, c) = (Instant::now(), cpu_now());
        let (client, held, offered) = (client.clone(), held.clone(), offered.clone());
        in_task(async move {
            for _ in 0..n {
                if let Err(e) = client
                    .complete(&held, &offered, ToolChoice::Auto, &|_| {})
                    .await
                {
                    panic!("complete: {e}");
                }
            }
        })
        .await;
        ours.merge(CallStats::new(n, t.elapsed(), Vec::new()));
        ours_cpu += cpu_now() - c;
    }
    let per = |d: Duration| d.as_secs_f64() * 1e6 / (5 * n) as f64;
    rows.push(
        Row::new(
            "agent",
            "part: the model request (25-round history)",
            "requests/s",
            ours.per_sec(),
        )
        .against("bare HTTP/1.1 POST, same body", limit.per_sec()),
    );
    rows.push(
        Row::new(
            "agent",
            "part: the model request",
            "CPU us each",
            per(ours_cpu),
        )
        .against("bare HTTP/1.1 POST, same body", per(limit_cpu)),
    );
    let (mut ours, mut limit) = (CallStats::default(), CallStats::default());
    let (mut ours_cpu, mut limit_cpu) = (Duration::ZERO, Duration::ZERO);
    let arguments = serde_json::json!({"text": "round 1"});
    for _ in 0..5 {
        let (t, c) = (Instant::now(), cpu_now());
        if let Err(e) = bare_server.sequential(n, "echo", &arguments) {
            panic!("bare call: {e}");
        }
        limit.merge(CallStats::new(n, t.elapsed(), Vec::new()));
        limit_cpu += cpu_now() - c;
        let (t, c) = (Instant::now(), cpu_now());
        let (runtime, arguments) = (runtime.clone(), arguments.clone());
        in_task(async move {
            for _ in 0..n {
                runtime
                    .call_from(
                        "mcp__srv__echo",
                        arguments.clone(),
                        tokio_util::sync::CancellationToken::new(),
                        aimon_console::runtime::CallOrigin::Agent {
                            reason: "bench".into(),
                        },
                    )
                    .await;
            }
        })
        .await;
        ours.merge(CallStats::new(n, t.elapsed(), Vec::new()));
        ours_cpu += cpu_now() - c;
    }
    rows.push(
        Row::new("agent", "part: the tool call", "calls/s", ours.per_sec())
            .against("bare JSON-RPC call", limit.per_sec()),
    );
    rows.push(
        Row::new("agent", "part: the tool call", "CPU us each", per(ours_cpu))
            .against("bare JSON-RPC call", per(limit_cpu)),
    );
    rows
}
