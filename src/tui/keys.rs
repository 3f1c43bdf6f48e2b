//! Keys: what each key does, given what is on screen. The view on top of the overlay stack
//! (`overlay.rs`) takes the key first: an approval (`approval_keys.rs`), a server's question or
//! sampling request, the quit question or a dialog (`dialog_keys.rs`), a picker; else the
//! filter line, else the focused pane.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::app::App;

use super::pane_state::Pane;

use super::messages::{Effect, Level};
use super::modals::Modal;
use super::overlay::Layer;
use super::state::EventKind;
use crate::runtime::LogLevel;

/// Rows a page key moves.
pub(super) const PAGE: usize = 10;

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
        // Alt-digit picks a pane from anywhere, the Conversation's input and the filter line
        // too (there a plain digit is typed).
        if key.modifiers.contains(KeyModifiers::ALT) {
            if let Some(pane) = self.digit_pane(key.code) {
                self.notice = None;
                self.set_focus(pane);
                return Vec::new();
            }
        }
        if self.panes.tools.filter_editing {
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
            code @ KeyCode::Char('1'..='8') => {
                if let Some(pane) = self.digit_pane(code) {
                    self.set_focus(pane);
                }
            }
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
                    self.session.previous_traits.extend(before);
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
                self.panes.tools.filter.clear();
                self.panes.tools.selected = 0;
                self.panes.tools.filter_editing = true;
            }
            KeyCode::Esc if self.focus == Pane::Tools && !self.panes.tools.filter.is_empty() => {
                self.panes.tools.filter.clear();
                self.panes.tools.selected = 0;
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
                    if let Some(row) = self.calls.rows.get(self.panes.calls.selected) {
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
                if let Some(row) = self.calls.rows.get(self.panes.calls.selected) {
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
                self.panes.events.selected = None
            }
            _ => {}
        }
        Vec::new()
    }

    /// The pane a digit picks: 1–7 Servers … Prompts, 8 the Conversation (with an agent).
    fn digit_pane(&self, code: KeyCode) -> Option<Pane> {
        let KeyCode::Char(c @ '1'..='8') = code else {
            return None;
        };
        let pane = Pane::ALL[c as usize - '1' as usize];
        (pane != Pane::Conversation || self.chat.configured()).then_some(pane)
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
            if self.placement.large.get() && shared(pane) && pane != self.placement.lower_left {
                continue;
            }
            break;
        }
        self.set_focus(Pane::ALL[i]);
    }

    /// Focuses `pane`; Conversation, Tools, Resources and Prompts share a place in the large
    /// layout, which shows the last one focused.
    pub(super) fn set_focus(&mut self, pane: Pane) {
        // Leaving Tools while its filter line is open keeps the filter, as Enter does.
        if pane != Pane::Tools {
            self.panes.tools.filter_editing = false;
        }
        self.focus = pane;
        match pane {
            Pane::Tools | Pane::Resources | Pane::Prompts | Pane::Conversation => {
                self.placement.lower_left = pane
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
                let before = self.panes.servers.selected;
                self.panes.servers.selected = step(self.panes.servers.selected, self.servers.len());
                if before != self.panes.servers.selected {
                    self.panes.servers.details_scroll = 0;
                }
            }
            Pane::Details => self.scroll_details(-delta),
            Pane::Tools => {
                self.panes.tools.selected =
                    step(self.panes.tools.selected, self.visible_tools().len())
            }
            Pane::Resources => {
                self.panes.resources.selected = step(
                    self.panes.resources.selected,
                    self.panes.resources.rows.len(),
                )
            }
            Pane::Prompts => {
                self.panes.prompts.selected =
                    step(self.panes.prompts.selected, self.panes.prompts.rows.len())
            }
            Pane::Calls => {
                self.panes.calls.selected = step(self.panes.calls.selected, self.calls.rows.len())
            }
            Pane::Events => {
                let len = self.events.rows.len();
                let at = self.panes.events.selected.unwrap_or(len.saturating_sub(1));
                let next = step(at, len);
                // Moving down past the newest line follows new lines again.
                self.panes.events.selected = (next + 1 < len || delta < 0).then_some(next);
            }
            // Its keys are its own (chat/keys.rs).
            Pane::Conversation => {}
        }
    }

    fn page(&mut self, dir: isize) {
        match self.focus {
            Pane::Servers | Pane::Details => {
                // A page is what the pane shows (before its first frame: `PAGE`).
                let shown = self.panes.servers.details_shown.get();
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
        let oldest = total.saturating_sub(self.panes.servers.details_shown.get().max(1));
        self.panes.servers.details_scroll = self
            .panes
            .servers
            .details_scroll
            .saturating_add_signed(lines)
            .min(oldest);
    }

    fn filter_key(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Enter => self.panes.tools.filter_editing = false,
            KeyCode::Esc => {
                self.panes.tools.filter_editing = false;
                self.panes.tools.filter.clear();
            }
            KeyCode::Backspace => {
                self.panes.tools.filter.pop();
            }
            // Ctrl-U empties it (as in a shell); other Ctrl keys type nothing.
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.panes.tools.filter.clear()
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.panes.tools.filter.push(c)
            }
            _ => {}
        }
        self.panes.tools.selected = 0;
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
