//! Task-augmented `tools/call`, as servers of protocol 2025-11-25 serve them (the tasks of
//! SEP-1686; server-everything's `simulate-research-query`): the call creates a task, the task's
//! state is reported as the call's progress (`task working: Gathering sources…`), `tasks/result`
//! waits for its end (and carries what the server asks meanwhile, such as an elicitation),
//! and cancelling the call cancels the task (`tasks/cancel`).
//!
//! rmcp 3.11 models the later tasks of 2026-07-28 (SEP-2663: `resultType: "task"`,
//! `tasks/update`), and its tool type drops `execution.taskSupport`: a tool that needs a task is
//! known by the answer the specification makes servers give to a plain call (method-not-found,
//! "requires task augmentation"), and the call is then made again as a task. Separate from
//! `client.rs`, whose plain `tools/call` hands over here.

use std::time::Duration;

use rmcp::model::{CallToolResult, ClientRequest, CustomRequest, JsonObject, RequestId};
use rmcp::service::{PeerRequestOptions, RequestHandle};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::client::{DefaultMcpClient, McpError, TOTAL_TIMEOUT_FACTOR};
use crate::tool::{ProgressSink, ProgressUpdate};

/// How long the server is asked to keep a task (ms).
const TASK_TTL_MS: u64 = 10 * 60 * 1000;
/// Poll interval when the server suggests none, and the bounds put on what it suggests.
const DEFAULT_POLL: Duration = Duration::from_millis(1_000);
const MIN_POLL: Duration = Duration::from_millis(100);
const MAX_POLL: Duration = Duration::from_millis(5_000);
/// How long `tasks/cancel` may hold up a cancelled call.
const CANCEL_LIMIT: Duration = Duration::from_millis(500);
/// JSON-RPC method-not-found.
const METHOD_NOT_FOUND: i32 = -32601;

/// The words a 2025-11-25 server uses for a tool that runs only as a task.
fn says_task_required(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    text.contains("task augmentation") || text.contains("tasksupport")
}

impl DefaultMcpClient {
    /// Whether a plain call's error says the tool must run as a task.
    pub(super) fn task_required_error(err: &McpError) -> bool {
        matches!(err, McpError::Server { code: METHOD_NOT_FOUND, message } if says_task_required(message))
    }

    /// Whether a plain call's result says the tool must run as a task (the TypeScript SDK
    /// turns the method-not-found into an error result: "MCP error -32601: … requires task
    /// augmentation").
    pub(super) fn task_required_result(result: &CallToolResult) -> bool {
        result.is_error == Some(true)
            && result.content.iter().any(|block| {
                block
                    .as_text()
                    .is_some_and(|t| t.text.contains("-32601") && says_task_required(&t.text))
            })
    }
}

/// A task as `tasks/get` (or the call that created it) describes it.
#[derive(Debug, Clone, PartialEq)]
struct TaskState {
    id: String,
    status: String,
    message: Option<String>,
    poll: Duration,
}

impl TaskState {
    /// Reads a task object (`{"taskId", "status", "statusMessage"?, "pollInterval"?}`).
    fn read(task: &Value) -> Option<TaskState> {
        let id = task.get("taskId")?.as_str()?.to_string();
        let status = task.get("status")?.as_str()?.to_string();
        let poll = task
            .get("pollInterval")
            .or_else(|| task.get("pollIntervalMs"))
            .and_then(Value::as_u64)
            .map_or(DEFAULT_POLL, Duration::from_millis)
            .clamp(MIN_POLL, MAX_POLL);
        Some(TaskState {
            id,
            status,
            message: task
                .get("statusMessage")
                .and_then(Value::as_str)
                .map(str::to_string),
            poll,
        })
    }

    /// The state as the call's progress: no figures, the state in words.
    fn report(&self, progress: &ProgressSink) {
        let message = match &self.message {
            Some(m) => format!("task {}: {m}", self.status.replace('_', " ")),
            None => format!("task {}", self.status.replace('_', " ")),
        };
        progress.report(ProgressUpdate {
            progress: 0.0,
            total: None,
            message: Some(message),
        });
    }
}

/// An answer as JSON, whichever of rmcp's result kinds it was read as.
fn as_json(answer: &impl serde::Serialize) -> Value {
    serde_json::to_value(answer).unwrap_or(Value::Null)
}

