//! Snapshot tests of every pane and modal at 80×24 and 140×40 (ratatui TestBackend + insta),
//! from the states `fixtures.rs` builds; `draw` and `snapshot` are shared with the other tests.

mod commands;
mod dialogs;
pub(in crate::tui) mod elicitation;
pub(in crate::tui) mod fixtures;
mod keys;
mod narrow;
mod overlays;
mod restart;
mod rules;
pub(in crate::tui) mod sampling;
pub(in crate::tui) mod server_content;
mod startup;
mod views;

use std::time::{Duration, Instant};

use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::json;

use crate::approval::ApprovalRequest;
use crate::config::AnnotationTrust;
use crate::runtime::{McpEvent, RuntimeEvent, StartPhase, TraitChange};
use crate::tool::{DestructiveBehavior, SideEffectLevel, ToolDescriptor};
use crate::tui::app::App;
use crate::tui::modals::call::CallEditor;
use crate::tui::modals::trust::TrustPreview;
use crate::tui::modals::Modal;
use crate::tui::pane_state::Pane;
use crate::tui::state::ToolRow;
use crate::tui::tests::fixtures::{config, descriptor, ignored, populated, trusted_write_note};
use crate::tui::theme::Theme;

pub(in crate::tui) const SIZES: [(u16, u16); 2] = [(80, 24), (140, 40)];

pub(in crate::tui) fn draw(app: &App, (w, h): (u16, u16)) -> String {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("test backend");
    terminal.draw(|f| app.render(f)).expect("draw");
    terminal.backend().to_string()
}

pub(in crate::tui) fn snapshot(name: &str, app: &App) {
    for size in SIZES {
        insta::assert_snapshot!(format!("{name}_{}x{}", size.0, size.1), draw(app, size));
    }
}

#[test]
fn starting() {
    let t0 = Instant::now();
    let mut app = App::new(&config(), Theme::plain(), t0);
    for (i, name) in ["notes", "notes-trusted", "broken", "slow-start"]
        .iter()
        .enumerate()
    {
        app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::PhaseStarted {
            server: (*name).into(),
            phase: StartPhase::Spawn,
            elapsed: Duration::ZERO,
        }));
        let phase = [
            StartPhase::Spawn,
            StartPhase::Handshake,
            StartPhase::ListTools,
            StartPhase::Handshake,
        ][i];
        app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::PhaseStarted {
            server: (*name).into(),
            phase,
            elapsed: Duration::from_millis(2),
        }));
    }
    app.set_now(t0 + Duration::from_millis(2_300));
    snapshot("starting", &app);
}

#[test]
fn servers_tools_and_calls() {
    let (mut app, _) = populated();
    app.focus = Pane::Tools;
    app.panes.tools.selected = 2;
    snapshot("ready", &app);
}

#[test]
fn failed_server_details() {
    let (mut app, _) = populated();
    app.panes.servers.selected = 2;
    app.focus = Pane::Details;
    snapshot("failed_details", &app);
}

#[test]
fn calls_pane() {
    let (mut app, _) = populated();
    app.focus = Pane::Calls;
    app.panes.calls.selected = 3;
    snapshot("calls", &app);
}

#[test]
fn tools_filter() {
    let (mut app, _) = populated();
    app.focus = Pane::Tools;
    app.panes.tools.filter_editing = true;
    app.panes.tools.filter = "write".into();
    snapshot("tools_filter", &app);
}

/// With tool search the model sees some of the tools: the title says how many, the selected
/// tool's line whether it is one of them.
#[test]
fn the_tools_the_model_sees() {
    let (mut app, _) = populated();
    app.focus = Pane::Tools;
    let first = app.visible_tools()[0].name.clone();
    app.chat.offered = Some(vec![first, "search_tools".to_string()].into());
    let screen = draw(&app, (140, 40));
    assert!(screen.contains("· the model sees 2"), "{screen}");
    assert!(screen.contains("· offered to the model"), "{screen}");
    app.panes.tools.selected = 1;
    let screen = draw(&app, (140, 40));
    assert!(
        screen.contains("· not offered to the model in its last turn"),
        "{screen}"
    );
}

pub(in crate::tui) fn approval(id: u64, tool: ToolDescriptor) -> ApprovalRequest {
    let why = format!("{} is mutating; policy.approval is ask_mutating", tool.name);
    ApprovalRequest::new(
        id,
        tool,
        json!({"title": "groceries", "body": "milk\neggs"}),
        why,
    )
    .0
}

#[test]
fn queued_approvals() {
    let (mut app, _) = populated();
    app.on_runtime_event(RuntimeEvent::ApprovalRequested(approval(
        7,
        ignored("notes", "delete_note"),
    )));
    app.on_runtime_event(RuntimeEvent::ApprovalRequested(approval(
        8,
        ignored("notes", "write_note"),
    )));
    snapshot("approval_queued_destructive", &app);
    // Answering the first shows the next, which offers a session approval.
    let mut non_destructive = populated().0;
    non_destructive.on_runtime_event(RuntimeEvent::ApprovalRequested(approval(
        9,
        trusted_write_note(),
    )));
    snapshot("approval_session_offered", &non_destructive);
}

