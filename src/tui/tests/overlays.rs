//! The overlay stack over real handlers: every pair of views opened in both arrival orders.
//! The view drawn on top, the one the keys go to and the one whose keys the footer names must
//! be the same one, the newest (the quit question over everything); closing it shows the one
//! below again, as it was.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use crate::approval::ApprovalRequest;
use crate::runtime::{ElicitationRequest, McpEvent, RuntimeEvent, SamplingRequest};
use crate::tui::app::App;
use crate::tui::chat::tests::{agent_config, ready, type_text};
use crate::tui::listing::ContentEvent;
use crate::tui::messages::AppEvent;
use crate::tui::overlay::Layer;
use crate::tui::tests::fixtures::{ctrl, ignored, key};
use crate::tui::tests::server_content::listing;
use crate::tui::tests::{draw, sampling::ask};
use crate::tui::theme::Theme;

/// The console with an agent ready and the notes server's resources listed, the Conversation
/// focused; returns it and when it was made.
fn console() -> (App, Instant) {
    let t0 = Instant::now();
    let mut app = App::new(&agent_config(), Theme::plain(), t0);
    let _commands = ready(&mut app);
    app.on_app_event(AppEvent::Content(ContentEvent::ResourcesListed {
        server: "notes".into(),
        result: Ok(listing("notes")),
    }));
    type_text(&mut app, "look at ");
    (app, t0)
}

/// Keeps the requests' answer channels open (a request whose asker is gone leaves the queue).
#[derive(Default)]
struct Askers(Vec<Box<dyn std::any::Any>>);

/// Opens a view of kind `layer` the way it opens for real: keys for the pickers, `L` for a
/// dialog, runtime events for the requests.
fn open(app: &mut App, layer: Layer, askers: &mut Askers) {
    match layer {
        Layer::ContentPicker => app.on_key(key(KeyCode::Char('@'))),
        Layer::ProfilePicker => app.on_key(ctrl('p')),
        Layer::Modal => {
            // `L` is a key of the panes; a dialog opened from the Conversation is the same.
            app.overlays.modal = Some(super::dialogs::ledger());
            app.sync_overlays();
            Vec::new()
        }
        Layer::Approval => {
            let (request, answer) = ApprovalRequest::new(
                7,
                ignored("notes", "write_note"),
                serde_json::json!({"title": "t"}),
                "write_note is mutating".into(),
            );
            askers.0.push(Box::new(answer));
            app.on_runtime_event(RuntimeEvent::ApprovalRequested(request))
        }
        Layer::Elicitation => {
            let (request, answer) = ElicitationRequest::url(
                "notes",
                "Log in to the notes service".into(),
                "https://example.org/login".into(),
                "e1".into(),
            );
            askers.0.push(Box::new(answer));
            app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request)))
        }
        Layer::Sampling => {
            let (request, answer) = SamplingRequest::new("notes", ask());
            askers.0.push(Box::new(answer));
            app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::SamplingRequested(request)))
        }
        Layer::Quit => app.on_key(ctrl('c')),
    };
}

/// What shows a view is on top: a text only it draws, and a hint only its footer names.
fn signs(layer: Layer) -> (&'static str, &'static str) {
    match layer {
        Layer::ContentPicker => ("Attach a resource", "Esc as text"),
        Layer::ProfilePicker => ("Model profile", "Enter use"),
        Layer::Modal => ("Rules and session approvals", "d revoke"),
        Layer::Approval => ("Approval needed", "y allow once"),
        Layer::Elicitation => ("Log in to the notes service", "o/Enter open"),
        Layer::Sampling => ("notes asks for a model's message", "y/Enter ask the model"),
        Layer::Quit => ("Quit?", "y quit"),
    }
}

fn footer(screen: &str) -> &str {
    screen.lines().nth(39).unwrap_or("")
}

