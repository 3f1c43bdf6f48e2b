//! The panes, each a component (`component.rs`) in a file of its own that holds the whole of
//! it: what its keys do, what it says of them (its commands: the footer, the help and the key
//! test read them), and its drawing. Its own state (selection, scroll, filter) is in
//! `pane_state.rs`, where `App` holds it. The registry below is where a pane is registered;
//! the functions after it are the one place that asks a pane by its `Pane`.

pub mod calls;
pub mod component;
pub mod conversation;
pub mod details;
pub mod events;
pub mod hosts;
pub mod prompts;
pub mod resources;
pub mod servers;
pub mod tools;
mod waterfall;

use crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::Frame;

use self::component::Component;
use super::app::App;
use super::commands::Command;
use super::messages::Effect;
use super::pane_state::Pane;

/// Writes `registry!(pane, C => body)`: the one `match` that each function below is, with `C`
/// the pane's component in each arm.
macro_rules! components {
    ($d:tt $($variant:ident => $component:ty,)*) => {
        macro_rules! registry {
            ($d pane:expr, $d c:ident => $d body:expr) => {
                match $d pane {
                    $(Pane::$variant => {
                        type $d c = $component;
                        $d body
                    })*
                }
            };
        }
    };
}

// The registry: each pane's `Pane` variant and its component, in the order of Tab and of the
// keys 1–8. A new pane is its file, its `mod` line above and a line here (and its variant in
// `Pane`, its state in `Panes` if it keeps any).
components! { $
    Servers => self::servers::Servers,
    Details => self::details::Details,
    Tools => self::tools::Tools,
    Calls => self::calls::Calls,
    Events => self::events::Events,
    Resources => self::resources::Resources,
    Prompts => self::prompts::Prompts,
    Conversation => self::conversation::Conversation,
}

pub fn title(pane: Pane) -> &'static str {
    registry!(pane, C => C::TITLE)
}

pub fn short_title(pane: Pane) -> &'static str {
    registry!(pane, C => C::SHORT_TITLE)
}

pub fn help_title(pane: Pane) -> &'static str {
    registry!(pane, C => C::HELP_TITLE)
}

pub fn commands(pane: Pane) -> &'static [Command] {
    registry!(pane, C => C::COMMANDS)
}

pub fn tabbed(pane: Pane) -> bool {
    registry!(pane, C => C::TABBED)
}

pub fn leads_tabs(pane: Pane) -> bool {
    registry!(pane, C => C::LEADS_TABS)
}

pub fn types(pane: Pane) -> bool {
    registry!(pane, C => C::TYPES)
}

pub fn present(pane: Pane, app: &App) -> bool {
    registry!(pane, C => C::present(app))
}

pub fn typing(pane: Pane, app: &App) -> bool {
    registry!(pane, C => C::typing(app))
}

pub fn key(pane: Pane, app: &mut App, key: KeyEvent) -> Option<Vec<Effect>> {
    registry!(pane, C => C::key(app, key))
}

pub fn left(pane: Pane, app: &mut App) {
    registry!(pane, C => C::left(app))
}

pub fn step(pane: Pane, app: &mut App, delta: isize) {
    registry!(pane, C => C::step(app, delta))
}

pub fn page(pane: Pane, app: &mut App, dir: isize) {
    registry!(pane, C => C::page(app, dir))
}

pub fn draw(pane: Pane, app: &App, frame: &mut Frame, area: Rect, focused: bool) {
    registry!(pane, C => C::draw(app, frame, area, focused))
}
