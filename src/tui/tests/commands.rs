//! The command lists against the handlers: every key the footer or the help shows, in every
//! context (each pane's list, those of `tui/commands.rs` and of `tui/dialog_commands.rs`),
//! pressed on a console where it applies, does what its list says; and the footer shows a
//! context's keys exactly where its list says they apply.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent};

use crate::agent::AgentEvent;
use crate::approval::ApprovalRequest;
use crate::config::{ServerConfig, TransportKind};
use crate::runtime::{ElicitationRequest, McpEvent, RuntimeEvent, SamplingRequest};
use crate::tui::app::App;
use crate::tui::chat::tests::{agent_config, agent_event, done, ready, type_text};
use crate::tui::commands::{offered, Command, Context, Dialog, Does, When};
use crate::tui::dialog_commands;
use crate::tui::hints::{commands, contexts, help_text};
use crate::tui::messages::Effect;
use crate::tui::overlay::Layer;
use crate::tui::pane_state::Pane;
use crate::tui::state::ServerRow;
use crate::tui::tests::dialogs::{self, Askers};
use crate::tui::tests::draw;
use crate::tui::tests::fixtures::{ctrl, ignored, key, populated_with, trusted_write_note};
use crate::tui::tests::sampling::ask;
use crate::tui::tests::server_content::add_content;
use serde_json::json;

/// Servers, tools, calls and events of every kind, notes' resources and prompts, the agent
/// ready with one answered prompt long enough to scroll.
fn console() -> App {
    let (mut app, t0) = populated_with(&agent_config());
    let _commands = ready(&mut app);
    add_content(&mut app);
    app.on_key(key(KeyCode::Char('8')));
    type_text(&mut app, "first");
    app.on_key(key(KeyCode::Enter));
    agent_event(
        &mut app,
        AgentEvent::TurnStarted {
            turn: 1,
            tools: Default::default(),
        },
    );
    let long: String = (1..=80).map(|i| format!("line {i}\n")).collect();
    agent_event(
        &mut app,
        AgentEvent::TextDelta {
            turn: 1,
            text: long,
        },
    );
    done(&mut app);
    // A stderr tail longer than Details shows, to page through.
    for i in 1..=60 {
        app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::Stderr {
            server: "broken".into(),
            line: format!("broken: stderr line {i}"),
        }));
    }
    // A remote server, for OAuth's `o`.
    let mut remote = ServerConfig::stdio("remote", "unused", Vec::new());
    remote.transport = TransportKind::StreamableHttp;
    remote.url = Some("https://mcp.example.org/mcp".into());
    app.servers.push(ServerRow::from_config(&remote));
    app.set_now(t0 + Duration::from_secs(10));
    app.notice = None;
    app
}

/// What a key can change, as the lists speak of it.
#[derive(Debug, PartialEq)]
struct Seen {
    focus: Pane,
    top: Option<Layer>,
    quit: bool,
    input: String,
    entries: usize,
    /// Every selection, scroll and filter of the panes and the views over them.
    place: Vec<String>,
}

fn seen(app: &App) -> Seen {
    let p = &app.panes;
    let o = &app.overlays;
    Seen {
        focus: app.focus,
        top: app.top_layer(),
        quit: app.should_quit(),
        input: app.chat.input.text(),
        entries: app.chat.entries.len(),
        place: vec![
            format!("{:?}", (p.servers.selected, p.servers.details_scroll)),
            format!("{:?}", (p.tools.selected, p.tools.filter_editing)),
            format!("{:?}", (p.calls.selected, p.events.selected)),
            format!("{:?}", (p.resources.selected, p.prompts.selected)),
            format!("{:?}", (app.chat.scroll, app.chat.picker)),
            format!("{:?}", app.chat.content_picker),
            format!("{:?}", (o.approval_scroll, o.approval_confirm)),
            format!("{:?}", (&o.modal, o.rule_removal)),
            format!("{:?}", o.elicitation_form),
            format!("{:?}", o.samplings.front().map(|s| (s.scroll, &s.stage))),
        ],
    }
}

