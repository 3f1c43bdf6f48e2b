//! The footer: the keys that work right now, and the last notice.

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::config::TransportKind;
use crate::runtime::ElicitationMode;
use crate::tui::app::{App, Level, Pane};
use crate::tui::content::RowKind;
use crate::tui::modals::Modal;
use crate::tui::state::ServerRow;

type Keys = Vec<(&'static str, &'static str)>;

/// The keys that work now: those of what is on screen, then (for a pane) the global ones.
fn keys(app: &App) -> (Keys, Keys) {
    let k = own_keys(app);
    match k {
        Ok(pane) => (pane, global_keys(app)),
        Err(modal) => (modal, Vec::new()),
    }
}

/// The keys of the modal or filter on screen (`Err`), else of the focused pane (`Ok`).
fn own_keys(app: &App) -> Result<Keys, Keys> {
    let k = modal_keys(app);
    if !k.is_empty() {
        return Err(k);
    }
    Ok(pane_keys(app))
}

fn modal_keys(app: &App) -> Keys {
    if let Some(request) = app.approvals.front() {
        if app.approval_confirm {
            return vec![("y", "always allow"), ("n/Esc", "back")];
        }
        // Deny next to allow: a footer too narrow for every key cuts from the end.
        let mut k = vec![("y", "allow once"), ("n/Esc", "deny")];
        if request.session_approval_allowed() {
            k.push(("a", "allow for session"));
        }
        k.push(("A", "always"));
        if app.scroll_limit.get() > 0 {
            k.push(("↑↓", "scroll"));
        }
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
        Some(Modal::Prompt(_) | Modal::Instructions(_) | Modal::Text(_)) => {
            return vec![("↑↓/PgUp/PgDn", "scroll"), ("Esc", "close")];
        }
        Some(Modal::Editor(editor)) => return editor.keys(),
        Some(Modal::Trust(_)) => {
            let mut k = vec![("y/Enter", "write"), ("n/Esc", "cancel")];
            if app.scroll_limit.get() > 0 {
                k.push(("↑↓/PgUp/PgDn", "scroll"));
            }
            return k;
        }
        Some(Modal::Quit) => return vec![("y", "quit"), ("n/Esc", "stay")],
        Some(Modal::RestartAll) => return vec![("y", "restart all"), ("n/Esc", "back")],
        Some(Modal::Ledger { .. }) => {
            return vec![("d", "revoke"), ("↑↓", "move"), ("Esc", "close")]
        }
        Some(Modal::Help { .. }) | Some(Modal::Result { .. }) => {
            return if app.scroll_limit.get() > 0 {
                vec![("↑↓", "scroll"), ("Esc", "close")]
            } else {
                vec![("Esc", "close")]
            };
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
            ("Esc", "as text"),
        ];
    }
    if app.filter_editing {
        return vec![("Enter", "keep filter"), ("Esc", "clear")];
    }
    Vec::new()
}

/// The focused pane's keys, each only where it applies to the selected row (a key that would
/// only answer "not for this one" is not offered).
fn pane_keys(app: &App) -> Keys {
    match app.focus {
        Pane::Conversation => super::conversation::footer_keys(app),
        Pane::Servers => {
            let server = app.selected_server();
            let mut k = vec![
                ("t", "trust"),
                ("r", "restart"),
                ("R", "all"),
                ("c", "command"),
            ];
            if server.is_some_and(|s| s.cannot_log().is_none()) {
                k.push(("l", "log level"));
            }
            if server.is_some_and(ServerRow::has_instructions) {
                k.push(("i", "instructions"));
            }
            k
        }
        // `i` works here too; the pane says so beside the instructions.
        Pane::Details => {
            let server = app.selected_server();
            let mut k = Vec::new();
            if server.is_some_and(|s| s.transport == TransportKind::Stdio) {
                k.push(("PgUp/PgDn", "stderr"));
            }
            k.extend([("r", "restart"), ("c", "command")]);
            if server.is_some_and(ServerRow::has_instructions) {
                k.push(("i", "instructions"));
            }
            if server.is_some_and(|s| s.cannot_log().is_none()) {
                k.push(("l", "log level"));
            }
            if server.is_some_and(ServerRow::can_login) {
                k.push(("o", "login"));
            }
            // Last: the pane says it where it cuts the summary.
            k.push(("Enter", "view all"));
            k
        }
        Pane::Resources => match app.resources.selected_row() {
            Some(row) if row.kind == RowKind::Template => vec![("Enter", "fill in and read")],
            Some(row) if row.subscribed => vec![("Enter", "read"), ("s", "unsubscribe")],
            Some(_) => vec![("Enter", "read"), ("s", "subscribe")],
            None => Vec::new(),
        },
        Pane::Prompts => vec![("Enter", "get")],
        Pane::Tools => vec![("Enter", "call"), ("d", "describe"), ("/", "filter")],
        Pane::Calls => match app.calls.rows.get(app.call_sel) {
            Some(row) if row.cancellable() => vec![("Enter", "result"), ("c", "cancel")],
            Some(_) => vec![("Enter", "result")],
            None => Vec::new(),
        },
        Pane::Events => {
            let mut k = vec![("Enter", "whole line"), ("↑↓", "scroll")];
            if app.event_sel.is_some() {
                k.push(("End", "follow"));
            }
            k
        }
    }
}

fn global_keys(app: &App) -> Keys {
    if app.focus == Pane::Conversation {
        // Those that work while typing.
        return super::conversation::global_keys();
    }
    vec![
        (
            if app.chat.configured() {
                "Tab/1-8"
            } else {
                "Tab/1-7"
            },
            "pane",
        ),
        ("L", "approvals"),
        ("q", "quit"),
        ("?", "help"),
    ]
}

/// The footer on the bottom line, `area`; with no notice to show, the line above it (`spare`)
/// takes the focused pane's keys and the bottom line the global ones, so that neither line is
/// blank and more keys show.
pub fn render(app: &App, frame: &mut Frame, spare: Rect, area: Rect) {
    let width = usize::from(area.width);
    let (own, global) = keys(app);
    if app.notice.is_none() && !global.is_empty() && !own.is_empty() {
        frame.render_widget(
            Paragraph::new(super::keys_line(&fitted(own, width), app.theme)),
            spare,
        );
        frame.render_widget(
            Paragraph::new(super::keys_line(&fitted(global, width), app.theme)),
            area,
        );
        return;
    }
    let all: Keys = own.into_iter().chain(global).collect();
    frame.render_widget(
        Paragraph::new(super::keys_line(&fitted(all, width), app.theme)),
        area,
    );
}

/// The keys that fit in `width` columns, whole: `? help` always (last), the others in order of
/// importance (the list's order) as long as they fit.
fn fitted(
    keys: Vec<(&'static str, &'static str)>,
    width: usize,
) -> Vec<(&'static str, &'static str)> {
    let len = |(k, w): &(&str, &str)| k.chars().count() + 1 + w.chars().count();
    let help = keys.iter().find(|(k, _)| *k == "?").copied();
    let mut used = help.as_ref().map_or(0, |h| len(h) + 2);
    let mut out = Vec::new();
    for key in keys.into_iter().filter(|(k, _)| *k != "?") {
        let need = len(&key) + 2;
        if used + need > width + 2 {
            continue;
        }
        used += need;
        out.push(key);
    }
    out.extend(help);
    out
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
