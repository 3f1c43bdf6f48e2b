//! Keys: what each key does, given what is on screen. A pending approval takes keys first
//! (`approval_keys.rs`), then a server's elicitation, then its sampling request, then an open
//! modal, then the filter line, then the focused pane.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::app::{App, Pane};

use super::messages::{Effect, Level};
use super::modals::editor::EditorOutcome;
use super::modals::form::{FormOutcome, FormPurpose};
use super::modals::ledger::LedgerRow;
use super::modals::viewer::ViewOutcome;
use super::modals::Modal;
use super::overlay::Layer;
use super::state::EventKind;
use crate::agent::attach::PromptUse;
use crate::approval::rule_label;
use crate::config::RuleDecision;
use crate::runtime::LogLevel;

/// Rows a page key moves.
const PAGE: usize = 10;

/// The level `l` asks for next: debug, info, warning, error, then debug again.
fn next_log_level(current: Option<LogLevel>) -> LogLevel {
    match current {
        None | Some(LogLevel::Info) | Some(LogLevel::Notice) => LogLevel::Warning,
        Some(LogLevel::Warning) => LogLevel::Error,
        Some(LogLevel::Error)
        | Some(LogLevel::Critical)
        | Some(LogLevel::Alert)
        | Some(LogLevel::Emergency) => LogLevel::Debug,
        Some(LogLevel::Debug) => LogLevel::Info,
    }
}

