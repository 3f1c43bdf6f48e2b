//! Reading one stdout line as a message, knowing which requests are in flight: the answer to a
//! `tools/call` is read as a tool's result straight away, the answer to a `tools/list` entry by
//! entry (`tool_page.rs`), everything else the general way; what is not a message is said so.
//!
//! Separate from the reader loop (`lines.rs`): this is the pure part, held by property tests
//! and the `stdout_lines` fuzz target against rmcp's own general read.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolResult, ClientNotification, ClientRequest, JsonRpcError, JsonRpcMessage,
    JsonRpcResponse, JsonRpcVersion2_0, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{RoleClient, TxJsonRpcMessage};
use serde_json::value::RawValue;

use super::tool_page::{read_page, PageEntries};

/// What one stdout line turned out to be.
#[derive(Debug)]
pub enum LineKind {
    /// A JSON-RPC message for rmcp.
    Message(Box<ServerJsonRpcMessage>),
    /// The answer to a `tools/list`, read entry by entry: the page without its tools, and its
    /// entries (the tools, and those skipped, each named with why).
    ToolPage(Box<ServerJsonRpcMessage>, PageEntries),
    /// An empty line (ignored).
    Blank,
    /// Not JSON at all (a banner, a log line printed to the wrong stream, broken JSON).
    NotJson,
    /// JSON, but not a JSON-RPC message we understand.
    NotAMessage(String),
}

/// What a request in flight asked for, as far as reading its answer goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asked {
    Call,
    ListTools,
    Other,
}

#[derive(Debug, Default)]
struct InFlight {
    /// Method by request id.
    requests: HashMap<RequestId, (Asked, &'static str)>,
    /// How many of them are `tools/call`, and how many `tools/list`.
    calls: usize,
    lists: usize,
}

impl InFlight {
    fn count(&mut self, asked: Asked, up: bool) {
        let counter = match asked {
            Asked::Call => &mut self.calls,
            Asked::ListTools => &mut self.lists,
            Asked::Other => return,
        };
        *counter = if up {
            *counter + 1
        } else {
            counter.saturating_sub(1)
        };
    }

    fn remove(&mut self, id: &RequestId) -> Option<(Asked, &'static str)> {
        let removed = self.requests.remove(id)?;
        self.count(removed.0, false);
        Some(removed)
    }
}

/// The requests in flight on one connection, by id: so that an answer is read as the kind of
/// result its request asked for, and an answer that cannot be read fails the request it
/// answered (or, when it names none, every one in flight).
#[derive(Debug, Default, Clone)]
pub struct Pending(Arc<Mutex<InFlight>>);

/// More ids than this means answers that never came (calls abandoned on a deadline whose
/// `notifications/cancelled` was not sent): start over.
const PENDING_LIMIT: usize = 4096;

impl Pending {
    fn lock(&self) -> std::sync::MutexGuard<'_, InFlight> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes an outgoing message: a request is remembered until its answer, or until
    /// `notifications/cancelled` gives it up.
    pub fn sent(&self, message: &TxJsonRpcMessage<RoleClient>) {
        match message {
            JsonRpcMessage::Request(request) => {
                let asked = match &request.request {
                    ClientRequest::CallToolRequest(_) => Asked::Call,
                    ClientRequest::ListToolsRequest(_) => Asked::ListTools,
                    _ => Asked::Other,
                };
                self.insert(&request.id, asked, method_name(&request.request));
            }
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification {
                    if let Some(id) = &c.params.request_id {
                        self.answered(id);
                    }
                }
            }
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
        }
    }

    /// Notes a `tools/call` written without rmcp (`direct.rs`), as `sent` notes one of rmcp's.
    pub fn sent_call(&self, id: &RequestId) {
        self.insert(id, Asked::Call, "tools/call");
    }

    fn insert(&self, id: &RequestId, asked: Asked, method: &'static str) {
        let mut in_flight = self.lock();
        if in_flight.requests.len() >= PENDING_LIMIT {
            *in_flight = InFlight::default();
        }
        in_flight.remove(id);
        in_flight.requests.insert(id.clone(), (asked, method));
        in_flight.count(asked, true);
    }

    /// Forgets request `id` (answered or given up); what it asked for, if it was in flight.
    fn answered(&self, id: &RequestId) -> Option<Asked> {
        self.lock().remove(id).map(|(asked, _)| asked)
    }

    fn asked(&self, id: &RequestId) -> Option<Asked> {
        self.lock().requests.get(id).map(|(a, _)| *a)
    }

    /// Takes request `id` out of the set (its answer came, readable or not); its method.
    pub fn take(&self, id: &RequestId) -> Option<&'static str> {
        self.lock().remove(id).map(|(_, method)| method)
    }

    /// Takes every request in flight out of the set, with its method.
    pub fn take_all(&self) -> Vec<(RequestId, &'static str)> {
        std::mem::take(&mut *self.lock())
            .requests
            .into_iter()
            .map(|(id, (_, method))| (id, method))
            .collect()
    }

    fn calls_in_flight(&self) -> bool {
        self.lock().calls > 0
    }

    fn lists_in_flight(&self) -> bool {
        self.lock().lists > 0
    }
}

