//! What `run` prints while the prompt runs: the agent's events and the calls' runtime events,
//! as text (the model's words on stdout as they come, one line per call and result) or as one
//! JSON object a line (docs/commands.md "JSON shapes": `run --json`). Apart from `run.rs`, which starts
//! and ends the run, because this is where the two event streams meet the terminal.

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::{agent_json, AgentEvent};
use crate::cli::approve::answer;
use crate::cli::events::event_line;
use crate::cli::output::{self, safe_text};
use crate::runtime::event_json;
use crate::runtime::{EventStream, McpEvent, RuntimeEvent};
use crate::text::sanitize;

/// What `run` itself prints between the events: a prompt's outcome, on stdout or stderr.
pub(super) enum Said {
    Out(String),
    Err(String),
}

/// Prints agent events and the calls' runtime events as they come, and answers approvals.
/// Runtime events go first when both are ready: an approval or a call's end that happened
/// before an agent event is printed before it. What `run` says (`said`) goes last: after every
/// event already queued, so a prompt's outcome follows its events.
pub(super) async fn print_events(
    mut stream: EventStream,
    mut agent: mpsc::UnboundedReceiver<AgentEvent>,
    mut said: mpsc::UnboundedReceiver<Said>,
    json: bool,
    yes: bool,
    cancel: CancellationToken,
) {
    let mut stream_open = true;
    let mut agent_open = true;
    let mut said_open = true;
    let mut plain = Plain::default();
    while stream_open || agent_open || said_open {
        tokio::select! {
            biased;
            event = stream.recv(), if stream_open => match event {
                None => stream_open = false,
                Some(event) => {
                    if let Some(line) = runtime_line(&event, json) {
                        if plain.mid_line {
                            output::print("\n");
                            plain.mid_line = false;
                        }
                        output::print(&line);
                    }
                    match event {
                        RuntimeEvent::ApprovalRequested(request) => {
                            answer(request, yes, &cancel).await
                        }
                        RuntimeEvent::Mcp(McpEvent::SamplingRequested(request)) => {
                            crate::cli::asks::reject_sampling(&request, "run")
                        }
                        _ => {}
                    }
                }
            },
            event = agent.recv(), if agent_open => match event {
                None => agent_open = false,
                Some(event) => {
                    let line = if json {
                        format!("{}\n", agent_json(&event))
                    } else {
                        plain.line(&event)
                    };
                    output::print(&line);
                }
            },
            line = said.recv(), if said_open => match line {
                None => said_open = false,
                Some(line) => {
                    if plain.mid_line {
                        output::print("\n");
                        plain.mid_line = false;
                    }
                    match line {
                        Said::Out(text) => output::print(&text),
                        Said::Err(text) => output::error_line(&text),
                    }
                }
            },
        }
    }
    if plain.mid_line {
        output::print("\n");
    }
}

/// The line for a runtime event, for the events `run` shows: those of calls, tool-list
/// changes and hook runs.
fn runtime_line(event: &RuntimeEvent, json: bool) -> Option<String> {
    let shown = match event {
        RuntimeEvent::CallStarted { .. }
        | RuntimeEvent::CallStatus { .. }
        | RuntimeEvent::CallFinished { .. }
        | RuntimeEvent::CallProgress { .. }
        | RuntimeEvent::ApprovalRequested(_)
        | RuntimeEvent::ApprovalAnswered { .. }
        | RuntimeEvent::CallAllowed { .. }
        | RuntimeEvent::ToolsChanged(_)
        | RuntimeEvent::HookRan(_) => true,
        RuntimeEvent::Mcp(_)
        | RuntimeEvent::Notification(_)
        | RuntimeEvent::Rewake(_)
        | RuntimeEvent::ServerLog { .. }
        | RuntimeEvent::ListChanged { .. }
        | RuntimeEvent::ResourceUpdated { .. }
        | RuntimeEvent::HostSession { .. }
        | RuntimeEvent::EventsDropped { .. } => false,
    };
    if !shown {
        return None;
    }
    if json {
        return Some(format!("{}\n", event_json(event)));
    }
    // Without --json the agent's own lines say the same, except for these.
    match event {
        RuntimeEvent::ApprovalAnswered { .. }
        | RuntimeEvent::ToolsChanged(_)
        | RuntimeEvent::HookRan(_) => Some(format!("  {}\n", event_line(event))),
        _ => None,
    }
}

/// What the text output has shown so far.
#[derive(Debug, Default)]
struct Plain {
    /// The last text printed left its line open (the model's text, streamed or whole: a reply
    /// that did not stream comes as one `TextDelta`).
    mid_line: bool,
}

