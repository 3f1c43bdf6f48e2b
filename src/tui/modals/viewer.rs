//! Read-only views over the panes: a resource as read (text sanitized and scrollable, drawn a
//! screenful at a time however large; blobs as MIME type and size, `w` saves to a file; `s`
//! subscribes; re-read when the server says it changed), a prompt's messages, and a long text
//! such as a server's instructions.
//!
//! Every string here came from a server: it is sanitized once, when it arrives.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::runtime::{PromptMessages, ResourceContent};
use crate::text::{sanitize, sanitize_line};
use crate::tui::messages::Effect;
use crate::tui::theme::Theme;
use crate::tui::widgets::keys_line;

/// Lines a page key moves before the view was drawn (then: the lines it showed).
const PAGE: usize = 20;

/// Where a fetched view stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Fetch {
    Loading,
    Loaded,
    Failed(String),
}

/// Scrolls `scroll` (a line index) by one key over `total` lines, a page being the `shown`
/// lines of the last frame (none yet: [`PAGE`]); `None` when not a scroll key.
fn scrolled(scroll: usize, total: usize, shown: usize, code: KeyCode) -> Option<usize> {
    let last = total.saturating_sub(1);
    let page = if shown == 0 { PAGE } else { shown };
    Some(match code {
        KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => (scroll + 1).min(last),
        KeyCode::PageUp => scroll.saturating_sub(page),
        KeyCode::PageDown => (scroll + page).min(last),
        KeyCode::Home | KeyCode::Char('g') => 0,
        KeyCode::End | KeyCode::Char('G') => last,
        _ => return None,
    })
}

/// The rows of `lines[scroll..]` that fit in `area`, wrapped between words at its width (only
/// what shows is wrapped: a huge text costs one screenful), and how many of the lines show
/// whole (at least one): the page, and the label's range.
fn shown_rows(lines: &[String], scroll: usize, area: Rect) -> (Vec<Line<'static>>, usize) {
    let width = usize::from(area.width.max(1));
    let height = usize::from(area.height);
    let mut rows: Vec<Line<'static>> = Vec::new();
    let mut whole = 0;
    for line in lines.iter().skip(scroll) {
        if rows.len() >= height {
            break;
        }
        // Every character kept (wide ones count two cells).
        for (_, row) in crate::tui::chat::wrap::input_wrap(line, width) {
            rows.push(Line::raw(row));
        }
        if rows.len() <= height || whole == 0 {
            whole += 1;
        }
    }
    rows.truncate(height);
    (rows, whole)
}

/// "lines 1–20 of 300" for a view at `scroll` showing `height` lines.
fn position(scroll: usize, height: usize, total: usize) -> String {
    if total == 0 {
        return "empty".into();
    }
    let end = (scroll + height).min(total);
    format!("lines {}–{end} of {total}", scroll + 1)
}

/// What a key did to the resource view.
#[derive(Debug, PartialEq)]
pub enum ViewOutcome {
    Continue,
    Close,
    Effect(Effect),
}

/// One resource, read.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceView {
    pub server: String,
    /// The URI as the server sent it.
    pub uri: String,
    pub name: String,
    pub subscribed: bool,
    pub fetch: Fetch,
    pub contents: Vec<ResourceContent>,
    /// The contents as sanitized lines: text as is, a blob as one line saying what it is.
    pub lines: Vec<String>,
    pub scroll: usize,
    /// The lines the last frame showed (a page).
    pub shown: std::cell::Cell<usize>,
    /// A path being typed for `w`.
    pub save: Option<String>,
    /// Read again because the server said it changed.
    pub reread: bool,
}

impl ResourceView {
    pub fn new(server: &str, uri: &str, name: &str, subscribed: bool) -> ResourceView {
        ResourceView {
            server: server.to_string(),
            uri: uri.to_string(),
            name: name.to_string(),
            subscribed,
            fetch: Fetch::Loading,
            contents: Vec::new(),
            lines: Vec::new(),
            scroll: 0,
            shown: std::cell::Cell::new(0),
            save: None,
            reread: false,
        }
    }

    /// The server said it changed: it is being read again.
    pub fn reloading(&mut self) {
        self.reread = true;
    }

