//! The trust toggle's preview: which tools change side effect or destructiveness if the server's
//! annotations are trusted (or ignored), before anything is written to the config file.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use crate::config::AnnotationTrust;
use crate::runtime::TraitChange;
use crate::tool::{DestructiveBehavior, SideEffectLevel};
use crate::tui::panes::keys_line;
use crate::tui::theme::Theme;

/// The preview of one trust change.
#[derive(Debug, Clone, PartialEq)]
pub struct TrustPreview {
    pub server: String,
    pub from: AnnotationTrust,
    pub to: AnnotationTrust,
    pub changes: Vec<TraitChange>,
    /// How many tools the server has listed (0 when it is not running).
    pub tools: usize,
}

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

pub fn render(frame: &mut Frame, area: Rect, preview: &TrustPreview, config: &str, theme: Theme) {
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
    if preview.to == AnnotationTrust::Trust {
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            "Trusting lets the server's own claims decide: a tool that says readOnlyHint runs without asking.",
            theme.warn(),
        ));
    }
    lines.push(Line::raw(""));
    lines.push(Line::raw(format!(
        "Writes annotation_trust: {} for {} into {config} (the rest of the file is kept as is).",
        preview.to.as_str(),
        preview.server
    )));
    lines.push(Line::raw(
        "It takes effect when the server restarts (r, or R for all).",
    ));
    let choices = keys_line(&[("y/Enter", "write"), ("n/Esc", "cancel")], theme);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }),
        Rect {
            height: inner.height.saturating_sub(1),
            ..inner
        },
    );
    super::choices_line(frame, inner, choices);
}
