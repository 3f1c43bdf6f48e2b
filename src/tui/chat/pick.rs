//! `@` and `/` in the Conversation's input, as Claude Code has them: `@` where a word starts
//! opens a picker of the servers' resources (the Resources pane's rows) and attaches the one
//! picked to the prompt being written (its text is read and included when it is sent); `/` in
//! an empty box opens a picker of the servers' prompts, then the prompt's argument form (the
//! Prompts pane's), and sends it: its messages join the conversation and the model answers.
//! Typing filters the list; Esc closes it and types the `@` or `/` itself, and so do a space
//! right after the key and Enter when nothing matches (what was typed is never lost).
//!
//! Separate from `keys.rs` because it is one flow with its own state and its own overlay.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::agent::attach::{Attachment, PromptUse};
use crate::tui::app::App;
use crate::tui::commands::Context;
use crate::tui::hints;
use crate::tui::listing::RowKind;
use crate::tui::messages::{Effect, Level};
use crate::tui::modals::{centered, choices_line};
use crate::tui::overlay::Layer;
use crate::tui::widgets::{fit, keys_line};

/// What the picker lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickKind {
    /// Resources to attach (`@`).
    Resource,
    /// Server prompts to run (`/`).
    Prompt,
}

impl PickKind {
    fn key(self) -> char {
        match self {
            PickKind::Resource => '@',
            PickKind::Prompt => '/',
        }
    }
}

/// The picker's state.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentPicker {
    pub kind: PickKind,
    /// What was typed after the `@` or `/`.
    pub filter: String,
    pub selected: usize,
}

/// The Conversation's own commands, first in the `/` picker: name and what it does.
pub const COMMANDS: [(&str, &str); 2] = [
    (
        "/compact",
        "summarise the conversation so far (the transcript keeps every turn)",
    ),
    (
        "/usage",
        "what the next request carries: system prompt, tools by server, history",
    ),
];

/// One entry of the picker: its label (sanitized) and which row of the pane it is (or which
/// of the Conversation's own commands).
#[derive(Debug, Clone, PartialEq)]
pub struct PickItem {
    pub label: String,
    pub detail: String,
    pub row: usize,
    pub command: Option<&'static str>,
}

impl App {
    pub(in crate::tui) fn open_content_picker(&mut self, kind: PickKind) {
        self.chat.content_picker = Some(ContentPicker {
            kind,
            filter: String::new(),
            selected: 0,
        });
    }

