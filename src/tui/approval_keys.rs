//! The keys of the approval question: `y` once, `a` for the session, `A` always (a rule
//! written to the config file; asked once more for a destructive tool), `n`/Esc deny, the
//! arrows scroll its arguments. Typing meant for something else is kept from answering it
//! (`guard.rs`).

use crossterm::event::{KeyCode, KeyEvent};

use super::app::App;

use super::keys::scrolled;
use super::messages::{Effect, Level};
use crate::approval::{rule_label, ApprovalDecision};
use crate::config::RuleDecision;

impl App {
    /// A key while an approval is on screen: an answer (once the guard takes it), `A`'s
    /// second question, or a scroll of the arguments.
    pub(super) fn approval_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let answers = matches!(
            key.code,
            KeyCode::Char('y' | 'a' | 'A' | 'n') | KeyCode::Esc
        );
        if answers {
            if let Err(why) = self.overlays.guard.answer(self.now) {
                self.notify(Level::Warn, why);
                return Vec::new();
            }
        }
        if self.overlays.approval_confirm {
            // `A` on a destructive tool: asked once more.
            match key.code {
                KeyCode::Char('y') => return self.always_allow(),
                KeyCode::Char('n') | KeyCode::Esc => self.overlays.approval_confirm = false,
                _ => {}
            }
            return Vec::new();
        }
        let decision = match key.code {
            KeyCode::Char('y') => ApprovalDecision::AllowOnce,
            KeyCode::Char('a') => match self.overlays.approvals.front() {
                Some(r) if r.session_approval_allowed() => ApprovalDecision::AllowForSession,
                _ => {
                    self.notify(
                        Level::Warn,
                        "no session approval for destructive tools: y allows once, A always",
                    );
                    return Vec::new();
                }
            },
            KeyCode::Char('A') => return self.ask_always_allow(),
            KeyCode::Char('n') | KeyCode::Esc => ApprovalDecision::Deny,
            code => {
                if let Some(to) = scrolled(
                    self.overlays.approval_scroll,
                    self.overlays.scroll_limit.get(),
                    code,
                ) {
                    self.overlays.approval_scroll = to;
                }
                return Vec::new();
            }
        };
        if let Some(request) = self.overlays.approvals.pop_front() {
            request.respond(decision);
        }
        self.overlays.approval_scroll = 0;
        Vec::new()
    }

    /// `A`: always allow the tool of the approval on screen. Refused when a rule already asks
    /// for it (an allow rule after it would never apply); a destructive tool asks once more.
    fn ask_always_allow(&mut self) -> Vec<Effect> {
        let Some(request) = self.overlays.approvals.front() else {
            return Vec::new();
        };
        let matching = self
            .runtime()
            .and_then(|rt| rt.gate().rule_for(&request.tool));
        // A rule that allows a tool whose definition changed: `A` pins the new one in it.
        let changed = self
            .runtime()
            .is_some_and(|rt| rt.gate().pin_state(&request.tool).is_changed());
        match matching {
            Some((index, rule)) if rule.decision == RuleDecision::Ask => {
                let label = rule_label(index, &rule);
                self.notify(
                    Level::Warn,
                    format!("{label} says ask for this tool, and the first rule that matches decides: edit it in the config file; y allows once"),
                );
                return Vec::new();
            }
            // Written since this question was asked (A on another one): nothing more to write.
            Some((index, rule)) if rule.decision == RuleDecision::Allow && !changed => {
                let label = rule_label(index, &rule);
                if let Some(request) = self.overlays.approvals.pop_front() {
                    request.respond(ApprovalDecision::AllowOnce);
                }
                self.overlays.approval_scroll = 0;
                self.notify(Level::Info, format!("allowed: {label} already allows it"));
                return Vec::new();
            }
            Some(_) | None => {}
        }
        if request.tool.destructive.is_destructive() {
            self.overlays.approval_confirm = true;
            // A notice from before (`a` refused, say) would talk past the question now asked.
            self.notice = None;
            return Vec::new();
        }
        self.always_allow()
    }

    /// Allows this call, and asks the loop to write the rule that allows the tool from now on.
    fn always_allow(&mut self) -> Vec<Effect> {
        self.overlays.approval_confirm = false;
        self.overlays.approval_scroll = 0;
        let Some(request) = self.overlays.approvals.pop_front() else {
            return Vec::new();
        };
        let tool = request.tool.name.clone();
        let pin = request.tool.pin.clone();
        request.respond(ApprovalDecision::AllowAlways);
        self.notify(
            Level::Info,
            format!("allowed; writing the rule that always allows {tool}…"),
        );
        vec![Effect::AlwaysAllow {
            tool,
            pin,
            digest: self.session.config_digest,
        }]
    }
}
