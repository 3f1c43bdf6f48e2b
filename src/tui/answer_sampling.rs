//! Servers' sampling requests in the console: requests queue (after approvals and
//! elicitations, before anything else); the first shows what the server asks (messages,
//! system prompt, max tokens, model preferences, included context, tools); `y` has the agent's
//! model answer it (the agent's own client, `agent::sampling`; over `attach`, the daemon's); the answer is shown in an
//! editor and goes back only on Ctrl-S; `n`/Esc rejects it (an error to the server). A request
//! the server withdrew leaves the queue.
//!
//! Separate from `keys.rs` and `ingest.rs` because it is one flow with its own queue and its
//! own background work.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::app::App;

use super::chat::input::InputBox;
use super::chat::AgentStatus;
use super::messages::{AppEvent, Effect, Level};
use super::modals::sampling::{Sampling, SamplingStage};
use super::state::EventKind;
use crate::agent::sampling::{sample, Sampled};
use crate::runtime::{stop_reason, SamplingRequest};

/// Rows a page key scrolls the request.
const PAGE: u16 = 10;

impl App {
    /// A server asks for a model's message: the request joins the queue.
    pub(super) fn sampling_requested(&mut self, request: SamplingRequest) {
        let n = request.ask.messages.len();
        let text = format!(
            "asks for a model's message ({n} message{}, max {} tokens)",
            if n == 1 { "" } else { "s" },
            request.ask.max_tokens
        );
        let server = request.server.clone();
        self.event(&server, EventKind::Request, text);
        self.overlays.samplings.push_back(Sampling {
            request,
            stage: SamplingStage::Review { problem: None },
            scroll: 0,
        });
    }

    /// Drops requests the server withdrew or that were answered (a model still answering one
    /// is stopped).
    pub(super) fn prune_samplings(&mut self) {
        self.overlays.samplings.retain_mut(|s| {
            let open = s.request.is_open();
            if !open {
                s.stop();
            }
            open
        });
    }

    fn next_sampling(&mut self) {
        if let Some(mut first) = self.overlays.samplings.pop_front() {
            first.stop();
        }
    }

