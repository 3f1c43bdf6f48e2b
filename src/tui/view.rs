//! Layout and drawing: `render(&self)` puts the panes, the notice, the footer and any modal on
//! the frame. Large terminals get every pane at once (Tools, Resources and Prompts share a
//! place, tabbed); small ones (80×24) the servers and one pane.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::app::App;

use super::commands::Dialog;
use super::modals::{self, centered, Modal};
use super::overlay::Layer;
use super::pane_state::Pane;
use super::panes;
use super::widgets::Rows;
use crate::runtime::ElicitationMode;

/// Terminals at least this large get the four-pane layout.
const LARGE: (u16, u16) = (120, 32);

/// Terminals at least this tall give a long notice more than one line (80×24 does).
const NOTICE_ROOM: u16 = 20;

impl App {
    /// Draws the whole screen. Changes nothing.
    pub fn render(&self, frame: &mut Frame) {
        let area = frame.area();
        // A notice longer than the screen is wide takes the lines it wraps to, up to three,
        // where there is room for them (cut, it would lose its end: what to do next); a small
        // screen keeps its rows.
        // Wrapped once here, drawn as wrapped by `render_notice`.
        let notice_rows = self
            .notice
            .as_ref()
            .map(|(_, text)| super::chat::wrap::wrap(text, usize::from(area.width)))
            .unwrap_or_default();
        let notice_h = if area.height >= NOTICE_ROOM {
            notice_rows.len().clamp(1, 3) as u16
        } else {
            1
        };
        let [body, notice, footer] = Layout::vertical([
            Constraint::Min(3),
            Constraint::Length(notice_h),
            Constraint::Length(1),
        ])
        .areas(area);
        let large = area.width >= LARGE.0 && area.height >= LARGE.1;
        self.placement.large.set(large);
        if large {
            self.render_large(frame, body);
        } else {
            self.render_compact(frame, body);
        }
        // Modals take the body: the notice and the keys stay in view under the tallest, and
        // the footer, drawn after, knows how far what the modal shows can scroll.
        self.render_modal(frame, body);
        super::footer::render_notice(self, frame, notice, notice_rows);
        super::footer::render(self, frame, notice, footer);
    }

