//! The footer: the keys that work right now, and the last notice.

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::runtime::ElicitationMode;
use crate::tui::app::{App, Level, Pane};
use crate::tui::modals::Modal;

fn keys(app: &App) -> Vec<(&'static str, &'static str)> {
    if let Some(request) = app.approvals.front() {
        if app.approval_confirm {
            return vec![("y", "always allow"), ("n/Esc", "back")];
        }
        let mut k = vec![("y", "allow once")];
        if request.session_approval_allowed() {
            k.push(("a", "allow for session"));
        }
        k.extend([("A", "always"), ("n/Esc", "deny"), ("↑↓", "scroll")]);
        return k;
    }
    if let Some(first) = app.elicitations.front() {
        return match (&first.mode, &app.elicitation_form) {
            (ElicitationMode::Form { .. }, Some(form)) => form.keys(),
            (ElicitationMode::Form { .. }, None) | (ElicitationMode::Url { .. }, _) => {
                crate::tui::modals::elicitation::url_keys()
            }
        };
    }
    if let Some(first) = app.samplings.front() {
        return crate::tui::modals::sampling::keys(first);
    }
    match &app.modal {
        Some(Modal::Resource(view)) => return view.keys(),
        Some(Modal::Form(form)) => return form.keys(),
        Some(Modal::Prompt(_) | Modal::Instructions(_)) => {
            return vec![("↑↓/PgUp/PgDn", "scroll"), ("Esc", "close")];
        }
        Some(Modal::Editor(_)) => return vec![("Ctrl-S", "send"), ("Esc", "cancel")],
        Some(Modal::Trust(_)) => return vec![("y/Enter", "write"), ("n/Esc", "cancel")],
        Some(Modal::Quit) => return vec![("y", "quit"), ("n/Esc", "stay")],
        Some(Modal::Ledger { .. }) => {
            return vec![("d", "revoke"), ("↑↓", "move"), ("Esc", "close")]
        }
        Some(Modal::Help { .. }) | Some(Modal::Result { .. }) => {
            return vec![("↑↓", "scroll"), ("Esc", "close")];
        }
        None => {}
    }
    if app.chat.picker.is_some() {
        return vec![("Enter", "use"), ("↑↓", "move"), ("Esc", "close")];
    }
    if app.chat.content_picker.is_some() {
        return vec![
            ("Enter", "pick"),
            ("↑↓", "move"),
            ("type", "filter"),
            ("Esc", "close"),
        ];
    }
    if app.filter_editing {
        return vec![("Enter", "keep filter"), ("Esc", "clear")];
    }
    if app.focus == Pane::Conversation {
        return super::conversation::footer_keys(app);
    }
    let mut k = match app.focus {
        Pane::Servers => vec![
            ("t", "trust"),
            ("r", "restart"),
            ("R", "all"),
            ("l", "log level"),
            ("i", "instructions"),
        ],
        // `i` works here too; the pane says so beside the instructions.
        Pane::Details => vec![("PgUp/PgDn", "stderr"), ("r", "restart"), ("o", "login")],
        Pane::Resources => vec![("Enter", "read"), ("s", "subscribe")],
        Pane::Prompts => vec![("Enter", "get")],
        Pane::Tools => vec![("Enter", "call"), ("/", "filter")],
        Pane::Calls => vec![("Enter", "result"), ("c", "cancel")],
        Pane::Events => vec![("↑↓", "scroll"), ("End", "follow")],
        Pane::Conversation => Vec::new(),
    };
    k.extend([
        (
            if app.chat.configured() {
                "Tab/1-8"
            } else {
                "Tab/1-7"
            },
            "pane",
        ),
        ("L", "approvals"),
        ("?", "help"),
        ("q", "quit"),
    ]);
    k
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    frame.render_widget(
        Paragraph::new(super::keys_line(&keys(app), app.theme)),
        area,
    );
}

/// The notice line above the footer (empty when there is none).
pub fn render_notice(app: &App, frame: &mut Frame, area: Rect) {
    let theme = app.theme;
    let Some((level, text)) = &app.notice else {
        return;
    };
    let style = match level {
        Level::Info => theme.dim(),
        Level::Warn => theme.warn(),
        Level::Error => theme.bad(),
    };
    frame.render_widget(
        Paragraph::new(Line::styled(super::fit(text, area.width as usize), style)),
        area,
    );
}
