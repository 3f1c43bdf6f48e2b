//! Snapshot and key tests of the Resources and Prompts panes, their modals (a resource read, a
//! template's and a prompt's form, a prompt's messages, a server's instructions), at 80×24 and
//! 140×40; and server text kept off the terminal in all of them (and in a server's question, a
//! sampling request and its model's answer). The fixtures build on the
//! snapshot tests' (`tests.rs`).

use std::collections::BTreeMap;

use crossterm::event::KeyCode;
use serde_json::json;

use crate::runtime::{
    Capabilities, ElicitationRequest, ListCapability, McpEvent, MessageRole, PromptArgumentInfo,
    PromptInfo, PromptMessageInfo, PromptMessages, ResourceCapability, ResourceContent,
    ResourceInfo, ResourceListing, RuntimeEvent, SkillFile, SkillInfo, TemplateInfo,
};
use crate::tui::app::App;
use crate::tui::listing::ContentEvent;
use crate::tui::messages::{AppEvent, CompletionAsk, Effect};
use crate::tui::modals::viewer::{ResourceView, TextView};
use crate::tui::modals::Modal;
use crate::tui::pane_state::Pane;
use crate::tui::tests::fixtures::populated;
use crate::tui::tests::fixtures::{ctrl, key};
use crate::tui::tests::{draw, snapshot};

const SIZES: [(u16, u16); 2] = [(80, 24), (140, 40)];

fn resource(server: &str, uri: &str, name: &str, mime: &str, size: Option<u64>) -> ResourceInfo {
    ResourceInfo {
        server: server.into(),
        uri: uri.into(),
        name: name.into(),
        title: None,
        description: Some(format!("The {name} resource.")),
        mime_type: Some(mime.into()),
        size,
    }
}

pub(in crate::tui) fn listing(server: &str) -> ResourceListing {
    ResourceListing {
        resources: vec![
            resource(server, "demo://readme", "README", "text/markdown", None),
            resource(server, "demo://logo.png", "logo", "image/png", Some(69)),
            resource(server, "demo://notes/todo", "todo", "text/plain", Some(12)),
        ],
        templates: vec![TemplateInfo {
            server: server.into(),
            uri_template: "demo://notes/{title}".into(),
            name: "note".into(),
            title: None,
            description: Some("A note by its title.".into()),
            mime_type: Some("text/plain".into()),
        }],
        skills: vec![SkillInfo {
            server: server.into(),
            uri: "skill://note-taking/SKILL.md".into(),
            name: "note-taking".into(),
            description: "Write short notes".into(),
            files: Some(vec![SkillFile {
                uri: "skill://note-taking/SKILL.md".into(),
                size: 120,
            }]),
        }],
    }
}

fn prompts(server: &str) -> Vec<PromptInfo> {
    vec![
        PromptInfo {
            server: server.into(),
            name: "summarize".into(),
            title: None,
            description: Some("Summarize a note.".into()),
            arguments: vec![
                PromptArgumentInfo {
                    name: "title".into(),
                    title: None,
                    description: Some("The note.".into()),
                    required: true,
                },
                PromptArgumentInfo {
                    name: "style".into(),
                    title: None,
                    description: Some("short or detailed".into()),
                    required: false,
                },
            ],
        },
        PromptInfo {
            server: server.into(),
            name: "hello".into(),
            title: None,
            description: Some("A greeting.".into()),
            arguments: Vec::new(),
        },
    ]
}

pub(in crate::tui) fn content(app: &mut App, event: ContentEvent) -> Vec<Effect> {
    app.on_app_event(AppEvent::Content(event))
}

/// The populated console with notes' capabilities, instructions, resources and prompts.
pub(in crate::tui) fn with_content() -> App {
    let (mut app, _) = populated();
    add_content(&mut app);
    app
}

