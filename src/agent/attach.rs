//! What the operator adds to a prompt from the servers: a resource attached with `@` (read
//! through the runtime, its text included in the user message, a blob named by type and size)
//! and a server prompt run with `/` (its `prompts/get` messages, as conversation messages).
//!
//! Separate from the loop: this is the material a prompt is made of, fetched before the loop
//! runs; the loop itself only sees messages.

use std::collections::BTreeMap;

use tokio_util::sync::CancellationToken;

use super::turn::Item;
use crate::runtime::{AgentRuntime, MessageRole, PromptMessages, ResourceContent};

/// The most bytes of one attached resource's text the model is sent; the rest is cut with a
/// note.
pub const MAX_ATTACHED: usize = 64 * 1024;

/// A resource to attach: its server and URI (as the server sent it), and its name to show.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    pub server: String,
    pub uri: String,
    pub name: String,
}

/// A server prompt to run, with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptUse {
    pub server: String,
    pub name: String,
    pub arguments: BTreeMap<String, String>,
}

/// A resource as read, for the model and for the operator.
#[derive(Debug, Clone, PartialEq)]
pub struct Attached {
    pub attachment: Attachment,
    /// What goes into the user message.
    pub text: String,
    /// A few words for the transcript: `text/plain, 1.2 KiB`.
    pub summary: String,
}

fn size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

/// Reads `attachment` through the runtime: text parts as they are (each cut at
/// [`MAX_ATTACHED`]), blobs named by type and size.
pub async fn read(
    runtime: &AgentRuntime,
    attachment: &Attachment,
    cancel: CancellationToken,
) -> Result<Attached, String> {
    let contents = runtime
        .read_resource(&attachment.server, &attachment.uri, cancel)
        .await
        .map_err(|e| e.to_string())?;
    let mut parts = Vec::new();
    let mut summary = Vec::new();
    for content in &contents {
        match content {
            ResourceContent::Text {
                mime_type, text, ..
            } => {
                summary.push(format!(
                    "{}, {}",
                    mime_type.as_deref().unwrap_or("text"),
                    size(text.len())
                ));
                if text.len() > MAX_ATTACHED {
                    let cut = crate::text::truncate(text, MAX_ATTACHED);
                    parts.push(format!(
                        "{cut}\n[cut: the resource is {} long]",
                        size(text.len())
                    ));
                } else {
                    parts.push(text.clone());
                }
            }
            ResourceContent::Blob {
                mime_type, bytes, ..
            } => {
                let what = format!(
                    "{}, {}",
                    mime_type.as_deref().unwrap_or("binary"),
                    size(bytes.len())
                );
                parts.push(format!("[binary content: {what}; not included]"));
                summary.push(what);
            }
        }
    }
    if contents.is_empty() {
        summary.push("empty".into());
    }
    Ok(Attached {
        attachment: attachment.clone(),
        text: parts.join("\n"),
        summary: summary.join(" + "),
    })
}

/// The user message: what the operator wrote, then each attached resource, marked with its
/// server and URI.
pub fn with_attachments(text: &str, attached: &[Attached]) -> String {
    let mut out = text.to_string();
    for a in attached {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&format!(
            "<resource server=\"{}\" uri=\"{}\">\n{}\n</resource>",
            a.attachment.server, a.attachment.uri, a.text
        ));
    }
    out
}

/// A prompt's messages as conversation messages.
pub fn prompt_items(got: &PromptMessages) -> Vec<Item> {
    got.messages
        .iter()
        .map(|m| match m.role {
            MessageRole::User => Item::User {
                text: m.text.clone(),
            },
            MessageRole::Assistant => Item::assistant(m.text.clone(), Vec::new(), Vec::new()),
        })
        .collect()
}

/// What runs after a prompt's messages are added: the operator's `text` if any, else the
/// prompt's last message when it is the user's (taken off `messages`); `None` when there is
/// nothing to ask the model (the prompt ends with an assistant message and nothing was typed).
pub fn split_last(messages: &mut Vec<Item>, text: String) -> Option<String> {
    if !text.trim().is_empty() {
        return Some(text);
    }
    match messages.last() {
        Some(Item::User { text: content }) => {
            let content = content.clone();
            messages.pop();
            Some(content)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attachments_follow_the_text_and_prompts_become_messages() {
        let a = Attached {
            attachment: Attachment {
                server: "s".into(),
                uri: "demo://x".into(),
                name: "x".into(),
            },
            text: "body".into(),
            summary: "text/plain, 4 B".into(),
        };
        assert_eq!(
            with_attachments("look", std::slice::from_ref(&a)),
            "look\n\n<resource server=\"s\" uri=\"demo://x\">\nbody\n</resource>"
        );
        let mut messages = vec![
            Item::User { text: "a".into() },
            Item::User { text: "b".into() },
        ];
        assert_eq!(split_last(&mut messages, String::new()), Some("b".into()));
        assert_eq!(messages.len(), 1);
        assert_eq!(
            split_last(&mut messages, "typed".into()),
            Some("typed".into())
        );
        let mut ends_with_model = vec![Item::assistant("x".into(), Vec::new(), Vec::new())];
        assert_eq!(split_last(&mut ends_with_model, " ".into()), None);
    }
}
