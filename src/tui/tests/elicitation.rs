//! A server's elicitation in the console: a form checked before it is sent, then a URL request;
//! one declined or withdrawn leaves the queue. Snapshots at 80×24 and 140×40.

use crossterm::event::KeyCode;
use serde_json::json;

use crate::runtime::{ElicitationAnswer, ElicitationRequest, McpEvent, RuntimeEvent};
use crate::tui::app::App;
use crate::tui::messages::Effect;
use crate::tui::tests::fixtures::{ctrl, key};
use crate::tui::tests::server_content::with_content;
use crate::tui::tests::snapshot;

/// Moves the elicitation form's focus to field `name`.
fn focus_field(app: &mut App, name: &str) {
    for _ in 0..20 {
        let at = app
            .overlays
            .elicitation_form
            .as_ref()
            .map(|f| f.fields[f.focus].name.clone());
        if at.as_deref() == Some(name) {
            return;
        }
        app.on_key(key(KeyCode::Down));
    }
    panic!("no field {name}");
}

/// The answer a request got (a test must not hang on one that never comes).
async fn answered(rx: tokio::sync::oneshot::Receiver<ElicitationAnswer>) -> ElicitationAnswer {
    tokio::time::timeout(std::time::Duration::from_secs(10), rx)
        .await
        .expect("answered in time")
        .expect("answered, not dropped")
}

pub(in crate::tui) fn elicitation_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "description": "Your full name"},
            "email": {"type": "string", "title": "Email", "format": "email"},
            "copies": {"type": "integer", "title": "Copies", "minimum": 1, "maximum": 10, "default": 3},
            "color": {"type": "string", "title": "Colour", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}], "default": "g"},
            "urgent": {"type": "boolean", "title": "Urgent", "default": false},
            "fish": {"type": "array", "title": "Fish", "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Trout"}]}}
        },
        "required": ["name"]
    })
}

#[tokio::test]
async fn an_elicitation_form_is_answered_and_checked_first() {
    let mut app = with_content();
    let (request, answer) = ElicitationRequest::form(
        "notes",
        "Details of the note to write:".into(),
        elicitation_schema(),
    )
    .unwrap();
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request)));
    let (second, second_answer) = ElicitationRequest::url(
        "notes",
        "Log in".into(),
        "https://example.org/login".into(),
        "e1".into(),
    );
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ElicitationRequested(second)));
    focus_field(&mut app, "name");
    for c in "Ada".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    focus_field(&mut app, "email");
    for c in "ada@".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    app.on_key(ctrl('s'));
    snapshot("elicitation_form", &app);
    for c in "example.org".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    app.on_key(ctrl('s'));
    assert_eq!(
        answered(answer).await,
        ElicitationAnswer::Accept(Some(
            json!({"name": "Ada", "email": "ada@example.org", "copies": 3, "color": "g", "urgent": false})
                .as_object()
                .unwrap()
                .clone()
        ))
    );
    // Then the URL request, which opens the URL on accept.
    snapshot("elicitation_url", &app);
    let effects = app.on_key(key(KeyCode::Char('o')));
    assert_eq!(
        effects,
        vec![Effect::OpenUrl {
            url: "https://example.org/login".into()
        }]
    );
    assert_eq!(
        answered(second_answer).await,
        ElicitationAnswer::Accept(None)
    );
    assert!(app.overlays.elicitations.is_empty());
}

#[tokio::test]
async fn a_withdrawn_or_declined_elicitation_leaves_the_queue() {
    let mut app = with_content();
    let (request, answer) =
        ElicitationRequest::form("notes", "m".into(), elicitation_schema()).unwrap();
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request)));
    app.on_key(ctrl('d'));
    assert!(matches!(
        answered(answer).await,
        ElicitationAnswer::Decline(_)
    ));
    let (request, answer) =
        ElicitationRequest::form("notes", "m".into(), elicitation_schema()).unwrap();
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request)));
    drop(answer);
    // The next event finds the server gone from it.
    app.on_runtime_event(RuntimeEvent::EventsDropped { count: 0 });
    assert!(app.overlays.elicitations.is_empty() && app.overlays.elicitation_form.is_none());
}