/// Opens the view of an overlay context the way it opens for real.
fn open_view(app: &mut App, context: Context, askers: &mut Askers) {
    let approval = |app: &mut App, tool, arguments, askers: &mut Askers| {
        let (request, answer) = ApprovalRequest::new(7, tool, arguments, "it is mutating".into());
        askers.push(Box::new(answer));
        app.on_runtime_event(RuntimeEvent::ApprovalRequested(request));
    };
    match context {
        Context::Overlay(Layer::Quit) => {
            app.set_focus(Pane::Servers);
            app.on_key(ctrl('c'));
        }
        Context::Overlay(Layer::Approval) => {
            // Not destructive (so `a` applies), arguments longer than the view (so it scrolls).
            let long: serde_json::Map<String, serde_json::Value> =
                (0..60).map(|i| (format!("field_{i}"), json!(i))).collect();
            approval(app, trusted_write_note(), long.into(), askers);
            let _ = draw(app, (80, 24));
        }
        Context::ApprovalConfirm => {
            approval(
                app,
                ignored("notes", "write_note"),
                json!({"title": "t"}),
                askers,
            );
            app.on_key(key(KeyCode::Char('A')));
        }
        Context::Overlay(Layer::Elicitation) => {
            let (request, answer) = ElicitationRequest::url(
                "notes",
                "Log in".into(),
                "https://example.org/login".into(),
                "e1".into(),
            );
            askers.push(Box::new(answer));
            app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request)));
        }
        Context::Overlay(Layer::Sampling) => {
            let (request, answer) = SamplingRequest::new("notes", ask());
            askers.push(Box::new(answer));
            app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::SamplingRequested(request)));
        }
        Context::Overlay(Layer::ProfilePicker) => {
            app.on_key(ctrl('p'));
        }
        Context::Overlay(Layer::ContentPicker) => {
            app.on_key(key(KeyCode::Char('@')));
        }
        Context::Overlay(Layer::Modal)
        | Context::Anywhere
        | Context::WhileTyping
        | Context::Pane(_)
        | Context::Dialog(_) => {}
    }
}

/// Focuses `context`'s pane and moves its selection until `when` holds (and, for a key that
/// pages the stderr tail, until the selected server has one to page); `None` if no row of the
/// console makes it hold.
fn where_it_applies(
    context: Context,
    when: When,
    pages_stderr: bool,
    askers: &mut Askers,
) -> Option<App> {
    if let Context::Dialog(dialog) = context {
        return dialog_where_it_applies(dialog, when, askers);
    }
    let mut app = console();
    let pane = match context {
        Context::Anywhere => Pane::Tools,
        Context::WhileTyping => Pane::Conversation,
        Context::Pane(pane) => pane,
        Context::Dialog(_) => unreachable!("a dialog is opened above"),
        Context::Overlay(_) | Context::ApprovalConfirm => {
            open_view(&mut app, context, askers);
            return (matches!(when, When::HelpOnly) || offered(&app, when)).then_some(app);
        }
    };
    app.set_focus(pane);
    if matches!(when, When::Busy) {
        type_text(&mut app, "second");
        app.on_key(key(KeyCode::Enter));
    }
    if matches!(when, When::HelpOnly) || pane == Pane::Conversation {
        return Some(app);
    }
    // Details pages a stderr tail: one longer than a line.
    let applies = |app: &App| {
        offered(app, when)
            && (!pages_stderr || app.selected_server().is_some_and(|s| s.stderr.len() > 1))
    };
    for _ in 0..20 {
        if applies(&app) {
            // Details scrolls the selected server's stderr: a page of it.
            if pane == Pane::Details {
                let _ = draw(&app, (80, 24));
            }
            return Some(app);
        }
        // Details has no selection of its own: it shows the server selected in Servers.
        // Events follows the newest line until ↑ holds one.
        match pane {
            Pane::Details => app.panes.servers.selected += 1,
            Pane::Events => drop(app.on_key(key(KeyCode::Up))),
            _ => drop(app.on_key(key(KeyCode::Down))),
        }
    }
    applies(&app).then_some(app)
}

