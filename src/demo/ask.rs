//! `ask` (with `--live-tools`): the demo server asks the operator a question (a form of four
//! fields: a required string, a bounded integer with a default, an enum and a boolean) and
//! answers with what came back.
//!
//! On a 2026-07-28 session the question goes inside the call's result (`input_required`,
//! SEP-2322: the client answers and calls again with the answer); on an older one (`--legacy`,
//! or a client that negotiated 2025-11-25) as an `elicitation/create` request of its own.
//! The prompt `greet` (also with `--live-tools`) asks whom to greet the same way on a 2026-07-28
//! session (`prompts/get` answered `input_required`); older sessions get the operator greeted.
//! Separate from `live.rs` because these wait on the operator.

use rmcp::handler::server::tool::InputResponses;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResponse, CallToolResult, ClientResult, ContentBlock, ElicitRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, InputRequest, InputRequiredResult,
    Prompt, PromptMessage, Role, ServerRequest,
};
use rmcp::{tool, tool_router, ErrorData, Peer, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{DemoServer, EVIL};

/// Arguments of `ask`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct AskArgs {
    /// What to ask (default: a question about a new note).
    question: Option<String>,
}

/// The form `ask` sends.
fn form() -> Result<ElicitationSchema, serde_json::Error> {
    serde_json::from_value(json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "title": "Title", "description": "A title for the note", "minLength": 1},
            "copies": {"type": "integer", "title": "Copies", "minimum": 1, "maximum": 10, "default": 3},
            "color": {"type": "string", "title": "Colour", "enum": ["red", "green", "blue"], "default": "green"},
            "urgent": {"type": "boolean", "title": "Urgent", "default": false}
        },
        "required": ["title"]
    }))
}

/// The key of the question inside an `input_required` result.
const QUESTION: &str = "note";
/// The first revision that asks inside results rather than with requests of its own.
const ASKS_IN_RESULTS: &str = "2026-07-28";

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

fn error(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// Whether `peer`'s session is older than 2026-07-28 (or the server speaks only 2025-11-25): a
/// question goes as a request of its own there, not inside a result.
fn legacy_session(server: &DemoServer, peer: &Peer<RoleServer>) -> bool {
    server.opts.legacy
        || peer
            .peer_info()
            .is_some_and(|info| info.protocol_version.as_str() < ASKS_IN_RESULTS)
}

/// The question `greet` asks: whom to greet, "operator" unless the operator says otherwise.
fn whom() -> Result<ElicitRequest, serde_json::Error> {
    let schema: ElicitationSchema = serde_json::from_value(json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "description": "Whom to greet", "default": "operator"}
        },
        "required": ["name"]
    }))?;
    Ok(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "Whom should the greeting be for?".into(),
            requested_schema: schema,
        },
    ))
}

impl DemoServer {
    /// The prompt `greet`, as listed.
    pub(super) fn greet_prompt() -> Prompt {
        Prompt::new(
            "greet",
            Some("A greeting for someone: on 2026-07-28 it asks whom first (inside its result)."),
            None,
        )
    }

    /// `prompts/get greet`: asks whom to greet inside the result on a 2026-07-28 session (then
    /// greets whom the answer names), greets the operator on an older one.
    pub(super) fn greet(
        &self,
        request: GetPromptRequestParams,
        peer: &Peer<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let greeting = |name: &str| {
            GetPromptResponse::from(
                GetPromptResult::new(vec![PromptMessage::new_text(
                    Role::User,
                    format!("Say hello to {name}."),
                )])
                .with_description("A greeting."),
            )
        };
        if let Some(answer) = request.input_responses.and_then(|mut r| r.remove(QUESTION)) {
            let answer: ElicitResult = serde_json::from_value(answer)
                .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
            let name = match (&answer.action, &answer.content) {
                (ElicitationAction::Accept, Some(content)) => content
                    .get("name")
                    .and_then(|n| n.as_str())
                    .unwrap_or("operator")
                    .to_string(),
                _ => {
                    return Err(ErrorData::invalid_params(
                        "nobody to greet: the question was not answered",
                        None,
                    ))
                }
            };
            return Ok(greeting(&name));
        }
        if legacy_session(self, peer) {
            return Ok(greeting("the operator"));
        }
        let question = whom().map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let asked = [(QUESTION.to_string(), InputRequest::Elicitation(question))];
        Ok(InputRequiredResult::new(Some(asked.into_iter().collect()), None).into())
    }
}

/// The tool's answer: what the operator replied.
fn answered(result: ElicitResult) -> CallToolResult {
    match result.action {
        ElicitationAction::Accept => text(format!(
            "accepted: {}",
            result.content.unwrap_or(serde_json::Value::Null)
        )),
        ElicitationAction::Decline => text("declined"),
        ElicitationAction::Cancel => text("cancelled"),
        other => text(format!("answered {other:?}")),
    }
}

#[tool_router(router = ask_tool_router, vis = "pub(super)")]
impl DemoServer {
    /// Ask the operator through a form and answer with the reply.
    #[tool(
        description = "Ask the operator a question through a form (elicitation) and answer \
                       with the reply."
    )]
    async fn ask(
        &self,
        Parameters(args): Parameters<AskArgs>,
        InputResponses(responses): InputResponses,
        peer: Peer<RoleServer>,
    ) -> CallToolResponse {
        // The second round of a 2026-07-28 call: the answer came with it.
        if let Some(answer) = responses.and_then(|mut r| r.remove(QUESTION)) {
            return match serde_json::from_value::<ElicitResult>(answer) {
                Ok(result) => answered(result).into(),
                Err(e) => error(format!("the answer is not an elicitation result: {e}")).into(),
            };
        }
        let question = args
            .question
            .unwrap_or_else(|| "Details of the note to write:".into());
        let message = if self.opts.evil {
            format!("{EVIL}{question}{EVIL}")
        } else {
            question
        };
        let requested_schema = match form() {
            Ok(schema) => schema,
            Err(e) => return error(e.to_string()).into(),
        };
        let request = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema,
        });
        if !legacy_session(self, &peer) {
            let asked = [(QUESTION.to_string(), InputRequest::Elicitation(request))];
            return InputRequiredResult::new(Some(asked.into_iter().collect()), None).into();
        }
        match peer
            .send_request(ServerRequest::ElicitRequest(request))
            .await
        {
            Ok(ClientResult::ElicitResult(result)) => answered(result).into(),
            Ok(_) => error("elicitation/create was answered with something else").into(),
            Err(e) => error(format!("elicitation/create failed: {e}")).into(),
        }
    }
}
