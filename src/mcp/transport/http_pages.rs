//! `tools/list` over Streamable HTTP read entry by entry, as over stdio (`tool_page.rs`): a
//! malformed tool entry is skipped and named, and the rest of the page is kept.
//!
//! rmcp's HTTP client reads a page whole, so one bad entry would lose it: an SSE event that does
//! not parse is dropped (the request then waits out its deadline), and a JSON body is taken for
//! some other kind of result. So the answer to a `tools/list` POST is taken over here: the SSE
//! event answering it, or the JSON body, is read entry by entry; rmcp is handed the page without
//! its tools, and the entries wait for the client beside it, where the stdio reader leaves them
//! (`StdoutIssues::tool_page`).

use std::sync::{Arc, Mutex};

use futures::stream::{BoxStream, StreamExt};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, RequestId, ServerJsonRpcMessage,
    ServerResult,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::Sse;

use super::answers::read_list_answer;
use super::issues::StdoutIssues;

type HttpError = StreamableHttpError<reqwest::Error>;

/// Where the entries of the pages read here wait for the client (its `StdoutIssues`).
#[derive(Clone, Default)]
pub struct ToolPages(Arc<Mutex<StdoutIssues>>);

impl ToolPages {
    pub fn new(issues: Arc<Mutex<StdoutIssues>>) -> ToolPages {
        ToolPages(issues)
    }

    /// The id of `message` when it is a `tools/list` request.
    pub fn list_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
        match message {
            ClientJsonRpcMessage::Request(request)
                if matches!(request.request, ClientRequest::ListToolsRequest(_)) =>
            {
                Some(request.id.clone())
            }
            _ => None,
        }
    }

    /// The answer to `tools/list` `id` as rmcp should see it: an SSE stream whose answering
    /// event is read entry by entry; a JSON body rmcp took for another kind of result (a page
    /// with a malformed entry is no `ListToolsResult`, and rmcp's untagged read then keeps it
    /// whole as some other result) read again from what it kept; anything else as it is.
    pub fn answer(
        &self,
        id: RequestId,
        answer: Result<StreamableHttpPostResponse, HttpError>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        match answer {
            Ok(StreamableHttpPostResponse::Sse(stream, session)) => Ok(
                StreamableHttpPostResponse::Sse(self.events(id, stream), session),
            ),
            Ok(StreamableHttpPostResponse::Json(message, session)) if !is_page(&message) => {
                let read = serde_json::to_vec(&message)
                    .ok()
                    .and_then(|body| self.read(&id, &body));
                Ok(StreamableHttpPostResponse::Json(
                    read.unwrap_or(message),
                    session,
                ))
            }
            other => other,
        }
    }

    fn events(
        &self,
        id: RequestId,
        stream: BoxStream<'static, Result<Sse, SseError>>,
    ) -> BoxStream<'static, Result<Sse, SseError>> {
        let pages = self.clone();
        stream
            .map(move |event| {
                let mut sse = event?;
                let read = sse
                    .data
                    .as_deref()
                    .and_then(|data| pages.read(&id, data.as_bytes()));
                if let Some(text) = read.and_then(|m| serde_json::to_string(&m).ok()) {
                    sse.data = Some(text);
                }
                Ok(sse)
            })
            .boxed()
    }

    /// Reads `body` as the answer to `tools/list` `id` entry by entry, keeping the entries:
    /// the answer without its page's tools.
    fn read(&self, id: &RequestId, body: &[u8]) -> Option<ServerJsonRpcMessage> {
        let (message, entries) = read_list_answer(body, |got| got == id)?;
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .tool_page(id.clone(), entries);
        Some(message)
    }
}

/// Whether `message` answers with a page rmcp read whole (or is an error: nothing to read).
fn is_page(message: &ServerJsonRpcMessage) -> bool {
    !matches!(message, JsonRpcMessage::Response(response)
        if !matches!(response.result, ServerResult::ListToolsResult(_)))
}
