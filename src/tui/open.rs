//! What opens a modal over the panes from a key: a server's instructions and how it is
//! started, its whole Details, the whole of an Events line, a tool's description, the ledger of rules and
//! approvals, the trust preview.

use super::app::App;
use super::messages::{Effect, LedgerAsk, Level};
use super::modals::ledger::LedgerRow;
use super::modals::trust::TrustPreview;
use super::modals::viewer::TextView;
use super::modals::Modal;
use crate::approval::PinState;
use crate::config::AnnotationTrust;
use crate::runtime::trust_changes;
use crate::tool::{ToolDescriptor, ToolOrigin};

impl App {
    /// `i`: the selected server's instructions, whole and scrollable.
    pub(super) fn open_instructions(&mut self) {
        let Some(server) = self.selected_server().map(|s| s.name.clone()) else {
            return;
        };
        match self.selected_instructions() {
            Some(text) => {
                self.overlays.modal = Some(Modal::Instructions(TextView::of_text(
                    format!("{server} · instructions"),
                    &text,
                )))
            }
            None => self.notify(Level::Info, format!("{server} gave no instructions")),
        }
    }

    /// Enter on Details: the selected server's whole summary and stderr tail, scrollable (the
    /// pane cuts a long summary on a small screen).
    pub(super) fn open_details(&mut self) {
        if let Some((title, text)) = super::panes::details::whole_text(self) {
            self.overlays.modal = Some(Modal::Text(TextView::of_text(title, &text)));
        }
    }

    /// Enter on an Events line: the whole of it.
    pub(super) fn open_event(&mut self) {
        let len = self.events.rows.len();
        let Some(row) = self
            .panes
            .events
            .selected
            .or(len.checked_sub(1))
            .and_then(|i| self.events.rows.get(i))
        else {
            return;
        };
        let (word, _) = super::panes::events::tag(row.kind, self.theme);
        let from = if row.server.is_empty() {
            "the console".to_string()
        } else {
            row.server.clone()
        };
        let title = format!("{} · {from} · {word}", crate::text::fmt_duration(row.at));
        self.overlays.modal = Some(Modal::Text(TextView::of_text(title, &row.text)));
    }

    /// `d` on a tool: its whole description, traits and input schema.
    pub(super) fn open_tool_about(&mut self) {
        let Some(t) = self
            .visible_tools()
            .get(self.panes.tools.selected)
            .map(|t| (*t).clone())
        else {
            return;
        };
        let mut text = match &t.server {
            Some(server) => format!("{server} calls it {}.\n\n", t.raw),
            None => "A local tool (policy.local_tools).\n\n".to_string(),
        };
        text.push_str(if t.description.is_empty() {
            "(no description)"
        } else {
            &t.description
        });
        if let Some(flags) = &t.flagged {
            text.push_str(&format!(
                "\n\n⚑ flagged: {flags}\n(policy.flagged: it asks before every call, or under deny is refused)"
            ));
        }
        // Whether the definition offered is the one a rule or an approval pinned.
        match &t.pin {
            PinState::Changed { .. } => text.push_str(&format!(
                "\n\n≠ {}\n(its rules and approvals wait: the next call asks, with the diff)",
                t.pin.words()
            )),
            PinState::Pinned { .. } => text.push_str(&format!("\n\n{}", t.pin.words())),
            PinState::Unpinned => {}
        }
        text.push_str(&format!(
            "\n\n{}; why: {}\n\ninput schema:\n{}",
            super::modals::trust::traits_label((t.side_effect, t.destructive)),
            t.provenance,
            serde_json::to_string_pretty(&t.schema).unwrap_or_default()
        ));
        self.overlays.modal = Some(Modal::Text(TextView::of_text(t.name.clone(), &text)));
    }

    /// `L`: the rules of the config file (they last) and the session approvals, each revocable.
    /// Over `attach` they are the daemons': what they said last shows at once, and they are
    /// asked again.
    pub(super) fn open_ledger(&mut self) -> Vec<Effect> {
        self.show_ledger();
        match self.attachment() {
            Some(_) => vec![Effect::Ledger(LedgerAsk::Load)],
            None => Vec::new(),
        }
    }

    /// The ledger modal with what is known now (its selection kept).
    pub(super) fn show_ledger(&mut self) {
        let (entries, asking): (Vec<LedgerRow>, bool) = match (self.attachment(), self.runtime()) {
            (Some(attachment), _) => match attachment.ledger() {
                Some(rows) => (rows, false),
                None => (Vec::new(), true),
            },
            (None, Some(rt)) => {
                let gate = rt.gate();
                let rules =
                    gate.rules()
                        .into_iter()
                        .enumerate()
                        .map(|(index, rule)| LedgerRow::Rule {
                            index,
                            rule,
                            from: None,
                        });
                let session = gate.ledger().into_iter().map(|e| LedgerRow::Session {
                    fingerprint: e.fingerprint.short(),
                    tool: e.tool_name,
                });
                (rules.chain(session).collect(), false)
            }
            (None, None) => (Vec::new(), false),
        };
        let selected = match &self.overlays.modal {
            Some(Modal::Ledger { selected, .. }) => {
                (*selected).min(entries.len().saturating_sub(1))
            }
            _ => 0,
        };
        self.overlays.modal = Some(Modal::Ledger {
            entries,
            selected,
            asking,
        });
    }

    /// `t`: the preview of toggling the selected server's trust, computed from the tools as
    /// listed (through the same `resolve` the registry used).
    pub(super) fn open_trust_preview(&mut self) {
        let Some(server) = self.selected_server() else {
            return;
        };
        let name = server.name.clone();
        let from = server.restart_pending.unwrap_or(server.trust);
        let to = match from {
            AnnotationTrust::Ignore => AnnotationTrust::Trust,
            AnnotationTrust::Trust => AnnotationTrust::Ignore,
        };
        let descriptors: Vec<ToolDescriptor> = match self.runtime() {
            Some(rt) => rt.tools(),
            None => Vec::new(),
        };
        let tools = descriptors
            .iter()
            .filter(|d| {
                d.origin
                    .as_ref()
                    .is_some_and(|o: &ToolOrigin| o.server == name)
            })
            .count();
        self.overlays.modal = Some(Modal::Trust(TrustPreview {
            server: name.clone(),
            from,
            to,
            changes: trust_changes(&descriptors, &name, to),
            tools,
            scroll: 0,
        }));
    }

    /// `c` on a server: how it is started, whole, as plain text to copy.
    pub(super) fn open_launch(&mut self) {
        if let Some(s) = self.selected_server() {
            let title = format!("{} · how it is started", s.name);
            let text = s.launch.lines.join("\n");
            self.overlays.modal = Some(Modal::Text(TextView::of_text(title, &text)));
        }
    }
}