impl Plain {
    /// The text for an agent event.
    fn line(&mut self, event: &AgentEvent) -> String {
        let newline = if self.mid_line { "\n" } else { "" };
        match event {
            AgentEvent::TextDelta { text, .. } => {
                let text = sanitize(text, true);
                if !text.is_empty() {
                    self.mid_line = !text.ends_with('\n');
                }
                text
            }
            AgentEvent::TurnEnded {
                turn,
                finish_reason: Some(reason),
                ..
            } if *reason == crate::agent::turn::FinishReason::Length => {
                self.mid_line = false;
                format!("{newline}model: turn {turn} was cut short at the token limit (finish: length): raise max_tokens, or ask for less\n")
            }
            AgentEvent::TurnStarted { .. }
            | AgentEvent::TurnEnded { .. }
            | AgentEvent::Context { .. }
            | AgentEvent::RetryCountdown { .. } => String::new(),
            AgentEvent::Compacted {
                items,
                before,
                after,
                error,
            } => {
                self.mid_line = false;
                match error {
                    None => format!("{newline}context: {items} earlier items summarised by the model (~{before} → ~{after} tokens)\n"),
                    Some(e) => format!(
                        "{newline}context: could not be compacted ({}: {}); the request goes as it is\n",
                        e.class.as_str(),
                        safe_text(&e.message)
                    ),
                }
            }
            AgentEvent::ToolCall {
                tool, arguments, ..
            } => {
                self.mid_line = false;
                format!(
                    "{newline}→ {} {}\n",
                    safe_text(tool),
                    crate::text::sanitize_line(arguments, 300)
                )
            }
            AgentEvent::ToolResult {
                status, content, ..
            } => {
                self.mid_line = false;
                format!(
                    "{newline}← {}: {}\n",
                    status.as_str(),
                    crate::text::sanitize_line(content, 300)
                )
            }
            AgentEvent::Retrying {
                attempt,
                max,
                delay,
                error,
                ..
            } => {
                self.mid_line = false;
                format!(
                    "{newline}model: {}: {}; retrying in {} (attempt {attempt} of {max})\n",
                    error.class.as_str(),
                    safe_text(&error.message),
                    crate::text::fmt_duration(*delay)
                )
            }
            // Its text came as the turn's text.
            AgentEvent::Answer { .. } | AgentEvent::Stopped { .. } => {
                self.mid_line = false;
                newline.to_string()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::agent::ToolCallStatus;

    /// The plain text of a prompt with one call then an answer, its turns' text `streamed` as
    /// deltas or whole (as with `stream: false`).
    fn printed(streamed: bool) -> String {
        let said = "I will add 2 and 3.";
        let answer = "2 plus 3 is 5.";
        let mut events = Vec::new();
        for (turn, text) in [(1, said), (2, answer)] {
            events.push(AgentEvent::TurnStarted {
                turn,
                tools: Default::default(),
            });
            // Streamed in pieces, or whole in one as the loop sends a reply that did not stream.
            let pieces: Vec<&str> = if streamed {
                text.split_inclusive(' ').collect()
            } else {
                vec![text]
            };
            for piece in pieces {
                let text = piece.to_string();
                events.push(AgentEvent::TextDelta { turn, text });
            }
            events.push(AgentEvent::TurnEnded {
                turn,
                finish_reason: None,
                usage: None,
                latency: Duration::ZERO,
            });
            if turn == 1 {
                events.push(AgentEvent::ToolCall {
                    turn,
                    call_id: "c".into(),
                    tool: "add".into(),
                    arguments: "{}".into(),
                    reason: said.into(),
                });
                events.push(AgentEvent::ToolResult {
                    turn,
                    call_id: "c".into(),
                    tool: "add".into(),
                    runtime_id: Some(1),
                    status: ToolCallStatus::Ok,
                    content: "5".into(),
                });
            }
        }
        events.push(AgentEvent::Answer {
            text: answer.into(),
        });
        let mut plain = Plain::default();
        events.iter().map(|e| plain.line(e)).collect()
    }

    #[test]
    fn an_answer_cut_at_the_token_limit_says_so() {
        let mut plain = Plain::default();
        let line = plain.line(&AgentEvent::TurnEnded {
            turn: 2,
            finish_reason: Some("length".into()),
            usage: None,
            latency: Duration::ZERO,
        });
        assert_eq!(line, "model: turn 2 was cut short at the token limit (finish: length): raise max_tokens, or ask for less\n");
    }

    #[test]
    fn a_reply_shows_its_words_once_streamed_or_whole() {
        let expected = "I will add 2 and 3.\n→ add {}\n← ok: 5\n2 plus 3 is 5.\n";
        assert_eq!(printed(true), expected);
        assert_eq!(printed(false), expected);
    }
}
