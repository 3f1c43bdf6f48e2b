//! What the model is told a tool call gave: the text of a tool message.

use super::events::ToolCallStatus;
use crate::runtime::{CallOutcome, CallStatus};
use crate::tool::ContentPart;

/// What a call gave, for the model: the tool's text (its parts: text as is, images, audio
/// and embedded resources as placeholders naming their type and size), its structured content
/// as JSON, and for anything but success a first word saying what happened. Whole: the
/// conversation cuts a long one for the model (`max_result_tokens`).
pub fn tool_content(outcome: &CallOutcome) -> (ToolCallStatus, String) {
    let result = &outcome.result;
    let mut text = if result.parts.is_empty() {
        result.text.clone()
    } else {
        let parts: Vec<String> = result.parts.iter().map(ContentPart::for_model).collect();
        parts.join("\n")
    };
    if let Some(structured) = &result.structured {
        let json = structured.to_string();
        if text != json {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str("structured content: ");
            text.push_str(&json);
        }
    }
    let (status, prefix) = match outcome.status {
        CallStatus::Ok => (ToolCallStatus::Ok, ""),
        CallStatus::Error => (ToolCallStatus::Error, "error: "),
        CallStatus::Denied => (ToolCallStatus::Denied, "not run: "),
        CallStatus::Refused => (ToolCallStatus::Refused, "not run: "),
        CallStatus::Cancelled => (ToolCallStatus::Cancelled, "cancelled by the operator: "),
        // A returned outcome is final; these cannot be, but say what is known.
        CallStatus::AwaitingApproval | CallStatus::Running => (ToolCallStatus::Error, "error: "),
    };
    (status, format!("{prefix}{text}"))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::tool::ToolResult;

    fn outcome(status: CallStatus, result: ToolResult) -> CallOutcome {
        CallOutcome {
            id: 1,
            tool: "t".into(),
            status,
            result,
            elapsed: Duration::ZERO,
            approval: None,
            allowed: None,
            hooks: Vec::new(),
        }
    }

    #[test]
    fn what_the_model_is_told_says_what_happened() {
        let mut ok = ToolResult::ok("5");
        ok.structured = Some(json!({"sum": 5}));
        assert_eq!(
            tool_content(&outcome(CallStatus::Ok, ok)),
            (
                ToolCallStatus::Ok,
                "5\nstructured content: {\"sum\":5}".into()
            )
        );
        let mut same = ToolResult::ok("{\"sum\":5}");
        same.structured = Some(json!({"sum": 5}));
        assert_eq!(
            tool_content(&outcome(CallStatus::Ok, same)).1,
            "{\"sum\":5}"
        );
        let denied = ToolResult::error("denied by the operator: t");
        assert_eq!(
            tool_content(&outcome(CallStatus::Denied, denied)),
            (
                ToolCallStatus::Denied,
                "not run: denied by the operator: t".into()
            )
        );
        let failed = ToolResult::error("no note titled \"x\"");
        assert_eq!(
            tool_content(&outcome(CallStatus::Error, failed)).1,
            "error: no note titled \"x\""
        );
        // Parts other than text go as placeholders: an embedded resource is not pasted in.
        let mut parts = ToolResult::ok("Here it is:\n[resource test://r/1]\nsecret text");
        parts.parts = vec![
            ContentPart::Text("Here it is:".into()),
            ContentPart::Resource {
                uri: "test://r/1".into(),
                mime_type: Some("text/plain".into()),
                bytes: 11,
                text: true,
            },
            ContentPart::Image {
                mime_type: "image/png".into(),
                bytes: 68,
            },
        ];
        assert_eq!(
            tool_content(&outcome(CallStatus::Ok, parts)).1,
            "Here it is:\n[embedded resource: test://r/1, text/plain, 11 bytes of text]\n[image: image/png, 68 bytes]"
        );
    }
}