/// Gives notes its capabilities and instructions, lists its resources and prompts, and
/// subscribes to one resource.
pub(in crate::tui) fn add_content(app: &mut App) {
    if let Some(row) = app.servers.iter_mut().find(|s| s.name == "notes") {
        if let Some(report) = row.report.as_mut() {
            report.capabilities = Some(Capabilities {
                tools: Some(ListCapability {
                    list_changed: false,
                }),
                resources: Some(ResourceCapability {
                    subscribe: true,
                    list_changed: true,
                }),
                prompts: Some(ListCapability {
                    list_changed: false,
                }),
                logging: true,
                completions: true,
                ..Capabilities::default()
            });
            report.instructions = Some(
                "Demo server: echo, add and notes.\nEvery note is a resource.\nUse summarize to read one."
                    .into(),
            );
        }
    }
    content(
        app,
        ContentEvent::ResourcesListed {
            server: "notes".into(),
            result: Ok(listing("notes")),
        },
    );
    content(
        app,
        ContentEvent::PromptsListed {
            server: "notes".into(),
            result: Ok(prompts("notes")),
        },
    );
    content(
        app,
        ContentEvent::Subscribed {
            server: "notes".into(),
            uri: "demo://notes/todo".into(),
            on: true,
            result: Ok(()),
        },
    );
    app.on_runtime_event(RuntimeEvent::ResourceUpdated {
        server: "notes".into(),
        uri: "demo://notes/todo".into(),
    });
    app.notice = None;
}

#[test]
fn resources_and_prompts_panes() {
    let mut app = with_content();
    app.on_key(key(KeyCode::Char('6')));
    app.on_key(key(KeyCode::Down));
    snapshot("resources", &app);
    app.on_key(key(KeyCode::Char('7')));
    snapshot("prompts", &app);
    // Nothing listed yet, and a server whose listing failed.
    let (mut empty, _) = populated();
    empty.set_focus(Pane::Resources);
    content(
        &mut empty,
        ContentEvent::ResourcesListed {
            server: "notes".into(),
            result: Err("notes: server error -32601: Method not found".into()),
        },
    );
    snapshot("resources_failed", &empty);
}

#[test]
fn details_show_capabilities_and_instructions() {
    let mut app = with_content();
    app.set_focus(Pane::Details);
    snapshot("ready_details", &app);
    app.on_key(key(KeyCode::Char('i')));
    assert!(matches!(app.overlays.modal, Some(Modal::Instructions(_))));
    snapshot("instructions", &app);
}

#[test]
fn reading_a_resource() {
    let mut app = with_content();
    app.set_focus(Pane::Resources);
    let effects = app.on_key(key(KeyCode::Enter));
    assert_eq!(
        effects,
        vec![Effect::ReadResource {
            server: "notes".into(),
            uri: "demo://readme".into()
        }]
    );
    let text: String = (1..=40)
        .map(|i| format!("Line {i} of the readme: notes are resources.\n"))
        .collect();
    content(
        &mut app,
        ContentEvent::ResourceRead {
            server: "notes".into(),
            uri: "demo://readme".into(),
            result: Ok(vec![ResourceContent::Text {
                uri: "demo://readme".into(),
                mime_type: Some("text/markdown".into()),
                text,
            }]),
        },
    );
    app.on_key(key(KeyCode::Down));
    snapshot("resource_text", &app);

    // A blob: its type and size; w asks where to save it.
    app.overlays.modal = None;
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    content(
        &mut app,
        ContentEvent::ResourceRead {
            server: "notes".into(),
            uri: "demo://logo.png".into(),
            result: Ok(vec![ResourceContent::Blob {
                uri: "demo://logo.png".into(),
                mime_type: Some("image/png".into()),
                bytes: vec![0x89, b'P', b'N', b'G'],
            }]),
        },
    );
    app.on_key(key(KeyCode::Char('w')));
    snapshot("resource_blob_save", &app);
    let effects = app.on_key(key(KeyCode::Enter));
    assert!(
        matches!(&effects[..], [Effect::Save { path, bytes }] if path.to_string_lossy() == "logo.png" && bytes.len() == 4),
        "{effects:?}"
    );
}