/// `top` drawn and named in the footer, `under` neither.
fn check_on_top(app: &App, top: Layer, under: Layer, case: &str) {
    assert_eq!(app.top_layer(), Some(top), "{case}");
    let screen = draw(app, (140, 40));
    let (text, hint) = signs(top);
    let (under_text, under_hint) = signs(under);
    assert!(
        screen.contains(text),
        "{case}: {text:?} not drawn:\n{screen}"
    );
    assert!(
        footer(&screen).contains(hint),
        "{case}: the footer does not name {hint:?}:\n{screen}"
    );
    // The quit question is a small box over the view under it, which stays in sight.
    if top != Layer::Quit {
        assert!(
            !screen.contains(under_text),
            "{case}: {under_text:?} drawn:\n{screen}"
        );
    }
    assert!(
        !footer(&screen).contains(under_hint),
        "{case}: the footer names {under_hint:?}:\n{screen}"
    );
}

#[test]
fn every_pair_of_overlays_agrees_on_which_is_on_top_in_both_orders() {
    let layers = Layer::ALL;
    let mut cases = 0;
    for first in layers {
        for second in layers {
            if first == second {
                continue;
            }
            // What can open over another view: what arrives on its own (a server's request,
            // an approval, a dialog a finished read opens) over anything, and the quit
            // question (Ctrl-C) over a request; a picker opens only from the input's keys, so
            // only first (Ctrl-C in a picker or a dialog closes it: their own key).
            let arrives = matches!(
                second,
                Layer::Modal | Layer::Approval | Layer::Elicitation | Layer::Sampling
            );
            let request_first = matches!(
                first,
                Layer::Approval | Layer::Elicitation | Layer::Sampling
            );
            let quit_over_request = second == Layer::Quit && request_first;
            if !(arrives || quit_over_request) {
                continue;
            }
            let case = format!("{first:?} then {second:?}");
            let (mut app, t0) = console();
            let mut askers = Askers::default();
            open(&mut app, first, &mut askers);
            assert_eq!(
                app.top_layer(),
                Some(first),
                "{case}: the first did not open"
            );
            open(&mut app, second, &mut askers);
            let top = if first == Layer::Quit { first } else { second };
            let under = if top == first { second } else { first };
            check_on_top(&app, top, under, &case);
            // The keys go to the one on top: Esc (or `n`) closes it, the other stays open.
            app.set_now(t0 + Duration::from_secs(5));
            app.on_key(key(KeyCode::Esc));
            assert!(!app.layer_open(top), "{case}: Esc did not reach {top:?}");
            assert!(app.layer_open(under), "{case}: Esc reached {under:?}");
            assert_eq!(app.top_layer(), Some(under), "{case}");
            if under == Layer::ContentPicker {
                // The picker is back as it was, with the text typed before it.
                assert_eq!(app.chat.input.text(), "look at ", "{case}");
            }
            cases += 1;
        }
    }
    assert!(cases >= 20, "only {cases} pairs ran");
}

/// The bug the stack fixes: with the `@` picker open, a server's question arrived; the screen
/// kept the picker while the keys and the footer went to the question.
#[test]
fn a_question_over_the_content_picker_is_drawn_and_answered_and_the_picker_comes_back() {
    let (mut app, t0) = console();
    let mut askers = Askers::default();
    open(&mut app, Layer::ContentPicker, &mut askers);
    type_text(&mut app, "to");
    open(&mut app, Layer::Elicitation, &mut askers);
    check_on_top(
        &app,
        Layer::Elicitation,
        Layer::ContentPicker,
        "picker then question",
    );
    app.set_now(t0 + Duration::from_secs(5));
    app.on_key(key(KeyCode::Char('d')));
    assert_eq!(app.top_layer(), Some(Layer::ContentPicker));
    let screen = draw(&app, (140, 40));
    assert!(
        screen.contains("@to"),
        "the picker's filter is lost:\n{screen}"
    );
}

/// A quit question asked while the agent worked, once the turn has ended, says nothing is at
/// stake any more (not that a prompt being written would be lost).
#[test]
fn a_quit_question_outlived_by_its_reason_says_so() {
    let (mut app, _) = console();
    app.chat.input.clear();
    app.overlays.quit_asked = true;
    app.sync_overlays();
    let screen = draw(&app, (140, 40));
    assert!(
        screen.contains("Nothing is at work any more: quit?"),
        "{screen}"
    );
}