    /// A key while a request waits.
    pub(super) fn sampling_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let model_state = self.model_state();
        let Some(first) = self.overlays.samplings.front_mut() else {
            return Vec::new();
        };
        let server = first.request.server.clone();
        let id = first.request.id;
        match &mut first.stage {
            SamplingStage::Review { problem } => match key.code {
                KeyCode::Char('y') | KeyCode::Enter => match model_state {
                    Ok(()) => {
                        first.stage = SamplingStage::Asking {
                            cancel: CancellationToken::new(),
                            since: self.now,
                        };
                        return vec![Effect::Sample { id }];
                    }
                    Err(why) => *problem = Some(why),
                },
                KeyCode::Char('n') | KeyCode::Esc => {
                    first.request.reject("rejected by the operator");
                    self.notify(Level::Info, format!("rejected {server}'s sampling request"));
                    self.next_sampling();
                }
                KeyCode::Up | KeyCode::Char('k') => first.scroll = first.scroll.saturating_sub(1),
                KeyCode::Down | KeyCode::Char('j') => first.scroll = first.scroll.saturating_add(1),
                KeyCode::PageUp => first.scroll = first.scroll.saturating_sub(PAGE),
                KeyCode::PageDown => first.scroll = first.scroll.saturating_add(PAGE),
                _ => {}
            },
            SamplingStage::Asking { cancel, .. } => {
                if key.code == KeyCode::Esc {
                    cancel.cancel();
                    first.stage = SamplingStage::Review {
                        problem: Some("stopped: the model's answer was not awaited".into()),
                    };
                }
            }
            SamplingStage::Answer {
                editor,
                original,
                model,
                finish_reason,
            } => match key.code {
                KeyCode::Char('s') if ctrl => {
                    let text = editor.text();
                    let edited = text != *original;
                    first.request.answer(
                        text,
                        model.clone(),
                        stop_reason(finish_reason.as_deref()),
                        edited,
                    );
                    self.notify(Level::Info, format!("sent the model's answer to {server}"));
                    self.next_sampling();
                }
                KeyCode::Char('r') if ctrl => {
                    first.stage = SamplingStage::Review { problem: None };
                }
                KeyCode::Esc => {
                    first.request.reject("rejected by the operator");
                    self.notify(Level::Info, format!("rejected {server}'s sampling request"));
                    self.next_sampling();
                }
                KeyCode::PageUp => first.scroll = first.scroll.saturating_sub(PAGE),
                KeyCode::PageDown => first.scroll = first.scroll.saturating_add(PAGE),
                KeyCode::Enter => editor.newline(),
                KeyCode::Char('u') if ctrl => editor.clear(),
                KeyCode::Char(c) if !ctrl && !alt => editor.insert(c),
                KeyCode::Backspace => editor.backspace(),
                KeyCode::Delete => editor.delete(),
                KeyCode::Left => editor.left(),
                KeyCode::Right => editor.right(),
                KeyCode::Home => editor.home(),
                KeyCode::End => editor.end(),
                KeyCode::Up => editor.up(),
                KeyCode::Down => editor.down(),
                _ => {}
            },
        }
        Vec::new()
    }

    /// Pasted text goes into the answer being edited.
    pub(super) fn sampling_paste(&mut self, text: &str) -> bool {
        match self.overlays.samplings.front_mut().map(|s| &mut s.stage) {
            Some(SamplingStage::Answer { editor, .. }) => {
                editor.insert_str(text);
                true
            }
            Some(SamplingStage::Review { .. } | SamplingStage::Asking { .. }) => true,
            None => false,
        }
    }

    /// Whether the agent's model can answer now, or why not.
    fn model_state(&self) -> Result<(), String> {
        // Over `attach` the daemon's model answers (`sample`), and says so if it cannot.
        if self.attachment().is_some() {
            return Ok(());
        }
        match &self.chat.status {
            AgentStatus::Ready if self.chat.model.is_some() => Ok(()),
            AgentStatus::Ready | AgentStatus::Waiting | AgentStatus::Starting => {
                Err("the agent's model is still starting: try again in a moment".into())
            }
            AgentStatus::Failed(why) => Err(format!("the agent's model could not start: {why}")),
            AgentStatus::Off => Err("no model is configured (no `agent:` in the config)".into()),
        }
    }

    /// The model answered request `id` (or could not).
    pub(super) fn sampled(&mut self, id: u64, result: Result<Sampled, String>) {
        let Some(sampling) = self
            .overlays
            .samplings
            .iter_mut()
            .find(|s| s.request.id == id)
        else {
            return;
        };
        // A stopped request's late answer is dropped.
        if !matches!(sampling.stage, SamplingStage::Asking { .. }) {
            return;
        }
        sampling.stage = match result {
            Ok(sampled) => {
                // The model's text is ours to show only once it is made safe to draw.
                let text = crate::text::sanitize(&sampled.text, true);
                let mut editor = InputBox::default();
                editor.insert_str(&text);
                SamplingStage::Answer {
                    editor,
                    original: text,
                    model: sampled.model,
                    finish_reason: sampled.finish_reason.map(|r| r.as_str().to_string()),
                }
            }
            Err(why) => SamplingStage::Review {
                problem: Some(crate::text::sanitize(&why, true)),
            },
        };
    }

    /// Starts the model on request `id` (`Effect::Sample`): its answer comes back as
    /// `AppEvent::Sampled`.
    pub(super) fn run_sample(&self, id: u64, tx: &mpsc::Sender<AppEvent>) {
        let Some(sampling) = self.overlays.samplings.iter().find(|s| s.request.id == id) else {
            return;
        };
        let SamplingStage::Asking { cancel, .. } = &sampling.stage else {
            return;
        };
        let cancel = cancel.clone();
        let ask = sampling.request.ask.clone();
        let client = self.chat.model.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            let result = match client {
                None => Err("the agent's model is not running".to_string()),
                Some(client) => tokio::select! {
                    () = cancel.cancelled() => return,
                    answer = sample(&*client, &ask) => answer.map_err(|e| {
                        format!("{}: {} (hint: {})", e.class.as_str(), e.message, e.hint)
                    }),
                },
            };
            let _ = tx.send(AppEvent::Sampled { id, result }).await;
        });
    }
}