/// Opens `dialog` (in each of its setups) and walks a form's fields until `when` holds.
fn dialog_where_it_applies(dialog: Dialog, when: When, askers: &mut Askers) -> Option<App> {
    for variant in 0..dialogs::VARIANTS {
        let mut app = console();
        dialogs::open(&mut app, dialog, variant, askers);
        assert_eq!(
            dialog_commands::dialog(&app, app.top_layer()),
            Some(dialog),
            "{dialog:?} did not open (variant {variant})"
        );
        for _ in 0..6 {
            if matches!(when, When::HelpOnly) || offered(&app, when) {
                return Some(app);
            }
            app.on_key(key(KeyCode::Down));
        }
    }
    None
}

fn press(app: &mut App, command: &Command) -> Vec<Effect> {
    let (code, modifiers) = command.press;
    app.on_key(KeyEvent::new(code, modifiers))
}

/// Whether what `command` did is what its list says.
fn did(command: &Command, before: &Seen, after: &Seen, effects: &[Effect]) -> bool {
    match command.does {
        Does::Refocuses => after.focus != before.focus,
        Does::Opens(layer) => after.top == Some(layer),
        Does::Runs(name) => effects.iter().any(|e| format!("{e:?}").starts_with(name)),
        Does::Quits => after.quit || after.top == Some(Layer::Quit),
        Does::Moves => after.place != before.place,
        Does::Edits => after.input != before.input,
        Does::Clears => after.entries < before.entries,
        Does::Closes => before.top.is_some() && after.top != before.top,
        Does::Changes => after.top == before.top && after.place != before.place,
    }
}

#[test]
fn every_key_the_footer_or_the_help_shows_does_what_its_list_says() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (context, _) in contexts() {
        let context = *context;
        for command in commands(context) {
            let name = command
                .footer
                .map(|(k, l)| format!("{k} {l}"))
                .or(command.help.map(|(k, _)| k.to_string()))
                .unwrap_or_default();
            let mut askers = Askers::new();
            let pages_stderr = context == Context::Pane(Pane::Details)
                && matches!(command.press.0, KeyCode::PageUp | KeyCode::PageDown);
            let Some(mut app) = where_it_applies(context, command.when, pages_stderr, &mut askers)
            else {
                wrong.push(format!(
                    "{context:?} {name}: no row of the console offers it"
                ));
                continue;
            };
            type_text(&mut app, command.typed);
            let before = seen(&app);
            let effects = press(&mut app, command);
            let after = seen(&app);
            if !did(command, &before, &after, &effects) {
                wrong.push(format!(
                    "{context:?} {name}: expected {:?}\n  before {before:?}\n  after  {after:?}\n  effects {effects:?}",
                    command.does
                ));
            }
            checked += 1;
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {checked}:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(checked >= 120, "only {checked} commands");
}

/// The footer offers a pane's key exactly where its list says it applies, and the help lists
/// every key of every list that has a help line.
#[test]
fn the_footer_and_the_help_come_from_the_lists() {
    let help = help_text();
    for &(context, title) in contexts() {
        for command in commands(context) {
            if let Some((keys, lines)) = command.help {
                let first = lines.lines().next().unwrap_or("");
                assert!(
                    help.contains(&format!("  {keys:<18}{first}")),
                    "the help lacks {keys}: {first}"
                );
            }
        }
        assert!(help.contains(title), "{title}");
        if matches!(context, Context::Anywhere | Context::WhileTyping) {
            continue;
        }
        let mut askers = Askers::new();
        let Some(app) = where_it_applies(context, When::Always, false, &mut askers) else {
            continue;
        };
        let screen = draw(&app, (200, 50));
        let footer: String = screen.lines().rev().take(2).collect();
        for command in commands(context) {
            let Some((keys, label)) = command.footer else {
                continue;
            };
            let shown = footer.contains(&format!("{keys} {label}"));
            assert_eq!(
                shown,
                offered(&app, command.when),
                "{context:?}: {keys} {label} in the footer:\n{footer}"
            );
        }
    }
}