    /// The read ended.
    pub fn loaded(&mut self, result: Result<Vec<ResourceContent>, String>) {
        match result {
            Ok(contents) => {
                let many = contents.len() > 1;
                let mut lines = Vec::new();
                for (i, part) in contents.iter().enumerate() {
                    if many {
                        lines.push(format!(
                            "──── part {} of {}: {} ────",
                            i + 1,
                            contents.len(),
                            sanitize_line(part.uri(), 200)
                        ));
                    }
                    match part {
                        ResourceContent::Text { text, .. } => {
                            lines.extend(sanitize(text, true).lines().map(str::to_string))
                        }
                        ResourceContent::Blob { bytes, .. } => lines.push(format!(
                            "[blob {}, {} bytes: w saves it to a file]",
                            sanitize_line(part.mime_type().unwrap_or("of no stated type"), 60),
                            bytes.len()
                        )),
                    }
                }
                self.lines = lines;
                self.contents = contents;
                self.scroll = self.scroll.min(self.lines.len().saturating_sub(1));
                self.fetch = Fetch::Loaded;
            }
            Err(e) => self.fetch = Fetch::Failed(sanitize_line(&e, 300)),
        }
    }

    /// What `w` writes: the first blob's bytes, else the text of every text part.
    /// It has more than it shows, or is scrolled (its scroll keys do something worth offering).
    pub fn scrolls(&self) -> bool {
        self.scroll > 0 || self.lines.len() > self.shown.get().max(1)
    }

    pub fn bytes_to_save(&self) -> Option<Vec<u8>> {
        let blob = self.contents.iter().find_map(|c| match c {
            ResourceContent::Blob { bytes, .. } => Some(bytes.clone()),
            ResourceContent::Text { .. } => None,
        });
        blob.or_else(|| {
            let text: Vec<&str> = self
                .contents
                .iter()
                .filter_map(|c| match c {
                    ResourceContent::Text { text, .. } => Some(text.as_str()),
                    ResourceContent::Blob { .. } => None,
                })
                .collect();
            (!text.is_empty()).then(|| text.concat().into_bytes())
        })
    }

    /// A file name for `w` from the URI's last segment (safe characters only).
    pub fn suggested_file(&self) -> String {
        let last = self
            .uri
            .trim_end_matches('/')
            .rsplit(['/', ':'])
            .next()
            .unwrap_or("");
        let name: String = last
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let name = name.trim_matches('.').to_string();
        if name.is_empty() {
            "resource".into()
        } else {
            name
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) -> ViewOutcome {
        if let Some(path) = &mut self.save {
            match key.code {
                KeyCode::Esc => self.save = None,
                KeyCode::Enter => {
                    let path = std::mem::take(path);
                    self.save = None;
                    if let Some(bytes) = self.bytes_to_save() {
                        return ViewOutcome::Effect(Effect::Save {
                            path: path.into(),
                            bytes,
                        });
                    }
                }
                KeyCode::Backspace => {
                    path.pop();
                }
                // Ctrl-U empties the name (as in a shell); other Ctrl keys type nothing.
                KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => path.clear(),
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => path.push(c),
                _ => {}
            }
            return ViewOutcome::Continue;
        }
        if let Some(scroll) = scrolled(self.scroll, self.lines.len(), self.shown.get(), key.code) {
            self.scroll = scroll;
            return ViewOutcome::Continue;
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Enter => ViewOutcome::Close,
            KeyCode::Char('w') if self.bytes_to_save().is_some() => {
                self.save = Some(self.suggested_file());
                ViewOutcome::Continue
            }
            KeyCode::Char('s') => ViewOutcome::Effect(Effect::Subscribe {
                server: self.server.clone(),
                uri: self.uri.clone(),
                on: !self.subscribed,
            }),
            _ => ViewOutcome::Continue,
        }
    }

    /// Draws the resource, `keys` (the footer's) on its last line.
    pub fn render(&self, frame: &mut Frame, area: Rect, keys: &[(&str, &str)], theme: Theme) {
        frame.render_widget(Clear, area);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.focus_border())
            .title(format!(
                " {} · {} ",
                self.server,
                sanitize_line(&self.name, 60)
            ));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if inner.height < 3 {
            return;
        }
        let mut head = vec![Span::styled(sanitize_line(&self.uri, 200), theme.dim())];
        if self.subscribed {
            head.push(Span::styled("  subscribed", theme.accent()));
        }
        if self.reread {
            head.push(Span::styled("  updated: read again", theme.warn()));
        }
        let body = Rect {
            y: inner.y + 2,
            height: inner.height - 3,
            ..inner
        };
        let (rows, shown) = shown_rows(&self.lines, self.scroll, body);
        self.shown.set(shown);
        let status = match &self.fetch {
            Fetch::Loading => Line::styled("reading…", theme.accent()),
            Fetch::Failed(e) => Line::styled(format!("✗ {e}"), theme.bad()),
            Fetch::Loaded => {
                let mime: Vec<String> = self
                    .contents
                    .iter()
                    .filter_map(|c| c.mime_type().map(|m| sanitize_line(m, 40)))
                    .collect();
                Line::styled(
                    format!(
                        "{}{}",
                        if mime.is_empty() {
                            String::new()
                        } else {
                            format!("{} · ", mime.join(", "))
                        },
                        position(self.scroll, self.shown.get(), self.lines.len())
                    ),
                    theme.dim(),
                )
            }
        };
        frame.render_widget(
            Paragraph::new(vec![Line::from(head), status]),
            Rect { height: 2, ..inner },
        );
        if let Fetch::Loaded = self.fetch {
            frame.render_widget(Paragraph::new(rows), body);
        }
        let foot = match &self.save {
            Some(path) => {
                let mut line = Line::from(vec![
                    Span::styled("save to: ", theme.dim()),
                    Span::raw(format!("{path}▏  ")),
                ]);
                line.spans.extend(keys_line(keys, theme).spans);
                line
            }
            None => keys_line(keys, theme),
        };
        super::choices_line(frame, inner, foot);
    }
}