/// The method of a request, for messages (rmcp's names are `'static` for every kind we send).
fn method_name(request: &ClientRequest) -> &'static str {
    match request {
        ClientRequest::InitializeRequest(_) => "initialize",
        ClientRequest::DiscoverRequest(_) => "server/discover",
        ClientRequest::PingRequest(_) => "ping",
        ClientRequest::CallToolRequest(_) => "tools/call",
        ClientRequest::ListToolsRequest(_) => "tools/list",
        ClientRequest::SetLevelRequest(_) => "logging/setLevel",
        ClientRequest::ListResourcesRequest(_) => "resources/list",
        ClientRequest::ListResourceTemplatesRequest(_) => "resources/templates/list",
        ClientRequest::ReadResourceRequest(_) => "resources/read",
        ClientRequest::SubscribeRequest(_) => "resources/subscribe",
        ClientRequest::UnsubscribeRequest(_) => "resources/unsubscribe",
        ClientRequest::ListPromptsRequest(_) => "prompts/list",
        ClientRequest::GetPromptRequest(_) => "prompts/get",
        ClientRequest::CompleteRequest(_) => "completion/complete",
        _ => "a request",
    }
}

/// The answer to a `tools/call`, read as one. Any other top-level field fails the read at once,
/// so a notification (a log flood during a call) costs a few bytes of parsing here, not a
/// second whole parse; a response with extra fields goes the general way.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CallAnswer {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    result: CallToolResult,
}

/// `bytes` read as the answer to a `tools/call` (see [`CallAnswer`]): the id it answers and the
/// tool's result; `None` for anything else, which the caller reads the general way.
pub fn call_answer(bytes: &[u8]) -> Option<(RequestId, CallToolResult)> {
    serde_json::from_slice::<CallAnswer>(bytes)
        .ok()
        .map(|answer| (answer.id, answer.result))
}

/// The answer to a `tools/list`, its result left unread for [`read_page`].
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ListAnswer<'a> {
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[serde(borrow)]
    result: &'a RawValue,
}

/// The answer to a `tools/list` whose id is `wanted`, read entry by entry (`tool_page.rs`):
/// the answer with the page's tools left out, and the entries. `None` for anything else (an
/// error, another request's answer, a result that is no page).
pub fn read_list_answer(
    bytes: &[u8],
    wanted: impl Fn(&RequestId) -> bool,
) -> Option<(ServerJsonRpcMessage, PageEntries)> {
    let answer = serde_json::from_slice::<ListAnswer<'_>>(bytes)
        .ok()
        .filter(|a| wanted(&a.id))?;
    let read = read_page(answer.result)?;
    let message = JsonRpcMessage::Response(JsonRpcResponse {
        jsonrpc: answer.jsonrpc,
        id: answer.id,
        result: ServerResult::ListToolsResult(read.page),
    });
    Some((message, read.entries))
}

/// Classifies one line as [`classify_line`] does, reading an answer as the kind of result its
/// request asked for: a `tools/call` answer as a tool's result straight away (rmcp's general
/// read tries every kind of result in turn, fifteen before a tool's, each formatting its
/// error: most of the CPU a call cost the console), a `tools/list` answer entry by entry (so
/// one malformed tool does not lose the page). The answer to a request is of that request's
/// kind, so the direct read is also the right one; whatever it does not take (an error, a
/// task, anything else) goes the general way. The request the line answers is forgotten.
pub fn classify_answer(line: &[u8], pending: &Pending) -> LineKind {
    let trimmed = line.trim_ascii();
    if pending.calls_in_flight() {
        if let Some((id, result)) =
            call_answer(trimmed).filter(|(id, _)| pending.asked(id) == Some(Asked::Call))
        {
            pending.answered(&id);
            return LineKind::Message(Box::new(JsonRpcMessage::Response(JsonRpcResponse {
                jsonrpc: JsonRpcVersion2_0,
                id,
                result: ServerResult::CallToolResult(result),
            })));
        }
    }
    if pending.lists_in_flight() {
        let page = read_list_answer(trimmed, |id| pending.asked(id) == Some(Asked::ListTools));
        if let Some((message, entries)) = page {
            if let JsonRpcMessage::Response(JsonRpcResponse { id, .. }) = &message {
                pending.answered(id);
            }
            return LineKind::ToolPage(Box::new(message), entries);
        }
    }
    let kind = classify_line(line);
    if let LineKind::Message(message) = &kind {
        let answered = match message.as_ref() {
            JsonRpcMessage::Response(JsonRpcResponse { id, .. }) => Some(id),
            JsonRpcMessage::Error(JsonRpcError { id, .. }) => id.as_ref(),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
        };
        if let Some(id) = answered {
            pending.answered(id);
        }
    }
    kind
}

/// Classifies one line (without its newline). Never panics, whatever the bytes.
pub fn classify_line(line: &[u8]) -> LineKind {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return LineKind::Blank;
    }
    match serde_json::from_slice::<ServerJsonRpcMessage>(trimmed) {
        Ok(message) => LineKind::Message(Box::new(message)),
        Err(err) => match serde_json::from_slice::<serde::de::IgnoredAny>(trimmed) {
            Ok(_) => LineKind::NotAMessage(err.to_string()),
            Err(_) => LineKind::NotJson,
        },
    }
}

#[cfg(test)]
#[path = "answers_tests.rs"]
mod tests;
