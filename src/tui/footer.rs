//! The footer: the keys that work right now, and the last notice.

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::Frame;

use crate::tui::app::App;
use crate::tui::commands::Context;
use crate::tui::dialog_commands::dialog;
use crate::tui::hints;
use crate::tui::messages::Level;
use crate::tui::widgets::{keys_line, Rows};

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

/// The keys of the view on top, or of the filter line being written.
fn modal_keys(app: &App) -> Keys {
    match app.top_layer() {
        Some(layer) => hints::view_keys(app, layer),
        None => match dialog(app, None) {
            Some(filter) => hints::footer(app, Context::Dialog(filter)),
            None => Vec::new(),
        },
    }
}

/// The focused pane's keys, each only where it applies to the selected row (a key that would
/// only answer "not for this one" is not offered): from the pane's command list.
fn pane_keys(app: &App) -> Keys {
    hints::footer(app, Context::Pane(app.focus))
}

fn global_keys(app: &App) -> Keys {
    let mut keys = hints::footer(app, hints::global_context(app.focus));
    // Without an agent there is no pane 8.
    if !app.chat.configured() {
        for key in keys.iter_mut().filter(|(k, _)| *k == "Tab/1-8") {
            key.0 = "Tab/1-7";
        }
    }
    keys
}

/// The footer on the bottom line, `area`; with no notice to show, the line above it (`spare`)
/// takes the focused pane's keys and the bottom line the global ones, so that neither line is
/// blank and more keys show.
pub fn render(app: &App, frame: &mut Frame, spare: Rect, area: Rect) {
    let width = usize::from(area.width);
    let (own, global) = keys(app);
    if app.notice.is_none() && !global.is_empty() && !own.is_empty() {
        frame.render_widget(Rows(vec![keys_line(&fitted(own, width), app.theme)]), spare);
        frame.render_widget(
            Rows(vec![keys_line(&fitted(global, width), app.theme)]),
            area,
        );
        return;
    }
    let all: Keys = own.into_iter().chain(global).collect();
    frame.render_widget(Rows(vec![keys_line(&fitted(all, width), app.theme)]), area);
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

/// The notice above the footer, on the lines `area` gives it (empty when there is none).
pub fn render_notice(app: &App, frame: &mut Frame, area: Rect, mut rows: Vec<String>) {
    let theme = app.theme;
    let Some((level, _)) = &app.notice else {
        return;
    };
    let style = match level {
        Level::Info => theme.dim(),
        Level::Warn => theme.warn(),
        Level::Error => theme.bad(),
    };
    // `rows`: the notice wrapped at words to `area`'s width (by `render`, which counted them);
    // the last line it has holds the rest, cut.
    let width = usize::from(area.width);
    let room = usize::from(area.height).max(1);
    if rows.len() > room {
        let rest = rows.split_off(room - 1).join(" ");
        rows.push(super::widgets::fit(&rest, width));
    }
    let lines: Vec<Line> = rows.into_iter().map(|r| Line::styled(r, style)).collect();
    frame.render_widget(Rows(lines), area);
}