    fn render_large(&self, frame: &mut Frame, area: Rect) {
        let servers_h = (self.servers.len() as u16 + 2).clamp(5, area.height * 2 / 5);
        // Details focused: its row grows to what it would show (a long summary, the stderr
        // tail), up to 3/5 of the window.
        let top_h = match self.focus {
            Pane::Details => {
                let wanted = panes::details::wanted_height(self, area.width * 42 / 100);
                servers_h.max(12).max(wanted.min(area.height * 3 / 5))
            }
            _ => servers_h.max(12),
        };
        let [top, bottom] =
            Layout::vertical([Constraint::Length(top_h), Constraint::Min(5)]).areas(area);
        let [servers, details] =
            Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)]).areas(top);
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)])
                .areas(bottom);
        let [calls, events] =
            Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(right);
        let [tabs, tools] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(3)]).areas(left);
        // The panes that share this place, as tabs; in the Conversation's input a plain
        // digit is typed: there the keys take Alt.
        let shared = self.tabs(panes::tabbed);
        let digits: Vec<String> = shared.iter().map(|p| digit(*p).to_string()).collect();
        let alt = if panes::types(self.focus) {
            "Alt-"
        } else {
            "keys "
        };
        let hint = format!("({alt}{})", digits.join(" "));
        self.render_tabs(frame, tabs, &shared, self.placement.lower_left, &hint);
        self.draw_pane(Pane::Servers, frame, servers);
        self.draw_pane(Pane::Details, frame, details);
        let lower_left = self.placement.lower_left;
        self.draw_pane(lower_left, frame, tools);
        self.draw_pane(Pane::Calls, frame, calls);
        self.draw_pane(Pane::Events, frame, events);
    }

    fn render_compact(&self, frame: &mut Frame, area: Rect) {
        let mut servers_h = (self.servers.len() as u16 + 2)
            .clamp(3, 10)
            .min(area.height / 2);
        // A short screen gives the focused pane below the room: the servers shrink to a row
        // (their title keeps the count) unless they are what is looked at.
        if area.height < 20 && !matches!(self.focus, Pane::Servers | Pane::Details) {
            servers_h = servers_h.min(3);
        }
        let [servers, tabs, lower] = Layout::vertical([
            Constraint::Length(servers_h),
            Constraint::Length(1),
            Constraint::Min(3),
        ])
        .areas(area);
        self.draw_pane(Pane::Servers, frame, servers);
        let shown = match self.focus {
            Pane::Servers => Pane::Details,
            other => other,
        };
        let tabs_shown = self.tabs(|p| p != Pane::Servers);
        self.render_tabs(frame, tabs, &tabs_shown, shown, "(Tab switches)");
        // The pane below has the keys, but Details shown for a focused Servers.
        panes::draw(
            shown,
            self,
            frame,
            lower,
            shown != Pane::Details || self.focus == shown,
        );
    }

    /// Draws `pane` in `area`, its border saying whether it has the keys.
    fn draw_pane(&self, pane: Pane, frame: &mut Frame, area: Rect) {
        panes::draw(pane, self, frame, area, self.focus == pane);
    }

    /// The panes present that `which` picks, for a tab strip: the one that leads tabs first,
    /// then in the order of their keys.
    fn tabs(&self, which: impl Fn(Pane) -> bool) -> Vec<Pane> {
        let picked = |p: &&Pane| which(**p) && panes::present(**p, self);
        let leading = Pane::ALL
            .iter()
            .filter(|p| panes::leads_tabs(**p))
            .filter(picked);
        let others = Pane::ALL
            .iter()
            .filter(|p| !panes::leads_tabs(**p))
            .filter(picked);
        leading.chain(others).copied().collect()
    }

    /// The tab strip: whole titles and the hint where they fit, else whole titles alone, else
    /// short ones (so on a narrow screen every tab, the shown one too, stays in view).
    fn render_tabs(
        &self,
        frame: &mut Frame,
        area: Rect,
        shown_panes: &[Pane],
        shown: Pane,
        hint: &str,
    ) {
        let width = usize::from(area.width);
        let whole: usize = shown_panes
            .iter()
            .map(|p| panes::title(*p).chars().count() + 2)
            .sum();
        let hint_w = hint.chars().count() + 1;
        let short = whole > width;
        let titles: Vec<&str> = shown_panes
            .iter()
            .map(|p| {
                if short {
                    panes::short_title(*p)
                } else {
                    panes::title(*p)
                }
            })
            .collect();
        let widths: Vec<usize> = titles.iter().map(|t| t.chars().count() + 2).collect();
        // Still too wide: the tabs around the shown one, `‹` and `›` where some are left out.
        let at = shown_panes.iter().position(|p| *p == shown).unwrap_or(0);
        let (from, to) = tab_window(&widths, at, width);
        let mut spans = Vec::new();
        if from > 0 {
            spans.push(Span::styled("‹", self.theme.dim()));
        }
        for (pane, title) in shown_panes.iter().zip(&titles).take(to).skip(from) {
            let style = if *pane == shown {
                self.theme.key()
            } else {
                self.theme.dim()
            };
            spans.push(Span::styled(format!(" {title} "), style));
        }
        if to < shown_panes.len() {
            spans.push(Span::styled("›", self.theme.dim()));
        }
        if whole + hint_w <= width {
            spans.push(Span::styled(format!(" {hint}"), self.theme.dim()));
        }
        frame.render_widget(Rows(vec![Line::from(spans)]), area);
    }

    /// The view on top of the panes, as the overlay stack says (`overlay.rs`). The quit
    /// question is a small box: the view under it stays in sight.
    fn render_modal(&self, frame: &mut Frame, area: Rect) {
        let under_quit = |layer| layer != Layer::Quit && self.layer_open(layer);
        match self.top_layer() {
            Some(Layer::Quit) => {
                if let Some(under) = self.overlays.top(under_quit) {
                    self.render_layer(under, frame, area);
                }
                self.render_quit(frame, area);
            }
            Some(layer) => self.render_layer(layer, frame, area),
            None => {}
        }
    }

    fn render_layer(&self, layer: Layer, frame: &mut Frame, area: Rect) {
        match layer {
            Layer::Quit => self.render_quit(frame, area),
            Layer::Approval => self.render_approval(frame, area),
            Layer::Elicitation => self.render_elicitation(frame, area),
            Layer::Sampling => self.render_sampling(frame, area),
            Layer::Modal => self.render_dialog(frame, area),
            Layer::ProfilePicker => modals::profile::render(self, frame, area),
            Layer::ContentPicker => super::chat::pick::render(self, frame, area),
        }
    }

    /// "N calls still running: restart every server and cancel them?"
    fn render_restart_all(&self, frame: &mut Frame, area: Rect) {
        self.render_running_question(
            frame,
            area,
            (" Restart every server? ", 70),
            "restart every server",
            &super::hints::keys_of(super::commands::Context::Dialog(Dialog::RestartAll)),
        );
    }

    /// "N calls still running: `doing` and cancel them?", then its keys.
    fn render_running_question(
        &self,
        frame: &mut Frame,
        area: Rect,
        (title, width): (&str, u16),
        doing: &str,
        keys: &[(&str, &str)],
    ) {
        let running = self.calls.running();
        let text = format!(
            "{running} call{} still running: {doing} and cancel {}?",
            if running == 1 { " is" } else { "s are" },
            if running == 1 { "it" } else { "them" }
        );
        self.render_question(frame, area, (title, width), text, keys);
    }

    /// A yes/no question in a small box over the screen.
    fn render_question(
        &self,
        frame: &mut Frame,
        area: Rect,
        (title, width): (&str, u16),
        text: String,
        keys: &[(&str, &str)],
    ) {
        let theme = self.theme;
        let rect = centered(area, 40, 20, width.min(area.width), 5.min(area.height));
        frame.render_widget(ratatui::widgets::Clear, rect);
        frame.render_widget(
            Paragraph::new(vec![
                Line::raw(text),
                super::widgets::keys_line(keys, theme),
            ])
            .wrap(ratatui::widgets::Wrap { trim: false })
            .block(
                ratatui::widgets::Block::default()
                    .borders(ratatui::widgets::Borders::ALL)
                    .border_style(theme.warn())
                    .title(title.to_string()),
            ),
            rect,
        );
    }

    /// "N calls still running: quit and cancel them?", or what else quitting would end.
    fn render_quit(&self, frame: &mut Frame, area: Rect) {
        let keys = &super::hints::keys_of(super::commands::Context::Overlay(Layer::Quit));
        if self.attachment().is_some() {
            let text = "Detach and lose the prompt you are writing? (the daemon's calls and sessions go on)";
            self.render_question(frame, area, (" Detach? ", 50), text.to_string(), keys);
            return;
        }
        if self.calls.running() > 0 {
            self.render_running_question(frame, area, (" Quit? ", 50), "quit", keys);
            return;
        }
        let text = if self.chat.busy() {
            "The agent is at work: quit and cancel its turn?"
        } else if !self.chat.input.is_blank() {
            "Quit and lose the prompt you are writing?"
        } else {
            // What was at stake when it was asked has ended since.
            "Nothing is at work any more: quit?"
        };
        self.render_question(frame, area, (" Quit? ", 50), text.to_string(), keys);
    }

    fn render_approval(&self, frame: &mut Frame, area: Rect) {
        let Some(request) = self.overlays.approvals.front() else {
            return;
        };
        let theme = self.theme;
        let turn = self.chat.line_by_runtime_id(request.id).map(|l| l.turn);
        let asked = modals::asked::lines(request, self.asked_ago(request.id), turn, theme);
        let last = modals::approval::render(
            frame,
            area,
            request,
            modals::approval::ApprovalView {
                queued: self.overlays.approvals.len(),
                scroll: self.overlays.approval_scroll,
                confirm: self.overlays.approval_confirm,
                asked,
            },
            theme,
        );
        self.overlays.scroll_limit.set(last);
    }

    /// A server's question: its form, or its URL.
    fn render_elicitation(&self, frame: &mut Frame, area: Rect) {
        let Some(request) = self.overlays.elicitations.front() else {
            return;
        };
        let rect = centered(area, 70, 70, 76.min(area.width), 18.min(area.height));
        match (&self.overlays.elicitation_form, &request.mode) {
            (Some(form), ElicitationMode::Form { .. }) => {
                let keys = super::hints::view_keys(self, Layer::Elicitation);
                form.render(frame, rect, &keys, self.theme)
            }
            (_, _) => modals::elicitation::render_url(
                frame,
                rect,
                request,
                self.overlays.elicitations.len(),
                self.theme,
            ),
        }
    }

    /// A server's sampling request.
    fn render_sampling(&self, frame: &mut Frame, area: Rect) {
        let Some(first) = self.overlays.samplings.front() else {
            return;
        };
        let rect = centered(area, 80, 80, 76.min(area.width), 20.min(area.height));
        let model = self
            .chat
            .current_profile()
            .map(|p| p.model.clone())
            .unwrap_or_else(|| "no model".into());
        let view = modals::sampling::SamplingView {
            queued: self.overlays.samplings.len(),
            model: &model,
            now: self.now,
            keys: super::hints::view_keys(self, Layer::Sampling),
        };
        modals::sampling::render(frame, rect, first, view, self.theme);
    }

    /// The dialog the operator opened.
    fn render_dialog(&self, frame: &mut Frame, area: Rect) {
        let theme = self.theme;
        let Some(modal) = &self.overlays.modal else {
            return;
        };
        // The keys a view draws inside itself are its footer's.
        let keys = &super::hints::view_keys(self, Layer::Modal);
        match modal {
            Modal::Help { scroll } => self.overlays.scroll_limit.set(modals::help::render(
                frame,
                centered(area, 60, 80, 80.min(area.width), 20.min(area.height)),
                super::hints::help_text(),
                *scroll,
                theme,
            )),
            Modal::Trust(preview) => self.overlays.scroll_limit.set(modals::trust::render(
                frame,
                centered(area, 70, 60, 80.min(area.width), 18.min(area.height)),
                preview,
                &self.session.config_path.display().to_string(),
                theme,
            )),
            Modal::Editor(editor) => editor.render(
                frame,
                centered(area, 70, 60, 76.min(area.width), 16.min(area.height)),
                keys,
                theme,
            ),
            Modal::Result { call, scroll } => {
                if let Some(row) = self.calls.rows.iter().find(|r| r.id == *call) {
                    self.overlays.scroll_limit.set(modals::result::render(
                        frame,
                        centered(area, 80, 80, 70.min(area.width), 14.min(area.height)),
                        row,
                        *scroll,
                        theme,
                    ));
                }
            }
            Modal::RestartAll => self.render_restart_all(frame, area),
            Modal::Resource(view) => view.render(
                frame,
                centered(area, 80, 80, 76.min(area.width), 16.min(area.height)),
                keys,
                theme,
            ),
            Modal::Form(form) => form.render(
                frame,
                centered(area, 70, 60, 70.min(area.width), 14.min(area.height)),
                keys,
                theme,
            ),
            Modal::Prompt(view) | Modal::Instructions(view) | Modal::Text(view) => view.render(
                frame,
                centered(area, 80, 80, 76.min(area.width), 16.min(area.height)),
                theme,
            ),
            Modal::Ledger {
                entries,
                selected,
                asking,
            } => modals::ledger::render(
                frame,
                centered(area, 80, 50, 76.min(area.width), 10.min(area.height)),
                (entries, *selected, *asking),
                &self.session.config_path.display().to_string(),
                theme,
            ),
        }
    }
}

