//! Property test of the whole approval chain, end to end: arbitrary annotations (as a server
//! would send them) × trust → `McpTool` (trait resolution) → the runtime's call path → the gate,
//! under an arbitrary policy, with the operator's answers (and so the session ledger) arbitrary.
//!
//! The promise: no combination lets a destructive call run without the operator allowing that
//! very call, unless `policy.approval: never`; nothing above the ceiling runs or asks; and a
//! tool runs exactly when its call says `ok`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aimon_console::approval::ApprovalDecision;
use aimon_console::config::{
    AnnotationTrust, ApprovalPolicy, Config, McpConfig, PolicyConfig, SideEffectCeiling,
};
use aimon_console::mcp::client::{McpClient, McpError};
use aimon_console::mcp::tool::McpTool;
use aimon_console::runtime::{AgentRuntimeFactory, CallStatus, RuntimeEvent, RuntimeOptions};
use aimon_console::tool::{DestructiveBehavior, ProgressSink, SideEffectLevel, Tool};
use proptest::prelude::*;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ToolAnnotations};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// A client that answers every call with success and remembers which tools ran.
struct FakeClient {
    server: String,
    ran: Arc<Mutex<Vec<String>>>,
}

#[async_trait::async_trait]
impl McpClient for FakeClient {
    fn server(&self) -> &str {
        &self.server
    }

    fn is_connected(&self) -> bool {
        true
    }

    async fn list_tools(&self) -> Result<Vec<rmcp::model::Tool>, McpError> {
        Ok(Vec::new())
    }

    async fn call_tool(
        &self,
        tool: &str,
        _arguments: JsonObject,
        _cancel: CancellationToken,
        _progress: ProgressSink,
    ) -> Result<CallToolResult, McpError> {
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
        tools in proptest::collection::vec((hints(), trust()), 1..4),
        ceiling in ceiling(),
        approval in approval(),
        answers in proptest::collection::vec(decision(), 0..12),
        calls in proptest::collection::vec(0usize..4, 1..12),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async {
            let ran = Arc::new(Mutex::new(Vec::new()));
            let mut extra: Vec<Arc<dyn Tool>> = Vec::new();
            for (i, (h, t)) in tools.iter().enumerate() {
                let client = Arc::new(FakeClient { server: format!("s{i}"), ran: ran.clone() });
                extra.push(Arc::new(McpTool::new(&format!("s{i}"), *t, &rmcp_tool(h), client)));
            }
            let config = Config {
                path: "/dev/null".into(),
                mcp: McpConfig { servers: Vec::new(), startup_budget: None, max_concurrent_starts: None, roots: Vec::new() },
                policy: PolicyConfig { side_effect_ceiling: ceiling, approval, ..PolicyConfig::default() },
                notifications: Default::default(),
                agent: None,
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
            };
            let runtime = AgentRuntimeFactory::create(&config, options, events).await.expect("runtime");
            runtime.wait_started().await;
            let descriptors: Vec<_> = (0..tools.len())
                .map(|i| runtime.tools().into_iter().find(|d| d.name == format!("mcp__s{i}__act")).expect("registered"))
                .collect();

            // Resolution itself: an untrusted server's tool is always mutating and destructive.
            for (d, (_, t)) in descriptors.iter().zip(&tools) {
                if *t == AnnotationTrust::Ignore {
                    prop_assert_eq!(d.side_effect, SideEffectLevel::Mutating);
                    prop_assert_eq!(d.destructive, DestructiveBehavior::Destructive);
                }
            }

            let mut oks = 0;
            for index in calls {
                let Some(d) = descriptors.get(index % descriptors.len()) else { continue };
                let out = runtime.call(&d.name, json!({}), CancellationToken::new()).await;
                let asked = given.lock().unwrap_or_else(|e| e.into_inner()).get(&out.id).copied();
                if out.status == CallStatus::Ok {
                    oks += 1;
                }
                if d.destructive.is_destructive() && approval != ApprovalPolicy::Never && out.status == CallStatus::Ok {
                    prop_assert!(
                        asked.is_some_and(ApprovalDecision::allows),
                        "destructive {} ran without being allowed (asked: {:?})", d.name, asked
                    );
                }
                if ceiling == SideEffectCeiling::ReadOnly && d.side_effect == SideEffectLevel::Mutating {
                    prop_assert_eq!(out.status, CallStatus::Refused);
                    prop_assert!(asked.is_none(), "a refused call must not ask");
                }
                if asked == Some(ApprovalDecision::Deny) {
                    prop_assert_eq!(out.status, CallStatus::Denied);
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
