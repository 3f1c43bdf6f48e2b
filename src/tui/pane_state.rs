//! What each pane remembers for itself (its selection, scroll and filter), apart from the rows
//! it shows, which are shared (`state.rs`, `listing.rs`): the panes' own state, grouped so that
//! `App` holds one field for all of it. Plain state: a pane's keys and drawing read and change
//! it through `App`.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use ratatui::text::Line;
use serde_json::Value;

use super::listing::{PromptsPane, ResourcesPane};

/// The panes, in Tab order (and the order of the keys 1–8). Each is a component
/// (`panes/mod.rs`, where it is registered).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Servers,
    Details,
    Tools,
    Calls,
    Events,
    Resources,
    Prompts,
    /// The agent's conversation (only when an agent is configured).
    Conversation,
}

impl Pane {
    pub const ALL: [Pane; 8] = [
        Pane::Servers,
        Pane::Details,
        Pane::Tools,
        Pane::Calls,
        Pane::Events,
        Pane::Resources,
        Pane::Prompts,
        Pane::Conversation,
    ];
}

/// The Servers pane and its Details.
#[derive(Debug, Default)]
pub struct ServersPane {
    /// The selected server.
    pub selected: usize,
    /// Lines scrolled up from the bottom of the details pane's stderr.
    pub details_scroll: usize,
    /// The stderr lines the details pane showed last frame: a page, and how far it scrolls.
    pub details_shown: Cell<usize>,
    /// The details summary as last wrapped: the width, the lines and the rows they took.
    /// The summary is built each frame (it follows the server); wrapping it again only when
    /// it or the width changed keeps that off the frame.
    pub details_rows: RefCell<(u16, Vec<Line<'static>>, Vec<Line<'static>>)>,
}

/// The Tools pane.
#[derive(Debug, Default)]
pub struct ToolsPane {
    /// The selected row among those the filter shows.
    pub selected: usize,
    /// The filter line (`/`).
    pub filter: String,
    /// The filter line takes the keys.
    pub filter_editing: bool,
    /// The arguments each tool was last called with from the editor, this session.
    pub last_arguments: HashMap<String, Value>,
}

/// The Calls pane.
#[derive(Debug, Default)]
pub struct CallsPane {
    /// The selected call.
    pub selected: usize,
}

/// The Events pane.
#[derive(Debug, Default)]
pub struct EventsPane {
    /// The selected line; `None` follows the newest.
    pub selected: Option<usize>,
}

/// Every pane's own state.
#[derive(Debug, Default)]
pub struct Panes {
    pub servers: ServersPane,
    pub tools: ToolsPane,
    pub calls: CallsPane,
    pub events: EventsPane,
    pub resources: ResourcesPane,
    pub prompts: PromptsPane,
}

/// Where the panes go on screen.
#[derive(Debug)]
pub struct Placement {
    /// Which of Conversation, Tools, Resources and Prompts the large layout shows (the last one
    /// focused).
    pub lower_left: Pane,
    /// The last frame had the large layout: Tab then moves among the panes on screen.
    pub large: Cell<bool>,
}
