//! The command lists against the handlers: every key the footer or the help shows, in every
//! context (`tui/commands.rs`), pressed on a console where it applies, does what its list
//! says; and the footer shows a pane's keys exactly where its list says they apply.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent};

use crate::agent::AgentEvent;
use crate::config::{ServerConfig, TransportKind};
use crate::runtime::{McpEvent, RuntimeEvent};
use crate::tui::app::App;
use crate::tui::chat::tests::{agent_config, agent_event, done, ready, type_text};
use crate::tui::commands::{commands, offered, Command, Context, Does, When, CONTEXTS};
use crate::tui::messages::Effect;
use crate::tui::overlay::Layer;
use crate::tui::pane_state::Pane;
use crate::tui::state::ServerRow;
use crate::tui::tests::draw;
use crate::tui::tests::fixtures::{key, populated_with};
use crate::tui::tests::server_content::add_content;

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
    place: (
        usize,
        usize,
        usize,
        usize,
        Option<usize>,
        usize,
        usize,
        bool,
        usize,
    ),
}

fn seen(app: &App) -> Seen {
    let p = &app.panes;
    Seen {
        focus: app.focus,
        top: app.top_layer(),
        quit: app.should_quit(),
        input: app.chat.input.text(),
        entries: app.chat.entries.len(),
        place: (
            p.servers.selected,
            p.servers.details_scroll,
            p.tools.selected,
            p.calls.selected,
            p.events.selected,
            p.resources.selected,
            p.prompts.selected,
            p.tools.filter_editing,
            app.chat.scroll,
        ),
    }
}

/// Focuses `context`'s pane and moves its selection until `when` holds; `None` if no row of
/// the console makes it hold.
fn where_it_applies(context: Context, when: When) -> Option<App> {
    let mut app = console();
    let pane = match context {
        Context::Anywhere => Pane::Tools,
        Context::WhileTyping => Pane::Conversation,
        Context::Pane(pane) => pane,
    };
    app.set_focus(pane);
    if when == When::Busy {
        type_text(&mut app, "second");
        app.on_key(key(KeyCode::Enter));
    }
    if when == When::Holding {
        app.on_key(key(KeyCode::Up));
    }
    if when == When::HelpOnly || pane == Pane::Conversation {
        return Some(app);
    }
    // Details pages a stderr tail: one longer than a line.
    let applies = |app: &App| {
        offered(app, when)
            && (when != When::Stdio || app.selected_server().is_some_and(|s| s.stderr.len() > 1))
    };
    for _ in 0..20 {
        if applies(&app) {
            // Details scrolls the selected server's stderr: a page of it.
            if pane == Pane::Details {
                let _ = draw(&app, (80, 24));
            }
            return Some(app);
        }
        let down = if pane == Pane::Details {
            app.panes.servers.selected += 1;
            continue;
        } else {
            key(KeyCode::Down)
        };
        app.on_key(down);
    }
    applies(&app).then_some(app)
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
    }
}

#[test]
fn every_key_the_footer_or_the_help_shows_does_what_its_list_says() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (context, _) in CONTEXTS {
        for command in commands(context) {
            let name = command
                .footer
                .map(|(k, l)| format!("{k} {l}"))
                .or(command.help.map(|(k, _)| k.to_string()))
                .unwrap_or_default();
            let Some(mut app) = where_it_applies(context, command.when) else {
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
    assert!(checked >= 40, "only {checked} commands");
}

/// The footer offers a pane's key exactly where its list says it applies, and the help lists
/// every key of every list that has a help line.
#[test]
fn the_footer_and_the_help_come_from_the_lists() {
    let help = crate::tui::commands::help_text();
    for (context, title) in CONTEXTS {
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
        if !matches!(context, Context::Pane(_)) {
            continue;
        }
        let Some(app) = where_it_applies(context, When::Always) else {
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