#[test]
fn an_update_marks_the_row_and_reads_an_open_resource_again() {
    let mut app = with_content();
    app.overlays.modal = Some(Modal::Resource(ResourceView::new(
        "notes",
        "demo://notes/todo",
        "todo",
        true,
    )));
    let effects = app.on_runtime_event(RuntimeEvent::ResourceUpdated {
        server: "notes".into(),
        uri: "demo://notes/todo".into(),
    });
    assert_eq!(
        effects,
        vec![Effect::ReadResource {
            server: "notes".into(),
            uri: "demo://notes/todo".into()
        }]
    );
    let row = app
        .panes
        .resources
        .rows
        .iter()
        .find(|r| r.uri == "demo://notes/todo")
        .unwrap();
    assert!(row.updated && row.subscribed);
    // A list change lists that server again.
    let effects = app.on_runtime_event(RuntimeEvent::ListChanged {
        server: "notes".into(),
        list: crate::runtime::ListKind::Resources,
    });
    assert_eq!(
        effects,
        vec![Effect::ListResources {
            server: "notes".into()
        }]
    );
}

#[test]
fn a_template_is_read_through_its_form_and_completions() {
    let mut app = with_content();
    app.set_focus(Pane::Resources);
    for _ in 0..3 {
        app.on_key(key(KeyCode::Down));
    }
    let effects = app.on_key(key(KeyCode::Enter));
    let [Effect::Complete(CompletionAsk { seq, argument, .. })] = &effects[..] else {
        panic!("{effects:?}");
    };
    assert_eq!(argument, "title");
    content(
        &mut app,
        ContentEvent::Completed {
            seq: *seq,
            result: Ok(vec!["todo".into(), "tea".into()]),
        },
    );
    app.on_key(key(KeyCode::Char('t')));
    content(
        &mut app,
        ContentEvent::Completed {
            seq: *seq + 1,
            result: Ok(vec!["todo".into(), "tea".into()]),
        },
    );
    snapshot("template_form", &app);
    app.on_key(ctrl('n'));
    app.on_key(key(KeyCode::Tab));
    let effects = app.on_key(ctrl('s'));
    assert_eq!(
        effects,
        vec![Effect::ReadResource {
            server: "notes".into(),
            uri: "demo://notes/tea".into()
        }]
    );
    assert!(matches!(&app.overlays.modal, Some(Modal::Resource(v)) if v.uri == "demo://notes/tea"));
}

#[test]
fn a_prompt_through_its_form() {
    let mut app = with_content();
    app.set_focus(Pane::Prompts);
    app.on_key(key(KeyCode::Enter));
    // The required title is missing: the form says so and sends nothing.
    assert!(app.on_key(ctrl('s')).is_empty());
    snapshot("prompt_form", &app);
    for c in "todo".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    let effects = app.on_key(ctrl('s'));
    assert_eq!(
        effects,
        vec![Effect::GetPrompt {
            server: "notes".into(),
            name: "summarize".into(),
            arguments: BTreeMap::from([("title".to_string(), "todo".to_string())]),
        }]
    );
    content(
        &mut app,
        ContentEvent::PromptGot {
            server: "notes".into(),
            name: "summarize".into(),
            result: Ok(PromptMessages {
                description: Some("Summarize todo".into()),
                messages: vec![
                    PromptMessageInfo {
                        role: MessageRole::User,
                        text: "Summarize the note \"todo\" (short):".into(),
                        content: json!({"type": "text"}),
                    },
                    PromptMessageInfo {
                        role: MessageRole::User,
                        text: "[resource demo://notes/todo]\nmilk\neggs".into(),
                        content: json!({"type": "resource"}),
                    },
                ],
            }),
        },
    );
    snapshot("prompt_messages", &app);
}

