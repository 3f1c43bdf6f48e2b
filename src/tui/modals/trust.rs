//! The trust toggle's preview: which tools change side effect or destructiveness if the server's
//! annotations are trusted (or ignored), before anything is written to the config file. The list
//! scrolls (↑↓ PgUp PgDn Home End); the line naming the file to be written stays in view below it.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::config::AnnotationTrust;
use crate::runtime::TraitChange;
use crate::tool::{DestructiveBehavior, SideEffectLevel};
use crate::tui::theme::Theme;
use crate::tui::widgets::keys_line;

/// The preview of one trust change.
#[derive(Debug, Clone, PartialEq)]
pub struct TrustPreview {
    pub server: String,
    pub from: AnnotationTrust,
    pub to: AnnotationTrust,
    pub changes: Vec<TraitChange>,
    /// How many tools the server has listed (0 when it is not running).
    pub tools: usize,
    /// Lines scrolled in the list of changes.
    pub scroll: u16,
}

impl TrustPreview {
    /// Scrolls the list for a scrolling key; false for any other key.
    pub fn scroll_key(&mut self, code: crossterm::event::KeyCode) -> bool {
        use crossterm::event::KeyCode;
        // Two lines per change and a few more: never past the end.
        let last = (self.changes.len() as u16 * 2 + 3).saturating_sub(1);
        self.scroll = match code {
            KeyCode::Up | KeyCode::Char('k') => self.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll.saturating_add(1).min(last),
            KeyCode::PageUp => self.scroll.saturating_sub(PAGE),
            KeyCode::PageDown => self.scroll.saturating_add(PAGE).min(last),
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => last,
            _ => return false,
        };
        true
    }
}

/// Lines a page key scrolls.
const PAGE: u16 = 8;

/// `MUTATING, destructive` and the like.
pub fn traits_label(traits: (SideEffectLevel, DestructiveBehavior)) -> String {
    let level = match traits.0 {
        SideEffectLevel::ReadOnly => "read-only",
        SideEffectLevel::Mutating => "MUTATING",
    };
    match traits.1 {
        DestructiveBehavior::Destructive => format!("{level}, destructive"),
        DestructiveBehavior::NonDestructive => level.to_string(),
    }
}

pub fn render(
    frame: &mut Frame,
    area: Rect,
    preview: &TrustPreview,
    config: &str,
    theme: Theme,
) -> u16 {
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.focus_border())
        .title(format!(
            " Trust: {}  {} → {} ",
            preview.server,
            preview.from.as_str(),
            preview.to.as_str()
        ));
    let mut lines = Vec::new();
    if preview.tools == 0 {
        lines.push(Line::raw(
            "The server lists no tools now; the new trust applies to whatever it lists after a restart.",
        ));
    } else if preview.changes.is_empty() {
        lines.push(Line::raw(format!(
            "None of its {} tools change side effect or destructiveness.",
            preview.tools
        )));
    } else {
        lines.push(Line::raw(format!(
            "{} of its {} tools change:",
            preview.changes.len(),
            preview.tools
        )));
        for c in &preview.changes {
            let safer =
                c.after.0 == SideEffectLevel::ReadOnly && c.before.0 == SideEffectLevel::Mutating;
            let style = if safer { theme.warn() } else { theme.ok() };
            lines.push(Line::from(vec![
                Span::raw(format!("  {}  ", c.tool)),
                Span::raw(traits_label(c.before)),
                Span::raw(" → "),
                Span::styled(traits_label(c.after), style),
            ]));
            lines.push(Line::styled(format!("      {}", c.provenance), theme.dim()));
        }
    }
    // Below the list, always in view: what trusting means, what is written where, and when
    // it applies.
    let mut foot = Vec::new();
    if preview.to == AnnotationTrust::Trust {
        foot.push(Line::styled(
            "Trusting lets the server's own claims decide: a tool that says readOnlyHint runs without asking.",
            theme.warn(),
        ));
    }
    foot.extend([
        Line::raw(format!(
            "Writes annotation_trust: {} for {} into {config} (the rest of the file is kept as is).",
            preview.to.as_str(),
            preview.server
        )),
        Line::raw("It takes effect when the server restarts (r, or R for all)."),
    ]);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width.max(1);
    let foot = super::wrap_styled(foot, width);
    let foot_h = u16::try_from(foot.len())
        .unwrap_or(u16::MAX)
        .min(inner.height.saturating_sub(2));
    let body_h = inner.height.saturating_sub(foot_h + 1);
    let lines = super::wrap_styled(lines, width);
    let total = lines.len() as u16;
    let body = Paragraph::new(lines);
    let max_scroll = total.saturating_sub(body_h);
    let scroll = preview.scroll.min(max_scroll);
    frame.render_widget(
        body.scroll((scroll, 0)),
        Rect {
            height: body_h,
            ..inner
        },
    );
    frame.render_widget(
        Paragraph::new(foot),
        Rect {
            y: inner.y + body_h,
            height: foot_h,
            ..inner
        },
    );
    let mut keys = vec![("y/Enter", "write"), ("n/Esc", "cancel")];
    let more;
    if max_scroll > 0 {
        more = format!(
            "scroll (lines {}–{} of {total})",
            scroll + 1,
            (scroll + body_h).min(total)
        );
        keys.push(("↑↓/PgUp/PgDn", more.as_str()));
    }
    super::choices_line(frame, inner, keys_line(&keys, theme));
    max_scroll
}
