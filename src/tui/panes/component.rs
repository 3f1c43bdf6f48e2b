//! A pane as a component, as gitui's `Component`: its keys, what it says of them, its
//! drawing. Each pane implements it in its own file; `panes/mod.rs` registers them.

use crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::Frame;

use crate::tui::app::App;
use crate::tui::commands::Command;
use crate::tui::messages::Effect;
use crate::tui::widgets::PAGE;

/// A pane. Its functions take the `App`: what is shared, and its own state in `App::panes`.
pub trait Component {
    /// Its title, and a shorter one for a tab strip too narrow for the whole ones.
    const TITLE: &'static str;
    const SHORT_TITLE: &'static str = Self::TITLE;
    /// Its section's title in the help (`?`, F1).
    const HELP_TITLE: &'static str = Self::TITLE;
    /// Its keys, in the order the footer and the help give them.
    const COMMANDS: &'static [Command];
    /// It shares the large layout's lower-left place with the others so marked, as a tab
    /// (Servers, Details, Calls and Events have places of their own).
    const TABBED: bool = false;
    /// It leads the tab strips (the Conversation).
    const LEADS_TABS: bool = false;
    /// It is an input: letters and digits are typed into it, and of the keys that work
    /// anywhere only those that do not type (`Context::WhileTyping`) are left.
    const TYPES: bool = false;

    /// Whether it is there at all (the Conversation: only with an agent).
    fn present(_app: &App) -> bool {
        true
    }
    /// Whether it takes every key first now (an input; the Tools filter line being edited).
    fn typing(_app: &App) -> bool {
        Self::TYPES
    }
    /// A key for it; `None` when it has no use for that key.
    fn key(app: &mut App, key: KeyEvent) -> Option<Vec<Effect>>;
    /// The focus moved to another pane.
    fn left(_app: &mut App) {}
    /// ↑ ↓ j k: `delta` rows.
    fn step(_app: &mut App, _delta: isize) {}
    /// PgUp PgDn: `dir` pages.
    fn page(app: &mut App, dir: isize) {
        for _ in 0..PAGE {
            Self::step(app, dir);
        }
    }
    fn draw(app: &App, frame: &mut Frame, area: Rect, focused: bool);
}