#[test]
fn server_text_cannot_reach_the_terminal_from_resources_prompts_or_questions() {
    const EVIL: &str = "\x1b]0;pwned\x07\x1b[2J\x1b[31m";
    let mut app = with_content();
    if let Some(row) = app.servers.iter_mut().find(|s| s.name == "notes") {
        if let Some(report) = row.report.as_mut() {
            report.instructions = Some(format!("{EVIL}evil instructions{EVIL}"));
        }
    }
    let mut evil = listing("notes");
    evil.resources[0].name = format!("{EVIL}evil name");
    evil.resources[0].uri = format!("demo://{EVIL}evil");
    content(
        &mut app,
        ContentEvent::ResourcesListed {
            server: "notes".into(),
            result: Ok(evil),
        },
    );
    let mut evil_prompts = prompts("notes");
    evil_prompts[0].description = Some(format!("{EVIL}evil prompt"));
    content(
        &mut app,
        ContentEvent::PromptsListed {
            server: "notes".into(),
            result: Ok(evil_prompts),
        },
    );
    let mut screens = Vec::new();
    let mut look = |app: &App| {
        for size in SIZES {
            screens.push(draw(app, size));
        }
    };
    app.set_focus(Pane::Resources);
    look(&app);
    app.set_focus(Pane::Prompts);
    look(&app);
    app.set_focus(Pane::Details);
    look(&app);
    app.on_key(key(KeyCode::Char('i')));
    look(&app);
    let mut view = ResourceView::new("notes", "demo://readme", "README", false);
    view.loaded(Ok(vec![ResourceContent::Text {
        uri: "demo://readme".into(),
        mime_type: Some(format!("{EVIL}text/plain")),
        text: format!("{EVIL}evil resource text\n{EVIL}"),
    }]));
    app.overlays.modal = Some(Modal::Resource(view));
    look(&app);
    let mut messages = TextView::new("notes", "summarize", "summarize");
    messages.prompt_got(Ok(PromptMessages {
        description: Some(format!("{EVIL}d")),
        messages: vec![PromptMessageInfo {
            role: MessageRole::Assistant,
            text: format!("{EVIL}evil prompt message"),
            content: json!({}),
        }],
    }));
    app.overlays.modal = Some(Modal::Prompt(messages));
    look(&app);
    app.overlays.modal = None;
    let mut schema = crate::tui::tests::elicitation::elicitation_schema();
    schema["properties"]["name"]["title"] = json!(format!("{EVIL}Name"));
    let (form, _answer) =
        ElicitationRequest::form("notes", format!("{EVIL}evil question"), schema).unwrap();
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ElicitationRequested(form)));
    look(&app);
    app.on_key(key(KeyCode::Esc));
    let (url, _answer) = ElicitationRequest::url(
        "notes",
        format!("{EVIL}evil url question"),
        format!("https://e/{EVIL}"),
        String::new(),
    );
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ElicitationRequested(url)));
    look(&app);
    app.on_key(key(KeyCode::Esc));
    // A sampling request, then the model's answer to it.
    let mut ask = crate::tui::tests::sampling::ask();
    ask.system_prompt = Some(format!("{EVIL}evil system"));
    ask.messages[0].text = format!("{EVIL}evil sampling message");
    ask.tools[0].name = format!("{EVIL}evil tool");
    ask.model_preferences = Some(json!({"hints": [{"name": format!("{EVIL}evil hint")}]}));
    let (sampling, _answer) = crate::runtime::SamplingRequest::new("notes", ask);
    let id = sampling.id;
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::SamplingRequested(sampling)));
    look(&app);
    if let Some(first) = app.overlays.samplings.front_mut() {
        first.stage = crate::tui::modals::sampling::SamplingStage::Asking {
            cancel: Default::default(),
            since: app.now,
        };
    }
    let text = format!("{EVIL}evil answer");
    let (model, finish_reason) = (format!("{EVIL}m"), None);
    let result = Ok(crate::agent::sampling::Sampled {
        text,
        model,
        finish_reason,
    });
    app.on_app_event(AppEvent::Sampled { id, result });
    look(&app);
    for screen in &screens {
        assert!(!screen.contains('\x1b'), "{screen}");
        assert!(!screen.contains('\x07'), "{screen}");
    }
    let all = screens.concat();
    for seen in [
        "evil name",
        "evil prompt",
        "evil instructions",
        "evil resource text",
        "evil prompt message",
        "evil question",
        "evil url question",
        "evil system",
        "evil sampling message",
        "evil tool",
        "evil hint",
        "evil answer",
    ] {
        assert!(all.contains(seen), "{seen} not shown");
    }
}