/// The tabs `from..to` to show in `width` columns: all of them if they fit, else as many as
/// fit around tab `at` (growing to the right first), with a column for each `‹`/`›` that marks
/// tabs left out.
fn tab_window(widths: &[usize], at: usize, width: usize) -> (usize, usize) {
    let total: usize = widths.iter().sum();
    if total <= width || widths.is_empty() {
        return (0, widths.len());
    }
    let at = at.min(widths.len() - 1);
    let (mut from, mut to) = (at, at + 1);
    let mut used = widths[at];
    let fits = |used: usize, from: usize, to: usize| {
        used + usize::from(from > 0) + usize::from(to < widths.len()) <= width
    };
    loop {
        let mut grew = false;
        if to < widths.len() && fits(used + widths[to], from, to + 1) {
            used += widths[to];
            to += 1;
            grew = true;
        }
        if from > 0 && fits(used + widths[from - 1], from - 1, to) {
            from -= 1;
            used += widths[from];
            grew = true;
        }
        if !grew {
            return (from, to);
        }
    }
}

/// The key that focuses `pane`: its place in the order of the panes, from 1.
fn digit(pane: Pane) -> usize {
    Pane::ALL
        .iter()
        .position(|p| *p == pane)
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tab_tests {
    use super::tab_window;

    #[test]
    fn tabs_that_do_not_fit_are_a_window_around_the_shown_one() {
        let widths = [6, 5, 7, 7, 8, 5, 9];
        assert_eq!(tab_window(&widths, 3, 80), (0, 7));
        // 40 columns: the shown tab and its neighbours, a column kept for each marker.
        let (from, to) = tab_window(&widths, 0, 40);
        assert_eq!(from, 0);
        assert!(widths[..to].iter().sum::<usize>() < 40 && to < 7);
        let (from, to) = tab_window(&widths, 6, 40);
        assert_eq!(to, 7);
        assert!(widths[from..].iter().sum::<usize>() < 40 && from > 0);
        let (from, to) = tab_window(&widths, 3, 20);
        assert!(from <= 3 && 3 < to, "{from}..{to}");
        assert!(widths[from..to].iter().sum::<usize>() + 2 <= 20);
        // Narrower than the shown tab itself: it is still the one shown.
        assert_eq!(tab_window(&widths, 4, 3), (4, 5));
    }
}