/// A scrollable text with a title: a prompt's messages, a server's instructions.
#[derive(Debug, Clone, PartialEq)]
pub struct TextView {
    pub title: String,
    /// For a prompt's messages: its server and name as sent (the answer finds its view).
    pub source: Option<(String, String)>,
    pub fetch: Fetch,
    /// Sanitized lines.
    pub lines: Vec<String>,
    pub scroll: usize,
    /// The lines the last frame showed (a page).
    pub shown: std::cell::Cell<usize>,
}

impl TextView {
    /// A view of `text` (sanitized here).
    pub fn of_text(title: String, text: &str) -> TextView {
        TextView {
            title,
            source: None,
            fetch: Fetch::Loaded,
            lines: sanitize(text, true).lines().map(str::to_string).collect(),
            scroll: 0,
            shown: std::cell::Cell::new(0),
        }
    }

    /// It has more than it shows, or is scrolled (its scroll keys do something worth offering).
    pub fn scrolls(&self) -> bool {
        self.scroll > 0 || self.lines.len() > self.shown.get().max(1)
    }

    /// Scrolls; true when the key closes the view.
    pub fn on_key(&mut self, key: KeyEvent) -> bool {
        if let Some(scroll) = scrolled(self.scroll, self.lines.len(), self.shown.get(), key.code) {
            self.scroll = scroll;
            return false;
        }
        matches!(
            key.code,
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Enter | KeyCode::Char('i')
        )
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, theme: Theme) {
        frame.render_widget(Clear, area);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.focus_border())
            .title(format!(" {} ", self.title));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if inner.height < 3 {
            return;
        }
        let body = Rect {
            y: inner.y + 1,
            height: inner.height - 2,
            ..inner
        };
        let (rows, shown) = shown_rows(&self.lines, self.scroll, body);
        self.shown.set(shown);
        let status = match &self.fetch {
            Fetch::Loading => Line::styled("asking…", theme.accent()),
            Fetch::Failed(e) => Line::styled(format!("✗ {e}"), theme.bad()),
            Fetch::Loaded => Line::styled(
                position(self.scroll, self.shown.get(), self.lines.len()),
                theme.dim(),
            ),
        };
        frame.render_widget(Paragraph::new(status), Rect { height: 1, ..inner });
        frame.render_widget(Paragraph::new(rows), body);
        super::choices_line(
            frame,
            inner,
            keys_line(&[("↑↓/PgUp/PgDn", "scroll"), ("Esc", "close")], theme),
        );
    }
}

/// A prompt's messages, once `prompts/get` answered.
pub type PromptView = TextView;

