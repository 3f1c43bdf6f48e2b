//! Multi round-trip requests (2026-07-28, SEP-2322): a server that needs something from the
//! client while it runs a tool, renders a prompt or reads a resource (a model's answer, the
//! operator's, the roots) answers the `tools/call`, `prompts/get` or `resources/read` with
//! `input_required` and what it needs. Each request is answered by the session's own handler,
//! exactly as the same request sent on its own would be (the console's sampling or elicitation
//! modal, or the gateway's host whose call it is), and the request is made again with the
//! answers and the server's `requestState`, up to [`DEFAULT_MRTR_MAX_ROUNDS`] times.

// Sampling and roots are SEP-2577-deprecated in rmcp; the servers of today use them.
#![allow(deprecated)]

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, GetPromptRequest,
    GetPromptRequestParams, InputRequest, InputRequiredResult, InputResponses, NumberOrString,
    ReadResourceRequest, ReadResourceRequestParams, ServerResult, DEFAULT_MRTR_MAX_ROUNDS,
};
use rmcp::service::RequestContext;
use rmcp::ClientHandler;
use tokio_util::sync::CancellationToken;

use super::{DefaultMcpClient, McpError};
use crate::tool::ProgressSink;

/// A request that may be answered `input_required`: it can be made again carrying the answers
/// and the server's state.
pub(crate) enum Retried {
    Call(CallToolRequestParams),
    Prompt(GetPromptRequestParams),
    Read(ReadResourceRequestParams),
}

impl Retried {
    fn method(&self) -> &'static str {
        match self {
            Retried::Call(_) => "tools/call",
            Retried::Prompt(_) => "prompts/get",
            Retried::Read(_) => "resources/read",
        }
    }

    /// The request again, with this round's answers and state (and nothing of an earlier one).
    fn again(&self, answers: Option<InputResponses>, state: Option<String>) -> ClientRequest {
        match self {
            Retried::Call(params) => {
                let mut params = params.clone();
                params.input_responses = answers;
                params.request_state = state;
                ClientRequest::CallToolRequest(CallToolRequest::new(params))
            }
            Retried::Prompt(params) => {
                let mut params = params.clone();
                params.input_responses = answers;
                params.request_state = state;
                ClientRequest::GetPromptRequest(GetPromptRequest::new(params))
            }
            Retried::Read(params) => {
                let mut params = params.clone();
                params.input_responses = answers;
                params.request_state = state;
                ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params))
            }
        }
    }
}

impl DefaultMcpClient {
    /// Makes `request`, and while the server answers `input_required`, answers what it asked
    /// and makes it again: the server's last answer, whatever its kind.
    pub(crate) async fn request_answering(
        &self,
        request: Retried,
        cancel: &CancellationToken,
        progress: ProgressSink,
    ) -> Result<ServerResult, McpError> {
        let first = request.again(None, None);
        let answer = self.request(first, Some(cancel), progress.clone()).await?;
        self.go_on(&request, answer, cancel, &progress).await
    }

    /// While `answer` is `input_required`: answers what it asks and makes `request` again.
    pub(super) async fn go_on(
        &self,
        request: &Retried,
        mut answer: ServerResult,
        cancel: &CancellationToken,
        progress: &ProgressSink,
    ) -> Result<ServerResult, McpError> {
        for _ in 0..DEFAULT_MRTR_MAX_ROUNDS {
            let ServerResult::InputRequiredResult(asked) = answer else {
                return Ok(answer);
            };
            answer = self.answer_round(request, asked, cancel, progress).await?;
        }
        match answer {
            ServerResult::InputRequiredResult(_) => Err(McpError::Protocol(format!(
                "{} still wanted input after {DEFAULT_MRTR_MAX_ROUNDS} rounds",
                request.method()
            ))),
            answer => Ok(answer),
        }
    }

    /// One round: answers what the server asked and makes the request again with the answers
    /// and its state.
    async fn answer_round(
        &self,
        request: &Retried,
        mut asked: InputRequiredResult,
        cancel: &CancellationToken,
        progress: &ProgressSink,
    ) -> Result<ServerResult, McpError> {
        let answers = self.answer(asked.input_requests.take(), cancel).await?;
        let state = asked.request_state.take();
        if answers.is_none() && state.is_none() {
            return Err(McpError::Protocol(format!(
                "{} was answered input_required with nothing to answer",
                request.method()
            )));
        }
        self.request(
            request.again(answers, state),
            Some(cancel),
            progress.clone(),
        )
        .await
    }

    /// The answers to what the server asked, by its keys (`None` when it asked nothing).
    async fn answer(
        &self,
        requests: Option<rmcp::model::InputRequests>,
        cancel: &CancellationToken,
    ) -> Result<Option<InputResponses>, McpError> {
        let Some(requests) = requests.filter(|r| !r.is_empty()) else {
            return Ok(None);
        };
        let mut answers = InputResponses::new();
        for (key, request) in requests {
            let mut context = RequestContext::new(
                NumberOrString::String(key.clone().into()),
                self.peer.clone(),
            );
            context.ct = cancel.child_token();
            let handler = &self.handler;
            let answer = match request {
                InputRequest::CreateMessage(r) => handler
                    .create_message(r.params, context)
                    .await
                    .and_then(|a| to_value(&a)),
                InputRequest::Elicitation(r) => handler
                    .create_elicitation(r.params, context)
                    .await
                    .and_then(|a| to_value(&a)),
                InputRequest::ListRoots(_) => {
                    handler.list_roots(context).await.and_then(|a| to_value(&a))
                }
                _ => Err(rmcp::ErrorData::invalid_params(
                    "an input request of a kind aimon-console does not know",
                    None,
                )),
            };
            // A request declined or failed ends the call with why (as rmcp's own client does).
            let answer = answer.map_err(|e| {
                McpError::Protocol(format!("{} (asked for inside the call)", e.message))
            })?;
            answers.insert(key, answer);
        }
        Ok(Some(answers))
    }
}

fn to_value<T: serde::Serialize>(answer: &T) -> Result<serde_json::Value, rmcp::ErrorData> {
    serde_json::to_value(answer).map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))
}
