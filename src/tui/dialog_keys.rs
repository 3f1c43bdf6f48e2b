//! The keys of the quit question and of the dialog the operator opened (`Modal`): the call
//! editor, the trust preview, the restart question, the rules list, the viewers and forms.
//! Separate from `keys.rs` (which view gets a key, and the keys of anywhere) because each dialog
//! answers its keys its own way.

use crossterm::event::{KeyCode, KeyEvent};

use super::app::App;
use super::keys::scrolled;
use super::messages::{Effect, LedgerAsk, Level};
use super::modals::editor::EditorOutcome;
use super::modals::form::{FormOutcome, FormPurpose};
use super::modals::ledger::LedgerRow;
use super::modals::viewer::ViewOutcome;
use super::modals::Modal;
use crate::agent::attach::PromptUse;
use crate::approval::rule_label;
use crate::config::RuleDecision;

impl App {
    /// The quit question: `y`, `q` or Ctrl-C again quit (a `y` in a burst of typing is not
    /// taken), `n` or Esc stay.
    pub(super) fn quit_key(&mut self, key: KeyEvent, ctrl_c: bool) -> Vec<Effect> {
        match key.code {
            KeyCode::Char('y' | 'q') => {
                if let Err(why) = self.overlays.guard.confirm() {
                    self.notify(Level::Warn, why);
                    return Vec::new();
                }
                self.quit = true;
                vec![Effect::Quit]
            }
            KeyCode::Char('c') if ctrl_c => {
                self.quit = true;
                vec![Effect::Quit]
            }
            KeyCode::Char('n') | KeyCode::Esc => {
                self.overlays.quit_asked = false;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    pub(super) fn modal_key(&mut self, key: KeyEvent, ctrl_c: bool) -> Vec<Effect> {
        // Any key but `d` in the `L` list takes back its question about removing a rule.
        if self.overlays.rule_removal.is_some()
            && !matches!(key.code, KeyCode::Char('d') | KeyCode::Delete)
        {
            self.overlays.rule_removal = None;
            self.notice = None;
        }
        // A yes to quit, to restart everything or to write the trust is not taken from keys in
        // one burst with others (a paste, a sentence typed into the wrong pane).
        let confirms = matches!(
            (&self.overlays.modal, key.code),
            (Some(Modal::RestartAll), KeyCode::Char('y' | 'R'))
                | (Some(Modal::Trust(_)), KeyCode::Char('y') | KeyCode::Enter)
        );
        if confirms {
            if let Err(why) = self.overlays.guard.confirm() {
                self.notify(Level::Warn, why);
                return Vec::new();
            }
        }
        let Some(modal) = self.overlays.modal.as_mut() else {
            return Vec::new();
        };
        match modal {
            Modal::Editor(editor) => {
                if ctrl_c {
                    self.overlays.modal = None;
                    return Vec::new();
                }
                match editor.on_key(key) {
                    EditorOutcome::Continue => {}
                    EditorOutcome::Cancel => self.overlays.modal = None,
                    EditorOutcome::Submit(arguments) => {
                        let tool = editor.tool.clone();
                        self.panes
                            .tools
                            .last_arguments
                            .insert(tool.clone(), arguments.clone());
                        self.overlays.modal = None;
                        // The Tools pane keeps the keys (the next Enter calls again); the new
                        // call is the one selected in Calls.
                        self.panes.calls.selected = self.calls.rows.len();
                        self.notify(
                            Level::Info,
                            format!("sent {tool}: Calls (4) shows it and its result"),
                        );
                        return vec![Effect::Call { tool, arguments }];
                    }
                }
            }
            Modal::RestartAll => match key.code {
                KeyCode::Char('y') | KeyCode::Char('R') => {
                    self.overlays.modal = None;
                    return self.restart_all();
                }
                KeyCode::Char('n') | KeyCode::Esc => self.overlays.modal = None,
                _ if ctrl_c => self.overlays.modal = None,
                _ => {}
            },
            Modal::Trust(preview) => match key.code {
                KeyCode::Char('y') | KeyCode::Enter => {
                    let effect = Effect::WriteTrust {
                        server: preview.server.clone(),
                        trust: preview.to,
                        digest: self.session.config_digest,
                    };
                    self.overlays.modal = None;
                    return vec![effect];
                }
                KeyCode::Char('n') | KeyCode::Esc => self.overlays.modal = None,
                _ if ctrl_c => self.overlays.modal = None,
                code => {
                    preview.scroll_key(code);
                }
            },
            Modal::Help { scroll } | Modal::Result { scroll, .. } => match key.code {
                KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('?') | KeyCode::Enter => {
                    self.overlays.modal = None
                }
                _ if ctrl_c => self.overlays.modal = None,
                code => {
                    if let Some(to) = scrolled(*scroll, self.overlays.scroll_limit.get(), code) {
                        *scroll = to;
                    }
                }
            },
            Modal::Resource(view) => {
                if ctrl_c {
                    self.overlays.modal = None;
                    return Vec::new();
                }
                match view.on_key(key) {
                    ViewOutcome::Continue => {}
                    ViewOutcome::Close => self.overlays.modal = None,
                    ViewOutcome::Effect(effect) => return vec![effect],
                }
            }
            Modal::Prompt(view) | Modal::Instructions(view) | Modal::Text(view) => {
                if ctrl_c || view.on_key(key) {
                    self.overlays.modal = None;
                }
            }
            Modal::Form(form) => {
                if ctrl_c {
                    self.overlays.modal = None;
                    return Vec::new();
                }
                match form.on_key(key) {
                    FormOutcome::Continue => {}
                    FormOutcome::Complete => return form.completion_request(),
                    FormOutcome::Cancel | FormOutcome::Decline => self.overlays.modal = None,
                    FormOutcome::Submit(content) => {
                        let purpose = form.purpose.clone();
                        return self.form_sent(purpose, content);
                    }
                }
            }
            Modal::Ledger {
                entries, selected, ..
            } => match key.code {
                KeyCode::Up | KeyCode::Char('k') => *selected = selected.saturating_sub(1),
                KeyCode::Down | KeyCode::Char('j') => {
                    *selected = (*selected + 1).min(entries.len().saturating_sub(1))
                }
                KeyCode::Char('d') | KeyCode::Delete => match entries.get(*selected) {
                    Some(LedgerRow::Session { tool, .. }) => {
                        let name = tool.clone();
                        if self.attachment().is_some() {
                            // The daemon's: revoked there, and listed again.
                            return vec![Effect::Ledger(LedgerAsk::Revoke { tool: name })];
                        }
                        if let Some(rt) = self.runtime().cloned() {
                            rt.gate().revoke(&name);
                            self.notify(
                                Level::Info,
                                format!("revoked the session approval of {name}"),
                            );
                        }
                        self.show_ledger();
                    }
                    // A rule is written in the config file: `d` asks, `d` again removes it.
                    Some(LedgerRow::Rule { index, rule, from }) => {
                        let label = match from {
                            Some(from) => format!("{from} ({})", rule.pattern.describe()),
                            None => rule_label(*index, rule),
                        };
                        let (index, decision) = (*index, rule.decision);
                        if self.overlays.rule_removal != Some(index) {
                            self.overlays.rule_removal = Some(index);
                            let then = match decision {
                                RuleDecision::Deny => "the calls it denies would run again",
                                RuleDecision::Allow => "the calls it allows would be asked again",
                                RuleDecision::Ask => "the policy decides its calls again",
                            };
                            self.notify(
                                Level::Warn,
                                format!(
                                    "d again removes {label} ({} rule) from the config file: {then}",
                                    decision.as_str()
                                ),
                            );
                            return Vec::new();
                        }
                        self.overlays.rule_removal = None;
                        self.notify(
                            Level::Info,
                            format!("removing {label} from the config file…"),
                        );
                        return vec![Effect::RemoveRule {
                            index,
                            digest: self.session.config_digest,
                        }];
                    }
                    None => {}
                },
                KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('L') => {
                    self.overlays.modal = None
                }
                _ if ctrl_c => self.overlays.modal = None,
                _ => {}
            },
        }
        Vec::new()
    }

    /// A template's or a prompt's form was sent: read the resource, or get the messages.
    fn form_sent(
        &mut self,
        purpose: FormPurpose,
        content: serde_json::Map<String, serde_json::Value>,
    ) -> Vec<Effect> {
        let values: std::collections::BTreeMap<String, String> = content
            .into_iter()
            .map(|(k, v)| (k, crate::runtime::value_text(&v)))
            .collect();
        match purpose {
            FormPurpose::Template { server, template } => {
                let uri = crate::runtime::expand_template(&template, &values);
                let shown = crate::text::sanitize_line(&uri, 200);
                self.overlays.modal = Some(Modal::Resource(
                    super::modals::viewer::ResourceView::new(&server, &uri, &shown, false),
                ));
                vec![Effect::ReadResource { server, uri }]
            }
            FormPurpose::Prompt {
                server,
                name,
                into_conversation: true,
            } => {
                self.overlays.modal = None;
                self.send_to_agent(Some(PromptUse {
                    server,
                    name,
                    arguments: values,
                }))
            }
            FormPurpose::Prompt {
                server,
                name,
                into_conversation: false,
            } => {
                let shown = crate::text::sanitize_line(&name, 100);
                self.get_prompt(server, name, &shown, values)
            }
            // Elicitation forms are answered from the queue, a call's form by the call editor:
            // never from here.
            FormPurpose::Elicitation { .. } | FormPurpose::Call { .. } => {
                self.overlays.modal = None;
                Vec::new()
            }
        }
    }
}
