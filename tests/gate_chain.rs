//! Property test of the whole approval chain, end to end: arbitrary annotations (as a server
//! would send them) × trust → `McpTool` (trait resolution) → the runtime's call path → the
//! `pre_tool_use` hook (an `mcp_tool` hook whose tool answers allow, deny, defer, garbage or
//! an error, chosen per tool) → the gate, under an arbitrary policy and arbitrary
//! `policy.rules`, with the operator's answers (and so the session ledger) arbitrary.
//!
//! The promise: no combination lets a destructive call run without the operator allowing that
//! very call, an allow rule or hook, or `policy.approval: never`; nothing above the ceiling
//! runs or asks; a deny (a hook's or a rule's) always holds; and a tool runs exactly when its
//! call says `ok`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aimon_console::approval::ApprovalDecision;
use std::time::Duration;

use aimon_console::approval::glob_matches;
use aimon_console::config::{
    AnnotationTrust, ApprovalPolicy, ApprovalRule, Config, HookAction, HookConfig, HookEvent,
    McpConfig, PolicyConfig, RuleDecision, SideEffectCeiling, ToolPattern,
};
use aimon_console::mcp::client::{McpClient, McpError};
use aimon_console::mcp::tool::{ListedTool, McpTool};
use aimon_console::runtime::{AgentRuntimeFactory, CallStatus, RuntimeEvent, RuntimeOptions};
use aimon_console::tool::{DestructiveBehavior, ProgressSink, SideEffectLevel, Tool};
use proptest::prelude::*;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ToolAnnotations};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// A client that answers every call with success and remembers which tools ran; or, as the
/// hooks' server, answers each call with what `answers` says for the tool in its arguments.
struct FakeClient {
    server: String,
    ran: Arc<Mutex<Vec<String>>>,
    answers: Option<HashMap<String, HookSays>>,
}

/// What the hook's tool answers about one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HookSays {
    Allow,
    Deny,
    Defer,
    Garbage,
    Error,
}

#[async_trait::async_trait]
impl McpClient for FakeClient {
    fn server(&self) -> &str {
        &self.server
    }

    fn is_connected(&self) -> bool {
        true
    }

    async fn list_tools(&self) -> Result<Vec<ListedTool>, McpError> {
        Ok(Vec::new())
    }

