//! Styles: ANSI colours only (readable on any theme), none at all under `NO_COLOR`.

use ratatui::style::{Color, Modifier, Style};

/// The console's styles, resolved once at start-up.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    color: bool,
}

impl Theme {
    /// Colour unless `NO_COLOR` is set.
    pub fn from_env() -> Theme {
        Theme {
            color: std::env::var_os("NO_COLOR").is_none(),
        }
    }

    /// A theme without colour (tests, `NO_COLOR`).
    pub fn plain() -> Theme {
        Theme { color: false }
    }

    fn fg(self, color: Color) -> Style {
        if self.color {
            Style::default().fg(color)
        } else {
            Style::default()
        }
    }

    pub fn ok(self) -> Style {
        self.fg(Color::Green)
    }
    pub fn bad(self) -> Style {
        self.fg(Color::Red)
    }
    pub fn warn(self) -> Style {
        self.fg(Color::Yellow)
    }
    pub fn accent(self) -> Style {
        self.fg(Color::Cyan)
    }
    pub fn dim(self) -> Style {
        if self.color {
            Style::default().add_modifier(Modifier::DIM)
        } else {
            Style::default()
        }
    }
    pub fn bold(self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }
    /// The selected row of the focused pane.
    pub fn selected(self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
    /// The selected row of a pane without focus.
    pub fn selected_unfocused(self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }
    /// The border of the focused pane.
    pub fn focus_border(self) -> Style {
        self.accent().add_modifier(Modifier::BOLD)
    }
    pub fn key(self) -> Style {
        self.accent().add_modifier(Modifier::BOLD)
    }
}
