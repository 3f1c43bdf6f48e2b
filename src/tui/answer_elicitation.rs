//! Servers' elicitations in the console: requests queue (after approvals, before anything
//! else), the first shows as a form or as its URL, and keys answer it: accept (checked against
//! the schema first), decline, cancel. A request the server withdrew leaves the queue.
//!
//! Separate from `keys.rs` and `ingest.rs` because it is one flow with its own queue.

use crossterm::event::{KeyCode, KeyEvent};

use super::app::App;

use super::messages::{Effect, Level};
use super::modals::elicitation::form_for;
use super::modals::form::FormOutcome;
use super::state::EventKind;
use crate::runtime::{ElicitationMode, ElicitationRequest};

impl App {
    /// A server asks: the request joins the queue.
    pub(super) fn elicitation_requested(&mut self, request: ElicitationRequest) {
        let text = match &request.mode {
            ElicitationMode::Form { fields, .. } => format!(
                "asks for input ({} field{}): {}",
                fields.len(),
                if fields.len() == 1 { "" } else { "s" },
                request.message
            ),
            ElicitationMode::Url { url, .. } => {
                format!("asks to open {url}: {}", request.message)
            }
        };
        let server = request.server.clone();
        self.event(&server, EventKind::Request, text);
        self.overlays.elicitations.push_back(request);
        self.show_first_elicitation();
    }

    /// Drops requests the server withdrew or that were answered, and shows the first.
    pub(super) fn prune_elicitations(&mut self) {
        let before = self.overlays.elicitations.front().map(|r| r.id);
        self.overlays
            .elicitations
            .retain(ElicitationRequest::is_open);
        if self.overlays.elicitations.front().map(|r| r.id) != before {
            self.overlays.elicitation_form = None;
            self.show_first_elicitation();
        }
    }

    /// Builds the form of the first request if it has none yet.
    fn show_first_elicitation(&mut self) {
        let queued = self.overlays.elicitations.len();
        match self.overlays.elicitations.front() {
            Some(first) if self.overlays.elicitation_form.is_none() => {
                if let ElicitationMode::Form { .. } = first.mode {
                    self.overlays.elicitation_form = Some(form_for(first, queued));
                }
            }
            Some(_) => {
                // The count in the title follows the queue.
                if let (Some(form), Some(first)) = (
                    self.overlays.elicitation_form.as_mut(),
                    self.overlays.elicitations.front(),
                ) {
                    form.title = form_for(first, queued).title;
                }
            }
            None => self.overlays.elicitation_form = None,
        }
    }

    /// The first request was answered: the next one shows.
    fn next_elicitation(&mut self) {
        self.overlays.elicitations.pop_front();
        self.overlays.elicitation_form = None;
        self.show_first_elicitation();
    }

    /// A key while a request waits.
    pub(super) fn elicitation_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(request) = self.overlays.elicitations.front().cloned() else {
            return Vec::new();
        };
        let server = request.server.clone();
        match &request.mode {
            ElicitationMode::Url { url, .. } => match key.code {
                KeyCode::Char('o') | KeyCode::Enter => {
                    // Accepting does not wait for the browser: the server's flow goes on there.
                    if request.accept(Default::default()).is_ok() {
                        self.notify(
                            Level::Info,
                            format!("accepted {server}'s request; opening the URL"),
                        );
                    }
                    let url = url.clone();
                    self.next_elicitation();
                    vec![Effect::OpenUrl { url }]
                }
                KeyCode::Char('d') => {
                    request.decline("declined by the operator");
                    self.notify(Level::Info, format!("declined {server}'s request"));
                    self.next_elicitation();
                    Vec::new()
                }
                KeyCode::Esc => {
                    request.cancel();
                    self.notify(Level::Info, format!("cancelled {server}'s request"));
                    self.next_elicitation();
                    Vec::new()
                }
                _ => Vec::new(),
            },
            ElicitationMode::Form { .. } => {
                let Some(form) = self.overlays.elicitation_form.as_mut() else {
                    return Vec::new();
                };
                match form.on_key(key) {
                    FormOutcome::Continue | FormOutcome::Complete => {}
                    FormOutcome::Submit(content) => match request.accept(content) {
                        Ok(()) => {
                            self.notify(Level::Info, format!("sent the form to {server}"));
                            self.next_elicitation();
                        }
                        // The same check the form made; kept for the record.
                        Err(problems) => form.errors = problems,
                    },
                    FormOutcome::Decline => {
                        request.decline("declined by the operator");
                        self.notify(Level::Info, format!("declined {server}'s request"));
                        self.next_elicitation();
                    }
                    FormOutcome::Cancel => {
                        request.cancel();
                        self.notify(Level::Info, format!("cancelled {server}'s request"));
                        self.next_elicitation();
                    }
                }
                Vec::new()
            }
        }
    }
}