#[test]
fn trust_preview() {
    let (mut app, _) = populated();
    app.overlays.modal = Some(Modal::Trust(TrustPreview {
        server: "notes".into(),
        from: AnnotationTrust::Ignore,
        to: AnnotationTrust::Trust,
        changes: vec![
            TraitChange {
                tool: "mcp__notes__echo".into(),
                before: (SideEffectLevel::Mutating, DestructiveBehavior::Destructive),
                after: (
                    SideEffectLevel::ReadOnly,
                    DestructiveBehavior::NonDestructive,
                ),
                provenance: "readOnlyHint=true, trusted".into(),
            },
            TraitChange {
                tool: "mcp__notes__write_note".into(),
                before: (SideEffectLevel::Mutating, DestructiveBehavior::Destructive),
                after: (
                    SideEffectLevel::Mutating,
                    DestructiveBehavior::NonDestructive,
                ),
                provenance: "readOnlyHint=false, destructiveHint=false, trusted".into(),
            },
        ],
        tools: 5,
        scroll: 0,
    }));
    snapshot("trust_preview", &app);
    app.servers[0].restart_pending = Some(AnnotationTrust::Trust);
    app.overlays.modal = None;
    snapshot("restart_pending", &app);
}

/// The call form lists a tool's properties in the order its server wrote them (`write_note`:
/// `title` before `body`), not sorted as a parsed schema holds them.
#[test]
fn the_call_form_keeps_the_schema_order() {
    let (mut app, _) = populated();
    let schema: serde_json::Value = serde_json::from_str(
        r#"{"type":"object","properties":{
            "title":{"type":"string","description":"Title of the note; writing an existing title replaces its body."},
            "body":{"type":"string","description":"Body of the note."}
        },"required":["body","title"]}"#,
    )
    .expect("json");
    let editor = CallEditor::new("mcp__notes__write_note", "Writes a note.", schema, None);
    app.overlays.modal = Some(Modal::Editor(Box::new(editor)));
    snapshot("editor_field_order", &app);
    for size in SIZES {
        let screen = draw(&app, size);
        let row = |name: &str| screen.lines().position(|l| l.contains(name));
        assert!(row("title*") < row("body*"), "{screen}");
        assert!(row("title*").is_some(), "{screen}");
    }
}

#[test]
fn argument_editor() {
    let (mut app, _) = populated();
    let mut editor = CallEditor::new(
        "mcp__notes__write_note",
        "Writes a note.",
        app.tools[2].schema.to_value(),
        None,
    );
    editor.raw = true;
    editor.json.errors = vec!["/title: expected a string, got a number".into()];
    app.overlays.modal = Some(Modal::Editor(Box::new(editor)));
    snapshot("editor", &app);
    // The form, as mcp-server-fetch's `fetch` asks for it: described, typed, required marked,
    // defaults filled in, optional fields without one present; a value typed in the first.
    let schema = json!({"type": "object", "properties": {
        "url": {"type": "string", "format": "uri", "description": "URL to fetch"},
        "max_length": {"type": "integer", "default": 5000, "exclusiveMinimum": 0, "exclusiveMaximum": 1000000, "description": "Maximum number of characters to return."},
        "start_index": {"type": "integer", "default": 0, "minimum": 0, "description": "Start the content at this character index."},
        "raw": {"type": "boolean", "default": false, "description": "Get the actual HTML content, without simplification."},
        "format": {"type": "string", "enum": ["markdown", "text"]},
        "headers": {"type": "object", "description": "Extra request headers."}
    }, "required": ["url"]});
    let mut editor = CallEditor::new(
        "mcp__fetch__fetch",
        "Fetches a URL from the internet and optionally extracts its contents as markdown.",
        schema,
        None,
    );
    for c in "https://example.com".chars() {
        editor.on_key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char(c),
            crossterm::event::KeyModifiers::NONE,
        ));
    }
    app.overlays.modal = Some(Modal::Editor(Box::new(editor)));
    snapshot("editor_form", &app);
}

#[test]
fn result_help_and_quit() {
    let (mut app, _) = populated();
    app.overlays.modal = Some(Modal::Result { call: 2, scroll: 0 });
    snapshot("result", &app);
    app.overlays.modal = Some(Modal::Help { scroll: 0 });
    snapshot("help", &app);
    app.overlays.quit_asked = true;
    snapshot("quit", &app);
}

#[test]
fn server_text_cannot_reach_the_terminal() {
    let (mut app, _) = populated();
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::Stderr {
        server: "broken".into(),
        line: "\x1b]0;pwned\x07evil\x1b[2J line".into(),
    }));
    app.tools.push(ToolRow::from_descriptor(&descriptor(
        "notes",
        "evil\x1b[31m",
        SideEffectLevel::Mutating,
        true,
        AnnotationTrust::Ignore,
        "x\x1b]0;t\x07",
    )));
    app.panes.servers.selected = 2;
    for size in SIZES {
        let screen = draw(&app, size);
        assert!(!screen.contains('\x1b'), "{screen}");
        assert!(screen.contains("evil line"), "{screen}");
    }
}

#[test]
fn events_pane() {
    let (mut app, _) = populated();
    app.focus = Pane::Events;
    snapshot("events", &app);
}