impl App {
    /// One key press. Returns the work for the event loop.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let effects = self.key(key);
        self.sync_overlays();
        effects
    }

    /// The key, given to the view on top (`overlay.rs` decides which), else to the panes.
    fn key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let ctrl_c =
            key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        match self.top_layer() {
            Some(Layer::Quit) => return self.quit_key(key, ctrl_c),
            // Ctrl-C over an approval or a server's request asks to quit; they stay queued.
            Some(Layer::Approval | Layer::Elicitation | Layer::Sampling) if ctrl_c => {
                return self.ask_quit()
            }
            Some(Layer::Approval) => return self.approval_key(key),
            Some(Layer::Elicitation) => return self.elicitation_key(key),
            Some(Layer::Sampling) => return self.sampling_key(key),
            Some(Layer::Modal) => return self.modal_key(key, ctrl_c),
            Some(Layer::ProfilePicker) => return self.picker_key(key, ctrl_c),
            Some(Layer::ContentPicker) => return self.content_picker_key(key, ctrl_c),
            None => {}
        }
        if ctrl_c {
            return self.ask_quit();
        }
        if self.filter_editing {
            self.filter_key(key);
            return Vec::new();
        }
        // The Conversation pane's input takes the keys it knows (all but Tab, Shift-Tab).
        if self.focus == Pane::Conversation {
            if let Some(effects) = self.chat_key(key) {
                return effects;
            }
        }
        self.notice = None;
        match key.code {
            KeyCode::Char('q') => return self.ask_quit(),
            KeyCode::Char('?') => self.overlays.modal = Some(Modal::Help { scroll: 0 }),
            KeyCode::Tab => self.cycle_focus(1),
            KeyCode::Char(c @ '1'..='7') => {
                let index = c as usize - '1' as usize;
                self.set_focus(Pane::ALL[index]);
            }
            KeyCode::Char('8') if self.chat.configured() => self.set_focus(Pane::Conversation),
            KeyCode::BackTab => self.cycle_focus(Pane::ALL.len() - 1),
            KeyCode::Up | KeyCode::Char('k') => self.move_selection(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_selection(1),
            KeyCode::PageUp => self.page(-1),
            KeyCode::PageDown => self.page(1),
            KeyCode::Char('R') if self.calls.running() > 0 => {
                self.overlays.modal = Some(Modal::RestartAll)
            }
            KeyCode::Char('R') => return vec![Effect::RestartAll],
            KeyCode::Char('L') => self.open_ledger(),
            KeyCode::Char('t') if self.focus == Pane::Servers => self.open_trust_preview(),
            KeyCode::Char('r') if matches!(self.focus, Pane::Servers | Pane::Details) => {
                if let Some(s) = self.selected_server() {
                    let server = s.name.clone();
                    // Its tools' traits now, so that those the restart changes are marked `*`.
                    let before = super::app::traits_by_name(
                        self.tools
                            .iter()
                            .filter(|t| t.server.as_deref() == Some(server.as_str())),
                    );
                    self.previous_traits.extend(before);
                    self.notify(Level::Info, format!("restarting {server}…"));
                    self.event(
                        &server,
                        EventKind::Supervisor,
                        "restart asked by the operator (r)".into(),
                    );
                    return vec![Effect::RestartServer { server }];
                }
            }
            KeyCode::Char('/') if self.focus == Pane::Tools => {
                self.tool_filter.clear();
                self.tool_sel = 0;
                self.filter_editing = true;
            }
            KeyCode::Esc if self.focus == Pane::Tools && !self.tool_filter.is_empty() => {
                self.tool_filter.clear();
                self.tool_sel = 0;
            }
            KeyCode::Char('i') if matches!(self.focus, Pane::Servers | Pane::Details) => {
                self.open_instructions()
            }
            KeyCode::Char('s') if self.focus == Pane::Resources => {
                return self.toggle_subscription();
            }
            KeyCode::Enter => match self.focus {
                Pane::Resources => return self.open_resource(),
                Pane::Prompts => return self.open_prompt(),
                Pane::Tools => self.open_editor(),
                Pane::Calls => {
                    if let Some(row) = self.calls.rows.get(self.call_sel) {
                        self.overlays.modal = Some(Modal::Result {
                            call: row.id,
                            scroll: 0,
                        });
                    }
                }
                Pane::Servers => self.focus = Pane::Details,
                Pane::Events => self.open_event(),
                Pane::Details => self.open_details(),
                Pane::Conversation => {}
            },
            KeyCode::Char('d') if self.focus == Pane::Tools => self.open_tool_about(),
            KeyCode::Char('c') if matches!(self.focus, Pane::Servers | Pane::Details) => {
                self.open_launch()
            }
            KeyCode::Char('c') if self.focus == Pane::Calls => {
                if let Some(row) = self.calls.rows.get(self.call_sel) {
                    if row.cancellable() {
                        let id = row.id;
                        self.notify(Level::Info, super::ingest::cancelling(id));
                        return vec![Effect::CancelCall(id)];
                    }
                    self.notify(Level::Warn, format!("call #{} has already ended", row.id));
                }
            }
            KeyCode::Char('o') if matches!(self.focus, Pane::Servers | Pane::Details) => {
                if let Some(s) = self.selected_server() {
                    let server = s.name.clone();
                    if !s.can_login() {
                        self.notify(
                            Level::Warn,
                            format!("{server} is not a streamable_http server: OAuth login is for those"),
                        );
                    } else {
                        self.notify(Level::Info, format!("logging in to {server}…"));
                        return vec![Effect::Login { server }];
                    }
                }
            }
            KeyCode::Char('l') if matches!(self.focus, Pane::Servers | Pane::Details) => {
                if let Some(s) = self.selected_server() {
                    if let Some(why) = s.cannot_log() {
                        self.notify(Level::Info, why);
                        return Vec::new();
                    }
                    let level = next_log_level(s.log_level);
                    return vec![Effect::SetLogLevel {
                        server: s.name.clone(),
                        level,
                    }];
                }
            }
            KeyCode::End | KeyCode::Char('G') if self.focus == Pane::Events => {
                self.event_sel = None
            }
            _ => {}
        }
        Vec::new()
    }

    /// Quits, or asks first when quitting would cancel something or lose what was typed:
    /// calls running, the agent at work, a prompt being written.
    fn ask_quit(&mut self) -> Vec<Effect> {
        let at_stake = self.calls.running() > 0 || self.chat.busy() || !self.chat.input.is_blank();
        if at_stake && !self.overlays.quit_asked {
            self.overlays.quit_asked = true;
            return Vec::new();
        }
        self.quit = true;
        vec![Effect::Quit]
    }

    /// Tab / Shift-Tab. On the large layout, among the panes on screen: of Conversation,
    /// Tools, Resources and Prompts (one place) only the one showing, so Tab from the
    /// Conversation reaches Calls with the conversation still in view (their digits switch it).
    fn cycle_focus(&mut self, step: usize) {
        let mut i = Pane::ALL.iter().position(|p| *p == self.focus).unwrap_or(0);
        let shared = |p: Pane| {
            matches!(
                p,
                Pane::Conversation | Pane::Tools | Pane::Resources | Pane::Prompts
            )
        };
        loop {
            i = (i + step) % Pane::ALL.len();
            let pane = Pane::ALL[i];
            // No agent, no Conversation pane.
            if pane == Pane::Conversation && !self.chat.configured() {
                continue;
            }
            if self.large.get() && shared(pane) && pane != self.lower_left {
                continue;
            }
            break;
        }
        self.set_focus(Pane::ALL[i]);
    }

    /// Focuses `pane`; Conversation, Tools, Resources and Prompts share a place in the large
    /// layout, which shows the last one focused.
    pub(super) fn set_focus(&mut self, pane: Pane) {
        self.focus = pane;
        match pane {
            Pane::Tools | Pane::Resources | Pane::Prompts | Pane::Conversation => {
                self.lower_left = pane
            }
            Pane::Servers | Pane::Details | Pane::Calls | Pane::Events => {}
        }
    }

    fn move_selection(&mut self, delta: isize) {
        let step = |sel: usize, len: usize| -> usize {
            if len == 0 {
                0
            } else {
                sel.saturating_add_signed(delta).min(len - 1)
            }
        };
        match self.focus {
            Pane::Servers => {
                let before = self.server_sel;
                self.server_sel = step(self.server_sel, self.servers.len());
                if before != self.server_sel {
                    self.details_scroll = 0;
                }
            }
            Pane::Details => self.scroll_details(-delta),
            Pane::Tools => self.tool_sel = step(self.tool_sel, self.visible_tools().len()),
            Pane::Resources => {
                self.resources.selected = step(self.resources.selected, self.resources.rows.len())
            }
            Pane::Prompts => {
                self.prompts.selected = step(self.prompts.selected, self.prompts.rows.len())
            }
            Pane::Calls => self.call_sel = step(self.call_sel, self.calls.rows.len()),
            Pane::Events => {
                let len = self.events.rows.len();
                let at = self.event_sel.unwrap_or(len.saturating_sub(1));
                let next = step(at, len);
                // Moving down past the newest line follows new lines again.
                self.event_sel = (next + 1 < len || delta < 0).then_some(next);
            }
            // Its keys are its own (chat/keys.rs).
            Pane::Conversation => {}
        }
    }

    fn page(&mut self, dir: isize) {
        match self.focus {
            Pane::Servers | Pane::Details => {
                // A page is what the pane shows (before its first frame: `PAGE`).
                let shown = self.details_shown.get();
                let page = if shown == 0 { PAGE } else { shown };
                self.scroll_details(-dir * page as isize);
            }
            Pane::Tools | Pane::Calls | Pane::Events | Pane::Resources | Pane::Prompts => {
                for _ in 0..PAGE {
                    self.move_selection(dir);
                }
            }
            Pane::Conversation => {}
        }
    }

    /// Scrolls the stderr tail: positive goes back in time, no further than its first page.
    fn scroll_details(&mut self, lines: isize) {
        let total = self.selected_server().map_or(0, |s| s.stderr.len());
        let oldest = total.saturating_sub(self.details_shown.get().max(1));
        self.details_scroll = self.details_scroll.saturating_add_signed(lines).min(oldest);
    }

    fn filter_key(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Enter => self.filter_editing = false,
            KeyCode::Esc => {
                self.filter_editing = false;
                self.tool_filter.clear();
            }
            KeyCode::Backspace => {
                self.tool_filter.pop();
            }
            // Ctrl-U empties it (as in a shell); other Ctrl keys type nothing.
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.tool_filter.clear()
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.tool_filter.push(c)
            }
            _ => {}
        }
        self.tool_sel = 0;
    }

    /// The quit question: `y`, `q` or Ctrl-C again quit (a `y` in a burst of typing is not
    /// taken), `n` or Esc stay.
    fn quit_key(&mut self, key: KeyEvent, ctrl_c: bool) -> Vec<Effect> {
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

    fn modal_key(&mut self, key: KeyEvent, ctrl_c: bool) -> Vec<Effect> {
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
                        self.last_arguments.insert(tool.clone(), arguments.clone());
                        self.overlays.modal = None;
                        self.set_focus(Pane::Calls);
                        self.call_sel = self.calls.rows.len();
                        return vec![Effect::Call { tool, arguments }];
                    }
                }
            }
            Modal::RestartAll => match key.code {
                KeyCode::Char('y') | KeyCode::Char('R') => {
                    self.overlays.modal = None;
                    return vec![Effect::RestartAll];
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
                        digest: self.config_digest,
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
            Modal::Ledger { entries, selected } => match key.code {
                KeyCode::Up | KeyCode::Char('k') => *selected = selected.saturating_sub(1),
                KeyCode::Down | KeyCode::Char('j') => {
                    *selected = (*selected + 1).min(entries.len().saturating_sub(1))
                }
                KeyCode::Char('d') | KeyCode::Delete => match entries.get(*selected) {
                    Some(LedgerRow::Session(entry)) => {
                        let name = entry.tool_name.clone();
                        if let Some(rt) = self.runtime().cloned() {
                            rt.gate().revoke(&name);
                            self.notify(
                                Level::Info,
                                format!("revoked the session approval of {name}"),
                            );
                        }
                        self.open_ledger();
                    }
                    // A rule is written in the config file: `d` asks, `d` again removes it.
                    Some(LedgerRow::Rule { index, rule }) => {
                        let (index, label, decision) =
                            (*index, rule_label(*index, rule), rule.decision);
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
                            digest: self.config_digest,
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

/// A scroll position moved by a scroll key (↑↓ j k, PgUp PgDn, Home End g G), kept within
/// `0..=last`; `None` for any other key.
pub(super) fn scrolled(scroll: u16, last: u16, code: KeyCode) -> Option<u16> {
    let page = PAGE as u16;
    Some(
        match code {
            KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1),
            KeyCode::PageUp => scroll.saturating_sub(page),
            KeyCode::PageDown => scroll.saturating_add(page),
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => last,
            _ => return None,
        }
        .min(last),
    )
}
