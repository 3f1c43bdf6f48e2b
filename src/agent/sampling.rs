//! A server's sampling request answered by the agent's model: the request's system prompt and
//! messages as a Chat Completions conversation, sent through the agent's own client (the same
//! endpoint, key and failure classes), with the request's token limit and temperature. The
//! answer is text; the request's tools are shown to the operator, not offered to the model.
//!
//! Separate from the loop: no tools run and nothing goes into the transcript; the console's
//! sampling modal shows the answer and sends it back only when the operator approves it.

use super::client::{HttpModelClient, ModelClient};
use super::failure::ModelError;
use super::wire::{Message, ToolChoice, ToolList};
use crate::runtime::{SamplingAsk, SamplingRole};

/// What the model answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    pub text: String,
    /// The model named in the request (the profile's `model`).
    pub model: String,
    /// `stop`, `length`, … as the endpoint said.
    pub finish_reason: Option<String>,
}

/// The request as the messages the model is sent: its system prompt (if any) first.
pub fn messages(ask: &SamplingAsk) -> Vec<Message> {
    let mut out = Vec::with_capacity(ask.messages.len() + 1);
    if let Some(system) = ask.system_prompt.as_ref().filter(|s| !s.trim().is_empty()) {
        out.push(Message::System {
            content: system.clone(),
        });
    }
    for m in &ask.messages {
        out.push(match m.role {
            SamplingRole::User => Message::User {
                content: m.text.clone(),
            },
            SamplingRole::Assistant => Message::Assistant {
                content: m.text.clone(),
                tool_calls: Vec::new(),
            },
        });
    }
    out
}

/// Asks `client`'s model to answer `ask` (no tools, at most `max_tokens`).
pub async fn sample(client: &HttpModelClient, ask: &SamplingAsk) -> Result<Sampled, ModelError> {
    let client = client.limited(ask.max_tokens, ask.temperature.map(f64::from));
    let reply = client
        .complete(
            &messages(ask).into(),
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
        let m = messages(&ask);
        assert_eq!(m.len(), 3);
        assert!(matches!(&m[0], Message::System { content } if content == "be brief"));
        assert!(matches!(&m[2], Message::Assistant { content, .. } if content == "hello"));
    }
}