impl DefaultMcpClient {
    /// Runs `tool` as a task: creates it, reports its state as progress while `tasks/result`
    /// waits for its end, and cancels it when `cancel` is. Bounded like any call: the task
    /// may run for `TOTAL_TIMEOUT_FACTOR` × `request_timeout` in all.
    pub(super) async fn call_as_task(
        &self,
        tool: &str,
        arguments: JsonObject,
        cancel: CancellationToken,
        progress: ProgressSink,
    ) -> Result<CallToolResult, McpError> {
        let params = json!({"name": tool, "arguments": arguments, "task": {"ttl": TASK_TTL_MS}});
        let create = ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(params)));
        let created = self
            .request(create, Some(&cancel), progress.clone())
            .await?;
        let created = as_json(&created);
        let Some(task) = created.get("task").and_then(TaskState::read) else {
            // A server that ran the call at once answers its result.
            return serde_json::from_value(created).map_err(|_| {
                McpError::Protocol(
                    "tools/call as a task was answered with neither a task nor a result".into(),
                )
            });
        };
        task.report(&progress);
        let cap = self.request_timeout().saturating_mul(TOTAL_TIMEOUT_FACTOR);
        let until = tokio::time::Instant::now() + cap;
        let wait = ClientRequest::CustomRequest(CustomRequest::new(
            "tasks/result",
            Some(json!({"taskId": task.id})),
        ));
        let RequestHandle { rx, id, .. } = self
            .peer()
            .send_cancellable_request(wait, PeerRequestOptions::no_options())
            .await
            .map_err(|e| McpError::Transport(crate::text::sanitize_line(&e.to_string(), 300)))?;
        tokio::pin!(rx);
        let poll = tokio::time::sleep(task.poll);
        tokio::pin!(poll);
        let mut last = task.clone();
        loop {
            tokio::select! {
                biased;
                answer = &mut rx => {
                    let answer = match answer {
                        Ok(Ok(answer)) => answer,
                        Ok(Err(e)) => return Err(McpError::from_service(&rmcp_server(self), e)),
                        Err(_) => return Err(McpError::Disconnected { server: rmcp_server(self) }),
                    };
                    return serde_json::from_value(as_json(&answer)).map_err(|_| {
                        McpError::Protocol(format!(
                            "tasks/result of task {} was not a tool's result",
                            crate::text::sanitize_line(&task.id, 100)
                        ))
                    });
                }
                () = cancel.cancelled() => {
                    self.cancel_task(&task.id, id, "cancelled by the operator").await;
                    return Err(McpError::Cancelled);
                }
                () = tokio::time::sleep_until(until) => {
                    self.cancel_task(&task.id, id, "maximum total time exceeded").await;
                    return Err(McpError::TotalTimeout(cap));
                }
                () = &mut poll => {
                    let get = ClientRequest::CustomRequest(CustomRequest::new(
                        "tasks/get",
                        Some(json!({"taskId": task.id})),
                    ));
                    // A poll that fails leaves the last state on show; the wait goes on.
                    if let Ok(now) = self.request(get, Some(&cancel), ProgressSink::none()).await {
                        if let Some(state) = TaskState::read(&as_json(&now)) {
                            if state != last {
                                state.report(&progress);
                            }
                            last = state;
                        }
                    }
                    poll.as_mut().reset(tokio::time::Instant::now() + last.poll);
                }
            }
        }
    }

    /// Cancels task `task` and the `tasks/result` waiting for it (request `waiting`), holding
    /// the caller up briefly at most.
    async fn cancel_task(&self, task: &str, waiting: RequestId, reason: &str) {
        let cancel = ClientRequest::CustomRequest(CustomRequest::new(
            "tasks/cancel",
            Some(json!({"taskId": task})),
        ));
        let sent = async {
            let _ = self.request(cancel, None, ProgressSink::none()).await;
            let params = rmcp::model::CancelledNotificationParam::new(
                Some(waiting),
                Some(reason.to_string()),
            );
            let _ = self.peer().notify_cancelled(params).await;
        };
        if tokio::time::timeout(CANCEL_LIMIT, sent).await.is_err() {
            tracing::debug!(%task, "tasks/cancel not sent in time");
        }
    }
}

/// The configured name of the client's server, for an error.
fn rmcp_server(client: &DefaultMcpClient) -> String {
    super::client::McpClient::server(client).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;

    #[test]
    fn knows_a_tool_that_needs_a_task() {
        let sdk = CallToolResult::error(vec![ContentBlock::text(
            "MCP error -32601: Tool simulate-research-query requires task augmentation (taskSupport: 'required')",
        )]);
        assert!(DefaultMcpClient::task_required_result(&sdk));
        let other = CallToolResult::error(vec![ContentBlock::text("no such note")]);
        assert!(!DefaultMcpClient::task_required_result(&other));
        assert!(DefaultMcpClient::task_required_error(&McpError::Server {
            code: -32601,
            message: "Tool x requires task augmentation".into()
        }));
        assert!(!DefaultMcpClient::task_required_error(&McpError::Server {
            code: -32601,
            message: "Method not found".into()
        }));
    }

    #[test]
    fn reads_a_task_and_bounds_its_poll_interval() {
        let t = TaskState::read(&json!({"taskId": "t1", "status": "input_required", "statusMessage": "Which?", "pollInterval": 10})).unwrap();
        assert_eq!(t.poll, MIN_POLL);
        let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = got.clone();
        t.report(&ProgressSink::new(move |u| {
            into.lock().unwrap().push(u.message.unwrap_or_default())
        }));
        assert_eq!(*got.lock().unwrap(), vec!["task input required: Which?"]);
        assert!(TaskState::read(&json!({"status": "working"})).is_none());
    }
}
