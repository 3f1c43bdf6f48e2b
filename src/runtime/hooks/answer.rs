//! Reading a hook's answer: `{"decision": "allow" | "deny" | "defer", "reason": "…"}` from an
//! MCP tool's structured content, or from text (a tool's text, a command's stdout) that is a
//! JSON object. The same contract for both kinds of action, as the seed's HTTP action had.

use serde_json::Value;

use super::report::HookAnswer;

/// Quoted text of an unreadable answer, at most this many characters.
const QUOTE_CHARS: usize = 120;

/// What a hook's output said.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Answer {
    Decision {
        decision: HookAnswer,
        reason: Option<String>,
    },
    /// No decision: empty output, or an object without `decision` (a hook for its side effect).
    Nothing,
    /// Output that cannot be read as an answer, in words (for the warning).
    Unreadable(String),
}

/// The answer in `structured` (when it is an object) or else in `text`.
pub(super) fn read(structured: Option<&Value>, text: &str) -> Answer {
    if let Some(object @ Value::Object(_)) = structured {
        return from_value(object);
    }
    let text = text.trim();
    if text.is_empty() {
        return Answer::Nothing;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => from_value(&value),
        Ok(_) | Err(_) => Answer::Unreadable(format!(
            "the answer is not a JSON object: {}",
            crate::text::quote_bytes(text.as_bytes(), QUOTE_CHARS)
        )),
    }
}

fn from_value(value: &Value) -> Answer {
    let decision = match value.get("decision") {
        None | Some(Value::Null) => return Answer::Nothing,
        Some(Value::String(word)) => match word.as_str() {
            "allow" => HookAnswer::Allow,
            "deny" => HookAnswer::Deny,
            "defer" => HookAnswer::Defer,
            other => {
                return Answer::Unreadable(format!(
                    "unknown decision {} (allow, deny or defer)",
                    crate::text::quote_bytes(other.as_bytes(), QUOTE_CHARS)
                ))
            }
        },
        Some(other) => {
            return Answer::Unreadable(format!(
                "decision is {}, not a word (allow, deny or defer)",
                crate::tool::json_kind(other)
            ))
        }
    };
    let reason = match value.get("reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(s.trim().to_string()),
        Some(other) => Some(other.to_string()),
    };
    Answer::Decision { decision, reason }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decisions_from_structured_content_or_text() {
        assert_eq!(
            read(
                Some(&json!({"decision": "deny", "reason": "no"})),
                "ignored"
            ),
            Answer::Decision {
                decision: HookAnswer::Deny,
                reason: Some("no".into())
            }
        );
        assert_eq!(
            read(None, " {\"decision\":\"allow\"}\n"),
            Answer::Decision {
                decision: HookAnswer::Allow,
                reason: None
            }
        );
        assert_eq!(
            read(
                Some(&json!("not an object")),
                "{\"decision\":\"defer\",\"reason\":7}"
            ),
            Answer::Decision {
                decision: HookAnswer::Defer,
                reason: Some("7".into())
            }
        );
    }

    #[test]
    fn silence_and_side_effect_answers_say_nothing() {
        assert_eq!(read(None, ""), Answer::Nothing);
        assert_eq!(read(None, "  \n"), Answer::Nothing);
        assert_eq!(read(None, "{\"logged\": true}"), Answer::Nothing);
        assert_eq!(read(None, "{\"decision\": null}"), Answer::Nothing);
    }

    #[test]
    fn garbage_is_unreadable_and_quoted_safely() {
        let Answer::Unreadable(why) = read(None, "\u{1b}[2Jgarbage {") else {
            panic!("unreadable");
        };
        assert_eq!(why, "the answer is not a JSON object: \"garbage {\"");
        assert!(matches!(read(None, "[1, 2]"), Answer::Unreadable(_)));
        let Answer::Unreadable(why) = read(None, "{\"decision\": \"maybe\"}") else {
            panic!("unreadable");
        };
        assert_eq!(why, "unknown decision \"maybe\" (allow, deny or defer)");
        assert!(matches!(
            read(None, "{\"decision\": true}"),
            Answer::Unreadable(_)
        ));
    }
}
