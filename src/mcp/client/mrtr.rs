//! Multi round-trip requests (2026-07-28, SEP-2322): a server that needs something from the
//! client while it runs a tool (a model's answer, the operator's, the roots) answers the
//! `tools/call` with `input_required` and what it needs. Each request is answered by the
//! session's own handler, exactly as the same request sent on its own would be (the console's
//! sampling or elicitation modal, or the gateway's host whose call it is), and the call is
//! made again with the answers and the server's `requestState`, up to
//! [`DEFAULT_MRTR_MAX_ROUNDS`] times.

// Sampling and roots are SEP-2577-deprecated in rmcp; the servers of today use them.
#![allow(deprecated)]

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, InputRequest,
    InputRequiredResult, InputResponses, JsonObject, NumberOrString, ServerResult,
    DEFAULT_MRTR_MAX_ROUNDS,
};
use rmcp::service::RequestContext;
use rmcp::ClientHandler;
use tokio_util::sync::CancellationToken;

use super::{result_kind, DefaultMcpClient, McpError};
use crate::tool::ProgressSink;

impl DefaultMcpClient {
    /// Goes on with `tools/call` of `tool` after the server asked for `asked`: answers it,
    /// calls again, until the server gives the tool's result.
    pub(super) async fn call_answering(
        &self,
        tool: &str,
        arguments: JsonObject,
        mut asked: InputRequiredResult,
        cancel: CancellationToken,
        progress: ProgressSink,
    ) -> Result<CallToolResult, McpError> {
        for _ in 0..DEFAULT_MRTR_MAX_ROUNDS {
            let mut params = CallToolRequestParams::new(tool.to_string());
            params.arguments = Some(arguments.clone());
            params.input_responses = self.answer(asked.input_requests.take(), &cancel).await?;
            params.request_state = asked.request_state.take();
            if params.input_responses.is_none() && params.request_state.is_none() {
                return Err(McpError::Protocol(
                    "tools/call was answered input_required with nothing to answer".into(),
                ));
            }
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
            match self
                .request(request, Some(&cancel), progress.clone())
                .await?
            {
                ServerResult::CallToolResult(result) => return Ok(result),
                ServerResult::InputRequiredResult(again) => asked = again,
                other => {
                    return Err(McpError::Protocol(format!(
                        "tools/call was answered with {}",
                        result_kind(&other)
                    )))
                }
            }
        }
        Err(McpError::Protocol(format!(
            "tools/call still wanted input after {DEFAULT_MRTR_MAX_ROUNDS} rounds"
        )))
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
