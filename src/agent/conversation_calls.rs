//! A turn's tool calls: each checked against the turn's tool list and its arguments, then run
//! through `AgentRuntime::call_from` (the one gate, ledger and events), side by side; what
//! each gave, in call order.

use futures::future::join_all;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{CallResult, Conversation};
use crate::agent::events::ToolCallStatus;
use crate::agent::tool_text::tool_content;
use crate::agent::turn::{ToolCall, ToolList};
use crate::runtime::CallOrigin;
use crate::tool::json_kind;

impl Conversation {
    /// Runs the calls of one turn side by side; the results come back in call order.
    pub(super) async fn run_calls(
        &self,
        turn: u32,
        calls: &[ToolCall],
        offered: &ToolList,
        reason: &str,
        cancel: &CancellationToken,
    ) -> Vec<CallResult> {
        self.emit_calls(turn, calls, reason);
        // Let a driver on this thread show the calls before their runtime events.
        after_queued_tasks().await;
        // The transcript's records of the turn (its answer, its calls) are written as the calls
        // begin to wait: sent to their servers, or waiting for an approval or a hook.
        let write = || self.write_shared();
        if let [call] = calls {
            // The usual turn: one call, awaited where it is (no boxed slice of futures).
            let result = after_first_poll(self.run_call(call, offered, reason, cancel), write);
            return vec![result.await];
        }
        let all = calls
            .iter()
            .map(|call| self.run_call(call, offered, reason, cancel));
        after_first_poll(join_all(all), write).await
    }

    async fn run_call(
        &self,
        call: &ToolCall,
        offered: &ToolList,
        reason: &str,
        cancel: &CancellationToken,
    ) -> CallResult {
        let rejected = |status, content: String| CallResult {
            status,
            content,
            outcome: None,
        };
        if call.name == super::SEARCH_TOOLS && offered.offers(&call.name) {
            return self.search_tools(&call.arguments);
        }
        if !offered.offers(&call.name) {
            let name = crate::text::sanitize_line(&call.name, 100);
            // A tool left out because its server is down: the model is told why.
            let down = self
                .runtime
                .tool_snapshot()
                .get(call.name.as_str())
                .and_then(|tool| tool.unavailable());
            return rejected(
                ToolCallStatus::UnknownTool,
                match down {
                    Some(why) => format!(
                        "error: {name:?} is not in this turn's tool list: {why}; call only the tools you were given"
                    ),
                    None => format!(
                        "error: there is no tool named {name:?} in this turn's tool list; call only the tools you were given"
                    ),
                },
            );
        }
        let arguments: Value = if call.arguments.trim().is_empty() {
            Value::Object(Default::default())
        } else {
            match serde_json::from_str(&call.arguments) {
                Ok(v) => v,
                Err(e) => {
                    return rejected(
                        ToolCallStatus::BadArguments,
                        format!("error: the arguments are not valid JSON ({e}); send one JSON object that matches the tool's input schema"),
                    )
                }
            }
        };
        if !arguments.is_object() {
            return rejected(
                ToolCallStatus::BadArguments,
                format!(
                    "error: the arguments must be a JSON object, not {}",
                    json_kind(&arguments)
                ),
            );
        }
        let origin = CallOrigin::Agent {
            reason: reason.to_string(),
        };
        let outcome = self
            .runtime
            .call_from(&call.name, arguments, cancel.child_token(), origin)
            .await;
        let (status, content) = tool_content(&outcome);
        CallResult {
            status,
            content,
            outcome: Some(outcome),
        }
    }
}

/// Lets the tasks already woken on this thread run first (a driver showing the calls), then
/// goes on: the task wakes itself, which queues it behind them. `tokio::task::yield_now` does
/// the same through the scheduler's deferred list, which makes the runtime poll its I/O on the
/// way (an `epoll_wait`) and, the wheel then holding no timer, the call's deadline wake the
/// driver again (an `eventfd` write and one more `epoll_wait`): three system calls a turn.
async fn after_queued_tasks() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            return std::task::Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await;
}

/// Runs `wait` and calls `then` right after its first poll: what `wait` sends has gone out and
/// its answer cannot have come, so `then` (the transcript's write) is done while the turn waits
/// rather than added to it, on a machine with a core for the other side. A wait that could not
/// begin is no different: its first poll ends at once, and `then` follows it.
pub(super) async fn after_first_poll<F: std::future::Future>(
    wait: F,
    then: impl FnOnce(),
) -> F::Output {
    let mut wait = std::pin::pin!(wait);
    let mut then = Some(then);
    std::future::poll_fn(move |cx| {
        let polled = wait.as_mut().poll(cx);
        if let Some(then) = then.take() {
            then();
        }
        polled
    })
    .await
}