impl TextView {
    /// The view of prompt `name` (`shown`, sanitized) of `server` while its messages are
    /// asked for.
    pub fn new(server: &str, name: &str, shown: &str) -> TextView {
        TextView {
            title: format!("{server} · prompt {shown}"),
            source: Some((server.to_string(), name.to_string())),
            fetch: Fetch::Loading,
            lines: Vec::new(),
            scroll: 0,
            shown: std::cell::Cell::new(0),
        }
    }

    /// `prompts/get` answered.
    pub fn prompt_got(&mut self, result: Result<PromptMessages, String>) {
        match result {
            Ok(got) => {
                let mut lines = Vec::new();
                if let Some(d) = &got.description {
                    lines.push(sanitize_line(d, 300));
                    lines.push(String::new());
                }
                for m in &got.messages {
                    lines.push(format!("──── {} ────", m.role.as_str()));
                    lines.extend(sanitize(&m.text, true).lines().map(str::to_string));
                }
                if got.messages.is_empty() {
                    lines.push("(no messages)".into());
                }
                self.lines = lines;
                self.fetch = Fetch::Loaded;
            }
            Err(e) => self.fetch = Fetch::Failed(sanitize_line(&e, 300)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::tests::fixtures::key;

    #[test]
    fn a_blob_is_saved_under_a_safe_name() {
        let mut v = ResourceView::new("s", "demo://a/../logo\u{1b}.png", "logo", false);
        v.loaded(Ok(vec![ResourceContent::Blob {
            uri: "demo://logo.png".into(),
            mime_type: Some("image/png".into()),
            bytes: vec![1, 2, 3],
        }]));
        assert_eq!(
            v.lines,
            vec!["[blob image/png, 3 bytes: w saves it to a file]"]
        );
        assert_eq!(v.on_key(key(KeyCode::Char('w'))), ViewOutcome::Continue);
        assert_eq!(v.save.as_deref(), Some("logo_.png"));
        v.on_key(key(KeyCode::Backspace));
        let ViewOutcome::Effect(Effect::Save { path, bytes }) = v.on_key(key(KeyCode::Enter))
        else {
            panic!();
        };
        assert_eq!(
            (path.to_string_lossy().as_ref(), bytes),
            ("logo_.pn", vec![1, 2, 3])
        );
        assert!(matches!(
            v.on_key(key(KeyCode::Char('s'))),
            ViewOutcome::Effect(Effect::Subscribe { on: true, .. })
        ));
    }

    #[test]
    fn large_text_is_kept_as_lines_and_scrolled_by_pages() {
        let mut v = ResourceView::new("s", "a://b", "b", false);
        let text: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
        v.loaded(Ok(vec![ResourceContent::Text {
            uri: "a://b".into(),
            mime_type: None,
            text: format!("\u{1b}]0;x\u{7}{text}"),
        }]));
        assert_eq!(v.lines.len(), 100_000);
        assert_eq!(v.lines[0], "line 0");
        v.on_key(key(KeyCode::PageDown));
        assert_eq!(v.scroll, PAGE);
        v.on_key(key(KeyCode::End));
        assert_eq!(v.scroll, 99_999);
        assert_eq!(v.on_key(key(KeyCode::Esc)), ViewOutcome::Close);
    }

    #[test]
    fn a_page_is_the_lines_the_last_frame_showed() {
        let text: String = (0..66).map(|i| format!("line {i}\n")).collect();
        let mut v = TextView::of_text("t".into(), &text);
        let draw = |v: &TextView| {
            let mut terminal =
                ratatui::Terminal::new(ratatui::backend::TestBackend::new(60, 20)).expect("term");
            terminal
                .draw(|f| v.render(f, f.area(), crate::tui::theme::Theme::plain()))
                .expect("draw");
            terminal.backend().to_string()
        };
        let screen = draw(&v);
        let shown = v.shown.get();
        assert!(shown > 5, "{screen}");
        assert!(
            screen.contains(&format!("lines 1–{shown} of 66")),
            "{screen}"
        );
        v.on_key(key(KeyCode::PageDown));
        // The next page starts right after the last line shown: none skipped.
        assert_eq!(v.scroll, shown);
        let screen = draw(&v);
        assert!(screen.contains(&format!("line {shown}")), "{screen}");
        v.on_key(key(KeyCode::PageUp));
        assert_eq!(v.scroll, 0);
    }
}
