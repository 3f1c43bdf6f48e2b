//! A server asks the operator (`elicitation/create`): in form mode the form modal built from
//! the requested schema (accept / decline / cancel, checked before it goes back); in URL mode
//! the URL with what the server said it is for, opened with `xdg-open` on accept. Several
//! requests queue; the count shows. Like an approval, it comes before anything else.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use super::form::{FormEditor, FormPurpose};
use crate::runtime::{ElicitationMode, ElicitationRequest};
use crate::text::{sanitize, sanitize_line};
use crate::tui::commands::Context;
use crate::tui::hints;
use crate::tui::overlay::Layer;
use crate::tui::theme::Theme;
use crate::tui::widgets::keys_line;

/// The title of a request's modal, with the queue count.
fn title(request: &ElicitationRequest, queued: usize) -> String {
    let what = match request.mode {
        ElicitationMode::Form { .. } => "asks for input",
        ElicitationMode::Url { .. } => "asks you to open a URL",
    };
    if queued > 1 {
        format!("{} {what} (1 of {queued})", request.server)
    } else {
        format!("{} {what}", request.server)
    }
}

/// The form of a form request.
pub fn form_for(request: &ElicitationRequest, queued: usize) -> FormEditor {
    FormEditor::new(
        title(request, queued),
        vec![sanitize(&request.message, true)],
        request.fields().to_vec(),
        FormPurpose::Elicitation { id: request.id },
        false,
    )
}

/// Draws a URL request.
pub fn render_url(
    frame: &mut Frame,
    area: Rect,
    request: &ElicitationRequest,
    queued: usize,
    theme: Theme,
) {
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.warn())
        .title(format!(" {} ", title(request, queued)));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let ElicitationMode::Url {
        url,
        elicitation_id,
    } = &request.mode
    else {
        return;
    };
    let mut lines: Vec<Line> = sanitize(&request.message, true)
        .lines()
        .map(|l| Line::raw(l.to_string()))
        .collect();
    lines.push(Line::raw(""));
    lines.push(Line::from(vec![
        Span::styled("url  ", theme.dim()),
        Span::styled(sanitize_line(url, 500), theme.bold()),
    ]));
    if !elicitation_id.is_empty() {
        lines.push(Line::styled(
            format!("id   {}", sanitize_line(elicitation_id, 100)),
            theme.dim(),
        ));
    }
    lines.push(Line::styled(
        "Opening it accepts: the server carries on when its flow is done.",
        theme.dim(),
    ));
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }),
        Rect {
            height: inner.height.saturating_sub(1),
            ..inner
        },
    );
    super::choices_line(
        frame,
        inner,
        keys_line(&hints::keys_of(Context::Overlay(Layer::Elicitation)), theme),
    );
}