    async fn call_tool(
        &self,
        tool: &str,
        arguments: JsonObject,
        _cancel: CancellationToken,
        _progress: ProgressSink,
    ) -> Result<CallToolResult, McpError> {
        if let Some(answers) = &self.answers {
            let about = arguments.get("tool").and_then(|t| t.as_str()).unwrap_or("");
            let text = |t: &str| Ok(CallToolResult::success(vec![ContentBlock::text(t)]));
            return match answers.get(about).copied() {
                Some(HookSays::Allow) => text(r#"{"decision":"allow","reason":"fine"}"#),
                Some(HookSays::Deny) => text(r#"{"decision":"deny","reason":"no"}"#),
                Some(HookSays::Defer) | None => text(r#"{"decision":"defer"}"#),
                Some(HookSays::Garbage) => text("<html>garbage"),
                Some(HookSays::Error) => {
                    Ok(CallToolResult::error(vec![ContentBlock::text("broken")]))
                }
            };
        }
        self.ran
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(format!("mcp__{}__{tool}", self.server));
        Ok(CallToolResult::success(vec![ContentBlock::text("done")]))
    }

    async fn close(&self) -> Result<(), McpError> {
        Ok(())
    }
}

type Hints = Option<(Option<bool>, Option<bool>, Option<bool>, Option<bool>)>;

fn hint() -> impl Strategy<Value = Option<bool>> {
    prop_oneof![Just(None), Just(Some(false)), Just(Some(true))]
}

fn hints() -> impl Strategy<Value = Hints> {
    proptest::option::of((hint(), hint(), hint(), hint()))
}

fn trust() -> impl Strategy<Value = AnnotationTrust> {
    prop_oneof![Just(AnnotationTrust::Ignore), Just(AnnotationTrust::Trust)]
}

fn ceiling() -> impl Strategy<Value = SideEffectCeiling> {
    prop_oneof![
        Just(SideEffectCeiling::ReadOnly),
        Just(SideEffectCeiling::Mutating)
    ]
}

fn approval() -> impl Strategy<Value = ApprovalPolicy> {
    prop_oneof![
        Just(ApprovalPolicy::AskMutating),
        Just(ApprovalPolicy::AskAll),
        Just(ApprovalPolicy::Never)
    ]
}

fn decision() -> impl Strategy<Value = ApprovalDecision> {
    prop_oneof![
        Just(ApprovalDecision::AllowOnce),
        Just(ApprovalDecision::AllowForSession),
        Just(ApprovalDecision::Deny)
    ]
}

fn hook_says() -> impl Strategy<Value = Option<HookSays>> {
    prop_oneof![
        Just(None),
        Just(Some(HookSays::Allow)),
        Just(Some(HookSays::Deny)),
        Just(Some(HookSays::Defer)),
        Just(Some(HookSays::Garbage)),
        Just(Some(HookSays::Error)),
    ]
}

fn rule_decision() -> impl Strategy<Value = RuleDecision> {
    prop_oneof![
        Just(RuleDecision::Allow),
        Just(RuleDecision::Deny),
        Just(RuleDecision::Ask)
    ]
}

/// A rule over the tools `mcp__s{0..4}__act`: a glob, a server, or both.
fn rule() -> impl Strategy<Value = ApprovalRule> {
    let globs = prop_oneof![
        Just(None),
        Just(Some("*")),
        Just(Some("mcp__s0__act")),
        Just(Some("mcp__s1__*")),
        Just(Some("mcp__s?__act")),
        Just(Some("act")),
    ];
    let servers = prop_oneof![
        Just(None),
        Just(Some("s0")),
        Just(Some("s1")),
        Just(Some("s2"))
    ];
    (globs, servers, rule_decision()).prop_map(|(tool, server, decision)| ApprovalRule {
        pin: None,
        pattern: ToolPattern {
            tool: tool.or(server.is_none().then_some("*")).map(String::from),
            server: server.map(String::from),
        },
        decision,
    })
}

/// The decision of the first rule that matches `mcp__{server}__act`, the long way round.
fn first_rule(rules: &[ApprovalRule], server: &str) -> Option<RuleDecision> {
    first_rule_of(rules, server, "act")
}

/// The first rule matching `mcp__SERVER__TOOL`, as the gate finds it.
fn first_rule_of(rules: &[ApprovalRule], server: &str, tool: &str) -> Option<RuleDecision> {
    let name = format!("mcp__{server}__{tool}");
    rules
        .iter()
        .find(|r| {
            r.pattern.server.as_deref().is_none_or(|s| s == server)
                && r.pattern.tool.as_deref().is_none_or(|g| {
                    glob_matches(g, &name) || (r.pattern.server.is_some() && glob_matches(g, tool))
                })
        })
        .map(|r| r.decision)
}

/// The hook's tool: read-only (trusted), so no ceiling refuses the hook's own call.
fn hook_tool() -> rmcp::model::Tool {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    let mut a = ToolAnnotations::new();
    a.read_only_hint = Some(true);
    rmcp::model::Tool::new("decide", "decides", Arc::new(schema)).annotate(a)
}

fn rmcp_tool(hints: &Hints) -> rmcp::model::Tool {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    let tool = rmcp::model::Tool::new("act", "does something", Arc::new(schema));
    match hints {
        None => tool,
        Some((read_only, destructive, idempotent, open_world)) => {
            let mut a = ToolAnnotations::new();
            a.read_only_hint = *read_only;
            a.destructive_hint = *destructive;
            a.idempotent_hint = *idempotent;
            a.open_world_hint = *open_world;
            tool.annotate(a)
        }
    }
}

/// What the driver saw: the answer given to each call id that asked.
type Answers = Arc<Mutex<HashMap<u64, ApprovalDecision>>>;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn no_destructive_call_runs_without_an_approval(
        tools in proptest::collection::vec((hints(), trust(), hook_says()), 1..4),
        rules in proptest::collection::vec(rule(), 0..4),
        hooked in proptest::bool::ANY,
        ceiling in ceiling(),
        approval in approval(),
        answers in proptest::collection::vec(decision(), 0..12),
        calls in proptest::collection::vec(0usize..4, 1..12),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async {
            let ran = Arc::new(Mutex::new(Vec::new()));
            let mut extra: Vec<Arc<dyn Tool>> = Vec::new();
            let mut hook_answers = HashMap::new();
            for (i, (h, t, says)) in tools.iter().enumerate() {
                let client = Arc::new(FakeClient { server: format!("s{i}"), ran: ran.clone(), answers: None });
                extra.push(Arc::new(McpTool::new(&format!("s{i}"), *t, rmcp_tool(h).into(), client)));
                if let Some(says) = says {
                    hook_answers.insert(format!("mcp__s{i}__act"), *says);
                }
            }
            let hook_client = Arc::new(FakeClient {
                server: "hooks".into(),
                ran: Arc::default(),
                answers: Some(hook_answers),
            });
            extra.push(Arc::new(McpTool::new("hooks", AnnotationTrust::Trust, hook_tool().into(), hook_client)));
            let hooks = if hooked {
                vec![HookConfig {
                    event: HookEvent::PreToolUse,
                    matches: ToolPattern::default(),
                    action: HookAction::McpTool {
                        server: "hooks".into(),
                        tool: "decide".into(),
                        arguments: json!({"tool": "{{tool.name}}"}).as_object().cloned().unwrap_or_default(),
                    },
                    timeout: Duration::from_secs(10),
                }]
            } else {
                Vec::new()
            };
            let config = Config {
                path: "/dev/null".into(),
                mcp: McpConfig { servers: Vec::new(), startup_budget: None, max_concurrent_starts: None, roots: Vec::new() },
                policy: PolicyConfig { side_effect_ceiling: ceiling, approval, rules: rules.clone(), ..PolicyConfig::default() },
                notifications: Default::default(),
                hooks,
                agent: None,
                gateway: Default::default(),
                telemetry: Default::default(),
                daemon: Default::default(),
                source_digest: 0,
            };
            let (events, mut stream) = AgentRuntimeFactory::events();
            let given: Answers = Arc::default();
            let record = given.clone();
            let mut script = answers.clone().into_iter();
            let driver = tokio::spawn(async move {
                while let Some(event) = stream.recv().await {
                    if let RuntimeEvent::ApprovalRequested(request) = event {
                        let answer = script.next().unwrap_or(ApprovalDecision::Deny);
                        record.lock().unwrap_or_else(|e| e.into_inner()).insert(request.id, answer);
                        request.respond(answer);
                    }
                }
            });
            let options = RuntimeOptions {
                local_tools: false,
                extra_tools: extra,
                ..RuntimeOptions::default()
            };
            let runtime = AgentRuntimeFactory::create(&config, options, events).await.expect("runtime");
            runtime.wait_started().await;
            let descriptors: Vec<_> = (0..tools.len())
                .map(|i| runtime.tools().into_iter().find(|d| d.name == format!("mcp__s{i}__act")).expect("registered"))
                .collect();

            // Resolution itself: an untrusted server's tool is always mutating and destructive.
            for (d, (_, t, _)) in descriptors.iter().zip(&tools) {
                if *t == AnnotationTrust::Ignore {
                    prop_assert_eq!(d.side_effect, SideEffectLevel::Mutating);
                    prop_assert_eq!(d.destructive, DestructiveBehavior::Destructive);
                }
            }

            let mut oks = 0;
            for index in calls {
                let i = index % descriptors.len();
                let Some(d) = descriptors.get(i) else { continue };
                let runs_before = ran.lock().unwrap_or_else(|e| e.into_inner()).len();
                let covered_before = runtime.gate().ledger().iter().any(|e| e.tool_name == d.name);
                let out = runtime.call(&d.name, json!({}), CancellationToken::new()).await;
                let asked = given.lock().unwrap_or_else(|e| e.into_inner()).get(&out.id).copied();
                let this_ran = ran.lock().unwrap_or_else(|e| e.into_inner()).len() > runs_before;
                if out.status == CallStatus::Ok {
                    oks += 1;
                }
                // A deny rule holds for the hook's own call too: then the hook says nothing.
                let hook_heard = hooked && first_rule_of(&rules, "hooks", "decide") != Some(RuleDecision::Deny);
                let hook = if hook_heard { tools[i].2 } else { None };
                let rule = first_rule(&rules, &format!("s{i}"));
                let allowed_by_config = hook == Some(HookSays::Allow) || rule == Some(RuleDecision::Allow);
                // A deny, the hook's or the first matching rule's, always holds: not asked, not run.
                if hook == Some(HookSays::Deny) || rule == Some(RuleDecision::Deny) {
                    prop_assert_eq!(out.status, CallStatus::Denied, "{} {:?}", d.name, out.result);
                    prop_assert!(asked.is_none(), "a denied call must not ask");
                    prop_assert!(!this_ran);
                    continue;
                }
                if d.destructive.is_destructive() && approval != ApprovalPolicy::Never && out.status == CallStatus::Ok {
                    prop_assert!(
                        asked.is_some_and(ApprovalDecision::allows) || allowed_by_config,
                        "destructive {} ran without being allowed (asked: {:?}, hook {:?}, rule {:?})", d.name, asked, hook, rule
                    );
                }
                // Nothing above the ceiling runs or asks, whatever allows it.
                if ceiling == SideEffectCeiling::ReadOnly && d.side_effect == SideEffectLevel::Mutating {
                    prop_assert_eq!(out.status, CallStatus::Refused);
                    prop_assert!(asked.is_none(), "a refused call must not ask");
                    prop_assert!(!this_ran);
                }
                if asked == Some(ApprovalDecision::Deny) {
                    prop_assert_eq!(out.status, CallStatus::Denied);
                }
                // An allow skips the question (unless an ask rule wins); an ask rule asks.
                if rule == Some(RuleDecision::Ask) && out.status != CallStatus::Refused {
                    prop_assert!(asked.is_some() || covered_before, "an ask rule did not ask: {:?}", out);
                } else if allowed_by_config {
                    prop_assert!(asked.is_none(), "{} asked despite an allow", d.name);
                }
            }
            // A tool ran exactly when its call ended ok.
            prop_assert_eq!(ran.lock().unwrap_or_else(|e| e.into_inner()).len(), oks);
            // Destructive tools never enter the session ledger.
            prop_assert!(runtime.gate().ledger().iter().all(|e| !e.fingerprint.destructive().is_destructive()));
            runtime.close().await;
            driver.abort();
            Ok(())
        })?;
    }
}
