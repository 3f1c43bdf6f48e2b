//! A server's sampling request answered by the agent's model: the request's system prompt and
//! messages as a conversation, sent through the agent's own client (the same
//! endpoint, key and failure classes), with the request's token limit and temperature. The
//! answer is text; the request's tools are shown to the operator, not offered to the model.
//!
//! Separate from the loop: no tools run and nothing goes into the transcript; the console's
//! sampling modal shows the answer and sends it back only when the operator approves it.

use super::client::ModelClient;
use super::failure::ModelError;
use super::turn::{FinishReason, History, Item, ToolChoice, ToolList};
use crate::runtime::{SamplingAsk, SamplingRole};

/// What the model answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    pub text: String,
    /// The model named in the request (the profile's `model`).
    pub model: String,
    pub finish_reason: Option<FinishReason>,
}

/// The request as the conversation the model is sent: its system prompt (if any) and items.
pub fn history(ask: &SamplingAsk) -> History {
    let items = ask
        .messages
        .iter()
        .map(|m| match m.role {
            SamplingRole::User => Item::User {
                text: m.text.clone(),
            },
            SamplingRole::Assistant => Item::assistant(m.text.clone(), Vec::new(), Vec::new()),
        })
        .collect();
    History::new(ask.system_prompt.clone(), items)
}

/// Asks the model through `client` (limited to the request's `max_tokens` and temperature).
pub async fn sample(client: &dyn ModelClient, ask: &SamplingAsk) -> Result<Sampled, ModelError> {
    let client = client.limited(ask.max_tokens, ask.temperature.map(f64::from));
    let reply = client
        .complete(
            &history(ask),
            &ToolList::default(),
            ToolChoice::None,
            &|_| {},
        )
        .await?;
    Ok(Sampled {
        text: reply.text,
        model: client.model().to_string(),
        finish_reason: reply.finish_reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::SamplingMessage;

    #[test]
    fn the_system_prompt_comes_first_and_roles_are_kept() {
        let ask = SamplingAsk {
            messages: vec![
                SamplingMessage {
                    role: SamplingRole::User,
                    text: "hi".into(),
                },
                SamplingMessage {
                    role: SamplingRole::Assistant,
                    text: "hello".into(),
                },
            ],
            system_prompt: Some("be brief".into()),
            max_tokens: 5,
            temperature: None,
            stop_sequences: Vec::new(),
            model_preferences: None,
            include_context: None,
            tools: Vec::new(),
            tool_choice: None,
        };
        let h = history(&ask);
        assert_eq!(h.system(), Some("be brief"));
        assert_eq!(h.len(), 2);
        assert!(matches!(&h.items()[1], Item::Assistant { text, .. } if text == "hello"));
    }
}