    /// The entries the picker shows now (those matching the filter).
    pub fn pick_items(&self) -> Vec<PickItem> {
        let Some(picker) = &self.chat.content_picker else {
            return Vec::new();
        };
        let filter = picker.filter.to_lowercase();
        let matches = |texts: &[&str]| {
            filter.is_empty() || texts.iter().any(|t| t.to_lowercase().contains(&filter))
        };
        match picker.kind {
            PickKind::Resource => self
                .panes
                .resources
                .rows
                .iter()
                .enumerate()
                // A template needs its arguments: read it from the Resources pane instead.
                .filter(|(_, r)| r.kind == RowKind::Resource)
                .filter(|(_, r)| matches(&[&r.name, &r.shown_uri, &r.server]))
                .map(|(i, r)| PickItem {
                    label: format!("@{}", r.name),
                    detail: format!("{} · {} · {}", r.server, r.shown_uri, r.mime),
                    row: i,
                    command: None,
                })
                .collect(),
            PickKind::Prompt => COMMANDS
                .iter()
                .filter(|(name, _)| matches(&[*name]))
                .map(|(name, what)| PickItem {
                    label: (*name).to_string(),
                    detail: format!("the Conversation's own · {what}"),
                    row: 0,
                    command: Some(name),
                })
                .chain(
                    self.panes
                        .prompts
                        .rows
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| matches(&[&p.shown_name, &p.server, &p.description]))
                        .map(|(i, p)| PickItem {
                            label: format!("/{}", p.shown_name),
                            detail: format!(
                                "{} · {}{}",
                                p.server,
                                p.description,
                                if p.arguments.is_empty() {
                                    String::new()
                                } else {
                                    let n = p.arguments.len();
                                    format!(" ({n} argument{})", if n == 1 { "" } else { "s" })
                                }
                            ),
                            row: i,
                            command: None,
                        }),
                )
                .collect(),
        }
    }

    /// A key while the picker is open.
    pub(in crate::tui) fn content_picker_key(
        &mut self,
        key: KeyEvent,
        ctrl_c: bool,
    ) -> Vec<Effect> {
        let Some(picker) = self.chat.content_picker.clone() else {
            return Vec::new();
        };
        let count = self.pick_items().len();
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let set = |app: &mut App, picker: ContentPicker| app.chat.content_picker = Some(picker);
        match key.code {
            _ if ctrl_c => self.chat.content_picker = None,
            KeyCode::Esc => {
                // The key typed itself, as if there were no picker.
                self.chat.content_picker = None;
                self.chat.input.insert(picker.kind.key());
                self.chat.input.insert_str(&picker.filter);
            }
            KeyCode::Up => set(
                self,
                ContentPicker {
                    selected: picker.selected.saturating_sub(1),
                    ..picker
                },
            ),
            KeyCode::Down => set(
                self,
                ContentPicker {
                    selected: (picker.selected + 1).min(count.saturating_sub(1)),
                    ..picker
                },
            ),
            KeyCode::Backspace => {
                let mut filter = picker.filter.clone();
                if filter.pop().is_none() {
                    self.chat.content_picker = None;
                } else {
                    set(
                        self,
                        ContentPicker {
                            filter,
                            selected: 0,
                            ..picker
                        },
                    );
                }
            }
            // `@` or `/` then a space is text (`meet @ 5pm`), not a search.
            KeyCode::Char(' ') if picker.filter.is_empty() => {
                self.chat.content_picker = None;
                self.chat.input.insert(picker.kind.key());
                self.chat.input.insert(' ');
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() => {
                let mut filter = picker.filter.clone();
                filter.push(c);
                set(
                    self,
                    ContentPicker {
                        filter,
                        selected: 0,
                        ..picker
                    },
                );
            }
            KeyCode::Enter => {
                let item = self.pick_items().get(picker.selected).cloned();
                self.chat.content_picker = None;
                match item {
                    Some(PickItem {
                        command: Some(command),
                        ..
                    }) => {
                        // Sent as typed: the agent task knows its own commands.
                        self.chat.input.insert_str(command);
                        return self.send_to_agent(None);
                    }
                    Some(item) => return self.picked(picker.kind, item.row),
                    // Nothing matches: what was typed goes back into the box, not lost.
                    None => {
                        self.chat.input.insert(picker.kind.key());
                        self.chat.input.insert_str(&picker.filter);
                    }
                }
            }
            _ => {}
        }
        Vec::new()
    }

    /// An entry was picked: a resource is attached; a prompt is sent (after its form when it
    /// has arguments).
    fn picked(&mut self, kind: PickKind, row: usize) -> Vec<Effect> {
        match kind {
            PickKind::Resource => {
                if let Some(r) = self.panes.resources.rows.get(row) {
                    let attachment = Attachment {
                        server: r.server.clone(),
                        uri: r.uri.clone(),
                        name: r.name.clone(),
                    };
                    if !self.chat.attachments.contains(&attachment) {
                        self.chat.attachments.push(attachment);
                    }
                }
                Vec::new()
            }
            PickKind::Prompt => {
                let Some(p) = self.panes.prompts.rows.get(row).cloned() else {
                    return Vec::new();
                };
                if self.chat.busy() {
                    self.notify(
                        Level::Warn,
                        "a prompt is in flight: wait for it, or Esc cancels it",
                    );
                    return Vec::new();
                }
                if p.arguments.is_empty() {
                    return self.send_to_agent(Some(PromptUse {
                        server: p.server,
                        name: p.name,
                        arguments: Default::default(),
                    }));
                }
                self.prompt_form(p, true)
            }
        }
    }
}

/// The picker over the Conversation pane.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let Some(picker) = &app.chat.content_picker else {
        return;
    };
    let theme = app.theme;
    let items = app.pick_items();
    let rect = centered(area, 70, 50, 76.min(area.width), 12.min(area.height));
    frame.render_widget(Clear, rect);
    let title = match picker.kind {
        PickKind::Resource => " Attach a resource (@) ",
        PickKind::Prompt => " Run a server prompt (/) ",
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.focus_border())
        .title(title);
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let width = inner.width as usize;
    let mut lines = vec![Line::styled(
        fit(
            &format!(
                "{}{}▏ {} of {}",
                picker.kind.key(),
                crate::text::sanitize_line(&picker.filter, 60),
                items.len(),
                match picker.kind {
                    PickKind::Resource => app
                        .panes
                        .resources
                        .rows
                        .iter()
                        .filter(|r| r.kind == RowKind::Resource)
                        .count(),
                    PickKind::Prompt => app.panes.prompts.rows.len() + COMMANDS.len(),
                }
            ),
            width,
        ),
        theme.bold(),
    )];
    if items.is_empty() {
        lines.push(Line::styled(
            match picker.kind {
                PickKind::Resource => "No resource matches (the Resources pane lists them).",
                PickKind::Prompt => "No prompt matches (the Prompts pane lists them).",
            },
            theme.dim(),
        ));
    }
    let room = (inner.height as usize).saturating_sub(2);
    let top = picker.selected.saturating_sub(room.saturating_sub(1));
    for (i, item) in items.iter().enumerate().skip(top).take(room) {
        let style = if i == picker.selected {
            theme.selected()
        } else {
            Style::default()
        };
        // Labels and details are built from the panes' sanitized copies.
        lines.push(Line::styled(
            fit(&format!("{}  {}", item.label, item.detail), width),
            style,
        ));
    }
    frame.render_widget(Paragraph::new(lines), inner);
    choices_line(
        frame,
        inner,
        keys_line(
            &hints::keys_of(Context::Overlay(Layer::ContentPicker)),
            theme,
        ),
    );
}
