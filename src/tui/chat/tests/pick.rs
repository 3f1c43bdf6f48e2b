//! `@` and `/` in the Conversation's input: the pickers (filtering, Esc typing the key itself),
//! an attached resource going with the prompt, a server prompt sent (at once, or after its
//! argument form), and what the agent task reports back (attached, messages added, ended)
//! drawn in the transcript; snapshots at 80×24 and 140×40.

use std::collections::BTreeMap;
use std::time::Instant;

use crossterm::event::KeyCode;

use super::{agent_config, ctrl, key, ready, type_text};
use crate::agent::attach::{Attachment, PromptUse};
use crate::runtime::{
    MessageRole, PromptArgumentInfo, PromptInfo, ResourceInfo, ResourceListing, TemplateInfo,
};
use crate::tui::app::App;
use crate::tui::chat::{ChatEffect, ChatEvent};
use crate::tui::listing::ContentEvent;
use crate::tui::messages::{AppEvent, Effect};
use crate::tui::modals::Modal;
use crate::tui::tests::snapshot;
use crate::tui::theme::Theme;

fn resource(uri: &str, name: &str) -> ResourceInfo {
    ResourceInfo {
        server: "notes".into(),
        uri: uri.into(),
        name: name.into(),
        title: None,
        description: None,
        mime_type: Some("text/plain".into()),
        size: None,
    }
}

/// The agent ready, with the notes server's resources and prompts listed.
fn with_content() -> App {
    let mut app = App::new(&agent_config(), Theme::plain(), Instant::now());
    let _commands = ready(&mut app);
    app.on_app_event(AppEvent::Content(ContentEvent::ResourcesListed {
        server: "notes".into(),
        result: Ok(ResourceListing {
            resources: vec![
                resource("demo://readme", "README"),
                resource("demo://notes/todo", "todo"),
            ],
            templates: vec![TemplateInfo {
                server: "notes".into(),
                uri_template: "demo://notes/{title}".into(),
                name: "note".into(),
                title: None,
                description: None,
                mime_type: None,
            }],
            skills: vec![],
        }),
    }));
    let prompt = |name: &str, arguments: Vec<PromptArgumentInfo>| PromptInfo {
        server: "notes".into(),
        name: name.into(),
        title: None,
        description: Some(format!("The {name} prompt.")),
        arguments,
    };
    app.on_app_event(AppEvent::Content(ContentEvent::PromptsListed {
        server: "notes".into(),
        result: Ok(vec![
            prompt("hello", Vec::new()),
            prompt(
                "summarize",
                vec![PromptArgumentInfo {
                    name: "title".into(),
                    title: None,
                    description: None,
                    required: true,
                }],
            ),
        ]),
    }));
    app
}

fn sent(effects: &[Effect]) -> (String, Vec<Attachment>, Option<PromptUse>) {
    match effects {
        [Effect::Agent(ChatEffect::Prompt {
            text,
            attachments,
            prompt,
            ..
        })] => (text.clone(), attachments.clone(), prompt.clone()),
        other => panic!("not a prompt: {other:?}"),
    }
}

#[test]
fn at_attaches_a_resource_that_goes_with_the_prompt() {
    let mut app = with_content();
    type_text(&mut app, "look at ");
    app.on_key(key(KeyCode::Char('@')));
    // Templates are not offered: they need their arguments.
    assert_eq!(app.pick_items().len(), 2);
    type_text(&mut app, "tod");
    snapshot("conversation_pick_resource", &app);
    assert_eq!(app.pick_items().len(), 1);
    app.on_key(key(KeyCode::Enter));
    assert!(app.chat.content_picker.is_none());
    // Inside a word `@` is only a character; Esc in the picker types it too.
    type_text(&mut app, "me@x");
    assert!(app.chat.content_picker.is_none());
    app.on_key(key(KeyCode::Char(' ')));
    app.on_key(key(KeyCode::Char('@')));
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.chat.input.text(), "look at me@x @");
    snapshot("conversation_attached", &app);
    let (text, attachments, prompt) = sent(&app.on_key(key(KeyCode::Enter)));
    assert_eq!(text, "look at me@x @");
    assert_eq!(
        attachments,
        vec![Attachment {
            server: "notes".into(),
            uri: "demo://notes/todo".into(),
            name: "todo".into(),
        }]
    );
    assert_eq!(prompt, None);
    assert!(app.chat.attachments.is_empty());
    // What the task reports: the attachment read, shown as a line.
    let epoch = app.chat.epoch;
    app.on_app_event(AppEvent::Agent(
        epoch,
        ChatEvent::Attached {
            server: "notes".into(),
            name: "todo".into(),
            result: Ok("text/plain, 12 B".into()),
        },
    ));
    assert!(app.chat.entries.iter().any(|e| matches!(e,
        crate::tui::chat::Entry::Note { text, .. } if text == "@todo (notes) attached: text/plain, 12 B")));
}

