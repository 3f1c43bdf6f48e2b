//! Keys: what each key does, given what is on screen. The view on top of the overlay stack
//! (`overlay.rs`) takes the key first: an approval (`approval_keys.rs`), a server's question or
//! sampling request, the quit question or a dialog (`dialog_keys.rs`), a picker. Else a pane
//! that is being typed into, the keys that work anywhere (here), and the focused pane's own
//! (each pane's component, `panes/*.rs`).

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::app::{traits_by_name, App};
use super::messages::{Effect, Level};
use super::modals::Modal;
use super::overlay::Layer;
use super::pane_state::Pane;
use super::panes;
use super::state::EventKind;
use super::widgets::PAGE;

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
        // A pane being typed into (the Conversation's input, the Tools filter line) takes
        // the keys it knows first.
        if panes::typing(self.focus, self) {
            if let Some(effects) = panes::key(self.focus, self, key) {
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
            KeyCode::Up | KeyCode::Char('k') => panes::step(self.focus, self, -1),
            KeyCode::Down | KeyCode::Char('j') => panes::step(self.focus, self, 1),
            KeyCode::PageUp => panes::page(self.focus, self, -1),
            KeyCode::PageDown => panes::page(self.focus, self, 1),
            KeyCode::Char('R') if self.calls.running() > 0 => {
                self.overlays.modal = Some(Modal::RestartAll)
            }
            KeyCode::Char('R') => return self.restart_all(),
            KeyCode::Char('L') => return self.open_ledger(),
            _ if panes::typing(self.focus, self) => {}
            _ => return panes::key(self.focus, self, key).unwrap_or_default(),
        }
        Vec::new()
    }

    /// `R`, asked and answered: every server again. The agent's turn in flight is cancelled
    /// first, so that it ends at the cancel instead of asking its model again with the calls
    /// cut off and the tools gone.
    ///
    /// Over `attach` every server of every daemon is restarted as `r` restarts one: each from
    /// its entry in its daemon's file as it is now (a daemon runs the servers of the file it
    /// started with; the console's own runtime starts again from its whole file).
    pub(super) fn restart_all(&mut self) -> Vec<Effect> {
        let mut effects = if self.chat.busy() {
            self.cancel_turn()
        } else {
            Vec::new()
        };
        if self.attachment().is_some() {
            let servers: Vec<String> = self.servers.iter().map(|s| s.name.clone()).collect();
            effects.extend(servers.into_iter().map(|s| self.restart_server(s, 'R')));
        } else {
            effects.push(Effect::RestartAll);
        }
        effects
    }

    /// `server` started again, asked with `key`: its tools' traits noted first, so that those
    /// the restart changes are marked `*`, and the ask said.
    pub(super) fn restart_server(&mut self, server: String, key: char) -> Effect {
        let before = traits_by_name(
            self.tools
                .iter()
                .filter(|t| t.server.as_deref() == Some(server.as_str())),
        );
        self.session.previous_traits.extend(before);
        self.notify(Level::Info, format!("restarting {server}…"));
        self.event(
            &server,
            EventKind::Supervisor,
            format!("restart asked by the operator ({key})"),
        );
        Effect::RestartServer { server }
    }

    /// The pane a digit picks: 1–7 Servers … Prompts, 8 the Conversation (with an agent).
    fn digit_pane(&self, code: KeyCode) -> Option<Pane> {
        let KeyCode::Char(c @ '1'..='8') = code else {
            return None;
        };
        let pane = *Pane::ALL.get(c as usize - '1' as usize)?;
        panes::present(pane, self).then_some(pane)
    }

    /// Quits, or asks first when quitting would cancel something or lose what was typed:
    /// calls running, the agent at work, a prompt being written.
    fn ask_quit(&mut self) -> Vec<Effect> {
        // Detaching from a daemon (`attach`) cancels nothing: only what was typed is at stake.
        let at_work = self.attachment().is_none() && (self.calls.running() > 0 || self.chat.busy());
        let at_stake = at_work || !self.chat.input.is_blank();
        if at_stake && !self.overlays.quit_asked {
            self.overlays.quit_asked = true;
            return Vec::new();
        }
        self.quit = true;
        vec![Effect::Quit]
    }

    /// Tab / Shift-Tab. On the large layout, among the panes on screen: of those that share
    /// a place as tabs only the one showing, so Tab from the Conversation reaches Calls with
    /// the conversation still in view (their digits switch it).
    fn cycle_focus(&mut self, step: usize) {
        let mut i = Pane::ALL.iter().position(|p| *p == self.focus).unwrap_or(0);
        loop {
            i = (i + step) % Pane::ALL.len();
            let pane = Pane::ALL[i];
            if !panes::present(pane, self) {
                continue;
            }
            if self.placement.large.get()
                && panes::tabbed(pane)
                && pane != self.placement.lower_left
            {
                continue;
            }
            break;
        }
        self.set_focus(Pane::ALL[i]);
    }

    /// Focuses `pane`; the panes that share a place in the large layout as tabs show there the
    /// last one focused.
    pub(super) fn set_focus(&mut self, pane: Pane) {
        if pane != self.focus {
            panes::left(self.focus, self);
        }
        self.focus = pane;
        if panes::tabbed(pane) {
            self.placement.lower_left = pane;
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
