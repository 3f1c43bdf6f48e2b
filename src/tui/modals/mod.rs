//! Modals: the dialogs drawn over the panes. The approval, elicitation and sampling modals are
//! not here in `Modal`: pending approvals, then servers' elicitations, then their sampling
//! requests, queue in the app and always come first.

pub mod approval;
pub mod asked;
pub mod editor;
pub mod elicitation;
pub mod form;
pub mod help;
pub mod ledger;
pub mod result;
pub mod sampling;
pub mod trust;
pub mod viewer;

use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// The dialog open over the panes, if any.
#[derive(Debug)]
pub enum Modal {
    /// `?`: the keys.
    Help { scroll: u16 },
    /// `t`: what trusting (or ignoring) a server's annotations would change, before writing.
    Trust(trust::TrustPreview),
    /// Enter on a tool: the call's arguments.
    Editor(editor::ArgsEditor),
    /// Enter on a call: its whole result.
    Result { call: u64, scroll: u16 },
    /// `q` while calls run.
    Quit,
    /// `L`: the rules of the config file and the approvals remembered for this session.
    Ledger {
        entries: Vec<ledger::LedgerRow>,
        selected: usize,
    },
    /// Enter on a resource: it as read.
    Resource(viewer::ResourceView),
    /// Enter on a template or a prompt: its arguments.
    Form(Box<form::FormEditor>),
    /// A prompt's messages.
    Prompt(viewer::PromptView),
    /// `i` on a server: its instructions.
    Instructions(viewer::TextView),
}

/// A centred rectangle of `percent_x` × `percent_y` of `area`, at least `min_w` × `min_h`.
pub fn centered(area: Rect, percent_x: u16, percent_y: u16, min_w: u16, min_h: u16) -> Rect {
    let w = (area.width * percent_x / 100).max(min_w).min(area.width);
    let h = (area.height * percent_y / 100).max(min_h).min(area.height);
    let [row] = Layout::vertical([Constraint::Length(h)])
        .flex(Flex::Center)
        .areas(area);
    let [rect] = Layout::horizontal([Constraint::Length(w)])
        .flex(Flex::Center)
        .areas(row);
    rect
}

/// The modal's choices (its keys) on the last line of its inside, `inner`.
pub fn choices_line(frame: &mut Frame, inner: Rect, choices: Line) {
    if inner.height > 0 {
        frame.render_widget(
            Paragraph::new(choices),
            Rect {
                y: inner.y + inner.height - 1,
                height: 1,
                ..inner
            },
        );
    }
}