#[test]
fn slash_runs_a_server_prompt_at_once_or_after_its_form() {
    let mut app = with_content();
    app.on_key(key(KeyCode::Char('/')));
    snapshot("conversation_pick_prompt", &app);
    // The Conversation's own commands come first; a server prompt after them.
    type_text(&mut app, "hel");
    let (text, attachments, prompt) = sent(&app.on_key(key(KeyCode::Enter)));
    assert_eq!((text.as_str(), attachments.len()), ("", 0));
    assert_eq!(
        prompt,
        Some(PromptUse {
            server: "notes".into(),
            name: "hello".into(),
            arguments: BTreeMap::new(),
        })
    );
    // What the task reports: the prompt's messages, in the transcript.
    let epoch = app.chat.epoch;
    app.on_app_event(AppEvent::Agent(
        epoch,
        ChatEvent::PromptAdded {
            server: "notes".into(),
            name: "hello".into(),
            messages: vec![(MessageRole::User, "Say hello to the operator.".into())],
        },
    ));
    app.on_app_event(AppEvent::Agent(epoch, ChatEvent::Ended(None)));
    assert!(!app.chat.busy());
    snapshot("conversation_prompt_added", &app);

    // `/compact` is sent as typed (the agent task knows it).
    app.on_key(key(KeyCode::Char('/')));
    let (text, _, prompt) = sent(&app.on_key(key(KeyCode::Enter)));
    assert_eq!((text.as_str(), prompt), ("/compact", None));
    app.on_app_event(AppEvent::Agent(epoch, ChatEvent::Ended(None)));

    // A prompt with arguments: its form first (the Prompts pane's), then it is sent.
    app.on_key(key(KeyCode::Char('/')));
    type_text(&mut app, "summ");
    app.on_key(key(KeyCode::Enter));
    assert!(matches!(app.overlays.modal, Some(Modal::Form(_))));
    type_text(&mut app, "todo");
    let (_, _, prompt) = sent(&app.on_key(ctrl('s')));
    assert_eq!(
        prompt,
        Some(PromptUse {
            server: "notes".into(),
            name: "summarize".into(),
            arguments: [("title".to_string(), "todo".to_string())].into(),
        })
    );
    assert!(app.overlays.modal.is_none());
    // `/` inside text is a character.
    app.on_app_event(AppEvent::Agent(
        epoch,
        ChatEvent::Ended(Some("nope".into())),
    ));
    type_text(&mut app, "a/b");
    assert!(app.chat.content_picker.is_none());
    assert_eq!(app.chat.input.text(), "a/b");
}

#[test]
fn text_typed_into_a_picker_is_never_lost() {
    let mut app = with_content();
    // `@` then a space is text: the picker closes and both are typed.
    type_text(&mut app, "meet @ 5pm");
    assert!(app.chat.content_picker.is_none());
    assert_eq!(app.chat.input.text(), "meet @ 5pm");
    app.chat.input.clear();
    // Enter with nothing matching types the key and the filter back instead of dropping them.
    type_text(&mut app, "see @nothing-like-it");
    assert!(app.chat.content_picker.is_some());
    assert!(app.pick_items().is_empty());
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    assert!(app.chat.content_picker.is_none());
    assert_eq!(app.chat.input.text(), "see @nothing-like-it");
    // The next Enter sends it.
    assert_eq!(
        sent(&app.on_key(key(KeyCode::Enter))).0,
        "see @nothing-like-it"
    );
}
